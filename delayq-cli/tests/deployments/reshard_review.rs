//! From the review of live resharding (issue 47 item 3): what it tried to
//! break, kept as tests.
//!
//! Each test builds a real 3-master cluster (RedisCluster::start), puts a
//! queue's slot half-moved, and finishes the move from a background task a
//! few seconds later, as `redis-cli --cluster reshard` would (the window is
//! there to be waited out; no assertion is on time). What is asserted is the
//! README's claim: "no call returns an error a retry would have cured".

use std::sync::Arc;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, StringCodec};

use crate::redis_cluster::{Migration, RedisCluster};
use crate::redis_server::{eventually, free_port, node_command, RedisServer};
use crate::DEADLINE;

fn slot_of(queue: &str) -> u16 {
    delayq::fred::util::redis_keyslot(queue.as_bytes())
}

/// Another master than `from`.
async fn other_master(cluster: &RedisCluster, from: u16) -> u16 {
    *cluster.masters().await.iter().find(|m| **m != from).unwrap()
}

/// Finishes moving `slot` from `from` to `to` after `after` (the slot was
/// opened by the test): the rest of its keys, then SETSLOT NODE everywhere.
fn finish_later(
    cluster: Arc<RedisCluster>,
    slot: u16,
    from: u16,
    to: u16,
    after: Duration,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        cluster.migrate_slot(slot, from, to, Migration::default()).await;
    })
}

/// A `BlockingQueue::clear` (multi-key `DEL` of the list and its priority
/// list) while the queue's slot is half-moved: Redis answers `TRYAGAIN` (the
/// node has only some of the keys); it did not run, a retry once the move
/// ends would cure it, yet it reaches the caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_review_blocking_clear_while_the_slot_is_half_moved_returns_no_tryagain() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = Arc::new(RedisCluster::start().await);
        let queue = "reshard-review-clear";
        let client = Client::builder().url(cluster.url()).build().await.unwrap();
        let blocking = client.blocking_queue(queue, StringCodec).unwrap();
        blocking.offer(&"a".to_owned()).await.unwrap();
        let slot = slot_of(queue);
        let from = cluster.slot_owner(slot).await;
        let to = other_master(&cluster, from).await;
        cluster.open_slot(slot, from, to).await;
        let finishing = finish_later(cluster.clone(), slot, from, to, Duration::from_secs(3));
        let cleared = blocking.clear().await;
        finishing.await.unwrap();
        assert!(matches!(cleared, Ok(true)), "clear during the move: {cleared:?}");
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// `set_job_history(None)` (multi-key `UNLINK` of the history's two keys)
/// while the queue's slot is half-moved: the same `TRYAGAIN`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_review_job_history_off_while_the_slot_is_half_moved_returns_no_tryagain() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = Arc::new(RedisCluster::start().await);
        let queue = "reshard-review-history";
        let client = Client::builder().url(cluster.url()).build().await.unwrap();
        let delayed = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        delayed.set_job_history(Some(Duration::from_secs(60))).await.unwrap();
        let slot = slot_of(queue);
        let from = cluster.slot_owner(slot).await;
        let to = other_master(&cluster, from).await;
        cluster.open_slot(slot, from, to).await;
        let finishing = finish_later(cluster.clone(), slot, from, to, Duration::from_secs(3));
        let off = delayed.set_job_history(None).await;
        finishing.await.unwrap();
        assert!(off.is_ok(), "job history off during the move: {off:?}");
        assert_eq!(delayed.job_history().await.unwrap(), None);
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// The usual way to scale a cluster out: `redis-cli --cluster add-node` (a
/// new, empty master; no slot, so not in `CLUSTER SLOTS` and fred has no
/// connection to it), then `reshard` slots to it. Once the queue's keys are
/// all on the new node and before `SETSLOT … NODE`, the source answers
/// `ASK new-node`, which the patched fred cannot follow (no connection):
/// the offer must still succeed once the move ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_review_offer_while_the_slot_moves_to_a_newly_added_master_is_not_refused() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = Arc::new(RedisCluster::start().await);
        let bus = free_port();
        let added = RedisServer::start_with(&[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "2000",
            "--cluster-port",
            &bus.to_string(),
        ])
        .await;
        node_command(
            cluster.nodes[0].port(),
            "CLUSTER",
            vec![
                "MEET".into(),
                "127.0.0.1".into(),
                Value::from(i64::from(added.port())),
                Value::from(i64::from(bus)),
            ],
        )
        .await;
        let mut ports: Vec<u16> = cluster.nodes.iter().map(|n| n.port()).collect();
        ports.push(added.port());
        eventually(Duration::from_secs(60), "every node to know the added one", || {
            let ports = ports.clone();
            async move {
                for port in ports {
                    let info = node_command(port, "CLUSTER", vec!["INFO".into()]).await;
                    if !(info.contains("cluster_known_nodes:7") && info.contains("cluster_state:ok")) {
                        return false;
                    }
                }
                true
            }
        })
        .await;

        let queue = "reshard-review-added";
        let client = Client::builder().url(cluster.url()).build().await.unwrap();
        let delayed = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        delayed
            .offer(&"before".to_owned(), Duration::from_secs(60))
            .await
            .unwrap();
        let slot = slot_of(queue);
        let from = cluster.slot_owner(slot).await;
        let to = added.port();
        // Every key of the slot moved to the new node; SETSLOT NODE comes
        // 8 s later (a reshard tool still at work on the slot's other keys).
        cluster.open_slot(slot, from, to).await;
        let finishing = finish_later(cluster.clone(), slot, from, to, Duration::from_secs(8));
        // migrate_slot (in finish_later) would move them too; move them now.
        let keys = node_command(
            from,
            "CLUSTER",
            vec!["GETKEYSINSLOT".into(), Value::from(i64::from(slot)), Value::from(100)],
        )
        .await;
        eprintln!("{queue}: keys in slot {slot} on {from}: {keys}");
        let moved = crate::redis_server::node_try(
            from,
            "CLUSTER",
            vec!["GETKEYSINSLOT".into(), Value::from(i64::from(slot)), Value::from(100)],
        )
        .await
        .unwrap();
        let Value::Array(moved) = moved else {
            panic!("{moved:?}")
        };
        crate::redis_cluster::migrate_keys(from, to, moved).await;

        let offered = delayed.offer(&"during".to_owned(), Duration::from_secs(60)).await;
        finishing.await.unwrap();
        assert!(offered.is_ok(), "offer during the move to the new master: {offered:?}");
        let status = delayed.status().await.unwrap();
        assert_eq!(status.pending + status.ready, 2, "{status:?}");
        client.shutdown().await;
        drop(added);
    })
    .await
    .expect("test exceeded its deadline");
}

/// What the author's load does not offer: batches (`offer_batch`, several
/// chunks), grouped values (one at a time per key, checked), bulk offers of
/// 1 KB values in several script chunks, bulk deduplicated offers; the slot
/// moved back and forth quickly (2 keys per `MIGRATE`, no pause, 200 ms
/// between moves), 8 times. Every acknowledged value handled exactly once,
/// no group ever run twice at a time, no offer error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_review_batches_groups_and_bulk_offers_through_quick_moves_lose_and_fail_nothing() {
    use std::collections::{HashMap, HashSet};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use delayq::batch::BatchOptions;
    use delayq::dedup::DedupKey;
    use delayq::OfferOptions;
    use parking_lot::Mutex;

    tokio::time::timeout(DEADLINE, async {
        let cluster = Arc::new(RedisCluster::start().await);
        let queue = "reshard-review-load";
        let producer = Client::builder()
            .url(cluster.url())
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .unwrap();
        let consumer = Client::builder()
            .url(cluster.url())
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .unwrap();
        let delayed = Arc::new(producer.delayed_queue(queue, StringCodec).unwrap().without_transfer());
        delayed.set_job_history(Some(Duration::from_secs(600))).await.unwrap();

        let handled = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
        let running = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
        let overlaps = Arc::new(AtomicUsize::new(0));
        let worker = consumer
            .worker(queue, StringCodec)
            .unwrap()
            .concurrency(4)
            .visibility_timeout(Duration::from_secs(30))
            .run({
                let (handled, running, overlaps) = (handled.clone(), running.clone(), overlaps.clone());
                move |value: String| {
                    let (handled, running, overlaps) = (handled.clone(), running.clone(), overlaps.clone());
                    async move {
                        let group = value.strip_prefix("grp-").map(|rest| rest[..2].to_owned());
                        if let Some(group) = &group {
                            let mut running = running.lock();
                            let n = running.entry(group.clone()).or_default();
                            *n += 1;
                            if *n > 1 {
                                overlaps.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        tokio::time::sleep(Duration::from_millis(3)).await;
                        if let Some(group) = &group {
                            *running.lock().get_mut(group).unwrap() -= 1;
                        }
                        *handled.lock().entry(value).or_default() += 1;
                        Ok::<(), delayq::error::BoxError>(())
                    }
                }
            });

        let stop = Arc::new(AtomicBool::new(false));
        let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
        let errors = Arc::new(Mutex::new(Vec::<String>::new()));
        let offering = tokio::spawn({
            let (delayed, stop, acknowledged, errors) =
                (delayed.clone(), stop.clone(), acknowledged.clone(), errors.clone());
            async move {
                let pad = "x".repeat(1_000);
                let due = |i: usize| Duration::from_millis((i * 53 % 1_500) as u64);
                let mut round = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    // A batch of 40 (more than one chunk if chunks are small).
                    let batch: Vec<(String, Duration)> =
                        (0..40).map(|k| (format!("batch-{round}-{k}"), due(round + k))).collect();
                    match delayed.offer_batch(batch.clone(), &BatchOptions::new()).await {
                        Ok(_) => acknowledged.lock().extend(batch.into_iter().map(|(v, _)| v)),
                        Err(e) => errors.lock().push(format!("batch {round}: {e}")),
                    }
                    // Grouped values, two keys.
                    for k in 0..4 {
                        let value = format!("grp-g{}-{round}-{k}", k % 2);
                        let options = OfferOptions::after(due(round + k)).group(format!("g{}", k % 2));
                        match delayed.offer_with(&value, &options).await {
                            Ok(()) => acknowledged.lock().push(value),
                            Err(e) => errors.lock().push(format!("{value}: {e}")),
                        }
                    }
                    // A bulk offer of 200 values of 1 KB.
                    let bulk: Vec<(String, Duration)> =
                        (0..200).map(|k| (format!("bulk-{round}-{k}-{pad}"), due(round + k))).collect();
                    match delayed.offer_all(bulk.clone()).await {
                        Ok(()) => acknowledged.lock().extend(bulk.into_iter().map(|(v, _)| v)),
                        Err(e) => errors.lock().push(format!("bulk {round}: {e}")),
                    }
                    // Deduplicated bulk: each value once.
                    let dedup: Vec<(String, Duration, DedupKey)> = (0..5)
                        .map(|k| (format!("dedup-{round}-{k}"), due(round + k), DedupKey::Payload))
                        .collect();
                    match delayed.offer_all_dedup(dedup.clone(), Duration::from_secs(600)).await {
                        Ok(_) => acknowledged.lock().extend(dedup.into_iter().map(|(v, _, _)| v)),
                        Err(e) => errors.lock().push(format!("dedup {round}: {e}")),
                    }
                    round += 1;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        });

        tokio::time::sleep(Duration::from_millis(500)).await;
        let slot = slot_of(queue);
        for round in 0..8 {
            let from = cluster.slot_owner(slot).await;
            let to = other_master(&cluster, from).await;
            let moved = cluster
                .migrate_slot(slot, from, to, Migration { batch: 2, pause: Duration::ZERO })
                .await;
            eprintln!("{queue}: move {round}: {from} → {to}, {} keys", moved.keys);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        stop.store(true, Ordering::Relaxed);
        offering.await.unwrap();
        let acknowledged = acknowledged.lock().clone();
        let started = tokio::time::Instant::now();
        while started.elapsed() < Duration::from_secs(90) {
            let all = {
                let handled = handled.lock();
                acknowledged.iter().all(|v| handled.contains_key(v))
            };
            if all {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let report = worker.shutdown().await;
        let handled = handled.lock().clone();
        let acknowledged_set: HashSet<&String> = acknowledged.iter().collect();
        let missing: Vec<&String> = acknowledged.iter().filter(|v| !handled.contains_key(*v)).collect();
        let twice: Vec<(&String, &usize)> = handled.iter().filter(|(_, n)| **n > 1).collect();
        let unknown: Vec<&String> = handled.keys().filter(|v| !acknowledged_set.contains(v)).collect();
        let errors = errors.lock().clone();
        let short = |v: &String| v.chars().take(40).collect::<String>();
        eprintln!(
            "{queue}: {} acknowledged, {} handled, {} missing, {} twice, {} unknown, {} errors, {} group overlaps; {report:?}",
            acknowledged.len(),
            handled.len(),
            missing.len(),
            twice.len(),
            unknown.len(),
            errors.len(),
            overlaps.load(Ordering::Relaxed)
        );
        for e in errors.iter().take(10) {
            eprintln!("{queue}: error {}", e.chars().take(300).collect::<String>());
        }
        assert!(errors.is_empty(), "offers failed: {:?}", errors.iter().map(short).collect::<Vec<_>>());
        assert!(missing.is_empty(), "never handled: {:?}", missing.iter().take(10).map(|v| short(v)).collect::<Vec<_>>());
        assert!(twice.is_empty(), "handled twice: {:?}", twice.iter().take(10).map(|(v, n)| (short(v), **n)).collect::<Vec<_>>());
        assert!(unknown.is_empty(), "handled, never acknowledged: {:?}", unknown.iter().take(10).map(|v| short(v)).collect::<Vec<_>>());
        assert_eq!(overlaps.load(Ordering::Relaxed), 0, "a group ran twice at a time");
        consumer.shutdown().await;
        producer.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}
