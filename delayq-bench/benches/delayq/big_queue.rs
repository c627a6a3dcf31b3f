//! Scenario 11: one queue of 10,000,000 pending elements — offering them,
//! `status`, the first page `delayq inspect` shows, and the drain of the
//! tenth of them that is due, spread through the whole pending list.

use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, LongCodec};
use tokio::time::Instant;

use crate::admin::Admin;
use crate::measure::median;
use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

pub const PENDING: usize = 10_000_000;
/// Elements per `offer_all` call.
const BATCH: usize = 100_000;
/// How long the drain of the due tenth may run before it is cut off.
const DRAIN_FOR: Duration = Duration::from_secs(120);

pub struct BigQueue {
    /// Elements offered per second by `offer_all`, `BATCH` at a time.
    pub offer_rate: f64,
    pub offer_seconds: f64,
    /// Redis `used_memory` growth per pending element (both keys and overhead).
    pub bytes_per_element: f64,
    /// Medians of 5, ms.
    pub status_ms: f64,
    pub first_page_ms: f64,
    /// `delayq inspect QUEUE --limit 50`, the whole process (connect included).
    pub cli_inspect_ms: f64,
    pub due: usize,
    /// Moved to the destination by the drain (all `due`, unless cut off).
    pub drained: usize,
    pub drain_rate: f64,
    pub drain_seconds: f64,
    pub longest_script_us: u64,
    /// What Java reads after the drain: pending list = timeout set, nothing lost.
    pub consistent: bool,
}

/// Element `i` is due now when `i × 7919 mod PENDING` falls in the first
/// tenth (spread evenly through the pending list), else in a day.
fn due_now(i: usize) -> bool {
    i * 7919 % PENDING < PENDING / 10
}

pub async fn used_memory(admin: &Admin) -> f64 {
    let info = admin.cmd("INFO", vec!["memory".into()]).await;
    let text = info.as_string().unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(f64::NAN)
}

pub async fn run(redis: &RedisServer) -> BigQueue {
    let admin = Admin::connect(&redis.url()).await;
    let name = "big";
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    // Offered without a transfer: the due tenth waits, as after an outage.
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    let memory_before = used_memory(&admin).await;
    let started = Instant::now();
    let mut due = 0;
    for first in (0..PENDING).step_by(BATCH) {
        let batch: Vec<(i64, Duration)> = (first..first + BATCH)
            .map(|i| {
                let now = due_now(i);
                due += usize::from(now);
                let delay = if now {
                    Duration::ZERO
                } else {
                    Duration::from_secs(86_400)
                };
                (i as i64, delay)
            })
            .collect();
        queue.offer_all(batch).await.unwrap();
    }
    let offer_seconds = started.elapsed().as_secs_f64();
    let bytes_per_element = (used_memory(&admin).await - memory_before) / PENDING as f64;

    let mut status_ms = Vec::new();
    let mut page_ms = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let status = queue.status().await.unwrap();
        status_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(status.pending as usize, PENDING);
        let t = Instant::now();
        let page = queue.pending_page(0, 50).await.unwrap();
        page_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(page.len(), 50);
    }
    let mut cli_ms = Vec::new();
    for _ in 0..crate::cli_binary().map_or(0, |_| 3) {
        let t = Instant::now();
        let out = tokio::process::Command::new(crate::cli_binary().expect("checked above"))
            .args(["inspect", name, "--limit", "50"])
            .env("REDIS_URL", redis.url())
            .output()
            .await
            .unwrap();
        cli_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    // The drain: a client with a transfer, until every due element is ready.
    admin.config_set("slowlog-log-slower-than", "1000").await;
    admin.config_set("slowlog-max-len", "100000").await;
    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
    let started = Instant::now();
    let drainer = Client::builder().url(redis.url()).build().await.unwrap();
    let transferring = drainer.delayed_queue(name, LongCodec).unwrap().with_transfer();
    let destination = transferring.destination();
    // Cut off after DRAIN_FOR: the rate is what was moved by then.
    while destination.len().await.unwrap() < due && started.elapsed() < DRAIN_FOR {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let drain_seconds = started.elapsed().as_secs_f64();
    // Stopped first (its run in flight finishes), so the keys are read at rest.
    drainer.shutdown().await;
    let longest_script_us = admin.slowest("evalsha").await;
    let zcard = admin.cmd("ZCARD", vec![transferring.keys().timeout().into()]).await;
    let llen = admin.cmd("LLEN", vec![transferring.keys().pending().into()]).await;
    let ready = match admin.cmd("LLEN", vec![transferring.keys().destination().into()]).await {
        Value::Integer(n) => n as usize,
        other => panic!("LLEN: {other:?}"),
    };
    let consistent =
        matches!((&zcard, &llen), (Value::Integer(z), Value::Integer(l)) if z == l && *z as usize + ready == PENDING);
    client.shutdown().await;
    BigQueue {
        offer_rate: PENDING as f64 / offer_seconds,
        offer_seconds,
        bytes_per_element,
        status_ms: median(status_ms),
        first_page_ms: median(page_ms),
        cli_inspect_ms: if cli_ms.is_empty() { f64::NAN } else { median(cli_ms) },
        due,
        drained: ready,
        drain_rate: ready as f64 / drain_seconds,
        drain_seconds,
        longest_script_us,
        consistent,
    }
}

/// Scenario 11. One queue of 10,000,000 pending elements.
pub struct TenMillionElements;

impl Scenario for TenMillionElements {
    fn name(&self) -> &'static str {
        "big"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("11. one queue of 10,000,000 pending elements...");
            let redis = RedisServer::start().await;
            let b = run(&redis).await;
            let scenario = "11. a 10,000,000-element queue";
            rows.push(
                Row::new(scenario, "offer_all, 100,000 a call: elements/s")
                    .values(format!("{} ({:.0} s)", rate(b.offer_rate), b.offer_seconds), "—".into()),
            );
            rows.push(
                Row::new(scenario, "Redis memory per pending element (8-byte payload)")
                    .values(format!("{:.0} B", b.bytes_per_element), "—".into()),
            );
            rows.push(
                Row::new(scenario, "status() / first page of 50 (pending_page): median of 5")
                    .values(format!("{:.2} ms / {:.2} ms", b.status_ms, b.first_page_ms), "—".into()),
            );
            rows.push(
                Row::new(scenario, "`delayq inspect big --limit 50` (whole process)")
                    .values(format!("{:.0} ms", b.cli_inspect_ms), "—".into()),
            );
            rows.push(
                Row::new(
                    scenario,
                    &format!(
                        "drain of the {} due (spread through the list; cut off at 120 s)",
                        thousands(b.due as u64)
                    ),
                )
                .values(
                    format!(
                        "{} ({} in {:.1} s)",
                        rate(b.drain_rate),
                        thousands(b.drained as u64),
                        b.drain_seconds
                    ),
                    "—".into(),
                )
                .target("Java's keys agree, nothing lost", b.consistent),
            );
            rows.push(
                Row::new(scenario, "longest single script during the drain")
                    .values(format!("{:.1} ms", b.longest_script_us as f64 / 1000.0), "—".into())
                    .target("≤ 50 ms", b.longest_script_us <= 50_000),
            );
            rows
        })
    }
}
