//! `delayq offer --ttl`: a value no consumer took within its time to live
//! is not delivered: dead-lettered with reason `expired`, or dropped with
//! `--on-expiry drop`, and counted.

use std::process::Output;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq_test_support::redis_test;

use crate::cli::{assert_offer_refused, delayq, offered, stderr};
use crate::run;

fn lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

redis_test! {
    async fn an_offer_with_a_ttl_is_dead_lettered_or_dropped_once_it_passed(redis, raw) {
        let said = offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--ttl", "300ms", "stale"]));
        assert!(said.contains("offered 1 value(s) to jobs at priority 0 with a TTL of 300ms (then dead-lettered)"), "{said}");
        let said = offered(delayq(
            &redis,
            &["offer", "jobs", "--delay", "0", "--ttl", "300ms", "--on-expiry", "drop", "gone"],
        ));
        assert!(said.contains("(then dropped)"), "{said}");
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "--ttl", "10m", "--priority", "2", "fresh"]));
        offered(delayq(&redis, &["offer", "jobs", "--delay", "0", "plain"]));
        // Java's keys hold the plain value only.
        let java_sees = raw.zcard("redisson_delay_queue_timeout:{jobs}").await + raw.llen("jobs").await;
        assert_eq!(java_sees, 1);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let out = run::delayq(&redis, &["take", "jobs", "-n", "2", "--timeout", "10s"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(lines(&out), ["fresh", "plain"]);
        let dead = raw.lrange("delayq_dead_letter:{jobs}").await;
        assert_eq!(dead.len(), 1);
        assert_eq!(&dead[0][..], b"stale");
        let expired = raw.cmd("HGET", vec!["delayq_stats:{jobs}".into(), "expired".into()]).await;
        assert_eq!(expired.as_string().as_deref(), Some("2"), "{expired:?}");
    }
}

redis_test! {
    async fn a_ttl_the_offer_cannot_carry_or_not_longer_than_the_delay_is_refused(redis, raw) {
        let file = std::env::temp_dir().join(format!("delayq-ttl-{}.txt", std::process::id()));
        std::fs::write(&file, "a\nb\n").unwrap();
        let file = file.to_str().unwrap().to_owned();
        let refused: [(&[&str], &str); 4] = [
            (&["--ttl", "1m", "--id", "job-1", "x"], "--id"),
            (&["--ttl", "1m", "--dedup-window", "5m", "x"], "--dedup-window"),
            (&["--ttl", "1m", "--from-file", &file], "--from-file"),
            (&["--on-expiry", "drop", "x"], "--ttl"),
        ];
        for (extra, named) in refused {
            assert_offer_refused(&redis, extra, &[named]);
        }
        let _ = std::fs::remove_file(&file);
        for (delay, ttl) in [("5s", "5s"), ("10s", "5s"), ("0", "0")] {
            let out = delayq(&redis, &["offer", "q", "--delay", delay, "--ttl", ttl, "x"]);
            assert!(!out.status.success(), "--delay {delay} --ttl {ttl}");
            assert!(stderr(&out).contains("TTL"), "{}", stderr(&out));
        }
        // Nothing was written anywhere.
        assert_eq!(raw.cmd("DBSIZE", vec![]).await, Value::Integer(0));
    }
}
