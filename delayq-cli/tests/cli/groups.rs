//! `delayq offer --group KEY|--sequential` and `delayq groups` (issue 46,
//! item 1): grouped values offered from arguments, a file and standard
//! input land in delayq's group keys only, and a library Worker in the test
//! runs each key's values one at a time and in order; the flags a grouped
//! value cannot carry are refused before anything is written; `groups`
//! reads and sets the settings (table and JSON) and counts the keys
//! runnable and held; inspect, stats and list count grouped values; keys
//! and names holding terminal escapes reach the terminal escaped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::run::{delayq, text};
use delayq::error::BoxError;
use delayq::fred::types::Value;
use delayq::groups::{GroupLimits, OnFailure};
use delayq::StringCodec;
use delayq_test_support::{eventually, redis_test, RedisServer};
use parking_lot::Mutex;
use serde_json::json;
use tokio::io::AsyncWriteExt;

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

/// Whether `said` holds a character a terminal could obey (line ends aside).
fn unseen(said: &str) -> bool {
    said.chars().any(|c| c != '\n' && (c.is_control() || c == '\u{202e}'))
}

/// What the Worker's handler saw: per key (the text before `#`), the values
/// in the order they started, and how many of one key ran at once at most.
#[derive(Default)]
struct Seen {
    order: Mutex<HashMap<String, Vec<String>>>,
    running: Mutex<HashMap<String, usize>>,
    most_per_key: AtomicUsize,
    done: AtomicUsize,
}

impl Seen {
    fn key(value: &str) -> String {
        value.split('#').next().unwrap_or_default().to_owned()
    }

    async fn handle(&self, value: String) {
        let key = Seen::key(&value);
        self.order.lock().entry(key.clone()).or_default().push(value);
        {
            let mut running = self.running.lock();
            let n = running.entry(key.clone()).or_default();
            *n += 1;
            self.most_per_key.fetch_max(*n, Ordering::SeqCst);
        }
        tokio::time::sleep(Duration::from_millis(fastrand::u64(2..12))).await;
        *self.running.lock().get_mut(&key).unwrap() -= 1;
        self.done.fetch_add(1, Ordering::SeqCst);
    }
}

redis_test! {
    /// Keys from arguments, a file, standard input and --sequential, one
    /// delayed: Java's keys stay empty and `delayq take` takes none; inspect,
    /// stats and list count them; a library Worker of 4 slots runs each
    /// key's values one at a time, in offer order, the delayed one last.
    async fn grouped_offers_run_one_at_a_time_per_key_in_order_on_a_worker(redis, raw) {
        let q = "orders";
        let values = |key: &str, n: usize| (1..=n).map(|i| format!("{key}#{i}")).collect::<Vec<_>>();
        let a = values("a", 5);
        let args: Vec<&str> = ["offer", q, "--delay", "0", "--group", "a"].into_iter().chain(a.iter().map(String::as_str)).collect();
        let out = delayq(&redis, &args).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(text(&out.stderr), "offered 5 value(s) to orders in group \"a\" (due now)\n");
        // Offered after a#1..a#5 but due later: it joins a's line when due.
        let out = delayq(&redis, &["offer", q, "--delay", "1500ms", "--group", "a", "a#6"]).await;
        assert_eq!(text(&out.stderr), "offered 1 value(s) to orders in group \"a\" (due in 1s)\n", "{out:?}");
        let b = values("b", 5);
        let args: Vec<&str> = ["offer", q, "--delay", "0", "--group", "b"].into_iter().chain(b.iter().map(String::as_str)).collect();
        assert_eq!(delayq(&redis, &args).await.status.code(), Some(0));

        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "c#1\nc#2\r\nc#3\nc#4\nc#5").unwrap();
        let path = file.path().to_str().unwrap();
        let out = delayq(&redis, &["offer", q, "--delay", "0", "--group", "c", "--from-file", path]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.starts_with("offered 5 value(s) to orders in group \"c\" (due now) in "), "{said}");
        let out = delayq_stdin(&redis, &["offer", q, "--delay", "0", "--group", "d", "--from-file", "-"], b"d#1\nd#2\nd#3\n").await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(text(&out.stderr).starts_with("offered 3 value(s) to orders in group \"d\" (due now) in "), "{out:?}");
        let out = delayq(&redis, &["offer", q, "--delay", "0", "--sequential", "s#1", "s#2", "s#3"]).await;
        assert_eq!(text(&out.stderr), "offered 3 value(s) to orders in its sequential group (due now)\n", "{out:?}");

        // Only delayq's group keys hold them.
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{orders}").await, 0);
        assert_eq!(raw.llen("orders").await, 0);
        assert_eq!(raw.zcard("delayq_group_values:{orders}").await, 21);
        assert_eq!(raw.zcard("delayq_group_delayed:{orders}").await, 1);
        let out = delayq(&redis, &["take", q, "-n", "1", "--timeout", "500ms"]).await;
        assert_eq!(out.status.code(), Some(1), "a plain take takes no grouped value: {out:?}");
        assert!(out.stdout.is_empty(), "{out:?}");

        // Counted where the priority counts are.
        let out = delayq(&redis, &["inspect", q]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let table = text(&out.stdout);
        assert!(table.contains("\npending        1\nready         21\n"), "{table}");
        assert!(
            table.contains("\ngroups        1 pending and 21 ready of these have a group key (in order per key; only delayq's reliable consumers and workers take them: `delayq groups orders`; Java does not see them)\n"),
            "{table}"
        );
        assert!(!table.contains("\npriorities"), "{table}");
        assert!(!text(&out.stderr).contains("no key of queue"), "{out:?}");
        let doc = json_of(&delayq(&redis, &["inspect", q, "--format", "json"]).await);
        assert_eq!(
            (&doc["grouped_ready"], &doc["grouped_pending"], &doc["ready"], &doc["pending"], &doc["exists"]),
            (&json!(21), &json!(1), &json!(21), &json!(1), &json!(true)),
            "{doc}"
        );
        let doc = json_of(&delayq(&redis, &["stats", q, "--format", "json"]).await);
        assert_eq!((&doc["queues"][0]["grouped_ready"], &doc["queues"][0]["grouped_pending"]), (&json!(21), &json!(1)), "{doc}");
        let doc = json_of(&delayq(&redis, &["list", "--watch-ready", "0", "--format", "json"]).await);
        assert_eq!(doc["queues"][0]["queue"], "orders", "{doc}");
        assert_eq!((&doc["queues"][0]["grouped_ready"], &doc["queues"][0]["grouped_pending"]), (&json!(21), &json!(1)), "{doc}");

        let client = redis.client().await;
        let seen = Arc::new(Seen::default());
        let worker = client.worker(q, StringCodec).unwrap().concurrency(4).run({
            let seen = Arc::clone(&seen);
            move |value: String| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.handle(value).await;
                    Ok::<(), BoxError>(())
                }
            }
        });
        eventually(WAIT, "all 22 handled", || async { seen.done.load(Ordering::SeqCst) == 22 }).await;
        worker.shutdown().await;
        assert_eq!(seen.most_per_key.load(Ordering::SeqCst), 1, "two values of one key at once");
        {
            let order = seen.order.lock();
            let mut a = a.clone();
            a.push("a#6".into());
            for (key, expected) in [("a", a), ("b", b), ("c", values("c", 5)), ("d", values("d", 3)), ("s", values("s", 3))] {
                assert_eq!(order.get(key), Some(&expected), "{key} out of order");
            }
        }
        let doc = json_of(&delayq(&redis, &["inspect", q, "--format", "json"]).await);
        assert_eq!((&doc["grouped_ready"], &doc["grouped_pending"]), (&json!(0), &json!(0)), "{doc}");
        client.shutdown().await;
    }
}

redis_test! {
    /// --group and --sequential with a flag a grouped value cannot carry,
    /// with each other, an empty key or one over 1,024 bytes: clap's or the
    /// parser's message naming both (exit 2), and nothing is written.
    async fn grouped_offers_with_flags_they_cannot_carry_are_refused_before_anything_is_written(redis, raw) {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "a\nb\n").unwrap();
        let path = file.path().to_str().unwrap();
        let conflicts: [(&[&str], &str); 6] = [
            (&["--priority", "3", "x"], "--priority"),
            (&["--ttl", "1m", "x"], "--ttl"),
            (&["--header", "k=v", "x"], "--header"),
            (&["--id", "job-1", "x"], "--id"),
            (&["--dedup-window", "5m", "x"], "--dedup-window"),
            (&["--priority", "3", "--from-file", path], "--priority"),
        ];
        for grouped in [&["--group", "k"][..], &["--sequential"][..]] {
            for (extra, named) in conflicts {
                let args = [&["offer", "q", "--delay", "0"][..], grouped, extra].concat();
                let out = delayq(&redis, &args).await;
                assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
                let said = text(&out.stderr);
                assert!(said.contains("cannot be used with"), "{args:?}: {said}");
                assert!(said.contains(grouped[0]) && said.contains(named), "{args:?}: {said}");
            }
        }
        let out = delayq(&redis, &["offer", "q", "--delay", "0", "--group", "k", "--sequential", "x"]).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(text(&out.stderr).contains("'--group <KEY>' cannot be used with '--sequential'"), "{out:?}");
        let out = delayq(&redis, &["offer", "q", "--delay", "0", "--group", "", "x"]).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(text(&out.stderr).contains("a group key is not empty: give --sequential"), "{out:?}");
        let long = "k".repeat(1025);
        let out = delayq(&redis, &["offer", "q", "--delay", "0", "--group", &long, "x"]).await;
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(text(&out.stderr).contains("a group key is at most 1024 bytes, not 1025"), "{out:?}");
        assert_eq!(raw.cmd("DBSIZE", vec![]).await, Value::Integer(0));

        // 1,024 bytes is a key.
        let longest = "k".repeat(1024);
        let out = delayq(&redis, &["offer", "q", "--delay", "0", "--group", &longest, "x"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(raw.zcard("delayq_group_values:{q}").await, 1);
    }
}

redis_test! {
    /// `groups` reads the defaults and the counts (a key held by a retry
    /// under hold, one runnable, a delayed value), sets each flag keeping
    /// the others (as the library reads them back), refuses bad values and
    /// changes nothing then, and refuses a name no queue has unless
    /// --create.
    async fn groups_reads_and_sets_the_settings_and_counts_runnable_and_held_keys(redis) {
        let q = "jobs";
        for args in [
            &["offer", q, "--delay", "0", "--group", "h", "h#1", "h#2"][..],
            &["offer", q, "--delay", "0", "--group", "a", "a#1", "a#2"],
            &["offer", q, "--delay", "1h", "--group", "b", "b#1"],
        ] {
            assert_eq!(delayq(&redis, args).await.status.code(), Some(0), "{args:?}");
        }
        // h's first value fails under hold: h is held for an hour.
        let client = redis.client().await;
        let consumers = client.reliable_queue(q, StringCodec).unwrap();
        let delivery = consumers.take().await.unwrap();
        assert_eq!(delivery.value(), "h#1");
        assert!(delivery.nack(Duration::from_secs(3600)).await.unwrap());

        let out = delayq(&redis, &["groups", q]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(
            text(&out.stdout),
            "queue         jobs\n\
             concurrency   1 (one value of a key at a time, in order)\n\
             rate          none\n\
             on failure    hold (a failed value waits at its key's head; the key runs nothing until its retry is due)\n\
             ready         4 grouped value(s) in their keys' lines\n\
             delayed       1 grouped value(s) not due yet\n\
             keys runnable 1 (may run now, taken round robin)\n\
             keys held     1 (a retry under hold, or their rate, holds them until a time)\n"
        );
        assert!(out.stderr.is_empty(), "reading says nothing: {out:?}");
        let doc = json_of(&delayq(&redis, &["groups", q, "--format", "json"]).await);
        let counts = json!({"grouped_ready": 4, "grouped_pending": 1, "runnable_keys": 1, "held_keys": 1});
        let with = |settings: serde_json::Value| {
            let mut doc = counts.clone();
            doc.as_object_mut().unwrap().extend(settings.as_object().unwrap().clone());
            doc.as_object_mut().unwrap().insert("queue".into(), json!(q));
            doc
        };
        assert_eq!(doc, with(json!({"concurrency": 1, "rate": null, "on_failure": "hold"})));

        // Each flag alone keeps the others.
        let out = delayq(&redis, &["groups", q, "--concurrency", "3", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(text(&out.stderr).starts_with("jobs: group settings set ("), "{out:?}");
        assert_eq!(json_of(&out), with(json!({"concurrency": 3, "rate": null, "on_failure": "hold"})));
        let out = delayq(&redis, &["groups", q, "--rate", "10/1s", "--on-failure", "skip", "--format", "json"]).await;
        assert_eq!(json_of(&out), with(json!({"concurrency": 3, "rate": {"count": 10, "per_ms": 1000}, "on_failure": "skip"})));
        assert_eq!(
            consumers.group_limits().await.unwrap(),
            GroupLimits::new().concurrency(3).rate(10, Duration::from_secs(1)).on_failure(OnFailure::Skip)
        );
        let out = delayq(&redis, &["groups", q, "--rate", "5/1500ms"]).await;
        let table = text(&out.stdout);
        assert!(table.contains("\nconcurrency   3 (values of a key start in order, up to 3 at once; they may end out of it)\n"), "{table}");
        assert!(table.contains("\nrate          5/1s500ms per key (a burst of 5, then evenly;"), "{table}");
        assert!(table.contains("\non failure    skip (a failed value rejoins the end of its key's line;"), "{table}");
        let out = delayq(&redis, &["groups", q, "--rate", "none", "--on-failure", "hold", "--format", "json"]).await;
        assert_eq!(json_of(&out), with(json!({"concurrency": 3, "rate": null, "on_failure": "hold"})));

        // Bad values: exit 2, nothing changed.
        for (bad, said) in [
            (&["--concurrency", "0"][..], "--concurrency"),
            (&["--rate", "0/1s"], "is not a count"),
            (&["--rate", "fast"], "is not a rate: give COUNT/DURATION"),
            (&["--rate", "10/0"], "the period is at least 1ms"),
            (&["--on-failure", "retry"], "--on-failure"),
        ] {
            let out = delayq(&redis, &[&["groups", q][..], bad].concat()).await;
            assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
            assert!(text(&out.stderr).contains(said), "{bad:?}: {out:?}");
        }
        assert_eq!(consumers.group_limits().await.unwrap(), GroupLimits::new().concurrency(3));

        // A name no queue has: refused unless --create; then it is one.
        let out = delayq(&redis, &["groups", "nobody", "--concurrency", "2"]).await;
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let said = text(&out.stderr);
        assert!(said.starts_with("delayq: no queue `nobody`") && said.contains("(--create sets its group settings anyway)"), "{said}");
        let out = delayq(&redis, &["groups", "nobody", "--concurrency", "2", "--create", "--format", "json"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(json_of(&out)["concurrency"], 2);
        let out = delayq(&redis, &["groups", "nobody"]).await;
        assert_eq!(out.status.code(), Some(0), "settings alone make a queue: {out:?}");
        client.shutdown().await;
    }
}

redis_test! {
    /// A group key and a queue name holding terminal escapes, a line end
    /// and a bidirectional override: escaped in `offer`'s messages (from
    /// arguments and a file), `groups` and `inspect`; exact in JSON.
    async fn group_keys_and_names_with_escape_codes_are_shown_escaped(redis, raw) {
        let q = "esc-\u{1b}[1mq";
        let key = "k-\u{1b}[31m\n1\u{202e}";
        let out = delayq(&redis, &["offer", q, "--delay", "0", "--group", key, "v1"]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stderr);
        assert!(!unseen(&said), "{said:?}");
        assert_eq!(said, "offered 1 value(s) to esc-\\u{1b}[1mq in group \"k-\\u{1b}[31m\\n1\\u{202e}\" (due now)\n");
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "v2\n").unwrap();
        let out = delayq(&redis, &["offer", q, "--delay", "0", "--group", key, "--from-file", file.path().to_str().unwrap()]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stderr);
        assert!(!unseen(&said), "{said:?}");
        assert!(
            said.starts_with("offered 1 value(s) to esc-\\u{1b}[1mq in group \"k-\\u{1b}[31m\\n1\\u{202e}\" (due now) in "),
            "{said}"
        );
        // The key is stored exactly: both values are in its one line.
        let lines = raw.zrange(&format!("delayq_group_values:{{{q}}}")).await;
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|(member, _)| member.windows(key.len()).any(|w| w == key.as_bytes())), "{lines:?}");

        let out = delayq(&redis, &["groups", q]).await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let said = text(&out.stdout);
        assert!(!unseen(&said), "{said:?}");
        assert!(said.starts_with("queue         esc-\\u{1b}[1mq\n"), "{said}");
        assert!(said.contains("\nready         2 grouped value(s)"), "{said}");
        let out = delayq(&redis, &["groups", q, "--concurrency", "2", "--format", "json"]).await;
        assert!(!unseen(&text(&out.stdout)) && !unseen(&text(&out.stderr)), "{out:?}");
        assert_eq!(json_of(&out)["queue"], q);
        assert!(text(&out.stderr).starts_with("esc-\\u{1b}[1mq: group settings set"), "{out:?}");

        let out = delayq(&redis, &["inspect", q]).await;
        let said = text(&out.stdout);
        assert!(!unseen(&said), "{said:?}");
        assert!(said.contains("`delayq groups esc-\\u{1b}[1mq`"), "{said}");
    }
}
