//! `delayq offer --priority`: values above the default priority live in
//! delayq's own keys, and `delayq take` takes the highest level first.

use std::time::{Duration, Instant};

use delayq::fred::types::Value;
use delayq_test_support::redis_test;

use crate::cli::{delayq, offered, stderr};
use crate::run;

redis_test! {
    async fn take_returns_the_highest_priority_first_and_a_delayed_one_when_due(redis, raw) {
        // The default priority, without the flag and with it.
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "low"]));
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--priority", "0", "zero"]));
        let said = offered(delayq(
            &redis,
            &["offer", "jobs", "--delay", "0", "--priority", "9", "urgent", "urgent-2"],
        ));
        assert!(said.contains("offered 2 value(s) to jobs at priority 9"), "{said}");
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--priority", "5", "mid"]));
        // Offered last among the 9s: it comes after them whether its place
        // among equals is its offer or its due time.
        let delay = Duration::from_millis(1200);
        let delayed_at = Instant::now();
        offered(delayq(
            &redis,
            &["offer", "jobs", "--delay", "1200ms", "--priority", "9", "urgent-later"],
        ));

        // Java's keys hold the two default-priority values only; the others
        // are in delayq's priority keys, the delayed one by its due time.
        let java_sees = raw.zcard("redisson_delay_queue_timeout:{jobs}").await + raw.llen("jobs").await;
        assert_eq!(java_sees, 2);
        let ready = raw.zcard("delayq_priority_ready:{jobs}").await;
        let delayed = raw.zcard("delayq_priority_delayed:{jobs}").await;
        assert_eq!(ready + delayed, 4, "ready {ready}, delayed {delayed}");
        assert!(delayed >= 1, "the delayed 9 waits in the delayed set");
        let marker = raw.cmd("EXISTS", vec!["delayq_priority:{jobs}".into()]).await;
        assert_eq!(marker, Value::Integer(1));

        // `inspect` says how many of its counts have a priority.
        let shown = run::delayq(&redis, &["inspect", "jobs"]).await;
        assert!(shown.status.success(), "{}", stderr(&shown));
        let table = String::from_utf8_lossy(&shown.stdout).into_owned();
        let line = format!("priorities    {delayed} pending and {ready} ready of these have a priority");
        assert!(table.contains(&line), "{table}");
        let json = run::delayq(&redis, &["inspect", "jobs", "--format", "json"]).await;
        let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(json["priority_ready"], ready as u64, "{json}");
        assert_eq!(json["priority_pending"], delayed as u64, "{json}");

        // Take only once the delayed one is due: it must come with its level.
        tokio::time::sleep(delay.saturating_sub(delayed_at.elapsed()) + Duration::from_millis(300)).await;
        let out = run::delayq(&redis, &["take", "jobs", "-n", "6", "--timeout", "10s"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let got: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect();
        assert_eq!(got, ["urgent", "urgent-2", "urgent-later", "mid", "low", "zero"]);

        // Everything was taken, from every key.
        for key in ["delayq_priority_ready:{jobs}", "delayq_priority_delayed:{jobs}", "redisson_delay_queue_timeout:{jobs}"] {
            assert_eq!(raw.zcard(key).await, 0, "{key}");
        }
        assert_eq!(raw.llen("jobs").await, 0);
    }
}

redis_test! {
    async fn a_priority_outside_0_to_9_or_with_an_offer_that_cannot_carry_one_is_refused(redis, raw) {
        for bad in ["10", "-1", "high", "255", "256"] {
            let out = delayq(&redis, &["offer", "q", "--delay", "0", "--priority", bad, "x"]);
            assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
            let said = stderr(&out);
            assert!(
                said.contains("--priority") && said.contains("from 0 (the default, lowest) to 9 (highest)"),
                "{bad}: {said}"
            );
        }
        let file = std::env::temp_dir().join(format!("delayq-priority-{}.txt", std::process::id()));
        std::fs::write(&file, "a\nb\n").unwrap();
        let file = file.to_str().unwrap().to_owned();
        let refused: [(&[&str], &str); 4] = [
            (&["--id", "job-1", "x"], "--id"),
            (&["--id", "job-1", "--replace", "x"], "--id"),
            (&["--dedup-window", "5m", "x"], "--dedup-window"),
            (&["--from-file", &file], "--from-file"),
        ];
        for (extra, named) in refused {
            let mut args = vec!["offer", "q", "--delay", "0", "--priority", "3"];
            args.extend(extra);
            let out = delayq(&redis, &args);
            assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
            let said = stderr(&out);
            assert!(said.contains("--priority") && said.contains(named), "{extra:?}: {said}");
        }
        let _ = std::fs::remove_file(&file);
        // Nothing was written anywhere.
        assert_eq!(raw.cmd("DBSIZE", vec![]).await, Value::Integer(0));
    }
}
