//! `MONITOR`: every command the server runs, those scripts run included.

use std::time::Duration;

use delayq::fred::prelude::*;
use delayq::fred::types::{CustomCommand, Value};

use crate::{eventually, RedisServer};

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
