//! Priorities (`DelayedQueue::offer_with_priority`): the highest level is
//! taken first, equal levels in offer order, the default level (the plain
//! list Java reads) last; delayed values and give-backs keep their level;
//! a queue that never had a priority value is taken from as before.

use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::{Priority, StringCodec};
use parking_lot::Mutex;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test};

fn p(level: u8) -> Priority {
    Priority::new(level).unwrap()
}

fn s(text: &str) -> String {
    text.to_owned()
}

redis_test! {
    /// Levels first, highest first; within a level, offer order; the plain
    /// list's values last. `try_take`, `take` and `take_timeout` agree.
    async fn values_are_taken_by_priority_then_in_offer_order(client) {
        let producer = client.delayed_queue("prio-order", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-order", StringCodec).unwrap();
        // The plain ones straight to the list: offers due in one
        // millisecond are transferred in any order (as Redisson's).
        consumer.offer(&s("a")).await.unwrap();
        consumer.offer(&s("b")).await.unwrap();
        for (value, level) in [("c", 5), ("d", 5), ("e", 9), ("f", 1)] {
            producer.offer_with_priority(&s(value), Duration::ZERO, p(level)).await.unwrap();
        }
        // Read in take order, each with its level, without taking.
        let head: Vec<(u8, String)> = (consumer.read_priority_range(0, 10).await.unwrap().into_iter())
            .map(|(priority, value)| (priority.level(), value))
            .collect();
        assert_eq!(head, [(9, s("e")), (5, s("c")), (5, s("d")), (1, s("f"))]);
        assert_eq!(consumer.read_priority_range(3, 10).await.unwrap(), [(p(1), s("f"))]);
        let mut taken = vec![consumer.try_take().await.unwrap().unwrap()];
        taken.push(consumer.take().await.unwrap());
        taken.push(consumer.take_timeout(Duration::from_secs(5)).await.unwrap().unwrap());
        for _ in 0..3 {
            taken.push(consumer.take().await.unwrap());
        }
        assert_eq!(taken, ["e", "c", "d", "f", "a", "b"]);
        assert_eq!(consumer.try_take().await.unwrap(), None);
    }
}

redis_test! {
    /// What a Java consumer reads, the plain list, holds the default
    /// level's values only; the others wait in delayq's keys, and a
    /// priority of 0 is a plain offer.
    async fn a_java_consumer_of_the_plain_list_sees_the_default_priority_only(client, raw) {
        let producer = client.delayed_queue("prio-java", StringCodec).unwrap();
        producer.offer_with_priority(&s("plain"), Duration::ZERO, Priority::DEFAULT).await.unwrap();
        producer.offer_with_priority(&s("urgent"), Duration::ZERO, Priority::HIGHEST).await.unwrap();
        producer.offer_with_priority(&s("later"), Duration::from_secs(3600), p(4)).await.unwrap();
        // The default level went through Redisson's keys: transferred to the list.
        eventually(Duration::from_secs(30), "the plain value is in the list", || async {
            raw.llen("prio-java").await == 1
        })
        .await;
        let list = raw.lrange("prio-java").await;
        assert_eq!(list.len(), 1);
        assert!(list[0].ends_with(b"plain"), "{list:?}");
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{prio-java}").await, 0);
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-java}").await, 1);
        assert_eq!(raw.zcard("delayq_priority_delayed:{prio-java}").await, 1);
        // The status counts them, and says how many have a priority.
        let status = producer.status().await.unwrap();
        assert_eq!((status.ready, status.priority_ready), (2, 1));
        assert_eq!((status.pending, status.priority_pending), (1, 1));
        assert!(status.next_due.is_some());
    }
}

redis_test! {
    /// A delayed value of a level, once due, goes before the plain values
    /// that were ready all along.
    async fn a_delayed_value_keeps_its_priority_when_due(client) {
        let producer = client.delayed_queue("prio-delayed", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-delayed", StringCodec).unwrap();
        consumer.offer(&s("plain-1")).await.unwrap();
        consumer.offer(&s("plain-2")).await.unwrap();
        producer.offer_with_priority(&s("soon"), Duration::from_millis(300), p(8)).await.unwrap();
        let first = consumer.take().await.unwrap();
        tokio::time::sleep(Duration::from_millis(600)).await;
        let (second, third) = (consumer.take().await.unwrap(), consumer.take().await.unwrap());
        // Whether the first take came before the due time or not, "soon"
        // is taken before every plain value left when it is due.
        if first == "soon" {
            assert_eq!([second, third], ["plain-1", "plain-2"]);
        } else {
            assert_eq!(first, "plain-1");
            assert_eq!([second, third], ["soon", "plain-2"]);
        }
    }
}

redis_test! {
    /// Reliable takes and `take_many` honour the levels; each delivery says
    /// its priority.
    async fn reliable_takes_and_take_many_honour_priorities(client) {
        let producer = client.delayed_queue("prio-reliable", StringCodec).unwrap();
        let jobs = client.reliable_queue("prio-reliable", StringCodec).unwrap();
        let list = client.blocking_queue("prio-reliable", StringCodec).unwrap();
        list.offer(&s("a")).await.unwrap();
        for (value, level) in [("b", 3), ("d", 9), ("e", 3)] {
            producer.offer_with_priority(&s(value), Duration::ZERO, p(level)).await.unwrap();
        }
        list.offer(&s("c")).await.unwrap();
        let first = jobs.take().await.unwrap();
        assert_eq!((first.value().as_str(), first.priority()), ("d", p(9)));
        first.ack().await.unwrap();
        let rest = jobs.take_many(10, Duration::from_secs(5)).await.unwrap();
        let got: Vec<(String, u8)> = rest
            .into_iter()
            .map(|d| d.unwrap())
            .map(|d| (d.value().clone(), d.priority().level()))
            .collect();
        assert_eq!(got, [(s("b"), 3), (s("e"), 3), (s("a"), 0), (s("c"), 0)]);
    }
}

redis_test! {
    /// A nack puts the value back at its level: at once (ahead of the plain
    /// values), or after its delay through the priority delayed set (never
    /// Redisson's keys, where Java's transfer would drop its level).
    async fn a_nacked_priority_value_keeps_its_level(client, raw) {
        let producer = client.delayed_queue("prio-nack", StringCodec).unwrap();
        let jobs = client.reliable_queue("prio-nack", StringCodec).unwrap();
        producer.offer(&s("plain"), Duration::ZERO).await.unwrap();
        producer.offer_with_priority(&s("x"), Duration::ZERO, p(7)).await.unwrap();
        let taken = jobs.take().await.unwrap();
        assert_eq!(taken.value(), "x");
        assert!(taken.nack(Duration::ZERO).await.unwrap());
        let again = jobs.take().await.unwrap();
        assert_eq!((again.value().as_str(), again.priority(), again.delivery_count()), ("x", p(7), 2));
        assert!(again.nack(Duration::from_millis(300)).await.unwrap());
        assert_eq!(raw.zcard("delayq_priority_delayed:{prio-nack}").await, 1);
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{prio-nack}").await, 0);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let third = jobs.take().await.unwrap();
        assert_eq!((third.value().as_str(), third.priority(), third.delivery_count()), ("x", p(7), 3));
        third.ack().await.unwrap();
        assert_eq!(jobs.take().await.unwrap().value(), "plain");
    }
}

redis_test! {
    /// A delivery whose visibility timeout passes goes back to the head of
    /// its level, not to the plain list.
    async fn a_timed_out_priority_value_keeps_its_level(client, raw) {
        let producer = client.delayed_queue("prio-timeout", StringCodec).unwrap();
        let jobs = client.reliable_queue("prio-timeout", StringCodec).unwrap();
        let short = jobs.clone().with_visibility_timeout(Duration::from_millis(300));
        producer.offer(&s("plain"), Duration::ZERO).await.unwrap();
        producer.offer_with_priority(&s("x"), Duration::ZERO, p(2)).await.unwrap();
        let lost = short.take().await.unwrap();
        assert_eq!(lost.value(), "x");
        std::mem::forget(lost); // a consumer that died with it
        eventually(Duration::from_secs(60), "the reaper gives it back to its level", || async {
            raw.zcard("delayq_priority_ready:{prio-timeout}").await == 1
        })
        .await;
        let back = jobs.take().await.unwrap();
        assert_eq!((back.value().as_str(), back.priority(), back.delivery_count()), ("x", p(2), 2));
        back.ack().await.unwrap();
        assert_eq!(jobs.take().await.unwrap().value(), "plain");
    }
}

redis_test! {
    /// A worker (claiming in batches ahead of its handler) handles the
    /// priority values before the plain ones offered earlier.
    async fn a_worker_handles_higher_priorities_first(client) {
        let producer = client.delayed_queue("prio-worker", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-worker", StringCodec).unwrap();
        for i in 0..20 {
            consumer.offer(&format!("plain-{i}")).await.unwrap();
        }
        for i in 0..5 {
            producer.offer_with_priority(&format!("high-{i}"), Duration::ZERO, p(6)).await.unwrap();
        }
        let handled = Arc::new(Mutex::new(Vec::new()));
        let worker = client.worker("prio-worker", StringCodec).unwrap().concurrency(1).run({
            let handled = handled.clone();
            move |value: String| {
                let handled = handled.clone();
                async move {
                    handled.lock().push(value);
                    Ok::<(), BoxError>(())
                }
            }
        });
        eventually(Duration::from_secs(60), "all 25 handled", || async { handled.lock().len() == 25 }).await;
        worker.shutdown().await;
        let handled = handled.lock().clone();
        let high: Vec<String> = (0..5).map(|i| format!("high-{i}")).collect();
        let plain: Vec<String> = (0..20).map(|i| format!("plain-{i}")).collect();
        assert_eq!(handled[..5], high[..]);
        assert_eq!(handled[5..], plain[..]);
    }
}

redis_test! {
    /// A queue that never had a priority value is taken from as before:
    /// no script reads or writes a priority set.
    async fn takes_on_a_queue_without_priority_values_look_at_the_plain_list_alone(redis, client) {
        let producer = client.delayed_queue("prio-none", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-none", StringCodec).unwrap();
        let jobs = client.reliable_queue("prio-none", StringCodec).unwrap();
        let monitor = redis.monitor().await;
        // One through the delayed queue and its transfer, three straight to
        // the list (offers due in one millisecond come in any order).
        producer.offer(&s("v0"), Duration::ZERO).await.unwrap();
        assert_eq!(consumer.take().await.unwrap(), "v0");
        for i in 1..4 {
            consumer.offer(&format!("v{i}")).await.unwrap();
        }
        assert_eq!(consumer.try_take().await.unwrap().as_deref(), Some("v1"));
        jobs.take().await.unwrap().ack().await.unwrap();
        let many = jobs.take_many(5, Duration::from_secs(1)).await.unwrap();
        assert_eq!(many.len(), 1);
        let entries = monitor.entries().await;
        assert!(entries.iter().any(|e| e.name() == "lpop"), "the takes were recorded");
        let touched: Vec<String> = entries
            .iter()
            // A script's keys are named in its EVAL: what counts is what it runs.
            .filter(|e| e.from_lua || !matches!(e.name().as_str(), "evalsha" | "eval"))
            .filter(|e| {
                e.args.iter().skip(1).any(|a| {
                    a.starts_with(b"delayq_priority_ready:") || a.starts_with(b"delayq_priority_delayed:")
                })
            })
            .map(|e| e.name())
            .collect();
        assert!(touched.is_empty(), "commands on the priority sets: {touched:?}");
        assert!(!entries.iter().any(|e| e.name() == "zpopmin"));
    }
}

redis_test! {
    /// A take blocked on an empty queue gets a priority value offered while
    /// it waits: on a queue that never had one (the first ends its wait
    /// round), and on one that has.
    async fn a_blocked_take_gets_a_priority_value_offered_while_it_waits(client) {
        let producer = client.delayed_queue("prio-blocked", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-blocked", StringCodec).unwrap();
        for round in 0..2 {
            let take = tokio::spawn({
                let consumer = consumer.clone();
                async move { consumer.take().await }
            });
            tokio::time::sleep(Duration::from_millis(300)).await;
            producer.offer_with_priority(&format!("urgent-{round}"), Duration::ZERO, p(9)).await.unwrap();
            let taken = tokio::time::timeout(Duration::from_secs(60), take).await.unwrap().unwrap().unwrap();
            assert_eq!(taken, format!("urgent-{round}"));
        }
        let jobs = client.reliable_queue("prio-blocked", StringCodec).unwrap();
        let take = tokio::spawn({
            let jobs = jobs.clone();
            async move { jobs.take().await.map(|d| (d.value().clone(), d.priority())) }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        producer.offer_with_priority(&s("reliable"), Duration::ZERO, p(4)).await.unwrap();
        let taken = tokio::time::timeout(Duration::from_secs(60), take).await.unwrap().unwrap().unwrap();
        assert_eq!(taken, (s("reliable"), p(4)));
    }
}

redis_test! {
    /// A lost offer reply: fred sends the offer again, and the value is
    /// there once.
    async fn a_priority_offer_whose_reply_is_lost_adds_its_value_once(proxy, client, raw) {
        let producer = client.delayed_queue("prio-lost", StringCodec).unwrap();
        proxy.arm(Fault::LoseReply, "delayq_priority_ready:{prio-lost}");
        producer.offer_with_priority(&s("once"), Duration::ZERO, p(3)).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-lost}").await, 1);
        let consumer = client.blocking_queue("prio-lost", StringCodec).unwrap();
        assert_eq!(consumer.try_take().await.unwrap().as_deref(), Some("once"));
        assert_eq!(consumer.try_take().await.unwrap(), None);
    }
}

redis_test! {
    /// Equal payloads at one level are distinct values, large ones too.
    async fn equal_and_large_payloads_keep_their_count_and_bytes(client, raw) {
        let producer = client.delayed_queue("prio-equal", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-equal", StringCodec).unwrap();
        let big = "x".repeat(64 * 1024);
        for _ in 0..3 {
            producer.offer_with_priority(&s("same"), Duration::ZERO, p(5)).await.unwrap();
        }
        producer.offer_with_priority(&big, Duration::ZERO, p(5)).await.unwrap();
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-equal}").await, 4);
        for _ in 0..3 {
            assert_eq!(consumer.take().await.unwrap(), "same");
        }
        assert_eq!(consumer.take().await.unwrap(), big);
    }
}

redis_test! {
    /// One take moves at most 100 due delayed priority values: its cost is
    /// bounded whatever the number due. (Values due in the same
    /// millisecond come in any order, as in Redisson's timeout set.)
    async fn a_take_moves_a_bounded_number_of_due_priority_values(client, raw) {
        let producer = client.delayed_queue("prio-bounded", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-bounded", StringCodec).unwrap();
        for i in 0..250 {
            producer.offer_with_priority(&format!("v{i}"), Duration::from_millis(200), p(1)).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(400)).await;
        let mut taken = vec![consumer.try_take().await.unwrap().unwrap()];
        assert_eq!(raw.zcard("delayq_priority_delayed:{prio-bounded}").await, 150);
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-bounded}").await, 99);
        for _ in 1..250 {
            taken.push(consumer.take().await.unwrap());
        }
        taken.sort_by_key(|v| v[1..].parse::<u32>().unwrap());
        let all: Vec<String> = (0..250).map(|i| format!("v{i}")).collect();
        assert_eq!(taken, all);
        assert_eq!(consumer.try_take().await.unwrap(), None);
    }
}

redis_test! {
    /// `clear` empties the priority sets with the rest: the delayed queue's
    /// its delayed values, the blocking queue's its ready ones.
    async fn clears_cover_the_priority_values(client, raw) {
        let producer = client.delayed_queue("prio-clear", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-clear", StringCodec).unwrap();
        producer.offer_with_priority(&s("ready"), Duration::ZERO, p(3)).await.unwrap();
        producer.offer_with_priority(&s("later"), Duration::from_secs(3600), p(3)).await.unwrap();
        assert!(producer.clear().await.unwrap());
        assert_eq!(raw.zcard("delayq_priority_delayed:{prio-clear}").await, 0);
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-clear}").await, 1);
        assert!(consumer.clear().await.unwrap());
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-clear}").await, 0);
        assert_eq!(consumer.try_take().await.unwrap(), None);
    }
}

redis_test! {
    /// A member of the ready set that is not delayq's (written by hand) goes
    /// to the dead letters, where an operator sees it, and the take goes on
    /// to the next value instead of failing on it forever.
    async fn a_foreign_member_of_the_ready_set_goes_to_the_dead_letters(client, raw) {
        let producer = client.delayed_queue("prio-foreign", StringCodec).unwrap();
        let consumer = client.blocking_queue("prio-foreign", StringCodec).unwrap();
        producer.offer_with_priority(&s("real"), Duration::ZERO, p(2)).await.unwrap();
        raw.cmd(
            "ZADD",
            vec!["delayq_priority_ready:{prio-foreign}".into(), "0".into(), "garbage".into()],
        )
        .await;
        assert_eq!(consumer.try_take().await.unwrap().as_deref(), Some("real"));
        let dead = raw.lrange("delayq_dead_letter:{prio-foreign}").await;
        assert_eq!(dead, [bytes::Bytes::from_static(b"garbage")]);
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-foreign}").await, 0);
    }
}

redis_test! {
    /// Concurrent offers with a priority (some with headers) share script
    /// runs, as plain offers do, and are taken as offering them one by one
    /// would leave them: in arrival order within their level, each once,
    /// with its own headers.
    async fn concurrent_priority_offers_share_script_runs_and_keep_arrival_order(redis, raw, client) {
        use crate::joined_offers::{hold_writes, script_runs};
        let producer = client.delayed_queue("prio-joined", delayq::LongCodec).unwrap();
        let consumer = client.blocking_queue("prio-joined", delayq::LongCodec).unwrap();
        producer.offer_with_priority(&-1, Duration::ZERO, p(3)).await.unwrap(); // scripts loaded, connected
        let monitor = redis.monitor().await;
        hold_writes(&raw, 300).await;
        let offers = (0..1_000i64).map(|i| {
            let producer = producer.clone();
            async move {
                let options = delayq::OfferOptions::default().priority(p(3));
                let options = if i % 10 == 0 { options.header("i", i.to_string()) } else { options };
                producer.offer_with(&i, &options).await
            }
        });
        for result in futures_util::future::join_all(offers).await {
            result.unwrap();
        }
        let runs = script_runs(&monitor.entries().await, "delayq_priority_ready:{prio-joined}");
        assert!(runs <= 10, "{runs} script runs for 1,000 offers (one by one: 1,000)");
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-joined}").await, 1_001);
        assert_eq!(consumer.try_take().await.unwrap(), Some(-1));
        for i in 0..1_000i64 {
            let (value, headers) = consumer.take_with_headers(Duration::from_secs(5)).await.unwrap().unwrap();
            assert_eq!(value, i, "arrival order");
            let expected = (i % 10 == 0).then(|| i.to_string());
            assert_eq!(headers.get("i").map(str::to_owned), expected);
        }
        assert_eq!(consumer.try_take().await.unwrap(), None);
    }
}

redis_test! {
    /// A joined run of priority offers whose reply is lost is sent again
    /// (it is keyed by a request): every offer succeeds, each value is there
    /// once.
    async fn a_joined_priority_run_whose_reply_is_lost_adds_each_value_once(proxy, client, raw) {
        use crate::joined_offers::hold_writes;
        let producer = client.delayed_queue("prio-joined-lost", StringCodec).unwrap();
        producer.offer_with_priority(&s("warm"), Duration::ZERO, p(2)).await.unwrap();
        proxy.arm(Fault::LoseReply, "joined-payload");
        hold_writes(&raw, 300).await;
        let (alone, joined) = (s("alone"), s("joined-payload"));
        let mut offers = vec![producer.offer_with_priority(&alone, Duration::ZERO, p(2))];
        offers.extend((0..5).map(|_| producer.offer_with_priority(&joined, Duration::ZERO, p(2))));
        for result in futures_util::future::join_all(offers).await {
            result.unwrap();
        }
        assert_eq!(proxy.fired(), 1);
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-joined-lost}").await, 7);
    }
}

redis_test! {
    /// Concurrent blocking takes of a queue with priorities share pops: one
    /// run serves every take waiting; each value goes to one take, in take
    /// order, and values popped for takes that stopped waiting go back to
    /// the head of their level (none lost, none twice).
    async fn concurrent_priority_takes_share_pops_and_lose_nothing(redis, client, raw) {
        use crate::joined_offers::{hold_writes, script_runs};
        let producer = client.delayed_queue("prio-pops", delayq::LongCodec).unwrap();
        let consumer = client.blocking_queue("prio-pops", delayq::LongCodec).unwrap();
        for i in 0..1_000i64 {
            producer.offer_with_priority(&i, Duration::ZERO, p(1 + (i % 9) as u8)).await.unwrap();
        }
        assert_eq!(consumer.try_take().await.unwrap().map(|v| v % 9), Some(8), "the highest level first");
        let monitor = redis.monitor().await;
        hold_writes(&raw, 300).await;
        let takes = (0..600).map(|_| {
            let consumer = consumer.clone();
            async move { consumer.take().await.unwrap() }
        });
        let mut taken = futures_util::future::join_all(takes).await;
        let runs = script_runs(&monitor.entries().await, "delayq_priority_ready:{prio-pops}");
        assert!(runs <= 20, "{runs} pops for 600 takes");
        // Takes that give up while their pop is in flight: whatever was
        // popped for them goes back.
        hold_writes(&raw, 300).await;
        let quitters = (0..200).map(|_| {
            let consumer = consumer.clone();
            async move { consumer.take_timeout(Duration::from_millis(100)).await.unwrap() }
        });
        taken.extend(futures_util::future::join_all(quitters).await.into_iter().flatten());
        while let Some(value) = consumer.try_take().await.unwrap() {
            taken.push(value);
        }
        taken.sort();
        let mut all: Vec<i64> = (0..1_000).collect();
        let first = all.iter().position(|i| i % 9 == 8).unwrap();
        all.remove(first);
        assert_eq!(taken.len(), 999, "every value once");
        assert_eq!(taken, all);
    }
}

redis_test! {
    /// A reliable take moves foreign members of the ready set (written by
    /// hand) to the dead letters at most 100 per claim, then claims again:
    /// each script run stays bounded, and the real value still comes.
    async fn a_reliable_take_moves_foreign_members_aside_a_bounded_number_per_claim(redis, client, raw) {
        use crate::joined_offers::script_runs;
        let producer = client.delayed_queue("prio-foreign-many", StringCodec).unwrap();
        let jobs = client.reliable_queue("prio-foreign-many", StringCodec).unwrap();
        producer.offer_with_priority(&s("real"), Duration::ZERO, p(1)).await.unwrap();
        let mut zadd = vec!["delayq_priority_ready:{prio-foreign-many}".into()];
        for i in 0..250 {
            zadd.push("0".into());
            zadd.push(format!("garbage-{i:03}").into());
        }
        raw.cmd("ZADD", zadd).await;
        let monitor = redis.monitor().await;
        let taken = jobs.take().await.unwrap();
        assert_eq!(taken.value(), "real");
        taken.ack().await.unwrap();
        assert_eq!(raw.llen("delayq_dead_letter:{prio-foreign-many}").await, 250);
        assert_eq!(raw.zcard("delayq_priority_ready:{prio-foreign-many}").await, 0);
        let runs = script_runs(&monitor.entries().await, "delayq_priority_ready:{prio-foreign-many}");
        assert!(runs >= 3, "250 foreign members moved in {runs} claims (at most 100 a claim)");
    }
}
