//! The queue handles' common surface: one switch for the transfer on all
//! three, one registration per queue per client, and a stream of reliable
//! deliveries beside the blocking queue's.

use std::time::Duration;

use futures_util::StreamExt;

use delayq::{QueueKeys, StringCodec};

use delayq_test_support::{deadline, eventually, redis_test, RedisServer};

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    async fn one_switch_turns_the_transfer_on_and_off_on_every_handle(client, raw) {
        let looking = client.delayed_queue("a", StringCodec).unwrap().without_transfer();
        assert!(!looking.transfers());
        looking.offer(&s("x"), Duration::from_millis(50)).await.unwrap();
        // Nothing in this client transfers the queue: the due element stays.
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{a}").await, 1);
        assert_eq!(raw.llen("a").await, 0);

        let blocking = client.blocking_queue("a", StringCodec).unwrap();
        assert!(!blocking.transfers(), "a blocking queue does not transfer unless asked");
        let blocking = blocking.with_transfer();
        assert!(blocking.transfers());
        assert_eq!(
            blocking.take_timeout(Duration::from_secs(10)).await.unwrap(),
            Some(s("x"))
        );

        let reliable = client.reliable_queue("r", StringCodec).unwrap();
        assert!(!reliable.transfers());
        let reliable = reliable.with_transfer();
        assert!(reliable.transfers());
        assert!(!reliable.without_transfer().transfers());
        assert!(
            client.delayed_queue("d", StringCodec).unwrap().transfers(),
            "delayed queues transfer by default"
        );
    }
}

redis_test! {
    async fn handles_of_one_queue_share_one_registration_until_the_last_is_gone(client, raw) {
        let channel = QueueKeys::new("q").unwrap().channel().to_owned();
        let first = client.delayed_queue("q", StringCodec).unwrap();
        let second = client.delayed_queue("q", StringCodec).unwrap();
        let third = client.blocking_queue("q", StringCodec).unwrap().with_transfer();
        eventually(Duration::from_secs(20), "subscriptions: 1", || async {
            raw.numsub(&channel).await == 1
        })
        .await;
        // Dropping some handles leaves the queue scheduled for the others.
        drop(first);
        drop(third);
        second.offer(&s("y"), Duration::from_millis(100)).await.unwrap();
        let destination = second.destination();
        assert_eq!(
            destination.take_timeout(Duration::from_secs(10)).await.unwrap(),
            Some(s("y"))
        );
        assert_eq!(raw.numsub(&channel).await, 1);
        // The last one gone, the client stops listening to the queue.
        drop(second);
        drop(destination);
        eventually(Duration::from_secs(20), "subscriptions: 0", || async {
            raw.numsub(&channel).await == 0
        })
        .await;
        // A new handle registers it again.
        let again = client.delayed_queue("q", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "subscriptions: 1", || async {
            raw.numsub(&channel).await == 1
        })
        .await;
        again.offer(&s("z"), Duration::from_millis(100)).await.unwrap();
        let destination = again.destination();
        assert_eq!(
            destination.take_timeout(Duration::from_secs(10)).await.unwrap(),
            Some(s("z"))
        );
    }
}

redis_test! {
    async fn a_reliable_stream_delivers_each_value_once_and_ends_at_shutdown(client) {
        let ready = client.blocking_queue("jobs", StringCodec).unwrap();
        ready.offer_all([s("a"), s("b"), s("a")]).await.unwrap();
        let jobs = client.reliable_queue("jobs", StringCodec).unwrap();
        let mut deliveries = std::pin::pin!(jobs.stream());
        let mut seen = Vec::new();
        for _ in 0..3 {
            let delivery = deliveries.next().await.expect("an item").expect("a delivery");
            assert_eq!(delivery.delivery_count(), 1);
            seen.push(delivery.value().clone());
            assert!(delivery.ack().await.unwrap());
        }
        assert_eq!(seen, [s("a"), s("b"), s("a")]);
        assert_eq!(jobs.in_flight().await.unwrap(), 0);
        assert_eq!(jobs.len().await.unwrap(), 0);

        let shutdown = client.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            shutdown.shutdown().await;
        });
        assert!(
            deliveries.next().await.is_none(),
            "the stream ends when the client shuts down"
        );
    }
}

/// On a current-thread runtime the scheduler hears of a registration only
/// when the test yields, which makes "how many" exact.
#[tokio::test]
async fn a_queue_is_registered_once_per_client_however_many_handles_transfer_it() {
    deadline(async {
        let redis = RedisServer::start().await;
        let client = redis.client().await;
        let raw = redis.raw().await;
        let looking = client.delayed_queue("once", StringCodec).unwrap().without_transfer();
        let a = client.delayed_queue("once", StringCodec).unwrap();
        let b = a.clone();
        let c = client.blocking_queue("once", StringCodec).unwrap().with_transfer();
        let d = client.reliable_queue("once", StringCodec).unwrap().with_transfer();
        let channel = QueueKeys::new("once").unwrap().channel().to_owned();
        eventually(Duration::from_secs(20), "subscribed", || async {
            raw.numsub(&channel).await == 1
        })
        .await;
        assert_eq!(
            client.stats().registrations,
            1,
            "four transferring handles, one registration"
        );
        drop((a, b, c, d));
        eventually(Duration::from_secs(20), "unsubscribed", || async {
            raw.numsub(&channel).await == 0
        })
        .await;
        // A handle turned off as it is made never registers, not even after
        // the 250 ms an unused handle waits.
        let _other = client.delayed_queue("other", StringCodec).unwrap().without_transfer();
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert_eq!(client.stats().registrations, 1);
        assert!(!looking.transfers());
        // One that is used registers at its first operation...
        let again = client.delayed_queue("once", StringCodec).unwrap();
        again.len().await.unwrap();
        assert_eq!(client.stats().registrations, 2, "registered by its first operation");
        // ... and one kept only so that the queue moves (as Java code keeps an
        // RDelayedQueue) registers by itself.
        let _held = client.delayed_queue("held", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "an unused handle registers", || async {
            client.stats().registrations == 3
        })
        .await;
    })
    .await;
}
