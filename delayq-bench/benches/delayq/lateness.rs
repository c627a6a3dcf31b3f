//! Scenario 2: delivery lateness at 500, 2,000 and 10,000 offers/s for 10 s,
//! delays spread over 1–5 s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use delayq::{Client, LongCodec};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::admin::Admin;
use crate::measure::{now_ms_f64, percentiles, CpuWindow};
use crate::report::{thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

/// Offers per second of each run (500, 2,000 and 10,000, or the list in
/// `DELAYQ_BENCH_RATES`, e.g. `2000,10000`); every run offers for [`SECONDS`].
pub fn rates() -> Vec<usize> {
    std::env::var("DELAYQ_BENCH_RATES")
        .ok()
        .map(|list| list.split(',').filter_map(|r| r.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![500, 2_000, 10_000])
}
const SECONDS: usize = 10;
const MAX_DELAY_MS: u64 = 5_000;
/// Tasks calling `take()`: enough that taking never holds deliveries back at
/// 10,000/s (with 8, the destination list grew to 50,000 values at 10,000/s
/// behind either transfer: this measured the takes, not the transfer).
const CONSUMERS: usize = 32;

pub struct Lateness {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub cpu_ours: f64,
    pub cpu_redis: f64,
    /// CPU seconds (this process + Redis) over the run, per 1,000 delivered.
    pub cpu_ms_per_1000: f64,
    pub script_runs: u64,
    /// Sweeps started (delayq only).
    pub sweeps: u64,
    /// Time Redis spent in scripts (offers and transfers) per 1,000
    /// delivered, as `INFO commandstats` counts it (ms).
    pub script_ms_per_1000: f64,
    /// The commands scripts spent most time in, with ms per 1,000 delivered.
    pub in_scripts: Vec<(String, f64)>,
    pub elements: usize,
}

/// Which transfer moves the elements.
#[derive(Clone, Copy, PartialEq)]
pub enum Transfer {
    Delayq,
    Redisson,
}

pub async fn run(redis: &RedisServer, transfer: Transfer, rate: usize) -> Lateness {
    let elements = rate * SECONDS;
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let name = "lateness";
    let stop = CancellationToken::new();
    let redisson_runs = Arc::new(AtomicU64::new(0));
    let queue = match transfer {
        Transfer::Delayq => client.delayed_queue(name, LongCodec).unwrap(),
        Transfer::Redisson => {
            let admin = Admin::connect(&redis.url()).await;
            let sha = admin.script_load(crate::redisson::SCRIPT).await;
            let q = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
            tokio::spawn(crate::redisson::run_task(
                redis.url(),
                sha,
                q.keys().clone(),
                stop.clone(),
                redisson_runs.clone(),
            ));
            q
        }
    };
    tokio::time::sleep(Duration::from_millis(300)).await; // subscriptions settle
    let cpu = CpuWindow::start(redis.pid());
    let runs_before = client.stats().transfer_runs;
    let sweeps_before = client.stats().sweeps;
    let admin = Admin::connect(&redis.url()).await;
    admin.cmd("CONFIG", vec!["RESETSTAT".into()]).await;
    let lateness = Arc::new(Mutex::new(Vec::with_capacity(elements)));
    let consumers: Vec<_> = (0..CONSUMERS)
        .map(|_| {
            let dest = queue.destination();
            let lateness = lateness.clone();
            tokio::spawn(async move {
                while lateness.lock().len() < elements {
                    if let Ok(Some(due)) = dest.take_timeout(Duration::from_millis(200)).await {
                        lateness.lock().push(now_ms_f64() - due as f64);
                    }
                }
            })
        })
        .collect();
    // `rate` offers a second, in ticks of 5 ms, each its own offer. Each is
    // offered for an exact due ms (the value it carries), so lateness is
    // measured from the element's own score.
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    let per_tick = rate / 200;
    for _ in 0..elements / per_tick {
        tick.tick().await;
        let now = now_ms_f64() as i64;
        let offers = (0..per_tick).map(|_| {
            let due = now + fastrand::i64(1..=MAX_DELAY_MS as i64);
            let queue = queue.clone();
            async move {
                let at = UNIX_EPOCH + Duration::from_millis(due as u64);
                match queue.offer_at(&due, at).await {
                    // Stalled past its due ms before offering: due now, later than it says.
                    Err(delayq::Error::InvalidDelay(_)) => queue.offer(&due, Duration::ZERO).await.unwrap(),
                    other => other.unwrap(),
                }
            }
        });
        futures_util::future::join_all(offers).await;
    }
    for consumer in consumers {
        tokio::time::timeout(Duration::from_secs(60), consumer)
            .await
            .expect("all elements arrive")
            .unwrap();
    }
    let (cpu_ours, cpu_redis) = cpu.stop();
    let cpu_ms_per_1000 = cpu.seconds_used() * 1000.0 / elements as f64 * 1000.0;
    let per_1000 = |usec: u64| usec as f64 / 1000.0 / elements as f64 * 1000.0;
    let times = admin.command_times().await;
    let script_ms_per_1000 = per_1000(admin.command_usec("evalsha").await);
    // What scripts spend their time in (the commands they call are counted
    // apart; evalsha's own time includes them, client commands are left out).
    let in_scripts = times
        .into_iter()
        .filter(|(command, _)| {
            [
                "lrem",
                "lpos",
                "zmscore",
                "lrange",
                "zrangebyscore",
                "lset",
                "rpush",
                "zrem",
                "zadd",
            ]
            .contains(&command.as_str())
        })
        .take(4)
        .map(|(command, usec)| (command, per_1000(usec)))
        .collect();
    stop.cancel();
    let script_runs = match transfer {
        Transfer::Delayq => client.stats().transfer_runs - runs_before,
        Transfer::Redisson => redisson_runs.load(Ordering::Relaxed),
    };
    let sweeps = client.stats().sweeps - sweeps_before;
    client.shutdown().await;
    let (p50, p99, max) = percentiles(std::mem::take(&mut *lateness.lock()));
    Lateness {
        p50,
        p99,
        max,
        cpu_ours,
        cpu_redis,
        cpu_ms_per_1000,
        script_runs,
        sweeps,
        script_ms_per_1000,
        in_scripts,
        elements,
    }
}

/// Scenario 2. Delivery lateness at each rate, delayq against Redisson's scheduling, and where the lateness
/// goes.
pub struct DeliveryLateness;

impl Scenario for DeliveryLateness {
    fn name(&self) -> &'static str {
        "lateness"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            for rate in rates() {
                eprintln!(
                    "2. delivery lateness at {}/s for 10 s, delayq then Redisson's scheduling...",
                    thousands(rate as u64)
                );
                let redis = RedisServer::start().await;
                let ours = run(&redis, Transfer::Delayq, rate).await;
                let redis = RedisServer::start().await;
                let theirs = run(&redis, Transfer::Redisson, rate).await;
                rows.extend(rows_at(rate, &ours, &theirs));
            }
            eprintln!("2. where the lateness goes: timers, a transfer script, a push reaching a take...");
            let redis = RedisServer::start().await;
            let parts = crate::lateness_parts::run(&redis).await;
            let ms = |(p50, p99): (f64, f64)| format!("{p50:.2} / {p99:.2} ms");
            for (metric, value, note) in [
                (
                    "timer wake-up after its instant: precise timer (condvar, own thread)",
                    parts.precise_sleep,
                    "what delayq uses for the last 3 ms",
                ),
                (
                    "timer wake-up after its instant: tokio sleep",
                    parts.tokio_sleep,
                    "the wheel alone, before",
                ),
                (
                    "one transfer script moving one element, round trip",
                    parts.transfer_script,
                    "transfer_now()",
                ),
                (
                    "a pushed value reaching a waiting take()",
                    parts.push_to_take,
                    "RPUSH from another client",
                ),
            ] {
                rows.push(
                    Row::new("2. lateness, its parts (p50 / p99)", metric)
                        .values(ms(value), "—".into())
                        .note(note),
                );
            }
            rows
        })
    }
}

/// Scenario 2's rows for one rate; the targets hold at 2,000/s.
fn rows_at(rate: usize, ours: &Lateness, theirs: &Lateness) -> Vec<Row> {
    let scenario = format!("2. lateness, {}/s", thousands(rate as u64));
    let ms = |l: &Lateness| format!("{:.1} / {:.1} / {:.1} ms", l.p50, l.p99, l.max);
    let targeted = rate == 2_000;
    let per_element = |l: &Lateness| l.script_runs as f64 / l.elements as f64;
    let mut latency = Row::new(&scenario, "lateness p50 / p99 / max")
        .values(ms(ours), format!("{} (Redisson's scheduling, emulated)", ms(theirs)))
        .ratio(ours.p99 / theirs.p99);
    let mut scripts = Row::new(&scenario, "transfer scripts per delivered element")
        .values(
            format!(
                "{:.2} ({}; {} sweeps)",
                per_element(ours),
                thousands(ours.script_runs),
                ours.sweeps
            ),
            format!("{:.2} ({})", per_element(theirs), thousands(theirs.script_runs)),
        )
        .ratio(per_element(ours) / per_element(theirs));
    let mut cpu = Row::new(&scenario, "CPU: bench process (delayq) / redis-server")
        .values(
            format!("{:.0}% / {:.0}%", ours.cpu_ours, ours.cpu_redis),
            format!("{:.0}% / {:.0}%", theirs.cpu_ours, theirs.cpu_redis),
        )
        .note("% of one core, whole run");
    if targeted {
        latency = latency.target("p99 ≤ 1.5 ms, max ≤ 5 ms", ours.p99 <= 1.5 && ours.max <= 5.0);
        scripts = scripts.target("≤ 0.6", per_element(ours) <= 0.6);
        cpu = cpu.target("process ≤ 20%", ours.cpu_ours <= 20.0);
    }
    let per_1000 = Row::new(&scenario, "CPU per 1,000 delivered (process + Redis)")
        .values(
            format!("{:.0} ms", ours.cpu_ms_per_1000),
            format!("{:.0} ms", theirs.cpu_ms_per_1000),
        )
        .ratio(ours.cpu_ms_per_1000 / theirs.cpu_ms_per_1000);
    let redis_time = Row::new(&scenario, "Redis time in scripts per 1,000 delivered")
        .values(
            format!("{:.0} ms", ours.script_ms_per_1000),
            format!("{:.0} ms", theirs.script_ms_per_1000),
        )
        .ratio(ours.script_ms_per_1000 / theirs.script_ms_per_1000)
        .note("offers and transfers, INFO commandstats");
    let list = |l: &Lateness| {
        l.in_scripts
            .iter()
            .map(|(command, ms)| format!("{command} {ms:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let by_command = Row::new(&scenario, "of which, per 1,000 delivered (ms)")
        .values(list(ours), list(theirs))
        .note("the costliest commands scripts call");
    vec![latency, scripts, cpu, per_1000, redis_time, by_command]
}
