//! Concurrent single offers to one queue share script runs: what Java sees
//! is what offering them one by one, in arrival order, leaves; an offer is
//! never added twice, and one whose caller stopped waiting before it was
//! sent is not added at all.

use std::time::{Duration, UNIX_EPOCH};

use delayq::{LongCodec, StringCodec};
use futures_util::future::join_all;

use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{now_ms, redis_test, Monitored, RawRedis};

/// Script runs sent by clients (not commands scripts ran) on `key`.
pub(crate) fn script_runs(entries: &[Monitored], key: &str) -> usize {
    entries
        .iter()
        .filter(|e| !e.from_lua && matches!(e.name().as_str(), "evalsha" | "eval"))
        .filter(|e| e.args.iter().any(|a| a == key.as_bytes()))
        .count()
}

/// Makes Redis hold every write for `ms`: the next offer stays in flight
/// that long, so the offers made meanwhile wait and are joined (on a loaded
/// machine an offer's reply can otherwise arrive before the next is made).
pub(crate) async fn hold_writes(raw: &RawRedis, ms: i64) {
    let reply = raw.cmd("CLIENT", vec!["PAUSE".into(), ms.into(), "WRITE".into()]).await;
    assert_eq!(reply.as_str().as_deref(), Some("OK"));
}

redis_test! {
    async fn concurrent_offers_share_script_runs_and_leave_what_offers_one_by_one_leave(redis, raw, client) {
        let q = client.delayed_queue("joined", LongCodec).unwrap().without_transfer();
        let keys = q.keys().clone();
        q.offer(&-1, Duration::from_secs(7200)).await.unwrap(); // scripts loaded, connected
        let monitor = redis.monitor().await;
        let base = now_ms() + 3_600_000;
        hold_writes(&raw, 300).await;
        // The first runs alone, the rest wait for it and go together. Due times fall as they rise in number, so
        // the last offered is the queue's head.
        let offers = (0..1_000i64).map(|i| {
            let at = UNIX_EPOCH + Duration::from_millis((base - i) as u64);
            let q = q.clone();
            async move { q.offer_at(&i, at).await }
        });
        for result in join_all(offers).await {
            result.unwrap();
        }
        let entries = monitor.entries().await;
        let runs = script_runs(&entries, keys.timeout());
        // One alone, then at most 250 a run: 1 + 4 (one by one: 1,000).
        assert_eq!(runs, 5, "script runs for 1,000 offers");
        // One publish per run whose elements hold the new head, not per offer.
        let publishes = entries.iter().filter(|e| e.from_lua && e.name() == "publish").count();
        assert!(publishes <= runs, "{publishes} publishes for {runs} runs");
        assert!(publishes >= 1, "the new head is published");

        // The pending list in arrival order, each element once, with its own score.
        let mut expected = vec![-1];
        expected.extend(0..1_000);
        assert_eq!(q.read_all().await.unwrap(), expected);
        // Pages go in due order: the first thousand are the joined offers.
        let page = q.pending_page(0, 1_000).await.unwrap();
        assert_eq!(page.len(), 1_000);
        for element in &page {
            let value = *element.value.as_ref().unwrap();
            assert!(value >= 0, "due order puts the joined offers first");
            let due = element.due.duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
            assert_eq!(due, base - value, "element {value}");
        }
        let zset = raw.zrange(keys.timeout()).await;
        assert_eq!(zset.len(), 1_001);
        // The head of the timeout set is the last one offered (due first).
        assert_eq!(delayq::format::unpack(&zset[0].0).unwrap().payload, b"999");
    }
}

redis_test! {
    async fn equal_and_large_payloads_offered_at_once_each_arrive_once(client) {
        // Equal payloads from different jobs: each is its own element.
        let q = client.delayed_queue("joined-equal", StringCodec).unwrap();
        let same = "same".to_string();
        let offers = (0..300).map(|_| q.offer(&same, Duration::ZERO));
        for result in join_all(offers).await {
            result.unwrap();
        }
        let destination = q.destination();
        for _ in 0..300 {
            let taken = destination.take_timeout(Duration::from_secs(20)).await.unwrap();
            assert_eq!(taken.as_deref(), Some("same"));
        }
        assert_eq!(destination.try_take().await.unwrap(), None);
        assert_eq!(q.len().await.unwrap(), 0);

        // 40 payloads of 20 KB: several runs (each at most 256 KiB), every byte intact.
        let big = client
            .delayed_queue("joined-large", StringCodec)
            .unwrap()
            .without_transfer();
        let payload = |i: usize| format!("{i:04}").repeat(5_000);
        let offers = (0..40).map(|i| {
            let (big, value) = (big.clone(), payload(i));
            async move { big.offer(&value, Duration::from_secs(600)).await }
        });
        for result in join_all(offers).await {
            result.unwrap();
        }
        let expected: Vec<String> = (0..40).map(payload).collect();
        assert_eq!(big.read_all().await.unwrap(), expected);
    }
}

redis_test! {
    async fn a_joined_offer_whose_caller_stops_waiting_before_it_is_sent_is_not_added(raw, client) {
        let q = client
            .delayed_queue("joined-cancel", StringCodec)
            .unwrap()
            .without_transfer();
        q.offer(&"warm".to_string(), Duration::from_secs(600)).await.unwrap();
        // The first offer stays in flight, and the ones after it wait to be joined.
        hold_writes(&raw, 1_500).await;
        let first = tokio::spawn({
            let q = q.clone();
            async move { q.offer(&"first".to_string(), Duration::from_secs(600)).await }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        let gone = tokio::time::timeout(
            Duration::from_millis(200),
            q.offer(&"given-up".to_string(), Duration::from_secs(600)),
        )
        .await;
        assert!(gone.is_err(), "the joined offer was still waiting");
        let kept = tokio::spawn({
            let q = q.clone();
            async move { q.offer(&"kept".to_string(), Duration::from_secs(600)).await }
        });
        // The first offer's caller stops waiting too: its run is on its way
        // and lands; the offers that wait for it are sent all the same.
        tokio::time::sleep(Duration::from_millis(100)).await;
        first.abort();
        kept.await.unwrap().unwrap();
        let mut all = q.read_all().await.unwrap();
        all.sort();
        assert_eq!(all, vec!["first", "kept", "warm"]);
    }
}

redis_test! {
    async fn a_joined_run_whose_reply_is_lost_fails_each_of_its_offers_and_adds_each_once(redis, raw) {
        let proxy = FaultProxy::start(redis.port()).await;
        let client = delayq::Client::builder().url(proxy.url()).build().await.unwrap();
        let q = client
            .delayed_queue("joined-lost", StringCodec)
            .unwrap()
            .without_transfer();
        q.offer(&"warm".to_string(), Duration::from_secs(600)).await.unwrap();
        // The run that carries the joined offers (never the first, alone) loses its reply.
        proxy.arm(Fault::LoseReply, "joined-payload");
        hold_writes(&raw, 300).await;
        let (alone, joined) = ("alone".to_string(), "joined-payload".to_string());
        let mut offers = vec![q.offer(&alone, Duration::from_secs(600))];
        offers.extend((0..5).map(|_| q.offer(&joined, Duration::from_secs(600))));
        let results = join_all(offers).await;
        assert_eq!(proxy.fired(), 1);
        assert!(results[0].is_ok(), "{:?}", results[0]);
        for result in &results[1..] {
            let error = result
                .as_ref()
                .expect_err(&format!("each joined offer fails: {results:?}"));
            assert!(
                matches!(error, delayq::Error::OutcomeUnknown { .. }),
                "each says its outcome is unknown: {error:?}"
            );
        }
        // Redis ran the joined run once: each offer is there once, none twice.
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{joined-lost}").await, 7);
        let mut all = q.read_all().await.unwrap();
        all.sort();
        let mut expected = vec!["alone".to_string(), "warm".to_string()];
        expected.extend((0..5).map(|_| "joined-payload".to_string()));
        expected.sort();
        assert_eq!(all, expected);
    }
}
