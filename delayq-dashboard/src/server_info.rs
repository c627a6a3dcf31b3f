//! Which Redis the dashboard looks at, for the pages' header: the address
//! (never the password), the db, the mode, and from `INFO` the version,
//! memory and uptime. Read every few seconds in the background and cached,
//! so no page waits for it.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};

use delayq::fred::interfaces::ClientLike;
use delayq::fred::types::config::{Server, ServerConfig};

use super::health::REDIS_WAIT;
use super::{epoch_ms, Shared};

/// Time between two `INFO`s.
const REFRESH_EVERY: Duration = Duration::from_secs(5);
/// How soon an `INFO` follows Redis coming back (what the last one said
/// was another server's, a restarted one's uptime in particular).
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// What the header shows: the configured address, and what `INFO` said last.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerInfo {
    /// From the client's configuration: `host:port` of each node given
    /// (user name and password left out).
    pub addresses: Vec<String>,
    /// `standalone`, `cluster` or `sentinel`, as configured.
    pub mode: &'static str,
    /// The Sentinel master's name.
    pub master: Option<String>,
    /// The nodes the client is connected to now (through Sentinel: the
    /// master it found; in a cluster: every master), as the last `INFO`
    /// round saw them; the API leaves them out while Redis is down.
    pub connected: Vec<String>,
    pub db: u8,
    /// `INFO`'s fields we show, once one answered.
    pub info: Option<Info>,
    /// When `info` was read.
    pub read_at: Option<SystemTime>,
    /// Why the last `INFO` failed.
    pub error: Option<String>,
}

/// Fields of one `INFO` answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Info {
    pub version: Option<String>,
    pub redis_mode: Option<String>,
    pub role: Option<String>,
    pub used_memory: Option<u64>,
    pub used_memory_human: Option<String>,
    pub maxmemory: Option<u64>,
    pub maxmemory_human: Option<String>,
    pub uptime_seconds: Option<u64>,
}

/// The configured part, known before Redis answers.
pub(crate) fn configured(client: &delayq::Client) -> ServerInfo {
    let config = client.redis().next().client_config();
    let (mode, addresses, master) = match &config.server {
        ServerConfig::Centralized { server } => ("standalone", vec![address(server)], None),
        ServerConfig::Clustered { hosts, .. } => ("cluster", hosts.iter().map(address).collect(), None),
        ServerConfig::Sentinel {
            hosts, service_name, ..
        } => (
            "sentinel",
            hosts.iter().map(address).collect(),
            Some(service_name.clone()),
        ),
    };
    ServerInfo {
        addresses,
        mode,
        master,
        db: config.database.unwrap_or(0),
        ..ServerInfo::default()
    }
}

/// `host:port` (`[v6]:port`).
fn address(server: &Server) -> String {
    if server.host.contains(':') {
        format!("[{}]:{}", server.host, server.port)
    } else {
        format!("{}:{}", server.host, server.port)
    }
}

/// Reads `INFO` every few seconds while the dashboard lives, and at once
/// when Redis comes back, unless the probe finds Redis down (fred would
/// queue the command).
pub(crate) fn start(shared: &Arc<Shared>) {
    super::periodic::every(shared, CHECK_EVERY, |shared, weak| async move {
        let health = shared.health.borrow().clone();
        let read_at = shared.server.read().read_at;
        let fresh = read_at.is_some_and(|at| {
            at >= health.since && SystemTime::now().duration_since(at).unwrap_or_default() < REFRESH_EVERY
        });
        if !health.up || fresh {
            return;
        }
        let redis = shared.client.redis().next().clone();
        drop(shared);
        let read = match tokio::time::timeout(REDIS_WAIT, redis.info::<String>(None)).await {
            Ok(Ok(text)) => Ok(parse(&text)),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no reply to INFO within {REDIS_WAIT:?}")),
        };
        let mut connected: Vec<String> = redis.active_connections().iter().map(address).collect();
        connected.sort();
        let Some(shared) = weak.upgrade() else { return };
        let mut server = shared.server.write();
        server.connected = connected;
        match read {
            Ok(info) => {
                server.info = Some(info);
                server.read_at = Some(SystemTime::now());
                server.error = None;
            }
            Err(error) => server.error = Some(error),
        }
    });
}

/// The fields we show from `INFO`'s `key:value` lines.
pub(crate) fn parse(text: &str) -> Info {
    let mut info = Info::default();
    for line in text.lines() {
        let Some((key, value)) = line.trim_end().split_once(':') else {
            continue;
        };
        let text = || Some(value.to_owned());
        let number = || value.parse().ok();
        match key {
            "redis_version" => info.version = text(),
            "redis_mode" => info.redis_mode = text(),
            "role" => info.role = text(),
            "used_memory" => info.used_memory = number(),
            "used_memory_human" => info.used_memory_human = text(),
            "maxmemory" => info.maxmemory = number(),
            "maxmemory_human" => info.maxmemory_human = text(),
            "uptime_in_seconds" => info.uptime_seconds = number(),
            _ => {}
        }
    }
    info
}

/// The `server` field of every API answer.
pub(crate) fn json(shared: &Shared) -> Value {
    let server = shared.server.read().clone();
    let health = shared.health.borrow().clone();
    let up = health.up;
    // What INFO said is shown only while Redis is up and if it was read
    // since it came back: before, it described a server that may be gone
    // (a restarted one's uptime starts again).
    let current = up && server.read_at.is_some_and(|at| at >= health.since);
    let info = server.info.filter(|_| current).unwrap_or_default();
    // While the probe finds Redis down, the client is connected to nothing,
    // whatever the last INFO round saw.
    let connected = if up { server.connected } else { Vec::new() };
    // INFO's redis_mode says cluster or sentinel from the node itself; a
    // Sentinel-managed master says standalone, so the configuration wins.
    let mode = match (server.mode, info.redis_mode.as_deref()) {
        ("standalone", Some("cluster")) => "cluster",
        (mode, _) => mode,
    };
    json!({
        "addresses": server.addresses,
        "mode": mode,
        "master": server.master,
        "connected": connected,
        "reconnecting": !up,
        "db": server.db,
        "version": info.version,
        "role": info.role,
        "used_memory": info.used_memory,
        "used_memory_human": info.used_memory_human,
        "maxmemory": info.maxmemory,
        "maxmemory_human": info.maxmemory_human,
        "uptime_seconds": info.uptime_seconds,
        "read_at_ms": server.read_at.filter(|_| current).map(epoch_ms),
        "error": server.error,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn info_lines_are_read() {
        let info = super::parse(
            "# Server\r\nredis_version:7.2.4\r\nredis_mode:standalone\r\nuptime_in_seconds:93\r\n\
             # Memory\r\nused_memory:1048576\r\nused_memory_human:1.00M\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\n\
             # Replication\r\nrole:master\r\n",
        );
        assert_eq!(info.version.as_deref(), Some("7.2.4"));
        assert_eq!(info.used_memory, Some(1_048_576));
        assert_eq!(info.used_memory_human.as_deref(), Some("1.00M"));
        assert_eq!(info.maxmemory, Some(0));
        assert_eq!(info.uptime_seconds, Some(93));
        assert_eq!(info.role.as_deref(), Some("master"));
    }
}
