//! A TCP proxy between a client and a `redis-server`, both on loopback, that
//! injects the faults of a network: a request lost on its way (the command
//! never runs), a reply lost on its way back (the command ran, the client
//! never hears of it), an outage (connections refused for a while), a
//! stall (nothing gets through for a while, nothing is closed), and a black
//! hole (the open connections go silent for good).
//!
//! A fault is armed for the next request whose bytes contain a pattern (a
//! script's SHA1, a key name) and fires once. Either way the connection is
//! then cut, as a real network failure would end it, and the client's own
//! retry logic (fred resends commands whose reply it did not get) decides
//! what happens next.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

use delayq::Client;

use crate::RedisServer;

/// What to do to the request that matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Drop the request: it never reaches Redis; the connection is cut.
    LoseRequest,
    /// Pass the request on, let Redis run it, drop every reply from then on
    /// and cut the connection.
    LoseReply,
    /// As `LoseReply`, and an outage begins (see [`FaultProxy::set_outage`]).
    LoseReplyThenOutage,
    /// Hold the request (and what follows it on its connection) for a
    /// second, then pass it on: a slow network, nothing lost or cut.
    HoldRequest,
}

struct Armed {
    fault: Fault,
    pattern: Vec<u8>,
    /// Which arming this is: bytes a connection read before it never match.
    generation: u64,
}

#[derive(Default)]
struct Shared {
    armed: Mutex<Option<Armed>>,
    generations: std::sync::atomic::AtomicU64,
    fired: AtomicUsize,
    /// While set, new connections are closed at once (an outage).
    refusing: AtomicBool,
    /// Cuts every open connection.
    cut: Notify,
    /// While true, bytes are held in both directions (see `set_stalled`).
    stalled: tokio::sync::watch::Sender<bool>,
    /// Connections accepted so far, each numbered in order.
    accepted: std::sync::atomic::AtomicU64,
    /// Connections numbered below this swallow every byte (see `black_hole`).
    holed_below: std::sync::atomic::AtomicU64,
    /// While true, what follows an error reply is held back (see `slow_after_errors`).
    slow_after_errors: AtomicBool,
    /// While true, every new connection's setup is held (see `slow_connects`).
    slow_connects: AtomicBool,
}

impl Shared {
    /// Returns once no stall holds the bytes back.
    async fn unstalled(&self) {
        let mut stalled = self.stalled.subscribe();
        let _ = stalled.wait_for(|on| !on).await;
    }
}

/// The proxy; stops when dropped.
pub struct FaultProxy {
    port: u16,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `127.0.0.1:upstream`.
    pub async fn start(upstream: u16) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared::default());
        let accepting = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if accepting.refusing.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                    continue;
                };
                let number = accepting.accepted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(relay(client, server, accepting.clone(), number));
            }
        });
        FaultProxy { port, shared, task }
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A `redis://` URL through the proxy.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Arms `fault` for the next request containing `pattern` (once).
    pub fn arm(&self, fault: Fault, pattern: impl AsRef<[u8]>) {
        let generation = self.shared.generations.fetch_add(1, Ordering::SeqCst) + 1;
        *self.shared.armed.lock() = Some(Armed {
            fault,
            pattern: pattern.as_ref().to_vec(),
            generation,
        });
    }

    /// How many armed faults have fired.
    pub fn fired(&self) -> usize {
        self.shared.fired.load(Ordering::SeqCst)
    }

    /// Starts or ends a stall: while on, connections stay open but nothing
    /// gets through either way; what was sent meanwhile arrives when it
    /// ends, as after a network partition that TCP outlived (a half-open
    /// connection, seen from the client).
    pub fn set_stalled(&self, on: bool) {
        self.shared.stalled.send_replace(on);
    }

    /// Every connection open now goes silent for good: what either side
    /// sends is dropped, and nothing is closed, as when a NAT or a load
    /// balancer forgets a flow. Connections made later work.
    pub fn black_hole(&self) {
        let accepted = self.shared.accepted.load(Ordering::SeqCst);
        self.shared.holed_below.store(accepted, Ordering::SeqCst);
    }

    /// While on, a reply chunk that starts with an error reply is held
    /// 300 ms, then passed on in two parts: the error line, then, 300 ms
    /// later, what followed it (the replies of the commands pipelined behind
    /// the failed one).
    pub fn slow_after_errors(&self, on: bool) {
        self.shared.slow_after_errors.store(on, Ordering::SeqCst);
    }

    /// While on, every connection opened is slow to set up: its client's
    /// `CLIENT ID` (which fred sends once per connection, as it connects) is
    /// held a second, as on a link where a connection takes that long to
    /// open. Connections already open are not slowed.
    pub fn slow_connects(&self, on: bool) {
        self.shared.slow_connects.store(on, Ordering::SeqCst);
    }

    /// Starts or ends an outage: while on, every open connection is cut and
    /// new ones are closed as soon as they are accepted.
    pub fn set_outage(&self, on: bool) {
        self.shared.refusing.store(on, Ordering::SeqCst);
        if on {
            self.shared.cut.notify_waiters();
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
        self.shared.cut.notify_waiters();
    }
}

/// Relays one connection until either side closes, a fault cuts it, or an
/// outage begins.
async fn relay(mut client: TcpStream, mut server: TcpStream, shared: Arc<Shared>, number: u64) {
    let holed = || number < shared.holed_below.load(Ordering::SeqCst);
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_read, mut client_write) = client.split();
    let (mut server_read, mut server_write) = server.split();
    let replies_lost = AtomicBool::new(false);
    let upstream = async {
        let mut buf = vec![0u8; 64 * 1024];
        // The tail of the previous read, so a pattern split across reads
        // matches, from reads made since the fault was armed only.
        let mut carry: Vec<u8> = Vec::new();
        let mut carry_generation = 0;
        loop {
            let n = match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let chunk = &buf[..n];
            let mut seen = std::mem::take(&mut carry);
            seen.extend_from_slice(chunk);
            let fault = {
                let mut armed = shared.armed.lock();
                let generation = armed.as_ref().map_or(0, |a| a.generation);
                if generation != carry_generation {
                    // Armed since the last read: what came before is not looked at.
                    seen.drain(..seen.len() - n);
                    carry_generation = generation;
                }
                match armed.as_ref() {
                    Some(a) if contains(&seen, &a.pattern) => armed.take().map(|a| a.fault),
                    _ => None,
                }
            };
            let keep = seen.len().min(256);
            carry = seen[seen.len() - keep..].to_vec();
            if shared.slow_connects.load(Ordering::SeqCst) && contains(chunk, CLIENT_ID) {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            match fault {
                Some(Fault::LoseRequest) => {
                    shared.fired.fetch_add(1, Ordering::SeqCst);
                    return;
                }
                Some(Fault::HoldRequest) => {
                    shared.fired.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    if server_write.write_all(chunk).await.is_err() {
                        return;
                    }
                }
                Some(fault @ (Fault::LoseReply | Fault::LoseReplyThenOutage)) => {
                    if fault == Fault::LoseReplyThenOutage {
                        shared.refusing.store(true, Ordering::SeqCst);
                    }
                    // Replies are dropped from before the request leaves, so
                    // its reply cannot slip through.
                    replies_lost.store(true, Ordering::SeqCst);
                    shared.fired.fetch_add(1, Ordering::SeqCst);
                    if server_write.write_all(chunk).await.is_err() {
                        return;
                    }
                    // Let Redis run it (and anything pipelined behind it), then cut.
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    if fault == Fault::LoseReplyThenOutage {
                        shared.cut.notify_waiters();
                    }
                    return;
                }
                None if holed() => {}
                None => {
                    shared.unstalled().await;
                    if server_write.write_all(chunk).await.is_err() {
                        return;
                    }
                }
            }
        }
    };
    let downstream = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match server_read.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if replies_lost.load(Ordering::SeqCst) || holed() {
                continue;
            }
            shared.unstalled().await;
            let mut chunk = &buf[..n];
            if shared.slow_after_errors.load(Ordering::SeqCst)
                && chunk.first() == Some(&b'-')
                && let Some(end) = chunk.windows(2).position(|w| w == b"\r\n")
            {
                tokio::time::sleep(Duration::from_millis(300)).await;
                if client_write.write_all(&chunk[..end + 2]).await.is_err() {
                    return;
                }
                chunk = &chunk[end + 2..];
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            if client_write.write_all(chunk).await.is_err() {
                return;
            }
        }
    };
    // Whichever ends first (a side closed, a fault fired, an outage began)
    // ends the relay, and dropping both sockets cuts the connection.
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
        _ = shared.cut.notified() => {}
    }
}

/// `CLIENT ID` as RESP sends it.
const CLIENT_ID: &[u8] = b"$6\r\nCLIENT\r\n$2\r\nID\r\n";

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// A server, a fault proxy in front of it, and a delayq client through the
/// proxy (test-friendly settings, as [`RedisServer::client`]).
pub async fn behind_proxy() -> (RedisServer, FaultProxy, Client) {
    let redis = RedisServer::start().await;
    let proxy = FaultProxy::start(redis.port()).await;
    let client = Client::builder()
        .url(proxy.url())
        .blocking_timeout(Duration::from_secs(1))
        .build()
        .await
        .expect("connect through the proxy");
    (redis, proxy, client)
}

/// A client through the proxy that never resends: a lost reply is final.
pub async fn without_resends(proxy: &FaultProxy) -> Client {
    Client::builder()
        .url(proxy.url())
        .customize(|b| {
            b.with_connection_config(|c| c.max_command_attempts = 1);
        })
        .build()
        .await
        .expect("connect through the proxy")
}
