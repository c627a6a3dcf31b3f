//! Re-partitioning a partitioned queue (issue 47, item 2): a new generation
//! of partitions takes the offers, the old ones are retired and drained in
//! place, then retired for good. Nothing is moved, so nothing is lost or
//! duplicated, and values keep their side state. One server here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use delayq::{Error, LongCodec, OfferOptions, StringCodec};
use parking_lot::Mutex;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test};

const WAIT: Duration = Duration::from_secs(60);

redis_test! {
    /// 3 → 5 with values ready, delayed and claimed in the old partitions:
    /// offers after go to the new ones (handles follow the layout), takes
    /// get every value once, old values of a key before its new ones;
    /// retiring refuses a partition that holds values and drops it once
    /// drained; a count it already has changes nothing.
    async fn a_repartition_drains_the_old_partitions_in_place_and_loses_nothing(client) {
        let q = client.create_partitioned_queue("rp-basic", 3, LongCodec).await.unwrap();
        let old_names = q.names();
        // Ready now, and delayed by 2 s, in the old partitions; key 7's
        // values 0..10 by key.
        q.offer_all((100..130).map(|i| (i, Duration::ZERO))).await.unwrap();
        q.offer_all((200..210).map(|i| (i, Duration::from_secs(2)))).await.unwrap();
        // A key's values a few ms apart: the transfer moves values due in
        // the same ms in the order of their bytes (as Redisson's does).
        for i in 0..10 {
            q.offer_keyed("key-7", &i, Duration::ZERO).await.unwrap();
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        eventually(WAIT, "ready", || async { q.ready_len().await.unwrap() == 40 }).await;

        let layout = client.repartition("rp-basic", 5).await.unwrap();
        assert_eq!((layout.generation(), layout.count()), (2, 5));
        assert_eq!(layout.retired(), old_names.as_slice());
        assert!(layout.names().iter().all(|n| !old_names.contains(n)));
        // The same count again: nothing changes (a resumed run).
        assert_eq!(client.repartition("rp-basic", 5).await.unwrap(), layout);

        // This handle reads the layout again within a second of use.
        eventually(WAIT, "the handle follows", || async {
            q.ready_len().await.unwrap();
            q.count() == 5
        })
        .await;
        for i in 10..20 {
            q.offer_keyed("key-7", &i, Duration::ZERO).await.unwrap();
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        q.offer_all((300..320).map(|i| (i, Duration::ZERO))).await.unwrap();
        let status = q.status().await.unwrap();
        assert_eq!(status.partitions.len(), 5);
        assert_eq!(status.retired.len(), 3);
        // Offered to the new partitions only (due now: ready, or pending
        // until their transfer moves them).
        let new: u64 = status.partitions.iter().map(|p| p.ready + p.pending).sum();
        assert_eq!(new, 30, "{status:?}");
        let old: u64 = status.retired.iter().map(|p| p.ready + p.pending).sum();
        assert_eq!(old, 50, "{status:?}");

        // A retire now keeps every old partition: they hold values.
        let retirement = client.retire_partitions("rp-basic").await.unwrap();
        assert!(retirement.retired.is_empty());
        assert_eq!(retirement.holding.len(), 3, "{retirement:?}");

        let mut taken = Vec::new();
        while taken.len() < 80 {
            if let Some(v) = q.take_timeout(Duration::from_secs(10)).await.unwrap() {
                taken.push(v);
            } else {
                panic!("only {} of 80 taken: {taken:?}", taken.len());
            }
        }
        let set: BTreeSet<i64> = taken.iter().copied().collect();
        assert_eq!(set.len(), 80, "a value twice: {taken:?}");
        let expected: BTreeSet<i64> = (0..20).chain(100..130).chain(200..210).chain(300..320).collect();
        assert_eq!(set, expected);
        let key7: Vec<i64> = taken.iter().copied().filter(|v| *v < 20).collect();
        assert_eq!(key7, (0..20).collect::<Vec<_>>(), "key 7's values out of order");
        assert_eq!(q.try_take().await.unwrap(), None);

        let retirement = client.retire_partitions("rp-basic").await.unwrap();
        assert_eq!(retirement.retired, old_names, "{retirement:?}");
        assert!(retirement.holding.is_empty());
        assert!(retirement.layout.retired().is_empty());
        assert_eq!(client.partition_layout("rp-basic").await.unwrap().unwrap().retired().len(), 0);
        // Again: nothing left to retire.
        assert!(client.retire_partitions("rp-basic").await.unwrap().retired.is_empty());
        match client.repartition("rp-none", 2).await {
            Err(Error::NotPartitioned { .. }) => {}
            other => panic!("{other:?}"),
        }
    }
}

redis_test! {
    /// The re-partition's reply is lost: fred resends the script, which
    /// finds its generation stored with its names and answers the same;
    /// the request lost before it ran runs once. Either way one generation
    /// more, not two.
    async fn a_lost_repartition_reply_or_request_makes_one_generation(client, proxy) {
        client.create_partitioned_queue("rp-lost", 2, StringCodec).await.unwrap();
        proxy.arm(Fault::LoseReply, "delayq_partitions:{rp-lost}");
        let layout = client.repartition("rp-lost", 4).await.unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!((layout.generation(), layout.count(), layout.retired().len()), (2, 4, 2));
        let stored = client.partition_layout("rp-lost").await.unwrap().unwrap();
        assert_eq!(stored, layout);
        proxy.arm(Fault::LoseRequest, "delayq_partitions:{rp-lost}");
        let layout = client.repartition("rp-lost", 3).await.unwrap();
        assert_eq!((layout.generation(), layout.count(), layout.retired().len()), (3, 3, 6));
        assert_eq!(client.partition_layout("rp-lost").await.unwrap().unwrap(), layout);
    }
}

redis_test! {
    /// A partitioned worker running through a re-partition: it starts
    /// workers on the new partitions by itself, handles every value once
    /// (those offered before, to the old partitions, and after, to the new
    /// ones, by another client's handle), and stops the retired partitions'
    /// workers once they are retired for good.
    async fn a_partitioned_worker_follows_a_repartition(client, redis) {
        let q = client.create_partitioned_queue("rp-worker", 2, LongCodec).await.unwrap();
        let handled: Arc<Mutex<BTreeMap<i64, usize>>> = Arc::default();
        let worker = client.partitioned_worker(&q).unwrap().concurrency(4).run({
            let handled = handled.clone();
            move |v: i64| {
                let handled = handled.clone();
                async move {
                    *handled.lock().entry(v).or_insert(0) += 1;
                    Ok::<_, std::io::Error>(())
                }
            }
        });
        q.offer_all((0..200).map(|i| (i, Duration::from_millis(if i % 2 == 0 { 0 } else { 1500 }))))
            .await
            .unwrap();
        let other = redis.client().await;
        let layout = other.repartition("rp-worker", 3).await.unwrap();
        let producer = other.partitioned_queue("rp-worker", LongCodec).await.unwrap();
        assert_eq!(producer.names(), layout.names());
        producer.offer_all((200..400).map(|i| (i, Duration::ZERO))).await.unwrap();
        let options = OfferOptions::after(Duration::ZERO).partition_key("k");
        producer.offer_with(&400, &options).await.unwrap();
        eventually(WAIT, "all handled", || async { handled.lock().len() == 401 }).await;
        // The new partitions had their own workers: records on each name
        // that got values.
        let mut with_records = 0;
        for name in layout.names() {
            let records = client.workers(&delayq::QueueKeys::new(name).unwrap()).await.unwrap();
            with_records += usize::from(!records.is_empty());
        }
        assert_eq!(with_records, 3);
        let retirement = other.retire_partitions("rp-worker").await.unwrap();
        assert_eq!(retirement.retired.len(), 2, "{retirement:?}");
        // The retired partitions' workers stop within a refresh or two:
        // their records leave.
        for name in &retirement.retired {
            let keys = delayq::QueueKeys::new(name).unwrap();
            eventually(WAIT, "a retired partition's worker leaves", || async {
                client.workers(&keys).await.unwrap().is_empty()
            })
            .await;
        }
        let report = worker.shutdown().await;
        assert_eq!(report.succeeded, 401);
        assert!(handled.lock().values().all(|&n| n == 1), "a value handled twice");
    }
}

redis_test! {
    /// One key's values, half offered before a re-partition (in the old
    /// partition) and half after (in the new one): a partitioned worker of
    /// concurrency 1 started after handles them in offer order (its new
    /// partitions wait until the retired ones have nothing ready or in
    /// flight), as a take does.
    async fn a_partitioned_worker_takes_a_keys_earlier_values_first_across_a_repartition(client) {
        let q = client.create_partitioned_queue("rp-order", 2, LongCodec).await.unwrap();
        // A few ms apart: values due in the same ms move in byte order.
        for i in 0..15 {
            q.offer_keyed("k", &i, Duration::ZERO).await.unwrap();
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        client.repartition("rp-order", 3).await.unwrap();
        let q = client.partitioned_queue("rp-order", LongCodec).await.unwrap();
        for i in 15..30 {
            q.offer_keyed("k", &i, Duration::ZERO).await.unwrap();
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        eventually(WAIT, "all ready", || async { q.ready_len().await.unwrap() == 30 }).await;
        let handled: Arc<Mutex<Vec<i64>>> = Arc::default();
        let worker = client.partitioned_worker(&q).unwrap().concurrency(1).run({
            let handled = handled.clone();
            move |v: i64| {
                let handled = handled.clone();
                async move {
                    handled.lock().push(v);
                    Ok::<_, std::io::Error>(())
                }
            }
        });
        eventually(WAIT, "all handled", || async { handled.lock().len() == 30 }).await;
        worker.shutdown().await;
        assert_eq!(*handled.lock(), (0..30).collect::<Vec<_>>());
    }
}
