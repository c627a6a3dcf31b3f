//! `ReliableQueue::take_many`: a bulk take for consumers that process many
//! values in one go: in list order, waiting only for the first, each value a
//! delivery of its own; undecodable values in their place; a paused queue
//! and a lost reply lose nothing and deliver nothing twice.

use std::time::Duration;

use delayq::fred::prelude::*;
use delayq::{Error, LongCodec};
use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test};

const NOW: Duration = Duration::ZERO;

/// `values` pushed straight to the ready list `queue`.
async fn ready(raw: &delayq_test_support::RawRedis, queue: &str, values: impl IntoIterator<Item = String>) {
    let values: Vec<String> = values.into_iter().collect();
    let _: i64 = raw.client.rpush(queue, values).await.unwrap();
}

redis_test! {
    /// Up to `max` ready values in list order (more than one script's 128),
    /// then the rest; with nothing ready and no time to wait, none.
    async fn takes_up_to_max_in_list_order_each_its_own_delivery(client, raw) {
        let q = client.reliable_queue("many", LongCodec).unwrap();
        ready(&raw, "many", (0..300).map(|i| i.to_string())).await;

        let first = q.take_many(200, NOW).await.unwrap();
        let values: Vec<i64> = first.iter().map(|d| *d.as_ref().unwrap().value()).collect();
        assert_eq!(values, (0..200).collect::<Vec<_>>());
        assert_eq!(q.in_flight().await.unwrap(), 200);
        assert_eq!(q.len().await.unwrap(), 100);

        let rest = q.take_many(200, NOW).await.unwrap();
        assert_eq!(rest.len(), 100);
        assert_eq!(*rest[0].as_ref().unwrap().value(), 200);
        assert!(q.take_many(200, NOW).await.unwrap().is_empty());

        // Each is settled on its own: ack half, dead-letter the rest.
        for (i, delivery) in first.into_iter().chain(rest).enumerate() {
            let delivery = delivery.unwrap();
            if i % 2 == 0 {
                assert!(delivery.ack().await.unwrap());
            } else {
                assert!(delivery.dead_letter().await.unwrap());
            }
        }
        assert_eq!(q.in_flight().await.unwrap(), 0);
        assert_eq!(q.dead_letter_len().await.unwrap(), 150);
        assert!(matches!(q.take_many(0, NOW).await, Err(Error::InvalidArgument(_))));
    }
}

redis_test! {
    /// With nothing ready it waits for the first value, then takes what is
    /// ready beside it; past its timeout it answers an empty batch.
    async fn waits_for_the_first_value_then_takes_those_ready_with_it(client, raw) {
        let q = client.reliable_queue("waiting", LongCodec).unwrap();
        assert!(q.take_many(10, Duration::from_millis(200)).await.unwrap().is_empty());

        let waiting = tokio::spawn({
            let q = q.clone();
            async move { q.take_many(10, Duration::from_secs(60)).await }
        });
        eventually(Duration::from_secs(20), "the take to wait", || async {
            let clients = match raw.cmd("CLIENT", vec!["LIST".into()]).await {
                Value::String(s) => s.to_string(),
                other => format!("{other:?}"),
            };
            clients.contains("cmd=blmove")
        })
        .await;
        ready(&raw, "waiting", (1..=3).map(|i| i.to_string())).await;
        let batch = waiting.await.unwrap().unwrap();
        let values: Vec<i64> = batch.iter().map(|d| *d.as_ref().unwrap().value()).collect();
        assert!(!values.is_empty() && values.len() <= 3, "{values:?}");
        assert_eq!(values, (1..=values.len() as i64).collect::<Vec<_>>(), "in list order");
        let again = q.take_many(10, NOW).await.unwrap();
        assert_eq!(values.len() + again.len(), 3, "the rest stayed ready");
    }
}

redis_test! {
    /// A value the codec cannot read is its error, in its place; it went back
    /// to the queue (towards the dead-letter limit); the others are delivered.
    async fn an_undecodable_value_is_its_error_in_its_place_and_goes_back(client, raw) {
        let q = client.reliable_queue("mixed", LongCodec).unwrap();
        ready(&raw, "mixed", ["1".into(), "oops".into(), "3".into()]).await;
        let batch = q.take_many(10, NOW).await.unwrap();
        assert_eq!(batch.len(), 3);
        assert_eq!(*batch[0].as_ref().unwrap().value(), 1);
        let error = batch[1].as_ref().expect_err("the undecodable value's error");
        assert_eq!(&error.raw()[..], b"oops");
        assert_eq!(*batch[2].as_ref().unwrap().value(), 3);
        assert_eq!(q.in_flight().await.unwrap(), 2);
        let back: Vec<String> = raw.client.lrange("mixed", 0, -1).await.unwrap();
        assert_eq!(back, ["oops"], "given back, not lost");
    }
}

redis_test! {
    /// A paused queue gives nothing and moves nothing, however long it waits.
    async fn a_paused_queue_gives_nothing_and_keeps_its_order(client, raw) {
        let q = client.reliable_queue("held", LongCodec).unwrap();
        ready(&raw, "held", (0..5).map(|i| i.to_string())).await;
        client.delayed_queue("held", LongCodec).unwrap().pause().await.unwrap();
        assert!(q.take_many(5, Duration::from_millis(1500)).await.unwrap().is_empty());
        let left: Vec<String> = raw.client.lrange("held", 0, -1).await.unwrap();
        assert_eq!(left, ["0", "1", "2", "3", "4"]);
        assert_eq!(q.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    /// The claim script's reply is lost: what it claimed is found by its batch
    /// id and given back; every value is delivered exactly once in the end.
    async fn a_lost_claim_reply_loses_nothing_and_delivers_nothing_twice(proxy, client, raw) {
        let q = client.reliable_queue("{lost-many}", LongCodec).unwrap();
        ready(&raw, "{lost-many}", (0..20).map(|i| i.to_string())).await;
        proxy.arm(Fault::LoseReply, "{lost-many}");
        let mut seen = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while seen.len() < 20 && tokio::time::Instant::now() < deadline {
            // An outcome unknown may surface as an error: the values come back.
            if let Ok(batch) = q.take_many(20, Duration::from_millis(200)).await {
                for delivery in batch {
                    let delivery = delivery.unwrap();
                    seen.push(*delivery.value());
                    assert!(delivery.ack().await.unwrap());
                }
            }
        }
        assert_eq!(proxy.fired(), 1);
        seen.sort_unstable();
        assert_eq!(seen, (0..20).collect::<Vec<_>>(), "each once");
        assert_eq!(q.in_flight().await.unwrap(), 0);
        assert_eq!(q.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// The claim script's byte budget (1 MiB, one value past it) holds when
    /// small values come before large ones: its pops sized by the average
    /// so far must not take a whole chunk of large values past the budget.
    async fn the_byte_budget_holds_when_large_values_follow_small_ones(client, raw) {
        const LARGE: usize = 200_000;
        let q = client.reliable_queue("budget", delayq::StringCodec).unwrap();
        let small = (0..64).map(|i| format!("s{i}"));
        let large = (0..64).map(|i| format!("{i:03}{}", "x".repeat(LARGE - 3)));
        ready(&raw, "budget", small.chain(large)).await;

        let batch = q.take_many(128, NOW).await.unwrap();
        let bytes: usize = batch.iter().map(|d| d.as_ref().unwrap().value().len()).sum();
        // The first value (a single take), then a budget and one value past it
        // (a script or two).
        assert!(
            bytes <= (1 << 20) + 3 * LARGE,
            "{} values, {bytes} bytes in one claim",
            batch.len()
        );
        // Nothing lost, in order: what was not taken is still there, first
        // the next large value.
        let taken = batch.len();
        assert_eq!(q.len().await.unwrap(), 128 - taken);
        let head = raw.lrange("budget").await;
        assert!(head[0].starts_with(format!("{:03}", taken - 64).as_bytes()));
        for delivery in batch {
            delivery.unwrap().ack().await.unwrap();
        }
    }
}
