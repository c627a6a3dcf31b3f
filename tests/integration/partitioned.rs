//! Partitioned queues: one logical queue over N ordinary Redisson queues
//! whose names hash to different slots (`PartitionedQueue`,
//! `PartitionedWorker`), on one server here; the 3-master Cluster test is
//! `delayq-cli/tests/deployments/partition.rs`.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::format::{pack, Format};
use delayq::{BytesCodec, Error, LongCodec, OfferOptions, PartitionLayout, StringCodec};
use parking_lot::Mutex;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, now_ms, redis_test};

const WAIT: Duration = Duration::from_secs(60);

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    /// The layout is stored once: a create with the same count opens it
    /// (same names), another count is refused and changes nothing, an
    /// unknown name is not partitioned, and names that would pin every
    /// partition to one slot are refused.
    async fn a_partitioned_queue_is_created_once_and_its_count_is_fixed(client, raw) {
        let q = client.create_partitioned_queue("pq-create", 3, StringCodec).await.unwrap();
        assert_eq!(q.count(), 3);
        assert_eq!(q.names(), PartitionLayout::plan("pq-create", 3).unwrap().names());
        let stored = raw
            .cmd("HGET", vec!["delayq_partitions:{pq-create}".into(), "names".into()])
            .await;
        assert_eq!(stored.as_str().unwrap(), q.names().join("\n"));
        let again = client.create_partitioned_queue("pq-create", 3, StringCodec).await.unwrap();
        assert_eq!(again.names(), q.names());
        assert_eq!(again.layout().created(), q.layout().created());
        assert!(q.layout().created().is_some());
        match client.create_partitioned_queue("pq-create", 4, StringCodec).await {
            Err(Error::PartitionCountMismatch { queue, stored: 3, asked: 4 }) => assert_eq!(queue, "pq-create"),
            other => panic!("{other:?}"),
        }
        let count = raw.cmd("HGET", vec!["delayq_partitions:{pq-create}".into(), "count".into()]).await;
        assert_eq!(count.as_str().unwrap(), "3");
        let opened = client.partitioned_queue("pq-create", StringCodec).await.unwrap();
        assert_eq!(opened.names(), q.names());
        assert_eq!(client.partition_layout("pq-create").await.unwrap().unwrap(), *q.layout());
        assert!(matches!(
            client.partitioned_queue("pq-none", StringCodec).await,
            Err(Error::NotPartitioned { .. })
        ));
        assert!(client.partition_layout("pq-none").await.unwrap().is_none());
        assert!(matches!(
            client.create_partitioned_queue("{t}pq", 3, StringCodec).await,
            Err(Error::InvalidQueueName { .. })
        ));
        assert!(matches!(
            client.create_partitioned_queue("pq-zero", 0, StringCodec).await,
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            client.create_partitioned_queue("pq-many", delayq::MAX_PARTITIONS + 1, StringCodec).await,
            Err(Error::InvalidArgument(_))
        ));
    }
}

redis_test! {
    /// fred resends a create whose reply was lost: the resend finds the
    /// layout the first run stored and answers with it, not a mismatch.
    async fn a_create_whose_reply_is_lost_answers_as_its_first_run(proxy, client, raw) {
        // A first create loads the script: the lost reply is then a run's.
        client.create_partitioned_queue("pq-warm", 2, StringCodec).await.unwrap();
        proxy.arm(Fault::LoseReply, "delayq_partitions:{pq-lost}");
        let q = client.create_partitioned_queue("pq-lost", 3, StringCodec).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(q.names(), PartitionLayout::plan("pq-lost", 3).unwrap().names());
        let count = raw.cmd("HGET", vec!["delayq_partitions:{pq-lost}".into(), "count".into()]).await;
        assert_eq!(count.as_str().unwrap(), "3");
    }
}

redis_test! {
    /// Partition i's name hashes into slice i of the 16,384 slots, as fred
    /// routes it (the Cluster test checks the servers' own placement).
    async fn partition_names_spread_over_the_slot_slices(client) {
        for count in [3, 6, 10] {
            let q = client.create_partitioned_queue(&format!("pq-spread-{count}"), count, StringCodec).await.unwrap();
            for (i, name) in q.names().iter().enumerate() {
                let slot = q.layout().slot(i) as usize;
                assert!(slot >= i * 16_384 / count && slot < (i + 1) * 16_384 / count, "{name}: {slot}");
                assert_eq!(delayq::fred::util::redis_keyslot(name.as_bytes()) as usize, slot, "{name}");
            }
        }
    }
}

redis_test! {
    /// Values with one partition key all go to its partition, and come out
    /// in offer order; keys spread over the partitions.
    async fn keyed_offers_land_in_one_partition_and_come_out_in_order(client, raw) {
        let q = client.create_partitioned_queue("pq-keys", 3, LongCodec).await.unwrap();
        let keys: Vec<String> = (0..12).map(|k| format!("customer-{k}")).collect();
        for n in 0..20i64 {
            for (k, key) in keys.iter().enumerate() {
                let options = OfferOptions::default().partition_key(key);
                q.offer_with(&(k as i64 * 1000 + n), &options).await.unwrap();
            }
            // Rounds a few ms apart: values due in the same ms move in the
            // order of their bytes (as Redisson's transfer moves them).
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        let mut expected = [0usize; 3];
        for key in &keys {
            expected[q.partition_for_key(key)] += 20;
        }
        assert!(expected.iter().filter(|&&n| n > 0).count() >= 2, "12 keys use at least two partitions");
        eventually(WAIT, "every value ready", || async { q.ready_len().await.unwrap() == 240 }).await;
        for (i, name) in q.names().iter().enumerate() {
            assert_eq!(raw.llen(name).await, expected[i], "{name}");
        }
        let mut last: HashMap<i64, i64> = HashMap::new();
        for _ in 0..240 {
            let v = q.take_timeout(WAIT).await.unwrap().expect("a value");
            let (k, n) = (v / 1000, v % 1000);
            if let Some(previous) = last.insert(k, n) {
                assert!(n == previous + 1, "key {k}: {n} after {previous}");
            } else {
                assert_eq!(n, 0, "key {k} starts at 0");
            }
        }
        assert_eq!(q.try_take().await.unwrap(), None);
        q.offer_keyed("customer-3", &7, Duration::ZERO).await.unwrap();
    }
}

redis_test! {
    /// Round-robin offers (one by one and in bulk) spread evenly.
    async fn round_robin_offers_spread_over_every_partition(client, raw) {
        let q = client.create_partitioned_queue("pq-rr", 3, StringCodec).await.unwrap().without_transfer();
        for i in 0..30 {
            q.offer(&format!("v{i}"), Duration::from_secs(3600)).await.unwrap();
        }
        q.offer_all((0..30).map(|i| (format!("b{i}"), Duration::from_secs(3600)))).await.unwrap();
        let items: Vec<(String, String, Duration)> =
            (0..9).map(|i| (format!("k{i}"), format!("k{i}"), Duration::from_secs(3600))).collect();
        q.offer_all_keyed(items.clone()).await.unwrap();
        let mut keyed = [0usize; 3];
        for (key, _, _) in &items {
            keyed[q.partition_for_key(key)] += 1;
        }
        for (i, name) in q.names().iter().enumerate() {
            let keys = delayq::QueueKeys::new(name).unwrap();
            assert_eq!(raw.zcard(keys.timeout()).await, 20 + keyed[i], "{name}");
        }
        let status = q.status().await.unwrap();
        assert_eq!(status.total.pending, 69);
        assert_eq!(status.partitions.len(), 3);
        assert_eq!(q.pending_len().await.unwrap(), 69);
    }
}

redis_test! {
    /// Takes cut off at any moment (dropped futures) lose nothing and
    /// duplicate nothing: what a dropped take popped goes back.
    async fn takes_across_partitions_that_are_dropped_lose_nothing(client) {
        // 3 partitions: all waited on at once; 10: four at a time, the rest swept.
        for count in [3usize, 10] {
            dropped_takes(&client, count).await;
        }
    }
}

async fn dropped_takes(client: &delayq::Client, count: usize) {
    let q = client
        .create_partitioned_queue(&format!("pq-drop-{count}"), count, LongCodec)
        .await
        .unwrap();
    let total = 600i64;
    let producer = {
        let q = q.clone();
        tokio::spawn(async move {
            for i in 0..total {
                q.offer(&i, Duration::ZERO).await.unwrap();
                if i % 50 == 0 {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        })
    };
    let mut seen = BTreeMap::new();
    let mut round = 0u64;
    while seen.len() < total as usize {
        round += 1;
        // Cut off after 0 to 3 ms: some takes are dropped while waiting,
        // some after a partition popped a value for them.
        let cut = Duration::from_micros(round * 731 % 3_000);
        if let Ok(taken) = tokio::time::timeout(cut, q.take()).await {
            let v = taken.unwrap();
            *seen.entry(v).or_insert(0) += 1;
        }
        if round.is_multiple_of(5)
            && let Some(v) = q.take_timeout(Duration::from_millis(200)).await.unwrap()
        {
            *seen.entry(v).or_insert(0) += 1;
        }
    }
    producer.await.unwrap();
    assert_eq!(seen.len(), total as usize);
    assert!(seen.values().all(|&n| n == 1), "a value was taken twice");
    assert_eq!(q.take_timeout(Duration::from_millis(500)).await.unwrap(), None);
}

redis_test! {
    /// More partitions than handler slots: an idle partition holds no slot,
    /// so values of every partition are handled, one at a time.
    async fn a_worker_with_fewer_slots_than_partitions_handles_every_partition(client) {
        let q = client.create_partitioned_queue("pq-few-slots", 6, LongCodec).await.unwrap();
        let handled: Arc<Mutex<Vec<i64>>> = Arc::default();
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let worker = client.partitioned_worker(&q).unwrap().concurrency(1).run({
            let (handled, running, most) = (handled.clone(), running.clone(), most.clone());
            move |v: i64| {
                let (handled, running, most) = (handled.clone(), running.clone(), most.clone());
                async move {
                    most.fetch_max(running.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    handled.lock().push(v);
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok::<_, std::io::Error>(())
                }
            }
        });
        // Values come in one partition at a time, after the worker idled.
        for i in 0..6 {
            for n in 0..20 {
                q.partition(i).unwrap().offer(&(i as i64 * 100 + n), Duration::ZERO).await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        eventually(WAIT, "every value handled", || {
            let handled = handled.clone();
            async move { handled.lock().len() >= 120 }
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(report.succeeded, 120);
        let mut handled = handled.lock().clone();
        handled.sort();
        assert_eq!(handled, (0..6).flat_map(|i| (0..20).map(move |n| i * 100 + n)).collect::<Vec<i64>>());
        assert_eq!(most.load(Ordering::SeqCst), 1);
    }
}

redis_test! {
    /// A worker over the partitions handles each value once, equal payloads
    /// of different offers and a 10 KB+ payload included, never running more
    /// handlers than its one concurrency budget.
    async fn a_worker_over_partitions_handles_each_value_once_within_its_budget(client) {
        let q = client.create_partitioned_queue("pq-worker", 3, StringCodec).await.unwrap();
        let big = "x".repeat(12 * 1024);
        let mut offered: Vec<String> = (0..150).map(|i| format!("v{i}")).collect();
        offered.extend(std::iter::repeat_n(s("same"), 30));
        offered.push(big.clone());
        for (i, value) in offered.iter().enumerate() {
            q.offer_keyed(format!("k{}", i % 7), value, Duration::from_millis((i % 5) as u64 * 20)).await.unwrap();
        }
        let handled: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let worker = client.partitioned_worker(&q).unwrap().concurrency(4).run({
            let (handled, running, most) = (handled.clone(), running.clone(), most.clone());
            move |value: String| {
                let (handled, running, most) = (handled.clone(), running.clone(), most.clone());
                async move {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    *handled.lock().entry(value).or_insert(0) += 1;
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok::<_, std::io::Error>(())
                }
            }
        });
        let total = offered.len();
        eventually(WAIT, "every value handled", || {
            let handled = handled.clone();
            async move { handled.lock().values().sum::<usize>() >= total }
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(report.succeeded, total as u64);
        let handled = handled.lock().clone();
        assert_eq!(handled.values().sum::<usize>(), total);
        assert_eq!(handled["same"], 30);
        assert_eq!(handled[&big], 1);
        assert!(handled.iter().filter(|(v, _)| v.starts_with('v')).all(|(_, &n)| n == 1));
        assert!(most.load(Ordering::SeqCst) <= 4, "{} handlers at once", most.load(Ordering::SeqCst));
        assert_eq!(q.status().await.unwrap().total.in_flight, 0);
    }
}

redis_test! {
    /// What a Java client writes straight to a partition, by its name (a
    /// packed element in the partition's delayed keys, as Redisson's offer
    /// writes it, or a payload pushed to its list, as its blocking queue's
    /// offer does), a partitioned take gets.
    async fn values_java_writes_to_a_partition_are_taken(client, raw) {
        let q = client.create_partitioned_queue("pq-java", 3, BytesCodec).await.unwrap().with_transfer();
        let second = q.names()[1].clone();
        raw.seed(&second, &pack(Format::Modern, b"from-java-delayed"), now_ms()).await;
        raw.cmd("RPUSH", vec![q.names()[2].as_str().into(), "from-java-list".into()]).await;
        let mut got = Vec::new();
        for _ in 0..2 {
            let v: bytes::Bytes = q.take_timeout(WAIT).await.unwrap().expect("a value");
            got.push(String::from_utf8(v.to_vec()).unwrap());
        }
        got.sort();
        assert_eq!(got, ["from-java-delayed", "from-java-list"]);
    }
}

redis_test! {
    /// 100,000 values in flight over 4 partitions: a worker handles each
    /// exactly once.
    scale async fn a_hundred_thousand_values_over_partitions_are_each_handled_once(client) {
        let q = client.create_partitioned_queue("pq-scale", 4, LongCodec).await.unwrap();
        let total = 100_000usize;
        for chunk in (0..total as i64).collect::<Vec<_>>().chunks(10_000) {
            q.offer_all(chunk.iter().map(|&i| (i, Duration::ZERO))).await.unwrap();
        }
        let seen: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(vec![0; total]));
        let worker = client.partitioned_worker(&q).unwrap().concurrency(64).run({
            let seen = seen.clone();
            move |v: i64| {
                let seen = seen.clone();
                async move {
                    let mut seen = seen.lock();
                    seen[v as usize] = seen[v as usize].saturating_add(1);
                    Ok::<_, std::io::Error>(())
                }
            }
        });
        eventually(Duration::from_secs(500), "every value handled", || {
            let seen = seen.clone();
            async move { seen.lock().iter().all(|&n| n > 0) }
        })
        .await;
        let report = worker.shutdown().await;
        assert!(seen.lock().iter().all(|&n| n == 1), "a value was handled twice");
        assert_eq!(report.succeeded, total as u64);
    }
}
