//! Deduplication windows: an offer whose id (or payload) was offered within
//! the window is answered `Duplicate` and queues nothing, even after the
//! first value was taken; records expire by themselves (hash-field expiry
//! where the server has it, else an expiry set swept a bounded step per
//! offer); a resent offer answers as its first run.

use std::time::Duration;

use delayq::dedup::{Dedup, DedupKey, Offered};
use delayq::error::{Error, Refusal};
use delayq::events::{EventKind, EventsFrom};
use delayq::fred::types::Value;
use delayq::limits::Limits;
use delayq::{BytesCodec, StringCodec};
use futures_util::StreamExt;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test, RawRedis};

use crate::joined_offers::{hold_writes, script_runs};

const LONG: Duration = Duration::from_secs(600);

fn s(v: &str) -> String {
    v.to_owned()
}

/// Whether the server has hash-field expiry (Redis >= 7.4).
async fn has_field_expiry(raw: &RawRedis) -> bool {
    let found = raw
        .cmd("COMMAND", vec![Value::from("INFO"), Value::from("HPEXPIRE")])
        .await;
    matches!(found, Value::Array(entries) if entries.iter().any(|e| !matches!(e, Value::Null)))
}

async fn hlen(raw: &RawRedis, key: &str) -> i64 {
    match raw.cmd("HLEN", vec![key.into()]).await {
        Value::Integer(n) => n,
        other => panic!("{other:?}"),
    }
}

/// The server's clock in ms.
async fn server_ms(raw: &RawRedis) -> i64 {
    let Value::Array(parts) = raw.cmd("TIME", vec![]).await else {
        panic!("TIME")
    };
    let num = |v: &Value| v.as_string().unwrap().parse::<i64>().unwrap();
    num(&parts[0]) * 1000 + num(&parts[1]) / 1000
}

/// Waits until the record `field` of `queue` has expired: gone from the
/// hash (field expiry), or its time in the expiry set passed on the
/// server's clock. Polls; asserts no timing.
async fn wait_expired(raw: &RawRedis, queue: &str, field: &str) {
    let (hash, expiry) = (
        format!("delayq_dedup:{{{queue}}}"),
        format!("delayq_dedup_expiry:{{{queue}}}"),
    );
    eventually(Duration::from_secs(30), "the record expires", || async {
        let present = raw.cmd("HEXISTS", vec![hash.as_str().into(), field.into()]).await;
        if present == Value::Integer(0) {
            return true;
        }
        match raw.cmd("ZSCORE", vec![expiry.as_str().into(), field.into()]).await {
            Value::Null => false,
            score => {
                let at: f64 = score.as_string().unwrap().parse().unwrap();
                (at as i64) <= server_ms(raw).await
            }
        }
    })
    .await;
}

redis_test! {
    /// The window outlives the value: taken and gone, its id still refuses.
    async fn an_id_seen_within_the_window_is_a_duplicate_even_after_its_value_was_taken(client, raw) {
        let q = client.delayed_queue("dd-id", StringCodec).unwrap();
        let once = Dedup::by_id("order-1", LONG);
        assert_eq!(q.offer_dedup(&s("first"), Duration::ZERO, &once).await.unwrap(), Offered::Queued);
        assert_eq!(
            q.destination().take_timeout(Duration::from_secs(20)).await.unwrap(),
            Some(s("first"))
        );
        assert_eq!(q.len().await.unwrap(), 0);
        // Another payload under the same id: still the same offer.
        assert_eq!(q.offer_dedup(&s("second"), Duration::ZERO, &once).await.unwrap(), Offered::Duplicate);
        assert_eq!(q.len().await.unwrap(), 0);
        assert_eq!(raw.llen("dd-id").await, 0);
        // Another id is another offer.
        let other = Dedup::by_id("order-2", LONG);
        assert_eq!(q.offer_dedup(&s("second"), LONG, &other).await.unwrap(), Offered::Queued);
        assert_eq!(q.read_all().await.unwrap(), [s("second")]);
    }
}

redis_test! {
    /// Equal payloads under different ids are different offers; by payload,
    /// the second is a duplicate, however large (10 KiB and more).
    async fn equal_payloads_count_as_one_offer_by_payload_and_as_two_by_id(client) {
        let q = client.delayed_queue("dd-payload", BytesCodec).unwrap().without_transfer();
        let large = bytes::Bytes::from((0..10 * 1024 + 7).map(|i| (i % 251) as u8).collect::<Vec<u8>>());
        let a = q.offer_dedup(&large, LONG, &Dedup::by_id("a", LONG)).await.unwrap();
        let b = q.offer_dedup(&large, LONG, &Dedup::by_id("b", LONG)).await.unwrap();
        assert_eq!((a, b), (Offered::Queued, Offered::Queued));
        assert_eq!(q.len().await.unwrap(), 2);
        let by_payload = Dedup::by_payload(LONG);
        assert_eq!(q.offer_dedup(&large, LONG, &by_payload).await.unwrap(), Offered::Queued);
        assert_eq!(q.offer_dedup(&large, LONG, &by_payload).await.unwrap(), Offered::Duplicate);
        // One byte differs: another payload.
        let mut changed = large.to_vec();
        changed[10 * 1024] ^= 1;
        assert_eq!(
            q.offer_dedup(&bytes::Bytes::from(changed), LONG, &by_payload).await.unwrap(),
            Offered::Queued
        );
        assert_eq!(q.len().await.unwrap(), 4);
    }
}

redis_test! {
    /// A window that ends admits the same id again; the record's expiry is
    /// waited for by polling the server, never by a timing assumption.
    async fn an_id_is_admitted_again_once_its_window_ended(client, raw) {
        let q = client.delayed_queue("dd-ends", StringCodec).unwrap().without_transfer();
        let short = Dedup::by_id("tick", Duration::from_millis(200));
        assert_eq!(q.offer_dedup(&s("1"), LONG, &short).await.unwrap(), Offered::Queued);
        wait_expired(&raw, "dd-ends", "i:tick").await;
        assert_eq!(q.offer_dedup(&s("2"), LONG, &short).await.unwrap(), Offered::Queued);
        // The new record holds a new window: a third offer made at once is
        // a duplicate unless that window ended already (then it is queued).
        let third = q.offer_dedup(&s("3"), LONG, &Dedup::by_id("tick", LONG)).await.unwrap();
        let expected = if q.len().await.unwrap() == 3 { Offered::Queued } else { Offered::Duplicate };
        assert_eq!(third, expected);
        assert!(q.read_all().await.unwrap().starts_with(&[s("1"), s("2")]));
    }
}

redis_test! {
    /// Without hash-field expiry, expired records are swept by the offers
    /// themselves, at most 100 per run whatever their number.
    async fn each_offer_sweeps_a_bounded_number_of_expired_records(client, raw) {
        let q = client.delayed_queue("dd-sweep", StringCodec).unwrap().without_transfer();
        let (hash, expiry) = ("delayq_dedup:{dd-sweep}", "delayq_dedup_expiry:{dd-sweep}");
        // 100,000 records that expired a minute ago.
        let past = server_ms(&raw).await - 60_000;
        for chunk in 0..10 {
            let mut hset = vec![Value::from(hash)];
            let mut zadd = vec![Value::from(expiry)];
            for i in chunk * 10_000..(chunk + 1) * 10_000 {
                let field = format!("i:old-{i}");
                hset.extend([Value::from(field.as_str()), Value::from("0123456789abcdef")]);
                zadd.extend([Value::from(past), Value::from(field)]);
            }
            raw.cmd("HSET", hset).await;
            raw.cmd("ZADD", zadd).await;
        }
        // An expired record does not refuse, even before it is swept.
        let again = Dedup::by_id("old-99999", LONG);
        assert_eq!(q.offer_dedup(&s("x"), LONG, &again).await.unwrap(), Offered::Queued);
        // The run wrote its own record (over one of the old ones, which
        // is not in the sweep any more) and removed 100 others.
        assert_eq!(hlen(&raw, hash).await, 100_000 - 100);
        let before = hlen(&raw, hash).await;
        assert_eq!(q.offer_dedup(&s("y"), LONG, &Dedup::by_id("new", LONG)).await.unwrap(), Offered::Queued);
        assert_eq!(before + 1 - hlen(&raw, hash).await, 100, "one offer removes 100");
        // The expiry set lost 200 entries; it holds the two new records
        // unless the server expires hash fields itself (then it lost the
        // rewritten record's entry too).
        let left = if has_field_expiry(&raw).await { 100_000 - 1 - 200 } else { 100_000 - 200 + 1 };
        assert_eq!(raw.zcard(expiry).await, left);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_expire_by_field_expiry_where_the_server_has_it() {
    let redis = delayq_test_support::RedisServer::start().await;
    let (client, raw) = (redis.client().await, redis.raw().await);
    if !has_field_expiry(&raw).await {
        eprintln!("note: this redis-server has no HPEXPIRE (Redis < 7.4): the field-expiry path is not tested here");
        client.shutdown().await;
        return;
    }
    let q = client
        .delayed_queue("dd-hexpire", StringCodec)
        .unwrap()
        .without_transfer();
    let _ = q.offer_dedup(&s("a"), LONG, &Dedup::by_id("a", LONG)).await.unwrap();
    let ttl = raw
        .cmd(
            "HPTTL",
            vec![
                "delayq_dedup:{dd-hexpire}".into(),
                "FIELDS".into(),
                1.into(),
                "i:a".into(),
            ],
        )
        .await;
    let Value::Array(ttl) = ttl else { panic!("{ttl:?}") };
    let ms = ttl[0].as_i64().unwrap();
    assert!(ms > 0 && ms <= 600_000, "{ms}");
    assert_eq!(raw.zcard("delayq_dedup_expiry:{dd-hexpire}").await, 0, "no expiry set");
    client.shutdown().await;
}

redis_test! {
    /// fred resends an offer whose reply was lost: the resend finds its own
    /// record and answers as the first run did, queuing nothing twice.
    async fn an_offer_whose_reply_is_lost_answers_as_its_first_run(proxy, client, raw) {
        let q = client.delayed_queue("dd-lost", StringCodec).unwrap().without_transfer();
        // A first offer loads the script: the lost reply is then a run's,
        // not a NOSCRIPT answered before anything ran.
        let warm = Dedup::by_id("warm", LONG);
        assert_eq!(q.offer_dedup(&s("warm"), LONG, &warm).await.unwrap(), Offered::Queued);
        let once = Dedup::by_id("lost-1", LONG);
        proxy.arm(Fault::LoseReply, "lost-dedup-payload");
        let answer = q.offer_dedup(&s("lost-dedup-payload"), LONG, &once).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(answer, Offered::Queued);
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{dd-lost}").await, 2);
        assert_eq!(q.offer_dedup(&s("again"), LONG, &once).await.unwrap(), Offered::Duplicate);
        // By payload too.
        let by_payload = Dedup::by_payload(LONG);
        proxy.arm(Fault::LoseReply, "lost-dedup-second");
        let answer = q.offer_dedup(&s("lost-dedup-second"), LONG, &by_payload).await.unwrap();
        assert_eq!((proxy.fired(), answer), (2, Offered::Queued));
        assert_eq!(
            q.read_all().await.unwrap(),
            [s("warm"), s("lost-dedup-payload"), s("lost-dedup-second")]
        );
    }
}

redis_test! {
    /// A resent run has no second side effect: a duplicate whose reply was
    /// lost, alone or beside a new value, is one `duplicate` event and one
    /// offered total, not two.
    async fn a_resent_offer_writes_its_events_once(proxy, client, raw) {
        let q = client.delayed_queue("dd-lost-told", StringCodec).unwrap().without_transfer();
        client.enable_events(&q, 100).await.unwrap();
        let first = Dedup::by_id("first", LONG);
        assert_eq!(q.offer_dedup(&s("first"), LONG, &first).await.unwrap(), Offered::Queued);
        // Alone: the run offers nothing, so no record of its own tells it.
        proxy.arm(Fault::LoseReply, "lost-alone");
        let answer = q.offer_dedup(&s("lost-alone"), LONG, &first).await.unwrap();
        assert_eq!((proxy.fired(), answer), (1, Offered::Duplicate));
        // Beside a new value, in one run.
        proxy.arm(Fault::LoseReply, "lost-beside");
        let items = [
            (s("lost-beside-new"), LONG, DedupKey::Id("new".into())),
            (s("lost-beside-dup"), LONG, DedupKey::Id("first".into())),
        ];
        let answers = q.offer_all_dedup(items, LONG).await.unwrap();
        assert_eq!(proxy.fired(), 2);
        assert_eq!(answers.iter().map(|a| a.is_duplicate()).collect::<Vec<_>>(), [false, true]);
        let stream = "delayq_events:{dd-lost-told}";
        let events: Vec<_> = client
            .events(&q)
            .unwrap()
            .from(EventsFrom::Oldest)
            .take(4)
            .map(|e| e.unwrap().kind)
            .collect()
            .await;
        assert_eq!(
            events,
            [
                EventKind::Offered { count: 1, id: None },
                EventKind::Duplicate { count: 1 },
                EventKind::Offered { count: 1, id: None },
                EventKind::Duplicate { count: 1 },
            ]
        );
        assert_eq!(raw.cmd("XLEN", vec![stream.into()]).await, Value::Integer(4), "no second events");
        let offered = raw.cmd("HGET", vec!["delayq_stats:{dd-lost-told}".into(), "offered".into()]).await;
        assert_eq!(offered.as_string().as_deref(), Some("2"));
        let duplicate = raw.cmd("HGET", vec!["delayq_stats:{dd-lost-told}".into(), "duplicate".into()]).await;
        assert_eq!(duplicate.as_string().as_deref(), Some("2"), "a duplicate total, each counted once");
        let totals = q.status().await.unwrap().totals;
        assert_eq!((totals.offered, totals.duplicates), (2, 2));
        assert_eq!(q.read_all().await.unwrap(), [s("first"), s("lost-beside-new")]);
    }
}

redis_test! {
    /// A bulk offer answers per value, across chunks, a repeat inside the
    /// call being a duplicate of its first.
    async fn a_bulk_offer_answers_each_value(client) {
        let q = client.delayed_queue("dd-bulk", StringCodec).unwrap().without_transfer();
        let window = LONG;
        assert_eq!(q.offer_dedup(&s("v7"), LONG, &Dedup::by_id("7", window)).await.unwrap(), Offered::Queued);
        // 600 values (three chunks); ids repeat every 400.
        let items: Vec<(String, Duration, DedupKey)> = (0..600)
            .map(|i| (format!("v{i}"), LONG, DedupKey::Id((i % 400).to_string())))
            .collect();
        let answers = q.offer_all_dedup(items.iter().cloned(), window).await.unwrap();
        assert_eq!(answers.len(), 600);
        for (i, answer) in answers.iter().enumerate() {
            let duplicate = i == 7 || i >= 400;
            assert_eq!(answer.is_duplicate(), duplicate, "value {i}");
        }
        assert_eq!(q.len().await.unwrap(), 1 + 399);
        // The same call again: all duplicates, nothing queued.
        let again = q.offer_all_dedup(items, window).await.unwrap();
        assert!(again.iter().all(|a| a.is_duplicate()));
        assert_eq!(q.len().await.unwrap(), 400);
    }
}

redis_test! {
    /// A duplicate is answered as such even in a full queue; a new value
    /// there is refused by the limits and records nothing.
    async fn limits_refuse_new_values_and_never_duplicates(client) {
        let q = client.delayed_queue("dd-full", StringCodec).unwrap().without_transfer();
        assert_eq!(q.offer_dedup(&s("a"), LONG, &Dedup::by_id("a", LONG)).await.unwrap(), Offered::Queued);
        q.set_limits(&Limits::none().max_size(1)).await.unwrap();
        assert_eq!(q.offer_dedup(&s("a"), LONG, &Dedup::by_id("a", LONG)).await.unwrap(), Offered::Duplicate);
        match q.offer_dedup(&s("b"), LONG, &Dedup::by_id("b", LONG)).await {
            Err(Error::OfferRefused { refusal: Refusal::MaxSize { .. }, .. }) => {}
            other => panic!("{other:?}"),
        }
        q.set_limits(&Limits::none()).await.unwrap();
        assert_eq!(q.offer_dedup(&s("b"), LONG, &Dedup::by_id("b", LONG)).await.unwrap(), Offered::Queued);
    }
}

redis_test! {
    /// A refused run's event counts the values the limits refused: its
    /// duplicates were never theirs to refuse.
    async fn a_refused_event_counts_no_duplicates(client) {
        let q = client.delayed_queue("dd-refused", StringCodec).unwrap().without_transfer();
        client.enable_events(&q, 100).await.unwrap();
        assert_eq!(q.offer_dedup(&s("a"), LONG, &Dedup::by_id("a", LONG)).await.unwrap(), Offered::Queued);
        q.set_limits(&Limits::none().max_size(1)).await.unwrap();
        let items = [
            (s("a again"), LONG, DedupKey::Id("a".into())),
            (s("a once more"), LONG, DedupKey::Id("a".into())),
            (s("b"), LONG, DedupKey::Id("b".into())),
        ];
        match q.offer_all_dedup(items, LONG).await {
            Err(Error::OfferRefused { refusal: Refusal::MaxSize { .. }, .. }) => {}
            other => panic!("{other:?}"),
        }
        let events: Vec<_> = client
            .events(&q)
            .unwrap()
            .from(EventsFrom::Oldest)
            .take(3)
            .map(|e| e.unwrap().kind)
            .collect()
            .await;
        assert_eq!(events[0], EventKind::Offered { count: 1, id: None });
        assert!(matches!(events[1], EventKind::LimitsSet { .. }), "{:?}", events[1]);
        assert!(matches!(events[2], EventKind::Refused { count: 1, .. }), "{:?}", events[2]);
    }
}

redis_test! {
    async fn duplicates_are_events(client) {
        let q = client.delayed_queue("dd-told", StringCodec).unwrap().without_transfer();
        client.enable_events(&q, 100).await.unwrap();
        let once = Dedup::by_payload(LONG);
        let _ = q.offer_dedup(&s("a"), LONG, &once).await.unwrap();
        let _ = q.offer_dedup(&s("a"), LONG, &once).await.unwrap();
        let events: Vec<_> = client
            .events(&q)
            .unwrap()
            .from(EventsFrom::Oldest)
            .take(2)
            .map(|e| e.unwrap().kind)
            .collect()
            .await;
        assert_eq!(events[0], EventKind::Offered { count: 1, id: None });
        assert_eq!(events[1], EventKind::Duplicate { count: 1 });
    }
}

redis_test! {
    async fn bad_windows_and_ids_are_refused_and_send_nothing(client) {
        let q = client.delayed_queue("dd-bad", StringCodec).unwrap().without_transfer();
        for dedup in [Dedup::by_id("", LONG), Dedup::by_payload(Duration::ZERO)] {
            assert!(matches!(
                q.offer_dedup(&s("a"), LONG, &dedup).await,
                Err(Error::InvalidArgument(_))
            ));
        }
        assert_eq!(q.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// Concurrent deduplicated offers share script runs as plain offers do,
    /// and answer as offering them one by one in arrival order would: of
    /// two offers under one id, the earlier is queued and the later is the
    /// duplicate; equal payloads under different ids are both queued.
    async fn concurrent_offers_share_runs_and_the_later_of_one_key_is_the_duplicate(redis, raw, client) {
        let q = client.delayed_queue("dd-joined", StringCodec).unwrap().without_transfer();
        let keys = q.keys().clone();
        let warm = Dedup::by_id("warm", LONG);
        assert_eq!(q.offer_dedup(&s("warm"), LONG, &warm).await.unwrap(), Offered::Queued);
        let monitor = redis.monitor().await;
        hold_writes(&raw, 300).await;
        // 1,000 offers: ids 0..500 twice each, every payload equal.
        let offers = (0..1_000).map(|i| {
            let q = q.clone();
            async move {
                let once = Dedup::by_id(format!("job-{}", i % 500), LONG);
                q.offer_dedup(&s("same payload"), LONG, &once).await.unwrap()
            }
        });
        let answers = futures_util::future::join_all(offers).await;
        for (i, answer) in answers.iter().enumerate() {
            let expected = if i < 500 { Offered::Queued } else { Offered::Duplicate };
            assert_eq!(*answer, expected, "offer {i}");
        }
        let runs = script_runs(&monitor.entries().await, keys.timeout());
        // One alone, then at most 250 a run: 1 + 4 (one by one: 1,000).
        assert_eq!(runs, 5, "script runs for 1,000 offers");
        assert_eq!(q.len().await.unwrap(), 501);
        let totals = q.status().await.unwrap().totals;
        assert_eq!((totals.offered, totals.duplicates), (501, 500));
    }
}

redis_test! {
    /// Offers with different windows go in different runs, each record
    /// kept for its own window.
    async fn offers_with_different_windows_keep_their_own_windows(raw, client) {
        if has_field_expiry(&raw).await {
            eprintln!("this server has hash-field expiry: the expiry set is not used, skipped");
            return;
        }
        let q = client.delayed_queue("dd-windows", StringCodec).unwrap().without_transfer();
        let warm = q.offer_dedup(&s("warm"), LONG, &Dedup::by_id("warm", LONG)).await.unwrap();
        assert_eq!(warm, Offered::Queued);
        hold_writes(&raw, 300).await;
        let (short, long) = (Duration::from_secs(60), Duration::from_secs(6_000));
        let offers = (0..40).map(|i| {
            let q = q.clone();
            let window = if i % 2 == 0 { short } else { long };
            async move { q.offer_dedup(&s("v"), LONG, &Dedup::by_id(format!("w-{i}"), window)).await.unwrap() }
        });
        let answers = futures_util::future::join_all(offers).await;
        assert!(answers.iter().all(|a| *a == Offered::Queued), "{answers:?}");
        let now = server_ms(&raw).await;
        for i in 0..40 {
            let score = raw
                .cmd("ZSCORE", vec!["delayq_dedup_expiry:{dd-windows}".into(), format!("i:w-{i}").into()])
                .await;
            let expiry: i64 = score.as_string().unwrap().parse().unwrap();
            let window = if i % 2 == 0 { short } else { long };
            let left = expiry - now;
            assert!(left > 0 && left <= window.as_millis() as i64, "w-{i}: {left} ms left of {window:?}");
            assert!(left > window.as_millis() as i64 - 50_000, "w-{i}: {left} ms left of {window:?}");
        }
    }
}

redis_test! {
    /// A joined run whose reply is lost is resent by fred and answers as
    /// its first run: each value is queued once, and of two offers under
    /// one id in that run the later is still the duplicate.
    async fn a_joined_run_whose_reply_is_lost_answers_each_offer_as_its_first_run(proxy, client, raw) {
        let q = client.delayed_queue("dd-joined-lost", StringCodec).unwrap().without_transfer();
        let warm = Dedup::by_id("warm", LONG);
        assert_eq!(q.offer_dedup(&s("warm"), LONG, &warm).await.unwrap(), Offered::Queued);
        // The run that carries the joined offers (never the first, alone) loses its reply.
        proxy.arm(Fault::LoseReply, "joined-lost-payload");
        hold_writes(&raw, 300).await;
        let (alone_value, alone_key) = (s("alone"), Dedup::by_id("alone", LONG));
        let alone = q.offer_dedup(&alone_value, LONG, &alone_key);
        let joined = (0..6).map(|i| {
            let q = q.clone();
            async move {
                let once = Dedup::by_id(format!("j-{}", i % 3), LONG);
                q.offer_dedup(&s("joined-lost-payload"), LONG, &once).await
            }
        });
        let (alone, joined) = tokio::join!(alone, futures_util::future::join_all(joined));
        assert_eq!(alone.unwrap(), Offered::Queued);
        assert_eq!(proxy.fired(), 1);
        let answers: Vec<Offered> = joined.into_iter().map(|a| a.unwrap()).collect();
        assert_eq!(
            answers,
            [
                Offered::Queued,
                Offered::Queued,
                Offered::Queued,
                Offered::Duplicate,
                Offered::Duplicate,
                Offered::Duplicate
            ]
        );
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{dd-joined-lost}").await, 5);
        let totals = q.status().await.unwrap().totals;
        assert_eq!((totals.offered, totals.duplicates), (5, 3), "counted once");
    }
}
