//! Pausing a queue: delayq's transfers and reliable consumers wait, offers go
//! on, and on resume what fell due moves in due order.

use std::time::Duration;

use delayq::{LongCodec, StringCodec};

use crate::harness::{deadline, RedisServer};

fn s(v: &str) -> String {
    v.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_queue_accumulates_due_elements_and_moves_them_in_due_order_on_resume() {
    deadline(async {
        let redis = RedisServer::start().await;
        let (a, b) = (redis.client().await, redis.client().await);
        let raw = redis.raw().await;
        // Two processes transfer the queue; the pause holds for both.
        let q = a.delayed_queue("paused", LongCodec).unwrap();
        let other = b.delayed_queue("paused", LongCodec).unwrap();
        q.pause().await.unwrap();
        q.pause().await.unwrap(); // pausing twice is one pause
        assert!(other.is_paused().await.unwrap());
        // Offered in an order unlike their due order.
        q.offer_all([
            (3i64, Duration::from_millis(300)),
            (1, Duration::from_millis(100)),
            (2, Duration::from_millis(200)),
        ])
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        assert_eq!(
            raw.zcard("redisson_delay_queue_timeout:{paused}").await,
            3,
            "moved while paused"
        );
        assert_eq!(raw.llen("paused").await, 0);
        assert_eq!(
            other.transfer_now().await.unwrap().moved,
            0,
            "an explicit transfer waits too"
        );
        let status = q.status().await.unwrap();
        assert!(status.paused && status.pending == 3);

        assert!(other.resume().await.unwrap());
        assert!(!other.resume().await.unwrap());
        let dest = q.destination();
        let mut got = Vec::new();
        for _ in 0..3 {
            got.push(
                dest.take_timeout(Duration::from_secs(20))
                    .await
                    .unwrap()
                    .expect("moved after resume"),
            );
        }
        assert_eq!(got, [1, 2, 3]);
        assert!(!q.status().await.unwrap().paused);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reliable_consumers_take_nothing_while_paused_and_lose_nothing() {
    deadline(async {
        let redis = RedisServer::start().await;
        let client = redis.client().await;
        let raw = redis.raw().await;
        let delayed = client.delayed_queue("jobs", StringCodec).unwrap().without_transfer();
        let ready = client.blocking_queue("jobs", StringCodec).unwrap();
        let jobs = client.reliable_queue("jobs", StringCodec).unwrap();
        delayed.pause().await.unwrap();
        // A Java transfer does not know the pause: values still arrive.
        ready.offer_all([s("a"), s("b")]).await.unwrap();
        assert!(jobs.take_timeout(Duration::from_millis(2_500)).await.unwrap().is_none());
        assert_eq!(raw.llen("jobs").await, 2, "a value taken while paused goes back");
        assert_eq!(ready.read_all().await.unwrap(), [s("a"), s("b")], "and keeps its place");
        assert_eq!(jobs.in_flight().await.unwrap(), 0);
        delayed.resume().await.unwrap();
        let first = jobs
            .take_timeout(Duration::from_secs(20))
            .await
            .unwrap()
            .expect("taken after resume");
        assert_eq!(first.value(), "a");
        assert_eq!(first.delivery_count(), 1, "a paused take is not a delivery");
        first.ack().await.unwrap();
        let second = jobs.take_timeout(Duration::from_secs(20)).await.unwrap().unwrap();
        assert_eq!(second.value(), "b");
        second.ack().await.unwrap();
    })
    .await;
}
