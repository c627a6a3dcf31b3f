//! Partitioned queues on a real 3-master Cluster the harness starts: the
//! partitions spread over every master, a Worker on two clients loses and
//! duplicates nothing, per-key order holds in take order, each partition is
//! a plain Redisson queue, and `delayq partition show` names their nodes.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use delayq::fred::interfaces::SortedSetsInterface;
use delayq::{Client, StringCodec};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::redis_cluster::RedisCluster;
use crate::redis_server::node_command;
use crate::{cli, DEADLINE};

async fn connect(cluster: &RedisCluster) -> Client {
    Client::builder()
        .url(cluster.url())
        .blocking_timeout(Duration::from_secs(1))
        .build()
        .await
        .expect("connect to the cluster")
}

/// The master (port) holding each of `slots`, by `CLUSTER COUNTKEYSINSLOT`
/// on every master: the one with keys in it.
async fn masters_of(cluster: &RedisCluster, slots: &[u16]) -> Vec<u16> {
    let masters = cluster.masters().await;
    let mut found = Vec::new();
    for &slot in slots {
        let mut holder = None;
        for &port in &masters {
            let count = node_command(port, "CLUSTER", vec!["COUNTKEYSINSLOT".into(), i64::from(slot).into()]).await;
            if count.parse::<i64>().unwrap_or(0) > 0 {
                assert!(holder.is_none(), "slot {slot} has keys on two masters");
                holder = Some(port);
            }
        }
        found.push(holder.unwrap_or_else(|| panic!("no master holds keys of slot {slot}")));
    }
    found
}

/// What partitioned workers handled: (client, value), in handling order.
type Handled = Arc<Mutex<Vec<(u8, String)>>>;

/// A `PartitionedWorker` of concurrency 1 on `name` from each of
/// `clients` (client i records as i), recording what it handles.
async fn recording_workers(clients: &[&Client], name: &str) -> (Handled, Vec<delayq::worker::WorkerHandle>) {
    let handled: Handled = Arc::default();
    let mut workers = Vec::new();
    for (id, client) in (0u8..).zip(clients) {
        let queue = client.partitioned_queue(name, StringCodec).await.unwrap();
        let handled = handled.clone();
        let worker = client
            .partitioned_worker(&queue)
            .unwrap()
            .concurrency(1)
            .run(move |value: String| {
                let handled = handled.clone();
                async move {
                    handled.lock().push((id, value));
                    Ok::<_, std::io::Error>(())
                }
            });
        workers.push(worker);
    }
    (handled, workers)
}

/// Waits until `total` values were handled, for 120 s at most (the
/// checks after say what is missing).
async fn wait_for(handled: &Handled, total: usize) {
    let waited = Instant::now();
    while handled.lock().len() < total && waited.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every one of `total` values handled once, and each client handled each
/// key's values (`key-K/NNN`) in offer order.
fn assert_once_each_in_key_order(handled: &[(u8, String)], total: usize) {
    let mut times: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, value) in handled {
        *times.entry(value.as_str()).or_default() += 1;
    }
    assert_eq!(times.len(), total, "every value handled");
    assert!(times.values().all(|&n| n == 1), "none handled twice");
    let mut last: HashMap<(u8, &str), &str> = HashMap::new();
    for (client, value) in handled {
        if let Some((key, n)) = value.split_once('/').filter(|(k, _)| k.starts_with("key-"))
            && let Some(previous) = last.insert((*client, key), n)
        {
            assert!(previous < n, "client {client}, {key}: {n} after {previous}");
        }
    }
}

/// A Redisson 3.21.1+ element (`Bc0Lc0`), checked byte by byte as Java's
/// `struct.unpack` reads it: id length 8, 8 id bytes, u64 LE payload
/// length, payload. Returns the payload.
fn redisson_payload(element: &[u8]) -> &[u8] {
    assert_eq!(element[0], 8, "id length byte");
    let len = u64::from_le_bytes(element[9..17].try_into().unwrap()) as usize;
    assert_eq!(element.len(), 17 + len, "length field covers the rest");
    &element[17..]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_queue_spreads_over_every_master_and_java_reads_each_partition() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let client = connect(&cluster).await;
        let masters: HashSet<u16> = cluster.masters().await.into_iter().collect();
        assert_eq!(masters.len(), 3);
        for count in [3usize, 6] {
            let name = format!("pspread{count}");
            let queue = client
                .create_partitioned_queue(&name, count, StringCodec)
                .await
                .unwrap()
                .without_transfer();
            // One element pending in each partition, as a Java offer leaves it.
            for i in 0..count {
                let value = format!("{name}-p{i}");
                queue
                    .partition(i)
                    .unwrap()
                    .offer(&value, Duration::from_secs(3600))
                    .await
                    .unwrap();
            }
            let slots: Vec<u16> = (0..count).map(|i| queue.layout().slot(i)).collect();
            let holders = masters_of(&cluster, &slots).await;
            // With the default even split, partition i lands on master i * 3 / count.
            let used: HashSet<u16> = holders.iter().copied().collect();
            assert_eq!(used, masters, "{name}: every master holds a partition");
            let mut per_master: HashMap<u16, usize> = HashMap::new();
            for port in &holders {
                *per_master.entry(*port).or_default() += 1;
            }
            assert!(per_master.values().all(|&n| n == count / 3), "{name}: {per_master:?}");
            // Java's view of each partition: a plain Redisson timeout set
            // holding a modern element whose payload is the value.
            for (i, partition) in queue.names().iter().enumerate() {
                let keys = delayq::QueueKeys::new(partition).unwrap();
                let members: Vec<Bytes> = client
                    .redis()
                    .zrange(keys.timeout(), 0, -1, None, false, None, false)
                    .await
                    .unwrap();
                assert_eq!(members.len(), 1, "{partition}");
                assert_eq!(redisson_payload(&members[0]), format!("{name}-p{i}").as_bytes());
            }
        }
        // The CLI names each partition's node, the three masters.
        let shown = cli(&cluster.url(), ["partition", "show", "pspread3", "--format", "json"]).await;
        let stdout = String::from_utf8_lossy(&shown.stdout);
        assert!(shown.status.success(), "{}", String::from_utf8_lossy(&shown.stderr));
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["count"], 3);
        let nodes: HashSet<String> = (json["partitions"].as_array().unwrap().iter())
            .map(|p| p["node"].as_str().expect("a node on a Cluster").to_owned())
            .collect();
        assert_eq!(nodes.len(), 3, "{stdout}");
        assert_eq!(json["pending"], 3);
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// Keyed values (50 keys × 40) and round-robin ones, offered while a
/// partitioned Worker runs on two clients (concurrency 1 each): every
/// value is handled once; each client handles each key's values in offer
/// order (its claims from a partition are in list order, its one slot
/// runs them one after another); and a single `take` loop afterwards
/// gets each key's values strictly in offer order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_worker_on_two_clients_loses_nothing_and_keeps_per_key_order() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let (a, b) = (connect(&cluster).await, connect(&cluster).await);
        let queue = a.create_partitioned_queue("porder", 3, StringCodec).await.unwrap();
        let (keys, per_key, round_robin) = (50usize, 40usize, 300usize);
        let (handled, workers) = recording_workers(&[&a, &b], "porder").await;
        let producer = {
            let queue = queue.clone();
            tokio::spawn(async move {
                for n in 0..per_key {
                    for k in 0..keys {
                        let key = format!("key-{k}");
                        queue
                            .offer_keyed(&key, &format!("{key}/{n:03}"), Duration::ZERO)
                            .await
                            .unwrap();
                    }
                    for r in 0..round_robin / per_key {
                        queue
                            .offer(&format!("rr/{n:03}-{r}"), Duration::from_millis(20))
                            .await
                            .unwrap();
                    }
                    // A key's values a few ms apart (values due in the same
                    // ms move in the order of their bytes).
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
            })
        };
        producer.await.unwrap();
        let total = keys * per_key + (round_robin / per_key) * per_key;
        wait_for(&handled, total).await;
        let mut reports = Vec::new();
        for worker in workers {
            reports.push(worker.shutdown().await);
        }
        assert_once_each_in_key_order(&handled.lock(), total);
        assert_eq!(reports.iter().map(|r| r.succeeded).sum::<u64>(), total as u64);
        assert!(
            reports.iter().all(|r| r.succeeded > 0),
            "both clients handled values: {reports:?}"
        );
        // One consumer's takes: strictly in offer order per key.
        for n in 0..10 {
            for k in 0..5 {
                let key = format!("key-{k}");
                queue
                    .offer_keyed(&key, &format!("{key}/{n:03}"), Duration::ZERO)
                    .await
                    .unwrap();
            }
            // Rounds a few ms apart: values due in the same ms move in the
            // order of their bytes (as Redisson's transfer moves them).
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        let mut next: HashMap<String, usize> = HashMap::new();
        for _ in 0..50 {
            let value = queue
                .take_timeout(Duration::from_secs(10))
                .await
                .unwrap()
                .expect("a value");
            let (key, n) = value.split_once('/').unwrap();
            let expected = next.entry(key.to_owned()).or_default();
            assert_eq!(n.parse::<usize>().unwrap(), *expected, "{key}");
            *expected += 1;
        }
        assert_eq!(queue.status().await.unwrap().total.in_flight, 0);
        a.shutdown().await;
        b.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// Re-partitioning on a real 3-master Cluster while two clients' workers
/// (concurrency 1 each) handle and a producer offers 30 keys in rounds:
/// from 3 partitions to 6 half way. Nothing is lost or handled twice, each
/// client handles a key's values in offer order across the switch (the
/// new partitions' workers wait for the retired ones to drain), the 6 new
/// partitions spread over every master, and the drained old ones retire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repartition_on_a_cluster_under_workers_loses_nothing_and_keeps_per_key_order() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let (a, b, c) = (
            connect(&cluster).await,
            connect(&cluster).await,
            connect(&cluster).await,
        );
        let queue = a.create_partitioned_queue("prepart", 3, StringCodec).await.unwrap();
        let old = queue.names();
        let (keys, rounds) = (30usize, 30usize);
        let (handled, workers) = recording_workers(&[&a, &b], "prepart").await;
        for n in 0..rounds {
            if n == rounds / 2 {
                let layout = c.repartition("prepart", 6).await.unwrap();
                assert_eq!((layout.generation(), layout.count()), (2, 6));
                assert_eq!(layout.retired(), old.as_slice());
            }
            for k in 0..keys {
                let key = format!("key-{k}");
                queue
                    .offer_keyed(&key, &format!("{key}/{n:03}"), Duration::ZERO)
                    .await
                    .unwrap();
            }
            // Rounds a few ms apart: values due in the same ms move in byte order.
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        let total = keys * rounds;
        wait_for(&handled, total).await;
        assert_once_each_in_key_order(&handled.lock(), total);
        // The new partitions: on every master, and they got the later rounds.
        let layout = c.partition_layout("prepart").await.unwrap().unwrap();
        let slots: Vec<u16> = (0..layout.count()).map(|i| layout.slot(i)).collect();
        let nodes = c.partition_nodes(&layout).await.unwrap();
        let distinct: HashSet<_> = nodes.iter().flatten().collect();
        assert_eq!(
            distinct.len(),
            3,
            "6 partitions over 3 masters: {nodes:?} for slots {slots:?}"
        );
        let retirement = c.retire_partitions("prepart").await.unwrap();
        assert_eq!(retirement.retired, old, "{retirement:?}");
        let mut reports = Vec::new();
        for worker in workers {
            reports.push(worker.shutdown().await);
        }
        assert_eq!(reports.iter().map(|r| r.succeeded).sum::<u64>(), total as u64);
        for client in [a, b, c] {
            client.shutdown().await;
        }
    })
    .await
    .expect("test exceeded its deadline");
}
