//! The `delayq` binary, run as a separate process against a real Redis.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use delayq_test_support::{deadline, redis_test, RedisServer};

pub(crate) fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .expect("run delayq")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

redis_test! {
    async fn offer_then_take_round_trips_through_two_processes(redis) {
        let offered = Instant::now();
        let out = delayq(&redis, &["offer", "jobs", "--delay", "800ms", "first", "second"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = crate::run::delayq(&redis, &["take", "jobs", "-n", "2", "--timeout", "10s"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // Both have the same due time: they come out in Redis's tie order, as with Redisson.
        let mut got: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
        got.sort();
        assert_eq!(got, vec!["first", "second"]);
        assert!(offered.elapsed() >= Duration::from_millis(800));
    }
}

redis_test! {
    async fn take_exits_non_zero_when_too_few_values_arrive(redis) {
        assert!(delayq(&redis, &["offer", "q", "--delay", "0", "only"]).status.success());
        let out = crate::run::delayq(&redis, &["take", "q", "-n", "2", "--timeout", "1s"]).await;
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stdout(&out), "only\n");
    }
}

redis_test! {
    async fn codecs_and_formats_round_trip_on_the_command_line(redis, raw) {
        let cases: [(&str, &str, &[&str]); 4] = [
            ("long", "legacy", &["42", "-7"]),
            ("bytes", "modern", &["deadbeef", "00ff0a22"]),
            ("json", "legacy", &[r#"{"id":"o-1","amount":1234}"#]),
            ("string", "legacy", &["héllo ✓"]),
        ];
        for (i, (codec, format, values)) in cases.iter().enumerate() {
            let queue = format!("q{i}");
            let mut args = vec![
                "offer",
                queue.as_str(),
                "--delay",
                "0",
                "--codec",
                codec,
                "--format",
                format,
            ];
            args.extend(values.iter());
            let out = delayq(&redis, &args);
            assert!(
                out.status.success(),
                "{codec}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let pending = raw.lrange(&format!("redisson_delay_queue:{{{queue}}}")).await;
            for element in &pending {
                let fmt = delayq::format::unpack(element).unwrap().format();
                assert_eq!(fmt.as_str(), *format);
            }
            let n = values.len().to_string();
            let out = crate::run::delayq(&redis, &["take", &queue, "-n", &n, "--timeout", "5s", "--codec", codec]).await;
            assert!(
                out.status.success(),
                "{codec}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // Equal due times (delay 0) come out in Redis's tie order, like Redisson's.
            let mut got: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
            let mut expected: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
            got.sort();
            expected.sort();
            assert_eq!(got, expected, "{codec}");
        }
    }
}

redis_test! {
    async fn bad_input_is_a_clear_error_with_a_non_zero_exit(redis) {
        let out = delayq(&redis, &["offer", "q", "--delay", "-5s", "x"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("negative delay"),
            "{:?}",
            out
        );
        let out = delayq(&redis, &["offer", "q", "--delay", "1s", "--codec", "long", "abc"]);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("not a 64-bit integer"),
            "{:?}",
            out
        );
        let out = Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["take", "q", "--timeout", "1s"])
            .env("REDIS_URL", "redis://127.0.0.1:1")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot connect"),
            "{:?}",
            out
        );
        assert!(stderr(&out).contains("hint: is Redis running there?"), "{out:?}");
    }
}

redis_test! {
    async fn jackson_values_are_typed_on_offer_and_plain_on_take(redis, raw) {
        let order = r#"{"id":"o-1","amount":1234,"tags":["a","b"]}"#;
        let out = delayq(
            &redis,
            &[
                "offer",
                "vq_json",
                "--delay",
                "0",
                "--codec",
                "jackson",
                "--java-class",
                "compat.Order",
                order,
            ],
        );
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // Exactly the bytes Redisson's JsonJacksonCodec wrote for this order (compat/fixtures/4.7.0/json.json).
        let pending = raw.lrange("redisson_delay_queue:{vq_json}").await;
        let payload = delayq::format::unpack(&pending[0]).unwrap().payload.to_vec();
        assert_eq!(
            String::from_utf8(payload).unwrap(),
            r#"{"@class":"compat.Order","amount":1234,"id":"o-1","tags":["java.util.ArrayList",["a","b"]]}"#
        );
        let out = crate::run::delayq(&redis, &["take", "vq_json", "--timeout", "5s", "--codec", "jackson"]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            stdout(&out),
            "{\"amount\":1234,\"id\":\"o-1\",\"tags\":[\"a\",\"b\"]}\n"
        );

        let out = delayq(&redis, &["offer", "q", "--delay", "0", "--codec", "jackson", "{}"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("--java-class"), "{out:?}");
    }
}

redis_test! {
    async fn migrate_rewrites_a_queue_from_the_command_line(redis, raw) {
        assert!(
            delayq(&redis, &["offer", "q", "--delay", "1h", "--format", "legacy", "a", "b"])
                .status
                .success()
        );
        assert!(delayq(&redis, &["offer", "q", "--delay", "1h", "c"]).status.success());
        let out = delayq(&redis, &["migrate", "q", "--to", "modern"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(
            stdout(&out).contains("2 element(s) rewritten as modern, 1 already modern"),
            "{}",
            stdout(&out)
        );
        for element in raw.lrange("redisson_delay_queue:{q}").await {
            assert_eq!(
                delayq::format::unpack(&element).unwrap().format(),
                delayq::format::Format::Modern
            );
        }
    }
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `delayq offer q --delay 0` with `extra` must be a usage error (exit 2)
/// whose message names every one of `named`.
pub(crate) fn assert_offer_refused(redis: &RedisServer, extra: &[&str], named: &[&str]) {
    let mut args = vec!["offer", "q", "--delay", "0"];
    args.extend(extra);
    let out = delayq(redis, &args);
    assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
    let said = stderr(&out);
    for word in named {
        assert!(said.contains(word), "{extra:?}: {word} not in {said}");
    }
}

/// The stderr of an offer that must have succeeded.
pub(crate) fn offered(output: Output) -> String {
    assert!(output.status.success(), "{}", stderr(&output));
    stderr(&output)
}

fn json_of(output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(output)))
}

redis_test! {
    async fn inspect_shows_counts_the_next_due_time_and_the_pending_elements(redis, raw) {
        let offer = |delay: &str, format: &str, value: &str| {
            let out = delayq(
                &redis,
                &[
                    "offer", "orders", "--delay", delay, "--codec", "json", "--format", format, value,
                ],
            );
            assert!(out.status.success(), "{out:?}");
        };
        offer("3m", "modern", r#"{"id":"A-1","amount":1200}"#);
        offer("1h", "legacy", r#"{"id":"A-2","amount":7}"#);
        raw.cmd("RPUSH", vec!["orders".into(), r#"{"id":"A-0"}"#.into()]).await;
        raw.seed("orders", b"\x01not an element", delayq_test_support::now_ms() + 7_200_000)
            .await;

        let out = delayq(&redis, &["inspect", "orders", "--codec", "json"]);
        assert!(out.status.success(), "{out:?}");
        let text = stdout(&out);
        for line in [
            "queue         orders",
            "pending       3",
            "ready         1",
            "dead letters  0",
        ] {
            assert!(text.contains(line), "{line:?} missing in:\n{text}");
        }
        let lines: Vec<&str> = text.lines().collect();
        let header = lines
            .iter()
            .position(|l| l.starts_with("DUE"))
            .expect("a table of pending elements");
        assert!(
            lines[header].contains("WHEN") && lines[header].contains("FORMAT") && lines[header].contains("PAYLOAD")
        );
        // Earliest due first, each with its local time, "in ...", format and payload.
        assert!(
            lines[header + 1].contains("in 2m5") || lines[header + 1].contains("in 3m"),
            "{text}"
        );
        assert!(lines[header + 1].contains("modern") && lines[header + 1].contains(r#"{"id":"A-1","amount":1200}"#));
        assert!(lines[header + 2].contains("legacy") && lines[header + 2].contains(r#""A-2""#));
        assert!(
            lines[header + 3].contains("malformed") && lines[header + 3].contains("<016e6f74"),
            "{text}"
        );
        assert!(lines[1..header]
            .iter()
            .any(|l| l.starts_with("next due") && l.contains("(in ")));

        let out = delayq(
            &redis,
            &[
                "inspect", "orders", "--codec", "json", "--format", "json", "--limit", "1",
            ],
        );
        let doc = json_of(&out);
        assert_eq!((doc["pending"].as_u64(), doc["ready"].as_u64()), (Some(3), Some(1)));
        assert_eq!(doc["exists"], true);
        let elements = doc["elements"].as_array().unwrap();
        assert_eq!(elements.len(), 1, "--limit 1");
        assert_eq!(elements[0]["format"], "modern");
        assert_eq!(elements[0]["payload"], r#"{"id":"A-1","amount":1200}"#);
        let in_ms = elements[0]["due_in_ms"].as_i64().unwrap();
        assert!(in_ms > 0 && in_ms <= 180_000, "{in_ms}");

        // A name no queue has: refused (exit 1), not shown as zeros.
        let out = delayq(&redis, &["inspect", "orderz"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("no queue `orderz`"), "{out:?}");
        // A name used by another kind of key: a clear error.
        raw.cmd("SET", vec!["profile".into(), "x".into()]).await;
        let out = delayq(&redis, &["inspect", "profile"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("wrong type") && stderr(&out).contains("not a delayed queue"),
            "{out:?}"
        );
    }
}

redis_test! {
    async fn stats_move_due_purge_and_dead_letters_work_end_to_end(redis, raw) {
        // Due already (a past score, as if no transfer had run for a while), and later.
        for i in 0..5 {
            raw.seed(
                "jobs",
                &delayq::format::pack(delayq::format::Format::Modern, format!("due-{i}").as_bytes()),
                1_000,
            )
            .await;
        }
        let out = delayq(&redis, &["offer", "jobs", "--delay", "1h", "later-1", "later-2"]);
        assert!(out.status.success());

        let out = delayq(&redis, &["stats", "jobs", "other", "--format", "json"]);
        assert_eq!(out.status.code(), Some(1), "`other` is no queue: {out:?}");
        let out = delayq(&redis, &["stats", "jobs", "--format", "json"]);
        let doc = json_of(&out);
        let jobs = &doc["queues"][0];
        assert_eq!(
            (jobs["queue"].as_str(), jobs["pending"].as_u64()),
            (Some("jobs"), Some(7))
        );
        assert!(jobs["lag_ms"].as_u64().unwrap() > 1_000_000, "long overdue: {jobs}");
        let out = delayq(
            &redis,
            &["stats", "jobs", "--watch", "--count", "3", "--interval", "50ms"],
        );
        assert!(out.status.success());
        assert_eq!(
            stdout(&out).matches("QUEUE").count(),
            3,
            "three refreshes:\n{}",
            stdout(&out)
        );

        let out = delayq(&redis, &["move-due", "jobs"]);
        assert!(out.status.success(), "{out:?}");
        let text = stdout(&out);
        assert!(
            text.lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("jobs") && l.contains(" 5 ")),
            "{text}"
        );
        assert_eq!(raw.lrange("jobs").await.len(), 5);
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{jobs}").await, 2);

        // Purge asks first, then deletes pending and, with --ready, ready values.
        let out = delayq(&redis, &["purge", "jobs", "--ready"]);
        assert_eq!(out.status.code(), Some(0), "a dry run succeeds: {out:?}");
        assert!(
            stderr(&out).contains("would delete 2 pending element(s) and 5 ready value(s)"),
            "{out:?}"
        );
        assert_eq!(
            raw.zcard("redisson_delay_queue_timeout:{jobs}").await,
            2,
            "nothing deleted without --yes"
        );
        let out = delayq(&redis, &["purge", "jobs", "--yes", "--batch", "1", "--format", "json"]);
        let doc = json_of(&out);
        assert_eq!(
            (doc["pending_deleted"].as_u64(), doc["ready_deleted"].as_u64()),
            (Some(2), Some(0))
        );
        assert_eq!(raw.llen("jobs").await, 5, "ready values kept without --ready");
        let out = delayq(&redis, &["purge", "jobs", "--ready", "--yes", "--batch", "2"]);
        assert!(
            stdout(&out).contains("deleted 0 pending element(s) and 5 ready value(s)"),
            "{out:?}"
        );
        assert_eq!(raw.llen("jobs").await, 0);

        // Dead letters: listed oldest first, requeued to the queue in batches.
        raw.cmd(
            "RPUSH",
            vec!["delayq_dead_letter:{jobs}".into(), "a".into(), "b".into(), "c".into()],
        )
        .await;
        let out = delayq(&redis, &["dead-letter", "list", "jobs"]);
        assert!(out.status.success());
        let text = stdout(&out);
        assert!(
            text.contains("1  a") && text.contains("3  c") && text.contains("(3 of 3"),
            "{text}"
        );
        let out = delayq(
            &redis,
            &["dead-letter", "requeue", "jobs", "--max", "2", "--batch", "1"],
        );
        assert!(
            stdout(&out).contains("requeued 2") && stdout(&out).contains("1 left"),
            "{out:?}"
        );
        assert_eq!(raw.lrange("jobs").await, ["a", "b"]);
        let doc = json_of(&delayq(&redis, &["dead-letter", "list", "jobs", "--format", "json"]));
        assert_eq!(doc["values"][0]["value"], "c");
        assert_eq!(doc["total"], 1);
    }
}

#[test]
fn help_covers_every_command_and_option() {
    let help = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_delayq")).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let top = help(&["--help"]);
    for command in [
        "inspect",
        "stats",
        "offer",
        "take",
        "move-due",
        "purge",
        "dead-letter",
        "migrate",
        "transfer",
        "cancel",
        "reschedule",
        "get",
        "pause",
        "resume",
        "job",
        "result",
        "batch",
        "groups",
    ] {
        assert!(top.contains(command), "{command} missing from --help:\n{top}");
    }
    assert!(top.contains("REDIS_URL") && top.contains("Examples:"));
    let expectations: &[(&[&str], &[&str])] = &[
        (&["inspect", "--help"], &["--limit", "--codec", "--format"]),
        (&["stats", "--help"], &["--watch", "--interval", "--count", "--format"]),
        (&["purge", "--help"], &["--ready", "--yes", "--batch"]),
        (&["dead-letter", "--help"], &["list", "requeue"]),
        (&["dead-letter", "requeue", "--help"], &["--max", "--batch"]),
        (&["take", "--help"], &["--count", "--timeout", "--codec", "--format"]),
        (
            &["offer", "--help"],
            &["--delay", "--codec", "--format", "--java-class"],
        ),
        (&["move-due", "--help"], &["--timeout"]),
        (&["offer", "--help"], &["--id", "--replace", "--from-file", "--header"]),
        (&["offer", "--help"], &["--group", "--sequential"]),
        (
            &["groups", "--help"],
            &[
                "--concurrency",
                "--rate",
                "--on-failure",
                "--create",
                "--format",
                "Examples:",
            ],
        ),
        (&["reschedule", "--help"], &["--delay", "--at"]),
        (&["get", "--help"], &["--codec", "--format"]),
        (&["cancel", "--help"], &["--format", "job history"]),
        (&["result", "--help"], &["--wait", "--format"]),
        (&["batch", "--help"], &["offer", "show", "job history"]),
        (
            &["batch", "offer", "--help"],
            &[
                "--id",
                "--on-complete",
                "--data",
                "--delay",
                "--keep",
                "--codec",
                "--java-class",
                "--java-type",
                "--kryo-schema",
                "--element-format",
                "--from-file",
                "--format",
            ],
        ),
        (&["batch", "show", "--help"], &["--format", "progress bar"]),
        (
            &["limits", "--help"],
            &["--max-size", "--max-payload", "--offers", "--takes", "--concurrency"],
        ),
    ];
    for (args, options) in expectations {
        let text = help(args);
        for option in *options {
            assert!(
                text.contains(option),
                "{option} missing from `delayq {}`:\n{text}",
                args.join(" ")
            );
        }
    }
}

redis_test! {
    async fn ids_and_pause_from_the_command_line_across_processes(redis) {
        // Four processes offer one id at once: exactly one offers it.
        let outputs = futures_util::future::join_all((0..4).map(|i| {
            let value = format!("from-{i}");
            let redis = &redis;
            async move {
                crate::run::delayq(
                    redis,
                    &["offer", "reminders", "--delay", "1h", "--id", "order-42", &value],
                )
                .await
            }
        }))
        .await;
        let offered = outputs.iter().filter(|o| stderr(o).contains("offered id")).count();
        let kept = outputs
            .iter()
            .filter(|o| stderr(o).contains("pending in reminders already"))
            .count();
        assert!(outputs.iter().all(|o| o.status.success()), "{outputs:?}");
        assert_eq!((offered, kept), (1, 3), "{outputs:?}");

        let out = delayq(&redis, &["get", "reminders", "order-42", "--format", "json"]);
        assert!(out.status.success(), "{out:?}");
        let got = json_of(&out);
        assert_eq!(got["id"], "order-42");
        assert!(got["value"].as_str().unwrap().starts_with("from-"));
        let due_in = got["due_in_ms"].as_i64().unwrap();
        assert!(due_in > 3_000_000 && due_in <= 3_600_000, "{got}");

        let out = delayq(
            &redis,
            &[
                "offer",
                "reminders",
                "--delay",
                "2h",
                "--id",
                "order-42",
                "--replace",
                "new",
            ],
        );
        assert!(out.status.success() && stderr(&out).contains("replaced"), "{out:?}");
        let out = delayq(&redis, &["reschedule", "reminders", "order-42", "--delay", "10m"]);
        assert!(out.status.success(), "{out:?}");
        let got = json_of(&delayq(&redis, &["get", "reminders", "order-42", "--format", "json"]));
        assert_eq!(got["value"], "new");
        assert!(got["due_in_ms"].as_i64().unwrap() <= 600_000, "{got}");
        // To an absolute time (RFC 3339, any offset).
        let out = delayq(
            &redis,
            &[
                "reschedule",
                "reminders",
                "order-42",
                "--at",
                "2099-12-01T11:00:00+01:00",
            ],
        );
        assert!(
            out.status.success() && stderr(&out).contains("2099-12-01T10:00:00"),
            "{out:?}"
        );
        let got = json_of(&delayq(&redis, &["get", "reminders", "order-42", "--format", "json"]));
        assert!(got["due"].as_str().unwrap().starts_with("2099-12-01T10:00:00"), "{got}");
        let out = delayq(&redis, &["reschedule", "reminders", "order-42", "--at", "tomorrow"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(stderr(&out).contains("RFC 3339"), "{out:?}");
        // inspect names the id of each pending element.
        let inspected = json_of(&delayq(&redis, &["inspect", "reminders", "--format", "json"]));
        assert_eq!(inspected["elements"][0]["id"], "order-42", "{inspected}");
        assert_eq!(inspected["ids"], 1);

        let out = delayq(&redis, &["cancel", "reminders", "order-42"]);
        assert!(out.status.success(), "{out:?}");
        let out = delayq(&redis, &["cancel", "reminders", "order-42"]);
        assert_eq!(out.status.code(), Some(1), "cancelling a missing id: {out:?}");
        let out = delayq(&redis, &["get", "reminders", "order-42"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let out = delayq(&redis, &["reschedule", "reminders", "order-42", "--delay", "1s"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");

        // Pause: a due element stays pending while `take` (which transfers) waits.
        assert!(delayq(&redis, &["pause", "reminders"]).status.success());
        let inspected = json_of(&delayq(&redis, &["inspect", "reminders", "--format", "json"]));
        assert_eq!(inspected["paused"], true, "{inspected}");
        assert!(delayq(&redis, &["offer", "reminders", "--delay", "0", "due"])
            .status
            .success());
        let out = delayq(&redis, &["take", "reminders", "--timeout", "1500ms"]);
        assert_eq!(out.status.code(), Some(1), "nothing moves while paused: {out:?}");
        assert!(
            stderr(&out).contains("only 0 of 1 value(s) arrived in time: reminders is paused"),
            "take says why: {out:?}"
        );
        let out = delayq(&redis, &["resume", "reminders"]);
        assert!(out.status.success() && stderr(&out).contains("resumed"), "{out:?}");
        let out = delayq(&redis, &["take", "reminders", "--timeout", "20s"]);
        assert!(out.status.success(), "{out:?}");
        assert_eq!(stdout(&out).trim(), "due");
    }
}

/// `delayq offer QUEUE --delay 1h ARGS...` with `input` on standard input.
fn delayq_with_stdin(redis: &RedisServer, args: &[&str], input: Vec<u8>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run delayq");
    let mut stdin = child.stdin.take().unwrap();
    // Written from a thread: the child reads while it offers.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().expect("delayq ends");
    writer.join().unwrap();
    output
}

/// The payloads of a queue's pending list, in order, as text.
async fn pending_payloads(raw: &delayq_test_support::RawRedis, queue: &str) -> Vec<String> {
    let keys = delayq::QueueKeys::new(queue).unwrap();
    raw.lrange(keys.pending())
        .await
        .iter()
        .map(|e| String::from_utf8(delayq::format::unpack(e).unwrap().payload.to_vec()).unwrap())
        .collect()
}

fn lines_of(values: &[String]) -> Vec<u8> {
    values.iter().flat_map(|v| format!("{v}\n").into_bytes()).collect()
}

redis_test! {
    async fn offer_from_a_file_or_standard_input_keeps_the_lines_order(redis, raw) {
        // More lines than one block of the command (50,000).
        let values: Vec<String> = (0..120_000i64).map(|i| (i * 7 - 3).to_string()).collect();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), lines_of(&values)).unwrap();
        let path = file.path().to_str().unwrap();
        let out = delayq(
            &redis,
            &[
                "offer",
                "from-file",
                "--delay",
                "1h",
                "--codec",
                "long",
                "--from-file",
                path,
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with("offered 120000 value(s) to from-file"),
            "{}",
            stderr(&out)
        );
        assert_eq!(pending_payloads(&raw, "from-file").await, values);

        let out = delayq_with_stdin(
            &redis,
            &[
                "offer",
                "from-stdin",
                "--delay",
                "1h",
                "--format",
                "legacy",
                "--from-file",
                "-",
            ],
            lines_of(&values),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(pending_payloads(&raw, "from-stdin").await, values);
        let keys = delayq::QueueKeys::new("from-stdin").unwrap();
        let first = &raw.lrange(keys.pending()).await[0];
        assert_eq!(
            delayq::format::unpack(first).unwrap().format(),
            delayq::format::Format::Legacy
        );

        // Every line is a value, an empty one too; CRLF ends a line as LF does.
        let out = delayq_with_stdin(
            &redis,
            &["offer", "crlf", "--delay", "1h", "--from-file", "-"],
            b"a\r\n\r\nb c\nlast".to_vec(),
        );
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(pending_payloads(&raw, "crlf").await, ["a", "", "b c", "last"]);

        let out = delayq(&redis, &["offer", "q", "--delay", "1h", "--from-file", path, "value"]);
        assert_eq!(out.status.code(), Some(2), "VALUE and --from-file: {}", stderr(&out));
    }
}

redis_test! {
    async fn a_bad_line_is_named_and_nothing_of_a_bad_file_is_offered(redis, raw) {
        let mut values: Vec<String> = (0..80_000).map(|i| i.to_string()).collect();
        values[70_000] = "seventy thousand".into();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), lines_of(&values)).unwrap();
        let path = file.path().to_str().unwrap();
        let out = delayq(
            &redis,
            &[
                "offer",
                "bad-file",
                "--delay",
                "1h",
                "--codec",
                "long",
                "--from-file",
                path,
            ],
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("line 70001: \"seventy thousand\" is not a 64-bit integer"),
            "{}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("nothing was offered"), "{}", stderr(&out));
        assert!(pending_payloads(&raw, "bad-file").await.is_empty());

        // From standard input, blocks before the bad line's are offered, and said so.
        let out = delayq_with_stdin(
            &redis,
            &[
                "offer",
                "bad-stdin",
                "--delay",
                "1h",
                "--codec",
                "long",
                "--from-file",
                "-",
            ],
            lines_of(&values),
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("line 70001"), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("the first 50000 values were offered, none after them"),
            "{}",
            stderr(&out)
        );
        assert_eq!(pending_payloads(&raw, "bad-stdin").await, values[..50_000]);

        let out = delayq(
            &redis,
            &["offer", "q", "--delay", "1h", "--from-file", "/nonexistent/values"],
        );
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("/nonexistent/values"), "{}", stderr(&out));
    }
}

/// Characters a terminal takes for instructions: controls (but the line
/// ends that separate lines) and bidirectional overrides.
fn unescaped(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| (c.is_control() && c != '\n') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        .collect()
}

/// Asserts that `output` printed no raw control character anywhere.
#[track_caller]
fn assert_escaped(output: &Output) {
    for (stream, text) in [("stdout", stdout(output)), ("stderr", stderr(output))] {
        assert!(
            unescaped(&text).is_empty(),
            "raw {:?} in {stream}: {text:?}",
            unescaped(&text)
        );
    }
}

/// A queue name, an id, a schedule name and values written by someone who
/// wants to retitle the terminal, clear it, or reorder a line.
const EVIL_QUEUE: &str = "q\u{1b}]0;pwned\u{7}";
const EVIL_ID: &str = "id\u{1b}[2J\r";
const EVIL_VALUE: &str = "v\u{1b}[31m\u{9b}1m\u{202e}x";
const EVIL_SCHEDULE: &str = "s\u{1b}[5m";

redis_test! {
    async fn control_characters_in_names_ids_and_values_print_escaped_and_json_stays_exact(redis, raw) {
        let (queue, id, value) = (EVIL_QUEUE, EVIL_ID, EVIL_VALUE);
        let shown_queue = r"q\u{1b}]0;pwned\u{7}";
        let shown_id = r"id\u{1b}[2J\r";
        let shown_value = r"v\u{1b}[31m\u{9b}1m\u{202e}x";

        let out = delayq(&redis, &["offer", queue, "--delay", "1h", "--id", id, value]);
        assert!(out.status.success(), "{out:?}");
        assert_escaped(&out);
        let out = delayq(
            &redis,
            &["schedule", "add", queue, EVIL_SCHEDULE, "--every", "5m", value],
        );
        assert!(out.status.success(), "{out:?}");
        assert_escaped(&out);
        raw.cmd(
            "RPUSH",
            vec![format!("delayq_dead_letter:{{{queue}}}").into(), value.into()],
        )
        .await;

        // Tables and lines: escaped.
        let out = delayq(&redis, &["inspect", queue]);
        assert_escaped(&out);
        let text = stdout(&out);
        for shown in [
            format!("queue         {shown_queue}"),
            shown_id.to_owned(),
            shown_value.to_owned(),
            r"s\u{1b}[5m".to_owned(),
        ] {
            assert!(text.contains(&shown), "{shown} missing in:\n{text}");
        }
        let out = delayq(&redis, &["stats", queue]);
        assert_escaped(&out);
        assert!(stdout(&out).contains(shown_queue), "{out:?}");
        let out = delayq(&redis, &["get", queue, id]);
        assert_escaped(&out);
        assert!(
            stdout(&out).contains(shown_id) && stdout(&out).contains(shown_value),
            "{out:?}"
        );
        let out = delayq(&redis, &["schedule", "list", queue]);
        assert_escaped(&out);
        assert!(
            stdout(&out).contains(r"s\u{1b}[5m") && stdout(&out).contains(shown_value),
            "{out:?}"
        );
        let out = delayq(&redis, &["dead-letter", "list", queue]);
        assert_escaped(&out);
        assert!(stdout(&out).contains(shown_value), "{out:?}");
        for args in [
            &["get", queue, "no\u{1b}[2Jsuch"][..],
            &["pause", queue],
            &["resume", queue],
            &["purge", queue],
            &["schedule", "pause", queue, "no\u{1b}[2Jsuch"],
            &["inspect", "empty\u{1b}[2J"],
        ] {
            let out = delayq(&redis, args);
            assert_escaped(&out);
            assert!(stderr(&out).contains(r"\u{1b}"), "{args:?}: {out:?}");
        }

        // JSON: the exact strings, as JSON escapes.
        let doc = json_of(&delayq(&redis, &["inspect", queue, "--format", "json"]));
        assert_eq!(doc["queue"], queue);
        assert_eq!(doc["elements"][0]["id"], id);
        assert_eq!(doc["elements"][0]["payload"], value);
        assert_eq!(doc["schedules"][0]["name"], EVIL_SCHEDULE);
        let doc = json_of(&delayq(&redis, &["stats", queue, "--format", "json"]));
        assert_eq!(doc["queues"][0]["queue"], queue);
        let doc = json_of(&delayq(&redis, &["get", queue, id, "--format", "json"]));
        assert_eq!((doc["id"].as_str(), doc["value"].as_str()), (Some(id), Some(value)));
        let doc = json_of(&delayq(&redis, &["schedule", "list", queue, "--format", "json"]));
        assert_eq!(doc["schedules"][0]["name"], EVIL_SCHEDULE);
        assert_eq!(doc["schedules"][0]["value"], value);
        let doc = json_of(&delayq(&redis, &["dead-letter", "list", queue, "--format", "json"]));
        assert_eq!(doc["values"][0]["value"], value);
        for args in [
            &["inspect", queue, "--format", "json"][..],
            &["get", queue, id, "--format", "json"],
            &["schedule", "list", queue, "--format", "json"],
            &["dead-letter", "list", queue, "--format", "json"],
        ] {
            assert_escaped(&delayq(&redis, args));
        }

        // take: one escaped line per value; JSON exact.
        for format in ["table", "json"] {
            assert!(delayq(&redis, &["offer", queue, "--delay", "0", value])
                .status
                .success());
            let out = crate::run::delayq(&redis, &["take", queue, "--timeout", "20s", "--format", format]).await;
            assert!(out.status.success(), "{out:?}");
            assert_escaped(&out);
            match format {
                "table" => assert_eq!(stdout(&out), format!("{shown_value}\n")),
                _ => assert_eq!(
                    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(),
                    serde_json::json!({"value": value, "headers": {}})
                ),
            }
        }
    }
}

redis_test! {
    async fn errors_and_log_lines_print_escaped(redis, raw) {
        // The queue's ready list is a string: its error names the key.
        raw.cmd("SET", vec![EVIL_QUEUE.into(), "x".into()]).await;
        let out = delayq(&redis, &["inspect", EVIL_QUEUE]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert_escaped(&out);
        assert!(stderr(&out).contains(r"q\u{1b}]0;pwned\u{7}"), "{out:?}");

        // clap's own errors quote the arguments.
        for args in [&["inspect", "q", "--limit", "1\r\u{9b}2J"][..], &["\r\u{9b}2J"]] {
            let out = delayq(&redis, args);
            assert_eq!(out.status.code(), Some(2), "{out:?}");
            assert_escaped(&out);
            assert!(stderr(&out).contains(r"\r\u{9b}2J"), "{out:?}");
        }

        // Log events of the library and of the CLI carry the same text (the
        // pending list is a string too: reading its length fails).
        raw.cmd(
            "SET",
            vec![format!("redisson_delay_queue:{{{EVIL_QUEUE}}}").into(), "x".into()],
        )
        .await;
        let out = Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["transfer", EVIL_QUEUE, "--until-empty", "--timeout", "1s"])
            .env("REDIS_URL", redis.url())
            .env("DELAYQ_LOG", "warn")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(
            stderr(&out).contains("could not read the queue length"),
            "a warning is logged: {out:?}"
        );
        assert!(!stderr(&out).contains(EVIL_QUEUE), "{out:?}");
        assert_escaped(&out);
    }
}

#[test]
fn passwords_with_at_signs_are_never_printed() {
    let run = |url: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["stats", "q", "--url", url])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        stderr(&out)
    };
    // A URL that does not parse: the message shows it, redacted.
    let text = run("redis://app:hunter@2secret@127.0.0.1:notaport/0");
    assert!(text.contains("redis://app:***@127.0.0.1:notaport/0"), "{text}");
    // Sentinels that cannot be reached: likewise, both passwords hidden.
    let sentinel =
        run("redis-sentinel://app:first@1pw@127.0.0.1:1/0?sentinelServiceName=m&sentinelPassword=second@2pw");
    assert!(sentinel.contains("app:***@127.0.0.1:1/0"), "{sentinel}");
    for (text, secrets) in [
        (&text, &["hunter", "2secret"][..]),
        (&sentinel, &["first", "1pw", "second", "2pw"]),
    ] {
        for secret in secrets {
            assert!(!text.contains(secret), "{secret} printed: {text}");
        }
    }
}

redis_test! {
    /// `delayq list` and `stats --all` show every queue; a misspelt name is
    /// refused with the closest queue there is, by every command that reads a
    /// queue; `pause` of a name no queue has leaves no stray key unless
    /// `--create`; an empty database says it holds no delayq queues.
    async fn list_shows_every_queue_and_a_misspelt_name_is_refused_with_the_closest(redis, raw) {
        use delayq::fred::interfaces::{KeysInterface, ListInterface};
        // An empty database.
        let out = delayq(&redis, &["list"]);
        assert!(out.status.success(), "{out:?}");
        assert!(stderr(&out).contains("the database holds no delayq queues"), "{out:?}");
        assert_eq!(
            json_of(&delayq(&redis, &["list", "--format", "json"]))["queues"],
            serde_json::json!([])
        );
        let out = delayq(&redis, &["stats", "orders"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(
            stderr(&out).contains("no queue `orders`: the database holds no delayq queues"),
            "{out:?}"
        );

        // Three queues: pending elements, dead letters only (Java's producer,
        // a delayq worker gave up), ready values only (offered and moved by delayq).
        assert!(delayq(&redis, &["offer", "orders", "--delay", "1h", "a", "b"])
            .status
            .success());
        let _: () = raw.client.rpush("delayq_dead_letter:{t}mail", "bounced").await.unwrap();
        assert!(delayq(&redis, &["offer", "ready-only", "--delay", "0", "r"])
            .status
            .success());
        assert!(delayq(&redis, &["move-due", "ready-only"]).status.success());
        assert_eq!(raw.llen("ready-only").await, 1);

        let listed = json_of(&delayq(&redis, &["list", "--format", "json", "--sort", "name"]));
        let names: Vec<&str> = listed["queues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["queue"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["orders", "ready-only", "{t}mail"], "{listed}");
        assert_eq!(listed["queues"][0]["pending"], 2);
        assert_eq!(listed["queues"][1]["ready"], 1);
        assert_eq!(listed["queues"][2]["dead_letters"], 1);
        let all = json_of(&delayq(&redis, &["stats", "--all", "--format", "json"]));
        let counts = |doc: &serde_json::Value| -> Vec<(String, u64, u64, u64)> {
            doc["queues"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| {
                    let n = |k: &str| q[k].as_u64().unwrap();
                    (
                        q["queue"].as_str().unwrap().to_owned(),
                        n("pending"),
                        n("ready"),
                        n("dead_letters"),
                    )
                })
                .collect()
        };
        assert_eq!(counts(&all), counts(&listed));
        let table = stdout(&delayq(&redis, &["list"]));
        assert!(table.starts_with("QUEUE"), "{table}");
        assert_eq!(table.lines().count(), 4, "{table}");

        // Every command that reads a queue refuses a typo, exit 1, naming the queue meant.
        for args in [
            &["stats", "ordrs"][..],
            &["inspect", "ordrs"],
            &["dead-letter", "list", "ordrs"],
            &["take", "ordrs", "--timeout", "1s"],
            &["move-due", "ordrs"],
            &["purge", "ordrs"],
            &["get", "ordrs", "some-id"],
            &["resume", "ordrs"],
        ] {
            let out = delayq(&redis, args);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
            assert_eq!(
                stderr(&out),
                "delayq: no queue `ordrs`; did you mean `orders`?\n",
                "{args:?}"
            );
        }
        // Writing state for a name no queue has: refused, no stray key, unless --create.
        let out = delayq(&redis, &["pause", "ordrs"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(
            stderr(&out).contains("did you mean `orders`? (--create pauses it anyway)"),
            "{out:?}"
        );
        let stray: i64 = raw.client.exists("delayq_paused:{ordrs}").await.unwrap();
        assert_eq!(stray, 0, "no stray key");
        assert!(delayq(&redis, &["pause", "ordrs", "--create"]).status.success());
        let created: i64 = raw.client.exists("delayq_paused:{ordrs}").await.unwrap();
        assert_eq!(created, 1);
        // Now it is a (paused) queue: reading it works.
        assert!(delayq(&redis, &["resume", "ordrs"]).status.success());

        // A name with control characters is shown escaped.
        let out = delayq(&redis, &["stats", "o\u{1b}[31mrders"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(!stderr(&out).contains('\u{1b}'), "{out:?}");
        assert!(stderr(&out).contains(r"no queue `o\u{1b}[31mrders`"), "{out:?}");
    }
}

redis_test! {
    /// A registered name whose keys are all gone and that nobody registered
    /// for 30 minutes is dropped as `list` finds it, with no dashboard
    /// running: it is not listed, the typo check no longer takes it for a
    /// queue, and the registry forgets it. A name registered a moment ago is
    /// still listed (a process offering to it may be about to).
    async fn list_forgets_a_registered_queue_whose_keys_are_long_gone(redis, raw) {
        use delayq::fred::interfaces::SortedSetsInterface;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as f64;
        let long_ago = now_ms - 31.0 * 60_000.0;
        let _: () = raw
            .client
            .zadd(
                "delayq_queues",
                None,
                None,
                false,
                false,
                vec![(long_ago, "gone"), (now_ms, "fresh")],
            )
            .await
            .unwrap();
        assert!(delayq(&redis, &["offer", "kept", "--delay", "1h", "a"])
            .status
            .success());

        let listed = json_of(&delayq(&redis, &["list", "--format", "json", "--sort", "name"]));
        let names: Vec<&str> = listed["queues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q["queue"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["fresh", "kept"], "{listed}");
        let score: Option<f64> = raw.client.zscore("delayq_queues", "gone").await.unwrap();
        assert_eq!(score, None, "the registry forgot it");
        let out = delayq(&redis, &["stats", "gone"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("no queue `gone`"), "{out:?}");
    }
}

/// The next line `stats --watch --format json` writes, as JSON.
async fn next_frame(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) -> serde_json::Value {
    let line = lines.next_line().await.unwrap().expect("stats --watch ended");
    serde_json::from_str(&line).unwrap()
}

/// `stats --watch` while Redis goes away and comes back: each frame says
/// when it was read; while Redis is down a frame says so, and since when,
/// instead of the command hanging silently; once Redis is back the counts
/// come again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_watch_says_redis_is_down_and_resumes_when_it_is_back() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    deadline(async {
        let mut redis = RedisServer::start().await;
        assert!(delayq(&redis, &["offer", "jobs", "--delay", "1h", "a", "b"])
            .status
            .success());

        // Tables: each frame starts with the time it was read.
        let out = delayq(
            &redis,
            &["stats", "jobs", "--watch", "--count", "2", "--interval", "50ms"],
        );
        assert!(out.status.success(), "{out:?}");
        let text = stdout(&out);
        let frames: Vec<&str> = text.split("QUEUE").collect();
        assert_eq!(frames.len(), 3, "two frames:\n{text}");
        for frame in &frames[..2] {
            let stamp = frame.trim_end().lines().last().unwrap_or_default();
            assert!(
                stamp.starts_with("at 20") && stamp.matches(':').count() >= 3,
                "a frame's time: {stamp:?}\n{text}"
            );
        }

        let mut watch = tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args(["stats", "jobs", "--watch", "--interval", "200ms", "--format", "json"])
            .env("REDIS_URL", redis.url())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start delayq stats --watch");
        let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
        let frame = next_frame(&mut lines).await;
        assert_eq!(frame["queues"][0]["pending"], 2, "{frame}");
        assert!(frame["at"].is_string(), "{frame}");

        redis.kill();
        let down = loop {
            let frame = next_frame(&mut lines).await;
            if frame["redis"] == "unreachable" {
                break frame;
            }
        };
        assert!(down["at"].is_string() && down["since"].is_string(), "{down}");
        assert!(down["error"].as_str().is_some_and(|e| !e.is_empty()), "{down}");
        assert!(down.get("queues").is_none(), "no counts while down: {down}");
        let since = down["since"].clone();
        // The next frame while still down keeps the same start of the outage.
        let again = next_frame(&mut lines).await;
        if again["redis"] == "unreachable" {
            assert_eq!(again["since"], since, "{again}");
        }

        redis.restart().await;
        assert!(delayq(&redis, &["offer", "jobs", "--delay", "1h", "c"])
            .status
            .success());
        loop {
            let frame = next_frame(&mut lines).await;
            if frame["queues"][0]["pending"] == 1 {
                assert!(frame.get("redis").is_none(), "{frame}");
                break;
            }
        }
        watch.kill().await.unwrap();
    })
    .await;
}

redis_test! {
    async fn limits_are_shown_set_and_obeyed_from_the_command_line(redis) {
        // A name no queue has is refused, unless --create.
        let out = delayq(&redis, &["limits", "mail", "--max-size", "2"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("--create"), "{out:?}");
        let out = delayq(&redis, &["limits", "mail", "--max-size", "2", "--max-payload", "100", "--create"]);
        assert!(out.status.success(), "{out:?}");
        assert_eq!(stdout(&out).trim(), "max_size=2 max_payload=100");
        // Without flags: shown, unchanged; a flag changes only itself.
        let out = delayq(&redis, &["limits", "mail"]);
        assert_eq!(stdout(&out).trim(), "max_size=2 max_payload=100", "{out:?}");
        let out = delayq(&redis, &["limits", "mail", "--takes", "off"]);
        assert_eq!(stdout(&out).trim(), "max_size=2 max_payload=100 takes=off", "{out:?}");
        // Offers past a limit exit 1 with the reason; nothing is queued.
        let out = delayq(&redis, &["offer", "mail", "--delay", "1h", &"x".repeat(101)]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("101 bytes is over the queue's max_payload of 100"), "{out:?}");
        let out = delayq(&redis, &["offer", "mail", "--delay", "1h", "a", "b", "c"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("the first 2 values are queued"), "{out:?}");
        assert!(stderr(&out).contains("max_size 2"), "{out:?}");
        let out = delayq(&redis, &["offer", "mail", "--delay", "1h", "--id", "k", "d"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        // `none` removes a limit; offers off refuse.
        let out = delayq(&redis, &["limits", "mail", "--max-size", "none", "--max-payload", "none", "--offers", "off", "--takes", "on"]);
        assert_eq!(stdout(&out).trim(), "offers=off", "{out:?}");
        let out = delayq(&redis, &["offer", "mail", "--delay", "1h", "e"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("offers are switched off"), "{out:?}");
        let out = delayq(&redis, &["limits", "mail", "--max-size", "many"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
}

redis_test! {
    async fn a_concurrency_limit_is_set_read_back_and_removed_keeping_the_other_limits(redis) {
        let out = delayq(&redis, &["limits", "mail", "--max-size", "10", "--takes", "off", "--create"]);
        assert!(out.status.success(), "{out:?}");
        let out = delayq(&redis, &["limits", "mail", "--concurrency", "4"]);
        assert!(out.status.success(), "{out:?}");
        assert_eq!(stdout(&out).trim(), "max_size=10 takes=off concurrency=4", "{out:?}");
        assert!(
            stderr(&out).contains("Java's consumers neither wait for it nor count against it); 0 in flight now"),
            "{out:?}"
        );
        // Read back, by the CLI and by the library.
        let out = delayq(&redis, &["limits", "mail"]);
        assert_eq!(stdout(&out).trim(), "max_size=10 takes=off concurrency=4", "{out:?}");
        let client = redis.client().await;
        let queue = client.delayed_queue("mail", delayq::StringCodec).unwrap().without_transfer();
        assert_eq!(queue.limits().await.unwrap().concurrency_limit(), Some(4));
        // 0 would hold every take: a usage error naming what to do instead,
        // and nothing changes.
        let out = delayq(&redis, &["limits", "mail", "--concurrency", "0"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(stderr(&out).contains("use --takes off to stop takes"), "{out:?}");
        let out = delayq(&redis, &["limits", "mail", "--concurrency", "5000000000"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(stderr(&out).contains("too large"), "{out:?}");
        let out = delayq(&redis, &["limits", "mail", "--concurrency", "few"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert_eq!(queue.limits().await.unwrap().concurrency_limit(), Some(4));
        // Changing another limit keeps it; `none` removes only it.
        let out = delayq(&redis, &["limits", "mail", "--max-size", "20"]);
        assert_eq!(stdout(&out).trim(), "max_size=20 takes=off concurrency=4", "{out:?}");
        let out = delayq(&redis, &["limits", "mail", "--concurrency", "none"]);
        assert!(out.status.success(), "{out:?}");
        assert_eq!(stdout(&out).trim(), "max_size=20 takes=off", "{out:?}");
        assert!(!stderr(&out).contains("in flight across"), "no note for a removed limit: {out:?}");
        assert_eq!(queue.limits().await.unwrap().concurrency_limit(), None);
        client.shutdown().await;
    }
}

redis_test! {
    async fn inspect_and_stats_show_the_values_in_flight_against_the_concurrency_limit(redis) {
        let out = delayq(&redis, &["offer", "jobs", "--delay", "0", "a", "b", "c", "d"]);
        assert!(out.status.success(), "{out:?}");
        assert!(delayq(&redis, &["move-due", "jobs"]).status.success());
        let out = delayq(&redis, &["limits", "jobs", "--concurrency", "8"]);
        assert!(out.status.success(), "{out:?}");
        let client = redis.client().await;
        let consumer = client.reliable_queue("jobs", delayq::StringCodec).unwrap().without_transfer();
        // Three deliveries held unsettled: the lease set counts them.
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(consumer.take().await.unwrap());
        }

        let out = delayq(&redis, &["inspect", "jobs"]);
        assert!(out.status.success(), "{out:?}");
        assert!(
            stdout(&out).contains("in flight     3 (3/8 live against the concurrency limit)\n"),
            "{}",
            stdout(&out)
        );
        let doc = json_of(&delayq(&redis, &["inspect", "jobs", "--format", "json"]));
        assert_eq!((doc["in_flight"].clone(), doc["concurrency_limit"].clone()), (3.into(), 8.into()), "{doc}");
        let out = delayq(&redis, &["stats", "jobs"]);
        assert!(out.status.success(), "{out:?}");
        let row = stdout(&out).lines().find(|line| line.starts_with("jobs")).unwrap_or_default().to_owned();
        assert!(row.split_whitespace().any(|cell| cell == "3/8"), "{}", stdout(&out));
        let doc = json_of(&delayq(&redis, &["stats", "jobs", "--format", "json"]));
        assert_eq!(doc["queues"][0]["concurrency_limit"], 8, "{doc}");
        let out = delayq(&redis, &["list"]);
        let row = stdout(&out).lines().find(|line| line.starts_with("jobs")).unwrap_or_default().to_owned();
        assert!(row.split_whitespace().any(|cell| cell == "3/8"), "{}", stdout(&out));

        // At the limit: said so, when it is set and after.
        let out = delayq(&redis, &["limits", "jobs", "--concurrency", "3"]);
        assert!(stderr(&out).contains("3 in flight now: reached"), "{out:?}");
        let out = delayq(&redis, &["inspect", "jobs"]);
        assert!(
            stdout(&out).contains(
                "in flight     3 (3/3 live: concurrency limit reached, reliable takes and workers wait for room)\n"
            ),
            "{}",
            stdout(&out)
        );
        // Below what is in flight: over it, and how many must settle.
        let out = delayq(&redis, &["limits", "jobs", "--concurrency", "1"]);
        assert!(stderr(&out).contains("3 in flight now: over it by 2, none start until 3 settle"), "{out:?}");
        let out = delayq(&redis, &["inspect", "jobs"]);
        assert!(stdout(&out).contains("(3/1 live: over the concurrency limit by 2"), "{}", stdout(&out));

        // Without a limit: the count alone.
        assert!(delayq(&redis, &["limits", "jobs", "--concurrency", "none"]).status.success());
        let out = delayq(&redis, &["inspect", "jobs"]);
        assert!(stdout(&out).contains("in flight     3\n"), "{}", stdout(&out));
        let doc = json_of(&delayq(&redis, &["inspect", "jobs", "--format", "json"]));
        assert!(doc["concurrency_limit"].is_null(), "{doc}");
        for delivery in held {
            assert!(delivery.ack().await.unwrap());
        }
        client.shutdown().await;
    }
}

redis_test! {
    async fn the_concurrency_note_escapes_the_queue_name(redis) {
        let out = delayq(&redis, &["limits", EVIL_QUEUE, "--concurrency", "2", "--create"]);
        assert!(out.status.success(), "{out:?}");
        assert_escaped(&out);
        assert!(stderr(&out).contains(r"q\u{1b}]0;pwned\u{7}: at most 2 delayq deliveries"), "{out:?}");
        let out = delayq(&redis, &["inspect", EVIL_QUEUE]);
        assert_escaped(&out);
        assert!(stdout(&out).contains("in flight     0 (0/2 live against the concurrency limit)"), "{out:?}");
    }
}

redis_test! {
    async fn a_value_offered_again_within_its_window_exits_1_and_is_not_queued(redis) {
        let out = delayq(&redis, &["offer", "mails", "--delay", "1h", "--dedup-window", "10m", "--dedup-id", "m-1", "hello"]);
        assert!(out.status.success(), "{out:?}");
        let out = delayq(&redis, &["offer", "mails", "--delay", "1h", "--dedup-window", "10m", "--dedup-id", "m-1", "other"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("duplicate: \"other\""), "{out:?}");
        assert!(stderr(&out).contains("by id \"m-1\""), "{out:?}");
        // By payload (the default): the repeat within the call is the duplicate.
        let out = delayq(&redis, &["offer", "mails", "--delay", "1h", "--dedup-window", "10m", "a", "b", "a"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(stderr(&out).contains("offered 2 value(s)"), "{out:?}");
        assert!(stderr(&out).contains("1 duplicate(s)"), "{out:?}");
        let out = delayq(&redis, &["offer", "mails", "--delay", "1h", "--dedup-window", "10m", "--dedup-payload", "c"]);
        assert!(out.status.success(), "{out:?}");
        let raw = redis.raw().await;
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{mails}").await, 4);
        // One value per id; a flag without a window is a usage error.
        let out = delayq(&redis, &["offer", "mails", "--delay", "0", "--dedup-window", "1m", "--dedup-id", "x", "a", "b"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let out = delayq(&redis, &["offer", "mails", "--delay", "0", "--dedup-id", "x", "a"]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
}
