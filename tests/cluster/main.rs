//! Redis Cluster: delayq against a real 3-master, 3-replica cluster the
//! harness starts on loopback ports. A separate test target so the fast
//! suite stays fast; `./scripts/test.sh` (and so CI) runs it too.

#[path = "../support/redis_server.rs"]
mod redis_server;
#[path = "../support/redis_cluster.rs"]
mod redis_cluster;

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
            queue.offer(&format!("v-{i}"), Duration::from_millis(800)).await.unwrap();
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
            let list = node_command(node.port(), "CLIENT", vec!["LIST".into(), "TYPE".into(), "pubsub".into()]).await;
            subscribers += list.lines().filter(|l| l.contains("sub=")).count();
        }
        assert_eq!(subscribers, 1, "one subscriber connection in the whole cluster");
        assert_eq!(client.stats().transferred, 100);
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}
