//! A real Sentinel deployment on loopback: a master, one replica and three
//! sentinels (`redis-server sentinel.conf --sentinel`) watching it as
//! `mymaster` with quorum 2, on free ports. Killed when dropped.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use delayq::fred::types::Value;
use tokio::time::Instant;

use crate::delay_link::DelayLink;
use crate::redis_server::{
    eventually, free_port, node_command, node_command_as, wait_for, wait_replicated, RedisServer,
};

/// The name the sentinels know the master by.
pub const SERVICE: &str = "mymaster";

pub struct RedisSentinel {
    /// The two data nodes; which one is master changes with failovers.
    pub servers: Vec<RedisServer>,
    sentinels: Vec<Sentinel>,
    /// The sentinels' own password (`requirepass`), if they have one.
    password: Option<String>,
    /// The slow link the replica follows its master through, if any.
    link: Option<DelayLink>,
}

struct Sentinel {
    port: u16,
    /// Its rewritten config and log; removed when dropped.
    _dir: tempfile::TempDir,
    child: Child,
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl RedisSentinel {
    /// Starts the master, its replica (waiting for the sync) and three
    /// sentinels, and waits until the sentinels see each other and the replica.
    pub async fn start() -> RedisSentinel {
        Self::start_with_password(None).await
    }

    /// [`start`](Self::start) with sentinels that require `password` (of
    /// their clients and of each other).
    pub async fn start_with_password(password: Option<&str>) -> RedisSentinel {
        Self::start_with(password, None).await
    }

    /// [`start`](Self::start) with a replica that follows its master
    /// through a [`DelayLink`] of `delay`: it lags that far behind, and
    /// what is on its way when the master dies is lost (the sentinels still
    /// see it, through the master's `INFO`, at its own port).
    pub async fn start_with_slow_replica(delay: Duration) -> RedisSentinel {
        Self::start_with(None, Some(delay)).await
    }

    async fn start_with(password: Option<&str>, link_delay: Option<Duration>) -> RedisSentinel {
        let master = RedisServer::start().await;
        let master_port = master.port().to_string();
        let link = match link_delay {
            Some(delay) => Some(DelayLink::start(master.port(), delay).await),
            None => None,
        };
        let followed = link.as_ref().map_or(master_port.clone(), |l| l.port().to_string());
        let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &followed]).await;
        let mut deployment = RedisSentinel {
            servers: vec![master, replica],
            sentinels: Vec::new(),
            password: password.map(str::to_owned),
            link,
        };
        deployment.wait_for_replica(Duration::from_secs(20)).await;
        for _ in 0..3 {
            // A replica following another address than its master's is
            // pointed at the master by the sentinels once failover-timeout
            // has passed: a slow replica's link is kept for a minute.
            let failover_timeout = if deployment.link.is_some() { 60_000 } else { 10_000 };
            deployment
                .sentinels
                .push(start_sentinel(&master_port, password, failover_timeout).await);
        }
        deployment.wait_until_watching(Duration::from_secs(30)).await;
        deployment
    }

    /// `redis-sentinel://` URL naming every sentinel.
    pub fn url(&self) -> String {
        let mut url = format!(
            "redis-sentinel://127.0.0.1:{}/0?sentinelServiceName={SERVICE}",
            self.sentinels[0].port
        );
        if let Some(password) = &self.password {
            url.push_str(&format!("&sentinelPassword={password}"));
        }
        for sentinel in &self.sentinels[1..] {
            url.push_str(&format!("&node=127.0.0.1:{}", sentinel.port));
        }
        url
    }

    /// One command on the sentinel on `port`, with the sentinels' password.
    pub async fn sentinel_command(&self, port: u16, name: &'static str, args: Vec<Value>) -> String {
        node_command_as(port, self.password.as_deref(), name, args).await
    }

    /// Ports of the sentinels.
    pub fn sentinel_ports(&self) -> Vec<u16> {
        self.sentinels.iter().map(|s| s.port).collect()
    }

    /// The master's port as the first sentinel that answers tells it.
    pub async fn master_port(&self) -> u16 {
        for sentinel in &self.sentinels {
            let reply = self
                .sentinel_command(
                    sentinel.port,
                    "SENTINEL",
                    vec!["GET-MASTER-ADDR-BY-NAME".into(), SERVICE.into()],
                )
                .await;
            if let Some(port) = reply.lines().nth(1).and_then(|p| p.parse().ok()) {
                return port;
            }
        }
        panic!("no sentinel names a master");
    }

    /// The data node listening on `port`.
    pub fn server(&mut self, port: u16) -> &mut RedisServer {
        self.servers
            .iter_mut()
            .find(|s| s.port() == port)
            .expect("a data node on that port")
    }

    /// Waits until the sentinels name a master other than `old`, it says it
    /// is a master, and returns its port.
    pub async fn wait_for_new_master(&self, old: u16, within: Duration) -> u16 {
        wait_for(within, "a new master", || async move {
            let port = self.master_port().await;
            let promoted = port != old
                && node_command(port, "INFO", vec!["replication".into()])
                    .await
                    .contains("role:master");
            promoted.then_some(port)
        })
        .await
    }

    /// Waits until the data node on `port` reports `role` (`role:master`, `role:slave`).
    pub async fn wait_for_role(&self, port: u16, role: &str, within: Duration) {
        let started = Instant::now();
        eventually(within, &format!("{port} to be {role}"), || async {
            node_command(port, "INFO", vec!["replication".into()])
                .await
                .contains(role)
        })
        .await;
        eprintln!("{port} is {role} after {:?}", started.elapsed());
    }

    /// Whether the replica still follows its master through the slow link
    /// ([`start_with_slow_replica`](Self::start_with_slow_replica)).
    pub async fn replica_follows_the_link(&self) -> bool {
        let Some(link) = &self.link else {
            return false;
        };
        let info = node_command(self.servers[1].port(), "INFO", vec!["replication".into()]).await;
        info.lines().any(|l| l.trim() == format!("master_port:{}", link.port()))
            && info.contains("master_link_status:up")
    }

    /// Waits until the replica has every write the master has taken (so a
    /// failover cannot lose them).
    pub async fn wait_replicated(&self, within: Duration) {
        wait_replicated(self.master_port().await, within).await;
    }

    async fn wait_for_replica(&self, within: Duration) {
        let replica = self.servers[1].port();
        eventually(within, "the replica to sync", || async {
            node_command(replica, "INFO", vec!["replication".into()])
                .await
                .contains("master_link_status:up")
        })
        .await;
    }

    /// Every sentinel knows the other two and the replica, and the quorum can authorise a failover.
    async fn wait_until_watching(&self, within: Duration) {
        eventually(within, "the sentinels to find each other", || async {
            let mut ready = true;
            for sentinel in &self.sentinels {
                let master = self
                    .sentinel_command(sentinel.port, "SENTINEL", vec!["MASTER".into(), SERVICE.into()])
                    .await;
                ready &= pair(&master, "num-other-sentinels") == Some(2) && pair(&master, "num-slaves") == Some(1);
                let quorum = self
                    .sentinel_command(sentinel.port, "SENTINEL", vec!["CKQUORUM".into(), SERVICE.into()])
                    .await;
                ready &= quorum.starts_with("OK");
            }
            ready
        })
        .await;
    }
}

/// The value after `name` in a flat name/value reply (one item per line).
fn pair(reply: &str, name: &str) -> Option<u64> {
    let mut lines = reply.lines();
    while let Some(line) = lines.next() {
        if line == name {
            return lines.next()?.parse().ok();
        }
    }
    None
}

async fn start_sentinel(master_port: &str, password: Option<&str>, failover_timeout: u32) -> Sentinel {
    for _ in 0..5 {
        let dir = tempfile::Builder::new()
            .prefix("delayq-sentinel-")
            .tempdir()
            .expect("temp dir");
        let port = free_port();
        // Sentinel rewrites its config file, so it lives in the temp dir.
        let config: PathBuf = dir.path().join("sentinel.conf");
        std::fs::write(
            &config,
            format!(
                "port {port}\nbind 127.0.0.1\ndaemonize no\ndir {dir}\nlogfile {dir}/sentinel.log\n\
                 sentinel monitor {SERVICE} 127.0.0.1 {master_port} 2\n\
                 sentinel down-after-milliseconds {SERVICE} 1000\n\
                 sentinel failover-timeout {SERVICE} {failover_timeout}\n\
                 sentinel parallel-syncs {SERVICE} 1\n{auth}",
                dir = dir.path().display(),
                auth = password
                    .map(|p| format!("requirepass {p}\nsentinel sentinel-pass {p}\n"))
                    .unwrap_or_default(),
            ),
        )
        .expect("write sentinel.conf");
        let child = Command::new(std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".into()))
            .arg(&config)
            .arg("--sentinel")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server --sentinel");
        let mut sentinel = Sentinel { port, _dir: dir, child };
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = sentinel.child.try_wait() {
                break; // exited: probably the port was taken
            }
            // Its own process answering, not another test's server that
            // got the port first (see `RedisServer::try_start_on`).
            let info = node_command_as(port, password, "INFO", vec!["server".into()]).await;
            let pid = info.lines().find_map(|l| l.strip_prefix("process_id:")).map(str::trim);
            if pid == Some(sentinel.child.id().to_string().as_str()) {
                return sentinel;
            }
            if pid.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        drop(sentinel);
    }
    panic!("redis-server --sentinel did not start");
}
