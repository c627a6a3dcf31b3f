//! Why each dead letter is one: recorded as it is dead-lettered, read beside
//! it, and kept aligned as dead letters are requeued and deleted.

use std::time::{Duration, SystemTime};

use delayq::fred::prelude::*;
use delayq::{Permanent, RetryPolicy, StringCodec};

use crate::harness::{deadline, eventually, RedisServer};

fn s(v: &str) -> String {
    v.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_way_into_the_dead_letter_list_records_why() {
    deadline(async {
        let redis = RedisServer::start().await;
        let client = redis.client().await;
        let raw = redis.raw().await;
        let ready = client.blocking_queue("jobs", StringCodec).unwrap();
        // A value dead-lettered before reasons were recorded (or by another writer).
        let _: i64 = raw.client.rpush("delayq_dead_letter:{jobs}", "old").await.unwrap();

        // Too many deliveries without an ack.
        let jobs = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_max_deliveries(1);
        ready.offer(&s("flaky")).await.unwrap();
        let first = jobs.take().await.unwrap();
        first.nack(Duration::ZERO).await.unwrap();
        assert!(jobs.take_timeout(Duration::from_millis(500)).await.unwrap().is_none());

        // The consumer says so.
        ready.offer(&s("hopeless")).await.unwrap();
        jobs.take().await.unwrap().dead_letter().await.unwrap();

        // A worker: a permanent failure, and attempts running out.
        let worker = client
            .worker("jobs", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::from_millis(50)).max_attempts(2))
            .run(|value: String| async move {
                if value == "permanent" {
                    Err(delayq::BoxError::from(Permanent::new(std::io::Error::other(
                        "no such account",
                    ))))
                } else {
                    Err(delayq::BoxError::from(std::io::Error::other("smtp down")))
                }
            });
        ready.offer_all([s("permanent"), s("retried")]).await.unwrap();
        eventually(Duration::from_secs(20), "five dead letters", || async {
            jobs.dead_letter_len().await.unwrap() == 5
        })
        .await;
        worker.shutdown().await;

        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        let seen: Vec<(String, Option<String>)> = page
            .iter()
            .map(|d| (d.value.as_ref().unwrap().clone(), d.reason.clone()))
            .collect();
        assert_eq!(seen[0], (s("old"), None), "{seen:?}");
        let reason = |value: &str| {
            seen.iter()
                .find(|(v, _)| v == value)
                .and_then(|(_, r)| r.clone())
                .unwrap_or_else(|| panic!("{value}: {seen:?}"))
        };
        assert!(reason("flaky").contains("delivered 1 times"), "{seen:?}");
        assert_eq!(reason("hopeless"), "dead_letter() by the consumer");
        assert!(
            reason("permanent").contains("permanent") && reason("permanent").contains("no such account"),
            "{seen:?}"
        );
        assert!(
            reason("retried").contains("failed 2 attempt(s)") && reason("retried").contains("smtp down"),
            "{seen:?}"
        );
        let at = page[1].at.expect("a time");
        assert!(SystemTime::now().duration_since(at).unwrap() < Duration::from_secs(120));

        // Requeueing and deleting from the head keeps the rest aligned.
        assert_eq!(jobs.requeue_dead_letters(2).await.unwrap(), 2);
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(page.len(), 3);
        for dead in &page {
            let value = dead.value.as_ref().unwrap();
            assert_eq!(dead.reason.as_deref(), Some(reason(value).as_str()), "{value}");
        }
        assert_eq!(jobs.remove_dead_letters(10).await.unwrap(), 3);
        assert_eq!(
            raw.client.exists::<i64, _>("delayq_dead_reasons:{jobs}").await.unwrap(),
            0
        );
    })
    .await;
}

/// Dead letters of 64 KB: a requeue moves about 1 MiB of them per call (its
/// script stays short; calling again moves the rest, in order), and a
/// removal copies none of them into its script.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_dead_letters_move_about_a_mebibyte_a_call_and_all_in_order() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let jobs = client.reliable_queue("big-dead", StringCodec).unwrap();
        let value = |i: usize| format!("{i:04}{}", "x".repeat(64 * 1024));
        let values: Vec<String> = (0..100).map(value).collect();
        let _: i64 = raw
            .client
            .rpush("delayq_dead_letter:{big-dead}", values.clone())
            .await
            .unwrap();
        let first = jobs.requeue_dead_letters(10_000).await.unwrap();
        assert!((1..100).contains(&first), "{first} values of 64 KB in one call");
        let mut moved = first;
        while moved < 100 {
            let n = jobs.requeue_dead_letters(10_000).await.unwrap();
            assert!(n > 0);
            moved += n;
        }
        assert_eq!(moved, 100);
        let back: Vec<String> = raw.client.lrange("big-dead", 0, -1).await.unwrap();
        assert_eq!(back, values, "all back, in order");
        assert_eq!(jobs.dead_letter_len().await.unwrap(), 0);

        let _: i64 = raw.client.rpush("delayq_dead_letter:{big-dead}", values).await.unwrap();
        assert_eq!(jobs.remove_dead_letters(60).await.unwrap(), 60);
        assert_eq!(jobs.remove_dead_letters(10_000).await.unwrap(), 40);
        assert_eq!(jobs.dead_letter_len().await.unwrap(), 0);
        assert_eq!(jobs.remove_dead_letters(10).await.unwrap(), 0);
    })
    .await;
}
