//! Review of issue 47 item 2, re-partitioning: what breaks, and what holds,
//! under the project's fault model. Each test says in its doc comment what
//! it proves; the review's findings (all fixed since) say so.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::limits::Limits;
use delayq::worker::{Permanent, RetryAfter, RetryPolicy};
use delayq::{LongCodec, OfferOptions, StringCodec};
use parking_lot::Mutex;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test};

const WAIT: Duration = Duration::from_secs(60);

/// What partition `name` holds (ready, delayed, in flight, dead...), read
/// without a transfer.
async fn holds(client: &delayq::Client, name: &str) -> u64 {
    let s = client
        .delayed_queue(name, StringCodec)
        .unwrap()
        .without_transfer()
        .status()
        .await
        .unwrap();
    s.pending
        + s.ready
        + s.in_flight
        + s.dead_letters
        + s.quarantined
        + s.priority_pending
        + s.priority_ready
        + s.grouped_pending
        + s.grouped_ready
}

redis_test! {
    /// Review finding, fixed (a re-partition seals the old partitions: the
    /// stale offer is refused and goes to the new layout). A producer handle read the layout just before
    /// a re-partition; its offer is on its way on a slow link (a 5 s stall:
    /// less than the client's own 10 s unresponsive timeout, so the offer
    /// succeeds) while `retire_partitions` looks at the old partitions
    /// twice, 3 s apart, sees them empty and drops them. The offer then
    /// lands in a dropped partition and returns Ok: the value is in no
    /// partition the layout names, so no take or worker ever reads it.
    /// RETIRE_GRACE (3 s) assumes every offer lands within it; nothing
    /// makes that so.
    async fn an_offer_on_its_way_through_the_retire_grace_is_stranded(redis, proxy, client) {
        let name = "rpr-stale";
        // Just made: this handle reads the layout again a second from now.
        let q = client.create_partitioned_queue(name, 2, LongCodec).await.unwrap();
        let old = q.names();
        let admin = redis.client().await; // not through the proxy
        proxy.set_stalled(true);
        let offer = {
            let q = q.clone();
            tokio::spawn(async move { q.offer_keyed("k", &7, Duration::ZERO).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        admin.repartition(name, 3).await.unwrap();
        let retirement = admin.retire_partitions(name).await.unwrap();
        assert_eq!(retirement.retired, old, "{retirement:?}");
        proxy.set_stalled(false);
        offer.await.unwrap().expect("the offer succeeded");
        let layout = admin.partition_layout(name).await.unwrap().unwrap();
        let read: BTreeSet<&String> = layout.all_names().collect();
        let mut stranded = Vec::new();
        for partition in &old {
            let n = holds(&admin, partition).await;
            if n > 0 && !read.contains(partition) {
                stranded.push((partition.clone(), n));
            }
        }
        assert!(
            stranded.is_empty(),
            "an offer that returned Ok left its value in partitions no longer read: {stranded:?} (layout reads {read:?})"
        );
    }
}

redis_test! {
    /// HOLDS (doubted). The same race under a lost request: the stale
    /// handle's offer goes into a connection that went silent (a black
    /// hole: the request is lost) while the retire drops the old
    /// partitions. fred does not resend it blind: after its 10 s
    /// unresponsive timeout the offer fails with the typed
    /// `Error::OutcomeUnknown`, and nothing lands in a dropped partition (a
    /// retry by the caller goes to the new layout).
    async fn a_lost_stale_offer_is_outcome_unknown_and_strands_nothing(redis, proxy, client) {
        let name = "rpr-stale-hole";
        let q = client.create_partitioned_queue(name, 2, LongCodec).await.unwrap();
        let old = q.names();
        let admin = redis.client().await; // not through the proxy
        proxy.black_hole();
        let offer = {
            let q = q.clone();
            tokio::spawn(async move { q.offer_keyed("k", &7, Duration::ZERO).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        admin.repartition(name, 3).await.unwrap();
        let retirement = admin.retire_partitions(name).await.unwrap();
        assert_eq!(retirement.retired, old, "{retirement:?}");
        let offered = offer.await.unwrap();
        assert!(matches!(offered, Err(delayq::Error::OutcomeUnknown { .. })), "{offered:?}");
        let layout = admin.partition_layout(name).await.unwrap().unwrap();
        let read: BTreeSet<&String> = layout.all_names().collect();
        let mut stranded = Vec::new();
        for partition in &old {
            let n = holds(&admin, partition).await;
            if n > 0 && !read.contains(partition) {
                stranded.push((partition.clone(), n));
            }
        }
        assert!(
            stranded.is_empty(),
            "the offer answered {offered:?} and left its value in partitions no longer read: {stranded:?} (layout reads {read:?})"
        );
    }
}

redis_test! {
    /// Review finding, fixed. A retire whose 3 s wait overlaps another
    /// re-partition answered `moved`, dropped nothing, and reported neither
    /// retired nor holding partitions (the CLI printed "no retired
    /// partitions", exit 0) while the layout still had five. Now the sealed
    /// partitions it saw empty are retired whatever the generation, and
    /// every retired partition it did not look at is reported as holding.
    async fn a_retire_that_meets_a_repartition_does_not_say_nothing_is_left(redis, client) {
        let name = "rpr-retire-race";
        client.create_partitioned_queue(name, 2, LongCodec).await.unwrap();
        client.repartition(name, 3).await.unwrap();
        let other = redis.client().await;
        let retire = tokio::spawn(async move { other.retire_partitions("rpr-retire-race").await });
        // Inside the retire's 3 s wait between its two looks.
        tokio::time::sleep(Duration::from_millis(1000)).await;
        client.repartition(name, 4).await.unwrap();
        let r = retire.await.unwrap().unwrap();
        let stored = client.partition_layout(name).await.unwrap().unwrap();
        // The first generation's two, sealed and seen empty, are retired
        // although the layout moved on; the second's three, retired by the
        // re-partition in between, are reported as still read.
        assert_eq!(stored.retired().len(), 3, "{stored:?}");
        assert_eq!(r.retired.len(), 2, "{r:?}");
        let held: Vec<&String> = r.holding.iter().map(|(n, _)| n).collect();
        assert_eq!(held, stored.retired().iter().collect::<Vec<_>>(), "{r:?}");
    }
}

redis_test! {
    /// Review finding, fixed (the settings are copied). A partitioned queue's settings live on
    /// its partitions (pause, limits, group limits, events: set through
    /// `partition(i)`). A re-partition makes new partitions without them: a
    /// paused queue, or one with a max size, takes offers and runs them
    /// unpaused and unlimited once re-partitioned, and nothing says so.
    async fn new_partitions_keep_the_queues_pause_and_limits(client) {
        let name = "rpr-settings";
        let q = client.create_partitioned_queue(name, 2, StringCodec).await.unwrap();
        let limits = Limits::none().max_size(1000);
        for i in 0..2 {
            let p = q.partition(i).unwrap();
            p.pause().await.unwrap();
            p.set_limits(&limits).await.unwrap();
        }
        client.repartition(name, 3).await.unwrap();
        let q = client.partitioned_queue(name, StringCodec).await.unwrap();
        let mut lost = Vec::new();
        for i in 0..3 {
            let p = q.partition(i).unwrap();
            if !p.is_paused().await.unwrap() {
                lost.push(format!("{} not paused", p.name()));
            }
            if p.limits().await.unwrap() != limits {
                lost.push(format!("{} has limits {}", p.name(), p.limits().await.unwrap()));
            }
        }
        assert!(lost.is_empty(), "every old partition was paused with {limits}; after the re-partition: {lost:?}");
    }
}

redis_test! {
    /// HOLDS (doubted: retired partitions' delayed-queue handles are
    /// "transfer once used", and nothing offers to them). The producer that
    /// offered a delayed value before the re-partition is gone; a process
    /// started after it offers (to the new partitions) and takes through its
    /// own handle: the old value, due first, is still moved and taken first
    /// (an unused once-used handle registers its transfer after a grace).
    async fn a_handle_opened_after_a_repartition_transfers_the_retired_partitions(redis, client) {
        let name = "rpr-transfer";
        {
            let before = redis.client().await;
            let q = before.create_partitioned_queue(name, 2, LongCodec).await.unwrap();
            q.offer_keyed("k", &1, Duration::from_millis(500)).await.unwrap();
            before.shutdown().await;
        }
        client.repartition(name, 3).await.unwrap();
        let q = client.partitioned_queue(name, LongCodec).await.unwrap();
        q.offer_keyed("k", &2, Duration::from_millis(1500)).await.unwrap();
        let mut taken = Vec::new();
        while let Some(v) = q.take_timeout(Duration::from_secs(6)).await.unwrap() {
            taken.push(v);
        }
        assert_eq!(taken, vec![1, 2], "key k's earlier value (due first, in a retired partition) was not taken");
    }
}

redis_test! {
    /// Review finding, fixed: (group order). A group's value fails in what becomes a
    /// retired partition; under `OnFailure::Hold` (the default) "no later
    /// value of the key overtakes it". The group's next value, offered
    /// after the re-partition, lands in a new partition (the group key's
    /// partition in the new count), whose worker starts once the retired
    /// partition has nothing ready or in flight (the held retry counts as
    /// neither): it runs before the held value's retry.
    async fn a_held_group_value_in_a_retired_partition_is_not_overtaken(redis, client) {
        let name = "rpr-group";
        let q = client.create_partitioned_queue(name, 2, StringCodec).await.unwrap();
        let group = OfferOptions::default().group("g");
        q.offer_with(&"g1".to_owned(), &group).await.unwrap();
        let order: Arc<Mutex<Vec<String>>> = Arc::default();
        let failed = Arc::new(AtomicBool::new(false));
        let worker = client
            .partitioned_worker(&q)
            .unwrap()
            .concurrency(4)
            .retry(RetryPolicy::fixed(Duration::from_secs(8)).max_attempts(3))
            .run({
                let (order, failed) = (order.clone(), failed.clone());
                move |v: String| {
                    let (order, failed) = (order.clone(), failed.clone());
                    async move {
                        order.lock().push(v.clone());
                        if v == "g1" && !failed.swap(true, Ordering::SeqCst) {
                            return Err(RetryAfter::new(Duration::from_secs(8), std::io::Error::other("once")).into());
                        }
                        Ok::<(), BoxError>(())
                    }
                }
            });
        eventually(WAIT, "g1 failed once", || async { failed.load(Ordering::SeqCst) }).await;
        let other = redis.client().await;
        other.repartition(name, 3).await.unwrap();
        let producer = other.partitioned_queue(name, StringCodec).await.unwrap();
        producer.offer_with(&"g2".to_owned(), &group).await.unwrap();
        eventually(WAIT, "g1's retry and g2 handled", || async { order.lock().len() == 3 }).await;
        worker.shutdown().await;
        assert_eq!(*order.lock(), ["g1", "g1", "g2"], "g2 overtook the held g1");
    }
}

redis_test! {
    /// HOLDS. Two clients re-partition at once, with the same count and
    /// with different counts, 10 rounds: every call answers a layout, the
    /// generation grows by one per stored change, and no partition that
    /// was ever current is dropped from the layout (each is current or
    /// retired), so nothing offered to one is out of sight.
    async fn concurrent_repartitions_from_two_clients_keep_every_partition_read(redis, client) {
        let name = "rpr-concurrent";
        client.create_partitioned_queue(name, 2, LongCodec).await.unwrap();
        let other = redis.client().await;
        let mut ever: BTreeSet<String> = client.partition_layout(name).await.unwrap().unwrap().names().iter().cloned().collect();
        for round in 0..10usize {
            let (a_count, b_count) = if round % 2 == 0 { (3 + round, 3 + round) } else { (3 + round, 4 + round) };
            let (a, b) = tokio::join!(client.repartition(name, a_count), other.repartition(name, b_count));
            let (a, b) = (a.unwrap(), b.unwrap());
            ever.extend(a.names().iter().cloned());
            ever.extend(b.names().iter().cloned());
            let stored = client.partition_layout(name).await.unwrap().unwrap();
            let read: BTreeSet<String> = stored.all_names().cloned().collect();
            assert!(ever.is_subset(&read), "round {round}: {:?} no longer read", ever.difference(&read).collect::<Vec<_>>());
            if a_count == b_count {
                assert_eq!(a, b, "round {round}: two identical re-partitions made two generations");
            }
            assert!(stored.count() == a_count || stored.count() == b_count);
        }
    }
}

redis_test! {
    /// HOLDS. Many re-partitions in a row (3 → 5 → 2 → 4) with, before
    /// each, values ready now, values delayed past the switch, 10 KB
    /// payloads and equal payloads, while another client's producer runs
    /// bulk `offer_all`s through every switch: each value is taken exactly
    /// once (equal payloads as many times as offered) and, drained, every
    /// old partition is retired for good.
    async fn many_repartitions_under_a_racing_bulk_producer_lose_and_repeat_nothing(redis, client) {
        let name = "rpr-chain";
        let q = client.create_partitioned_queue(name, 3, StringCodec).await.unwrap();
        let big = "x".repeat(10 * 1024);
        let mut expected: BTreeMap<String, usize> = BTreeMap::new();
        let racer = redis.client().await;
        let stop = Arc::new(AtomicBool::new(false));
        let raced = {
            let producer = racer.partitioned_queue(name, StringCodec).await.unwrap();
            let stop = stop.clone();
            tokio::spawn(async move {
                let mut offered = Vec::new();
                let mut batch = 0;
                while !stop.load(Ordering::SeqCst) {
                    let values: Vec<String> = (0..10).map(|i| format!("race-{batch}-{i}")).collect();
                    producer.offer_all(values.iter().map(|v| (v.clone(), Duration::ZERO))).await.unwrap();
                    offered.extend(values);
                    batch += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                offered
            })
        };
        for (step, count) in [5usize, 2, 4].into_iter().enumerate() {
            let mut add = |v: String| *expected.entry(v).or_insert(0) += 1;
            let ready: Vec<String> = (0..20).map(|i| format!("s{step}-r{i}")).collect();
            q.offer_all(ready.iter().map(|v| (v.clone(), Duration::ZERO))).await.unwrap();
            ready.into_iter().for_each(&mut add);
            let delayed: Vec<String> = (0..10).map(|i| format!("s{step}-d{i}")).collect();
            q.offer_all(delayed.iter().map(|v| (v.clone(), Duration::from_millis(1500)))).await.unwrap();
            delayed.into_iter().for_each(&mut add);
            for i in 0..3 {
                let v = format!("s{step}-big{i}-{big}");
                q.offer_keyed("big", &v, Duration::ZERO).await.unwrap();
                add(v);
            }
            for _ in 0..5 {
                q.offer(&"same".to_owned(), Duration::ZERO).await.unwrap();
                add("same".to_owned());
            }
            let layout = client.repartition(name, count).await.unwrap();
            assert_eq!(layout.count(), count);
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
        tokio::time::sleep(Duration::from_millis(1200)).await;
        stop.store(true, Ordering::SeqCst);
        for v in raced.await.unwrap() {
            *expected.entry(v).or_insert(0) += 1;
        }
        let total: usize = expected.values().sum();
        let mut taken: BTreeMap<String, usize> = BTreeMap::new();
        let mut n = 0;
        while n < total {
            match q.take_timeout(Duration::from_secs(10)).await.unwrap() {
                Some(v) => {
                    *taken.entry(v).or_insert(0) += 1;
                    n += 1;
                }
                None => break,
            }
        }
        assert_eq!(q.try_take().await.unwrap(), None, "more values than offered");
        let missing: Vec<_> = expected.iter().filter(|(k, c)| taken.get(*k) != Some(c)).map(|(k, c)| (&k[..k.len().min(20)], *c, taken.get(k).copied())).collect();
        assert!(missing.is_empty(), "{} of {total} taken; differing: {missing:?}", n);
        let retirement = client.retire_partitions(name).await.unwrap();
        assert!(retirement.holding.is_empty(), "{retirement:?}");
        assert_eq!(retirement.retired.len(), 3 + 5 + 2, "{retirement:?}");
        assert!(retirement.layout.retired().is_empty());
    }
}

redis_test! {
    /// HOLDS. A retire whose reply is lost (fred resends it) and one whose
    /// request is lost answer as one would have: the drained partitions
    /// retired once, the layout as stored.
    async fn a_lost_retire_reply_or_request_answers_the_same(client, proxy) {
        let name = "rpr-lost-retire";
        client.create_partitioned_queue(name, 2, LongCodec).await.unwrap();
        let first = client.repartition(name, 3).await.unwrap();
        proxy.arm(Fault::LoseReply, "partitions_retire");
        let r = client.retire_partitions(name).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(r.retired, first.retired(), "{r:?}");
        assert!(r.layout.retired().is_empty());
        client.repartition(name, 4).await.unwrap();
        proxy.arm(Fault::LoseRequest, "delayq_partitions:{rpr-lost-retire}");
        let r = client.retire_partitions(name).await.unwrap();
        assert_eq!(r.retired.len(), 3, "{r:?}");
        assert_eq!(client.partition_layout(name).await.unwrap().unwrap(), r.layout);
        assert!(r.layout.retired().is_empty());
    }
}

redis_test! {
    /// HOLDS. A partitioned worker through a re-partition, with values in
    /// the old partitions that fail once (retried there, delayed) and one
    /// that dead-letters there: every value succeeds once; a retire keeps
    /// the partition with the dead letter (listed with it) and drops the
    /// others; requeued, the dead letter is handled and that partition
    /// retires too.
    async fn retries_and_dead_letters_in_a_retired_partition(redis, client) {
        let name = "rpr-retries";
        let q = client.create_partitioned_queue(name, 2, LongCodec).await.unwrap();
        q.offer_all((0..40).map(|i| (i, Duration::ZERO))).await.unwrap();
        let handled: Arc<Mutex<BTreeMap<i64, usize>>> = Arc::default();
        let attempts: Arc<Mutex<BTreeMap<i64, usize>>> = Arc::default();
        let dead_once = Arc::new(AtomicBool::new(true));
        let worker = client
            .partitioned_worker(&q)
            .unwrap()
            .concurrency(3)
            .retry(RetryPolicy::fixed(Duration::from_millis(700)).max_attempts(5))
            .run({
                let (handled, attempts, dead_once) = (handled.clone(), attempts.clone(), dead_once.clone());
                move |v: i64| {
                    let (handled, attempts, dead_once) = (handled.clone(), attempts.clone(), dead_once.clone());
                    async move {
                        let n = {
                            let mut a = attempts.lock();
                            let e = a.entry(v).or_insert(0);
                            *e += 1;
                            *e
                        };
                        if v == 13 && dead_once.swap(false, Ordering::SeqCst) {
                            return Err(Permanent::new(std::io::Error::other("dead")).into());
                        }
                        if v % 5 == 0 && n == 1 {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            return Err(RetryAfter::new(Duration::from_millis(1500), std::io::Error::other("once")).into());
                        }
                        *handled.lock().entry(v).or_insert(0) += 1;
                        Ok::<(), BoxError>(())
                    }
                }
            });
        // Some failed once (their retries wait in the old partitions).
        eventually(WAIT, "retries under way", || async { attempts.lock().get(&0).copied().unwrap_or(0) >= 1 && attempts.lock().contains_key(&13) }).await;
        let old = q.names();
        let other = redis.client().await;
        other.repartition(name, 3).await.unwrap();
        let producer = other.partitioned_queue(name, LongCodec).await.unwrap();
        producer.offer_all((100..140).map(|i| (i, Duration::ZERO))).await.unwrap();
        eventually(WAIT, "all but the dead letter handled", || async { handled.lock().len() == 79 }).await;
        let dead_in: Vec<String> = {
            let mut v = Vec::new();
            for p in &old {
                if client.reliable_queue(p, LongCodec).unwrap().dead_letter_len().await.unwrap() == 1 {
                    v.push(p.clone());
                }
            }
            v
        };
        assert_eq!(dead_in.len(), 1);
        let r = other.retire_partitions(name).await.unwrap();
        assert_eq!(r.holding, vec![(dead_in[0].clone(), 1)], "{r:?}");
        assert_eq!(r.retired.len(), 1, "{r:?}");
        let requeued = client.reliable_queue(&dead_in[0], LongCodec).unwrap().requeue_dead_letters(10).await.unwrap();
        assert_eq!(requeued, 1);
        eventually(WAIT, "the requeued dead letter handled", || async { handled.lock().len() == 80 }).await;
        eventually(WAIT, "the last old partition retires", || async {
            other.retire_partitions(name).await.unwrap().layout.retired().is_empty()
        })
        .await;
        let report = worker.shutdown().await;
        assert!(handled.lock().values().all(|&n| n == 1), "a value handled twice: {:?}", handled.lock());
        assert_eq!(report.succeeded, 80);
    }
}

redis_test! {
    /// HOLDS. A partitioned worker shut down right after a re-partition
    /// (while it starts and holds the new partitions' workers): nothing is
    /// left in flight, and what it handled plus what a take finds after is
    /// every value once.
    async fn a_worker_shut_down_during_a_repartition_gives_everything_back(redis, client) {
        let name = "rpr-shutdown";
        let q = client.create_partitioned_queue(name, 3, LongCodec).await.unwrap();
        q.offer_all((0..300).map(|i| (i, Duration::ZERO))).await.unwrap();
        eventually(WAIT, "ready", || async { q.ready_len().await.unwrap() == 300 }).await;
        let handled: Arc<Mutex<BTreeMap<i64, usize>>> = Arc::default();
        let worker = client.partitioned_worker(&q).unwrap().concurrency(2).prefetch(32).run({
            let handled = handled.clone();
            move |v: i64| {
                let handled = handled.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    *handled.lock().entry(v).or_insert(0) += 1;
                    Ok::<(), BoxError>(())
                }
            }
        });
        eventually(WAIT, "some handled", || async { handled.lock().len() >= 10 }).await;
        let other = redis.client().await;
        other.repartition(name, 5).await.unwrap();
        let producer = other.partitioned_queue(name, LongCodec).await.unwrap();
        producer.offer_all((300..400).map(|i| (i, Duration::ZERO))).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        worker.shutdown().await;
        let handled = handled.lock().clone();
        assert!(handled.values().all(|&n| n == 1));
        let status = producer.status().await.unwrap();
        assert_eq!(status.total.in_flight, 0, "{status:?}");
        let mut rest = BTreeSet::new();
        while let Some(v) = producer.take_timeout(Duration::from_secs(3)).await.unwrap() {
            assert!(rest.insert(v) && !handled.contains_key(&v), "{v} twice");
        }
        assert_eq!(rest.len() + handled.len(), 400);
    }
}

redis_test! {
    /// HOLDS. Redis restarted (AOF, fsync always) between a re-partition
    /// and the next offers, a partitioned worker running through both:
    /// the layout's generation survives, every value offered before, across
    /// and after is handled (a value whose ack the restart cut may run
    /// again: at most a few), and the old partitions retire once drained.
    async fn a_redis_restart_after_a_repartition_loses_nothing(redis) {
        drop(redis);
        let mut server = delayq_test_support::RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]).await;
        let name = "rpr-restart";
        let client = server.client().await;
        let q = client.create_partitioned_queue(name, 3, LongCodec).await.unwrap();
        q.offer_all((0..100).map(|i| (i, Duration::from_millis(if i % 2 == 0 { 0 } else { 2500 })))).await.unwrap();
        let handled: Arc<Mutex<BTreeMap<i64, usize>>> = Arc::default();
        let worker = client.partitioned_worker(&q).unwrap().concurrency(2).run({
            let handled = handled.clone();
            move |v: i64| {
                let handled = handled.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    *handled.lock().entry(v).or_insert(0) += 1;
                    Ok::<(), BoxError>(())
                }
            }
        });
        let admin = server.client().await;
        let layout = admin.repartition(name, 4).await.unwrap();
        for i in 100..150 {
            q.offer(&i, Duration::ZERO).await.unwrap();
        }
        server.restart().await;
        let stored = admin.partition_layout(name).await.unwrap().unwrap();
        assert_eq!(stored, layout, "the layout after the restart");
        let mut offered_after = 0;
        for i in 150..250 {
            // An offer the restart cut is not known to be queued: offer again.
            loop {
                match q.offer(&i, Duration::ZERO).await {
                    Ok(()) => break,
                    Err(e) => {
                        eprintln!("offer {i}: {e}");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
            offered_after += 1;
        }
        assert_eq!(offered_after, 100);
        eventually(WAIT, "all handled", || async { handled.lock().len() == 250 }).await;
        let twice: Vec<(i64, usize)> = handled.lock().iter().filter(|(_, n)| **n > 1).map(|(v, n)| (*v, *n)).collect();
        assert!(twice.len() <= 4, "handled more than once: {twice:?}");
        eventually(WAIT, "old partitions retire", || async {
            admin.retire_partitions(name).await.unwrap().layout.retired().is_empty()
        })
        .await;
        worker.shutdown().await;
    }
}
