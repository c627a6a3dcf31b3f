//! Redis Cluster: delayq against a real 3-master, 3-replica cluster the
//! harness starts on loopback ports. A separate test target so the fast
//! suite stays fast; `./scripts/test.sh` (and so CI) runs it too.

#[path = "../support/redis_cluster.rs"]
mod redis_cluster;
#[path = "../support/redis_server.rs"]
mod redis_server;

use std::collections::HashSet;
use std::time::Duration;

use delayq::{Client, StringCodec};
use redis_cluster::{node_command, RedisCluster};

const DEADLINE: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_queues_over_every_master_offer_transfer_and_take() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let client = Client::builder()
            .url(cluster.url())
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .expect("connect to the cluster");
        let names: Vec<String> = (0..100).map(|i| format!("cq-{i}")).collect();
        let queues: Vec<_> = names
            .iter()
            .map(|n| client.delayed_queue(n, StringCodec).unwrap())
            .collect();
        for (i, queue) in queues.iter().enumerate() {
            queue
                .offer(&format!("v-{i}"), Duration::from_millis(800))
                .await
                .unwrap();
        }
        // Before they come due: every master holds some queues.
        for port in cluster.masters().await {
            let keys: i64 = node_command(port, "DBSIZE", vec![]).await.parse().unwrap();
            assert!(keys > 0, "master {port} holds no queue");
        }
        for (i, queue) in queues.iter().enumerate() {
            assert_eq!(queue.len().await.unwrap(), 1);
            assert_eq!(queue.status().await.unwrap().pending, 1);
            assert!(queue.contains(&format!("v-{i}")).await.unwrap());
        }
        // The transfer (one scheduler, one subscriber) moves each; take gets it.
        let mut seen = HashSet::new();
        for (i, queue) in queues.iter().enumerate() {
            let value = queue.destination().poll(Duration::from_secs(10)).await.unwrap();
            assert_eq!(value, Some(format!("v-{i}")), "queue {}", names[i]);
            assert!(seen.insert(i));
        }
        for queue in &queues {
            assert_eq!(queue.len().await.unwrap(), 0);
            assert_eq!(queue.destination().len().await.unwrap(), 0, "delivered once");
        }
        // One subscriber connection serves every queue of the client.
        let mut subscribers = 0;
        for node in &cluster.nodes {
            let list = node_command(
                node.port(),
                "CLIENT",
                vec!["LIST".into(), "TYPE".into(), "pubsub".into()],
            )
            .await;
            subscribers += list.lines().filter(|l| l.contains("sub=")).count();
        }
        assert_eq!(subscribers, 1, "one subscriber connection in the whole cluster");
        assert_eq!(client.stats().transferred, 100);
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_under_load_loses_nothing_with_a_reliable_worker() {
    use std::sync::Arc;
    use tokio::time::Instant;

    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let producer = Client::connect(&cluster.url()).await.unwrap();
        let queue = producer.delayed_queue_without_transfer("fo", StringCodec).unwrap();
        const N: usize = 2_000;
        queue
            .offer_all((0..N).map(|i| (format!("v-{i}"), Duration::from_millis(500 + (i as u64 * 4_000 / N as u64)))))
            .await
            .unwrap();
        // The master holding the queue (the only node with keys), and its replica.
        let mut master = 0;
        for port in cluster.masters().await {
            if node_command(port, "DBSIZE", vec![]).await != "0" {
                master = port;
            }
        }
        let mut replica = 0;
        for node in &cluster.nodes {
            let info = node_command(node.port(), "INFO", vec!["replication".into()]).await;
            if info.contains(&format!("master_port:{master}")) {
                replica = node.port();
            }
        }
        assert!(master != 0 && replica != 0, "found the queue's master and its replica");

        let consumer = Client::builder()
            .url(cluster.url())
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .unwrap();
        let seen = Arc::new(parking_lot::Mutex::new(Vec::<(String, Instant)>::new()));
        let worker = consumer
            .worker("fo", StringCodec)
            .unwrap()
            .concurrency(4)
            .visibility_timeout(Duration::from_secs(5))
            .run({
                let seen = seen.clone();
                move |value: String| {
                    seen.lock().push((value, Instant::now()));
                    async { Ok::<_, delayq::BoxError>(()) }
                }
            });
        let started = Instant::now();
        while seen.lock().len() < N / 5 {
            assert!(started.elapsed() < Duration::from_secs(20), "deliveries started");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // A coordinated failover: the replica takes over the master's slots.
        let reply = node_command(replica, "CLUSTER", vec!["FAILOVER".into()]).await;
        assert_eq!(reply, "OK");
        let failed_over = Instant::now();
        loop {
            let distinct: HashSet<String> = seen.lock().iter().map(|(v, _)| v.clone()).collect();
            if distinct.len() == N {
                break;
            }
            assert!(
                failed_over.elapsed() < Duration::from_secs(60),
                "only {} of {N} delivered after the failover",
                distinct.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let report = worker.shutdown().await;
        let log = seen.lock().clone();
        let distinct: HashSet<&String> = log.iter().map(|(v, _)| v).collect();
        assert_eq!(distinct.len(), N, "nothing lost");
        // Time to resume: the longest pause in deliveries around the failover.
        let mut times: Vec<Instant> = log.iter().map(|(_, t)| *t).filter(|t| *t >= failed_over).collect();
        times.insert(0, failed_over);
        let resume = times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or_default();
        eprintln!(
            "failover: {N} values, {} handled ({} twice), longest pause after CLUSTER FAILOVER {resume:?}, report {report:?}",
            log.len(),
            log.len() - N
        );
        let reliable = consumer.reliable_queue("fo", StringCodec).unwrap();
        assert_eq!(reliable.dead_letter_len().await.unwrap(), 0);
        assert_eq!(queue.len().await.unwrap(), 0);
        assert_eq!(reliable.len().await.unwrap(), 0);
        consumer.shutdown().await;
        producer.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}
