//! `delayq batch offer` and `delayq batch show` (issue 46, item 5): a batch
//! offered from arguments, a file or standard input; shown while a library
//! Worker in the test handles its members and once its completion reached
//! the target (read back with a reliable take); a queue without job
//! history refused with the hint that turns it on; a refusal of the limits
//! half way and its resume; JSON shapes; ids and names with terminal
//! escapes shown escaped.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::run::{delayq, text};
use delayq::error::BoxError;
use delayq::limits::Limits;
use delayq::worker::{Permanent, RetryPolicy};
use delayq::StringCodec;
use delayq_test_support::{eventually, redis_test, RedisServer};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::sync::Notify;

const HOUR: Duration = Duration::from_secs(3600);
const WAIT: Duration = Duration::from_secs(30);

/// `delayq ARGS...` with `input` on standard input.
async fn delayq_stdin(redis: &RedisServer, args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run delayq");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).await.unwrap();
    drop(stdin);
    child.wait_with_output().await.expect("delayq ends")
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

/// `batch show --format json` without its times, which the test checks apart.
fn without_times(mut doc: serde_json::Value) -> serde_json::Value {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let created = doc["created_ms"]
        .as_i64()
        .unwrap_or_else(|| panic!("created_ms: {doc}"));
    assert!((now - 60_000..=now + 5_000).contains(&created), "{doc}");
    assert!(doc["created"].as_str().is_some_and(|t| t.ends_with('Z')), "{doc}");
    let map = doc.as_object_mut().unwrap();
    for key in ["created", "created_ms", "completed", "completed_ms"] {
        map.remove(key);
    }
    doc
}

/// A progress bar as `batch show` draws it: `filled` of 30 cells.
fn bar(filled: usize, percent: u32) -> String {
    format!("[{}{}] {percent:>3}%", "#".repeat(filled), ".".repeat(30 - filled))
}

redis_test! {
    /// Four members from arguments, with a completion: open with nothing
    /// ended; a Worker handles two, dead-letters one and holds the last,
    /// and `show` says 3 of 4 with its bar; once the last is handled the
    /// batch reads delivered, and the completion, with its counts and the
    /// `--data`, is on the target for a reliable take.
    async fn batch_offer_then_show_while_open_and_once_delivered(redis) {
        let client = redis.client().await;
        let queue = "imports";
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(HOUR)).await.unwrap();

        let out = delayq(
            &redis,
            &[
                "batch", "offer", queue, "--id", "nov", "--on-complete", "imports-done",
                "--data", r#"{"file":"nov.csv"}"#, "ok-1", "fail-2", "hold-3", "ok-4",
            ],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(text(&out.stdout), "nov\n");
        assert_eq!(
            text(&out.stderr),
            "offered batch nov of 4 member(s) (nov/1 to nov/4) to imports (due now)\n\
             its completion goes to imports-done once every member has ended (`delayq batch show imports nov`)\n"
        );
        // Each member is a job of its own.
        let out = delayq(&redis, &["job", queue, "nov/3"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(text(&out.stdout).contains("state: pending, due "), "{out:?}");

        let out = delayq(&redis, &["batch", "show", queue, "nov"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stdout);
        assert!(said.starts_with("batch nov on imports\nstate: open (every member offered; some have not ended)\n"), "{said}");
        assert!(said.contains(&format!("\nended: 0 of 4 {}\n", bar(0, 0))), "{said}");
        assert!(said.contains("\n  handled 0, dead-lettered 0, cancelled 0\n"), "{said}");
        assert!(said.contains("\ncreated: ") && said.contains(" ago)\ncompleted: not yet\n"), "{said}");
        assert!(said.ends_with("\ncompletion: to imports-done once every member has ended\n"), "{said}");
        assert!(!said.contains("offered:"), "offered only while offering: {said}");

        let hold = Arc::new(Notify::new());
        let worker = {
            let hold = Arc::clone(&hold);
            client
                .worker(queue, StringCodec)
                .unwrap()
                .concurrency(4)
                .retry(RetryPolicy::none())
                .run(move |row: String| {
                    let hold = Arc::clone(&hold);
                    async move {
                        if row.starts_with("fail") {
                            return Err::<(), BoxError>(Permanent::new(std::io::Error::other("bad row")).into());
                        }
                        if row.starts_with("hold") {
                            hold.notified().await;
                        }
                        Ok(())
                    }
                })
        };
        eventually(WAIT, "three members ended", || async {
            dq.batch("nov").await.unwrap().is_some_and(|b| b.ended() == 3)
        })
        .await;
        let out = delayq(&redis, &["batch", "show", queue, "nov"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stdout);
        assert!(said.contains("\nstate: open "), "{said}");
        assert!(said.contains(&format!("\nended: 3 of 4 {}\n", bar(22, 75))), "{said}");
        assert!(said.contains("\n  handled 2, dead-lettered 1, cancelled 0\n"), "{said}");
        let doc = json_of(&delayq(&redis, &["batch", "show", queue, "nov", "--format", "json"]).await);
        assert_eq!((doc["completed"].clone(), doc["completed_ms"].clone()), (json!(null), json!(null)), "{doc}");
        assert_eq!(
            without_times(doc),
            json!({
                "queue": "imports", "batch": "nov", "state": "open", "total": 4, "offered": 4,
                "handled": 2, "dead_lettered": 1, "cancelled": 0, "ended": 3, "target": "imports-done",
            })
        );

        hold.notify_one();
        eventually(WAIT, "delivered", || async {
            dq.batch("nov").await.unwrap().is_some_and(|b| b.state.name() == "delivered")
        })
        .await;
        worker.shutdown().await;
        let out = delayq(&redis, &["batch", "show", queue, "nov"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stdout);
        assert!(said.contains("\nstate: delivered (every member has ended; its completion was offered)\n"), "{said}");
        assert!(said.contains(&format!("\nended: 4 of 4 {}\n", bar(30, 100))), "{said}");
        assert!(said.contains("\n  handled 3, dead-lettered 1, cancelled 0\n"), "{said}");
        assert!(said.contains("\ncompleted: ") && !said.contains("not yet"), "{said}");
        assert!(said.ends_with("\ncompletion: offered to imports-done\n"), "{said}");
        let doc = json_of(&delayq(&redis, &["batch", "show", queue, "nov", "--format", "json"]).await);
        let (created, completed) = (doc["created_ms"].as_i64().unwrap(), doc["completed_ms"].as_i64().unwrap());
        assert!(completed >= created, "{doc}");
        assert!(doc["completed"].as_str().is_some_and(|t| t.ends_with('Z')), "{doc}");
        assert_eq!(
            without_times(doc),
            json!({
                "queue": "imports", "batch": "nov", "state": "delivered", "total": 4, "offered": 4,
                "handled": 3, "dead_lettered": 1, "cancelled": 0, "ended": 4, "target": "imports-done",
            })
        );

        // The completion, once, on the target.
        let done = client.reliable_queue("imports-done", StringCodec).unwrap().with_transfer();
        let completion = done.take().await.unwrap();
        let value: serde_json::Value = serde_json::from_str(completion.value()).unwrap();
        assert_eq!(
            value,
            json!({
                "batch": "nov", "queue": "imports", "total": 4, "handled": 3,
                "dead_lettered": 1, "cancelled": 0, "data": {"file": "nov.csv"},
            })
        );
        assert!(completion.ack().await.unwrap());
        assert_eq!(done.len().await.unwrap(), 0);
        client.shutdown().await;
    }
}

redis_test! {
    /// One member a line of a file (`--codec long`, `--delay`, a made id)
    /// and of standard input; JSON of the offer and of `show`; a line or a
    /// value the codec cannot encode offers nothing.
    async fn batch_offer_from_a_file_or_standard_input_and_the_json_shapes(redis) {
        let client = redis.client().await;
        let queue = "files";
        let out = delayq(&redis, &["job", queue, "--history", "on"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let dq = client.delayed_queue(queue, delayq::LongCodec).unwrap().without_transfer();

        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "7\n-8\r\n9").unwrap();
        let path = file.path().to_str().unwrap();
        let args = ["batch", "offer", queue, "--from-file", path, "--codec", "long", "--delay", "1h"];
        let out = delayq(&redis, &[&args[..], &["--keep", "1d", "--format", "json"]].concat()).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let doc = json_of(&out);
        let id = doc["batch"].as_str().unwrap().to_owned();
        assert!(id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()), "{doc}");
        assert_eq!(
            doc,
            json!({"queue": "files", "batch": id, "total": 3, "target": null, "delay_ms": 3_600_000})
        );
        assert_eq!(
            text(&out.stderr),
            format!(
                "offered batch {id} of 3 member(s) ({id}/1 to {id}/3) to files (due in 1h)\n\
                 no completion (--on-complete QUEUE asks for one); `delayq batch show files {id}` follows it\n"
            )
        );
        assert_eq!(dq.len().await.unwrap(), 3);
        assert_eq!(dq.get(&format!("{id}/2")).await.unwrap().map(|e| e.value), Some(-8));

        let doc = json_of(&delayq(&redis, &["batch", "show", queue, &id, "--format", "json"]).await);
        assert_eq!((doc["completed"].clone(), doc["completed_ms"].clone()), (json!(null), json!(null)), "{doc}");
        assert_eq!(
            without_times(doc),
            json!({
                "queue": "files", "batch": id, "state": "open", "total": 3, "offered": 3,
                "handled": 0, "dead_lettered": 0, "cancelled": 0, "ended": 0, "target": null,
            })
        );
        let out = delayq(&redis, &["batch", "show", queue, &id]).await;
        assert!(text(&out.stdout).ends_with("\ncompletion: none (offered without --on-complete)\n"), "{out:?}");

        // Standard input, one value a line (a plain offer after a batch:
        // the codec's options are `delayq offer`'s).
        let out = delayq_stdin(
            &redis,
            &["batch", "offer", queue, "--id", "from-stdin", "--codec", "long", "--from-file", "-"],
            b"1\n2\n",
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(text(&out.stdout), "from-stdin\n");
        assert_eq!(dq.len().await.unwrap(), 5);
        let doc = json_of(&delayq(&redis, &["batch", "show", queue, "from-stdin", "--format", "json"]).await);
        assert_eq!((doc["total"].clone(), doc["state"].clone()), (json!(2), json!("open")), "{doc}");

        // Nothing is offered when one line or value does not encode.
        std::fs::write(file.path(), "1\nnot a number\n3\n").unwrap();
        let out = delayq(&redis, &args).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.contains("line 2: ") && said.contains("nothing was offered"), "{said}");
        let out = delayq(&redis, &["batch", "offer", queue, "--codec", "long", "--", "1", "-2", "x"]).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.contains("value 3: ") && said.contains("nothing was offered"), "{said}");
        assert_eq!(dq.len().await.unwrap(), 5);
        assert!(text(&out.stdout).is_empty(), "{out:?}");

        // No such batch: exit 1, nothing on stdout.
        let out = delayq(&redis, &["batch", "show", queue, "never", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        assert!(text(&out.stderr).starts_with("no batch \"never\" in files ("), "{out:?}");
        client.shutdown().await;
    }
}

redis_test! {
    /// A queue without job history: the library's error and the command
    /// that turns it on (exit 2), nothing offered; once on, the same offer
    /// goes through.
    async fn batch_offer_without_job_history_says_how_to_turn_it_on(redis) {
        let client = redis.client().await;
        let dq = client.delayed_queue("plain", StringCodec).unwrap().without_transfer();
        for format in ["table", "json"] {
            let out = delayq(&redis, &["batch", "offer", "plain", "--format", format, "a", "b"]).await;
            assert_eq!(out.status.code(), Some(2), "{format}: {out:?}");
            assert!(out.stdout.is_empty(), "{format}: {out:?}");
            let said = text(&out.stderr);
            assert!(said.starts_with("delayq: invalid argument: queue \"plain\" keeps no job history"), "{said}");
            assert!(
                said.contains("\nhint: turn the queue's job history on first: `delayq job plain --history on`"),
                "{said}"
            );
        }
        assert_eq!(dq.len().await.unwrap(), 0);
        let out = delayq(&redis, &["job", "plain", "--history", "on"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let out = delayq(&redis, &["batch", "offer", "plain", "--id", "p", "a", "b"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(text(&out.stdout), "p\n");
        assert_eq!(dq.len().await.unwrap(), 2);
        // A bad id is the library's error, without the hint.
        let out = delayq(&redis, &["batch", "offer", "plain", "--id", "a/b", "c"]).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.contains("a batch id is 1 to 128 bytes without '/'"), "{said}");
        assert!(!said.contains("hint:"), "{said}");
        client.shutdown().await;
    }
}

redis_test! {
    /// The queue's limits stop a batch half way: it says how many members
    /// went and how to resume (exit 1), `show` says offering with the
    /// count offered; a batch without --id names the id to resume with
    /// (in its JSON too); once the limits allow, the same commands resume.
    async fn a_refused_batch_says_how_far_it_got_and_resumes(redis) {
        let client = redis.client().await;
        let queue = "capped";
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(HOUR)).await.unwrap();
        dq.set_limits(&Limits::none().max_size(2)).await.unwrap();

        let resume = ["batch", "offer", queue, "--id", "cap", "a", "b", "c", "d"];
        let out = delayq(&redis, &resume).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.starts_with("delayq: offer to `capped` refused: "), "{said}");
        assert!(
            said.contains(
                "\ndelayq: batch cap stopped half way: 2 of 4 member(s) offered to capped; it stays offering \
                 (no completion) until the same command resumes it (`delayq limits capped` shows the limits)\n"
            ),
            "{said}"
        );
        let out = delayq(&redis, &["batch", "show", queue, "cap"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stdout);
        assert!(said.contains("\nstate: offering (not every member is offered"), "{said}");
        assert!(said.contains("`delayq batch offer capped --id cap ...` with the same values resumes it)"), "{said}");
        assert!(said.contains("\noffered: 2 of 4\n"), "{said}");
        let doc = json_of(&delayq(&redis, &["batch", "show", queue, "cap", "--format", "json"]).await);
        assert_eq!((doc["state"].clone(), doc["offered"].clone()), (json!("offering"), json!(2)), "{doc}");

        // Without --id: the id to resume with, on stderr and in the JSON.
        let out = delayq(&redis, &["batch", "offer", queue, "--format", "json", "e", "f"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let doc = json_of(&out);
        let id = doc["batch"].as_str().unwrap().to_owned();
        assert_eq!(
            doc,
            json!({
                "queue": "capped", "batch": id, "state": "offering", "total": 2, "offered": 0, "target": null,
                "refused": doc["refused"].as_str().filter(|r| r.starts_with("offer to `capped` refused: ")),
            })
        );
        assert!(
            text(&out.stderr).contains(&format!("until the same command with --id {id} resumes it")),
            "{out:?}"
        );

        dq.set_limits(&Limits::none()).await.unwrap();
        let out = delayq(&redis, &resume).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(text(&out.stdout), "cap\n");
        let doc = json_of(&delayq(&redis, &["batch", "show", queue, "cap", "--format", "json"]).await);
        assert_eq!((doc["state"].clone(), doc["offered"].clone()), (json!("open"), json!(4)), "{doc}");
        let out = delayq(&redis, &["batch", "offer", queue, "--id", &id, "e", "f"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(dq.len().await.unwrap(), 6);
        client.shutdown().await;
    }
}

redis_test! {
    /// A batch id, a queue name and a target holding terminal escapes, line
    /// ends and a bidirectional override reach the terminal escaped, in
    /// `offer` and `show`; JSON keeps them exactly.
    async fn batch_ids_and_names_with_escape_codes_are_shown_escaped(redis) {
        let client = redis.client().await;
        let queue = "esc-\u{1b}[1mq";
        let id = "b-\u{1b}[31m\n1\u{202e}";
        let target = "done-\u{1b}]0;t\u{7}";
        let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(HOUR)).await.unwrap();
        let unseen = |said: &str| said.chars().any(|c| c != '\n' && (c.is_control() || c == '\u{202e}'));

        let out = delayq(&redis, &["batch", "offer", queue, "--id", id, "--on-complete", target, "v"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(text(&out.stdout), "b-\\u{1b}[31m\\n1\\u{202e}\n");
        let said = text(&out.stderr);
        assert!(!unseen(&said), "{said:?}");
        assert!(
            said.starts_with("offered batch b-\\u{1b}[31m\\n1\\u{202e} of 1 member(s) (b-\\u{1b}[31m\\n1\\u{202e}/1) to esc-\\u{1b}[1mq (due now)\n"),
            "{said}"
        );
        assert!(said.contains("its completion goes to done-\\u{1b}]0;t\\u{7} once"), "{said}");

        let out = delayq(&redis, &["batch", "show", queue, id]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stdout);
        assert!(!unseen(&said), "{said:?}");
        assert!(said.starts_with("batch b-\\u{1b}[31m\\n1\\u{202e} on esc-\\u{1b}[1mq\n"), "{said}");
        assert!(said.contains("\ncompletion: to done-\\u{1b}]0;t\\u{7} once every member has ended\n"), "{said}");

        let out = delayq(&redis, &["batch", "show", queue, id, "--format", "json"]).await;
        assert!(!unseen(&text(&out.stdout)), "{out:?}");
        let doc = json_of(&out);
        assert_eq!((doc["batch"].as_str(), doc["queue"].as_str(), doc["target"].as_str()), (Some(id), Some(queue), Some(target)));

        let out = delayq(&redis, &["batch", "offer", queue, "--id", "x\u{1b}[2J", "--format", "json", "v"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(!unseen(&text(&out.stdout)), "{out:?}");
        assert_eq!(json_of(&out)["batch"], "x\u{1b}[2J");

        let out = delayq(&redis, &["batch", "show", queue, "y\u{1b}[2J"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let said = text(&out.stderr);
        assert!(!unseen(&said), "{said:?}");
        assert!(said.starts_with("no batch \"y\\u{1b}[2J\" in esc-\\u{1b}[1mq ("), "{said}");
        client.shutdown().await;
    }
}
