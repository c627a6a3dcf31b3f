//! A real Redis Cluster on loopback: 3 masters and 3 replicas, each a
//! `redis-server --cluster-enabled yes` on free ports, joined with
//! `redis-cli --cluster create`. Killed when dropped.

use std::time::Duration;

use delayq::fred::types::Value;

use crate::redis_server::{eventually, free_port, node_command, node_try, RedisServer};

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
    /// every node of the cluster, and every replica's link to its master is up.
    pub async fn wait_until_healthy(&self, within: Duration) {
        let known = format!("cluster_known_nodes:{}", self.nodes.len());
        let known = &known;
        eventually(within, "the cluster to be healthy", || async move {
            let mut healthy = true;
            for node in self.nodes.iter().filter(|n| n.pid().is_some()) {
                let info = node_command(node.port(), "CLUSTER", vec!["INFO".into()]).await;
                let replication = node_command(node.port(), "INFO", vec!["replication".into()]).await;
                healthy &= info.contains("cluster_state:ok") && info.contains(known.as_str());
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

/// How [`RedisCluster::migrate_slot`] moves a slot's keys.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Keys per `MIGRATE` (redis-cli's `--cluster-pipeline` is 10).
    pub batch: usize,
    /// A pause after each `MIGRATE`, to keep the slot half-moved for a
    /// while: the window in which the source answers `ASK`/`TRYAGAIN`.
    pub pause: Duration,
}

impl Default for Migration {
    fn default() -> Self {
        Migration {
            batch: 10,
            pause: Duration::ZERO,
        }
    }
}

/// What one [`RedisCluster::migrate_slot`] did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Migrated {
    /// Keys moved by `MIGRATE`.
    pub keys: usize,
    /// `MIGRATE` calls made.
    pub batches: usize,
}

impl RedisCluster {
    /// Moves hash `slot` from the master on `from` to the master on `to`
    /// the way `redis-cli --cluster reshard` does for one slot: `CLUSTER
    /// SETSLOT slot IMPORTING` on the target, `MIGRATING` on the source,
    /// then `CLUSTER GETKEYSINSLOT` + `MIGRATE … KEYS …` in batches until
    /// the source holds none (new keys may appear meanwhile: clients keep
    /// writing), then `SETSLOT slot NODE target` on the target, the source
    /// and every other master. Panics on a command that fails.
    pub async fn migrate_slot(&self, slot: u16, from: u16, to: u16, how: Migration) -> Migrated {
        let (_, target) = self.open_slot(slot, from, to).await;
        let slot_arg = || Value::from(i64::from(slot));
        let mut migrated = Migrated::default();
        loop {
            let keys = node_try(
                from,
                "CLUSTER",
                vec!["GETKEYSINSLOT".into(), slot_arg(), Value::from(how.batch as i64)],
            )
            .await
            .unwrap_or_else(|e| panic!("CLUSTER GETKEYSINSLOT on {from}: {e}"));
            let keys = match keys {
                Value::Array(keys) => keys,
                other => panic!("CLUSTER GETKEYSINSLOT on {from} answered {other:?}"),
            };
            if keys.is_empty() {
                break;
            }
            let count = keys.len();
            migrate_keys(from, to, keys).await;
            migrated.keys += count;
            migrated.batches += 1;
            if !how.pause.is_zero() {
                tokio::time::sleep(how.pause).await;
            }
        }
        // The target first, so that when the source stops serving the slot
        // its MOVED points at a node that already serves it.
        let node = |id: &str| vec!["SETSLOT".into(), slot_arg(), "NODE".into(), Value::from(id)];
        node_ok(to, "CLUSTER", node(&target)).await;
        // A source that gave away its last slot may have turned replica of
        // the target already (Redis 7's cluster-allow-replica-migration), as
        // may another master: it follows the new owner then.
        for master in std::iter::once(from).chain(self.masters().await) {
            if master == to {
                continue;
            }
            if let Err(error) = node_try(master, "CLUSTER", node(&target)).await
                && !error.contains("only with masters")
            {
                panic!("CLUSTER SETSLOT {slot} NODE on {master}: {error}");
            }
        }
        migrated
    }

    /// Adds a master that serves no slot yet (as `redis-cli --cluster
    /// add-node` does: `CLUSTER MEET`), the usual target of a reshard when a
    /// cluster grows; waits until every node knows it. Its port.
    pub async fn add_master(&mut self) -> u16 {
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
        let port = node.port();
        let seed = self.nodes[0].port();
        // The seed meets the new node, whose bus port is known here (not port + 10000).
        let meet = vec![
            "MEET".into(),
            "127.0.0.1".into(),
            Value::from(i64::from(port)),
            Value::from(bus.as_str()),
        ];
        node_ok(seed, "CLUSTER", meet).await;
        self.nodes.push(node);
        self.wait_until_healthy(Duration::from_secs(60)).await;
        port
    }

    /// The first step of [`migrate_slot`](Self::migrate_slot) alone: `slot`
    /// `IMPORTING` on the master on `to`, `MIGRATING` on the one on `from`,
    /// no key moved; the two nodes' ids.
    pub async fn open_slot(&self, slot: u16, from: u16, to: u16) -> (String, String) {
        let source = node_id(from).await;
        let target = node_id(to).await;
        let slot_arg = || Value::from(i64::from(slot));
        node_ok(
            to,
            "CLUSTER",
            vec!["SETSLOT".into(), slot_arg(), "IMPORTING".into(), source.as_str().into()],
        )
        .await;
        node_ok(
            from,
            "CLUSTER",
            vec!["SETSLOT".into(), slot_arg(), "MIGRATING".into(), target.as_str().into()],
        )
        .await;
        (source, target)
    }

    /// The port of the master serving hash `slot` now, by `CLUSTER SLOTS`
    /// on a running master.
    pub async fn slot_owner(&self, slot: u16) -> u16 {
        for master in self.masters().await {
            let Ok(Value::Array(ranges)) = node_try(master, "CLUSTER", vec!["SLOTS".into()]).await else {
                continue;
            };
            for range in ranges {
                if let Value::Array(parts) = range
                    && let (Some(Value::Integer(start)), Some(Value::Integer(end))) = (parts.first(), parts.get(1))
                    && (*start..=*end).contains(&i64::from(slot))
                    && let Some(Value::Array(primary)) = parts.get(2)
                    && let Some(Value::Integer(port)) = primary.get(1)
                {
                    return *port as u16;
                }
            }
        }
        panic!("no master serves slot {slot}");
    }

    /// Fails over the master on `port` by `CLUSTER FAILOVER` on its replica:
    /// the two agree on the handover (the master stops taking writes until
    /// the replica has them all), so no acknowledged write is lost. Waits
    /// until the replica is a master and every node sees the cluster whole;
    /// returns the new master's port.
    pub async fn failover(&self, port: u16) -> u16 {
        let replica = self.replica_of(port).await;
        node_ok(replica, "CLUSTER", vec!["FAILOVER".into()]).await;
        eventually(Duration::from_secs(60), "the replica to take over", || async {
            node_command(replica, "INFO", vec!["replication".into()])
                .await
                .contains("role:master")
        })
        .await;
        self.wait_until_healthy(Duration::from_secs(60)).await;
        replica
    }

    /// Kills the master on `port` (SIGKILL, like a crash) and waits until its
    /// replica has been elected in its place; returns the new master's port.
    /// Writes the replica had not received yet are lost (replication is
    /// asynchronous). The killed node stays down.
    pub async fn kill_master(&mut self, port: u16) -> u16 {
        let replica = self.replica_of(port).await;
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.port() == port)
            .expect("a node of this cluster");
        node.kill();
        eventually(Duration::from_secs(60), "the replica to be elected", || async {
            node_command(replica, "INFO", vec!["replication".into()])
                .await
                .contains("role:master")
                && node_command(replica, "CLUSTER", vec!["INFO".into()])
                    .await
                    .contains("cluster_state:ok")
        })
        .await;
        replica
    }

    /// Starts the killed node on `port` again (same port and directory, so
    /// the same node id from its `nodes.conf`): it rejoins as a replica of
    /// the master elected in its place. Waits until the cluster is whole and
    /// every replica in sync.
    pub async fn restart(&mut self, port: u16) {
        let node = self
            .nodes
            .iter_mut()
            .find(|n| n.port() == port)
            .expect("a node of this cluster");
        node.restart().await;
        self.wait_until_healthy(Duration::from_secs(60)).await;
    }

    /// The port of a replica of the master on `port`.
    pub async fn replica_of(&self, port: u16) -> u16 {
        for node in self.nodes.iter().filter(|n| n.pid().is_some()) {
            let info = node_command(node.port(), "INFO", vec!["replication".into()]).await;
            let follows = info.lines().any(|l| l.trim() == format!("master_port:{port}"));
            if info.contains("role:slave") && follows {
                return node.port();
            }
        }
        panic!("the master on {port} has no replica");
    }
}

/// The node's cluster id (`CLUSTER MYID`).
/// `MIGRATE` of `keys` from the node on `from` to the one on `to` (db 0,
/// 10 s timeout), as a reshard moves a batch of a slot's keys. Panics if it
/// fails.
pub async fn migrate_keys(from: u16, to: u16, keys: Vec<Value>) {
    let mut args: Vec<Value> = vec![
        "127.0.0.1".into(),
        Value::from(i64::from(to)),
        "".into(),
        Value::from(0),
        Value::from(10_000),
        "KEYS".into(),
    ];
    args.extend(keys);
    node_ok(from, "MIGRATE", args).await;
}

async fn node_id(port: u16) -> String {
    let id = node_command(port, "CLUSTER", vec!["MYID".into()]).await;
    assert_eq!(id.len(), 40, "CLUSTER MYID on {port} answered {id:?}");
    id
}

/// A command that must answer without an error.
async fn node_ok(port: u16, name: &'static str, args: Vec<Value>) {
    let shown = format!("{name} {args:?}");
    if let Err(error) = node_try(port, name, args).await {
        panic!("{shown} on {port}: {error}");
    }
}
