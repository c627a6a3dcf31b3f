//! Message TTL (`DelayedQueue::offer_with` and `OfferOptions::ttl`): a
//! value not taken within its time to live is never delivered: it goes to
//! the dead letters with reason `expired` (or is dropped), counted in the
//! `expired` total and told by an `expired` event. Give-backs keep a
//! value's expiry. Sleeps here only let a TTL pass.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use delayq::error::BoxError;
use delayq::events::{EventKind, EventsFrom};
use delayq::{Error, Expiry, OfferOptions, Priority, StringCodec};
use futures_util::StreamExt;
use parking_lot::Mutex;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test};

fn s(text: &str) -> String {
    text.to_owned()
}

/// Due now, living `ms`.
fn ttl(ms: u64) -> OfferOptions {
    OfferOptions::after(Duration::ZERO).ttl(Duration::from_millis(ms))
}

/// A TTL that does not pass during a test.
const LONG: u64 = 600_000;
/// A TTL that passes during a test, long enough for the steps before it
/// (takes, give-backs) on a loaded machine.
const SHORT: u64 = 3_000;

/// Sleeps until a value offered with [`SHORT`] before `offered` expired.
async fn until_short_passed(offered: tokio::time::Instant) {
    tokio::time::sleep_until(offered + Duration::from_millis(SHORT + 300)).await;
}

/// The dead letters of `queue`: (value, reason).
async fn dead_letters(client: &delayq::Client, queue: &str) -> Vec<(String, String)> {
    let jobs = client.reliable_queue(queue, StringCodec).unwrap();
    jobs.dead_letter_page(0, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.value.unwrap(), d.reason.unwrap_or_default()))
        .collect()
}

redis_test! {
    /// A blocking take never gets an expired value: it goes to the dead
    /// letters with reason `expired`; a live one (the default level with a
    /// TTL: before the plain list's values) and the plain list's come.
    async fn a_blocking_take_dead_letters_an_expired_value_and_takes_the_next(client) {
        let producer = client.delayed_queue("ttl-blocking", StringCodec).unwrap();
        let consumer = client.blocking_queue("ttl-blocking", StringCodec).unwrap();
        consumer.offer(&s("plain")).await.unwrap();
        producer.offer_with(&s("stale"), &ttl(200)).await.unwrap();
        producer.offer_with(&s("fresh"), &ttl(LONG)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(consumer.try_take().await.unwrap().as_deref(), Some("fresh"));
        assert_eq!(consumer.take().await.unwrap(), "plain");
        assert_eq!(consumer.take_timeout(Duration::from_millis(300)).await.unwrap(), None);
        assert_eq!(dead_letters(&client, "ttl-blocking").await, [(s("stale"), s("expired"))]);
        let totals = producer.status().await.unwrap().totals;
        assert_eq!((totals.expired, totals.dead_lettered), (1, 1));
    }
}

redis_test! {
    /// Reliable takes, one and many, never deliver an expired value: at
    /// any priority.
    async fn reliable_take_and_take_many_never_deliver_an_expired_value(client) {
        let producer = client.delayed_queue("ttl-reliable", StringCodec).unwrap();
        let jobs = client.reliable_queue("ttl-reliable", StringCodec).unwrap();
        producer.offer_with(&s("stale-9"), &ttl(200).priority(Priority::HIGHEST)).await.unwrap();
        producer.offer_with(&s("stale-0"), &ttl(200)).await.unwrap();
        producer.offer_with(&s("fresh-5"), &ttl(LONG).priority(Priority::new(5).unwrap())).await.unwrap();
        producer.offer_with(&s("fresh-0"), &ttl(LONG)).await.unwrap();
        producer.offer_with(&s("stale-3"), &ttl(200).priority(Priority::new(3).unwrap())).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        let first = jobs.take().await.unwrap();
        assert_eq!((first.value().as_str(), first.priority().level()), ("fresh-5", 5));
        first.ack().await.unwrap();
        let rest: Vec<String> = jobs
            .take_many(10, Duration::from_millis(500))
            .await
            .unwrap()
            .into_iter()
            .map(|d| d.unwrap().value().clone())
            .collect();
        assert_eq!(rest, ["fresh-0"]);
        let mut dead = dead_letters(&client, "ttl-reliable").await;
        dead.sort();
        assert_eq!(
            dead,
            [(s("stale-0"), s("expired")), (s("stale-3"), s("expired")), (s("stale-9"), s("expired"))]
        );
        assert_eq!(producer.status().await.unwrap().totals.expired, 3);
    }
}

redis_test! {
    /// A worker (claiming ahead of its handler) never handles an expired
    /// value.
    async fn a_worker_never_handles_an_expired_value(client, raw) {
        let producer = client.delayed_queue("ttl-worker", StringCodec).unwrap();
        for i in 0..5 {
            producer.offer_with(&format!("stale-{i}"), &ttl(200)).await.unwrap();
        }
        producer.offer_with(&s("fresh"), &ttl(LONG)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        let handled = Arc::new(Mutex::new(Vec::new()));
        let worker = client.worker("ttl-worker", StringCodec).unwrap().concurrency(2).run({
            let handled = handled.clone();
            move |value: String| {
                let handled = handled.clone();
                async move {
                    handled.lock().push(value);
                    Ok::<(), BoxError>(())
                }
            }
        });
        eventually(Duration::from_secs(60), "the fresh value is handled", || async {
            !handled.lock().is_empty()
        })
        .await;
        eventually(Duration::from_secs(60), "the stale ones are dead letters", || async {
            dead_letters(&client, "ttl-worker").await.len() == 5
        })
        .await;
        // Its batch acks leave no TTL record behind.
        eventually(Duration::from_secs(60), "the fresh value is acked", || async {
            raw.cmd("EXISTS", vec!["delayq_ttl:{ttl-worker}".into()]).await.as_i64() == Some(0)
        })
        .await;
        worker.shutdown().await;
        assert_eq!(*handled.lock(), [s("fresh")]);
        assert!(dead_letters(&client, "ttl-worker").await.iter().all(|(_, reason)| reason == "expired"));
    }
}

redis_test! {
    /// `Expiry::Drop`: an expired value is dropped, not dead-lettered, and
    /// counted.
    async fn an_expired_value_with_expiry_drop_is_dropped_and_counted(client) {
        let producer = client.delayed_queue("ttl-drop", StringCodec).unwrap();
        let consumer = client.blocking_queue("ttl-drop", StringCodec).unwrap();
        producer.offer_with(&s("gone"), &ttl(200).on_expiry(Expiry::Drop)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(consumer.try_take().await.unwrap(), None);
        assert!(dead_letters(&client, "ttl-drop").await.is_empty());
        let status = producer.status().await.unwrap();
        assert_eq!((status.totals.expired, status.totals.dead_lettered), (1, 0));
        assert_eq!(status.priority_ready, 0);
    }
}

redis_test! {
    /// A value taken within its TTL is delivered as any other, its
    /// acknowledgement leaves no TTL record behind, and nothing expires.
    async fn a_value_taken_in_time_is_delivered_and_acked_normally(client, raw) {
        let producer = client.delayed_queue("ttl-in-time", StringCodec).unwrap();
        let jobs = client.reliable_queue("ttl-in-time", StringCodec).unwrap();
        producer.offer_with(&s("one"), &ttl(LONG)).await.unwrap();
        producer
            .offer_with(&s("two"), &OfferOptions::after(Duration::from_millis(100)).ttl(Duration::from_millis(LONG)))
            .await
            .unwrap();
        let one = jobs.take().await.unwrap();
        assert_eq!((one.value().as_str(), one.priority(), one.delivery_count()), ("one", Priority::DEFAULT, 1));
        assert_eq!(raw.cmd("HLEN", vec!["delayq_ttl:{ttl-in-time}".into()]).await.as_i64(), Some(1));
        assert!(one.ack().await.unwrap());
        let two = jobs.take().await.unwrap();
        assert_eq!(two.value(), "two");
        assert!(two.ack().await.unwrap());
        assert_eq!(raw.cmd("EXISTS", vec!["delayq_ttl:{ttl-in-time}".into()]).await.as_i64(), Some(0));
        let totals = producer.status().await.unwrap().totals;
        assert_eq!((totals.expired, totals.dead_lettered, totals.acked), (0, 0, 2));
    }
}

redis_test! {
    /// A nacked value keeps its expiry: once its TTL passes it is not
    /// delivered again (expired at its next claim), whether it went back at
    /// once or after a delay.
    async fn a_nacked_value_whose_ttl_passes_is_not_delivered_again(client, raw) {
        let producer = client.delayed_queue("ttl-nack", StringCodec).unwrap();
        let jobs = client.reliable_queue("ttl-nack", StringCodec).unwrap();
        let offered = tokio::time::Instant::now();
        producer.offer_with(&s("now"), &ttl(SHORT)).await.unwrap();
        producer.offer_with(&s("later"), &ttl(SHORT).priority(Priority::new(4).unwrap())).await.unwrap();
        let later = jobs.take().await.unwrap();
        let now = jobs.take().await.unwrap();
        assert_eq!((later.value().as_str(), now.value().as_str()), ("later", "now"));
        assert!(now.nack(Duration::ZERO).await.unwrap());
        assert!(later.nack(Duration::from_millis(100)).await.unwrap());
        // Both back in delayq's sets, not Redisson's, and their records gone.
        assert_eq!(raw.zcard("delayq_priority_ready:{ttl-nack}").await, 1);
        assert_eq!(raw.zcard("delayq_priority_delayed:{ttl-nack}").await, 1);
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{ttl-nack}").await, 0);
        assert_eq!(raw.cmd("EXISTS", vec!["delayq_ttl:{ttl-nack}".into()]).await.as_i64(), Some(0));
        until_short_passed(offered).await;
        assert!(jobs.take_timeout(Duration::from_millis(300)).await.unwrap().is_none());
        let mut dead = dead_letters(&client, "ttl-nack").await;
        dead.sort();
        assert_eq!(dead, [(s("later"), s("expired")), (s("now"), s("expired"))]);
    }
}

redis_test! {
    /// A delivery whose visibility timeout passed goes back with its
    /// expiry: past its TTL it is not delivered again.
    async fn a_timed_out_value_whose_ttl_passes_is_not_delivered_again(client, raw) {
        let producer = client.delayed_queue("ttl-timeout", StringCodec).unwrap();
        let jobs = client.reliable_queue("ttl-timeout", StringCodec).unwrap();
        let short = jobs.clone().with_visibility_timeout(Duration::from_millis(200));
        let offered = tokio::time::Instant::now();
        producer.offer_with(&s("x"), &ttl(SHORT)).await.unwrap();
        let lost = short.take().await.unwrap();
        assert_eq!(lost.value(), "x");
        std::mem::forget(lost); // a consumer that died with it
        eventually(Duration::from_secs(60), "the reaper gives it back", || async {
            raw.zcard("delayq_priority_ready:{ttl-timeout}").await == 1
        })
        .await;
        assert_eq!(raw.cmd("EXISTS", vec!["delayq_ttl:{ttl-timeout}".into()]).await.as_i64(), Some(0));
        until_short_passed(offered).await;
        assert!(jobs.take_timeout(Duration::from_millis(300)).await.unwrap().is_none());
        assert_eq!(dead_letters(&client, "ttl-timeout").await, [(s("x"), s("expired"))]);
        assert_eq!(producer.status().await.unwrap().totals.timed_out, 1);
    }
}

redis_test! {
    /// Equal payloads with different TTLs are distinct values, each with
    /// its own expiry, through a give-back too.
    async fn equal_payloads_with_different_ttls_each_keep_their_own(client) {
        let producer = client.delayed_queue("ttl-equal", StringCodec).unwrap();
        let jobs = client.reliable_queue("ttl-equal", StringCodec).unwrap();
        let offered = tokio::time::Instant::now();
        producer.offer_with(&s("same"), &ttl(SHORT)).await.unwrap();
        producer.offer_with(&s("same"), &ttl(LONG)).await.unwrap();
        let both = jobs.take_many(2, Duration::from_secs(5)).await.unwrap();
        assert_eq!(both.len(), 2);
        for delivery in both {
            assert!(delivery.unwrap().nack(Duration::ZERO).await.unwrap());
        }
        until_short_passed(offered).await;
        let again = jobs.take_many(10, Duration::from_millis(500)).await.unwrap();
        let values: Vec<(String, u32)> = again
            .into_iter()
            .map(|d| d.unwrap())
            .map(|d| (d.value().clone(), d.delivery_count()))
            .collect();
        assert_eq!(values, [(s("same"), 2)]);
        assert_eq!(dead_letters(&client, "ttl-equal").await, [(s("same"), s("expired"))]);
    }
}

redis_test! {
    /// A lost offer reply: the offer is sent again, and the value is there
    /// once.
    async fn a_ttl_offer_whose_reply_is_lost_adds_its_value_once(proxy, client, raw) {
        let producer = client.delayed_queue("ttl-lost", StringCodec).unwrap();
        proxy.arm(Fault::LoseReply, "delayq_priority_ready:{ttl-lost}");
        producer.offer_with(&s("once"), &ttl(LONG)).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(raw.zcard("delayq_priority_ready:{ttl-lost}").await, 1);
        let consumer = client.blocking_queue("ttl-lost", StringCodec).unwrap();
        assert_eq!(consumer.try_take().await.unwrap().as_deref(), Some("once"));
        assert_eq!(consumer.try_take().await.unwrap(), None);
    }
}

redis_test! {
    /// A TTL not longer than the delay (or the time to the due time), or a
    /// zero one, is refused before anything is written.
    async fn a_ttl_not_longer_than_the_delay_is_refused_and_writes_nothing(client, raw) {
        let producer = client.delayed_queue("ttl-refused", StringCodec).unwrap();
        let refused = [
            OfferOptions::after(Duration::from_secs(5)).ttl(Duration::from_secs(5)),
            OfferOptions::after(Duration::from_secs(6)).ttl(Duration::from_secs(5)),
            OfferOptions::at(SystemTime::now() + Duration::from_secs(60)).ttl(Duration::from_secs(30)),
            OfferOptions::after(Duration::ZERO).ttl(Duration::ZERO),
        ];
        for options in refused {
            let error = producer.offer_with(&s("x"), &options).await.unwrap_err();
            assert!(matches!(error, Error::InvalidArgument(_)), "{options:?}: {error:?}");
        }
        let keys = [
            "delayq_priority_ready:{ttl-refused}",
            "delayq_priority_delayed:{ttl-refused}",
            "delayq_priority:{ttl-refused}",
            "redisson_delay_queue_timeout:{ttl-refused}",
            "ttl-refused",
        ];
        let exists = raw.cmd("EXISTS", keys.iter().map(|k| (*k).into()).collect()).await;
        assert_eq!(exists.as_i64(), Some(0));
        assert_eq!(producer.status().await.unwrap().totals.offered, 0);
    }
}

redis_test! {
    /// The `expired` total and one `expired` event per take that expires
    /// any, with how many went to the dead letters; a take skips at most
    /// 100 expired values a call, and the take goes on to the live one.
    async fn the_expired_total_and_events_count_every_expired_value(client) {
        let keys = delayq::QueueKeys::new("ttl-events").unwrap();
        client.enable_events(&keys, 10_000).await.unwrap();
        let mut events = client.events(&keys).unwrap().from(EventsFrom::Oldest);
        let producer = client.delayed_queue("ttl-events", StringCodec).unwrap();
        let consumer = client.blocking_queue("ttl-events", StringCodec).unwrap();
        for i in 0..120 {
            producer.offer_with(&format!("stale-{i}"), &ttl(300)).await.unwrap();
        }
        for i in 0..30 {
            producer.offer_with(&format!("dropped-{i}"), &ttl(300).on_expiry(Expiry::Drop)).await.unwrap();
        }
        producer.offer_with(&s("fresh"), &ttl(LONG)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(consumer.try_take().await.unwrap().as_deref(), Some("fresh"));
        let mut expired = Vec::new();
        tokio::time::timeout(Duration::from_secs(20), async {
            while expired.iter().map(|(count, _)| count).sum::<u64>() < 150 {
                let event = events.next().await.expect("the stream goes on").expect("an event");
                if let EventKind::Expired { count, dead_lettered } = event.kind {
                    expired.push((count, dead_lettered));
                }
            }
        })
        .await
        .expect("expired events for all 150");
        assert_eq!(expired.len(), 2, "{expired:?}");
        assert_eq!(expired[0].0, 100, "{expired:?}");
        assert_eq!(expired.iter().map(|(_, dead)| dead).sum::<u64>(), 120);
        let totals = producer.status().await.unwrap().totals;
        assert_eq!((totals.expired, totals.dead_lettered), (150, 120));
        let jobs = client.reliable_queue("ttl-events", StringCodec).unwrap();
        assert_eq!(jobs.dead_letter_len().await.unwrap(), 120);
    }
}

redis_test! {
    /// A value a blocking take could not decode goes back with its expiry
    /// (`priority_push_back`), to the ready set, not to the plain list:
    /// once its TTL passed it is expired, not taken.
    async fn a_blocking_give_back_keeps_the_expiry(client, raw) {
        let producer = client.delayed_queue("ttl-give-back", delayq::LongCodec).unwrap();
        let text = client.delayed_queue("ttl-give-back", StringCodec).unwrap();
        let offered = tokio::time::Instant::now();
        text.offer_with(&s("not-a-number"), &ttl(SHORT)).await.unwrap();
        producer.offer_with(&7, &ttl(LONG)).await.unwrap();
        let consumer = client.blocking_queue("ttl-give-back", delayq::LongCodec).unwrap();
        match consumer.try_take().await {
            Err(Error::Decode(e)) => assert!(e.restored()),
            other => panic!("expected a decode error, got {other:?}"),
        }
        let members = raw.zrange("delayq_priority_ready:{ttl-give-back}").await;
        assert_eq!(members.len(), 2);
        assert!(members.iter().all(|(m, _)| m.starts_with(b"0T")), "{members:?}");
        assert_eq!(raw.llen("ttl-give-back").await, 0);
        until_short_passed(offered).await;
        assert_eq!(consumer.try_take().await.unwrap(), Some(7));
        assert_eq!(consumer.try_take().await.unwrap(), None);
        assert_eq!(dead_letters(&client, "ttl-give-back").await, [(s("not-a-number"), s("expired"))]);
    }
}
