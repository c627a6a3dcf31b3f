//! `delayq cancel QUEUE ID` wherever the job is (pending, ready, running,
//! ended, unknown) and `delayq result QUEUE ID [--wait D]`: what each says,
//! its exit status, its JSON, and user text (ids, results, progress)
//! escaped for the terminal. Running jobs run in a library Worker
//! (`run_job`) inside the test.

use std::sync::Arc;
use std::time::Duration;

use crate::run::{delayq, text};
use delayq::jobs::JobState;
use delayq::worker::JobContext;
use delayq::StringCodec;
use delayq_test_support::redis_test;
use serde_json::json;
use tokio::sync::{mpsc, Notify};

const HOUR: Duration = Duration::from_secs(3600);

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

redis_test! {
    /// A pending element is removed, a ready job is dropped by the take
    /// that reaches it (exit 0 both); a job that ended, and an id with no
    /// trace, leave nothing to cancel (exit 1), and a queue without job
    /// history says that ready and running jobs need it.
    async fn cancel_says_what_it_did_wherever_the_job_was(redis) {
        let client = redis.client().await;
        let queue = "imports";
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(HOUR)).await.unwrap();

        dq.offer_with_id("later", &"v".to_string(), HOUR).await.unwrap();
        let out = delayq(&redis, &["cancel", queue, "later"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(text(&out.stderr), "later in imports: pending element removed\n");
        assert_eq!(dq.get("later").await.unwrap(), None);
        dq.offer_with_id("later-2", &"v".to_string(), HOUR).await.unwrap();
        let out = delayq(&redis, &["cancel", queue, "later-2", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(
            json_of(&out),
            json!({"queue": queue, "id": "later-2", "outcome": "pending", "effect": "removed"})
        );

        // Ready: asked, and the next take drops it and hands out the value
        // after it (moved in a second transfer, so behind it in the list).
        dq.offer_with_id("ready-1", &"dropped".to_string(), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        dq.offer(&"next".to_string(), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let out = delayq(&redis, &["cancel", queue, "ready-1"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(
            text(&out.stderr),
            "ready-1 in imports: queued job (ready) will not run (dropped by the take that reaches it)\n"
        );
        let out = delayq(&redis, &["cancel", queue, "ready-1", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(0), "asking twice asks once: {out:?}");
        assert_eq!(
            json_of(&out),
            json!({"queue": queue, "id": "ready-1", "outcome": "queued", "effect": "asked", "state": "ready"})
        );
        let taken = rq.take().await.unwrap();
        assert_eq!(taken.value(), "next");
        assert!(taken.ack().await.unwrap());
        assert!(matches!(rq.job("ready-1").await.unwrap().state, JobState::Cancelled { .. }));

        // Ended: nothing to cancel.
        let out = delayq(&redis, &["cancel", queue, "ready-1"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(text(&out.stderr), "ready-1 in imports: already ended: cancelled\n");
        let out = delayq(&redis, &["cancel", queue, "ready-1", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(
            json_of(&out),
            json!({"queue": queue, "id": "ready-1", "outcome": "finished", "effect": "none", "state": "cancelled"})
        );
        // `job` and `result` say how it ended; a cancelled job is exit 2 for `result`.
        let out = delayq(&redis, &["job", queue, "ready-1"]).await;
        assert!(text(&out.stdout).contains("state: cancelled "), "{out:?}");
        let out = delayq(&redis, &["result", queue, "ready-1", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let doc = json_of(&out);
        assert_eq!(doc["state"]["name"], "cancelled", "{doc}");
        assert_eq!(doc["ended"], true, "{doc}");
        assert!(doc["state"]["how"].as_str().unwrap().contains("cancelled"), "{doc}");

        // A handled job: already ended.
        dq.offer_with_id("done", &"v".to_string(), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(rq.take().await.unwrap().ack().await.unwrap());
        let out = delayq(&redis, &["cancel", queue, "done"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(text(&out.stderr), "done in imports: already ended: handled\n");

        // No trace: with history on, only that.
        let out = delayq(&redis, &["cancel", queue, "nobody"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.starts_with("nobody in imports: no such job ("), "{said}");
        assert!(!said.contains("--history on"), "{said}");
        // Without history, where ready and running jobs would have been found.
        let plain = client.delayed_queue("plain", StringCodec).unwrap().without_transfer();
        plain.offer(&"x".to_string(), HOUR).await.unwrap();
        let out = delayq(&redis, &["cancel", "plain", "ghost"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.contains("no such job"), "{said}");
        assert!(said.contains("ready and running jobs are found only with job history on"), "{said}");
        assert!(said.contains("delayq job plain --history on"), "{said}");
        let out = delayq(&redis, &["cancel", "plain", "ghost", "--format", "json"]).await;
        assert_eq!(
            json_of(&out),
            json!({"queue": "plain", "id": "ghost", "outcome": "unknown", "effect": "none", "history": {"on": false}})
        );
        client.shutdown().await;
    }
}

/// What the handler of the worker in the next test says and waits for.
#[derive(Default)]
struct Handler {
    /// Released: the job returns its result.
    finish: Notify,
    /// Released after the handler saw its cancel: it stops (an error).
    stop: Notify,
}

redis_test! {
    /// A Worker runs jobs with `run_job`: while one runs, `result` says it
    /// has not ended (exit 1) with its progress, and `--wait` runs out
    /// (exit 1); `result --wait` returns its result once the handler
    /// returns (exit 0). A running job's cancel reaches its handler
    /// (exit 0), `job` shows the cancel asked, and `result --wait` then
    /// says cancelled (exit 2). `events` names each step.
    async fn result_waits_for_a_workers_job_and_cancel_reaches_a_running_one(redis) {
        let client = redis.client().await;
        let queue = "reports";
        let out = delayq(&redis, &["events", "enable", queue]).await;
        assert!(out.status.success(), "{out:?}");
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(HOUR)).await.unwrap();
        let handler = Arc::new(Handler::default());
        let (started, mut starts) = mpsc::unbounded_channel::<String>();
        let (saw_cancel, mut cancels) = mpsc::unbounded_channel::<String>();
        let worker = {
            let handler = Arc::clone(&handler);
            client
                .worker(queue, StringCodec)
                .unwrap()
                .concurrency(1)
                .prefetch(0)
                .cancel_poll(Duration::from_millis(20))
                .run_job(move |month: String, job: JobContext| {
                    let (handler, started, saw_cancel) = (Arc::clone(&handler), started.clone(), saw_cancel.clone());
                    async move {
                        job.progress(&json!({"done": 3, "of": 10})).await?;
                        started.send(month.clone()).unwrap();
                        tokio::select! {
                            _ = handler.finish.notified() => {
                                Ok::<_, delayq::error::BoxError>(json!({"month": month, "rows": 3}))
                            }
                            _ = job.cancelled() => {
                                saw_cancel.send(month).unwrap();
                                handler.stop.notified().await;
                                Err("stopped on its cancel".into())
                            }
                        }
                    }
                })
        };

        dq.offer_with_id("r-11", &"2026-11".to_string(), Duration::ZERO).await.unwrap();
        assert_eq!(starts.recv().await.unwrap(), "2026-11");
        let out = delayq(&redis, &["result", queue, "r-11"]).await;
        assert_eq!(out.status.code(), Some(1), "running: {out:?}");
        let said = text(&out.stdout);
        assert!(said.contains("state: in flight since"), "{said}");
        assert!(said.contains(r#"progress: {"done":3,"of":10} at "#), "{said}");
        assert!(said.contains("not ended yet"), "{said}");
        let out = delayq(&redis, &["result", queue, "r-11", "--wait", "200ms"]).await;
        assert_eq!(out.status.code(), Some(1), "timed out: {out:?}");
        assert!(text(&out.stdout).contains("not ended after waiting 200ms"), "{out:?}");
        let out = delayq(&redis, &["result", queue, "r-11", "--wait", "200ms", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let doc = json_of(&out);
        assert_eq!((doc["ended"].clone(), doc["timed_out"].clone()), (json!(false), json!(true)), "{doc}");
        assert_eq!(doc["state"]["name"], "in_flight", "{doc}");
        assert_eq!(doc["result"], serde_json::Value::Null, "{doc}");
        assert_eq!(doc["progress"]["value"], json!({"done": 3, "of": 10}), "{doc}");

        // Waiting: the job ends while the command waits (it is started
        // first, then the handler is let go).
        let waiting = {
            let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"));
            command
                .args(["result", queue, "r-11", "--wait", "60s", "--format", "json"])
                .env("REDIS_URL", redis.url());
            tokio::spawn(async move { command.output().await.expect("run delayq") })
        };
        handler.finish.notify_one();
        let out = waiting.await.unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let doc = json_of(&out);
        assert_eq!(doc["id"], "r-11");
        assert_eq!(doc["state"]["name"], "handled", "{doc}");
        assert_eq!((doc["ended"].clone(), doc["timed_out"].clone()), (json!(true), json!(false)), "{doc}");
        assert_eq!(doc["result"]["value"], json!({"month": "2026-11", "rows": 3}), "{doc}");
        assert!(doc["result"]["at_ms"].is_i64() && doc["result"]["at"].is_string(), "{doc}");
        assert_eq!(doc["progress"]["value"], json!({"done": 3, "of": 10}), "{doc}");
        assert_eq!(doc["history"]["on"], true, "{doc}");
        // The table: the result pretty, indented under its line.
        let out = delayq(&redis, &["result", queue, "r-11"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stdout);
        assert!(said.contains("state: handled "), "{said}");
        assert!(said.contains("result, kept "), "{said}");
        assert!(said.contains("\n  {\n    \"month\": \"2026-11\",\n    \"rows\": 3\n  }\n"), "{said}");
        // `job` shows them too, and has them in its JSON.
        let out = delayq(&redis, &["job", queue, "r-11"]).await;
        let said = text(&out.stdout);
        assert!(said.contains("result, kept ") && said.contains("progress: "), "{said}");
        let doc = json_of(&delayq(&redis, &["job", queue, "r-11", "--format", "json"]).await);
        assert_eq!(doc["result"]["value"]["rows"], 3, "{doc}");
        assert_eq!(doc["progress"]["value"]["done"], 3, "{doc}");
        assert_eq!(doc["cancel_requested"], serde_json::Value::Null, "{doc}");

        // A running job's cancel reaches its handler.
        dq.offer_with_id("r-12", &"2026-12".to_string(), Duration::ZERO).await.unwrap();
        assert_eq!(starts.recv().await.unwrap(), "2026-12");
        let out = delayq(&redis, &["cancel", queue, "r-12"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.starts_with("r-12 in reports: running job: its worker is told (delivery "), "{said}");
        let out = delayq(&redis, &["cancel", queue, "r-12", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let doc = json_of(&out);
        assert_eq!((doc["outcome"].as_str(), doc["effect"].as_str()), (Some("running"), Some("asked")), "{doc}");
        assert_eq!(doc["delivery"].as_str().map(str::len), Some(16), "{doc}");
        assert_eq!(cancels.recv().await.unwrap(), "2026-12", "the handler was told");
        // Still running (its handler has not stopped): `job` shows the cancel asked.
        let out = delayq(&redis, &["job", queue, "r-12"]).await;
        assert!(text(&out.stdout).contains("cancel requested at "), "{out:?}");
        let doc = json_of(&delayq(&redis, &["job", queue, "r-12", "--format", "json"]).await);
        assert!(doc["cancel_requested"]["at_ms"].is_i64(), "{doc}");
        handler.stop.notify_one();
        let out = delayq(&redis, &["result", queue, "r-12", "--wait", "60s"]).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = text(&out.stdout);
        assert!(said.contains("state: cancelled "), "{said}");
        assert!(!said.contains("result, kept"), "{said}");

        let report = worker.shutdown().await;
        assert_eq!(report.cancelled, 1, "{report:?}");
        // The events of each step, as lines.
        let out = delayq(&redis, &["events", queue]).await;
        assert!(out.status.success(), "{out:?}");
        let said = text(&out.stdout);
        // Each kind's fields, in any order.
        for (kind, fields) in [
            ("progress", &["job=r-11", "delivery="][..]),
            ("result", &["count=1", "jobs=r-11"][..]),
            ("cancel_requested", &["id=r-12", "state=running"][..]),
            ("job_cancelled", &["count=1", "jobs=r-12", "running=true"][..]),
        ] {
            let found = said.lines().any(|line| {
                line.contains(&format!("  {kind}  ")) && fields.iter().all(|f| line.contains(&format!("  {f}")))
            });
            assert!(found, "{kind} {fields:?} in\n{said}");
        }
        client.shutdown().await;
    }
}

redis_test! {
    /// A dead-lettered job is exit 2; ids, results and progress holding
    /// terminal escapes, line ends and bidirectional overrides reach the
    /// terminal escaped, and the JSON keeps them exactly.
    async fn result_escapes_user_text_and_a_dead_letter_is_exit_2(redis) {
        let client = redis.client().await;
        let queue = "billing";
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(HOUR)).await.unwrap();

        let dead = "inv-\u{1b}[31m1";
        dq.offer_with_id(dead, &"v".to_string(), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(rq.take().await.unwrap().reject("card \u{1b}[2Jdeclined").await.unwrap());
        let out = delayq(&redis, &["result", queue, dead]).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = text(&out.stdout);
        assert!(!said.contains('\u{1b}'), "{said:?}");
        assert!(said.contains("job inv-\\u{1b}[31m1 on billing"), "{said}");
        assert!(said.contains("dead-lettered"), "{said}");
        let out = delayq(&redis, &["cancel", queue, dead]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(text(&out.stderr), "inv-\\u{1b}[31m1 in billing: already ended: dead\n");

        let id = "inv-\u{1b}[31m2\n";
        let value = json!({"note": "\u{1b}[31mred\nline\u{202e}\u{7f}", "n": 1});
        dq.offer_with_id(id, &"v".to_string(), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let delivery = rq.take().await.unwrap();
        assert!(delivery.progress(&json!("\u{1b}]0;title\u{7}half")).await.unwrap());
        assert!(delivery.ack_with_result(&value).await.unwrap());
        for command in ["result", "job"] {
            let out = delayq(&redis, &[command, queue, id]).await;
            assert_eq!(out.status.code(), Some(0), "{command}: {out:?}");
            let said = text(&out.stdout);
            assert!(
                !said.chars().any(|c| c != '\n' && (c.is_control() || c == '\u{202e}')),
                "{command}: {said:?}"
            );
            assert!(said.contains("job inv-\\u{1b}[31m2\\n on billing"), "{command}: {said}");
            assert!(said.contains(r#""note": "\u001b[31mred\nline\u202e\u007f""#), "{command}: {said}");
            assert!(said.contains(r#"progress: "\u001b]0;title\u0007half" at "#), "{command}: {said}");
            let out = delayq(&redis, &[command, queue, id, "--format", "json"]).await;
            let doc = json_of(&out);
            assert_eq!(doc["id"], id, "{command}: {doc}");
            assert_eq!(doc["result"]["value"], value, "{command}: {doc}");
            assert_eq!(doc["progress"]["value"], "\u{1b}]0;title\u{7}half", "{command}: {doc}");
        }
        client.shutdown().await;
    }
}

redis_test! {
    /// Without job history, `result` says so (a job is never seen to end)
    /// and does not wait: exit 1.
    async fn result_says_when_a_queue_keeps_no_history(redis) {
        let client = redis.client().await;
        let dq = client.delayed_queue("plain", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("p-1", &"v".to_string(), HOUR).await.unwrap();
        let out = delayq(&redis, &["result", "plain", "p-1", "--wait", "1h"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let said = text(&out.stdout);
        assert!(said.contains("state: pending, due"), "{said}");
        assert!(said.contains("job history: off for plain"), "{said}");
        assert!(said.contains("no result or progress is kept"), "{said}");
        assert!(said.contains("not waited for"), "{said}");
        let out = delayq(&redis, &["result", "plain", "nobody", "--format", "text"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(text(&out.stdout).contains("unknown"), "{out:?}");
        let doc = json_of(&delayq(&redis, &["result", "plain", "p-1", "--format", "json"]).await);
        assert_eq!(doc["history"]["on"], false, "{doc}");
        assert_eq!(doc["ended"], false, "{doc}");
        client.shutdown().await;
    }
}
