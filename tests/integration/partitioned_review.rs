//! Review of issue 47 item 2 (partitioned queues): what breaks, and what
//! holds, under the project's fault model. Each test says what it proves.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use delayq::{BytesCodec, Error, LongCodec, OfferOptions, PartitionLayout, StringCodec};
use parking_lot::Mutex;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test};

const WAIT: Duration = Duration::from_secs(60);

redis_test! {
    /// A group promises "values of one key run one at a time across every
    /// consumer". On a partitioned queue, `offer_with` without a partition
    /// key routes round robin, so two values of one group land in two
    /// partitions, and a partitioned worker runs them side by side.
    async fn grouped_offers_without_a_partition_key_stay_in_one_partition(client) {
        let q = client.create_partitioned_queue("pqr-group", 3, StringCodec).await.unwrap();
        let options = OfferOptions::default().group("customer-1");
        for v in ["first", "second", "third"] {
            q.offer_with(&v.to_owned(), &options).await.unwrap();
        }
        let status = q.status().await.unwrap();
        let holding: Vec<usize> = (0..3)
            .filter(|&i| status.partitions[i].grouped_pending + status.partitions[i].grouped_ready > 0)
            .collect();
        assert_eq!(holding.len(), 1, "one group's values are in partitions {holding:?}: no longer one at a time");
    }
}

redis_test! {
    /// `sequential()` is "the queue's one sequential group": on a
    /// partitioned queue it is split over the partitions.
    async fn sequential_offers_on_a_partitioned_queue_stay_in_one_partition(client) {
        let q = client.create_partitioned_queue("pqr-seq", 3, StringCodec).await.unwrap();
        let options = OfferOptions::default().sequential();
        for v in ["1", "2", "3"] {
            q.offer_with(&v.to_owned(), &options).await.unwrap();
        }
        let status = q.status().await.unwrap();
        let holding = (0..3)
            .filter(|&i| status.partitions[i].grouped_pending + status.partitions[i].grouped_ready > 0)
            .count();
        assert_eq!(holding, 1, "the sequential group is split over {holding} partitions");
    }
}

redis_test! {
    /// A plain queue (Java's, or delayq's) already under the name: creating
    /// a partitioned queue of that name succeeds, and the values already
    /// queued there are out of the partitioned queue's sight (its take never
    /// gets them), while the CLI now refuses to name the plain queue.
    async fn a_partitioned_queue_over_a_plain_queue_with_values_is_refused(client, raw) {
        raw.cmd("RPUSH", vec!["pqr-plain".into(), "queued-before".into()]).await;
        match client.create_partitioned_queue("pqr-plain", 3, BytesCodec).await {
            Err(_) => {}
            Ok(q) => {
                let taken: Option<Vec<u8>> = q.take_timeout(Duration::from_secs(2)).await.unwrap();
                let left = raw.llen("pqr-plain").await;
                panic!("created over a plain queue: the partitioned take got {taken:?}, {left} value(s) left in `pqr-plain`");
            }
        }
    }
}

redis_test! {
    /// Per-key order, with one consumer and no cancel of its own: a take
    /// waits on both partitions at once; when both answer, the loser's
    /// popped value goes back to the head in the background, and the next
    /// take can pop the value behind it first.
    async fn per_key_order_holds_when_two_partitions_answer_one_take(client, raw) {
        let q: delayq::PartitionedQueue<Vec<u8>> =
            client.create_partitioned_queue("pqr-order", 2, BytesCodec).await.unwrap().without_transfer();
        let (p0, p1) = (q.names()[0].clone(), q.names()[1].clone());
        let script = "redis.call('rpush', KEYS[1], ARGV[1]); redis.call('rpush', KEYS[2], ARGV[2], ARGV[3])";
        let mut inversions = Vec::new();
        for round in 0..60 {
            let blocked = || async { raw.info_field("clients", "blocked_clients").await.parse::<i64>().unwrap() };
            // No blocked read left from the last round (one ends within the
            // pool's timeout once its take is gone).
            eventually(WAIT, "no blocked read", || async { blocked().await == 0 }).await;
            let first = {
                let q = q.clone();
                tokio::spawn(async move { q.take_timeout(WAIT).await })
            };
            eventually(WAIT, "the take waits on both partitions", || async {
                blocked().await == 2
            })
            .await;
            // Both lists get values at once: both blocked reads are served.
            // Which list is `a`'s alternates, so either partition loses.
            let (ka, kb) = if round % 2 == 0 { (&p0, &p1) } else { (&p1, &p0) };
            raw.cmd("EVAL", vec![
                script.into(), 2.into(), ka.as_str().into(), kb.as_str().into(),
                format!("a{round}").into(), format!("b{round}-1").into(), format!("b{round}-2").into(),
            ]).await;
            let mut got = vec![first.await.unwrap().unwrap().expect("a value")];
            for _ in 0..2 {
                got.push(q.take_timeout(WAIT).await.unwrap().expect("a value"));
            }
            let got: Vec<String> = got.iter().map(|b| String::from_utf8(b.to_vec()).unwrap()).collect();
            let i1 = got.iter().position(|v| *v == format!("b{round}-1")).expect("b-1 taken");
            let i2 = got.iter().position(|v| *v == format!("b{round}-2")).expect("b-2 taken");
            if i2 < i1 {
                inversions.push(got);
            }
        }
        assert!(inversions.is_empty(), "one key's values taken out of order in {} of 60 rounds: {:?}", inversions.len(), inversions);
    }
}

redis_test! {
    /// A layout written by a later version (another key hash) is opened
    /// and routed with CRC-32 all the same: keys would go to other
    /// partitions than that version's producers send them.
    async fn a_layout_with_an_unknown_version_or_hash_is_refused(client, raw) {
        let names = PartitionLayout::plan("pqr-v2", 3).unwrap().names().join("\n");
        raw.cmd("HSET", vec![
            "delayq_partitions:{pqr-v2}".into(),
            "version".into(), "2".into(), "count".into(), "3".into(),
            "names".into(), names.into(), "hash".into(), "xxhash64".into(), "created".into(), "1".into(),
        ]).await;
        let opened = client.partitioned_queue("pqr-v2", StringCodec).await;
        assert!(opened.is_err(), "opened a layout of version 2 with hash xxhash64, routing by CRC-32");
    }
}

redis_test! {
    /// The documented key hash is what Java computes:
    /// `Math.floorMod(new CRC32(key UTF-8).getValue(), n)` (values from
    /// zlib.crc32, which is java.util.zip.CRC32).
    async fn the_key_hash_is_javas_crc32(client) {
        let q = client.create_partitioned_queue("pqr-crc", 10, StringCodec).await.unwrap();
        assert_eq!(q.partition_for_key("customer-42"), (1_241_360_405u64 % 10) as usize);
        assert_eq!(q.partition_for_key("order-7"), (164_682_458u64 % 10) as usize);
        assert_eq!(q.partition_for_key("заказ-🦀"), (591_430_583u64 % 10) as usize);
        assert_eq!(q.partition_for_key(""), 0);
        let layout = PartitionLayout::plan("x", 1024).unwrap();
        assert_eq!(layout.partition_for_key(b"order-7"), 730);
    }
}

redis_test! {
    /// Odd names: unicode, spaces, glob characters, `#`, `:` and a
    /// terminal escape are partitioned, spread, listed and found again.
    async fn odd_names_are_partitioned_listed_and_reopened(client) {
        let names = ["заказы 🦀", "a*b?[c]", "q#1:x", "tab\there", "esc\u{1b}[31m"];
        for name in names {
            let q = client.create_partitioned_queue(name, 3, LongCodec).await.unwrap();
            for i in 0..3 {
                let slot = q.layout().slot(i) as usize;
                assert!(slot >= i * 16_384 / 3 && slot < (i + 1) * 16_384 / 3, "{name:?} {i}: {slot}");
            }
            q.offer_keyed(name, &7, Duration::ZERO).await.unwrap();
            assert_eq!(q.take_timeout(WAIT).await.unwrap(), Some(7));
        }
        let listed: BTreeSet<String> =
            client.partitioned_queues().await.unwrap().iter().map(|l| l.queue().to_owned()).collect();
        assert_eq!(listed, names.iter().map(|n| n.to_string()).collect());
        for bad in ["{t}q", "q}", "a\nb", ""] {
            assert!(matches!(
                client.create_partitioned_queue(bad, 3, LongCodec).await,
                Err(Error::InvalidQueueName { .. })
            ), "{bad:?}");
        }
    }
}

redis_test! {
    /// Two clients create the same queue at once: with one count both get
    /// the same names; with two counts exactly one wins and the other gets
    /// the typed mismatch, and the stored count is the winner's.
    async fn two_clients_creating_at_once_agree(redis) {
        let (a, b) = (redis.client().await, redis.client().await);
        for round in 0..20 {
            let name = format!("pqr-race-{round}");
            let (x, y) = tokio::join!(
                a.create_partitioned_queue(&name, 4, StringCodec),
                b.create_partitioned_queue(&name, 4, StringCodec)
            );
            assert_eq!(x.unwrap().names(), y.unwrap().names());
            let name = format!("pqr-race-odd-{round}");
            let (x, y) = tokio::join!(
                a.create_partitioned_queue(&name, 3, StringCodec),
                b.create_partitioned_queue(&name, 5, StringCodec)
            );
            let stored = a.partition_layout(&name).await.unwrap().unwrap().count();
            match (x, y) {
                (Ok(q), Err(Error::PartitionCountMismatch { stored: 3, asked: 5, .. })) => assert_eq!(q.count(), stored),
                (Err(Error::PartitionCountMismatch { stored: 5, asked: 3, .. }), Ok(q)) => assert_eq!(q.count(), stored),
                other => panic!("{other:?}"),
            }
        }
    }
}

redis_test! {
    /// A create whose reply is lost while another client creates the same
    /// queue with another count: the resend answers what is stored.
    async fn a_lost_create_reply_beside_a_rival_create(redis, proxy, client) {
        client.create_partitioned_queue("pqr-warm", 2, StringCodec).await.unwrap();
        let rival = redis.client().await;
        proxy.arm(Fault::LoseReply, "delayq_partitions:{pqr-lost}");
        let mine = client.create_partitioned_queue("pqr-lost", 3, StringCodec).await;
        assert_eq!(proxy.fired(), 1);
        assert_eq!(mine.unwrap().count(), 3);
        match rival.create_partitioned_queue("pqr-lost", 4, StringCodec).await {
            Err(Error::PartitionCountMismatch { stored: 3, asked: 4, .. }) => {}
            other => panic!("{other:?}"),
        }
        proxy.arm(Fault::LoseRequest, "delayq_partitions:{pqr-lost2}");
        let q = client.create_partitioned_queue("pqr-lost2", 5, StringCodec).await.unwrap();
        assert_eq!(q.count(), 5);
    }
}

redis_test! {
    /// A partitioned worker stopped half way gives back everything it
    /// claimed and did not handle: nothing in flight, nothing lost, nothing
    /// handled twice, across six partitions.
    async fn a_partitioned_worker_stopped_half_way_gives_everything_back(client) {
        let q = client.create_partitioned_queue("pqr-stop", 6, LongCodec).await.unwrap();
        let total = 600i64;
        q.offer_all((0..total).map(|i| (i, Duration::ZERO))).await.unwrap();
        eventually(WAIT, "all ready", || async { q.ready_len().await.unwrap() == total as usize }).await;
        let handled: Arc<Mutex<HashMap<i64, usize>>> = Arc::default();
        let worker = client.partitioned_worker(&q).unwrap().concurrency(2).prefetch(64).run({
            let handled = handled.clone();
            move |v: i64| {
                let handled = handled.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    *handled.lock().entry(v).or_insert(0) += 1;
                    Ok::<_, std::io::Error>(())
                }
            }
        });
        eventually(WAIT, "some handled", || async { handled.lock().len() >= 20 }).await;
        let report = worker.shutdown().await;
        let handled = handled.lock().clone();
        assert!(handled.values().all(|&n| n == 1));
        assert_eq!(report.succeeded as usize, handled.len());
        let status = q.status().await.unwrap();
        assert_eq!(status.total.in_flight, 0);
        assert_eq!(status.total.ready as usize + handled.len(), total as usize);
        let mut rest = BTreeSet::new();
        while let Some(v) = q.try_take().await.unwrap() {
            assert!(rest.insert(v) && !handled.contains_key(&v), "{v} twice");
        }
        assert_eq!(rest.len() + handled.len(), total as usize);
    }
}

redis_test! {
    /// An idle take of a queue of 20 partitions holds at most four
    /// blocking connections (as its docs say).
    async fn an_idle_take_over_many_partitions_holds_four_blocking_reads(client, raw) {
        let q = client.create_partitioned_queue("pqr-conns", 20, LongCodec).await.unwrap();
        let before: i64 = raw.info_field("clients", "blocked_clients").await.parse().unwrap();
        let take = {
            let q = q.clone();
            tokio::spawn(async move { q.take_timeout(Duration::from_secs(3)).await })
        };
        let mut most = 0;
        for _ in 0..40 {
            let now: i64 = raw.info_field("clients", "blocked_clients").await.parse().unwrap();
            most = most.max(now - before);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(take.await.unwrap().unwrap(), None);
        assert!(most <= 4, "{most} blocked reads at once");
    }
}

redis_test! {
    /// One budget over the partitions should not let a busy partition
    /// starve another: a slot task goes on with its own partition's
    /// buffered values without giving its permit back, so while partition
    /// 0 has a backlog, a value of partition 1 waits for all of it.
    async fn a_busy_partition_does_not_starve_another_under_one_budget(client) {
        let q = client.create_partitioned_queue("pqr-starve", 2, LongCodec).await.unwrap();
        let backlog = 1000i64;
        q.partition(0).unwrap().offer_all((0..backlog).map(|i| (i, Duration::ZERO))).await.unwrap();
        eventually(WAIT, "backlog ready", || async { q.ready_len().await.unwrap() == backlog as usize }).await;
        let order: Arc<Mutex<Vec<i64>>> = Arc::default();
        let worker = client.partitioned_worker(&q).unwrap().concurrency(1).run({
            let order = order.clone();
            move |v: i64| {
                let order = order.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    order.lock().push(v);
                    Ok::<_, std::io::Error>(())
                }
            }
        });
        eventually(WAIT, "partition 0 under way", || async { order.lock().len() >= 20 }).await;
        q.partition(1).unwrap().offer(&-1, Duration::ZERO).await.unwrap();
        eventually(WAIT, "partition 1's value handled", || async { order.lock().contains(&-1) }).await;
        let at = order.lock().iter().position(|&v| v == -1).unwrap();
        let before = order.lock().len();
        worker.shutdown().await;
        eprintln!("partition 1's value handled at {at} (of {before} so far)");
        assert!(
            at < (backlog as usize) / 2,
            "partition 1's one value was handled after {at} of partition 0's {backlog} (handled so far {before})"
        );
    }
}

redis_test! {
    /// `prefetch(0)` holds nothing ahead across partitions either: each
    /// partition's loop claimed for the free slots of the shared pool, so
    /// four partitions held up to four times the concurrency in flight
    /// (values claimed, waiting in a buffer for slots others had taken).
    /// Sampled while slow handlers run: never more in flight than the
    /// slots and the acks on their way. The same test found a partition
    /// with values waiting for ever once the others' handlers held every
    /// slot (nothing woke its loop when a slot came free): it now waits for
    /// a slot of the pool.
    async fn prefetch_zero_holds_nothing_ahead_over_partitions(client) {
        let q = client.create_partitioned_queue("pqr-prefetch0", 4, LongCodec).await.unwrap();
        let total = 24i64;
        q.offer_all((0..total).map(|i| (i, Duration::ZERO))).await.unwrap();
        eventually(WAIT, "all ready", || async { q.ready_len().await.unwrap() == total as usize }).await;
        let handled: Arc<Mutex<Vec<i64>>> = Arc::default();
        let worker = client.partitioned_worker(&q).unwrap().concurrency(2).prefetch(0).run({
            let handled = handled.clone();
            move |v: i64| {
                let handled = handled.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    handled.lock().push(v);
                    Ok::<_, std::io::Error>(())
                }
            }
        });
        let (mut most, mut samples) = (0, 0);
        while handled.lock().len() < total as usize {
            let status = q.status().await.unwrap();
            most = most.max(status.total.in_flight);
            samples += 1;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        worker.shutdown().await;
        let mut handled = handled.lock().clone();
        handled.sort();
        assert_eq!(handled, (0..total).collect::<Vec<_>>());
        assert!(samples > 10, "{samples} samples");
        assert!(most >= 1, "sampled no value in flight");
        // In flight: the two running, and up to two finished whose ack is
        // on its way (a slot is free before its ack lands; the partitions
        // are read one after another). Held ahead, it was up to eight.
        assert!(most <= 4, "{most} values in flight with 2 slots and prefetch(0)");
    }
}

redis_test! {
    /// Each partition's worker record counts its own partition's values
    /// (it showed the whole worker's, so the records of N partitions added
    /// up to N times what was handled); the handle's report is their sum.
    async fn each_partitions_worker_record_counts_its_own_values(client) {
        let q = client.create_partitioned_queue("pqr-records", 3, LongCodec).await.unwrap();
        q.partition(0).unwrap().offer_all((0..7i64).map(|i| (i, Duration::ZERO))).await.unwrap();
        q.partition(2).unwrap().offer_all((0..3i64).map(|i| (i, Duration::ZERO))).await.unwrap();
        let worker = client
            .partitioned_worker(&q)
            .unwrap()
            .concurrency(4)
            .heartbeat(Duration::from_millis(100))
            .run(|_: i64| async { Ok::<_, std::io::Error>(()) });
        eventually(WAIT, "all handled", || async { worker.report().succeeded == 10 }).await;
        let handled = |i: usize| {
            let (client, name) = (client.clone(), q.names()[i].clone());
            async move {
                let records = client.workers(&delayq::QueueKeys::new(&name).unwrap()).await.unwrap();
                assert_eq!(records.len(), 1, "{name}: {records:?}");
                records[0].handled
            }
        };
        eventually(WAIT, "records beat their counts", || async {
            (handled(0).await, handled(1).await, handled(2).await) == (7, 0, 3)
        })
        .await;
        assert_eq!(worker.shutdown().await.succeeded, 10);
    }
}
