//! Pausing a queue: delayq's transfers and reliable consumers wait, offers go
//! on, and on resume what fell due moves in due order.

use std::time::Duration;

use delayq::{LongCodec, StringCodec};

use delayq_test_support::{deadline, redis_test, RedisServer};

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    async fn a_paused_queue_accumulates_due_elements_and_moves_them_in_due_order_on_resume(redis) {
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
    }
}

redis_test! {
    async fn reliable_consumers_take_nothing_while_paused_and_lose_nothing(client, raw) {
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
    }
}

redis_test! {
    async fn several_consumers_of_a_paused_queue_lose_nothing_and_take_each_value_once_after(redis) {
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
    }
}

/// A worker whose queue is paused while its handlers run takes nothing more
/// once a take found the pause: a batch claim finds it before it pops
/// anything, and the worker's one waiting take moves only the head, and
/// puts it back there. Slots that all finished at once used to move a value
/// each, and claim.lua put them back in claim order, reversing the head of
/// the queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_worker_keeps_the_order_of_the_queue() {
    use std::sync::Arc;

    use delayq::error::BoxError;
    use parking_lot::Mutex;
    use tokio::sync::Semaphore;

    use delayq_test_support::eventually;

    deadline(async {
        const N: i64 = 40;
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let monitor = redis.monitor().await;
        let delayed = client.delayed_queue("ordered", LongCodec).unwrap().without_transfer();
        let ready = client.blocking_queue("ordered", LongCodec).unwrap();
        ready.offer_all(0..N).await.unwrap();
        // Each handler waits for a permit, so the test decides when slots finish.
        let gate = Arc::new(Semaphore::new(0));
        let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
        let worker = client.worker("ordered", LongCodec).unwrap().concurrency(8).run({
            let (gate, seen) = (gate.clone(), seen.clone());
            move |value: i64| {
                let (gate, seen) = (gate.clone(), seen.clone());
                async move {
                    gate.acquire().await.unwrap().forget();
                    seen.lock().push(value);
                    Ok::<_, BoxError>(())
                }
            }
        });
        let reliable = client.reliable_queue("ordered", LongCodec).unwrap();
        eventually(Duration::from_secs(20), "8 values in the handlers", || async {
            reliable.in_flight().await.unwrap() == 8
        })
        .await;
        delayed.pause().await.unwrap();
        let moves = || async {
            let entries = monitor.entries().await;
            entries.iter().filter(|c| !c.from_lua && c.name() == "lmove").count()
        };
        // The 8 were taken by one batch claim, which moves nothing.
        assert_eq!(moves().await, 0);
        // One slot finishes; the next batch claim finds the pause, and the
        // worker waits for the resume: it takes nothing, so it moves
        // nothing (a take would move the head out of the list and back).
        gate.add_permits(1);
        eventually(Duration::from_secs(20), "one handled and acked", || async {
            seen.lock().len() == 1 && reliable.in_flight().await.unwrap() == 7
        })
        .await;
        // The seven others finish together.
        gate.add_permits(7);
        eventually(Duration::from_secs(20), "8 handled and acked", || async {
            let handled = seen.lock().len();
            handled == 8 && reliable.in_flight().await.unwrap() == 0
        })
        .await;
        let expected: Vec<i64> = (8..N).collect();
        eventually(Duration::from_secs(10), "the queue in its order", || async {
            ready.read_all().await.unwrap() == expected && raw.llen("delayq_staging:{ordered}").await == 0
        })
        .await;
        assert_eq!(moves().await, 0, "a paused worker moves no value out of the list");
        // After the resume, every value is handled once.
        gate.add_permits(N as usize);
        delayed.resume().await.unwrap();
        eventually(Duration::from_secs(20), "all handled after the resume", || async {
            seen.lock().len() == N as usize
        })
        .await;
        worker.shutdown().await;
        let mut values = seen.lock().clone();
        values.sort();
        assert_eq!(values, (0..N).collect::<Vec<_>>());
    })
    .await;
}
