//! Lost requests and lost replies: a proxy between delayq and Redis lets a
//! command run and drops its answer (or drops the command), then cuts the
//! connection; fred resends what it did not hear back about. Every operation
//! that removes or gives back values must come out of that with nothing lost,
//! nothing duplicated, and an error only where the outcome cannot be known.

use std::time::Duration;

use delayq::fred::prelude::*;
use delayq::fred::types::{ClusterHash, CustomCommand, Value};
use delayq::{LongCodec, StringCodec};

use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{behind_proxy, bytes, deadline, eventually, redis_test, settled, wait_for, without_resends};

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

redis_test! {
    async fn drain_returns_what_it_removed_when_its_reply_or_request_is_lost(proxy, client, raw) {
        for (fault, queue) in [(Fault::LoseReply, "drain-reply"), (Fault::LoseRequest, "drain-request")] {
            let _: i64 = raw
                .client
                .rpush(queue, bytes(&["a", "b", "c", "d", "e", "f"]))
                .await
                .unwrap();
            let q = client.blocking_queue(queue, StringCodec).unwrap();
            // Warm the script cache, so the faulted call is the script itself.
            assert_eq!(q.drain(1).await.unwrap(), strings(&["a"]));
            settled(&raw, queue).await;
            proxy.arm(fault, queue);
            let drained = q.drain(3).await.unwrap();
            assert_eq!(proxy.fired(), if fault == Fault::LoseReply { 1 } else { 2 });
            assert_eq!(drained, strings(&["b", "c", "d"]), "{fault:?}");
            assert_eq!(raw.lrange(queue).await, bytes(&["e", "f"]), "{fault:?}");
        }
        // Every stored reply is replaced by a small mark once read.
        for queue in ["drain-reply", "drain-request"] {
            settled(&raw, queue).await;
        }
    }
}

redis_test! {
    async fn poll_many_returns_what_it_removed_when_its_reply_is_lost(proxy, client, raw) {
        let delayed = client
            .delayed_queue("poll-lost", StringCodec)
            .unwrap()
            .without_transfer();
        for v in ["a", "b", "c", "d", "e", "f", "g"] {
            delayed.offer(&v.to_string(), Duration::from_secs(600)).await.unwrap();
        }
        assert_eq!(delayed.remove_first().await.unwrap(), Some("a".to_string()));
        settled(&raw, "poll-lost").await;
        proxy.arm(Fault::LoseReply, "{poll-lost}");
        assert_eq!(delayed.remove_first_n(2).await.unwrap(), strings(&["b", "c"]));
        assert_eq!(proxy.fired(), 1);
        assert_eq!(raw.llen("redisson_delay_queue:{poll-lost}").await, 4);
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{poll-lost}").await, 4);
        assert_eq!(delayed.read_all().await.unwrap(), strings(&["d", "e", "f", "g"]));
    }
}

redis_test! {
    async fn remove_of_one_of_equal_values_removes_one_when_its_reply_is_lost(proxy, client, raw) {
        let delayed = client
            .delayed_queue("remove-lost", StringCodec)
            .unwrap()
            .without_transfer();
        // Equal payloads from different jobs: a resent remove would take two.
        for v in ["warm", "x", "x", "x", "y"] {
            delayed.offer(&v.to_string(), Duration::from_secs(600)).await.unwrap();
        }
        assert!(delayed.remove(&"warm".to_string()).await.unwrap());
        settled(&raw, "remove-lost").await;
        proxy.arm(Fault::LoseReply, "{remove-lost}");
        assert!(delayed.remove(&"x".to_string()).await.unwrap());
        assert_eq!(proxy.fired(), 1);
        assert_eq!(delayed.read_all().await.unwrap(), strings(&["x", "x", "y"]));

        settled(&raw, "remove-lost").await;
        proxy.arm(Fault::LoseReply, "{remove-lost}");
        assert_eq!(pair(delayed.remove_pending(2).await.unwrap()), (2, 1));
        assert_eq!(proxy.fired(), 2);
        assert_eq!(delayed.read_all().await.unwrap(), strings(&["y"]));
    }
}

redis_test! {
    async fn poll_last_and_offer_first_to_moves_one_value_when_its_reply_is_lost(proxy, client, raw) {
        let delayed = client
            .delayed_queue("{plo}src", StringCodec)
            .unwrap()
            .without_transfer();
        for v in ["a", "b", "c", "d"] {
            delayed.offer(&v.to_string(), Duration::from_secs(600)).await.unwrap();
        }
        assert_eq!(
            delayed.poll_last_and_offer_first_to("{plo}dst").await.unwrap(),
            Some("d".to_string())
        );
        settled(&raw, "plo").await;
        proxy.arm(Fault::LoseReply, "{plo}");
        assert_eq!(
            delayed.poll_last_and_offer_first_to("{plo}dst").await.unwrap(),
            Some("c".to_string())
        );
        assert_eq!(proxy.fired(), 1);
        assert_eq!(raw.lrange("{plo}dst").await, bytes(&["c", "d"]));
        assert_eq!(delayed.read_all().await.unwrap(), strings(&["a", "b"]));
    }
}

redis_test! {
    async fn requeue_dead_letters_moves_each_value_once_when_its_reply_is_lost(proxy, client, raw) {
        let reliable = client.reliable_queue("dead-lost", StringCodec).unwrap();
        let dead = reliable.keys().dead_letter().to_owned();
        let _: i64 = raw
            .client
            .rpush(&dead, bytes(&["a", "b", "c", "d", "e"]))
            .await
            .unwrap();
        assert_eq!(reliable.requeue_dead_letters(1).await.unwrap(), 1);
        settled(&raw, "dead-lost").await;
        proxy.arm(Fault::LoseReply, "delayq_dead_letter:{dead-lost}");
        assert_eq!(reliable.requeue_dead_letters(2).await.unwrap(), 2);
        assert_eq!(proxy.fired(), 1);
        assert_eq!(raw.lrange(&dead).await, bytes(&["d", "e"]));
        assert_eq!(raw.lrange("dead-lost").await, bytes(&["a", "b", "c"]));
    }
}

redis_test! {
    async fn give_backs_of_undecodable_values_push_each_value_once_when_their_reply_is_lost(proxy, client, raw) {
        // The destination list: drain removes, fails to decode, pushes back.
        let _: i64 = raw
            .client
            .rpush("giveback", bytes(&["1", "not-a-number", "3"]))
            .await
            .unwrap();
        let q = client.blocking_queue("giveback", LongCodec).unwrap();
        // Only the give-back's request carries the values themselves.
        proxy.arm(Fault::LoseReply, "not-a-number");
        let error = q.drain(3).await.unwrap_err();
        assert!(
            matches!(error, delayq::Error::Decode(ref e) if e.restored()),
            "{error:?}"
        );
        assert_eq!(proxy.fired(), 1);
        assert_eq!(raw.lrange("giveback").await, bytes(&["1", "not-a-number", "3"]));

        // The pending list: remove_first_n removes, fails to decode, restores with scores.
        let delayed = client
            .delayed_queue("restore-lost", StringCodec)
            .unwrap()
            .without_transfer();
        delayed.offer(&"1".to_string(), Duration::from_secs(600)).await.unwrap();
        delayed
            .offer(&"poison-ä".to_string(), Duration::from_secs(600))
            .await
            .unwrap();
        let scores_before = raw.zrange("redisson_delay_queue_timeout:{restore-lost}").await;
        let longs = client
            .delayed_queue("restore-lost", LongCodec)
            .unwrap()
            .without_transfer();
        proxy.arm(Fault::LoseReply, "poison-ä");
        let error = longs.remove_first_n(2).await.unwrap_err();
        assert!(
            matches!(error, delayq::Error::Decode(ref e) if e.restored()),
            "{error:?}"
        );
        assert_eq!(proxy.fired(), 2);
        assert_eq!(delayed.read_all().await.unwrap(), strings(&["1", "poison-ä"]));
        assert_eq!(
            raw.zrange("redisson_delay_queue_timeout:{restore-lost}").await,
            scores_before
        );
    }
}

redis_test! {
    async fn a_drain_whose_reply_is_lost_for_good_fails_and_its_values_go_back(redis) {
        let proxy = FaultProxy::start(redis.port()).await;
        // No resends at all: the lost reply is final, the call cannot learn
        // its outcome.
        let client = without_resends(&proxy).await;
        let raw = redis.raw().await;
        let _: i64 = raw
            .client
            .rpush("for-good", bytes(&["w", "a", "b", "c", "d"]))
            .await
            .unwrap();
        let q = client.blocking_queue("for-good", StringCodec).unwrap();
        assert_eq!(q.drain(1).await.unwrap(), strings(&["w"]));
        settled(&raw, "for-good").await;
        proxy.arm(Fault::LoseReply, "for-good");
        let error = q.drain(2).await.unwrap_err();
        assert!(error.is_transient(), "{error:?}");
        assert_eq!(proxy.fired(), 1);
        // The drain ran; its cancel puts a and b back at the head, in order.
        eventually(Duration::from_secs(20), "drained values back", || async {
            raw.lrange("for-good").await == bytes(&["a", "b", "c", "d"])
        })
        .await;
        // And a remove_first_n the same way, scores included.
        let delayed = client
            .delayed_queue("for-good-poll", StringCodec)
            .unwrap()
            .without_transfer();
        for v in ["w", "a", "b"] {
            delayed.offer(&v.to_string(), Duration::from_secs(600)).await.unwrap();
        }
        assert_eq!(delayed.remove_first().await.unwrap(), Some("w".to_string()));
        let scores_before = raw.zrange("redisson_delay_queue_timeout:{for-good-poll}").await;
        settled(&raw, "for-good-poll").await;
        proxy.arm(Fault::LoseReply, "{for-good-poll}");
        assert!(delayed.remove_first_n(5).await.unwrap_err().is_transient());
        eventually(Duration::from_secs(20), "polled values back", || async {
            raw.zrange("redisson_delay_queue_timeout:{for-good-poll}").await == scores_before
                && raw.llen("redisson_delay_queue:{for-good-poll}").await == 2
        })
        .await;
        assert_eq!(delayed.read_all().await.unwrap(), strings(&["a", "b"]));
        client.shutdown().await;
    }
}

redis_test! {
    async fn an_offer_whose_reply_is_lost_fails_and_is_never_applied_twice(proxy, client, raw) {
        let delayed = client
            .delayed_queue("offer-lost", StringCodec)
            .unwrap()
            .without_transfer();
        delayed
            .offer(&"warm".to_string(), Duration::from_secs(600))
            .await
            .unwrap();
        proxy.arm(Fault::LoseReply, "lost-offer-payload");
        let error = delayed
            .offer(&"lost-offer-payload".to_string(), Duration::from_secs(600))
            .await
            .unwrap_err();
        assert!(error.is_transient(), "{error:?}");
        assert_eq!(proxy.fired(), 1);
        // It ran once (the reply was lost after Redis applied it), never twice.
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{offer-lost}").await, 2);
        assert_eq!(
            delayed.read_all().await.unwrap(),
            strings(&["warm", "lost-offer-payload"])
        );
        // A lost request: not applied at all, also an error.
        proxy.arm(Fault::LoseRequest, "lost-offer-request");
        assert!(delayed
            .offer(&"lost-offer-request".to_string(), Duration::from_secs(600))
            .await
            .is_err());
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{offer-lost}").await, 2);
    }
}

redis_test! {
    async fn values_put_back_after_their_due_time_are_published_and_delivered(redis) {
        let proxy = FaultProxy::start(redis.port()).await;
        // The transferring client: direct, no periodic resync, so only the
        // channel can tell it about an element that comes back overdue.
        let transferring = redis.client_builder().resync_interval(None).build().await.unwrap();
        let _handle = transferring.delayed_queue("late-back", StringCodec).unwrap();
        let poller = without_resends(&proxy).await;
        let polling = poller
            .delayed_queue("late-back", StringCodec)
            .unwrap()
            .without_transfer();
        polling
            .offer(&"warm".to_string(), Duration::from_secs(600))
            .await
            .unwrap();
        assert_eq!(polling.remove_first().await.unwrap(), Some("warm".to_string()));
        let raw = redis.raw().await;
        settled(&raw, "late-back").await;

        polling
            .offer(&"x".to_string(), Duration::from_millis(800))
            .await
            .unwrap();
        // The poll runs, its reply is lost and Redis is out of reach: x sits
        // in the request while its due time passes and the transferring
        // client's timer fires on an empty queue.
        proxy.arm(Fault::LoseReplyThenOutage, "{late-back}");
        assert!(polling.remove_first().await.is_err());
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{late-back}").await, 0);
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert_eq!(raw.llen("late-back").await, 0);
        // Redis is back: the cancel puts x back, overdue, and publishes it.
        proxy.set_outage(false);
        eventually(Duration::from_secs(30), "x delivered", || async {
            raw.lrange("late-back").await == bytes(&["x"])
        })
        .await;
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{late-back}").await, 0);
        poller.shutdown().await;
        transferring.shutdown().await;
    }
}

redis_test! {
    async fn a_drain_dropped_by_its_caller_during_a_long_outage_gives_its_values_back(proxy, client, raw) {
        let _: i64 = raw.client.rpush("dropped", bytes(&["a", "b", "c", "d"])).await.unwrap();
        let q = client.blocking_queue("dropped", StringCodec).unwrap();
        assert_eq!(q.drain(1).await.unwrap(), strings(&["a"]));
        settled(&raw, "dropped").await;
        // fred keeps the command while it reconnects; the caller gives up,
        // and the outage outlasts the 5 s a dropped call is given to finish.
        proxy.set_outage(true);
        assert!(tokio::time::timeout(Duration::from_millis(300), q.drain(2))
            .await
            .is_err());
        tokio::time::sleep(Duration::from_secs(7)).await;
        proxy.set_outage(false);
        // Whether the drain then runs or not, its values are in the list.
        eventually(Duration::from_secs(30), "values back", || async {
            raw.lrange("dropped").await == bytes(&["b", "c", "d"])
        })
        .await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(raw.lrange("dropped").await, bytes(&["b", "c", "d"]));
    }
}

redis_test! {
    async fn clear_is_sent_once_so_values_offered_after_it_survive(proxy, client, raw) {
        let _: i64 = raw.client.rpush("cleared", bytes(&["a", "b"])).await.unwrap();
        let q = client.blocking_queue("cleared", StringCodec).unwrap();
        proxy.arm(Fault::LoseReply, "cleared");
        let clearing = tokio::spawn(async move { q.clear().await });
        eventually(Duration::from_secs(10), "the DEL ran", || async {
            raw.llen("cleared").await == 0
        })
        .await;
        let _: i64 = raw.client.rpush("cleared", "offered-after").await.unwrap();
        // Sent once: a lost reply says the outcome is unknown, not "error".
        let error = clearing.await.unwrap().unwrap_err();
        assert!(matches!(error, delayq::Error::OutcomeUnknown { .. }), "{error:?}");
        assert_eq!(raw.lrange("cleared").await, bytes(&["offered-after"]));
    }
}

redis_test! {
    async fn removals_lost_for_good_say_the_outcome_is_unknown_or_give_back(redis) {
        let proxy = FaultProxy::start(redis.port()).await;
        let client = without_resends(&proxy).await;
        let raw = redis.raw().await;
        let delayed = client
            .delayed_queue("gone-for-good", StringCodec)
            .unwrap()
            .without_transfer();
        for v in ["warm", "x", "x", "y"] {
            delayed.offer(&v.to_string(), Duration::from_secs(600)).await.unwrap();
        }
        assert!(delayed.remove(&"warm".to_string()).await.unwrap());
        settled(&raw, "gone-for-good").await;
        // A removal by value cannot be undone exactly: the caller is told.
        proxy.arm(Fault::LoseReply, "{gone-for-good}");
        let error = delayed.remove(&"x".to_string()).await.unwrap_err();
        assert!(
            matches!(
                error,
                delayq::Error::OutcomeUnknown {
                    operation: "remove",
                    ..
                }
            ),
            "{error:?}"
        );
        eventually(Duration::from_secs(20), "the cancel ran", || async {
            delayed
                .read_all()
                .await
                .map(|v| v == strings(&["x", "y"]))
                .unwrap_or(false)
        })
        .await;
        // remove_pending can: what it removed goes back, scores included.
        let scores_before = raw.zrange("redisson_delay_queue_timeout:{gone-for-good}").await;
        proxy.arm(Fault::LoseReply, "{gone-for-good}");
        assert!(delayed.remove_pending(5).await.unwrap_err().is_transient());
        eventually(Duration::from_secs(20), "removed values back", || async {
            raw.zrange("redisson_delay_queue_timeout:{gone-for-good}").await == scores_before
        })
        .await;
        assert_eq!(delayed.read_all().await.unwrap(), strings(&["x", "y"]));
        client.shutdown().await;
    }
}

redis_test! {
    async fn a_restored_overdue_element_is_published_so_transfers_wake_for_it(redis, raw) {
        // A transferring client that never resyncs, settled on an empty
        // queue; then an overdue element nobody is told about (written
        // without a publish): it stays where it is.
        let transferring = redis.client_builder().resync_interval(None).build().await.unwrap();
        let _handle = transferring
            .delayed_queue("restored-late", StringCodec)
            .unwrap()
            .with_transfer();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let element = delayq::format::pack(delayq::format::Format::Modern, b"not-a-number");
        raw.seed("restored-late", &element, delayq_test_support::now_ms() - 1_000)
            .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(raw.llen("restored-late").await, 0);
        let client = redis.client().await;
        let longs = client
            .delayed_queue("restored-late", LongCodec)
            .unwrap()
            .without_transfer();
        // The poll cannot decode it and restores it: the restore publishes.
        let error = longs.remove_first().await.unwrap_err();
        assert!(
            matches!(error, delayq::Error::Decode(ref e) if e.restored()),
            "{error:?}"
        );
        eventually(Duration::from_secs(20), "delivered", || async {
            raw.lrange("restored-late").await == bytes(&["not-a-number"])
        })
        .await;
    }
}

redis_test! {
    async fn one_call_removes_at_most_a_mebibyte_of_large_payloads(raw, client) {
        let big = "v".repeat(10 * 1024);
        let values: Vec<String> = (0..300).map(|i| format!("{i:03}{big}")).collect();
        let q = client.blocking_queue("large", StringCodec).unwrap();
        q.offer_all(values.iter()).await.unwrap();
        let first = q.drain(10_000).await.unwrap();
        assert!(first.len() > 50 && first.len() < 120, "{}", first.len());
        assert_eq!(first, values[..first.len()]);
        let mut all = first;
        while all.len() < values.len() {
            let next = q.drain(10_000).await.unwrap();
            assert!(!next.is_empty());
            all.extend(next);
        }
        assert_eq!(all, values);
        assert_eq!(raw.llen("large").await, 0);

        let delayed = client
            .delayed_queue("large-pending", StringCodec)
            .unwrap()
            .without_transfer();
        delayed
            .offer_all(values.iter().map(|v| (v.clone(), Duration::from_secs(600))))
            .await
            .unwrap();
        let polled = delayed.remove_first_n(10_000).await.unwrap();
        assert!(polled.len() > 50 && polled.len() < 120, "{}", polled.len());
        let delayq::report::Purged {
            removed,
            remaining: left,
            ..
        } = delayed.remove_pending(10_000).await.unwrap();
        assert!(removed > 50 && removed < 120, "{removed}");
        assert_eq!(left as usize, 300 - polled.len() - removed as usize);
    }
}

/// A purge as (removed, remaining).
fn pair(purged: delayq::report::Purged) -> (u64, u64) {
    (purged.removed, purged.remaining)
}

redis_test! {
    async fn id_operations_answer_as_their_first_run_when_their_reply_is_lost(proxy, client, raw) {
        let delayed = client
            .delayed_queue("ids-lost", StringCodec)
            .unwrap()
            .without_transfer();
        delayed
            .offer(&"warm".to_string(), Duration::from_secs(600))
            .await
            .unwrap();
        settled(&raw, "ids-lost").await;
        // A resent offer_with_id would find its own element and answer "not new".
        proxy.arm(Fault::LoseReply, "{ids-lost}");
        assert!(delayed
            .offer_with_id("a", &"x".to_string(), Duration::from_secs(600))
            .await
            .unwrap());
        assert_eq!(proxy.fired(), 1);
        settled(&raw, "ids-lost").await;
        // A resent reschedule would answer as the first run did.
        proxy.arm(Fault::LoseReply, "{ids-lost}");
        assert!(delayed.reschedule("a", Duration::from_secs(1200)).await.unwrap());
        assert_eq!(proxy.fired(), 2);
        settled(&raw, "ids-lost").await;
        // A resent cancel would find nothing and answer false.
        proxy.arm(Fault::LoseReply, "{ids-lost}");
        assert!(delayed.cancel("a").await.unwrap());
        assert_eq!(proxy.fired(), 3);
        assert_eq!(delayed.read_all().await.unwrap(), strings(&["warm"]));
        // A resent resume would answer "was not paused" (or end a newer pause).
        delayed.pause().await.unwrap();
        settled(&raw, "ids-lost").await;
        proxy.arm(Fault::LoseReply, "{ids-lost}");
        assert!(delayed.resume().await.unwrap());
        assert_eq!(proxy.fired(), 4);
        assert!(!delayed.is_paused().await.unwrap());
    }
}

redis_test! {
    /// A reliable take's fast path: the `LMOVE` of a ready value runs and its
    /// reply is lost. The move is not sent again (that would move a second
    /// value nobody claims); the value it moved waits in the staging list until
    /// the reaper returns it, and in the end every value is delivered exactly
    /// once, none of them counted twice.
    async fn a_reliable_take_whose_move_reply_is_lost_loses_nothing_and_moves_once(redis, proxy, client, raw) {
        let monitor = redis.monitor().await;
        let q = client
            .reliable_queue("lost-move", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_secs(1));
        let keys = q.keys().clone();
        let _: i64 = raw
            .client
            .rpush("lost-move", bytes(&["warm", "a", "b", "c"]))
            .await
            .unwrap();
        // Each delivery is taken under a long lease, so that a loaded
        // machine's late ack is in time; `q`'s short one keeps the reaper's
        // grace short.
        let taker = q.clone().with_visibility_timeout(Duration::from_secs(30));
        // Warm the claim script, so the next take's first command is its LMOVE.
        let warm = taker.take().await.unwrap();
        assert_eq!(warm.value(), "warm");
        assert!(warm.ack().await.unwrap());
        let moves = || async {
            let entries = monitor.entries().await;
            entries.iter().filter(|c| !c.from_lua && c.name() == "lmove").count()
        };
        assert_eq!(moves().await, 1);
        proxy.arm(Fault::LoseReply, "LMOVE");
        let mut delivered = Vec::new();
        // The faulted take goes on to wait for another value; the one its
        // move took comes back with the reaper.
        while delivered.len() < 3 {
            let delivery = taker
                .take_timeout(Duration::from_secs(20))
                .await
                .unwrap()
                .expect("every value delivered in the end");
            assert_eq!(delivery.delivery_count(), 1, "{} delivered before", delivery.value());
            delivered.push(delivery.value().clone());
            assert!(delivery.ack().await.unwrap());
            if delivered.len() == 1 {
                assert_eq!(proxy.fired(), 1);
                // One LMOVE since the fault, the lost one; a resend would
                // show a second, moving "b" as well.
                assert_eq!(moves().await, 2, "the lost move was not sent again");
                assert!(
                    raw.llen(keys.staging()).await <= 1,
                    "one value moved for the lost reply"
                );
            }
        }
        delivered.sort();
        assert_eq!(delivered, strings(&["a", "b", "c"]));
        assert!(q.take_timeout(Duration::ZERO).await.unwrap().is_none());
        assert_eq!(raw.llen("lost-move").await, 0);
        assert_eq!(raw.llen(keys.staging()).await, 0);
        assert_eq!(q.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    /// A reliable take whose claim runs and whose reply is lost: the claim is
    /// not sent again (it would claim a second value); the delivery it made is
    /// found by its id once the connection is back and given back uncounted.
    /// The value comes again as a first attempt, even with `max_deliveries(1)`,
    /// long before its visibility timeout would have returned it (counted, and
    /// so to the dead letters).
    async fn a_reliable_take_whose_claim_reply_is_lost_gives_its_delivery_back_uncounted(proxy, client, raw) {
        let q = client
            .reliable_queue("lost-claim", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_secs(600))
            .with_max_deliveries(1);
        let keys = q.keys().clone();
        let _: i64 = raw
            .client
            .rpush("lost-claim", bytes(&["warm", "claimed-once"]))
            .await
            .unwrap();
        // Warm the claim script (EVALSHA, no NOSCRIPT round) and the pool.
        let warm = q.take().await.unwrap();
        assert!(warm.ack().await.unwrap());
        // The value is an argument of the claim only (the move names keys).
        proxy.arm(Fault::LoseReply, "claimed-once");
        let delivery = q
            .take_timeout(Duration::from_secs(30))
            .await
            .unwrap()
            .expect("given back and delivered again");
        assert_eq!(proxy.fired(), 1, "the claim ran and its reply was lost");
        assert_eq!(delivery.value(), "claimed-once");
        assert_eq!(delivery.delivery_count(), 1, "the lost claim was not counted");
        assert!(delivery.ack().await.unwrap());
        assert_eq!(q.in_flight().await.unwrap(), 0);
        assert_eq!(q.dead_letter_len().await.unwrap(), 0);
        assert_eq!(raw.llen("lost-claim").await, 0);
        assert_eq!(raw.llen(keys.staging()).await, 0);
    }
}

redis_test! {
    /// Takes joined into one `LPOP key n` whose reply is lost: the pop is not
    /// sent again (a resend would pop n more), each of its takes goes on to wait
    /// for another value, and no value reaches two takes. The values the lost
    /// pop took are gone, as with a plain take's lost `LPOP` (at most once).
    async fn takes_joined_into_one_pop_whose_reply_is_lost_go_on_and_never_share_a_value(redis, proxy, client, raw) {
        let monitor = redis.monitor().await;
        let q = client.blocking_queue("joined-pop-lost", LongCodec).unwrap();
        let values: Vec<String> = (0..400).map(|v| v.to_string()).collect();
        let _: i64 = raw.client.rpush("joined-pop-lost", values).await.unwrap();
        // An LPOP with a count (three arguments): a joined pop, never a lone one.
        proxy.arm(Fault::LoseReply, b"*3\r\n$4\r\nLPOP\r\n");
        let takers: Vec<_> = (0..16)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move {
                    let mut got = Vec::new();
                    while let Some(v) = q.take_timeout(Duration::from_secs(2)).await.unwrap() {
                        got.push(v);
                    }
                    got
                })
            })
            .collect();
        let mut taken = Vec::new();
        for taker in takers {
            taken.extend(taker.await.unwrap());
        }
        assert_eq!(proxy.fired(), 1, "a joined pop ran");
        let pops: Vec<i64> = monitor
            .entries()
            .await
            .iter()
            .filter(|c| !c.from_lua && c.name() == "lpop" && c.args.len() == 3)
            .map(|c| String::from_utf8_lossy(&c.args[2]).parse().unwrap())
            .collect();
        let mut unique = taken.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), taken.len(), "no value reached two takes");
        // All but what the pops whose replies were lost took: the faulted
        // one, and the other pops of the queue that may be in flight on the
        // same connection (the proxy drops every reply after the fault).
        // Nothing is popped ahead of a take, so at most one value a taker.
        let lost = 400 - taken.len() as i64;
        let largest = pops.iter().copied().max().unwrap();
        assert!((1..=16).contains(&lost), "{lost} lost, largest joined pop {largest}");
        assert_eq!(raw.llen("joined-pop-lost").await, 0);
    }
}

/// A schedule that never fires during a test (next New Year's Day).
const YEARLY: &str = "0 0 1 1 *";

/// A save whose reply is lost while Redis is out of reach; another process
/// saves the schedule meanwhile. The resend must not put the first
/// definition back over the later one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resent_schedule_save_does_not_undo_a_save_made_meanwhile() {
    deadline(async {
        use base64::Engine as _;
        let (redis, proxy, client) = behind_proxy().await;
        let raw = redis.raw().await;
        let direct = redis.client().await;
        let queue = client
            .delayed_queue("save-lost", StringCodec)
            .unwrap()
            .without_transfer();
        client.schedule("warm", YEARLY, &queue, &"w".to_string()).await.unwrap();
        settled(&raw, "save-lost").await;
        // Only the save carries the value, base64 in its definition.
        let encoded = base64::engine::general_purpose::STANDARD.encode("from-proxy");
        proxy.arm(Fault::LoseReplyThenOutage, encoded.trim_end_matches('='));
        let saving = {
            let (client, queue) = (client.clone(), queue.clone());
            tokio::spawn(async move { client.schedule("job", YEARLY, &queue, &"from-proxy".to_string()).await })
        };
        let schedules = direct.schedules(&delayq::QueueKeys::new("save-lost").unwrap()).unwrap();
        wait_for(Duration::from_secs(20), "the first save ran", || async {
            schedules.get("job").await.unwrap()
        })
        .await;
        assert_eq!(proxy.fired(), 1);
        let direct_queue = direct
            .delayed_queue("save-lost", StringCodec)
            .unwrap()
            .without_transfer();
        let later = direct
            .schedule("job", YEARLY, &direct_queue, &"from-direct".to_string())
            .await
            .unwrap();
        proxy.set_outage(false);
        let saved = saving.await.unwrap().unwrap();
        assert_eq!(&saved.payload[..], b"from-proxy", "its own first answer");
        let stored = schedules.get("job").await.unwrap().unwrap();
        assert_eq!(&stored.payload[..], b"from-direct", "the later save stands");
        assert_eq!(stored.revision, later.revision);
        assert!(later.revision > saved.revision);
        client.shutdown().await;
        direct.shutdown().await;
    })
    .await;
}

/// A runner's fire whose reply is lost: fred resends it, the resend finds
/// the fire's token in the record and offers nothing again, and the fire
/// history holds one entry, not two.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_fire_whose_reply_is_lost_is_offered_and_recorded_once() {
    deadline(async {
        let (redis, proxy, client) = behind_proxy().await;
        let raw = redis.raw().await;
        let direct = redis.client().await;
        // Saved by a client that then stops: `schedule` also runs the
        // schedule, and a runner outside the proxy (polling every 2 s) could
        // fire it before the one behind the proxy does.
        let saver = redis.client().await;
        let queue = saver
            .delayed_queue("fire-lost", StringCodec)
            .unwrap()
            .without_transfer();
        saver
            .schedule("job", YEARLY, &queue, &"fire-lost-value".to_string())
            .await
            .unwrap();
        saver.shutdown().await;
        // Due ten seconds ago, well within its 60 s window: the runner fires it at once.
        let key = delayq::QueueKeys::new("fire-lost").unwrap().schedules();
        let stored = raw.cmd("HGET", vec![key.as_str().into(), "job".into()]).await;
        let mut record: serde_json::Value = serde_json::from_slice(stored.as_bytes().unwrap()).unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        record["next_ms"] = serde_json::Value::String((now - 10_000).to_string());
        raw.cmd(
            "HSET",
            vec![key.as_str().into(), "job".into(), Value::from(record.to_string())],
        )
        .await;
        let sha = raw.load_script(include_str!("../../lua/schedule_fire.lua")).await;
        let monitor = redis.monitor().await;
        // Only the fire carries the value raw (the save sent it in base64).
        proxy.arm(Fault::LoseReply, "fire-lost-value");
        client
            .run_schedules(&delayq::QueueKeys::new("fire-lost").unwrap())
            .unwrap();
        let schedules = direct.schedules(&delayq::QueueKeys::new("fire-lost").unwrap()).unwrap();
        wait_for(Duration::from_secs(30), "the fire ran", || async {
            (schedules.get("job").await.unwrap().unwrap().fired > 0).then_some(())
        })
        .await;
        assert_eq!(proxy.fired(), 1);
        // The first run and fred's resend of it both reach the server.
        wait_for(Duration::from_secs(30), "the fire resent", || async {
            let fires = monitor
                .entries()
                .await
                .iter()
                .filter(|c| !c.from_lua && c.name() == "evalsha" && c.args[1] == sha.as_bytes())
                .count();
            (fires >= 2).then_some(())
        })
        .await;
        // Whatever the runner does next (the next occurrence is a year away).
        client.shutdown().await;
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{fire-lost}").await, 1);
        assert_eq!(schedules.get("job").await.unwrap().unwrap().fired, 1);
        let fires = schedules.fires("job").await.unwrap();
        assert_eq!(fires.len(), 1, "recorded once: {fires:?}");
        assert_eq!(fires[0].kind, delayq::schedule::FireKind::OnTime);
        direct.shutdown().await;
    })
    .await;
}

redis_test! {
    /// Run now whose reply is lost: the resend answers as the first run and
    /// offers no second value, and the history holds one run by hand.
    async fn a_schedule_run_now_whose_reply_is_lost_offers_one_value(proxy, client, raw) {
        let queue = client.delayed_queue("run-lost", StringCodec).unwrap().without_transfer();
        client.schedule("job", YEARLY, &queue, &"run-lost-value".to_string()).await.unwrap();
        let schedules = client.schedules(&delayq::QueueKeys::new("run-lost").unwrap()).unwrap();
        raw.load_script(include_str!("../../lua/schedule_run.lua")).await;
        settled(&raw, "run-lost").await;
        proxy.arm(Fault::LoseReply, "run-lost-value");
        let due = schedules.run_now("job").await.unwrap();
        assert_eq!(proxy.fired(), 1);
        let timeout = raw.zrange("redisson_delay_queue_timeout:{run-lost}").await;
        assert_eq!(timeout.len(), 1, "one value");
        let due_ms = due.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
        assert_eq!(timeout[0].1, due_ms, "the first run's answer");
        let fires = schedules.fires("job").await.unwrap();
        assert_eq!(fires.len(), 1, "{fires:?}");
        assert_eq!(fires[0].kind, delayq::schedule::FireKind::ByHand);
    }
}

redis_test! {
    async fn a_migration_whose_reply_is_lost_reports_what_it_converted(proxy, client, raw) {
        let legacy = client
            .delayed_queue("migrate-lost", StringCodec)
            .unwrap()
            .without_transfer()
            .with_format(delayq::format::Format::Legacy);
        let values = strings(&["a", "b", "c", "d", "e"]);
        for v in &values {
            legacy.offer(v, Duration::from_secs(600)).await.unwrap();
        }
        // Warms the script: nothing to convert.
        let warm = legacy.migrate(delayq::format::Format::Legacy, 100).await.unwrap();
        assert_eq!((warm.converted, warm.already), (0, 5));
        settled(&raw, "migrate-lost").await;
        let sha = delayq_test_support::script_sha1(include_str!("../../lua/migrate.lua"));
        proxy.arm(Fault::LoseReply, sha);
        let report = legacy.migrate(delayq::format::Format::Modern, 100).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        // Run again, the chunk would find its elements modern already.
        assert_eq!((report.converted, report.already), (5, 0), "{report:?}");
        let pending = raw.lrange("redisson_delay_queue:{migrate-lost}").await;
        assert!(pending
            .iter()
            .all(|e| delayq::format::unpack(e).unwrap().format() == delayq::format::Format::Modern));
        assert_eq!(legacy.read_all().await.unwrap(), values);
    }
}

/// Three good elements and one neither format unpacks, all overdue (no
/// publish: nobody is told).
async fn seed_overdue(raw: &delayq_test_support::RawRedis, queue: &str) -> i64 {
    let due = delayq_test_support::now_ms() - 1_000;
    for (i, v) in ["a", "b", "c"].into_iter().enumerate() {
        let element = delayq::format::pack(delayq::format::Format::Modern, v.as_bytes());
        raw.seed(queue, &element, due + i as i64).await;
    }
    raw.seed(queue, b"not a packed element", due + 3).await;
    due
}

redis_test! {
    async fn transfer_now_whose_reply_is_lost_reports_what_its_first_run_moved(proxy, client, raw) {
        let q = client
            .delayed_queue("now-lost", StringCodec)
            .unwrap()
            .without_transfer();
        seed_overdue(&raw, "now-lost").await;
        let sha = raw.load_script(include_str!("../../lua/transfer.lua")).await;
        proxy.arm(Fault::LoseReply, sha);
        let report = q.transfer_now().await.unwrap();
        assert_eq!(proxy.fired(), 1);
        // Run again, the transfer finds nothing due and reports nothing.
        assert_eq!((report.moved, report.quarantined), (3, 1), "{report:?}");
        assert_eq!(raw.lrange("now-lost").await, bytes(&["a", "b", "c"]));
        assert_eq!(raw.llen(q.keys().quarantine()).await, 1);
        assert_eq!(q.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// The scheduler's own run whose reply is lost: `ClientStats` counts what
    /// the first run moved and quarantined, once.
    async fn a_scheduled_transfer_whose_reply_is_lost_is_counted_once(redis) {
        let proxy = FaultProxy::start(redis.port()).await;
        // No resync: the publish below makes the only run after the fault is armed.
        let client = delayq::Client::builder()
            .url(proxy.url())
            .resync_interval(None)
            .build()
            .await
            .unwrap();
        let raw = redis.raw().await;
        let sha = raw.load_script(include_str!("../../lua/transfer.lua")).await;
        let q = client.delayed_queue("sched-lost", StringCodec).unwrap();
        // Its first run (registered, nothing due) is over.
        eventually(Duration::from_secs(20), "the first run", || async {
            client.stats().transfer_runs >= 1
        })
        .await;
        let due = seed_overdue(&raw, "sched-lost").await;
        proxy.arm(Fault::LoseReply, sha);
        let _: i64 = raw.client.publish(q.keys().channel(), due.to_string()).await.unwrap();
        eventually(Duration::from_secs(20), "moved", || async {
            raw.llen("sched-lost").await == 3
        })
        .await;
        eventually(Duration::from_secs(20), "counted", || async {
            let stats = client.stats();
            stats.transferred >= 3 && stats.quarantined >= 1
        })
        .await;
        assert_eq!(proxy.fired(), 1);
        let stats = client.stats();
        assert_eq!((stats.transferred, stats.quarantined), (3, 1), "{stats:?}");
        client.shutdown().await;
    }
}

redis_test! {
    /// A sweep window whose reply is lost: the resend moves nothing again and
    /// answers what the window moved, so every element moved is counted once.
    async fn a_sweep_window_whose_reply_is_lost_is_counted_once(redis, raw) {
        // 30,000 pending; every tenth already due, spread through the list:
        // deep enough for a sweep.
        let producer = redis.client().await;
        let q = producer
            .delayed_queue("swept-lost", LongCodec)
            .unwrap()
            .without_transfer();
        let delay = |i: i64| Duration::from_secs(if i % 10 == 0 { 0 } else { 3600 });
        q.offer_all((0..30_000i64).map(|i| (i, delay(i)))).await.unwrap();
        let sha = raw.load_script(include_str!("../../lua/sweep_window.lua")).await;
        let proxy = FaultProxy::start(redis.port()).await;
        let client = delayq::Client::builder().url(proxy.url()).build().await.unwrap();
        proxy.arm(Fault::LoseReply, sha);
        let _transfer = client.delayed_queue("swept-lost", LongCodec).unwrap();
        eventually(Duration::from_secs(60), "the due tenth arrives", || async {
            raw.llen("swept-lost").await == 3_000
        })
        .await;
        eventually(Duration::from_secs(20), "counted", || async {
            client.stats().transferred >= 3_000
        })
        .await;
        assert_eq!(proxy.fired(), 1, "a sweep window's reply was lost");
        let stats = client.stats();
        assert!(stats.sweeps >= 1, "{stats:?}");
        assert_eq!(stats.transferred, 3_000, "{stats:?}");
        client.shutdown().await;
    }
}

redis_test! {
    async fn reap_now_whose_reply_is_lost_reports_what_its_first_run_returned(proxy, client, raw) {
        let sha = raw.load_script(include_str!("../../lua/reap.lua")).await;
        // Its reaper's first run is seconds away; nothing else reaps.
        let q = client.reliable_queue("reap-lost", StringCodec).unwrap();
        let keys = q.keys().clone();
        // Three deliveries past their deadline (id, count, value), and two
        // copies no claim took, watched since an hour ago.
        let past = delayq_test_support::now_ms() - 1_000;
        for (i, v) in ["t1", "t2", "t3"].into_iter().enumerate() {
            let member = format!("id-{i:05}0000000001{v}");
            let _: i64 = raw
                .client
                .zadd(keys.leases(), None, None, false, false, (past as f64, member))
                .await
                .unwrap();
        }
        let _: i64 = raw.client.rpush(keys.staging(), bytes(&["u1", "u2"])).await.unwrap();
        let since = delayq_test_support::now_ms() - 3_600_000;
        let _: i64 = raw
            .client
            .hset(keys.staging_mark(), [("t", since.to_string()), ("k", "2".to_string())])
            .await
            .unwrap();
        proxy.arm(Fault::LoseReply, sha);
        let reaped = q.reap_now().await.unwrap();
        assert_eq!(proxy.fired(), 1);
        // Run again, the reap finds nothing left to return.
        assert_eq!((reaped.timed_out, reaped.unclaimed), (3, 2), "{reaped:?}");
        let mut back = raw.lrange("reap-lost").await;
        back.sort();
        assert_eq!(back, bytes(&["t1", "t2", "t3", "u1", "u2"]), "each once");
        assert_eq!(q.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    async fn expiry_changes_whose_reply_is_lost_answer_as_their_first_run(proxy, client, raw) {
        let q = client
            .delayed_queue("expire-lost", StringCodec)
            .unwrap()
            .without_transfer();
        q.offer(&"a".to_string(), Duration::from_secs(600)).await.unwrap();
        let sha = raw.load_script(include_str!("../../lua/expire.lua")).await;
        assert!(q.expire(Duration::from_secs(600)).await.unwrap());
        settled(&raw, "expire-lost").await;
        proxy.arm(Fault::LoseReply, &sha);
        // Run again, the PERSIST finds no expiry left.
        assert!(q.clear_expire().await.unwrap(), "clear_expire answers as its first run");
        assert_eq!(proxy.fired(), 1);
        let ttl = raw.cmd("PTTL", vec![q.keys().timeout().into()]).await;
        assert_eq!(ttl.as_i64(), Some(-1), "no expiry left");
        settled(&raw, "expire-lost").await;
        proxy.arm(Fault::LoseReply, &sha);
        // Run again, the expiry in the past finds the keys gone.
        let past = std::time::SystemTime::now() - Duration::from_secs(1);
        assert!(q.expire_at(past).await.unwrap(), "expire_at answers as its first run");
        assert_eq!(proxy.fired(), 2);
        assert_eq!(raw.zcard(q.keys().timeout()).await, 0);
        assert_eq!(raw.llen(q.keys().pending()).await, 0);
    }
}

redis_test! {
    /// A cancel whose reply is lost answers, resent, what it found (a log line
    /// says whether the values came back); a mark an older client left reads as
    /// cancelled still.
    async fn a_resent_cancel_answers_what_it_found(redis) {
        let proxy = FaultProxy::start(redis.port()).await;
        let raw = redis.raw().await;
        // A plain fred client through the proxy, resending as delayq's does.
        let config = Config::from_url(&proxy.url()).unwrap();
        let resending =
            delayq::fred::clients::Client::new(config, None, None, Some(ReconnectPolicy::new_constant(0, 20)));
        resending.init().await.unwrap();
        let eval = |client: &delayq::fred::clients::Client, sha: &str, keys: &[&str], args: Vec<Value>| {
            let mut all: Vec<Value> = vec![sha.into(), (keys.len() as i64).into()];
            all.extend(keys.iter().map(|k| Value::from(*k)));
            all.extend(args);
            let client = client.clone();
            async move {
                let evalsha = CustomCommand::new_static("EVALSHA", ClusterHash::FirstKey, false);
                client.custom::<Value, Value>(evalsha, all).await
            }
        };
        // A drain that ran (its record: what it took, and how to put it back).
        let request = "delayq_request:{cancel-lost}:lost-drain";
        raw.cmd(
            "EVAL",
            vec![
                "redis.call('set', KEYS[1], cmsgpack.pack({'done', {'a', 'b'}, {'lpush', 1}}), 'PX', 60000)".into(),
                1.into(),
                request.into(),
            ],
        )
        .await;
        let cancel = raw.load_script(include_str!("../../lua/cancel_request.lua")).await;
        proxy.arm(Fault::LoseReply, &cancel);
        let found = eval(&resending, &cancel, &["cancel-lost", request], vec![])
            .await
            .unwrap();
        assert_eq!(proxy.fired(), 1);
        // Run again, the cancel finds the mark and would answer "not run".
        assert_eq!(found.as_i64(), Some(1), "it had run and its values are back");
        assert_eq!(raw.lrange("cancel-lost").await, bytes(&["a", "b"]));

        // The mark of an older client: cancelled, nothing known.
        let old = "delayq_request:{cancel-lost}:old-mark";
        raw.cmd(
            "EVAL",
            vec![
                "redis.call('set', KEYS[1], cmsgpack.pack({'cancelled'}), 'PX', 60000)".into(),
                1.into(),
                old.into(),
            ],
        )
        .await;
        let found = eval(&raw.client, &cancel, &["cancel-lost", old], vec![]).await.unwrap();
        assert_eq!(found.as_i64(), Some(0));
        // Either mark stops the request from running late.
        let drain = raw.load_script(include_str!("../../lua/drain.lua")).await;
        for key in [request, old] {
            let late = eval(&raw.client, &drain, &["cancel-lost", key], vec![5.into()]).await;
            let error = late.expect_err("a cancelled request does not run");
            assert!(error.details().contains("DELAYQ_CANCELLED"), "{error:?}");
        }
        assert_eq!(raw.lrange("cancel-lost").await, bytes(&["a", "b"]));
        resending.quit().await.unwrap();
    }
}

redis_test! {
    /// An exact delete of one of two equal dead letters whose reply is lost:
    /// fred resends it, the request key answers as the first run did, and the
    /// other copy stays.
    async fn exact_dead_letter_delete_removes_one_of_equal_values_when_its_reply_is_lost(proxy, client, raw) {
        let reliable = client.reliable_queue("dead-exact", StringCodec).unwrap();
        let dead = reliable.keys().dead_letter().to_owned();
        let _: i64 = raw.client.rpush(&dead, bytes(&["same", "same"])).await.unwrap();
        let page = reliable.dead_letter_page(0, 10).await.unwrap();
        // The script cached first (a NOSCRIPT answer is no lost reply):
        // a key of nothing there is refused.
        let nothing: delayq::dead_letter::DeadLetterKey = format!("0:4:{}", "0".repeat(40)).parse().unwrap();
        assert!(matches!(
            reliable.delete_dead_letters_exact(&[nothing]).await,
            Err(delayq::Error::DeadLetterChanged { .. })
        ));
        settled(&raw, "dead-exact").await;
        proxy.arm(Fault::LoseReply, "delayq_dead_letter:{dead-exact}");
        let found = reliable
            .delete_dead_letters_exact(&[page[1].key.clone()])
            .await
            .unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(found, vec![1]);
        assert_eq!(raw.lrange(&dead).await, bytes(&["same"]));
    }
}

redis_test! {
    /// An exact requeue whose reply is lost: the value reaches the queue once.
    async fn exact_dead_letter_requeue_pushes_once_when_its_reply_is_lost(proxy, client, raw) {
        let reliable = client.reliable_queue("requeue-exact", StringCodec).unwrap();
        let dead = reliable.keys().dead_letter().to_owned();
        let _: i64 = raw.client.rpush(&dead, bytes(&["x", "y", "x"])).await.unwrap();
        let page = reliable.dead_letter_page(0, 10).await.unwrap();
        // The script cached first (a NOSCRIPT answer is no lost reply).
        let nothing: delayq::dead_letter::DeadLetterKey = format!("0:1:{}", "0".repeat(40)).parse().unwrap();
        assert!(reliable.requeue_dead_letters_exact(&[nothing]).await.is_err());
        settled(&raw, "requeue-exact").await;
        proxy.arm(Fault::LoseReply, "delayq_dead_letter:{requeue-exact}");
        let found = reliable
            .requeue_dead_letters_exact(&[page[2].key.clone(), page[1].key.clone()])
            .await
            .unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(found, vec![2, 1]);
        assert_eq!(raw.lrange("requeue-exact").await, bytes(&["y", "x"]));
        assert_eq!(raw.lrange(&dead).await, bytes(&["x"]));
    }
}
