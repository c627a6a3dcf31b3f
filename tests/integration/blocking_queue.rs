//! `BlockingQueue`: the destination list, read the way Java's RBlockingQueue reads it.

use std::time::{Duration, Instant};

use bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::{BytesCodec, Error, LongCodec, StringCodec};
use futures_util::StreamExt;

use delayq_test_support::{assert_each_taken_once_or_left, eventually, redis_test};

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    async fn take_waits_for_a_value_pushed_later(raw, client) {
        let q = client.blocking_queue("q", StringCodec).unwrap();
        let taker = tokio::spawn({
            let q = q.clone();
            async move { q.take().await }
        });
        // Longer than one server-side BLPOP timeout (1 s in tests): take keeps waiting.
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert!(!taker.is_finished());
        let _: i64 = raw.client.rpush("q", "hello").await.unwrap();
        assert_eq!(taker.await.unwrap().unwrap(), s("hello"));
    }
}

redis_test! {
    async fn a_blocked_take_never_blocks_other_commands(redis) {
        let client = redis.client_builder().pool_size(1).build().await.unwrap();
        let q = client.blocking_queue("q", StringCodec).unwrap();
        let delayed = client.delayed_queue("other", StringCodec).unwrap();
        let takers: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.take().await })
            })
            .collect();
        // The four takes wait on connections of their own, never the one
        // pooled connection: two blocked on the server at once (waits of a
        // queue are joined, see `joined_waits`), the other two in line.
        let raw = redis.raw().await;
        eventually(Duration::from_secs(20), "two waits blocked", || async {
            raw.info_field("clients", "blocked_clients").await == "2"
        })
        .await;
        // Meanwhile ordinary commands on the same client get their answers,
        // and the takes are still blocked: no command waited behind a take.
        for _ in 0..20 {
            delayed.offer(&s("x"), Duration::from_secs(60)).await.unwrap();
            assert_eq!(q.len().await.unwrap(), 0);
        }
        assert!(takers.iter().all(|t| !t.is_finished()));
        for i in 0..4 {
            q.offer(&format!("v{i}")).await.unwrap();
        }
        let mut got = Vec::new();
        for t in takers {
            got.push(t.await.unwrap().unwrap());
        }
        got.sort();
        assert_eq!(got, vec![s("v0"), s("v1"), s("v2"), s("v3")]);
    }
}

redis_test! {
    async fn poll_returns_none_after_its_timeout(client) {
        let q = client.blocking_queue("q", StringCodec).unwrap();
        let started = Instant::now();
        assert_eq!(q.take_timeout(Duration::from_millis(300)).await.unwrap(), None);
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(q.try_take().await.unwrap(), None);
        q.offer(&s("now")).await.unwrap();
        assert_eq!(q.try_take().await.unwrap(), Some(s("now")));
    }
}

redis_test! {
    /// Takes skip the `LPOP` before a wait while the list was found empty; a
    /// wait with no time left (`take_timeout(ZERO)`) must still look.
    async fn a_take_with_no_time_to_wait_still_finds_a_ready_value(client) {
        let q = client.blocking_queue("q", StringCodec).unwrap();
        assert_eq!(q.take_timeout(Duration::ZERO).await.unwrap(), None);
        for i in 0..8 {
            q.offer(&format!("v{i}")).await.unwrap();
            assert_eq!(
                q.take_timeout(Duration::ZERO).await.unwrap(),
                Some(format!("v{i}")),
                "a value was ready"
            );
            assert_eq!(q.take_timeout(Duration::ZERO).await.unwrap(), None);
        }
    }
}

redis_test! {
    async fn poll_from_any_reports_which_queue_had_the_value(client) {
        let a = client.blocking_queue("{g}a", LongCodec).unwrap();
        let b = client.blocking_queue("{g}b", LongCodec).unwrap();
        b.offer(&7).await.unwrap();
        assert_eq!(
            a.take_from_any(Duration::from_secs(2), &[&b]).await.unwrap(),
            Some((s("{g}b"), 7))
        );
        assert_eq!(a.take_from_any(Duration::from_millis(200), &[&b]).await.unwrap(), None);
    }
}

redis_test! {
    async fn take_last_and_offer_first_to_moves_atomically(raw, client) {
        let q = client.blocking_queue("{g}src", StringCodec).unwrap();
        q.offer_all([s("first"), s("last")]).await.unwrap();
        let _: i64 = raw.client.rpush("{g}dst", "old").await.unwrap();
        assert_eq!(q.take_last_and_offer_first_to("{g}dst").await.unwrap(), s("last"));
        assert_eq!(
            raw.lrange("{g}dst").await,
            vec![Bytes::from("last"), Bytes::from("old")]
        );
        assert_eq!(raw.lrange("{g}src").await, vec![Bytes::from("first")]);
    }
}

redis_test! {
    async fn drain_removes_up_to_max_in_order(client) {
        let q = client.blocking_queue("q", LongCodec).unwrap();
        q.offer_all(1..=5i64).await.unwrap();
        assert_eq!(q.len().await.unwrap(), 5);
        assert_eq!(q.drain(2).await.unwrap(), vec![1, 2]);
        assert_eq!(q.drain(usize::MAX).await.unwrap(), vec![3, 4, 5]);
        assert_eq!(q.drain(10).await.unwrap(), Vec::<i64>::new());
        assert!(q.is_empty().await.unwrap());
    }
}

redis_test! {
    async fn undecodable_values_are_errors_with_their_bytes_and_stay_in_the_queue(raw, client) {
        let q = client.blocking_queue("q", LongCodec).unwrap();
        let _: i64 = raw.client.rpush("q", vec!["12", "not-a-number", "13"]).await.unwrap();
        match q.drain(10).await {
            Err(Error::Decode(e)) => {
                assert_eq!(e.raw().as_ref(), b"not-a-number");
                assert_eq!(
                    e.batch(),
                    &[Bytes::from("12"), Bytes::from("not-a-number"), Bytes::from("13")]
                );
                assert!(e.restored());
            }
            other => panic!("expected a decode error, got {other:?}"),
        }
        // All three are back, in order.
        assert_eq!(
            raw.lrange("q").await,
            vec![Bytes::from("12"), Bytes::from("not-a-number"), Bytes::from("13")]
        );
        assert_eq!(q.take().await.unwrap(), 12);
        for _ in 0..2 {
            match q.take().await {
                Err(Error::Decode(e)) => {
                    assert_eq!(e.raw().as_ref(), b"not-a-number");
                    assert!(e.restored());
                }
                other => panic!("expected a decode error, got {other:?}"),
            }
        }
        assert!(matches!(
            q.take_timeout(Duration::from_secs(1)).await,
            Err(Error::Decode(_))
        ));
        assert!(matches!(q.try_take().await, Err(Error::Decode(_))));
        assert_eq!(
            raw.lrange("q").await,
            vec![Bytes::from("not-a-number"), Bytes::from("13")]
        );
    }
}

redis_test! {
    async fn stream_yields_values_as_they_arrive_and_ends_at_shutdown(client) {
        let q = client.blocking_queue("q", BytesCodec).unwrap();
        let mut stream = Box::pin(q.stream());
        let producer = {
            let q = q.clone();
            tokio::spawn(async move {
                for i in 0u8..3 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    q.offer(&Bytes::from(vec![i])).await.unwrap();
                }
            })
        };
        for i in 0u8..3 {
            assert_eq!(stream.next().await.unwrap().unwrap(), Bytes::from(vec![i]));
        }
        producer.await.unwrap();
        let shutdown = {
            let client = client.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                client.shutdown().await;
            })
        };
        assert!(
            stream.next().await.is_none(),
            "the stream ends when the client shuts down"
        );
        shutdown.await.unwrap();
        assert!(matches!(q.try_take().await, Err(Error::Shutdown)));
        assert!(matches!(
            client.delayed_queue::<Bytes, _>("x", BytesCodec),
            Err(Error::Shutdown)
        ));
    }
}

redis_test! {
    async fn a_take_survives_its_connection_being_killed(raw, client) {
        let q = client.blocking_queue("q", StringCodec).unwrap();
        let taker = tokio::spawn({
            let q = q.clone();
            async move { q.take().await }
        });
        delayq_test_support::eventually(Duration::from_secs(20), "take is blocked", || async {
            raw.info_field("clients", "blocked_clients").await == "1"
        })
        .await;
        // Cut every ordinary connection (the blocked one included) twice.
        for _ in 0..2 {
            assert!(raw.kill_clients("normal").await >= 1);
            delayq_test_support::eventually(Duration::from_secs(10), "take waits again", || async {
                raw.info_field("clients", "blocked_clients").await == "1"
            })
            .await;
        }
        assert!(!taker.is_finished());
        let _: i64 = raw.client.rpush("q", "after the cuts").await.unwrap();
        assert_eq!(taker.await.unwrap().unwrap(), s("after the cuts"));
    }
}

redis_test! {
    async fn a_cancelled_take_leaves_no_blocked_pop_behind_to_swallow_a_later_value(redis) {
        // A long server-side wait: a pop left blocked would outlive the test.
        let client = redis
            .client_builder()
            .blocking_timeout(Duration::from_secs(60))
            .build()
            .await
            .unwrap();
        let raw = redis.raw().await;
        let q = client.blocking_queue("cancelled", StringCodec).unwrap();
        let reliable = client.reliable_queue("cancelled", StringCodec).unwrap();
        for _ in 0..3 {
            assert!(tokio::time::timeout(Duration::from_millis(200), q.take())
                .await
                .is_err());
            assert!(tokio::time::timeout(Duration::from_millis(200), reliable.take())
                .await
                .is_err());
        }
        delayq_test_support::eventually(Duration::from_secs(20), "no client left blocked", || async {
            raw.info_field("clients", "blocked_clients").await == "0"
        })
        .await;
        q.offer(&"later".to_owned()).await.unwrap();
        assert_eq!(
            raw.lrange("cancelled").await,
            ["later"],
            "the value waits for the next take"
        );
        assert_eq!(q.take().await.unwrap(), "later");
    }
}

redis_test! {
    /// `tokio::time::timeout(take())` and `select!` cancel takes all the time; a
    /// value popped just as its take was cancelled must not vanish with the
    /// dropped reply. Values arrive every millisecond while takes are cancelled
    /// after random short waits: every value is taken once or still in the list.
    async fn values_popped_as_their_take_is_cancelled_are_not_lost(redis, raw, client) {
        let q = client.blocking_queue("racy", StringCodec).unwrap();
        const N: usize = 1_000;
        let producer = tokio::spawn({
            let raw = redis.raw().await;
            async move {
                for i in 0..N {
                    let _: i64 = raw.client.rpush("racy", format!("v-{i}")).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        });
        let mut taken = Vec::new();
        let mut cancelled = 0;
        while !producer.is_finished() {
            let wait = Duration::from_micros(fastrand::u64(0..3_000));
            match tokio::time::timeout(wait, q.take()).await {
                Ok(value) => taken.push(value.unwrap()),
                Err(_) => cancelled += 1,
            }
        }
        producer.await.unwrap();
        // Values popped for cancelled takes go back in the background.
        let taken_count = taken.len();
        delayq_test_support::eventually(
            Duration::from_secs(20),
            "every value taken or back in the list",
            || async { taken_count + raw.llen("racy").await >= N },
        )
        .await;
        let left = raw.lrange("racy").await;
        let mut all: Vec<String> = taken.clone();
        all.extend(left.iter().map(|b| String::from_utf8_lossy(b).into_owned()));
        all.sort();
        let before = all.len();
        all.dedup();
        eprintln!(
            "cancelled takes: {cancelled}, taken {}, given back and left in the list {}",
            taken.len(),
            left.len()
        );
        assert!(cancelled > 100, "the run must cancel takes ({cancelled})");
        assert_eq!(before, all.len(), "a value came twice");
        assert_eq!(all.len(), N, "values lost");
    }
}

redis_test! {
    /// The same with reliable takes: a value moved for a take that was cancelled
    /// goes back to the list at once (or, cancelled while being claimed, after
    /// its visibility timeout); every value is acked, none twice.
    scale async fn reliable_takes_cancelled_as_values_arrive_lose_nothing(redis, raw, client) {
        let q = client
            .reliable_queue("racy-r", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_secs(1))
            .with_max_deliveries(0);
        const N: usize = 1_000;
        let producer = tokio::spawn({
            let raw = redis.raw().await;
            async move {
                for i in 0..N {
                    let _: i64 = raw.client.rpush("racy-r", format!("v-{i}")).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        });
        let mut acked = std::collections::HashMap::<String, usize>::new();
        let mut cancelled = 0;
        let started = tokio::time::Instant::now();
        while acked.len() < N {
            assert!(
                started.elapsed() < Duration::from_secs(240),
                "only {} acked",
                acked.len()
            );
            let wait = if producer.is_finished() {
                Duration::from_secs(2)
            } else {
                Duration::from_micros(fastrand::u64(0..3_000))
            };
            match tokio::time::timeout(wait, q.take()).await {
                Ok(delivery) => {
                    let delivery = delivery.unwrap();
                    let value = delivery.value().clone();
                    if delivery.ack().await.unwrap() {
                        *acked.entry(value).or_default() += 1;
                    }
                }
                Err(_) => cancelled += 1,
            }
        }
        producer.await.unwrap();
        eprintln!("reliable: cancelled takes {cancelled}, {} acked", acked.len());
        assert!(cancelled > 100, "the run must cancel takes ({cancelled})");
        let twice: Vec<_> = acked.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "acked twice: {twice:?}");
        assert_eq!(raw.llen("racy-r").await, 0);
    }
}

redis_test! {
    /// A take or drain dropped right after sending its command puts back what
    /// the command popped.
    async fn takes_and_drains_dropped_in_flight_put_everything_back(raw, client) {
        use delayq_test_support::drop_in_flight;
        let q = client.blocking_queue("dropped", StringCodec).unwrap();
        let values: Vec<String> = (0..100).map(|i| format!("v-{i}")).collect();
        q.offer_all(values.iter().cloned()).await.unwrap();
        let (mut received, mut dropped) = (Vec::new(), 0);
        for round in 0..60 {
            let finished = if round % 2 == 0 {
                drop_in_flight(q.take()).await.map(|v| vec![v.unwrap()])
            } else {
                drop_in_flight(q.drain(3)).await.map(|v| v.unwrap())
            };
            match finished {
                Some(values) => received.extend(values),
                None => dropped += 1,
            }
            delayq_test_support::eventually(Duration::from_secs(20), "the values back", || async {
                received.len() + raw.llen("dropped").await == values.len()
            })
            .await;
        }
        // The last dropped command may still be on its way: a count taken
        // before it runs looks complete too. Let it land.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(dropped >= 30, "most calls were dropped in flight ({dropped})");
        // Nothing lost, nothing twice. (Order: a give-back can land after the
        // next call's pop, so only each call's own values keep theirs.)
        let left = raw.lrange("dropped").await;
        received.extend(left.iter().map(|b| String::from_utf8_lossy(b).into_owned()));
        received.sort();
        let mut expected = values.clone();
        expected.sort();
        assert_eq!(received, expected);
    }
}

redis_test! {
    /// Values popped for takes dropped just before a shutdown are back in the
    /// list when `shutdown()` returns: it waits for the give-backs before it
    /// closes the connections they use.
    async fn shutdown_waits_for_the_values_of_dropped_takes_to_be_back(raw, client) {
        use delayq_test_support::drop_in_flight;
        let q = client.blocking_queue("dropped-at-shutdown", StringCodec).unwrap();
        let values: Vec<String> = (0..50).map(|i| format!("v-{i}")).collect();
        q.offer_all(values.iter().cloned()).await.unwrap();
        let mut received = 0;
        let mut dropped = 0;
        for _ in 0..20 {
            match drop_in_flight(q.take()).await {
                Some(value) => received += usize::from(value.is_ok()),
                None => dropped += 1,
            }
        }
        client.shutdown().await;
        // No waiting here: shutdown has returned, so everything must be back.
        assert_eq!(
            received + raw.llen("dropped-at-shutdown").await,
            values.len(),
            "{dropped} dropped"
        );
    }
}

redis_test! {
    async fn java_read_and_remove_operations_work_on_the_ready_list(raw, client) {
        let q = client.blocking_queue("readable", StringCodec).unwrap();
        assert_eq!(q.peek().await.unwrap(), None);
        assert!(q.read_all().await.unwrap().is_empty());
        // Equal payloads from different producers are separate values.
        q.offer_all(["a", "b", "x", "c", "x", "x", "d"].map(s)).await.unwrap();
        assert_eq!(q.peek().await.unwrap(), Some(s("a")));
        assert_eq!(q.read_all().await.unwrap(), ["a", "b", "x", "c", "x", "x", "d"].map(s));
        assert_eq!(q.read_range(2, 3).await.unwrap(), ["x", "c", "x"].map(s));
        assert_eq!(q.read_range(6, usize::MAX).await.unwrap(), [s("d")]);
        assert!(q.read_range(100, 5).await.unwrap().is_empty());
        assert!(q.read_range(0, 0).await.unwrap().is_empty());
        assert!(q.contains(&s("c")).await.unwrap());
        assert!(!q.contains(&s("zz")).await.unwrap());
        // Nothing read was consumed.
        assert_eq!(q.len().await.unwrap(), 7);

        assert!(q.remove(&s("x")).await.unwrap());
        assert_eq!(q.read_all().await.unwrap(), ["a", "b", "c", "x", "x", "d"].map(s));
        assert!(!q.remove(&s("zz")).await.unwrap());
        assert_eq!(q.remove_all(["x", "a", "zz"].map(s)).await.unwrap(), 3);
        assert_eq!(q.read_all().await.unwrap(), ["b", "c", "d"].map(s));
        assert_eq!(q.remove_all(Vec::<String>::new()).await.unwrap(), 0);

        // A value that does not decode is an error, and stays where it is.
        let _: i64 = raw.client.lpush("readable", vec![0xffu8, 0xfe]).await.unwrap();
        assert!(matches!(q.peek().await, Err(Error::Decode(_))));
        assert!(matches!(q.read_all().await, Err(Error::Decode(_))));
        assert_eq!(q.len().await.unwrap(), 4);

        assert!(q.clear().await.unwrap());
        assert!(!q.clear().await.unwrap());
        assert!(q.is_empty().await.unwrap());
    }
}

redis_test! {
    async fn counts_are_bounded_zero_removes_nothing_and_huge_counts_are_capped(raw, client) {
        let q = client.blocking_queue("bounded", StringCodec).unwrap();
        q.offer_all(["a", "b", "c", "d", "e", "f"].map(s)).await.unwrap();
        // drain(0) used to become "-1" in the script and empty the list.
        assert!(q.drain(0).await.unwrap().is_empty());
        assert_eq!(raw.llen("bounded").await, 6);
        assert_eq!(q.drain(usize::MAX).await.unwrap().len(), 6);

        // One call removes at most 10,000 values.
        let many: Vec<Bytes> = (0..10_050).map(|i| Bytes::from(i.to_string())).collect();
        for chunk in many.chunks(1_000) {
            let _: i64 = raw.client.rpush("bounded", chunk.to_vec()).await.unwrap();
        }
        assert_eq!(q.drain(usize::MAX).await.unwrap().len(), 10_000);
        assert_eq!(raw.llen("bounded").await, 50);

        let delayed = client
            .delayed_queue("bounded-pending", StringCodec)
            .unwrap()
            .without_transfer();
        delayed
            .offer_all(["a", "b", "c"].map(|v| (s(v), Duration::from_secs(600))))
            .await
            .unwrap();
        assert!(delayed.remove_first_n(0).await.unwrap().is_empty());
        assert_eq!(pair(delayed.remove_pending(0).await.unwrap()), (0, 3));
        assert_eq!(
            delayed.remove_first_n(usize::MAX).await.unwrap(),
            ["a", "b", "c"].map(s)
        );
        assert_eq!(delayed.len().await.unwrap(), 0);

        let reliable = client.reliable_queue("bounded-dead", StringCodec).unwrap();
        let _: i64 = raw.client.rpush(reliable.keys().dead_letter(), "x").await.unwrap();
        assert_eq!(reliable.requeue_dead_letters(0).await.unwrap(), 0);
        assert_eq!(reliable.requeue_dead_letters(usize::MAX).await.unwrap(), 1);
    }
}

redis_test! {
    async fn a_poll_with_the_longest_timeout_waits_like_a_take(client) {
        let q = client.blocking_queue("forever", StringCodec).unwrap();
        let other = client.blocking_queue("forever-other", StringCodec).unwrap();
        q.offer(&s("now")).await.unwrap();
        assert_eq!(q.take_timeout(Duration::MAX).await.unwrap(), Some(s("now")));
        other.offer(&s("there")).await.unwrap();
        assert_eq!(
            q.take_from_any(Duration::MAX, &[&other]).await.unwrap(),
            Some((s("forever-other"), s("there")))
        );
    }
}

/// A purge as (removed, remaining).
fn pair(purged: delayq::report::Purged) -> (u64, u64) {
    (purged.removed, purged.remaining)
}

redis_test! {
    /// Concurrent takes of a queue in one process share `LPOP`s (eight pop at a
    /// time; those that wait meanwhile are served by one `LPOP key n`). Takes dropped
    /// at any point of that lose nothing and duplicate nothing, and every take
    /// that waits gets its own value.
    async fn concurrent_takes_share_pops_and_cancelled_ones_lose_nothing(raw, client) {
        let q = client.blocking_queue("q", LongCodec).unwrap();
        const N: i64 = 3_000;
        for chunk in (0..N).collect::<Vec<_>>().chunks(500) {
            let _: i64 = raw
                .client
                .rpush("q", chunk.iter().map(|v| v.to_string()).collect::<Vec<_>>())
                .await
                .unwrap();
        }
        let takers: Vec<_> = (0..32)
            .map(|t| {
                let q = q.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    let mut empty = 0;
                    let mut tries = 0;
                    while empty < 3 {
                        // Every third take of half the takers is cut short, for a
                        // while (a wait cut short holds a blocking connection).
                        tries += 1;
                        let patience = if t % 2 == 0 && tries % 3 == 0 && tries < 450 {
                            Duration::from_micros(fastrand::u64(0..400))
                        } else {
                            // Well past the take's own 200 ms: on a loaded machine a
                            // take that opens a connection can take longer, and one
                            // cut short every time would never see the list empty.
                            Duration::from_secs(10)
                        };
                        match tokio::time::timeout(patience, q.take_timeout(Duration::from_millis(200))).await {
                            Ok(Ok(Some(v))) => got.push(v),
                            Ok(Ok(None)) => empty += 1,
                            // A connection not opened in time on a loaded
                            // machine: the take failed, nothing was taken.
                            Ok(Err(e)) if e.is_transient() => {}
                            Ok(Err(e)) => panic!("take failed: {e}"),
                            Err(_) => {}
                        }
                    }
                    got
                })
            })
            .collect();
        // Values given back after the last takes ended are still in the list.
        assert_each_taken_once_or_left(takers, &q, N).await;
        let lpops = raw.command_calls("lpop").await;
        eprintln!("{lpops} LPOPs for {N} values");
        assert!(
            lpops > 0 && lpops < N / 2,
            "takes shared their LPOPs: {lpops} for {N} values"
        );
    }
}

redis_test! {
    /// Takes cut short at any moment of their wait, including while the
    /// connection they wait on is still being opened, leave no connection
    /// behind: each one cut short in the middle of opening used to stay open
    /// for good (fred's connection task outlived the dropped call).
    async fn takes_cut_short_while_their_connection_opens_leave_no_connection_behind(raw, client) {
        let q = client.blocking_queue("cut-short", LongCodec).unwrap();
        let clients = || async {
            raw.info_field("clients", "connected_clients")
                .await
                .parse::<usize>()
                .unwrap()
        };
        let before = clients().await;
        for i in 0..300u64 {
            let patience = Duration::from_micros(i * 17 % 3_000);
            let _ = tokio::time::timeout(patience, q.take_timeout(Duration::from_secs(5))).await;
        }
        // Closes happen in the background; a few idle connections may stay pooled.
        delayq_test_support::eventually(Duration::from_secs(60), "cut-short connections closed", || async {
            clients().await <= before + 4
        })
        .await;
    }
}
