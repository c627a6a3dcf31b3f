//! Every `DelayedQueue` operation against a real Redis.

use std::time::{Duration, SystemTime};

use delayq::format::Format;
use delayq::fred::prelude::*;
use delayq::{Error, LongCodec, StringCodec};

use delayq_test_support::{now_ms, redis_test};

const HOUR: Duration = Duration::from_secs(3600);

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    async fn offer_writes_redisson_keys_scores_and_publishes_only_new_heads(raw, client) {
        let q = client.delayed_queue("orders", StringCodec).unwrap();
        let keys = q.keys().clone();

        let before = now_ms();
        q.offer(&s("later"), Duration::from_secs(7200)).await.unwrap();
        q.offer(&s("sooner"), HOUR).await.unwrap();
        q.offer(&s("latest"), Duration::from_secs(9000)).await.unwrap();
        let after = now_ms();

        let zset = raw.zrange(keys.timeout()).await;
        let payloads: Vec<&[u8]> = zset
            .iter()
            .map(|(m, _)| delayq::format::unpack(m).unwrap().payload)
            .collect();
        assert_eq!(payloads, vec![&b"sooner"[..], b"later", b"latest"]);
        assert!(zset[0].1 >= before + 3_600_000 && zset[0].1 <= after + 3_600_000);
        // The pending list keeps offer order and holds the same packed bytes.
        let list = raw.lrange(keys.pending()).await;
        assert_eq!(list.len(), 3);
        assert_eq!(delayq::format::unpack(&list[0]).unwrap().payload, b"later");
        assert!(zset.iter().any(|(m, _)| m == &list[0]));
        for element in &list {
            assert_eq!(element[0], 8, "modern format by default");
        }
        // The destination list is untouched until elements are due.
        assert_eq!(raw.llen("orders").await, 0);
    }
}

redis_test! {
    async fn len_contains_read_all_and_peek_see_pending_values(client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        assert!(q.is_empty().await.unwrap());
        assert_eq!(q.peek().await.unwrap(), None);
        assert_eq!(q.read_all().await.unwrap(), Vec::<String>::new());

        q.offer_all([(s("a"), HOUR), (s("b"), Duration::from_secs(60)), (s("a"), HOUR)])
            .await
            .unwrap();
        assert_eq!(q.len().await.unwrap(), 3);
        assert!(!q.is_empty().await.unwrap());
        assert_eq!(q.read_all().await.unwrap(), vec![s("a"), s("b"), s("a")]);
        assert_eq!(q.peek().await.unwrap(), Some(s("a")));
        assert!(q.contains(&s("b")).await.unwrap());
        assert!(!q.contains(&s("c")).await.unwrap());
        assert!(q.contains_all([s("a"), s("b")]).await.unwrap());
        assert!(!q.contains_all([s("a"), s("c")]).await.unwrap());
        assert!(q.contains_all(Vec::<String>::new()).await.unwrap());
        // Reading changed nothing.
        assert_eq!(q.len().await.unwrap(), 3);
    }
}

redis_test! {
    async fn remove_remove_all_and_retain_all_delete_from_both_keys(raw, client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let items = ["a", "b", "a", "c", "d", "b"].map(|v| (s(v), HOUR));
        q.offer_all(items).await.unwrap();

        assert!(q.remove(&s("a")).await.unwrap());
        assert_eq!(
            q.read_all().await.unwrap(),
            vec![s("b"), s("a"), s("c"), s("d"), s("b")]
        );
        assert!(!q.remove(&s("zzz")).await.unwrap());

        assert_eq!(q.remove_all([s("b"), s("zzz")]).await.unwrap(), 2);
        assert_eq!(q.read_all().await.unwrap(), vec![s("a"), s("c"), s("d")]);
        assert_eq!(q.remove_all(Vec::<String>::new()).await.unwrap(), 0);

        assert_eq!(q.retain_all([s("c")]).await.unwrap(), 2);
        assert_eq!(q.read_all().await.unwrap(), vec![s("c")]);
        // The timeout set lost exactly the same elements.
        let keys = q.keys();
        assert_eq!(raw.zcard(keys.timeout()).await, 1);
        assert_eq!(raw.llen(keys.pending()).await, 1);
        assert_eq!(q.retain_all(Vec::<String>::new()).await.unwrap(), 1);
        assert!(q.is_empty().await.unwrap());
        assert_eq!(raw.zcard(keys.timeout()).await, 0);
    }
}

redis_test! {
    async fn poll_and_poll_many_remove_in_offer_order_without_delivering(raw, client) {
        let q = client.delayed_queue("q", LongCodec).unwrap();
        q.offer_all((1..=5).map(|i| (i, Duration::from_secs(100 - i as u64))))
            .await
            .unwrap();

        assert_eq!(q.remove_first().await.unwrap(), Some(1));
        assert_eq!(q.remove_first_n(3).await.unwrap(), vec![2, 3, 4]);
        assert_eq!(q.remove_first_n(10).await.unwrap(), vec![5]);
        assert_eq!(q.remove_first().await.unwrap(), None);
        assert_eq!(q.remove_first_n(0).await.unwrap(), Vec::<i64>::new());
        assert_eq!(raw.zcard(q.keys().timeout()).await, 0);
        assert_eq!(raw.llen("q").await, 0, "polled values are not delivered");
    }
}

redis_test! {
    async fn poll_last_and_offer_first_to_moves_the_newest_value(raw, client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let _: i64 = raw.client.rpush("{q}other", "existing").await.unwrap();
        q.offer_all([(s("first"), HOUR), (s("last"), HOUR)]).await.unwrap();

        assert_eq!(
            q.poll_last_and_offer_first_to("{q}other").await.unwrap(),
            Some(s("last"))
        );
        assert_eq!(
            raw.lrange("{q}other").await,
            vec![bytes::Bytes::from("last"), bytes::Bytes::from("existing")]
        );
        assert_eq!(q.read_all().await.unwrap(), vec![s("first")]);
        assert_eq!(raw.zcard(q.keys().timeout()).await, 1);
        q.clear().await.unwrap();
        assert_eq!(q.poll_last_and_offer_first_to("{q}other").await.unwrap(), None);
    }
}

redis_test! {
    async fn clear_deletes_pending_but_not_the_destination(raw, client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        q.destination().offer(&s("ready")).await.unwrap();
        q.offer(&s("pending"), HOUR).await.unwrap();
        assert!(q.clear().await.unwrap());
        assert!(!q.clear().await.unwrap());
        assert_eq!(q.len().await.unwrap(), 0);
        assert_eq!(raw.zcard(q.keys().timeout()).await, 0);
        assert_eq!(raw.lrange("q").await, vec![bytes::Bytes::from("ready")]);
    }
}

redis_test! {
    async fn expire_and_clear_expire_act_on_both_keys(raw, client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        assert!(!q.expire(HOUR).await.unwrap(), "nothing to expire yet");
        q.offer(&s("x"), HOUR).await.unwrap();
        assert!(q.expire(Duration::from_secs(100)).await.unwrap());
        for key in [q.keys().timeout(), q.keys().pending()] {
            let ttl: i64 = raw.client.pttl(key).await.unwrap();
            assert!(ttl > 90_000 && ttl <= 100_000, "{key}: {ttl}");
        }
        assert!(q.clear_expire().await.unwrap());
        for key in [q.keys().timeout(), q.keys().pending()] {
            let ttl: i64 = raw.client.pttl(key).await.unwrap();
            assert_eq!(ttl, -1, "{key}");
        }
        assert!(!q.clear_expire().await.unwrap());
        assert!(q
            .expire_at(SystemTime::now() + Duration::from_millis(300))
            .await
            .unwrap());
        delayq_test_support::eventually(Duration::from_secs(20), "keys expire", || async {
            raw.zcard(q.keys().timeout()).await == 0 && raw.llen(q.keys().pending()).await == 0
        })
        .await;
    }
}

redis_test! {
    async fn bad_delays_and_names_are_typed_errors_that_write_nothing(raw, client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();

        let past = SystemTime::now() - Duration::from_secs(5);
        assert!(matches!(q.offer_at(&s("x"), past).await, Err(Error::InvalidDelay(_))));
        assert!(matches!(
            q.offer(&s("x"), Duration::MAX).await,
            Err(Error::InvalidDelay(_))
        ));
        let far = SystemTime::UNIX_EPOCH + Duration::from_secs(400_000 * 365 * 24 * 3600);
        assert!(matches!(q.offer_at(&s("x"), far).await, Err(Error::InvalidDelay(_))));
        // One bad delay in a batch rejects the whole batch before anything is sent.
        let batch = q.offer_all([(s("ok"), HOUR), (s("bad"), Duration::MAX)]).await;
        assert!(matches!(batch, Err(Error::InvalidDelay(_))));
        assert_eq!(raw.zcard(q.keys().timeout()).await, 0);
        assert_eq!(raw.llen(q.keys().pending()).await, 0);

        assert!(matches!(
            client.delayed_queue("", StringCodec),
            Err(Error::InvalidQueueName { .. })
        ));
        assert!(matches!(
            client.delayed_queue("a{b", StringCodec),
            Err(Error::InvalidQueueName { .. })
        ));

        q.offer_at(&s("future"), SystemTime::now() + HOUR).await.unwrap();
        assert_eq!(q.len().await.unwrap(), 1);
    }
}

redis_test! {
    async fn a_key_of_the_wrong_type_is_a_typed_error(raw, client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let _: () = raw
            .client
            .set(q.keys().pending(), "not a list", None, None, false)
            .await
            .unwrap();
        assert!(
            matches!(q.len().await, Err(Error::WrongType { .. })),
            "{:?}",
            q.len().await
        );
        assert!(
            matches!(q.read_all().await, Err(Error::WrongType { .. })),
            "{:?}",
            q.read_all().await
        );
    }
}

redis_test! {
    async fn legacy_format_queue_writes_dlc0_elements(raw, client) {
        let q = client
            .delayed_queue("q", StringCodec)
            .unwrap()
            .with_format(Format::Legacy);
        q.offer(&s("old"), HOUR).await.unwrap();
        let list = raw.lrange(q.keys().pending()).await;
        assert_eq!(list[0].len(), 16 + 3);
        let element = delayq::format::unpack(&list[0]).unwrap();
        assert_eq!(element.format(), Format::Legacy);
        assert_eq!(element.payload, b"old");
        assert_eq!(q.read_all().await.unwrap(), vec![s("old")]);
    }
}

redis_test! {
    async fn offer_all_sends_large_batches(client) {
        let q = client.delayed_queue("big", LongCodec).unwrap();
        q.offer_all((0..2_500i64).map(|i| (i, HOUR + Duration::from_millis(i as u64))))
            .await
            .unwrap();
        assert_eq!(q.len().await.unwrap(), 2_500);
        let all = q.read_all().await.unwrap();
        assert_eq!(all, (0..2_500).collect::<Vec<i64>>());
    }
}

redis_test! {
    async fn status_says_where_the_elements_are_and_remove_pending_empties_in_steps(client, raw) {
        let q = client.delayed_queue("st", StringCodec).unwrap().without_transfer();
        let empty = q.status().await.unwrap();
        assert!(!empty.exists);
        assert_eq!((empty.pending, empty.ready, empty.next_due), (0, 0, None));

        let before = std::time::SystemTime::now();
        q.offer_all((0..5).map(|i| (format!("v{i}"), Duration::from_secs(3600 + i))))
            .await
            .unwrap();
        q.destination().offer(&"ready".to_owned()).await.unwrap();
        raw.cmd("RPUSH", vec!["delayq_quarantine:{st}".into(), "junk".into()])
            .await;
        let status = q.status().await.unwrap();
        assert!(status.exists);
        assert_eq!(
            (
                status.pending,
                status.ready,
                status.in_flight,
                status.dead_letters,
                status.quarantined
            ),
            (5, 1, 0, 0, 1)
        );
        let next = status.next_due.unwrap().duration_since(before).unwrap();
        assert!(
            next >= Duration::from_millis(3_599_999) && next < Duration::from_secs(3610),
            "{next:?}"
        );
        assert_eq!(status.lag(), Duration::ZERO);

        // An element only in the timeout set (a writer that failed half way) goes too.
        raw.cmd(
            "ZADD",
            vec!["redisson_delay_queue_timeout:{st}".into(), 1.into(), "orphan".into()],
        )
        .await;
        assert!(
            q.status().await.unwrap().lag() > Duration::from_secs(3600 * 24),
            "the orphan is long overdue"
        );
        assert_eq!(pair(q.remove_pending(2).await.unwrap()), (2, 4));
        assert_eq!(pair(q.remove_pending(2).await.unwrap()), (2, 2));
        assert_eq!(pair(q.remove_pending(2).await.unwrap()), (2, 0));
        assert_eq!(pair(q.remove_pending(2).await.unwrap()), (0, 0));
        assert_eq!(raw.llen("redisson_delay_queue:{st}").await, 0);
        assert_eq!(q.status().await.unwrap().ready, 1, "ready values are not pending ones");

        raw.cmd("SET", vec!["redisson_delay_queue_timeout:{text}".into(), "x".into()])
            .await;
        let wrong = client.delayed_queue("text", StringCodec).unwrap().without_transfer();
        assert!(matches!(wrong.status().await, Err(Error::WrongType { .. })));
    }
}

redis_test! {
    /// A poll dropped right after sending its script puts the pending values
    /// back where they were, with the same due times.
    async fn polls_dropped_in_flight_put_pending_values_back_with_their_scores(raw, client) {
        use delayq_test_support::drop_in_flight;
        let q = client
            .delayed_queue("dropped-polls", StringCodec)
            .unwrap()
            .without_transfer();
        let values: Vec<String> = (0..40).map(|i| format!("v-{i}")).collect();
        q.offer_all(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| (v.clone(), Duration::from_secs(3_600 + i as u64))),
        )
        .await
        .unwrap();
        let timeout_key = q.keys().timeout().to_owned();
        let before = raw.zrange(&timeout_key).await;
        let (mut received, mut dropped) = (Vec::new(), 0);
        for round in 0..30 {
            let finished = if round % 2 == 0 {
                drop_in_flight(q.remove_first())
                    .await
                    .map(|v| v.unwrap().into_iter().collect())
            } else {
                drop_in_flight(q.remove_first_n(2)).await.map(|v| v.unwrap())
            };
            match finished {
                Some(values) => received.extend(values),
                None => dropped += 1,
            }
            delayq_test_support::eventually(Duration::from_secs(20), "the values back", || async {
                let pending = q.len().await.unwrap();
                received.len() + pending == values.len() && raw.zcard(&timeout_key).await == pending
            })
            .await;
        }
        // The last dropped command may still be on its way: a count taken
        // before it runs looks complete too. Let it land.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(dropped >= 15, "most calls were dropped in flight ({dropped})");
        // Nothing lost or twice, and every value not received is pending
        // again with its own due time.
        let mut all = received.clone();
        all.extend(q.read_all().await.unwrap());
        all.sort();
        let mut expected = values.clone();
        expected.sort();
        assert_eq!(all, expected);
        let after = raw.zrange(&timeout_key).await;
        let payload =
            |element: &[u8]| String::from_utf8_lossy(delayq::format::unpack(element).unwrap().payload).into_owned();
        let still_pending: Vec<_> = before
            .into_iter()
            .filter(|(element, _)| !received.contains(&payload(element)))
            .collect();
        assert_eq!(after, still_pending, "same elements, same due times");
    }
}

/// A purge as (removed, remaining).
fn pair(purged: delayq::report::Purged) -> (u64, u64) {
    (purged.removed, purged.remaining)
}

redis_test! {
    /// The oldest ready value's age is known only from a due time the
    /// transfer recorded (lateness tracking on); a value offered straight
    /// to the destination has none, and the status says so rather than guess.
    async fn status_knows_the_oldest_ready_values_due_time_only_when_the_transfer_recorded_it(client, raw) {
        let q = client.delayed_queue("age", StringCodec).unwrap().without_transfer();
        q.destination().offer(&s("direct")).await.unwrap();
        let status = q.status().await.unwrap();
        assert_eq!((status.ready, status.oldest_ready_due), (1, None));
        assert_eq!(status.oldest_ready_age_at(SystemTime::now()), None, "unknown, not zero");

        raw.cmd("SET", vec!["delayq_due_tracking:{age}".into(), "1".into()]).await;
        q.offer(&s("moved"), Duration::from_millis(1)).await.unwrap();
        let due = q.status().await.unwrap().next_due.unwrap();
        while q.transfer_now().await.unwrap().moved == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let status = q.status().await.unwrap();
        assert_eq!((status.ready, status.oldest_ready_due), (2, None), "the head came straight in");

        assert_eq!(q.destination().try_take().await.unwrap(), Some(s("direct")));
        let status = q.status().await.unwrap();
        assert_eq!((status.ready, status.oldest_ready_due), (1, Some(due)));
        let later = due + Duration::from_secs(90);
        assert_eq!(status.oldest_ready_age_at(later), Some(Duration::from_secs(90)));

        assert_eq!(q.destination().try_take().await.unwrap(), Some(s("moved")));
        let empty = q.status().await.unwrap();
        assert_eq!((empty.ready, empty.oldest_ready_due), (0, None));
        assert_eq!(empty.oldest_ready_age_at(later), None, "nothing ready: no age");
    }
}

redis_test! {
    async fn status_says_since_when_a_queue_is_paused(client) {
        let q = client.delayed_queue("held", StringCodec).unwrap().without_transfer();
        assert_eq!(q.status().await.unwrap().paused_since, None);
        let before = SystemTime::now() - Duration::from_millis(1);
        q.pause().await.unwrap();
        let after = SystemTime::now() + Duration::from_millis(1);
        let status = q.status().await.unwrap();
        assert!(status.paused);
        let since = status.paused_since.expect("the pause flag holds its time");
        assert!(since >= before && since <= after, "{since:?}");
        q.resume().await.unwrap();
        assert_eq!(q.status().await.unwrap().paused_since, None);
    }
}
