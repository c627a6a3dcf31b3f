//! The transfer scheduler: due elements move to the destination on time, in
//! due order, exactly once, whatever wakes it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use delayq::format::{pack, Format};
use delayq::fred::prelude::*;
use delayq::{LongCodec, StringCodec};

use delayq_test_support::{eventually, now_ms, redis_test};

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    async fn an_element_is_not_takeable_before_its_due_time_and_is_soon_after(client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let dest = q.destination();
        let delay = Duration::from_millis(1_000);
        let offered = Instant::now();
        q.offer(&s("x"), delay).await.unwrap();
        // Before the due time nothing is there, however often we look.
        while offered.elapsed() < delay - Duration::from_millis(150) {
            assert_eq!(
                dest.try_take().await.unwrap(),
                None,
                "arrived early at {:?}",
                offered.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let got = dest.take_timeout(Duration::from_secs(10)).await.unwrap();
        let arrived = offered.elapsed();
        assert_eq!(got, Some(s("x")));
        assert!(
            arrived >= delay,
            "arrived after {arrived:?}, before the {delay:?} delay"
        );
        assert_eq!(q.len().await.unwrap(), 0);
    }
}

redis_test! {
    async fn elements_come_out_in_due_time_order(client) {
        let q = client.delayed_queue("q", LongCodec).unwrap();
        // Offered in an order unrelated to their due times.
        let delays_ms = [900u64, 300, 700, 100, 500, 800, 200, 600, 400, 1000];
        q.offer_all(delays_ms.iter().map(|&d| (d as i64, Duration::from_millis(d))))
            .await
            .unwrap();
        let dest = q.destination();
        let mut got = Vec::new();
        while got.len() < delays_ms.len() {
            got.push(
                dest.take_timeout(Duration::from_secs(10))
                    .await
                    .unwrap()
                    .expect("all arrive"),
            );
        }
        let mut sorted: Vec<i64> = delays_ms.iter().map(|&d| d as i64).collect();
        sorted.sort();
        assert_eq!(got, sorted);
    }
}

redis_test! {
    async fn a_thousand_elements_over_ten_queues_are_each_delivered_exactly_once(redis) {
        let producer = redis.client().await;
        let consumer = redis.client().await;
        let mut queues = Vec::new();
        for i in 0..10 {
            queues.push(producer.delayed_queue(&format!("q{i}"), LongCodec).unwrap());
        }
        for (qi, q) in queues.iter().enumerate() {
            let items = (0..100i64).map(|j| (qi as i64 * 1000 + j, Duration::from_millis(fastrand::u64(0..1500))));
            q.offer_all(items).await.unwrap();
        }
        let seen = Arc::new(parking_lot::Mutex::new(HashMap::<i64, usize>::new()));
        let mut workers = Vec::new();
        for i in 0..10 {
            // Two competing workers per queue.
            for _ in 0..2 {
                let dest = consumer.blocking_queue(&format!("q{i}"), LongCodec).unwrap();
                let seen = seen.clone();
                workers.push(tokio::spawn(async move {
                    while let Some(v) = dest.take_timeout(Duration::from_secs(3)).await.unwrap() {
                        *seen.lock().entry(v).or_default() += 1;
                    }
                }));
            }
        }
        for w in workers {
            w.await.unwrap();
        }
        {
            let seen = seen.lock();
            assert_eq!(seen.len(), 1000, "every element delivered");
            assert!(seen.values().all(|&n| n == 1), "no element delivered twice");
        }
        for q in &queues {
            assert_eq!(q.len().await.unwrap(), 0);
        }
    }
}

redis_test! {
    async fn a_consumer_only_process_moves_due_elements_when_it_opts_in(redis) {
        {
            // A producer offers and goes away, like a Java service that stopped.
            let producer = redis.client().await;
            let q = producer.delayed_queue("jobs", StringCodec).unwrap();
            q.offer_all([
                (s("a"), Duration::from_millis(200)),
                (s("b"), Duration::from_millis(400)),
            ])
            .await
            .unwrap();
            producer.shutdown().await;
        }
        let consumer = redis.client().await;
        // Without opting in, nobody transfers.
        let plain = consumer.blocking_queue("jobs", StringCodec).unwrap();
        assert_eq!(plain.take_timeout(Duration::from_millis(900)).await.unwrap(), None);
        let transferring = consumer.blocking_queue("jobs", StringCodec).unwrap().with_transfer();
        assert_eq!(
            transferring.take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("a"))
        );
        assert_eq!(
            transferring.take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("b"))
        );
    }
}

redis_test! {
    async fn elements_already_due_when_the_queue_is_registered_move_at_once(redis, raw) {
        // State a Java producer left behind, with no publish to wake anyone.
        for (i, v) in ["x", "y", "z"].iter().enumerate() {
            raw.seed("q", &pack(Format::Modern, v.as_bytes()), now_ms() - 1000 + i as i64)
                .await;
        }
        let client = redis.client_builder().resync_interval(None).build().await.unwrap();
        let _q = client.delayed_queue("q", StringCodec).unwrap();
        let dest = client.blocking_queue("q", StringCodec).unwrap();
        for v in ["x", "y", "z"] {
            assert_eq!(dest.take_timeout(Duration::from_secs(5)).await.unwrap(), Some(s(v)));
        }
    }
}

redis_test! {
    async fn a_published_due_time_already_past_runs_the_transfer_at_once(redis, raw) {
        let client = redis.client_builder().resync_interval(None).build().await.unwrap();
        let q = client.delayed_queue("q", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "subscribed", || async {
            raw.numsub(q.keys().channel()).await == 1
        })
        .await;
        let due = now_ms() - 5;
        raw.seed("q", &pack(Format::Modern, b"late"), due).await;
        let _: i64 = raw.client.publish(q.keys().channel(), due.to_string()).await.unwrap();
        assert_eq!(
            q.destination().take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("late"))
        );
    }
}

redis_test! {
    async fn a_backlog_larger_than_one_batch_drains_batch_after_batch(redis, raw) {
        let due = now_ms() - 10_000;
        for i in 0..1_000i64 {
            raw.seed("q", &pack(Format::Modern, i.to_string().as_bytes()), due + i)
                .await;
        }
        let client = redis.client_builder().transfer_batch(50).build().await.unwrap();
        let q = client.delayed_queue("q", LongCodec).unwrap();
        let dest = q.destination();
        eventually(Duration::from_secs(20), "backlog drained", || async {
            raw.llen("q").await == 1000
        })
        .await;
        let all = dest.drain(usize::MAX).await.unwrap();
        assert_eq!(all, (0..1000).collect::<Vec<i64>>(), "in due order");
        assert_eq!(q.len().await.unwrap(), 0);
        // A run is counted when its reply is read, which can come after the
        // values it moved are seen in the list (a loaded machine).
        eventually(Duration::from_secs(10), "20 runs counted", || async {
            client.stats().transfer_runs >= 20
        })
        .await;
    }
}

redis_test! {
    async fn after_the_subscriber_reconnects_every_queue_is_transferred(redis, raw) {
        let client = redis.client_builder().resync_interval(None).build().await.unwrap();
        let q = client.delayed_queue("q", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "subscribed", || async {
            raw.numsub(q.keys().channel()).await == 1
        })
        .await;
        // Came due silently (no publish): only a reconnect can wake the scheduler now.
        raw.seed("q", &pack(Format::Modern, b"quiet"), now_ms() - 1).await;
        assert!(raw.kill_clients("pubsub").await >= 1);
        assert_eq!(
            q.destination().take_timeout(Duration::from_secs(10)).await.unwrap(),
            Some(s("quiet"))
        );
        eventually(Duration::from_secs(20), "subscribed again", || async {
            raw.numsub(q.keys().channel()).await == 1
        })
        .await;
    }
}

redis_test! {
    async fn a_failing_transfer_is_retried_with_backoff_until_it_succeeds(redis, raw) {
        let client = redis
            .client_builder()
            .transfer_backoff(Duration::from_millis(20), Duration::from_millis(200))
            .build()
            .await
            .unwrap();
        // The destination key holds a string: every RPUSH fails with WRONGTYPE.
        let _: () = raw.client.set("q", "in the way", None, None, false).await.unwrap();
        let q = client.delayed_queue("q", StringCodec).unwrap();
        q.offer(&s("v"), Duration::ZERO).await.unwrap();
        eventually(Duration::from_secs(10), "failures retried", || async {
            client.stats().transfer_failures >= 3
        })
        .await;
        assert_eq!(q.len().await.unwrap(), 1, "a failed run loses nothing");
        let _: i64 = raw.client.del("q").await.unwrap();
        assert_eq!(
            q.destination().take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("v"))
        );
    }
}

redis_test! {
    async fn the_queue_leaves_the_schedule_when_its_last_handle_is_dropped(raw, client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let channel = q.keys().channel().to_owned();
        let second = client.delayed_queue("q", StringCodec).unwrap();
        let clone = q.clone();
        eventually(Duration::from_secs(20), "subscribed", || async {
            raw.numsub(&channel).await == 1
        })
        .await;
        drop(q);
        drop(second);
        // A clone still holds the registration.
        assert_eq!(raw.numsub(&channel).await, 1);
        drop(clone);
        eventually(Duration::from_secs(20), "unsubscribed", || async {
            raw.numsub(&channel).await == 0
        })
        .await;
        let runs = client.stats().transfer_runs;
        raw.seed("q", &pack(Format::Modern, b"orphan"), now_ms() - 1).await;
        let _: i64 = raw.client.publish(&channel, (now_ms() - 1).to_string()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(client.stats().transfer_runs, runs, "no run for a dropped queue");
        assert_eq!(raw.llen("q").await, 0);
    }
}

redis_test! {
    async fn lost_pubsub_messages_make_every_queue_transfer(redis, raw) {
        let client = redis
            .client_builder()
            .resync_interval(None)
            .customize(|b| {
                b.with_performance_config(|p| p.broadcast_channel_capacity = 1);
            })
            .build()
            .await
            .unwrap();
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let other = client.delayed_queue("other", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "subscribed", || async {
            raw.numsub(other.keys().channel()).await == 1
        })
        .await;
        raw.seed("q", &pack(Format::Modern, b"found"), now_ms() - 1).await;
        // Flood another queue's channel with far-future due times until messages are dropped.
        let far = (now_ms() + 3_600_000).to_string();
        let dest = q.destination();
        let mut arrived = None;
        for _ in 0..50 {
            let pipeline = raw.client.pipeline();
            for _ in 0..2_000 {
                let _: () = pipeline.publish(other.keys().channel(), far.as_str()).await.unwrap();
            }
            let _: Vec<i64> = pipeline.all().await.unwrap();
            if let Some(v) = dest.take_timeout(Duration::from_millis(100)).await.unwrap() {
                arrived = Some(v);
                break;
            }
        }
        assert_eq!(arrived, Some(s("found")));
    }
}

redis_test! {
    async fn several_clients_transferring_one_queue_deliver_each_element_once(redis, raw) {
        let mut clients = Vec::new();
        let mut handles = Vec::new();
        for _ in 0..3 {
            let c = redis.client().await;
            handles.push(c.delayed_queue("shared", LongCodec).unwrap());
            clients.push(c);
        }
        handles[0]
            .offer_all((0..600i64).map(|i| (i, Duration::from_millis(fastrand::u64(0..800)))))
            .await
            .unwrap();
        eventually(Duration::from_secs(20), "all transferred", || async {
            raw.llen("shared").await >= 600
        })
        .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut all: Vec<i64> = raw
            .lrange("shared")
            .await
            .iter()
            .map(|b: &Bytes| std::str::from_utf8(b).unwrap().parse().unwrap())
            .collect();
        assert_eq!(all.len(), 600);
        all.sort();
        assert_eq!(all, (0..600).collect::<Vec<_>>());
    }
}

redis_test! {
    async fn after_redis_restarts_offers_and_transfers_resume(redis, client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        let dest = q.destination();
        q.offer(&s("before"), Duration::ZERO).await.unwrap();
        assert_eq!(
            dest.take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("before"))
        );
        redis.restart().await;
        let raw = redis.raw().await;
        // The same client reconnects and subscribes again by itself.
        eventually(Duration::from_secs(10), "subscribed again", || async {
            raw.numsub(q.keys().channel()).await == 1
        })
        .await;
        eventually(Duration::from_secs(10), "offers work again", || async {
            q.offer(&s("after"), Duration::from_millis(200)).await.is_ok()
        })
        .await;
        assert_eq!(
            dest.take_timeout(Duration::from_secs(10)).await.unwrap(),
            Some(s("after"))
        );
    }
}

redis_test! {
    async fn a_head_due_years_from_now_does_not_upset_the_scheduler(client) {
        let q = client.delayed_queue("q", StringCodec).unwrap();
        // Further out than the timing wheel can hold (about two years).
        q.offer(&s("far"), Duration::from_secs(10 * 365 * 24 * 3600))
            .await
            .unwrap();
        let report = q.transfer_now().await.unwrap();
        assert_eq!(report.moved, 0);
        assert!(report.next_due.unwrap() > std::time::SystemTime::now() + Duration::from_secs(9 * 365 * 24 * 3600));
        q.offer(&s("near"), Duration::from_millis(100)).await.unwrap();
        assert_eq!(
            q.destination().take_timeout(Duration::from_secs(5)).await.unwrap(),
            Some(s("near"))
        );
        assert_eq!(q.read_all().await.unwrap(), vec![s("far")]);
    }
}

redis_test! {
    async fn a_backlog_scattered_through_a_long_pending_list_is_swept_consistently(redis, raw) {
        // 30,000 pending in offer order; every tenth is already due, the rest
        // due in an hour: the due ones are spread through the whole list.
        let producer = redis.client().await;
        let q = producer.delayed_queue("big", LongCodec).unwrap().without_transfer();
        let items: Vec<(i64, Duration)> = (0..30_000i64)
            .map(|i| (i, if i % 10 == 0 { Duration::ZERO } else { Duration::from_secs(3600) }))
            .collect();
        q.offer_all(items).await.unwrap();
        let keys = q.keys().clone();
        // A Java-like reader checks, between scripts, that the pending list and
        // the timeout set always hold the same number of elements.
        let reader = {
            let raw = redis.raw().await;
            let keys = keys.clone();
            tokio::spawn(async move {
                let mut checks = 0;
                loop {
                    // Both counts in one atomic read, as a script between two others sees them.
                    let both = raw
                        .cmd(
                            "EVAL",
                            vec![
                                "return {redis.call('llen', KEYS[1]), redis.call('zcard', KEYS[2])}".into(),
                                2.into(),
                                keys.pending().into(),
                                keys.timeout().into(),
                            ],
                        )
                        .await;
                    let (len, card) = match both {
                        delayq::fred::types::Value::Array(v) => (v[0].as_i64().unwrap(), v[1].as_i64().unwrap()),
                        other => panic!("{other:?}"),
                    };
                    assert_eq!(len, card, "pending list and timeout set out of step");
                    checks += 1;
                    if len == 27_000 {
                        return checks;
                    }
                }
            })
        };
        let client = redis.client().await;
        let _transfer = client.delayed_queue("big", LongCodec).unwrap();
        eventually(Duration::from_secs(30), "the due tenth arrives", || async { raw.llen("big").await == 3_000 }).await;
        let checks = reader.await.unwrap();
        assert!(checks > 1);
        let mut arrived: Vec<i64> =
            raw.lrange("big").await.iter().map(|b| std::str::from_utf8(b).unwrap().parse().unwrap()).collect();
        arrived.sort();
        assert_eq!(arrived, (0..30_000).step_by(10).collect::<Vec<i64>>(), "each due element exactly once");
        // The rest is still pending, in offer order.
        let pending: Vec<i64> = q.read_all().await.unwrap();
        assert_eq!(pending.len(), 27_000);
        assert!(pending.windows(2).all(|w| w[0] < w[1]), "offer order kept");
        assert!(pending.iter().all(|v| v % 10 != 0));
        // The sweep cleaned up after itself.
        eventually(Duration::from_secs(20), "no sweep hash left", || async {
            matches!(raw.cmd("KEYS", vec!["delayq_sweep:*".into()]).await, delayq::fred::types::Value::Array(v) if v.is_empty())
        })
        .await;
        assert!(client.stats().transferred >= 3_000);
        assert!(client.stats().sweeps >= 1, "{:?}", client.stats());
    }
}

redis_test! {
    async fn one_transfer_run_moves_about_a_mebibyte_of_large_payloads(raw, client) {
        let q = client.delayed_queue("big-due", StringCodec).unwrap().without_transfer();
        let big = "p".repeat(10 * 1024);
        let values: Vec<String> = (0..300).map(|i| format!("{i:03}{big}")).collect();
        q.offer_all(values.iter().map(|v| (v.clone(), Duration::from_millis(20))))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        // 300 × 10 KB are due; one run takes about 1 MiB of them, not its
        // batch of 500, and says more are due.
        let first = q.transfer_now().await.unwrap();
        assert!(first.moved > 50 && first.moved < 120, "{first:?}");
        assert!(first.next_due.unwrap() <= std::time::SystemTime::now());
        let mut moved = first.moved;
        while moved < 300 {
            let run = q.transfer_now().await.unwrap();
            assert!(run.moved > 0, "{run:?}");
            moved += run.moved;
        }
        // Each once (equal due times come out in Redis's tie order).
        let mut delivered: Vec<String> = raw
            .lrange("big-due")
            .await
            .into_iter()
            .map(|b| String::from_utf8(b[..3].to_vec()).unwrap())
            .collect();
        delivered.sort();
        let expected: Vec<String> = (0..300).map(|i| format!("{i:03}")).collect();
        assert_eq!(delivered, expected);
        assert_eq!(q.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// Due elements deep inside a short pending list (3,000 others, the due
    /// ones in its middle, past both probes, and one at its very tail), due one
    /// after another: each run finds and removes its element (`LREM` from the
    /// head), and Java's lists are left as removing each element alone would
    /// leave them.
    async fn deep_due_elements_of_a_short_pending_list_move_in_due_order(redis, raw) {
        let keys = delayq::QueueKeys::new("deep").unwrap();
        let later = now_ms() + 3_600_000;
        let soon = now_ms() + 3_000;
        let others: Vec<Bytes> = (0..3_000)
            .map(|i| pack(Format::Modern, format!("other-{i}").as_bytes()))
            .collect();
        for (i, element) in others[..1_500].iter().enumerate() {
            raw.seed("deep", element, later + i as i64).await;
        }
        for i in 0..20 {
            let element = pack(Format::Modern, format!("due-{i:02}").as_bytes());
            raw.seed("deep", &element, soon + 20 * i).await;
        }
        for (i, element) in others[1_500..].iter().enumerate() {
            raw.seed("deep", element, later + 1_500 + i as i64).await;
        }
        let last = pack(Format::Modern, b"due-20");
        raw.seed("deep", &last, soon + 400).await;

        let client = redis.client().await;
        let queue = client.delayed_queue("deep", StringCodec).unwrap();
        let dest = queue.destination();
        let mut got = Vec::new();
        for _ in 0..21 {
            let value = dest.take_timeout(Duration::from_secs(20)).await.unwrap();
            got.push(value.expect("every due element arrives"));
        }
        let want: Vec<String> = (0..=20).map(|i| format!("due-{i:02}")).collect();
        assert_eq!(got, want);
        assert_eq!(raw.lrange(keys.pending()).await, others);
        assert_eq!(raw.zcard(keys.timeout()).await, 3_000);
        assert_eq!(raw.llen("deep").await, 0);
    }
}

redis_test! {
    /// Due elements near the head, deep in the middle and near the tail of one
    /// pending list, all due at once and in an order unlike the list's: a run
    /// removes some by `LREM` from the head and marks others found by a probe,
    /// and whichever way each goes, they arrive in due order and Java's lists are
    /// left as removing each element alone would leave them.
    scale async fn due_elements_at_both_ends_and_in_the_middle_move_in_due_order(redis, raw) {
        let keys = delayq::QueueKeys::new("spread").unwrap();
        let later = now_ms() + 3_600_000;
        let due_at = now_ms() - 60_000;
        let others: Vec<Bytes> = (0..5_000)
            .map(|i| pack(Format::Modern, format!("other-{i}").as_bytes()))
            .collect();
        // Group g (0 head, 1 middle, 2 tail), index j: due rank 3j + g, so
        // due order interleaves the three places.
        let due = |g: usize, j: usize| pack(Format::Modern, format!("due-{:02}", 3 * j + g).as_bytes());
        let place = |g: usize| [100, 2_500, 4_900][g];
        for (i, element) in others.iter().enumerate() {
            for g in 0..3 {
                if i == place(g) {
                    for j in 0..12 {
                        raw.seed("spread", &due(g, j), due_at + (3 * j + g) as i64).await;
                    }
                }
            }
            raw.seed("spread", element, later + i as i64).await;
        }
        assert_eq!(raw.llen(keys.pending()).await, 5_036);

        let client = redis.client().await;
        let queue = client.delayed_queue("spread", StringCodec).unwrap();
        let dest = queue.destination();
        let mut got = Vec::new();
        for _ in 0..36 {
            let value = dest.take_timeout(Duration::from_secs(20)).await.unwrap();
            got.push(value.expect("every due element arrives"));
        }
        let want: Vec<String> = (0..36).map(|i| format!("due-{i:02}")).collect();
        assert_eq!(got, want);
        assert_eq!(raw.lrange(keys.pending()).await, others);
        assert_eq!(raw.zcard(keys.timeout()).await, 5_000);
        assert_eq!(raw.llen("spread").await, 0);
    }
}
