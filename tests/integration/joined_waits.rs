//! Takes that wait for values of one queue in one client are joined into
//! `BLMPOP ... COUNT n`: each value still goes to exactly one take that
//! waits for it, a take cut short loses nothing, a lost reply loses at most
//! what that one wait popped, and a server without `BLMPOP` (Redis 6.2)
//! gets a `BLPOP` per take as before.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::prelude::*;
use delayq::{Client, LongCodec};

use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{assert_each_taken_once_or_left, deadline, eventually, redis_test, RawRedis, RedisServer};

async fn push(raw: &RawRedis, key: &str, values: impl IntoIterator<Item = i64>) {
    let values: Vec<String> = values.into_iter().map(|v| v.to_string()).collect();
    let _: i64 = raw.client.rpush(key, values).await.unwrap();
}

redis_test! {
    /// Eight takes through eight handles of one queue wait on an empty list:
    /// two waits block on the server and the other takes wait in line; eight
    /// values pushed at once reach the eight takes, one each, with fewer
    /// `BLMPOP`s than takes and no `BLPOP`.
    async fn takes_waiting_on_one_queue_are_served_together(raw, client) {
        let takers: Vec<_> = (0..8)
            .map(|_| {
                // A handle each: takes of a queue share their waits across handles.
                let q = client.blocking_queue("waits", LongCodec).unwrap();
                tokio::spawn(async move { q.take_timeout(Duration::from_secs(30)).await })
            })
            .collect();
        eventually(Duration::from_secs(20), "two waits blocked", || async {
            raw.info_field("clients", "blocked_clients").await == "2"
        })
        .await;
        // The six others get in line meanwhile.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(raw.info_field("clients", "blocked_clients").await, "2");
        push(&raw, "waits", 0..8).await;
        let mut got = Vec::new();
        for taker in takers {
            got.push(taker.await.unwrap().unwrap().expect("a value for every take"));
        }
        got.sort();
        assert_eq!(got, (0..8).collect::<Vec<i64>>());
        let (blmpops, blpops) = (raw.command_calls("blmpop").await, raw.command_calls("blpop").await);
        assert!((2..8).contains(&blmpops), "{blmpops} BLMPOPs for 8 waiting takes");
        assert_eq!(blpops, 0);
        assert_eq!(raw.llen("waits").await, 0);
    }
}

redis_test! {
    /// Values trickle in while sixteen takers wait with short timeouts, half of
    /// them also cut short at any moment: every value is taken exactly once or
    /// is still in the list.
    async fn joined_waits_cut_short_lose_nothing_and_never_share_a_value(raw, client) {
        const N: i64 = 2_000;
        let stop = Arc::new(AtomicBool::new(false));
        let takers: Vec<_> = (0..16)
            .map(|t| {
                let q = client.blocking_queue("trickle", LongCodec).unwrap();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    let mut tries = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        tries += 1;
                        let patience = if t % 2 == 0 && tries.is_multiple_of(2) {
                            Duration::from_micros(fastrand::u64(0..3_000))
                        } else {
                            Duration::from_secs(10)
                        };
                        let wait = Duration::from_millis(fastrand::u64(1..20));
                        match tokio::time::timeout(patience, q.take_timeout(wait)).await {
                            Ok(Ok(Some(v))) => got.push(v),
                            Ok(Ok(None)) | Err(_) => {}
                            // A wait of a few ms may end before a new
                            // connection for it opens, and says so.
                            Ok(Err(e)) if e.is_transient() => {}
                            Ok(Err(e)) => panic!("take failed: {e}"),
                        }
                    }
                    got
                })
            })
            .collect();
        let mut next = 0;
        while next < N {
            let n = fastrand::i64(1..=4).min(N - next);
            push(&raw, "trickle", next..next + n).await;
            next += n;
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
        eventually(Duration::from_secs(30), "the takers drained the list", || async {
            raw.llen("trickle").await == 0
        })
        .await;
        stop.store(true, Ordering::Relaxed);
        assert_each_taken_once_or_left(takers, &client.blocking_queue("trickle", LongCodec).unwrap(), N).await;
        let blmpops = raw.command_calls("blmpop").await;
        eprintln!("{blmpops} BLMPOPs for {N} values");
        assert!(blmpops > 0);
    }
}

redis_test! {
    /// A joined wait whose reply is lost: the values it popped are gone (plain
    /// takes are at most once, as with a lost `BLPOP`), its other takes go on
    /// waiting, and no value reaches two takes.
    async fn a_joined_wait_whose_reply_is_lost_loses_only_its_values(redis) {
        let proxy = FaultProxy::start(redis.port()).await;
        let client = Client::builder()
            .url(proxy.url())
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .unwrap();
        let raw = redis.raw().await;
        let monitor = redis.monitor().await;
        let takers: Vec<_> = (0..8)
            .map(|_| {
                let q = client.blocking_queue("wait-lost", LongCodec).unwrap();
                tokio::spawn(async move {
                    let (mut got, mut failed) = (Vec::new(), 0);
                    loop {
                        match q.take_timeout(Duration::from_secs(3)).await {
                            Ok(Some(v)) => got.push(v),
                            Ok(None) => return (got, failed),
                            // The take whose wait lost its reply may hear of it.
                            Err(e) if e.is_transient() => failed += 1,
                            Err(e) => panic!("take failed: {e}"),
                        }
                    }
                })
            })
            .collect();
        eventually(Duration::from_secs(20), "two waits blocked", || async {
            raw.info_field("clients", "blocked_clients").await == "2"
        })
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        proxy.arm(Fault::LoseReply, b"$6\r\nBLMPOP\r\n");
        push(&raw, "wait-lost", 0..400).await;
        let (mut taken, mut failures) = (Vec::new(), 0);
        for taker in takers {
            let (got, failed) = taker.await.unwrap();
            taken.extend(got);
            failures += failed;
        }
        assert_eq!(proxy.fired(), 1, "a wait's reply was lost");
        let mut unique = taken.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), taken.len(), "no value reached two takes");
        let counts: Vec<i64> = monitor
            .entries()
            .await
            .iter()
            .filter(|c| !c.from_lua && c.name() == "blmpop")
            .map(|c| String::from_utf8_lossy(&c.args[6]).parse().unwrap())
            .collect();
        let lost = 400 - taken.len() as i64;
        let largest = counts.iter().copied().max().unwrap();
        assert!(
            lost >= 1 && lost <= largest,
            "{lost} lost, largest BLMPOP count {largest}, {failures} takes told"
        );
        assert_eq!(raw.llen("wait-lost").await, 0);
    }
}

/// Redis before 7.0 has no `BLMPOP` (here: renamed away): the first refusal
/// turns joining off, and each take waits with a `BLPOP` of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_blmpop_each_take_waits_with_blpop() {
    deadline(async {
        let redis = RedisServer::start_with(&["--rename-command", "BLMPOP", ""]).await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let takers: Vec<_> = (0..4)
            .map(|_| {
                let q = client.blocking_queue("old-server", LongCodec).unwrap();
                tokio::spawn(async move { q.take_timeout(Duration::from_secs(30)).await })
            })
            .collect();
        eventually(Duration::from_secs(20), "four BLPOPs blocked", || async {
            raw.info_field("clients", "blocked_clients").await == "4"
        })
        .await;
        push(&raw, "old-server", 0..4).await;
        let mut got = Vec::new();
        for taker in takers {
            got.push(taker.await.unwrap().unwrap().expect("a value for every take"));
        }
        got.sort();
        assert_eq!(got, vec![0, 1, 2, 3]);
        assert!(raw.command_calls("blpop").await >= 4);
    })
    .await;
}

redis_test! {
    /// A wait that serves takes in line lasts no longer than the first of them
    /// waits: nothing is popped for a take whose time is up (it would be popped
    /// and pushed back to the head, behind other consumers' backs).
    async fn a_joined_wait_ends_when_the_first_take_it_serves_stops_waiting(redis, raw) {
        let client = redis
            .client_builder()
            .blocking_timeout(Duration::from_secs(2))
            .build()
            .await
            .unwrap();
        let q = client.blocking_queue("short", LongCodec).unwrap();
        // Two takes without a deadline hold both waits (rounds of 2 s)...
        let long: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.take().await })
            })
            .collect();
        eventually(Duration::from_secs(20), "two waits blocked", || async {
            raw.info_field("clients", "blocked_clients").await == "2"
        })
        .await;
        // ...and four that wait 3 s get in line: the next round serves them.
        let started = tokio::time::Instant::now();
        let short: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.take_timeout(Duration::from_secs(3)).await })
            })
            .collect();
        for take in short {
            assert_eq!(take.await.unwrap().unwrap(), None);
        }
        // Values come after the short takes have gone, while a round that
        // served them would still block.
        tokio::time::sleep_until(started + Duration::from_millis(3_500)).await;
        let scripts_before = raw.command_calls("evalsha").await;
        push(&raw, "short", 0..5).await;
        let mut got = Vec::new();
        for take in long {
            got.push(take.await.unwrap().unwrap());
        }
        got.sort();
        assert_eq!(got, vec![0, 1]);
        tokio::time::sleep(Duration::from_millis(500)).await;
        // Nothing was popped for the takes that had gone, so nothing given back.
        assert_eq!(raw.command_calls("evalsha").await, scripts_before);
        let left: Vec<i64> = raw.client.lrange("short", 0, -1).await.unwrap();
        assert_eq!(left, vec![2, 3, 4]);
    }
}
