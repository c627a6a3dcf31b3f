//! `delayq offer --header K=V`: headers offered beside a value come back
//! with it from `take` and in the dead-letter listing, escaped for the
//! terminal; a malformed `--header` is a usage error.

use std::process::Output;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq_test_support::redis_test;
use serde_json::json;

use crate::cli::{assert_offer_refused, delayq, offered, stderr};
use crate::run;

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "{}", stderr(output));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// One JSON document per line of stdout.
fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    stdout(output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

redis_test! {
    async fn headers_offered_come_back_with_take_json_and_table(redis, raw) {
        let said = offered(delayq(
            &redis,
            &["offer", "jobs", "--delay", "0", "--header", "tenant=acme", "--header", "trace=a=b", "traced"],
        ));
        assert!(said.contains("offered 1 value(s) to jobs at priority 0 with 2 header(s)"), "{said}");
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "plain"]));
        // Java's keys hold the plain value only.
        let java_sees = raw.zcard("redisson_delay_queue_timeout:{jobs}").await + raw.llen("jobs").await;
        assert_eq!(java_sees, 1);

        // One shape for every value: headers `{}` for one offered without.
        let out = run::delayq(&redis, &["take", "jobs", "-n", "2", "--timeout", "10s", "--format", "json"]).await;
        let mut got = json_lines(&out);
        got.sort_by_key(|doc| doc["value"].as_str().map(str::to_owned));
        assert_eq!(
            got,
            [
                json!({"value": "plain", "headers": {}}),
                json!({"value": "traced", "headers": {"tenant": "acme", "trace": "a=b"}}),
            ]
        );

        // The table: the value, then its headers in the compact form.
        offered(delayq(
            &redis,
            &["offer", "jobs", "--delay", "0", "--header", "b=2", "--header", "a=1", "--ttl", "10m", "v"],
        ));
        let out = run::delayq(&redis, &["take", "jobs", "--timeout", "10s"]).await;
        assert_eq!(stdout(&out), "v [a=1, b=2]\n");
        // With --codec auto: the codec too, in both formats.
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--header", "k=v", "w"]));
        let out = run::delayq(&redis, &["take", "jobs", "--timeout", "10s", "--codec", "auto", "--format", "json"]).await;
        let got = json_lines(&out);
        assert_eq!(got.len(), 1);
        assert_eq!((&got[0]["value"], &got[0]["headers"]), (&json!("w"), &json!({"k": "v"})));
        assert!(got[0]["codec"].is_string(), "{}", got[0]);
    }
}

redis_test! {
    async fn headers_malformed_or_past_the_limits_are_refused_and_nothing_is_written(redis, raw) {
        let file = std::env::temp_dir().join(format!("delayq-headers-{}.txt", std::process::id()));
        std::fs::write(&file, "a\nb\n").unwrap();
        let file = file.to_str().unwrap().to_owned();
        // Usage errors (exit 2) that name what was wrong.
        let refused: [(&[&str], &[&str]); 6] = [
            (&["--header", "novalue", "x"], &["--header", "novalue", "no `=`"]),
            (&["--header", "=v", "x"], &["--header", "empty key"]),
            (&["--header", "k=1", "--header", "k=2", "x"], &["--header", "\"k\"", "twice"]),
            (&["--header", "k=v", "--id", "job-1", "x"], &["--id"]),
            (&["--header", "k=v", "--dedup-window", "5m", "x"], &["--dedup-window"]),
            (&["--header", "k=v", "--from-file", &file], &["--from-file"]),
        ];
        for (extra, named) in refused {
            assert_offer_refused(&redis, extra, named);
        }
        let _ = std::fs::remove_file(&file);

        // Past the library's limits: its message, for every value given.
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        let mut args = vec!["offer", "q", "--delay", "0"];
        for header in &many {
            args.extend(["--header", header.as_str()]);
        }
        args.extend(["x", "y"]);
        let out = delayq(&redis, &args);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("at most 32 headers, not 33"), "{}", stderr(&out));
        let big = format!("k={}", "x".repeat(9000));
        let out = delayq(&redis, &["offer", "q", "--delay", "0", "--header", &big, "x"]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("headers take at most 8192 bytes"), "{}", stderr(&out));

        // Nothing was written anywhere.
        assert_eq!(raw.cmd("DBSIZE", vec![]).await, Value::Integer(0));
    }
}

redis_test! {
    async fn headers_of_an_expired_value_show_in_the_dead_letter_listing_and_survive_a_requeue(redis) {
        offered(delayq(
            &redis,
            &["offer", "jobs", "--delay", "0", "--ttl", "300ms", "--header", "tenant=acme", "--header", "source=cli", "stale"],
        ));
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--ttl", "300ms", "bare"]));
        tokio::time::sleep(Duration::from_millis(500)).await;
        // The take meets them expired: dead-lettered, nothing taken.
        let out = run::delayq(&redis, &["take", "jobs", "--timeout", "1s"]).await;
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

        let out = delayq(&redis, &["dead-letter", "list", "jobs", "--format", "json"]);
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let values = doc["values"].as_array().unwrap();
        assert_eq!(values.len(), 2, "{doc}");
        let stale = values.iter().find(|v| v["value"] == "stale").unwrap_or_else(|| panic!("{doc}"));
        assert_eq!(stale["headers"], json!({"source": "cli", "tenant": "acme"}));
        assert_eq!(stale["reason"], "expired");
        let bare = values.iter().find(|v| v["value"] == "bare").unwrap_or_else(|| panic!("{doc}"));
        assert_eq!(bare["headers"], json!({}));

        let table = stdout(&delayq(&redis, &["dead-letter", "list", "jobs"]));
        assert!(table.lines().next().unwrap().contains("HEADERS"), "{table}");
        let line = table.lines().find(|l| l.contains("stale")).unwrap_or_else(|| panic!("{table}"));
        assert!(line.contains("[source=cli, tenant=acme]"), "{line}");
        let line = table.lines().find(|l| l.contains("bare")).unwrap_or_else(|| panic!("{table}"));
        assert!(!line.contains('['), "{line}");

        // A requeue prints them, and offers the value again with them.
        let moved = stdout(&delayq(&redis, &["dead-letter", "requeue", "jobs", "--all"]));
        assert!(moved.contains("stale [source=cli, tenant=acme]"), "{moved}");
        let out = run::delayq(&redis, &["take", "jobs", "-n", "2", "--timeout", "10s", "--format", "json"]).await;
        let got = json_lines(&out);
        let stale = got.iter().find(|v| v["value"] == "stale").unwrap_or_else(|| panic!("{got:?}"));
        assert_eq!(stale["headers"], json!({"source": "cli", "tenant": "acme"}));
    }
}

redis_test! {
    async fn headers_with_terminal_escapes_are_escaped_in_table_output(redis) {
        let evil = "color=red\u{1b}[31m";
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--header", evil, "--header", "k\u{1b}]0;x\u{7}=v", "v"]));
        let out = run::delayq(&redis, &["take", "jobs", "--timeout", "10s"]).await;
        let text = stdout(&out);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
        assert_eq!(text, "v [color=red\\u{1b}[31m, k\\u{1b}]0;x\\u{7}=v]\n");

        // JSON: the exact text, as JSON escapes.
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--header", evil, "v"]));
        let out = run::delayq(&redis, &["take", "jobs", "--timeout", "10s", "--format", "json"]).await;
        assert!(!stdout(&out).contains('\u{1b}'), "{out:?}");
        assert_eq!(json_lines(&out)[0]["headers"]["color"], "red\u{1b}[31m");

        // The dead-letter table too.
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--ttl", "300ms", "--header", evil, "gone"]));
        tokio::time::sleep(Duration::from_millis(500)).await;
        let _ = run::delayq(&redis, &["take", "jobs", "--timeout", "1s"]).await;
        let table = stdout(&delayq(&redis, &["dead-letter", "list", "jobs"]));
        assert!(!table.contains('\u{1b}'), "{table:?}");
        assert!(table.contains("[color=red\\u{1b}[31m]"), "{table}");
    }
}
