//! A real Redis Cluster on loopback: 3 masters and 3 replicas, each a
//! `redis-server --cluster-enabled yes` on free ports, joined with
//! `redis-cli --cluster create`. Killed when dropped.

use std::time::Duration;

use crate::redis_server::{eventually, free_port, node_command, RedisServer};

pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
}

impl RedisCluster {
    /// Starts six nodes, creates the cluster and waits until every node sees
    /// it whole and every replica is in sync.
    pub async fn start() -> RedisCluster {
        let mut nodes = Vec::new();
        for _ in 0..6 {
            // The bus port is chosen too: port + 10000 may be taken or out of range.
            let bus = free_port().to_string();
            let node = RedisServer::start_with(&[
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "2000",
                "--cluster-port",
                &bus,
            ])
            .await;
            nodes.push(node);
        }
        let mut args: Vec<String> = vec!["--cluster".into(), "create".into()];
        args.extend(nodes.iter().map(|n| format!("127.0.0.1:{}", n.port())));
        args.extend(["--cluster-replicas".into(), "1".into(), "--cluster-yes".into()]);
        let out = tokio::process::Command::new("redis-cli")
            .args(&args)
            .output()
            .await
            .expect("redis-cli on PATH (Debian's redis-tools, installed with redis-server)");
        assert!(out.status.success(), "redis-cli --cluster create failed: {out:?}");
        let cluster = RedisCluster { nodes };
        cluster.wait_until_healthy(Duration::from_secs(30)).await;
        cluster
    }

    /// `redis-cluster://` URL with one seed node (fred discovers the others).
    pub fn url(&self) -> String {
        format!("redis-cluster://127.0.0.1:{}", self.nodes[0].port())
    }

    /// Waits until every running node reports `cluster_state:ok` and knows
    /// six nodes, and every replica's link to its master is up.
    pub async fn wait_until_healthy(&self, within: Duration) {
        eventually(within, "the cluster to be healthy", || async {
            let mut healthy = true;
            for node in self.nodes.iter().filter(|n| n.pid().is_some()) {
                let info = node_command(node.port(), "CLUSTER", vec!["INFO".into()]).await;
                let replication = node_command(node.port(), "INFO", vec!["replication".into()]).await;
                healthy &= info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:6");
                if replication.contains("role:slave") {
                    healthy &= replication.contains("master_link_status:up");
                }
            }
            healthy
        })
        .await;
    }

    /// Ports of the nodes that are masters now.
    pub async fn masters(&self) -> Vec<u16> {
        let mut masters = Vec::new();
        for node in self.nodes.iter().filter(|n| n.pid().is_some()) {
            if node_command(node.port(), "INFO", vec!["replication".into()])
                .await
                .contains("role:master")
            {
                masters.push(node.port());
            }
        }
        masters
    }
}
