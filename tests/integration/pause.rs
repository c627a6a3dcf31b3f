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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_consumers_of_a_paused_queue_lose_nothing_and_take_each_value_once_after() {
    deadline(async {
        let redis = RedisServer::start().await;
        let (a, b) = (redis.client().await, redis.client().await);
        let raw = redis.raw().await;
        let delayed = a.delayed_queue("many", LongCodec).unwrap().without_transfer();
        delayed.pause().await.unwrap();
        let ready = a.blocking_queue("many", LongCodec).unwrap();
        ready.offer_all(0..20i64).await.unwrap();
        let consumers: Vec<_> = [&a, &b, &a, &b]
            .into_iter()
            .map(|client| client.reliable_queue("many", LongCodec).unwrap())
            .collect();
        // While paused, nobody takes anything, however long they wait.
        let waits =
            futures_util::future::join_all(consumers.iter().map(|c| c.take_timeout(Duration::from_millis(2_500))))
                .await;
        assert!(waits.iter().all(|w| matches!(w, Ok(None))), "{waits:?}");
        assert_eq!(raw.llen("many").await, 20);
        let mut left = ready.read_all().await.unwrap();
        left.sort();
        assert_eq!(
            left,
            (0..20).collect::<Vec<_>>(),
            "nothing lost or doubled while paused"
        );
        delayed.resume().await.unwrap();
        let mut taken = Vec::new();
        while taken.len() < 20 {
            let round =
                futures_util::future::join_all(consumers.iter().map(|c| c.take_timeout(Duration::from_secs(20)))).await;
            for delivery in round.into_iter().flatten().flatten() {
                assert_eq!(delivery.delivery_count(), 1);
                taken.push(*delivery.value());
                delivery.ack().await.unwrap();
            }
        }
        taken.sort();
        assert_eq!(taken, (0..20).collect::<Vec<_>>());
    })
    .await;
}
