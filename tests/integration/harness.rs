//! Test harness: a real `redis-server` per test, on a free loopback port, that
//! the test can stop, restart and cut off.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::fred::types::{CustomCommand, Value};
use delayq::{Client, ClientBuilder};

#[path = "../support/redis_server.rs"]
mod redis_server;
pub use redis_server::{eventually, wait_for, RedisServer};

/// Longest any single test may run before it fails instead of hanging CI.
pub const TEST_DEADLINE: Duration = Duration::from_secs(90);

/// Runs a test body with [`TEST_DEADLINE`].
pub async fn deadline<F: Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_DEADLINE, body)
        .await
        .expect("test exceeded its deadline");
}

/// A server, a fault proxy in front of it, and a delayq client through the
/// proxy (test-friendly settings, as [`RedisServer::client`]).
pub async fn behind_proxy() -> (RedisServer, crate::fault_proxy::FaultProxy, Client) {
    let redis = RedisServer::start().await;
    let proxy = crate::fault_proxy::FaultProxy::start(redis.port()).await;
    let client = Client::builder()
        .url(proxy.url())
        .blocking_timeout(Duration::from_secs(1))
        .build()
        .await
        .expect("connect through the proxy");
    (redis, proxy, client)
}

/// A client through the proxy that never resends: a lost reply is final.
pub async fn without_resends(proxy: &crate::fault_proxy::FaultProxy) -> Client {
    Client::builder()
        .url(proxy.url())
        .customize(|b| {
            b.with_connection_config(|c| c.max_command_attempts = 1);
        })
        .build()
        .await
        .expect("connect through the proxy")
}

/// Values as the bytes fred sends.
pub fn bytes(values: &[&str]) -> Vec<Bytes> {
    values.iter().map(|v| Bytes::copy_from_slice(v.as_bytes())).collect()
}

/// Test-only ways to talk to the server.
impl RedisServer {
    /// A builder for a delayq client of this server, with test-friendly settings.
    pub fn client_builder(&self) -> ClientBuilder {
        Client::builder()
            .url(self.url())
            .blocking_timeout(Duration::from_secs(1))
    }

    /// A delayq client of this server.
    pub async fn client(&self) -> Client {
        self.client_builder().build().await.expect("connect delayq client")
    }

    /// A plain fred client for inspecting and seeding Redis directly.
    pub async fn raw(&self) -> RawRedis {
        // Reconnects, so tests that cut every connection keep their inspector.
        let policy = ReconnectPolicy::new_constant(0, 20);
        let client =
            delayq::fred::clients::Client::new(Config::from_url(&self.url()).unwrap(), None, None, Some(policy));

        client.init().await.expect("raw client connects");
        RawRedis { client }
    }
}

/// Direct access to Redis, for seeding state as Java would leave it and for
/// checking what delayq wrote.
pub struct RawRedis {
    pub client: delayq::fred::clients::Client,
}

impl RawRedis {
    /// Any command, by name and arguments.
    pub async fn cmd(&self, name: &'static str, args: Vec<Value>) -> Value {
        self.client
            .custom::<Value, Value>(
                CustomCommand::new_static(name, delayq::fred::types::ClusterHash::FirstKey, false),
                args,
            )
            .await
            .unwrap_or_else(|e| panic!("{name} failed: {e}"))
    }

    /// Caches the script whose own Lua is `own` (after the shared libs)
    /// without running it, and returns its SHA1: its first call is then an
    /// EVALSHA that runs (not one answered NOSCRIPT, whose loss would be no
    /// test), and only its EVALSHA requests carry this SHA1 (a fault
    /// proxy's pattern).
    pub async fn load_script(&self, own: &str) -> String {
        let body = delayq::__script_body(own);
        self.cmd("SCRIPT", vec!["LOAD".into(), body.as_str().into()]).await;
        delayq::fred::util::sha1_hash(&body)
    }

    /// Calls of `command` (lowercase) the server counted (`INFO commandstats`).
    pub async fn command_calls(&self, command: &str) -> i64 {
        let stats = self
            .cmd("INFO", vec!["commandstats".into()])
            .await
            .as_string()
            .unwrap_or_default();
        let prefix = format!("cmdstat_{command}:calls=");
        stats
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    pub async fn llen(&self, key: &str) -> usize {
        self.client.llen::<i64, _>(key).await.unwrap() as usize
    }

    pub async fn zcard(&self, key: &str) -> usize {
        self.client.zcard::<i64, _>(key).await.unwrap() as usize
    }

    pub async fn lrange(&self, key: &str) -> Vec<Bytes> {
        self.client.lrange(key, 0, -1).await.unwrap()
    }

    /// ZRANGE key 0 -1 WITHSCORES as (member, score).
    pub async fn zrange(&self, key: &str) -> Vec<(Bytes, i64)> {
        let value = self
            .cmd("ZRANGE", vec![key.into(), 0.into(), (-1).into(), "WITHSCORES".into()])
            .await;
        let items = match value {
            Value::Array(items) => items,
            other => panic!("zrange: {other:?}"),
        };
        items
            .chunks(2)
            .map(|pair| {
                let member = pair[0].as_bytes().unwrap().to_vec();
                let score = pair[1].as_str().unwrap().parse::<f64>().unwrap() as i64;
                (Bytes::from(member), score)
            })
            .collect()
    }

    /// Adds a packed element as a Java offer would: ZADD + RPUSH, without publishing.
    pub async fn seed(&self, queue: &str, element: &[u8], due_ms: i64) {
        let keys = delayq::QueueKeys::new(queue).unwrap();
        let _: i64 = self
            .client
            .zadd(
                keys.timeout(),
                None,
                None,
                false,
                false,
                (due_ms as f64, element.to_vec()),
            )
            .await
            .unwrap();
        let _: i64 = self.client.rpush(keys.pending(), element.to_vec()).await.unwrap();
    }

    /// Number of subscribers of a channel.
    pub async fn numsub(&self, channel: &str) -> i64 {
        match self.cmd("PUBSUB", vec!["NUMSUB".into(), channel.into()]).await {
            Value::Array(items) => items[1].as_i64().unwrap(),
            other => panic!("numsub: {other:?}"),
        }
    }

    /// One field of `INFO section`.
    pub async fn info_field(&self, section: &'static str, field: &str) -> String {
        let info: String = self
            .client
            .info(Some(match section {
                "clients" => delayq::fred::types::InfoKind::Clients,
                "persistence" => delayq::fred::types::InfoKind::Persistence,
                "memory" => delayq::fred::types::InfoKind::Memory,
                other => panic!("unknown INFO section {other}"),
            }))
            .await
            .unwrap();
        info.lines()
            .find_map(|line| line.strip_prefix(field).and_then(|rest| rest.strip_prefix(':')))
            .unwrap_or_else(|| panic!("no {field} in INFO {section}"))
            .trim()
            .to_owned()
    }

    /// CLIENT KILL TYPE <kind> (normal, pubsub...); returns how many were killed.
    pub async fn kill_clients(&self, kind: &str) -> i64 {
        self.cmd(
            "CLIENT",
            vec!["KILL".into(), "TYPE".into(), kind.into(), "SKIPME".into(), "yes".into()],
        )
        .await
        .as_i64()
        .unwrap()
    }
}

/// Polls `f` until it has sent its command, then drops it (usually before
/// the reply comes); returns its output if it finished first anyway.
pub async fn drop_in_flight<F: Future>(f: F) -> Option<F::Output> {
    tokio::select! {
        biased;
        out = f => Some(out),
        _ = tokio::task::yield_now() => None,
    }
}

/// Milliseconds since the epoch on this host.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Decodes a hex string.
pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// One command as `MONITOR` reported it.
#[derive(Debug, Clone)]
pub struct Monitored {
    /// Run by a Lua script (`[0 lua]`) rather than sent by a client.
    pub from_lua: bool,
    /// Command name (lower-cased) and arguments, as bytes.
    pub args: Vec<Vec<u8>>,
}

impl Monitored {
    pub fn name(&self) -> String {
        String::from_utf8_lossy(&self.args[0]).to_lowercase()
    }
}

/// A `MONITOR` connection recording every command the server runs.
pub struct Monitor {
    seen: std::sync::Arc<parking_lot::Mutex<Vec<Monitored>>>,
    task: tokio::task::JoinHandle<()>,
    port: u16,
}

impl RedisServer {
    /// Starts recording every command (including those scripts run).
    pub async fn monitor(&self) -> Monitor {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", self.port()))
            .await
            .unwrap();
        stream.write_all(b"MONITOR\r\n").await.unwrap();
        let mut reader = BufReader::new(stream);
        let mut first = Vec::new();
        reader.read_until(b'\n', &mut first).await.unwrap();
        assert_eq!(first, b"+OK\r\n");
        let seen = std::sync::Arc::new(parking_lot::Mutex::new(Vec::new()));
        let sink = seen.clone();
        let task = tokio::spawn(async move {
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if let Some(entry) = parse_monitor_line(&line) {
                            sink.lock().push(entry);
                        }
                    }
                }
            }
        });
        Monitor {
            seen,
            task,
            port: self.port(),
        }
    }
}

impl Monitor {
    /// Everything recorded so far, once the server has reported all commands
    /// sent before this call (a marker command is sent and waited for).
    pub async fn entries(&self) -> Vec<Monitored> {
        let marker = format!("delayq-monitor-{}", fastrand::u64(..));
        let client = delayq::fred::clients::Client::new(
            Config::from_url(&format!("redis://127.0.0.1:{}", self.port)).unwrap(),
            None,
            None,
            None,
        );
        client.init().await.unwrap();
        let _: Value = client
            .custom(
                CustomCommand::new_static("ECHO", delayq::fred::types::ClusterHash::Random, false),
                vec![marker.as_str()],
            )
            .await
            .unwrap();
        let _ = client.quit().await;
        eventually(Duration::from_secs(20), "monitor sees the marker", || async {
            self.seen
                .lock()
                .iter()
                .any(|e| e.args.get(1).is_some_and(|a| a == marker.as_bytes()))
        })
        .await;
        let seen = self.seen.lock();
        let end = seen
            .iter()
            .position(|e| e.args.get(1).is_some_and(|a| a == marker.as_bytes()))
            .unwrap();
        seen[..end].to_vec()
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Parses `+1700000000.123456 [0 lua] "zadd" "key" "\x08..."`.
fn parse_monitor_line(line: &[u8]) -> Option<Monitored> {
    let open = line.iter().position(|&b| b == b'[')?;
    let close = open + line[open..].iter().position(|&b| b == b']')?;
    let source = &line[open + 1..close];
    let from_lua = source.ends_with(b"lua");
    let mut args = Vec::new();
    let mut i = close + 1;
    while i < line.len() {
        if line[i] != b'"' {
            i += 1;
            continue;
        }
        i += 1;
        let mut arg = Vec::new();
        while i < line.len() && line[i] != b'"' {
            if line[i] == b'\\' && i + 1 < line.len() {
                i += 1;
                match line[i] {
                    b'n' => arg.push(b'\n'),
                    b'r' => arg.push(b'\r'),
                    b't' => arg.push(b'\t'),
                    b'a' => arg.push(7),
                    b'b' => arg.push(8),
                    b'x' => {
                        let hex = std::str::from_utf8(&line[i + 1..i + 3]).ok()?;
                        arg.push(u8::from_str_radix(hex, 16).ok()?);
                        i += 2;
                    }
                    other => arg.push(other),
                }
            } else {
                arg.push(line[i]);
            }
            i += 1;
        }
        i += 1;
        args.push(arg);
    }
    if args.is_empty() {
        return None;
    }
    Some(Monitored { from_lua, args })
}

/// Asserts that each of the values `0..n` was taken exactly once by the
/// `takers` (each returns what it took) or is still in `queue`'s list, once
/// the values given back for takes that stopped waiting have settled.
pub async fn assert_each_taken_once_or_left(
    takers: Vec<tokio::task::JoinHandle<Vec<i64>>>,
    queue: &delayq::BlockingQueue<i64>,
    n: i64,
) {
    let mut seen = std::collections::HashMap::<i64, usize>::new();
    for taker in takers {
        for v in taker.await.unwrap() {
            *seen.entry(v).or_default() += 1;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    while let Some(v) = queue.try_take().await.unwrap() {
        *seen.entry(v).or_default() += 1;
    }
    assert_eq!(seen.len() as i64, n, "every value taken or still in the list");
    assert!(seen.values().all(|&times| times == 1), "no value twice");
}

/// Waits until every reply stored for the queue tagged `tag` has been read
/// and marked consumed (`src/connection/request.rs`): that mark is written in the
/// background, and it must not be the next request the proxy sees.
pub async fn settled(raw: &RawRedis, tag: &str) {
    let pattern = format!("delayq_request:{{{tag}}}*");
    eventually(Duration::from_secs(20), "stored replies marked read", || async {
        let Value::Array(keys) = raw.cmd("KEYS", vec![Value::from(pattern.as_str())]).await else {
            return false;
        };
        for key in keys {
            // cmsgpack: a 3-element array is a reply still stored ('done').
            if let Value::Bytes(record) = raw.cmd("GET", vec![key]).await {
                if record.first() == Some(&0x93) {
                    return false;
                }
            }
        }
        true
    })
    .await;
}
