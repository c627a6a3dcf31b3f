//! Both packed-element formats, mixed in one queue, through every read path,
//! and malformed elements that must not stall anything.

use std::time::Duration;

use bytes::Bytes;
use delayq::format::Format as F;
use delayq::format::{pack, Format};
use delayq::fred::prelude::*;
use delayq::StringCodec;

use delayq_test_support::{deadline, now_ms, redis_test, unhex, RedisServer};

fn s(v: &str) -> String {
    v.to_owned()
}

const HOUR_MS: i64 = 3_600_000;

/// Seeds a queue with modern and legacy elements alternating, as a fleet half
/// way through an upgrade across Redisson 3.21.1 leaves it.
async fn seed_mixed(redis: &RedisServer, queue: &str, values: &[&str], due: i64) {
    let raw = redis.raw().await;
    for (i, v) in values.iter().enumerate() {
        let format = if i % 2 == 0 { Format::Legacy } else { Format::Modern };
        raw.seed(queue, &pack(format, v.as_bytes()), due + i as i64).await;
    }
}

redis_test! {
    async fn mixed_formats_read_remove_and_poll_in_one_queue(redis) {
        seed_mixed(
            &redis,
            "mixed",
            &["l0", "m1", "l2", "m3", "l4", "m5"],
            now_ms() + HOUR_MS,
        )
        .await;
        let client = redis.client().await;
        let q = client.delayed_queue("mixed", StringCodec).unwrap();
        assert_eq!(q.len().await.unwrap(), 6);
        assert_eq!(
            q.read_all().await.unwrap(),
            ["l0", "m1", "l2", "m3", "l4", "m5"].map(s).to_vec()
        );
        assert_eq!(q.peek().await.unwrap(), Some(s("l0")));
        assert!(q.contains(&s("l2")).await.unwrap());
        assert!(q.contains_all([s("m1"), s("l4")]).await.unwrap());
        assert!(q.remove(&s("m3")).await.unwrap());
        assert_eq!(q.remove_first().await.unwrap(), Some(s("l0")));
        assert_eq!(q.poll_last_and_offer_first_to("{mixed}x").await.unwrap(), Some(s("m5")));
        assert_eq!(q.read_all().await.unwrap(), ["m1", "l2", "l4"].map(s).to_vec());
        // New offers in either format join the same queue.
        q.offer(&s("new-m"), Duration::from_secs(3600)).await.unwrap();
        let legacy = client
            .delayed_queue("mixed", StringCodec)
            .unwrap()
            .with_format(F::Legacy);
        legacy.offer(&s("new-l"), Duration::from_secs(3600)).await.unwrap();
        assert_eq!(
            q.read_all().await.unwrap(),
            ["m1", "l2", "l4", "new-m", "new-l"].map(s).to_vec()
        );
        assert_eq!(q.retain_all([s("l2"), s("new-l")]).await.unwrap(), 3);
        assert_eq!(q.read_all().await.unwrap(), ["l2", "new-l"].map(s).to_vec());
    }
}

redis_test! {
    async fn mixed_formats_transfer_in_due_order_without_stalling(redis) {
        let values = ["a", "b", "c", "d", "e", "f", "g", "h"];
        seed_mixed(&redis, "mixed", &values, now_ms() - 1000).await;
        let client = redis.client().await;
        let q = client.delayed_queue("mixed", StringCodec).unwrap();
        let dest = q.destination();
        for v in values {
            assert_eq!(dest.take_timeout(Duration::from_secs(5)).await.unwrap(), Some(s(v)));
        }
        assert_eq!(q.len().await.unwrap(), 0);
    }
}

redis_test! {
    async fn malformed_elements_are_quarantined_and_good_ones_keep_flowing(redis, raw) {
        let due = now_ms() + HOUR_MS;
        let good = pack(Format::Modern, b"good-1");
        let mut truncated = pack(Format::Modern, b"truncated").to_vec();
        truncated.pop();
        let mut wrong_len = pack(Format::Legacy, b"wrong-length").to_vec();
        wrong_len[8] = 0x7f;
        let junk = b"not a packed element".to_vec();
        raw.seed("q", &good, due).await;
        raw.seed("q", &truncated, due + 1).await;
        raw.seed("q", &wrong_len, due + 2).await;
        raw.seed("q", &junk, due + 3).await;
        raw.seed("q", &pack(Format::Legacy, b"good-2"), due + 4).await;

        let client = redis.client().await;
        let q = client.delayed_queue("q", StringCodec).unwrap();
        // Read paths skip what they cannot unpack, and remove nothing.
        assert_eq!(q.read_all().await.unwrap(), vec![s("good-1"), s("good-2")]);
        assert_eq!(q.len().await.unwrap(), 5);
        // Now everything comes due at once (scores rewritten as a test of Java's would).
        for (member, score) in raw.zrange(q.keys().timeout()).await {
            let _: i64 = raw
                .client
                .zadd(
                    q.keys().timeout(),
                    Some(SetOptions::XX),
                    None,
                    false,
                    false,
                    ((score - HOUR_MS - 1000) as f64, member),
                )
                .await
                .unwrap();
        }
        let _: i64 = raw
            .client
            .publish(q.keys().channel(), (due - HOUR_MS - 1000).to_string())
            .await
            .unwrap();
        let dest = q.destination();
        assert_eq!(
            dest.take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("good-1"))
        );
        assert_eq!(
            dest.take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("good-2"))
        );
        let quarantine = raw.lrange(q.keys().quarantine()).await;
        assert_eq!(
            quarantine,
            vec![Bytes::from(truncated), Bytes::from(wrong_len), Bytes::from(junk)]
        );
        assert_eq!(q.len().await.unwrap(), 0);
        assert_eq!(raw.zcard(q.keys().timeout()).await, 0);
        // Counted when the scheduler reads the run's reply, which can come
        // after a take already has the value the run moved (a loaded machine).
        delayq_test_support::eventually(Duration::from_secs(10), "3 quarantined in the stats", || async {
            client.stats().quarantined == 3
        })
        .await;
        assert_eq!(client.stats().quarantined, 3);
    }
}

redis_test! {
    async fn poll_quarantines_a_malformed_head_and_returns_the_next_value(redis, raw) {
        let later = now_ms() + HOUR_MS;
        raw.seed("q", b"garbage", later).await;
        raw.seed("q", &pack(Format::Modern, b"value"), later).await;
        let client = redis.client().await;
        let q = client.delayed_queue("q", StringCodec).unwrap();
        assert_eq!(q.peek().await.unwrap(), Some(s("value")));
        assert_eq!(q.remove_first().await.unwrap(), Some(s("value")));
        assert_eq!(
            raw.lrange(q.keys().quarantine()).await,
            vec![Bytes::from_static(b"garbage")]
        );
        assert_eq!(raw.zcard(q.keys().timeout()).await, 0);
    }
}

redis_test! {
    async fn captured_redisson_elements_of_both_formats_transfer_to_their_payloads(redis, raw) {
        let due = now_ms() - 10;
        // Redisson 4.7.0 (modern) "hello" and 3.21.0 (legacy) LongCodec "42", as captured.
        raw.seed("q", &unhex("0850552cd6413e20b4050000000000000068656c6c6f"), due)
            .await;
        raw.seed("q", &unhex("715e4a1a55f6c4c302000000000000003432"), due + 1)
            .await;
        let client = redis.client().await;
        let _q = client.delayed_queue("q", StringCodec).unwrap();
        let dest = client.blocking_queue("q", StringCodec).unwrap();
        assert_eq!(
            dest.take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("hello"))
        );
        assert_eq!(dest.take_timeout(Duration::from_secs(5)).await.unwrap(), Some(s("42")));
    }
}

/// Captured elements: Redisson 3.21.0 (legacy) and 4.7.0 (modern), LongCodec / StringCodec.
const CAPTURED: [(&str, &str); 4] = [
    ("715e4a1a55f6c4c302000000000000003432", "42"),
    ("0850552cd6413e20b4050000000000000068656c6c6f", "hello"),
    ("2f11ae55e4b1da4302000000000000002d37", "-7"),
    ("081507a029284643f30a0000000000000068c3a96c6c6f20e29c93", "héllo ✓"),
];

redis_test! {
    async fn migrate_rewrites_pending_elements_to_one_format_keeping_scores_and_order(redis, raw) {
        let base = now_ms() + HOUR_MS;
        for (i, (element, _)) in CAPTURED.iter().enumerate() {
            raw.seed("q", &unhex(element), base + 1000 - i as i64 * 10).await;
        }
        raw.seed("q", b"garbage", base).await;
        for i in 0..20 {
            let format = if i % 3 == 0 { Format::Modern } else { Format::Legacy };
            raw.seed("q", &pack(format, format!("v{i}").as_bytes()), base + i).await;
        }
        let client = redis.client().await;
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let before_list = raw.lrange(q.keys().pending()).await;
        let before_zset = raw.zrange(q.keys().timeout()).await;
        let before_values = q.read_all().await.unwrap();

        let report = q.migrate(F::Modern, 7).await.unwrap();
        // 2 captured legacy + 13 generated legacy elements rewritten, 2 + 7
        // were modern already; a second pass finds nothing left and stops.
        assert_eq!(report.converted, 2 + 13, "{report:?}");
        assert_eq!(report.malformed, 1);
        assert_eq!(report.already, 2 + 7, "{report:?}");
        assert_eq!(report.passes, 2, "{report:?}");

        let after_list = raw.lrange(q.keys().pending()).await;
        assert_eq!(after_list.len(), before_list.len());
        for (before, after) in before_list.iter().zip(&after_list) {
            match delayq::format::unpack(before) {
                Ok(old) => {
                    let new = delayq::format::unpack(after).unwrap();
                    assert_eq!(new.format(), Format::Modern);
                    assert_eq!(new.payload, old.payload, "same payload, same place");
                    let old_score = before_zset.iter().find(|(m, _)| m == before).unwrap().1;
                    let new_score = raw
                        .zrange(q.keys().timeout())
                        .await
                        .into_iter()
                        .find(|(m, _)| m == after)
                        .unwrap()
                        .1;
                    assert_eq!(new_score, old_score, "same score");
                }
                Err(_) => assert_eq!(before, after, "malformed elements are left alone"),
            }
        }
        assert_eq!(q.read_all().await.unwrap(), before_values);
        assert_eq!(raw.zcard(q.keys().timeout()).await, before_zset.len());

        // And back to legacy, for a fleet that must stay on 3.21.0 a while longer.
        let report = q.migrate(F::Legacy, 1000).await.unwrap();
        assert_eq!(report.converted, 24);
        assert!(raw
            .lrange(q.keys().pending())
            .await
            .iter()
            .filter_map(|e| delayq::format::unpack(e).ok())
            .all(|e| e.format() == Format::Legacy));
        assert_eq!(q.read_all().await.unwrap(), before_values);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_mixing_captured_legacy_and_modern_elements_transfers_without_stalling() {
    deadline(async {
        // What a fleet half way across Redisson 3.21.1 leaves: Java's transfer
        // fails on it with "bad argument #2 to 'unpack'"; delayq's moves it all.
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let due = now_ms() - 100;
        for (i, (element, _)) in CAPTURED.iter().enumerate() {
            raw.seed("mixed", &unhex(element), due + i as i64).await;
        }
        let client = redis.client().await;
        let _q = client.delayed_queue("mixed", StringCodec).unwrap();
        let dest = client.blocking_queue("mixed", StringCodec).unwrap();
        for (_, value) in CAPTURED {
            assert_eq!(dest.take_timeout(Duration::from_secs(5)).await.unwrap(), Some(s(value)));
        }
    })
    .await;
}
