//! A queue's admission limits: a maximum size, a maximum payload, offers
//! and takes switched off. Refused offers queue nothing and say which limit
//! refused them; bulk offers say exactly which part landed.

use std::time::Duration;

use delayq::error::{Error, Refusal};
use delayq::events::{EventKind, EventsFrom};
use delayq::limits::{Limits, WhenFull};
use delayq::{BytesCodec, StringCodec};
use futures_util::StreamExt;

use delayq_test_support::{redis_test, RedisServer};

fn s(v: &str) -> String {
    v.to_owned()
}

fn refusal(error: Error) -> Refusal {
    match error {
        Error::OfferRefused { refusal, .. } => refusal,
        other => panic!("not a refusal: {other:?}"),
    }
}

redis_test! {
    async fn a_full_queue_refuses_an_offer_and_queues_nothing_of_it(client, raw) {
        let q = client.delayed_queue("full", StringCodec).unwrap();
        assert_eq!(q.limits().await.unwrap(), Limits::none());
        q.set_limits(&Limits::none().max_size(3)).await.unwrap();
        assert_eq!(q.limits().await.unwrap(), Limits::none().max_size(3));
        // Ready values count as pending ones do.
        client.blocking_queue("full", StringCodec).unwrap().offer(&s("ready")).await.unwrap();
        q.offer(&s("a"), Duration::from_secs(600)).await.unwrap();
        q.offer_with_id("b", &s("b"), Duration::from_secs(600)).await.unwrap();
        let refused = q.offer(&s("c"), Duration::from_secs(600)).await.unwrap_err();
        assert_eq!(refusal(refused), Refusal::MaxSize { limit: 3, size: 3, offered: 1 });
        let by_id = q.offer_with_id("d", &s("d"), Duration::from_secs(600)).await.unwrap_err();
        assert!(matches!(refusal(by_id), Refusal::MaxSize { .. }));
        // A replacement takes its old element's place: admitted.
        assert!(!q.replace_with_id("b", &s("b2"), Duration::from_secs(600)).await.unwrap());
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{full}").await, 2);
        assert_eq!(raw.llen("full").await, 1);
        // Removing the limit admits again.
        q.set_limits(&Limits::none()).await.unwrap();
        q.offer(&s("c"), Duration::from_secs(600)).await.unwrap();
        assert_eq!(q.len().await.unwrap(), 3);
    }
}

redis_test! {
    async fn a_payload_over_the_limit_is_refused_with_its_length(client) {
        let q = client.delayed_queue("payloads", BytesCodec).unwrap();
        q.set_limits(&Limits::none().max_payload(8 * 1024)).await.unwrap();
        let large = bytes::Bytes::from(vec![7u8; 10 * 1024 + 3]);
        let refused = q.offer(&large, Duration::ZERO).await.unwrap_err();
        assert_eq!(refusal(refused), Refusal::MaxPayload { limit: 8192, size: 10 * 1024 + 3 });
        let at_limit = bytes::Bytes::from(vec![7u8; 8 * 1024]);
        q.offer(&at_limit, Duration::from_secs(600)).await.unwrap();
        // Both layouts are measured by their payload alone.
        let legacy = q.clone().with_format(delayq::format::Format::Legacy);
        legacy.offer(&at_limit, Duration::from_secs(600)).await.unwrap();
        assert!(legacy.offer(&large, Duration::from_secs(600)).await.is_err());
        assert_eq!(q.len().await.unwrap(), 2);
    }
}

redis_test! {
    async fn offers_switched_off_refuse_every_kind_of_offer(client) {
        let q = client.delayed_queue("closed", StringCodec).unwrap();
        q.set_limits(&Limits::none().offers(false)).await.unwrap();
        assert_eq!(refusal(q.offer(&s("a"), Duration::ZERO).await.unwrap_err()), Refusal::OffersOff);
        assert_eq!(
            refusal(q.offer_with_id("x", &s("a"), Duration::ZERO).await.unwrap_err()),
            Refusal::OffersOff
        );
        assert_eq!(
            refusal(q.offer_all([(s("a"), Duration::ZERO), (s("b"), Duration::ZERO)]).await.unwrap_err()),
            Refusal::OffersOff
        );
        assert_eq!(q.len().await.unwrap(), 0);
        q.set_limits(&Limits::none().offers(true)).await.unwrap();
        q.offer(&s("a"), Duration::from_secs(600)).await.unwrap();
        assert_eq!(q.len().await.unwrap(), 1);
    }
}

redis_test! {
    async fn a_bulk_offer_past_the_size_says_exactly_which_values_landed(client) {
        let q = client.delayed_queue("bulk", StringCodec).unwrap();
        q.set_limits(&Limits::none().max_size(260)).await.unwrap();
        // Two chunks (250 values each at most): the refusal falls in the second.
        let values: Vec<String> = (0..300).map(|i| format!("v{i}")).collect();
        let error = q
            .offer_all(values.iter().map(|v| (v, Duration::from_secs(600))))
            .await
            .unwrap_err();
        match error {
            Error::PartlyOffered { offered, unknown, source, .. } => {
                assert_eq!((offered, unknown), (260, 0));
                // Measured as the second chunk ran: 250 queued, 50 offered.
                assert_eq!(refusal(*source), Refusal::MaxSize { limit: 260, size: 250, offered: 50 });
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(q.read_all().await.unwrap(), values[..260]);
    }
}

redis_test! {
    /// The queue's 'offered' total counts what landed: a refused offer, a
    /// refused offer with an id and the refused tail of a bulk offer count
    /// nothing; a replacement admitted in a full queue counts its offer.
    async fn refused_offers_count_nothing_in_the_queues_totals(client) {
        let q = client.delayed_queue("counted", StringCodec).unwrap().without_transfer();
        q.set_limits(&Limits::none().max_size(260)).await.unwrap();
        let values: Vec<String> = (0..300).map(|i| format!("v{i}")).collect();
        let error = q
            .offer_all(values.iter().map(|v| (v, Duration::from_secs(600))))
            .await
            .unwrap_err();
        assert!(matches!(error, Error::PartlyOffered { offered: 260, .. }), "{error:?}");
        assert_eq!(q.status().await.unwrap().totals.offered, 260);
        q.set_limits(&Limits::none().max_size(261)).await.unwrap();
        assert!(q.offer_with_id("a", &s("a"), Duration::from_secs(600)).await.unwrap());
        let full = q.offer(&s("b"), Duration::from_secs(600)).await.unwrap_err();
        assert!(matches!(refusal(full), Refusal::MaxSize { .. }));
        assert!(q.offer_with_id("c", &s("c"), Duration::from_secs(600)).await.is_err());
        assert!(!q.replace_with_id("a", &s("a2"), Duration::from_secs(600)).await.unwrap());
        q.set_limits(&Limits::none().offers(false)).await.unwrap();
        assert_eq!(refusal(q.offer(&s("d"), Duration::ZERO).await.unwrap_err()), Refusal::OffersOff);
        assert_eq!(q.len().await.unwrap(), 261);
        assert_eq!(q.status().await.unwrap().totals.offered, 262, "260 + a + its replacement");
    }
}

redis_test! {
    async fn joined_offers_are_admitted_as_if_each_went_alone(client) {
        let q = client.delayed_queue("joined", BytesCodec).unwrap();
        q.set_limits(&Limits::none().max_size(10).max_payload(100)).await.unwrap();
        // Concurrent offers join into runs; one payload is too large, and
        // only 10 fit: every other offer gets its own answer.
        let mut offers = Vec::new();
        for i in 0..30u8 {
            let q = q.clone();
            let len = if i == 3 { 101 } else { 10 };
            offers.push(tokio::spawn(async move {
                q.offer(&bytes::Bytes::from(vec![i; len]), Duration::from_secs(600)).await
            }));
        }
        let (mut queued, mut full, mut large) = (0, 0, 0);
        for offer in offers {
            match offer.await.unwrap() {
                Ok(()) => queued += 1,
                Err(e) => match refusal(e) {
                    Refusal::MaxSize { .. } => full += 1,
                    Refusal::MaxPayload { size: 101, .. } => large += 1,
                    other => panic!("{other:?}"),
                },
            }
        }
        assert_eq!((queued, full, large), (10, 19, 1));
        assert_eq!(q.len().await.unwrap(), 10);
    }
}

redis_test! {
    async fn an_offer_told_to_wait_lands_once_there_is_room(client) {
        let q = client.delayed_queue("waits", StringCodec).unwrap();
        q.set_limits(&Limits::none().max_size(1)).await.unwrap();
        let ready = client.blocking_queue("waits", StringCodec).unwrap();
        ready.offer(&s("first")).await.unwrap();
        let waiting = q.clone().when_full(WhenFull::Wait(Duration::from_secs(120)));
        let offer = tokio::spawn(async move { waiting.offer(&s("second"), Duration::from_secs(600)).await });
        // Refused while full; once the ready value is taken, it lands.
        let refused = q.offer(&s("other"), Duration::from_secs(600)).await.unwrap_err();
        assert!(matches!(refusal(refused), Refusal::MaxSize { .. }));
        assert!(!offer.is_finished());
        assert_eq!(ready.take().await.unwrap(), "first");
        offer.await.unwrap().unwrap();
        assert_eq!(q.read_all().await.unwrap(), [s("second")]);
        // A wait that ends gives the refusal up.
        let short = q.clone().when_full(WhenFull::Wait(Duration::from_millis(50)));
        assert!(matches!(refusal(short.offer(&s("x"), Duration::ZERO).await.unwrap_err()), Refusal::MaxSize { .. }));
        // Other refusals never wait.
        q.set_limits(&Limits::none().offers(false)).await.unwrap();
        let long = q.clone().when_full(WhenFull::Wait(Duration::from_secs(3_600)));
        assert_eq!(refusal(long.offer(&s("x"), Duration::ZERO).await.unwrap_err()), Refusal::OffersOff);
    }
}

redis_test! {
    async fn takes_switched_off_hold_reliable_consumers_and_lose_nothing(client, raw) {
        let delayed = client.delayed_queue("held", StringCodec).unwrap();
        let ready = client.blocking_queue("held", StringCodec).unwrap();
        let jobs = client.reliable_queue("held", StringCodec).unwrap();
        delayed.set_limits(&Limits::none().takes(false)).await.unwrap();
        ready.offer_all([s("a"), s("b")]).await.unwrap();
        assert!(jobs.take_timeout(Duration::from_millis(2_500)).await.unwrap().is_none());
        assert!(jobs.take_many(5, Duration::from_millis(1_500)).await.unwrap().is_empty());
        assert_eq!(raw.llen("held").await, 2, "nothing taken");
        assert_eq!(ready.read_all().await.unwrap(), [s("a"), s("b")], "and in its order");
        // Offers still go on while takes are off.
        delayed.offer(&s("c"), Duration::ZERO).await.unwrap();
        delayed.set_limits(&Limits::none()).await.unwrap();
        let first = jobs.take_timeout(Duration::from_secs(20)).await.unwrap().expect("taken again");
        assert_eq!(first.value(), "a");
        first.ack().await.unwrap();
    }
}

redis_test! {
    async fn a_refusal_and_a_change_of_limits_are_events(client) {
        let q = client.delayed_queue("told", StringCodec).unwrap();
        client.enable_events(&q, 100).await.unwrap();
        q.set_limits(&Limits::none().max_size(0)).await.unwrap();
        q.set_limits(&Limits::none().max_size(0)).await.unwrap(); // unchanged: no second event
        assert!(q.offer(&s("a"), Duration::ZERO).await.is_err());
        let events: Vec<_> = client
            .events(&q)
            .unwrap()
            .from(EventsFrom::Oldest)
            .take(2)
            .map(|e| e.unwrap().kind)
            .collect()
            .await;
        assert_eq!(events[0], EventKind::LimitsSet { limits: s("max_size=0") });
        assert_eq!(
            events[1],
            EventKind::Refused { count: 1, reason: s("max_size 0 0 1"), id: None }
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limits_key_of_the_wrong_type_refuses_with_wrong_type_and_moves_nothing() {
    let redis = RedisServer::start().await;
    let client = redis.client().await;
    let raw = redis.raw().await;
    let q = client.delayed_queue("broken", StringCodec).unwrap();
    raw.cmd("SET", vec!["delayq_limits:{broken}".into(), "x".into()]).await;
    assert!(matches!(
        q.offer(&s("a"), Duration::ZERO).await.unwrap_err(),
        Error::WrongType { .. }
    ));
    assert_eq!(q.len().await.unwrap(), 0);
}

redis_test! {
    /// A resent offer whose first run filled the queue answers as that run
    /// did (its request key), not "refused" by its own value; a bulk offer's
    /// resent chunk likewise adds nothing and refuses nothing.
    async fn offers_whose_reply_is_lost_answer_as_their_first_run_under_limits(proxy, client, raw) {
        use delayq_test_support::fault_proxy::Fault;
        let q = client.delayed_queue("lost-limits", StringCodec).unwrap().without_transfer();
        // The scripts loaded first (a lost NOSCRIPT reply would be resent
        // before the script ever ran).
        let warm = client.delayed_queue("warmer", StringCodec).unwrap().without_transfer();
        warm.offer_with_id("w", &s("w"), Duration::from_secs(600)).await.unwrap();
        warm.offer_all([(s("w"), Duration::from_secs(600))]).await.unwrap();
        // Room for exactly the one offer: its resend finds the queue full.
        q.set_limits(&Limits::none().max_size(1)).await.unwrap();
        delayq_test_support::settled(&raw, "lost-limits").await;
        proxy.arm(Fault::LoseReply, "{lost-limits}");
        assert!(q.offer_with_id("a", &s("a"), Duration::from_secs(600)).await.unwrap());
        assert_eq!(proxy.fired(), 1);
        delayq_test_support::settled(&raw, "lost-limits").await;
        q.set_limits(&Limits::none().max_size(301)).await.unwrap();
        let values: Vec<String> = (0..300).map(|i| format!("v{i}")).collect();
        proxy.arm(Fault::LoseReply, "{lost-limits}");
        q.offer_all(values.iter().map(|v| (v, Duration::from_secs(600)))).await.unwrap();
        assert_eq!(proxy.fired(), 2);
        assert_eq!(q.len().await.unwrap(), 301);
        let refused = q.offer(&s("one more"), Duration::from_secs(600)).await.unwrap_err();
        assert_eq!(refusal(refused), Refusal::MaxSize { limit: 301, size: 301, offered: 1 });
        // Each value counted once, however many runs were sent; the refused
        // one not at all.
        assert_eq!(q.status().await.unwrap().totals.offered, 301);
    }
}
