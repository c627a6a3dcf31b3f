//! Issue 33 item 11: what the `delayq` binary prints for people (tables by
//! terminal cells, counts, durations, URLs, errors and their hints, exit
//! statuses, --help and --version), run against a real Redis.

use std::process::{Command, Output};

use unicode_width::UnicodeWidthStr;

use crate::harness::{deadline, RedisServer};

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    delayq_at(&redis.url(), args)
}

fn delayq_at(url: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", url)
        .output()
        .expect("run delayq")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn ok(output: Output) -> Output {
    assert!(output.status.success(), "{output:?}");
    output
}

/// The terminal cell at which the `n`th blank-separated field of `line` ends.
fn field_end(line: &str, n: usize) -> usize {
    let mut fields = 0;
    let mut in_field = false;
    for (at, c) in line.char_indices() {
        if c == ' ' && in_field {
            fields += 1;
            if fields == n + 1 {
                return line[..at].width();
            }
        }
        in_field = c != ' ';
    }
    line.width()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_align_wide_names_by_terminal_cells_and_counts_by_their_last_digit() {
    deadline(async {
        let redis = RedisServer::start().await;
        let values: Vec<String> = (0..1_234).map(|i| format!("v{i}")).collect();
        let mut offer = vec!["offer", "📦x", "--delay", "1h"];
        offer.extend(values.iter().map(String::as_str));
        ok(delayq(&redis, &offer));
        ok(delayq(&redis, &["offer", "订单", "--delay", "1h", "one"]));
        ok(delayq(&redis, &["offer", "abcd", "--delay", "1h", "a", "b"]));
        let out = ok(delayq(&redis, &["stats", "订单", "📦x", "abcd"]));
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert!(lines[0].starts_with("QUEUE"), "{text}");
        // PENDING is the second field: every count ends under the header's end.
        let end = field_end(lines[0], 1);
        for line in &lines[1..] {
            assert_eq!(field_end(line, 1), end, "column PENDING misaligned:\n{text}");
        }
        assert!(lines[2].contains(" 1,234 "), "thousands separated:\n{text}");
        // Machines read the JSON: a number, unchanged.
        let out = ok(delayq(&redis, &["stats", "📦x", "--format", "json"]));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["queues"][0]["pending"], 1_234, "{json}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offers_say_when_values_are_due_as_people_write_it() {
    deadline(async {
        let redis = RedisServer::start().await;
        let out = ok(delayq(&redis, &["offer", "q", "--delay", "3d", "x"]));
        assert!(stderr(&out).contains("(due in 3d)"), "not 259200s: {out:?}");
        let out = ok(delayq(&redis, &["offer", "q", "--delay", "0", "y"]));
        assert!(stderr(&out).contains("(due now)"), "not 0ns: {out:?}");
        let out = ok(delayq(&redis, &["offer", "q", "--delay", "90m", "--id", "a", "z"]));
        assert!(stderr(&out).contains("(due in 1h30m)"), "{out:?}");
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), "one\ntwo\n").unwrap();
        let path = file.path().to_str().unwrap();
        let out = ok(delayq(&redis, &["offer", "q", "--delay", "2h", "--from-file", path]));
        assert!(stderr(&out).contains("(due in 2h)"), "{out:?}");
        let text = stderr(&out) + &stderr(&ok(delayq(&redis, &["offer", "q", "--delay", "0", "w"])));
        assert!(!text.contains("ns)") && !text.contains("00s"), "{text}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_dry_run_succeeds_and_deletes_nothing() {
    deadline(async {
        let redis = RedisServer::start().await;
        ok(delayq(&redis, &["offer", "jobs", "--delay", "1h", "a", "b"]));
        let out = delayq(&redis, &["purge", "jobs"]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert!(stderr(&out).contains("would delete 2 pending element(s)"), "{out:?}");
        let raw = redis.raw().await;
        assert_eq!(
            raw.zcard("redisson_delay_queue_timeout:{jobs}").await,
            2,
            "nothing deleted"
        );
    })
    .await;
}
