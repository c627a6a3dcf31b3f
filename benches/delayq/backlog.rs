//! Scenario 3: draining 100,000 due elements scattered through 1,000,000
//! pending ones, against Redisson's transfer on a copy of the same data.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, QueueKeys, StringCodec};
use tokio::time::Instant;

use crate::admin::Admin;
use crate::RedisServer;

pub const PENDING: i64 = 1_000_000;
pub const DUE: i64 = 100_000;
const BASELINE_WINDOW: Duration = Duration::from_secs(60);

pub struct Backlog {
    pub rate: f64,
    pub seconds: f64,
    pub longest_script_us: u64,
    pub reader_checks: u64,
    pub reader_violations: u64,
    pub baseline_rate: f64,
    pub baseline_moved: i64,
    pub baseline_longest_script_us: u64,
}

async fn load(admin: &Admin, keys: &QueueKeys, soon: i64, later: i64) {
    let sha = admin.script_load(include_str!("load_backlog.lua")).await;
    let step = 100_000;
    for first in (0..PENDING).step_by(step as usize) {
        admin
            .cmd(
                "EVALSHA",
                vec![
                    sha.as_str().into(),
                    2.into(),
                    keys.timeout().into(),
                    keys.pending().into(),
                    first.into(),
                    (first + step).into(),
                    soon.into(),
                    later.into(),
                    PENDING.into(),
                ],
            )
            .await;
    }
}

/// Pending-list length, timeout-set size and destination length in one atomic read.
async fn counts(admin: &Admin, keys: &QueueKeys) -> (i64, i64, i64) {
    let script = "return {redis.call('llen', KEYS[1]), redis.call('zcard', KEYS[2]), redis.call('llen', KEYS[3])}";
    let value = admin
        .cmd(
            "EVAL",
            vec![
                script.into(),
                3.into(),
                keys.pending().into(),
                keys.timeout().into(),
                keys.destination().into(),
            ],
        )
        .await;
    match value {
        Value::Array(v) => (v[0].as_i64().unwrap(), v[1].as_i64().unwrap(), v[2].as_i64().unwrap()),
        other => panic!("counts: {other:?}"),
    }
}

/// delayq's runs on copies of the data; the median is reported.
const RUNS: usize = 3;

/// One drain by delayq of the queue `name`, with a Java-like reader checking
/// the queue between scripts: (seconds, reader checks, wrong readings).
async fn drain_once(redis: &RedisServer, admin: &Admin, name: &str) -> (f64, u64, u64) {
    let keys = QueueKeys::new(name).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let (checks, violations) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let reader = {
        let (done, checks, violations, keys) = (done.clone(), checks.clone(), violations.clone(), keys.clone());
        let admin = Admin::connect(&redis.url()).await;
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                let (pending, scheduled, delivered) = counts(&admin, &keys).await;
                checks.fetch_add(1, Ordering::Relaxed);
                if pending != scheduled || pending + delivered != PENDING {
                    violations.fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
    };
    let started = Instant::now();
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let _queue = client.delayed_queue(name, StringCodec).unwrap();
    loop {
        let (_, _, delivered) = counts(admin, &keys).await;
        if delivered >= DUE {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "delayq did not drain the backlog"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    reader.await.unwrap();
    client.shutdown().await;
    (
        seconds,
        checks.load(Ordering::Relaxed),
        violations.load(Ordering::Relaxed),
    )
}

pub async fn run(redis: &RedisServer) -> Backlog {
    let admin = Admin::connect(&redis.url()).await;
    let source = QueueKeys::new("backlog").unwrap();
    let theirs = QueueKeys::new("backlog-redisson").unwrap();
    let now = crate::measure::now_ms_f64() as i64;
    eprintln!("  loading {PENDING} pending elements ({DUE} due)...");
    load(&admin, &source, now - 1_000, now + 3_600_000).await;
    // Every run, Redisson's included, works on an exact copy.
    let names: Vec<String> = (0..RUNS).map(|i| format!("backlog-{i}")).collect();
    let copies = names.iter().map(|n| QueueKeys::new(n).unwrap()).chain([theirs.clone()]);
    for copy in copies {
        for (from, to) in [(source.timeout(), copy.timeout()), (source.pending(), copy.pending())] {
            admin.cmd("COPY", vec![from.into(), to.into()]).await;
        }
    }
    admin
        .cmd("DEL", vec![source.timeout().into(), source.pending().into()])
        .await;
    admin.config_set("slowlog-log-slower-than", "1000").await;
    admin.config_set("slowlog-max-len", "100000").await;

    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
    let mut runs = Vec::new();
    for name in &names {
        runs.push(drain_once(redis, &admin, name).await);
        // Free the memory of a finished copy before the next run.
        let keys = QueueKeys::new(name).unwrap();
        admin
            .cmd(
                "DEL",
                vec![keys.timeout().into(), keys.pending().into(), keys.destination().into()],
            )
            .await;
    }
    let longest_script_us = admin.slowest("evalsha").await.max(admin.slowest("eval").await);
    let mut seconds: Vec<f64> = runs.iter().map(|r| r.0).collect();
    seconds.sort_by(|a, b| a.total_cmp(b));
    let median = seconds[seconds.len() / 2];
    eprintln!("  delayq drains: {seconds:.2?} s");

    // Redisson's transfer on its copy, for at most a minute.
    eprintln!(
        "  Redisson's transfer on the copy (up to {}s)...",
        BASELINE_WINDOW.as_secs()
    );
    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
    let sha = admin.script_load(crate::redisson::SCRIPT).await;
    let started = Instant::now();
    let mut moved = 0;
    while started.elapsed() < BASELINE_WINDOW && moved < DUE {
        crate::redisson::transfer_once(&admin.client, &sha, &theirs, 100).await;
        moved = counts(&admin, &theirs).await.2;
    }
    let baseline_seconds = started.elapsed().as_secs_f64();
    let baseline_longest_script_us = admin.slowest("evalsha").await;
    Backlog {
        rate: DUE as f64 / median,
        seconds: median,
        longest_script_us,
        reader_checks: runs.iter().map(|r| r.1).sum(),
        reader_violations: runs.iter().map(|r| r.2).sum(),
        baseline_rate: moved as f64 / baseline_seconds,
        baseline_moved: moved,
        baseline_longest_script_us,
    }
}
