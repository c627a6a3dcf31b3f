//! Redis Cluster: delayq against a real 3-master, 3-replica cluster the
//! harness starts on loopback ports.

use std::collections::HashSet;
use std::time::Duration;

use delayq::{Client, StringCodec};
use tokio::time::Instant;

use crate::load::{Load, VALUES};

use crate::redis_cluster::RedisCluster;
use crate::redis_server::{node_command, wait_replicated};
use crate::{assert_transferred, cli, DEADLINE};

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
        // Handles without the transfer first, so nothing moves before the checks
        // however slow the machine is.
        let queues: Vec<_> = names
            .iter()
            .map(|n| client.delayed_queue(n, StringCodec).unwrap().without_transfer())
            .collect();
        for (i, queue) in queues.iter().enumerate() {
            queue
                .offer(&format!("v-{i}"), Duration::from_millis(500))
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
        // The CLI takes the cluster URL too, for queues on any master.
        let cli = cli(
            &cluster.url(),
            ["stats", "cq-0", "cq-1", "cq-2", "cq-3", "--format", "json"],
        )
        .await;
        let stdout = String::from_utf8_lossy(&cli.stdout);
        assert!(
            cli.status.success(),
            "{}: {}",
            cli.status,
            String::from_utf8_lossy(&cli.stderr)
        );
        assert_eq!(stdout.matches("\"pending\":1").count(), 4, "{stdout}");
        // The transfer (one scheduler, one subscriber) moves each; take gets it.
        let queues: Vec<_> = names
            .iter()
            .map(|n| client.delayed_queue(n, StringCodec).unwrap())
            .collect();
        let mut seen = HashSet::new();
        for (i, queue) in queues.iter().enumerate() {
            let value = queue.destination().take_timeout(Duration::from_secs(10)).await.unwrap();
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
        assert_transferred(&client, 100).await;
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// The master holding `queue`'s slot (the only master with keys) and its replica.
async fn queue_master_and_replica(cluster: &RedisCluster) -> (u16, u16) {
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
    (master, replica)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinated_failover_under_load_loses_nothing_with_a_reliable_worker() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let load = Load::start(&cluster.url(), "fo").await;
        let (_, replica) = queue_master_and_replica(&cluster).await;
        load.wait_handled(VALUES / 5).await;
        // The replica takes over the master's slots, the two agreeing on the handover.
        assert_eq!(node_command(replica, "CLUSTER", vec!["FAILOVER".into()]).await, "OK");
        let outcome = load.finish(Instant::now(), Duration::from_secs(60)).await;
        outcome.assert_nothing_lost();
    })
    .await
    .expect("test exceeded its deadline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_master_under_load_loses_nothing_with_a_reliable_worker() {
    tokio::time::timeout(DEADLINE, async {
        let mut cluster = RedisCluster::start().await;
        let load = Load::start(&cluster.url(), "kill").await;
        let (master, replica) = queue_master_and_replica(&cluster).await;
        // The offers are on the replica too before the crash (replication is asynchronous).
        wait_replicated(master, Duration::from_secs(10)).await;
        load.wait_handled(VALUES / 5).await;
        let node = cluster.nodes.iter_mut().find(|n| n.port() == master).unwrap();
        node.kill();
        let killed = Instant::now();
        let outcome = load.finish(killed, Duration::from_secs(60)).await;
        let promoted = node_command(replica, "INFO", vec!["replication".into()]).await;
        assert!(promoted.contains("role:master"), "the replica took over");
        outcome.assert_nothing_lost();
    })
    .await
    .expect("test exceeded its deadline");
}
