//! Faults and reliable consumption: Redis restarts, cut connections, dying
//! consumers, several transferring processes, skewed clocks, shutdown.
//! Every wait is a condition with a deadline.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::{Error, LongCodec, StringCodec};
use parking_lot::Mutex;
use tokio::time::Instant;

use delayq_test_support::{deadline, eventually, now_ms, redis_test, RedisServer};

fn s(v: &str) -> String {
    v.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_element_survives_a_redis_restart_and_those_due_meanwhile_arrive_within_a_second() {
    deadline(async {
        let mut redis = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]).await;
        let client = redis.client().await;
        let q = client.delayed_queue("jobs", LongCodec).unwrap();
        let arrivals = Arc::new(Mutex::new(Vec::<(i64, Instant)>::new()));
        // Workers blocked in take() through the whole outage.
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let dest = q.destination();
                let arrivals = arrivals.clone();
                tokio::spawn(async move {
                    loop {
                        match dest.take().await {
                            Ok(v) => arrivals.lock().push((v, Instant::now())),
                            Err(Error::Shutdown) => return,
                            Err(e) => panic!("take failed: {e}"),
                        }
                    }
                })
            })
            .collect();
        // 0..10 due before the outage, 100..110 during it, 200..210 after it.
        let before: Vec<(i64, Duration)> = (0..10).map(|i| (i, Duration::from_millis(100))).collect();
        let during: Vec<(i64, Duration)> = (100..110)
            .map(|i| (i, Duration::from_millis(800 + (i as u64 - 100) * 50)))
            .collect();
        let after: Vec<(i64, Duration)> = (200..210).map(|i| (i, Duration::from_millis(6_000))).collect();
        let offered = now_ms();
        q.offer_all(before.iter().chain(&during).chain(&after).map(|(v, d)| (*v, *d)))
            .await
            .unwrap();
        eventually(Duration::from_secs(20), "the first ten arrive", || async {
            arrivals.lock().len() == 10
        })
        .await;

        redis.kill();
        let last_due_during = offered + 800 + 9 * 50;
        while now_ms() <= last_due_during + 200 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        redis.restart().await;
        let back = Instant::now();

        eventually(Duration::from_secs(15), "every element arrives", || async {
            arrivals.lock().len() == 30
        })
        .await;
        let arrivals = arrivals.lock().clone();
        let mut values: Vec<i64> = arrivals.iter().map(|(v, _)| *v).collect();
        values.sort();
        let expected: Vec<i64> = (0..10).chain(100..110).chain(200..210).collect();
        assert_eq!(values, expected, "each element exactly once");
        let slowest = arrivals
            .iter()
            .filter(|(v, _)| (100..110).contains(v))
            .map(|(_, at)| *at - back)
            .max()
            .unwrap();
        // Not a speed assertion (the figure is printed, ~1 s on an idle
        // machine): far below the 60 s resync, so the reconnection itself set
        // the transfer off.
        eprintln!("due during the outage: the last arrived {slowest:?} after Redis came back");
        assert!(
            slowest <= Duration::from_secs(10),
            "due during the outage, arrived {slowest:?} after Redis came back"
        );
        client.shutdown().await;
        for w in workers {
            w.await.unwrap();
        }
    })
    .await;
}

redis_test! {
    async fn ack_nack_and_delivery_counts(raw, client) {
        let q = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_max_deliveries(0);
        let plain = client.blocking_queue("jobs", StringCodec).unwrap();
        plain.offer_all([s("a"), s("b"), s("c")]).await.unwrap();

        let a = q.take().await.unwrap();
        assert_eq!((a.value().as_str(), a.delivery_count()), ("a", 1));
        // Claimed: out of the staging list, recorded as a delivery in flight.
        assert_eq!(raw.llen(q.keys().staging()).await, 0);
        assert_eq!(q.in_flight().await.unwrap(), 1);
        assert!(a.ack().await.unwrap());
        assert_eq!(raw.llen(q.keys().staging()).await, 0);
        assert_eq!(q.in_flight().await.unwrap(), 0);

        // nack at once: back to the tail, delivered again with a higher count.
        let b = q.take().await.unwrap();
        assert!(b.nack(Duration::ZERO).await.unwrap());
        assert_eq!(raw.lrange("jobs").await, vec![Bytes::from("c"), Bytes::from("b")]);
        let c = q.take().await.unwrap();
        assert_eq!(c.value(), "c");
        let b = q.take().await.unwrap();
        assert_eq!((b.value().as_str(), b.delivery_count()), ("b", 2));

        // nack with a delay: through the delayed queue, not before it is due.
        let nacked = Instant::now();
        assert!(b.nack(Duration::from_millis(400)).await.unwrap());
        let delayed = client.delayed_queue("jobs", StringCodec).unwrap();
        assert_eq!(delayed.read_all().await.unwrap(), vec![s("b")]);
        let b = q.take().await.unwrap();
        assert!(nacked.elapsed() >= Duration::from_millis(400));
        assert_eq!((b.value().as_str(), b.delivery_count()), ("b", 3));
        assert!(b.ack().await.unwrap());
        assert!(c.ack().await.unwrap());
        // A Java consumer beside us still sees a plain list.
        assert_eq!(raw.llen("jobs").await, 0);
    }
}

redis_test! {
    async fn an_unacked_delivery_returns_after_its_visibility_timeout_and_a_late_ack_says_so(raw, client) {
        let q = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_millis(300));
        push(&raw, "jobs", &["slow"]).await;
        let first = q.take().await.unwrap();
        let started = Instant::now();
        // Taken again under a long lease, so that a loaded machine's late
        // ack of the second delivery is still in time.
        let second = q.clone().with_visibility_timeout(Duration::from_secs(30)).take().await.unwrap();
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "returned after {:?}",
            started.elapsed()
        );
        assert_eq!((second.value().as_str(), second.delivery_count()), ("slow", 2));
        assert!(!first.ack().await.unwrap(), "too late: it was given back");
        assert!(second.ack().await.unwrap());

        // extend keeps a long delivery in flight: held 3.6 s on a 2 s timeout,
        // each extend for 5 s, so a loaded machine's late wake-up (a 600 ms
        // sleep that ran past a 1 s lease failed a full run) cannot let the
        // lease lapse between two extends.
        let q = q.with_visibility_timeout(Duration::from_secs(2));
        push(&raw, "jobs", &["long"]).await;
        let long = q.take().await.unwrap();
        for _ in 0..6 {
            tokio::time::sleep(Duration::from_millis(600)).await;
            assert!(long.extend(Duration::from_secs(5)).await.unwrap());
        }
        assert!(q.take_timeout(Duration::from_secs(2)).await.unwrap().is_none());
        assert!(long.ack().await.unwrap());
    }
}

redis_test! {
    async fn a_value_delivered_too_often_goes_to_the_dead_letter_list(raw, client) {
        let q = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_max_deliveries(3);
        push(&raw, "jobs", &["poison"]).await;
        for attempt in 1..=3 {
            let d = q.take().await.unwrap();
            assert_eq!((d.value().as_str(), d.delivery_count()), ("poison", attempt));
            // Dropping without settling gives it back (at once, in the background).
            drop(d);
        }
        // The fourth delivery goes to the dead-letter list instead of a consumer.
        assert!(q.take_timeout(Duration::from_secs(2)).await.unwrap().is_none());
        assert_eq!(q.dead_letters().await.unwrap(), vec![s("poison")]);
        assert_eq!(q.dead_letter_len().await.unwrap(), 1);
        assert_eq!(client.stats().dead_lettered, 1);
        assert_eq!(raw.llen("jobs").await, 0);
        assert_eq!(q.requeue_dead_letters(10).await.unwrap(), 1);
        let again = q.take().await.unwrap();
        assert_eq!((again.value().as_str(), again.delivery_count()), ("poison", 1));
        assert!(again.ack().await.unwrap());
    }
}

redis_test! {
    async fn a_value_moved_but_never_claimed_returns_after_the_grace_period(raw, client) {
        let q = client
            .reliable_queue("jobs", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_millis(300));
        // As if a consumer died right after its BLMOVE: the value sits in the
        // staging list with no delivery claiming it.
        let _: i64 = raw.client.rpush(q.keys().staging(), "orphan").await.unwrap();
        // Taken under a long lease (the short one sets the grace): a loaded
        // machine's late ack is still in time.
        let got = q
            .clone()
            .with_visibility_timeout(Duration::from_secs(30))
            .take_timeout(Duration::from_secs(5))
            .await
            .unwrap()
            .expect("the orphan comes back");
        assert_eq!(got.value(), "orphan");
        assert!(got.ack().await.unwrap());
        assert_eq!(raw.llen(q.keys().staging()).await, 0);
    }
}

redis_test! {
    async fn a_reliable_value_that_does_not_decode_is_given_back_and_dead_lettered_in_the_end(raw, client) {
        let q = client.reliable_queue("jobs", LongCodec).unwrap().with_max_deliveries(2);
        let _: i64 = raw.client.rpush("jobs", "not a number").await.unwrap();
        for _ in 0..2 {
            match q.take().await {
                Err(Error::Decode(e)) => {
                    assert_eq!(e.raw().as_ref(), b"not a number");
                    assert!(e.restored());
                }
                other => panic!("expected a decode error, got {other:?}"),
            }
        }
        // Long enough to open a blocking connection on a loaded machine.
        assert!(q.take_timeout(Duration::from_secs(2)).await.unwrap().is_none());
        assert_eq!(
            raw.lrange(q.keys().dead_letter()).await,
            vec![Bytes::from("not a number")]
        );
    }
}

/// Pushes values straight to a destination list, as a Java producer's RPUSH.
async fn push(raw: &delayq_test_support::RawRedis, queue: &str, values: &[&str]) {
    let values: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
    let _: i64 = raw.client.rpush(queue, values).await.unwrap();
}

/// What a soak run saw.
#[derive(Debug, Default)]
struct Soak {
    cuts: usize,
    delivered: HashMap<i64, usize>,
    acked: HashMap<i64, usize>,
}

redis_test! {
    // Ten thousand values through a hundred cuts: on a loaded 2-core machine
    // this takes minutes, hence the scale deadline.
    scale async fn reliable_consumers_lose_nothing_and_ack_nothing_twice_while_connections_are_cut(redis, raw, client) {
        const N: i64 = 10_000;
        let q = client
            .reliable_queue("soak", LongCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_secs(2))
            .with_max_deliveries(0);
        let producer = client.blocking_queue("soak", LongCodec).unwrap();
        for chunk in (0..N).collect::<Vec<_>>().chunks(1000) {
            producer.offer_all(chunk.iter().copied()).await.unwrap();
        }
        let soak = Arc::new(Mutex::new(Soak::default()));
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (q, soak) = (q.clone(), soak.clone());
                tokio::spawn(async move {
                    loop {
                        match q.take().await {
                            Ok(d) => {
                                let v = *d.value();
                                *soak.lock().delivered.entry(v).or_default() += 1;
                                match d.ack().await {
                                    Ok(true) => *soak.lock().acked.entry(v).or_default() += 1,
                                    Ok(false) => {} // too late: it will be delivered again
                                    Err(e) if e.is_transient() => {}
                                    Err(e) => panic!("ack failed: {e}"),
                                }
                            }
                            Err(Error::Shutdown) => return,
                            Err(e) => panic!("take failed: {e}"),
                        }
                    }
                })
            })
            .collect();
        // Cut every consumer connection, again and again, while values flow:
        // a hundred times (the pace of the consumers between cuts depends on
        // the machine, so the count is fixed, not the time).
        let killer = {
            let (raw, soak) = (redis.raw().await, soak.clone());
            tokio::spawn(async move {
                for _ in 0..100 {
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    raw.kill_clients("normal").await;
                    soak.lock().cuts += 1;
                }
            })
        };
        let progress = std::env::var_os("SOAK_PROGRESS").is_some();
        eventually(Duration::from_secs(240), "all values acked", || async {
            let acked = soak.lock().acked.len() as i64;
            if progress {
                let dest = raw.llen("soak").await;
                let staging = raw.llen(q.keys().staging()).await;
                let inflight = raw.zcard(q.keys().leases()).await;
                eprintln!("acked {acked} dest {dest} staging {staging} inflight {inflight}");
            }
            acked == N
        })
        .await;
        killer.abort();
        // Let redeliveries of anything still in flight settle before counting.
        eventually(Duration::from_secs(10), "nothing left in flight", || async {
            q.in_flight().await.unwrap() == 0 && raw.llen(q.keys().staging()).await == 0 && raw.llen("soak").await == 0
        })
        .await;
        if progress {
            eprintln!("shutting down");
        }
        client.shutdown().await;
        if progress {
            eprintln!("shut down; joining workers");
        }
        for w in workers {
            w.await.unwrap();
        }
        let soak = soak.lock();
        let twice: Vec<_> = soak.acked.iter().filter(|&(_, &n)| n > 1).collect();
        let redelivered = soak.delivered.values().filter(|&&n| n > 1).count();
        eprintln!(
            "soak (reliable): {N} values, {} connection cuts, {} acked once, {} acked twice, {} lost, {} delivered more than once",
            soak.cuts,
            soak.acked.len(),
            twice.len(),
            N - soak.acked.len() as i64,
            redelivered
        );
        assert!(soak.cuts >= 3, "the run must actually cut connections");
        assert!(twice.is_empty(), "acked twice: {twice:?}");
        assert_eq!(soak.acked.len() as i64, N, "lost values");
    }
}

redis_test! {
    async fn plain_take_under_connection_cuts_is_at_most_once(raw, client) {
        const N: i64 = 10_000;
        let producer = client.blocking_queue("plain", LongCodec).unwrap();
        for chunk in (0..N).collect::<Vec<_>>().chunks(1000) {
            producer.offer_all(chunk.iter().copied()).await.unwrap();
        }
        let received = Arc::new(Mutex::new(HashMap::<i64, usize>::new()));
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (q, received) = (producer.clone(), received.clone());
                tokio::spawn(async move {
                    while let Ok(Some(v)) = q.take_timeout(Duration::from_secs(2)).await {
                        *received.lock().entry(v).or_default() += 1;
                    }
                })
            })
            .collect();
        let mut cuts = 0;
        while raw.llen("plain").await > 0 {
            tokio::time::sleep(Duration::from_millis(150)).await;
            raw.kill_clients("normal").await;
            cuts += 1;
        }
        for w in workers {
            w.await.unwrap();
        }
        assert_eq!(raw.llen("plain").await, 0);
        let received = received.lock();
        let lost = N - received.len() as i64;
        let duplicated = received.values().filter(|&&n| n > 1).count();
        eprintln!(
            "soak (plain take): {N} values, {cuts} connection cuts, {} received, {lost} lost, {duplicated} duplicated",
            received.len()
        );
        assert_eq!(duplicated, 0, "BLPOP never delivers twice");
    }
}

redis_test! {
    async fn shutdown_lets_handlers_finish_gives_back_the_rest_and_another_client_carries_on(redis) {
        let first = redis.client().await;
        let q = first.reliable_queue("jobs", LongCodec).unwrap();
        let values: Vec<String> = (0..20).map(|v| v.to_string()).collect();
        let _: i64 = redis.raw().await.client.rpush("jobs", values).await.unwrap();
        // Two handlers in flight: one finishes during the grace period, one never would.
        let quick = q.take().await.unwrap();
        let stuck = q.take().await.unwrap();
        let quick_handler = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            quick.ack().await.unwrap()
        });
        let shutdown = {
            let first = first.clone();
            tokio::spawn(async move { first.shutdown_within(Duration::from_millis(800)).await })
        };
        assert!(
            quick_handler.await.unwrap(),
            "a handler in flight acks during the grace period"
        );
        shutdown.await.unwrap();
        assert!(matches!(q.take().await, Err(Error::Shutdown)));
        let stuck_value = *stuck.value();
        drop(stuck);

        // A second client takes everything else, the stuck value included, once.
        let second = redis.client().await;
        let q2 = second.reliable_queue("jobs", LongCodec).unwrap();
        let mut seen = Vec::new();
        while let Some(d) = q2.take_timeout(Duration::from_millis(500)).await.unwrap() {
            seen.push(*d.value());
            assert!(d.ack().await.unwrap());
        }
        assert_eq!(seen.first(), Some(&stuck_value), "given back to the head of the queue");
        seen.sort();
        assert_eq!(seen, (1..20).collect::<Vec<i64>>());
    }
}

redis_test! {
    async fn oversized_payloads_are_rejected_before_anything_is_written(redis, raw) {
        let client = redis.client_builder().max_payload_size(1024).build().await.unwrap();
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let big = "x".repeat(2048);
        assert!(matches!(
            q.offer(&big, Duration::ZERO).await,
            Err(Error::PayloadTooLarge {
                size: 2048,
                limit: 1024
            })
        ));
        assert!(matches!(
            q.offer_all([(s("ok"), Duration::ZERO), (big.clone(), Duration::ZERO)])
                .await,
            Err(Error::PayloadTooLarge { .. })
        ));
        assert!(matches!(
            q.destination().offer(&big).await,
            Err(Error::PayloadTooLarge { .. })
        ));
        assert_eq!(raw.zcard(q.keys().timeout()).await, 0);
        assert_eq!(raw.llen("q").await, 0);
        // Empty payloads are valid: Redisson writes them (see the captured vectors).
        q.offer(&s(""), Duration::from_secs(60)).await.unwrap();
        assert_eq!(q.read_all().await.unwrap(), vec![s("")]);
    }
}

redis_test! {
    /// Reliable takes of ready values move them with `LMOVE` on the shared
    /// connections, leasing no dedicated connection; a take dropped right after
    /// sending its move puts the value back at the head of the queue: nothing
    /// lost, nothing twice, nothing left in the staging list.
    async fn reliable_takes_of_ready_values_dropped_in_flight_put_them_back(redis, raw, client) {
        use delayq_test_support::drop_in_flight;
        let monitor = redis.monitor().await;
        // A take dropped while claiming leaves its value leased; the reaper
        // returns it after this, once, at the end.
        let q = client
            .reliable_queue("dropped-r", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_secs(1));
        let keys = q.keys().clone();
        let values: Vec<String> = (0..100).map(|i| format!("v-{i}")).collect();
        let _: i64 = raw.client.rpush("dropped-r", values.clone()).await.unwrap();
        let (mut acked, mut dropped) = (Vec::new(), 0);
        for _ in 0..60 {
            match drop_in_flight(q.take()).await {
                Some(delivery) => {
                    let delivery = delivery.unwrap();
                    let value = delivery.value().clone();
                    assert!(delivery.ack().await.unwrap());
                    acked.push(value);
                }
                None => dropped += 1,
            }
            // A dropped move is undone in the background: the value is back
            // in the queue, or leased if the take was dropped while claiming.
            eventually(Duration::from_secs(20), "the value back or leased", || async {
                raw.llen(keys.staging()).await == 0
                    && acked.len() + raw.llen("dropped-r").await + raw.zcard(keys.leases()).await == values.len()
            })
            .await;
        }
        eventually(Duration::from_secs(20), "leased values back", || async {
            acked.len() + raw.llen("dropped-r").await == values.len()
        })
        .await;
        assert!(dropped >= 30, "most takes were dropped in flight ({dropped})");
        let entries = monitor.entries().await;
        let sent = |name: &str| entries.iter().filter(|c| !c.from_lua && c.name() == name).count();
        assert!(sent("lmove") > 0, "ready values are moved with LMOVE");
        assert_eq!(sent("blmove"), 0, "and never wait on a connection of their own");
        // A value moved for a dropped take is moved back by the take itself
        // (undo_move.lua); the reaper alone would also bring it back, later.
        let undo_move = delayq_test_support::script_sha1(include_str!("../../lua/undo_move.lua"));
        let undone = entries
            .iter()
            .filter(|c| !c.from_lua && c.name() == "evalsha" && c.args[1] == undo_move.as_bytes())
            .count();
        assert!(undone > 0, "dropped moves were undone ({dropped} dropped)");
        assert_eq!(raw.llen(keys.staging()).await, 0);
        assert_eq!(raw.zcard(keys.leases()).await, 0);
        let mut all = acked.clone();
        all.extend(
            raw.lrange("dropped-r")
                .await
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned()),
        );
        all.sort();
        let mut expected = values.clone();
        expected.sort();
        assert_eq!(all, expected, "{} acked, {dropped} dropped", acked.len());
    }
}
