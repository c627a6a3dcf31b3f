//! A real `redis-server` on a free loopback port, owned by a test or the
//! benchmark: started, killed (like a crash) and restarted on demand; and
//! the polls tests wait with.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use delayq::fred::prelude::*;
use delayq::fred::types::{CustomCommand, Value};
use delayq::{Client, ClientBuilder};
use tokio::time::Instant;

fn redis_server_binary() -> String {
    if let Ok(path) = std::env::var("REDIS_SERVER") {
        return path;
    }
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join("redis-server").is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "redis-server not found on PATH: run ./scripts/test.sh, which installs it, or set REDIS_SERVER"
    );
    "redis-server".to_owned()
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port");
    listener.local_addr().expect("local addr").port()
}

/// A `redis-server` owned by one test (or the benchmark); killed when dropped.
pub struct RedisServer {
    port: u16,
    dir: tempfile::TempDir,
    extra: Vec<String>,
    child: Option<Child>,
}

impl RedisServer {
    /// A server without persistence.
    pub async fn start() -> RedisServer {
        Self::start_with(&[]).await
    }

    /// A server with extra `redis-server` arguments (e.g. `["--appendonly", "yes"]`).
    pub async fn start_with(extra: &[&str]) -> RedisServer {
        // Another process may take the port between probing and binding: try a few.
        let mut log = String::new();
        for _ in 0..5 {
            match Self::try_start_on(free_port(), extra).await {
                Ok(server) => return server,
                Err(failed) => log = failed,
            }
        }
        panic!("redis-server did not start; its log:\n{log}");
    }

    /// A server of our own on `port`, or the log of the one that did not
    /// start there (the port taken, by another test's server maybe).
    pub async fn try_start_on(port: u16, extra: &[&str]) -> Result<RedisServer, String> {
        let dir = tempfile::Builder::new()
            .prefix("delayq-redis-")
            .tempdir()
            .expect("temp dir");
        let mut server = RedisServer {
            port,
            dir,
            extra: extra.iter().map(|s| (*s).to_owned()).collect(),
            child: None,
        };
        if server.spawn_and_wait().await {
            Ok(server)
        } else {
            Err(std::fs::read_to_string(server.log_path()).unwrap_or_default())
        }
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("redis.log")
    }

    async fn spawn_and_wait(&mut self) -> bool {
        let mut args: Vec<String> = vec![
            "--port".into(),
            self.port.to_string(),
            "--bind".into(),
            "127.0.0.1".into(),
            "--save".into(),
            "".into(),
            "--dir".into(),
            self.dir.path().display().to_string(),
            "--logfile".into(),
            self.log_path().display().to_string(),
            "--daemonize".into(),
            "no".into(),
        ];
        if !self.extra.iter().any(|a| a == "--appendonly") {
            args.extend(["--appendonly".into(), "no".into()]);
        }
        args.extend(self.extra.iter().cloned());
        let child = Command::new(redis_server_binary())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        self.child = Some(child);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(_)) = child.try_wait()
            {
                self.child = None;
                return false; // exited: probably the port was taken
            }
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                match self.server_pid().await {
                    // Ours: up.
                    Some(pid) if Some(pid) == self.pid() => return true,
                    // Another test's server got the port first (both probed
                    // it free): ours cannot bind it and exits. Taking the
                    // other server for ours would share it, and hang this
                    // test's clients once its owner kills it.
                    Some(_) => {
                        self.kill();
                        return false;
                    }
                    None => {}
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.kill();
        false
    }

    /// The process id of the server answering on the port (`INFO server`),
    /// or `None` while none answers.
    async fn server_pid(&self) -> Option<u32> {
        let client = delayq::fred::clients::Client::new(Config::from_url(&self.url()).unwrap(), None, None, None);
        let info = tokio::time::timeout(Duration::from_secs(1), async {
            client.init().await?;
            client.info::<String>(Some(delayq::fred::types::InfoKind::Server)).await
        })
        .await;
        let _ = client.quit().await;
        let info = info.ok()?.ok()?;
        info.lines()
            .find_map(|line| line.strip_prefix("process_id:"))
            .and_then(|pid| pid.trim().parse().ok())
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A builder for a delayq client of this server, with test-friendly
    /// settings (blocking commands time out after a second).
    pub fn client_builder(&self) -> ClientBuilder {
        Client::builder()
            .url(self.url())
            .blocking_timeout(Duration::from_secs(1))
    }

    /// A delayq client of this server.
    pub async fn client(&self) -> Client {
        self.client_builder().build().await.expect("connect delayq client")
    }

    /// Kills the server at once (SIGKILL), like a crash.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port and directory (AOF or RDB
    /// files there are loaded, if persistence was on).
    pub async fn restart(&mut self) {
        self.kill();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(15) {
            if self.spawn_and_wait().await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("redis-server did not restart on port {}", self.port);
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One command on one node, by a short-lived plain connection; its reply as text.
pub async fn node_command(port: u16, name: &'static str, args: Vec<Value>) -> String {
    node_command_as(port, None, name, args).await
}

/// One command on one node, by a short-lived plain connection: its reply,
/// or the error (Redis's, or of the connection) as text.
pub async fn node_try(port: u16, name: &'static str, args: Vec<Value>) -> Result<Value, String> {
    node_reply(port, None, name, args, Duration::from_secs(15)).await
}

/// [`node_command`] authenticated with `password` (default user), if any.
pub async fn node_command_as(port: u16, password: Option<&str>, name: &'static str, args: Vec<Value>) -> String {
    match node_reply(port, password, name, args, Duration::from_secs(2)).await {
        Ok(value) => value_text(&value),
        Err(_) => String::new(),
    }
}

/// One command on one node by a short-lived plain connection (with
/// `password`, if any), within `within`: its reply, or the error as text.
async fn node_reply(
    port: u16,
    password: Option<&str>,
    name: &'static str,
    args: Vec<Value>,
    within: Duration,
) -> Result<Value, String> {
    let credentials = password.map(|p| format!(":{p}@")).unwrap_or_default();
    let client = delayq::fred::clients::Client::new(
        Config::from_url(&format!("redis://{credentials}127.0.0.1:{port}")).unwrap(),
        None,
        None,
        None,
    );
    let reply = tokio::time::timeout(within, async {
        client.init().await?;
        client
            .custom::<Value, Value>(CustomCommand::new_static(name, None, false), args)
            .await
    })
    .await;
    let _ = client.quit().await;
    match reply {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no reply within {} s", within.as_secs())),
    }
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Integer(i) => i.to_string(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join("\n"),
        other => format!("{other:?}"),
    }
}

/// Waits until every replica of the master on `port` has every write the
/// master had taken when called (replication is asynchronous: a crash loses
/// what is not replicated). Replicas report their offset once a second.
pub async fn wait_replicated(port: u16, within: Duration) {
    let started = Instant::now();
    let info = || node_command(port, "INFO", vec!["replication".into()]);
    let target: u64 = wait_for(within, "the master's replication offset", || async {
        info()
            .await
            .lines()
            .find_map(|l| l.strip_prefix("master_repl_offset:"))
            .and_then(|v| v.trim().parse().ok())
    })
    .await;
    let what = format!("the replicas of {port} to catch up");
    eventually(within.saturating_sub(started.elapsed()), &what, || async {
        // slaveN:ip=...,port=...,state=online,offset=N,lag=...
        let replicas: Vec<Option<u64>> = info()
            .await
            .lines()
            .filter(|l| l.starts_with("slave") && l.contains("offset="))
            .map(|l| {
                l.split(',')
                    .find_map(|kv| kv.strip_prefix("offset="))
                    .and_then(|v| v.parse().ok())
            })
            .collect();
        !replicas.is_empty() && replicas.iter().all(|r| r.is_some_and(|r| r >= target))
    })
    .await;
}

/// Polls `check` until it returns `Some`, and returns what it holds; panics
/// with `what` once `within` has passed.
pub async fn wait_for<T, F, Fut>(within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            started.elapsed() < within,
            "timed out after {within:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Polls `check` until it returns true; panics with `what` once `within` has passed.
pub async fn eventually<F, Fut>(within: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    wait_for(within, what, || {
        let holds = check();
        async move { holds.await.then_some(()) }
    })
    .await
}
