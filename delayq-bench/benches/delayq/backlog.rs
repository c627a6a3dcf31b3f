//! Scenario 3: draining 100,000 due elements scattered through 1,000,000
//! pending ones, against Redisson's transfer on a copy of the same data.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, QueueKeys, StringCodec};
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
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
    load_sized(admin, keys, soon, later, PENDING, 16).await
}

/// `total` elements with payloads of `size` bytes, a tenth of them (spread
/// through the list) due at `soon`, the others at `later`.
pub async fn load_sized(admin: &Admin, keys: &QueueKeys, soon: i64, later: i64, total: i64, size: i64) {
    let sha = admin.script_load(include_str!("load_backlog.lua")).await;
    // About 100 MB a script at most.
    let step = (100_000_000 / size).clamp(1_000, 100_000);
    for first in (0..total).step_by(step as usize) {
        admin
            .cmd(
                "EVALSHA",
                vec![
                    sha.as_str().into(),
                    2.into(),
                    keys.timeout().into(),
                    keys.pending().into(),
                    first.into(),
                    (first + step).min(total).into(),
                    soon.into(),
                    later.into(),
                    total.into(),
                    size.into(),
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

/// The large-payload drains: (payload bytes, pending elements), a tenth due.
pub const LARGE: [(i64, i64); 2] = [(1_024, 200_000), (10_240, 50_000)];

/// How long a large-payload drain may take before it is cut off.
const LARGE_LIMIT: Duration = Duration::from_secs(60);

/// A drain of a backlog of large payloads by several clients at once.
pub struct LargeBacklog {
    pub pending: i64,
    pub due: i64,
    pub clients: usize,
    /// Delivered within [`LARGE_LIMIT`] (all of `due` unless cut off).
    pub moved: i64,
    pub seconds: f64,
    pub longest_script_us: u64,
    /// Transfer and sweep scripts run (`INFO commandstats`, EVALSHA).
    pub scripts: u64,
    /// Most `delayq_sweep*` keys (sweep leases, or sets before) seen at once.
    pub sweep_keys_most: u64,
    /// Largest growth of `used_memory` over the loaded data, sampled every 10 ms.
    pub extra_memory_bytes: i64,
    pub reader_checks: u64,
    pub reader_violations: u64,
}

/// `INFO` `field` (a number) of a section.
async fn info_number(admin: &Admin, section: &str, field: &str) -> i64 {
    let text = admin.info(section).await;
    text.lines()
        .find_map(|l| l.strip_prefix(field).and_then(|r| r.strip_prefix(':')))
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.split('=').next_back())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// `pending` elements with `size`-byte payloads, a tenth due and spread
/// through the list, drained by `clients` clients at once (cut off after 60 s).
pub async fn run_large(redis: &RedisServer, size: i64, pending: i64, clients: usize) -> LargeBacklog {
    let admin = Admin::connect(&redis.url()).await;
    let keys = QueueKeys::new(&format!("backlog-{size}")).unwrap();
    let now = crate::measure::now_ms_f64() as i64;
    eprintln!(
        "  loading {pending} pending elements of {size} bytes ({} due)...",
        pending / 10
    );
    load_sized(&admin, &keys, now - 1_000, now + 3_600_000, pending, size).await;
    let (_, due, _) = {
        let script = "return {0, redis.call('zcount', KEYS[1], '-inf', ARGV[1]), 0}";
        match admin
            .cmd("EVAL", vec![script.into(), 1.into(), keys.timeout().into(), now.into()])
            .await
        {
            Value::Array(v) => (0, v[1].as_i64().unwrap(), 0),
            other => panic!("{other:?}"),
        }
    };
    admin.config_set("slowlog-log-slower-than", "1000").await;
    admin.config_set("slowlog-max-len", "100000").await;
    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
    admin.cmd("CONFIG", vec!["RESETSTAT".into()]).await;
    let loaded_memory = info_number(&admin, "memory", "used_memory").await;

    let done = Arc::new(AtomicBool::new(false));
    let stats: Arc<[AtomicU64; 4]> = Arc::new(Default::default()); // checks, violations, sweep keys, memory
    let reader = {
        let (done, stats, keys) = (done.clone(), stats.clone(), keys.clone());
        let admin = Admin::connect(&redis.url()).await;
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                let (left, scheduled, delivered) = counts(&admin, &keys).await;
                stats[0].fetch_add(1, Ordering::Relaxed);
                if left != scheduled || left + delivered != pending {
                    stats[1].fetch_add(1, Ordering::Relaxed);
                }
                if let Value::Array(found) = admin.cmd("KEYS", vec!["delayq_sweep*".into()]).await {
                    stats[2].fetch_max(found.len() as u64, Ordering::Relaxed);
                }
                let used = info_number(&admin, "memory", "used_memory").await;
                stats[3].fetch_max(used.max(0) as u64, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
    };
    let started = Instant::now();
    let mut running = Vec::new();
    for _ in 0..clients {
        let client = Client::builder().url(redis.url()).build().await.unwrap();
        let queue = client.delayed_queue(keys.destination(), StringCodec).unwrap();
        running.push((client, queue));
    }
    let moved = loop {
        let (_, _, delivered) = counts(&admin, &keys).await;
        if delivered >= due || started.elapsed() >= LARGE_LIMIT {
            break delivered;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let seconds = started.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    reader.await.unwrap();
    for (client, _) in running {
        client.shutdown().await;
    }
    let longest_script_us = admin.slowest("evalsha").await.max(admin.slowest("eval").await);
    let scripts = info_number(&admin, "commandstats", "cmdstat_evalsha").await as u64;
    admin.cmd("FLUSHALL", vec![]).await;
    LargeBacklog {
        pending,
        due,
        clients,
        moved,
        seconds,
        longest_script_us,
        scripts,
        sweep_keys_most: stats[2].load(Ordering::Relaxed),
        extra_memory_bytes: stats[3].load(Ordering::Relaxed) as i64 - loaded_memory,
        reader_checks: stats[0].load(Ordering::Relaxed),
        reader_violations: stats[1].load(Ordering::Relaxed),
    }
}

/// Scenario 3. Backlog drain: 100,000 due of 1,000,000 pending, against Redisson's transfer.
pub struct BacklogDrain;

impl Scenario for BacklogDrain {
    fn name(&self) -> &'static str {
        "backlog"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("3. backlog drain (100,000 due of 1,000,000 pending)...");
            let redis = RedisServer::start().await;
            let b = run(&redis).await;
            let ratio = b.rate / b.baseline_rate;
            rows.push(
                Row::new("3. backlog drain", "elements/s (100,000 due of 1,000,000)")
                    .values(
                        format!("{} ({:.1} s, median of 3)", rate(b.rate), b.seconds),
                        format!(
                            "{} ({} in 60 s, Redisson's transfer)",
                            rate(b.baseline_rate),
                            thousands(b.baseline_moved as u64)
                        ),
                    )
                    .ratio(ratio)
                    .target("≥ 50,000/s and ≥ 100×", b.rate >= 50_000.0 && ratio >= 100.0),
            );
            rows.push(
                Row::new("3. backlog drain", "longest single script")
                    .values(
                        format!("{:.1} ms", b.longest_script_us as f64 / 1000.0),
                        format!("{:.1} ms", b.baseline_longest_script_us as f64 / 1000.0),
                    )
                    .target("≤ 50 ms", b.longest_script_us <= 50_000),
            );
            rows.push(
                Row::new(
                    "3. backlog drain",
                    "reader checks between scripts (pending = timeout set, nothing lost)",
                )
                .values(
                    format!("{} checks, {} wrong", thousands(b.reader_checks), b.reader_violations),
                    "—".into(),
                )
                .target("0 wrong", b.reader_violations == 0),
            );
            rows
        })
    }
}

/// Scenario 3. Backlog drains of 1 KB and 10 KB payloads (`--only large`, or with `backlog`).
pub struct LargePayloadDrains;

impl Scenario for LargePayloadDrains {
    fn name(&self) -> &'static str {
        "large"
    }

    fn selected_by(&self, name: &str) -> bool {
        name == "large" || name == "backlog"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            for (size, pending) in LARGE {
                let kb = size / 1024;
                eprintln!(
                    "3. backlog drain, {kb} KB payloads ({} due of {pending} pending, 3 clients)...",
                    pending / 10
                );
                let redis = RedisServer::start().await;
                let b = run_large(&redis, size, pending, 3).await;
                let scenario = format!("3. backlog drain, {kb} KB payloads");
                rows.push(
                    Row::new(
                        &scenario,
                        &format!(
                            "elements/s ({} due of {}, {} clients)",
                            thousands(b.due as u64),
                            thousands(b.pending as u64),
                            b.clients
                        ),
                    )
                    .values(
                        format!(
                            "{} ({} in {:.1} s, {} scripts)",
                            rate(b.moved as f64 / b.seconds),
                            thousands(b.moved as u64),
                            b.seconds,
                            thousands(b.scripts)
                        ),
                        "—".into(),
                    )
                    .target("all due moved", b.moved >= b.due),
                );
                rows.push(
                    Row::new(&scenario, "longest single script")
                        .values(format!("{:.1} ms", b.longest_script_us as f64 / 1000.0), "—".into())
                        .target("≤ 50 ms", b.longest_script_us <= 50_000),
                );
                rows.push(
                    Row::new(&scenario, "sweep keys at once / memory over the data at peak")
                        .values(
                            format!(
                                "{} / {:.1} MB",
                                b.sweep_keys_most,
                                b.extra_memory_bytes as f64 / 1_000_000.0
                            ),
                            "—".into(),
                        )
                        .target("≤ 1 sweep key", b.sweep_keys_most <= 1),
                );
                rows.push(
                    Row::new(&scenario, "reader checks between scripts")
                        .values(
                            format!("{} checks, {} wrong", thousands(b.reader_checks), b.reader_violations),
                            "—".into(),
                        )
                        .target("0 wrong", b.reader_violations == 0),
                );
            }
            rows
        })
    }
}
