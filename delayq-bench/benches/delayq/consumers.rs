//! Scenario 12, consumers: values handled per second with a no-op handler
//! through `BlockingQueue::stream`, `ReliableQueue::stream` (each delivery
//! acked) and a `Worker`, with 1, 8 and 64 at once, against a baseline on the
//! same server in the same run (runs alternating between them; each row
//! gives the median and the range, and a target holds only when every
//! run's own ratio meets it, so one lucky run cannot).
//!
//! Baselines: `redis-benchmark LPOP -c N` for the plain stream; for the
//! reliable ones, the same three round trips per value (`BLMOVE` to the
//! staging list, `claim.lua`, `ack.lua`, by EVALSHA with the same keys and
//! arguments) from N bare sockets (`resp.rs`): redis-benchmark cannot chain
//! commands that depend on each other's replies.

use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, LongCodec, QueueKeys};
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, thousands, Row};
use crate::resp::{Conn, Reply};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

pub const CONCURRENCY: [usize; 3] = [1, 8, 64];

/// Runs of each side; the medians are compared.
const RUNS: usize = 3;

/// Longest a run may take before the benchmark gives up on it.
const RUN_LIMIT: Duration = Duration::from_secs(300);

#[derive(Clone, Copy, Debug)]
pub enum Consumer {
    BlockingStream,
    ReliableStream,
    Worker,
}

impl Consumer {
    pub const ALL: [Consumer; 3] = [Consumer::BlockingStream, Consumer::ReliableStream, Consumer::Worker];

    pub fn label(self) -> &'static str {
        match self {
            Consumer::BlockingStream => "BlockingQueue::stream",
            Consumer::ReliableStream => "ReliableQueue::stream + ack",
            Consumer::Worker => "Worker, no-op handler",
        }
    }

    /// How N consume at once, for the table.
    pub fn at_once(self, n: usize) -> String {
        match self {
            Consumer::Worker => format!("concurrency({n})"),
            _ => format!("{n} stream(s), a task each"),
        }
    }

    /// The baselines measured beside it, by name: for the `Worker`, the
    /// plain pop first (its target), then the bare reliable round trips.
    pub fn baselines(self, n: usize) -> Vec<String> {
        let lpop = format!("redis-benchmark LPOP -c {n}");
        let bare = format!("BLMOVE + claim.lua + ack.lua from {n} bare socket(s)");
        match self {
            Consumer::BlockingStream => vec![lpop],
            Consumer::ReliableStream => vec![bare],
            Consumer::Worker => vec![lpop, bare],
        }
    }

    /// Values per run, and for the plain pop beside it. A `Worker` runs
    /// 200,000 (about a second): runs of 50,000 lasted a quarter of a
    /// second, and their fixed costs and short stalls weighed four times as
    /// much. (Single runs still read up to 40% more CPU per value in this
    /// VM's slow phases, with the same scheduling slices: the same work,
    /// slower.)
    pub fn values(self) -> u64 {
        match self {
            Consumer::ReliableStream => 10_000,
            Consumer::Worker => 200_000,
            Consumer::BlockingStream => 50_000,
        }
    }

    /// Values per run of the bare reliable baseline: a round trip per step
    /// (about 3,000 values/s on one socket), so fewer.
    fn bare_values(self) -> u64 {
        self.values().min(50_000)
    }
}

/// What [`RUNS`] alternating runs measured: per run, delayq's values
/// handled per second, each baseline's (as in [`Consumer::baselines`]), and
/// for a `Worker` this process's CPU µs per value.
pub struct Runs {
    pub ours: Vec<f64>,
    pub baselines: Vec<Vec<f64>>,
    pub cpu_per_value: Vec<f64>,
}

/// The median and the range of some runs, for the table.
pub fn spread(runs: &[f64], unit: impl Fn(f64) -> String) -> String {
    let min = runs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!(
        "{} (median of {}; {}–{})",
        unit(crate::measure::median(runs.to_vec())),
        runs.len(),
        unit(min),
        unit(max)
    )
}

/// Each run's own ratio of ours to a baseline measured beside it.
pub fn ratios(ours: &[f64], baseline: &[f64]) -> Vec<f64> {
    ours.iter().zip(baseline).map(|(o, b)| o / b).collect()
}

/// Values of the Worker's warm-up run.
const WARM_UP: u64 = 20_000;

pub async fn run(redis: &RedisServer, consumer: Consumer, n: usize) -> Runs {
    let admin = Admin::connect(&redis.url()).await;
    let values = consumer.values();
    let names = consumer.baselines(n);
    let (mut ours, mut baselines) = (Vec::new(), vec![Vec::new(); names.len()]);
    let mut cpu_per_value = Vec::new();
    if matches!(consumer, Consumer::Worker) {
        // A warm-up run, not counted: the first Worker of the process pays
        // one-time costs (the heap's first pages, lazy statics, each log
        // site's first check), which are no value's. Its CPU read the
        // highest of its three runs, bench after bench.
        let name = format!("consumers-{consumer:?}-{n}-warm-up");
        fill(&admin, &name, WARM_UP).await;
        eprintln!("    warm-up run, not counted:");
        ours_once(redis, consumer, &name, n, WARM_UP).await;
    }
    for run in 0..RUNS {
        // A fresh queue per run: nothing left over from the one before.
        let name = format!("consumers-{consumer:?}-{n}-{run}");
        fill(&admin, &name, values).await;
        let (rate, cpu) = ours_once(redis, consumer, &name, n, values).await;
        ours.push(rate);
        cpu_per_value.extend(cpu);
        for (i, baseline) in names.iter().enumerate() {
            let name = format!("{name}-baseline-{i}");
            let values = if baseline.starts_with("redis-benchmark") {
                values
            } else {
                consumer.bare_values()
            };
            fill(&admin, &name, values).await;
            baselines[i].push(if baseline.starts_with("redis-benchmark") {
                let (clients, total) = (n.to_string(), values.to_string());
                crate::redis_benchmark::requests_per_second(
                    redis.port(),
                    &["-c", &clients, "-n", &total, "LPOP", &name],
                )
            } else {
                bare_reliable(redis, &admin, &name, n, values).await
            });
        }
    }
    Runs {
        ours,
        baselines,
        cpu_per_value,
    }
}

async fn fill(admin: &Admin, name: &str, values: u64) {
    for chunk in (0..values).collect::<Vec<_>>().chunks(10_000) {
        let mut args: Vec<Value> = vec![name.into()];
        args.extend(chunk.iter().map(|v| Value::from(*v as i64)));
        admin.cmd("RPUSH", args).await;
    }
}

/// Counts handled values; the one that completes the count says so, so no
/// timer wakes the process while it is measured.
#[derive(Clone)]
struct Counter {
    handled: Arc<AtomicU64>,
    done: Arc<Notify>,
    of: u64,
}

impl Counter {
    fn new(of: u64) -> Self {
        Counter {
            handled: Arc::default(),
            done: Arc::default(),
            of,
        }
    }

    fn add(&self) {
        if self.handled.fetch_add(1, Ordering::Relaxed) + 1 == self.of {
            self.done.notify_one();
        }
    }

    /// Waits for the last value; returns the rate since `started`.
    async fn rate(&self, started: Instant) -> f64 {
        tokio::time::timeout(RUN_LIMIT, self.done.notified())
            .await
            .expect("every value handled in time");
        self.of as f64 / started.elapsed().as_secs_f64()
    }
}

/// Values handled per second, and for a `Worker` this process's CPU µs per value.
async fn ours_once(redis: &RedisServer, consumer: Consumer, name: &str, n: usize, values: u64) -> (f64, Option<f64>) {
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let counter = Counter::new(values);
    let started = Instant::now();
    let mut cpu_per_value = None;
    let rate = match consumer {
        Consumer::BlockingStream => {
            let queue = client.blocking_queue(name, LongCodec).unwrap();
            for _ in 0..n {
                let (queue, counter) = (queue.clone(), counter.clone());
                tokio::spawn(async move {
                    let mut values = pin!(queue.stream());
                    while let Some(value) = values.next().await {
                        value.expect("a value");
                        counter.add();
                    }
                });
            }
            counter.rate(started).await
        }
        Consumer::ReliableStream => {
            let queue = client.reliable_queue(name, LongCodec).unwrap();
            for _ in 0..n {
                let (queue, counter) = (queue.clone(), counter.clone());
                tokio::spawn(async move {
                    let mut deliveries = pin!(queue.stream());
                    while let Some(delivery) = deliveries.next().await {
                        assert!(delivery.expect("a delivery").ack().await.expect("ack"));
                        counter.add();
                    }
                });
            }
            counter.rate(started).await
        }
        Consumer::Worker => {
            let cpu = Cpu::now(redis).await;
            // Counted as each handler runs: the acks of the last `n` values
            // are still on their way when the clock stops.
            let handler_counter = counter.clone();
            let worker = client
                .worker(name, LongCodec)
                .unwrap()
                .concurrency(n)
                .run(move |_: i64| {
                    handler_counter.add();
                    async { Ok::<(), std::convert::Infallible>(()) }
                });
            let rate = counter.rate(started).await;
            let report = worker.shutdown().await;
            assert_eq!(report.succeeded, values, "every value acked once: {report:?}");
            cpu_per_value = Some(cpu.per_value(redis, values, n).await);
            rate
        }
    };
    // Ends the streams (and their blocked reads).
    client.shutdown().await;
    (rate, cpu_per_value)
}

/// The reliable baseline: per value, BLMOVE to the staging list, then
/// delayq's claim and ack scripts, each on the consumer's own socket.
async fn bare_reliable(redis: &RedisServer, admin: &Admin, name: &str, n: usize, values: u64) -> f64 {
    let body = delayq_test_support::script_body;
    let claim = admin.script_load(&body(include_str!("../../../lua/claim.lua"))).await;
    let ack = admin.script_load(&body(include_str!("../../../lua/ack.lua"))).await;
    let keys = Arc::new(QueueKeys::new(name).unwrap());
    let mut conns = Vec::new();
    for _ in 0..n {
        conns.push(Conn::connect(redis.port()).await);
    }
    let counter = Counter::new(values);
    let started = Instant::now();
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let (keys, claim, ack, counter) = (keys.clone(), claim.clone(), ack.clone(), counter.clone());
            tokio::spawn(async move {
                let k = |key: &str| key.as_bytes().to_vec();
                let claim_keys = [
                    keys.staging(),
                    keys.leases(),
                    keys.dead_letter(),
                    keys.due(),
                    keys.counts(),
                    keys.counts_expiry(),
                    keys.staging_mark(),
                    keys.destination(),
                    keys.paused(),
                    keys.dead_reasons(),
                ]
                .map(k);
                let (dest, staging) = (k(keys.destination()), k(keys.staging()));
                loop {
                    let moved = conn.call(&[b"BLMOVE", &dest, &staging, b"LEFT", b"RIGHT", b"5"]).await;
                    let Reply::Bytes(value) = moved else { continue };
                    let id = fastrand::u64(..).to_le_bytes();
                    let mut args: Vec<&[u8]> = vec![b"EVALSHA", claim.as_bytes(), b"10"];
                    args.extend(claim_keys.iter().map(Vec::as_slice));
                    args.extend([&value[..], &id[..], b"30000", b"10", b"1000"]);
                    let Reply::Array(claimed) = conn.call(&args).await else {
                        panic!("claim answered no array")
                    };
                    let mut claimed = claimed.into_iter();
                    assert_eq!(claimed.next().unwrap().bytes(), b"ok");
                    let Some(Reply::Int(count)) = claimed.next() else {
                        panic!("claim answered no count")
                    };
                    let mut member = id.to_vec();
                    member.extend_from_slice(format!("{count:010}").as_bytes());
                    member.extend_from_slice(&value);
                    let (inflight, acked) = (keys.leases().as_bytes(), keys.acked().as_bytes());
                    let acked = conn
                        .call(&[
                            b"EVALSHA",
                            ack.as_bytes(),
                            b"2",
                            inflight,
                            acked,
                            &member,
                            b"300000",
                            b"100000",
                        ])
                        .await;
                    assert!(matches!(acked, Reply::Int(1)), "ack answered {acked:?}");
                    counter.add();
                }
            })
        })
        .collect();
    let rate = counter.rate(started).await;
    for task in tasks {
        task.abort();
    }
    rate
}

/// Deliveries held in flight for the memory row.
pub const IN_FLIGHT: usize = 100_000;

/// Redis bytes per delivery in flight: `used_memory` with [`IN_FLIGHT`]
/// values claimed by a `Worker` whose handlers wait, less `used_memory`
/// with the same values ready in the list, per delivery.
pub async fn bytes_per_delivery(redis: &RedisServer) -> f64 {
    let admin = Admin::connect(&redis.url()).await;
    let name = "consumers-in-flight";
    fill(&admin, name, IN_FLIGHT as u64).await;
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let queue = client.reliable_queue(name, LongCodec).unwrap();
    let ready = crate::big_queue::used_memory(&admin).await;
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let worker = {
        let gate = gate.clone();
        client
            .worker(name, LongCodec)
            .unwrap()
            .concurrency(IN_FLIGHT)
            .visibility_timeout(Duration::from_secs(600))
            .run(move |_: i64| {
                let gate = gate.clone();
                async move {
                    // Closed once measured: every handler then ends.
                    let _ = gate.acquire().await;
                    Ok::<(), std::convert::Infallible>(())
                }
            })
    };
    let deadline = Instant::now() + RUN_LIMIT;
    while queue.in_flight().await.unwrap() < IN_FLIGHT {
        assert!(Instant::now() < deadline, "every value claimed in time");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let in_flight = crate::big_queue::used_memory(&admin).await;
    gate.close();
    let report = worker.shutdown().await;
    assert_eq!(report.succeeded, IN_FLIGHT as u64, "{report:?}");
    client.shutdown().await;
    (in_flight - ready) / IN_FLIGHT as f64
}

/// CPU time of this process and of the Redis server, to say per value where
/// a consumer's time goes.
struct Cpu {
    own: f64,
    redis: f64,
    threads: Vec<crate::measure::ThreadTime>,
    steal: u64,
}

impl Cpu {
    async fn now(redis: &RedisServer) -> Cpu {
        let admin = Admin::connect(&redis.url()).await;
        if commandstats_wanted() {
            admin.cmd("CONFIG", vec!["RESETSTAT".into()]).await;
        }
        let text = admin.info("cpu").await;
        let field = |name: &str| -> f64 {
            text.lines()
                .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0.0)
        };
        Cpu {
            own: crate::measure::own_cpu_time().as_secs_f64(),
            redis: field("used_cpu_user") + field("used_cpu_sys"),
            threads: crate::measure::threads(),
            steal: crate::measure::steal_ticks(),
        }
    }

    /// Prints (stderr) the CPU µs each value cost this process and Redis;
    /// returns this process's.
    async fn per_value(self, redis: &RedisServer, values: u64, n: usize) -> f64 {
        // Read before the reader's own connection and INFO, which `now`
        // counts at the start (read last there) but are not the worker's.
        let own = crate::measure::own_cpu_time().as_secs_f64();
        let (threads, steal) = (crate::measure::threads(), crate::measure::steal_ticks());
        if commandstats_wanted() {
            print_commandstats(redis, values).await;
        }
        let now = Cpu::now(redis).await;
        let per = |a: f64, b: f64| (b - a) * 1e6 / values as f64;
        eprintln!(
            "    Worker concurrency({n}): CPU per value: this process {:.1} µs, Redis {:.1} µs",
            per(self.own, own),
            per(self.redis, now.redis)
        );
        eprintln!(
            "      {}; steal {} ms",
            crate::measure::threads_between(&self.threads, &threads),
            (steal - self.steal) * 10
        );
        per(self.own, own)
    }
}

/// DELAYQ_BENCH_COMMANDSTATS=1: each Worker run prints what Redis ran for
/// it (INFO commandstats), per value, to see where Redis's time goes.
fn commandstats_wanted() -> bool {
    std::env::var_os("DELAYQ_BENCH_COMMANDSTATS").is_some_and(|v| v == "1")
}

/// Prints (stderr) each command's calls and µs per handled value.
async fn print_commandstats(redis: &RedisServer, values: u64) {
    let admin = Admin::connect(&redis.url()).await;
    for (command, calls, usec) in admin.command_stats().await {
        eprintln!(
            "      {command:<20} calls per 1,000 values {:>8.1}, µs per value {:>6.2}",
            calls as f64 * 1000.0 / values as f64,
            usec as f64 / values as f64
        );
    }
}

/// Scenario 12. Streams and workers at 1, 8 and 64 at once.
pub struct Consumers;

impl Scenario for Consumers {
    fn name(&self) -> &'static str {
        "consumers"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("12. consumers: streams and workers at 1, 8, 64 at once...");
            let redis = RedisServer::start().await;
            // DELAYQ_BENCH_CONSUMERS=worker,reliablestream: only these consumers.
            let only = std::env::var("DELAYQ_BENCH_CONSUMERS")
                .unwrap_or_default()
                .to_lowercase();
            let wanted_consumer =
                |c: &Consumer| only.is_empty() || only.split(',').any(|o| o == format!("{c:?}").to_lowercase());
            for consumer in Consumer::ALL.into_iter().filter(wanted_consumer) {
                for n in CONCURRENCY {
                    let runs = run(&redis, consumer, n).await;
                    for (baseline, name) in runs.baselines.iter().zip(consumer.baselines(n)) {
                        let per_run = ratios(&runs.ours, baseline);
                        let worst = per_run.iter().copied().fold(f64::INFINITY, f64::min);
                        let row = Row::new(
                            &format!("12. consumers, {}", consumer.label()),
                            &format!(
                                "values/s, {}, {} ready{}",
                                consumer.at_once(n),
                                thousands(consumer.values()),
                                if name.starts_with("BLMOVE") && consumer.bare_values() != consumer.values() {
                                    format!(" ({} for the bare baseline)", thousands(consumer.bare_values()))
                                } else {
                                    String::new()
                                }
                            ),
                        )
                        .values(spread(&runs.ours, rate), format!("{} ({name})", spread(baseline, rate)))
                        .ratio(crate::measure::median(per_run.clone()));
                        // A worker pops and claims in batches: it must beat a
                        // plain pop on every run, not on the median.
                        let row = match (consumer, n) {
                            (Consumer::Worker, 64) if name.starts_with("redis-benchmark") => row.target(
                                &format!("≥ 1.2× LPOP -c 64 on every run (worst {worst:.2}×)"),
                                worst >= 1.2,
                            ),
                            (Consumer::Worker, 8) if name.starts_with("redis-benchmark") => row.target(
                                &format!("≥ 1.0× LPOP -c 8 on every run (worst {worst:.2}×)"),
                                worst >= 1.0,
                            ),
                            // Measured for comparison only; the targets for single takes are scenario 5's.
                            _ => row.note("measured beside take()"),
                        };
                        rows.push(row);
                    }
                    if !runs.cpu_per_value.is_empty() {
                        let most = runs.cpu_per_value.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        rows.push(
                            Row::new(
                                &format!("12. consumers, {}", consumer.label()),
                                &format!("this process's CPU per value, {}", consumer.at_once(n)),
                            )
                            .values(spread(&runs.cpu_per_value, |us| format!("{us:.2} µs")), "—".into())
                            .target(&format!("≤ 2.5 µs on every run (worst {most:.2} µs)"), most <= 2.5),
                        );
                    }
                }
            }
            let per_delivery = bytes_per_delivery(&redis).await;
            rows.push(
                Row::new(
                    "12. consumers, Worker",
                    &format!(
                        "Redis bytes per in-flight delivery ({} claimed, not acked, values of 1–5 bytes)",
                        thousands(IN_FLIGHT as u64)
                    ),
                )
                .values(format!("{per_delivery:.0} B"), "—".into())
                .note("used_memory over the same values ready in the list"),
            );
            rows
        })
    }
}
