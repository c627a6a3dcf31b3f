//! The dashboard beside a soak: served by a child process of this benchmark
//! (its own RSS and counted heap, as `delayq dashboard` serves it), with a
//! page open: the parent polls its API every 2 s, as the page's script does.

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

/// The argument that makes this benchmark's binary the dashboard's process.
pub const CHILD_FLAG: &str = "--soak-dashboard-child";

/// How often the child reports its memory.
const ROW_EVERY: Duration = Duration::from_secs(30);

/// One row the child reported: seconds since it started, RSS, heap bytes, live allocations.
#[derive(Clone, Copy)]
pub struct ChildRow {
    pub seconds: f64,
    pub rss: u64,
    pub heap: u64,
    pub allocations: u64,
}

/// In the child: serves the dashboard of `redis_url` on `127.0.0.1:port`
/// and prints a row every 30 s on stdout, until killed.
pub async fn child(redis_url: &str, port: u16) {
    let client = delayq::Client::connect(redis_url)
        .await
        .expect("the dashboard's client");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("the dashboard's port");
    let started = Instant::now();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(ROW_EVERY);
        loop {
            tick.tick().await;
            let (heap, allocations) = crate::heap::in_use();
            println!(
                "dashboard-row {:.0} {} {} {}",
                started.elapsed().as_secs_f64(),
                super::probe::rss(),
                heap,
                allocations
            );
        }
    });
    delayq_dashboard::Dashboard::new(client)
        .serve(listener)
        .await
        .expect("the dashboard serves");
}

/// The child, its rows, and the page's polling.
pub struct Beside {
    child: Child,
    pub rows: tokio::sync::watch::Receiver<Vec<ChildRow>>,
    poller: tokio::task::JoinHandle<()>,
}

impl Beside {
    pub async fn start(redis_url: &str, queue: &str) -> Beside {
        let port = delayq_test_support::redis_server::free_port();
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .args(["--bench", CHILD_FLAG, redis_url, &port.to_string()])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start the dashboard's process");
        let (send, rows) = tokio::sync::watch::channel(Vec::new());
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let fields: Vec<f64> = line
                    .strip_prefix("dashboard-row ")
                    .map(|rest| rest.split(' ').filter_map(|f| f.parse().ok()).collect())
                    .unwrap_or_default();
                if let [seconds, rss, heap, allocations] = fields[..] {
                    let row = ChildRow {
                        seconds,
                        rss: rss as u64,
                        heap: heap as u64,
                        allocations: allocations as u64,
                    };
                    println!(
                        "  dashboard process at {:>5.0} s: RSS {:.1} MB, heap {:.2} MB in {} allocations",
                        seconds,
                        mb(row.rss),
                        mb(row.heap),
                        row.allocations
                    );
                    send.send_modify(|rows| rows.push(row));
                }
            }
        });
        let queue = queue.to_owned();
        // The page opens once the dashboard listens.
        let opened = Instant::now();
        while get(port, "/api/overview?limit=1").await.is_none() && opened.elapsed() < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let poller = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(2));
            let mut failures = 0u64;
            loop {
                tick.tick().await;
                // What the overview and the queue pages poll.
                for path in [
                    "/api/overview?offset=0&limit=50&filter=&sort=name".to_owned(),
                    format!("/api/queue?name={queue}&offset=0&limit=50"),
                ] {
                    if get(port, &path).await.is_none() {
                        failures += 1;
                        if failures.is_power_of_two() {
                            eprintln!("soak: the dashboard did not answer {path} ({failures} failures so far)");
                        }
                    }
                }
            }
        });
        Beside { child, rows, poller }
    }

    pub async fn stop(mut self) {
        self.poller.abort();
        let _ = self.child.kill().await;
    }
}

pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}

/// A GET on the dashboard over a fresh connection; the body's length.
async fn get(port: u16, path: &str) -> Option<usize> {
    let request = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        let head = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.ok()?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.ok()?;
        response.starts_with(b"HTTP/1.1 200").then_some(response.len())
    };
    tokio::time::timeout(Duration::from_secs(10), request)
        .await
        .ok()
        .flatten()
}
