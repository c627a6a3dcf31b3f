//! `DelayedQueue::recode`: a codec migration rewrites pending payloads in
//! place, keeping due times, places, layouts and ids, and loses nothing.

use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use delayq::fred::types::Value;

use delayq::format::{unpack, Format};
use delayq::{BytesCodec, StringCodec};

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{now_ms, redis_test, settled};

const HOUR: Duration = Duration::from_secs(3600);

/// Upper-cases an ASCII payload; refuses payloads starting with `!`; leaves
/// upper-case ones (the "target codec").
fn upper(payload: &[u8]) -> Result<Option<Bytes>, delayq::error::BoxError> {
    if payload.first() == Some(&b'!') {
        return Err("not in the old codec".into());
    }
    if payload.iter().all(|b| !b.is_ascii_lowercase()) {
        return Ok(None);
    }
    Ok(Some(Bytes::from(payload.to_ascii_uppercase())))
}

redis_test! {
    async fn recode_rewrites_payloads_in_place_keeping_scores_places_layouts_and_ids(client, raw) {
        let q = client.delayed_queue("recode", StringCodec).unwrap().without_transfer();
        let legacy = q.clone().with_format(Format::Legacy);
        q.offer(&"a".to_string(), HOUR).await.unwrap();
        legacy.offer(&"b".to_string(), HOUR * 2).await.unwrap();
        q.offer_with_id("job-1", &"same".to_string(), HOUR * 3).await.unwrap();
        // Equal payloads of different jobs: both rewritten, each keeps its id.
        q.offer_with_id("job-2", &"same".to_string(), HOUR * 4).await.unwrap();
        q.offer(&"!bad".to_string(), HOUR * 5).await.unwrap();
        q.offer(&"DONE".to_string(), HOUR * 6).await.unwrap();
        raw.seed("recode", b"not a packed element", now_ms() + 3_600_000).await;
        // A ready value is not the recode's business.
        q.destination().offer(&"ready".to_string()).await.unwrap();
        let before = raw.zrange("redisson_delay_queue_timeout:{recode}").await;

        let report = q.recode(upper, 2).await.unwrap();

        assert_eq!(report.converted, 4, "{report:?}");
        assert_eq!(
            (report.already, report.undecodable, report.malformed),
            (1, 1, 1),
            "{report:?}"
        );
        assert!(
            report.first_error.as_deref().unwrap().contains("not in the old codec"),
            "{report:?}"
        );
        let after = raw.zrange("redisson_delay_queue_timeout:{recode}").await;
        assert_eq!(after.len(), before.len());
        let list = raw.lrange("redisson_delay_queue:{recode}").await;
        let payloads: Vec<Vec<u8>> = list
            .iter()
            .map(|e| unpack(e).map(|u| u.payload.to_vec()).unwrap_or_else(|_| e.to_vec()))
            .collect();
        assert_eq!(
            payloads,
            [
                &b"A"[..],
                b"B",
                b"SAME",
                b"SAME",
                b"!bad",
                b"DONE",
                b"not a packed element"
            ]
        );
        // Same scores, same layouts and id bytes, element by element.
        for (old, new) in before.iter().zip(&after) {
            assert_eq!(old.1, new.1);
            if let (Ok(o), Ok(n)) = (unpack(&old.0), unpack(&new.0)) {
                assert_eq!((o.format(), o.id.to_bytes()), (n.format(), n.id.to_bytes()));
            }
        }
        assert_eq!(unpack(&list[1]).unwrap().format(), Format::Legacy);
        // The ids still find (and cancel) their elements.
        assert_eq!(q.get("job-1").await.unwrap().unwrap().value, "SAME");
        assert!(q.cancel("job-2").await.unwrap());
        assert_eq!(q.len().await.unwrap(), 6);
        assert_eq!(q.destination().peek().await.unwrap().as_deref(), Some("ready"));
    }
}

redis_test! {
    async fn recode_leaves_an_element_that_moved_after_the_read_and_catches_the_rest_next_pass(redis, client) {
        let q = client
            .delayed_queue("recode-moved", StringCodec)
            .unwrap()
            .without_transfer();
        for v in ["a", "b", "c", "d"] {
            q.offer(&v.to_string(), HOUR).await.unwrap();
        }
        let first = redis.raw().await.lrange("redisson_delay_queue:{recode-moved}").await[0].clone();
        let port = redis.port().to_string();
        let mut calls = 0;
        // Between the read and the script, "Java" transfers the first element.
        let report = q
            .recode(
                |payload| {
                    calls += 1;
                    if calls == 2 {
                        java_transfers(&port, "recode-moved", &first);
                    }
                    upper(payload)
                },
                100,
            )
            .await
            .unwrap();
        assert!(report.passes >= 2, "{report:?}");
        assert_eq!(report.converted, 3, "{report:?}");
        let mut left = q.read_all().await.unwrap();
        left.sort();
        assert_eq!(left, ["B", "C", "D"]);
    }
}

redis_test! {
    async fn recode_whose_reply_is_lost_reports_its_first_run(proxy, client, raw) {
        let q = client
            .delayed_queue("recode-lost", StringCodec)
            .unwrap()
            .without_transfer();
        for v in ["a", "b", "c"] {
            q.offer(&v.to_string(), HOUR).await.unwrap();
        }
        // Warms the script (its first call may be a NOSCRIPT answer).
        let warm = q.recode(|_| Ok(None), 100).await.unwrap();
        assert_eq!(warm.already, 3);
        let noop = q.recode(|p| Ok(Some(Bytes::from(p.to_vec()))), 100).await.unwrap();
        assert_eq!(noop.converted, 0, "an unchanged payload is not rewritten");
        // Loads recode.lua by running it on nothing.
        let other = client
            .delayed_queue("recode-warm", StringCodec)
            .unwrap()
            .without_transfer();
        other.offer(&"x".to_string(), HOUR).await.unwrap();
        other.recode(upper, 100).await.unwrap();
        settled(&raw, "recode-lost").await;
        let sha = delayq_test_support::script_sha1(include_str!("../../lua/recode.lua"));
        proxy.arm(Fault::LoseReply, sha);
        let report = q.recode(upper, 100).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        // Run again, the script would find its elements changed: "moved".
        assert_eq!((report.converted, report.moved), (3, 0), "{report:?}");
        assert_eq!(q.read_all().await.unwrap(), ["A", "B", "C"]);
    }
}

redis_test! {
    scale async fn recode_rewrites_a_hundred_thousand_elements_and_large_payloads_in_capped_scripts(client, raw) {
        let q: delayq::DelayedQueue<Bytes> = client
            .delayed_queue("recode-big", BytesCodec)
            .unwrap()
            .without_transfer();
        let small = (0..100_000u32).map(|i| (Bytes::from(format!("v{i}")), HOUR));
        q.offer_all(small).await.unwrap();
        // 40 payloads of 40 KB: 1.6 MB, more than one script may carry.
        let large: Vec<(Bytes, Duration)> = (0..40u8)
            .map(|i| (Bytes::from(vec![b'a' + (i % 26); 40 * 1024]), HOUR * 2))
            .collect();
        q.offer_all(large).await.unwrap();
        let calls_before = raw.command_calls("evalsha").await;

        let report = q.recode(upper, 1_000).await.unwrap();

        assert_eq!(report.converted, 100_040, "{report:?}");
        assert_eq!(report.undecodable + report.malformed + report.moved, 0, "{report:?}");
        // At least one script per 1,000 elements, and the 1.6 MB of large
        // payloads in more than one.
        let scripts = raw.command_calls("evalsha").await - calls_before;
        assert!(scripts >= 100 + 2, "{scripts} scripts");
        let list = raw.lrange("redisson_delay_queue:{recode-big}").await;
        assert_eq!(list.len(), 100_040);
        assert_eq!(unpack(&list[99_999]).unwrap().payload, b"V99999");
        assert!(unpack(&list[100_039])
            .unwrap()
            .payload
            .iter()
            .all(|b| b.is_ascii_uppercase()));
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{recode-big}").await, 100_040);
    }
}

redis_test! {
    /// a transfer that removes an element BEFORE the next
    /// slice's LRANGE (here: while a slice whose values are all "already" in
    /// the target codec is read, so no script runs for it) shifts the list left;
    /// the next slice starts past an element that was never read. Nothing
    /// counts it as moved, so the migration ends after one pass, reports
    /// success, and leaves that element in the old codec.
    async fn recode_reaches_elements_that_shift_left_between_slices(redis, client) {
        let q = client
            .delayed_queue("recode-shift", StringCodec)
            .unwrap()
            .without_transfer();
        for v in ["A", "B", "c", "d", "e"] {
            q.offer(&v.to_string(), HOUR).await.unwrap();
        }
        let first = redis.raw().await.lrange("redisson_delay_queue:{recode-shift}").await[0].clone();
        let port = redis.port().to_string();
        let mut calls = 0;
        let report = q
            .recode(
                |payload| {
                    calls += 1;
                    if calls == 1 {
                        java_transfers(&port, "recode-shift", &first);
                    }
                    upper(payload)
                },
                2,
            )
            .await
            .unwrap();
        let mut left = q.read_all().await.unwrap();
        left.sort();
        assert_eq!(left, ["B", "C", "D", "E"], "{report:?}");
    }
}

redis_test! {
    /// the client reads `batch` elements per LRANGE but one
    /// script takes only 1 MiB of them; the rest are read AGAIN by the next
    /// LRANGE. With large payloads the reads grow with n²/k: 100 elements of
    /// 100 KB (a 10 MB queue) make Redis send ~80 MB (3 GB for 300 x 200 KB).
    /// Each element should cross the wire about once.
    async fn recode_reads_each_large_element_about_once(client, raw) {
        let q = client
            .delayed_queue("recode-fat", BytesCodec)
            .unwrap()
            .without_transfer();
        let payload = Bytes::from(vec![b'a'; 100_000]);
        for _ in 0..100 {
            q.offer(&payload, HOUR).await.unwrap();
        }
        let sent = |info: Value| -> u64 {
            info.as_string()
                .unwrap()
                .lines()
                .find_map(|l| l.strip_prefix("total_net_output_bytes:"))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let before = sent(raw.cmd("INFO", vec!["stats".into()]).await);
        let report = q.recode(upper, 1_000).await.unwrap();
        let after = sent(raw.cmd("INFO", vec!["stats".into()]).await);
        assert_eq!(report.converted, 100, "{report:?}");
        let queue_bytes = 100 * 100_000;
        assert!(
            after - before < 3 * queue_bytes,
            "Redis sent {} bytes to recode a {queue_bytes}-byte queue",
            after - before
        );
    }
}

/// What Redisson's transfer does to one element, from another connection
/// while `recode` holds its own: LREM from the pending list, ZREM from the
/// timeout set (`redis-cli -x`: the binary element from stdin).
fn java_transfers(port: &str, queue: &str, element: &[u8]) {
    for args in [
        vec![
            "LREM".to_owned(),
            format!("redisson_delay_queue:{{{queue}}}"),
            "1".to_owned(),
        ],
        vec!["ZREM".to_owned(), format!("redisson_delay_queue_timeout:{{{queue}}}")],
    ] {
        let mut child = std::process::Command::new("redis-cli")
            .args(["-h", "127.0.0.1", "-p", port, "-x"])
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(element).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    }
}
