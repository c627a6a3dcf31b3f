//! Scenario 17: what a queue's limits cost its offers: concurrent single
//! offers and a bulk offer to a queue with a size and a payload limit
//! (never reached) against the same with no limits, runs alternated on one
//! server. Goal: ≤ 10% slower. And a Worker of 64 slots under a fleet-wide
//! concurrency limit of 64 (never passed: it measures the room check and
//! the prefetch a limit turns off) against the same with no limit.

use std::time::Duration;

use delayq::limits::Limits;
use delayq::{Client, LongCodec};
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::report::{rate, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

const OFFERS: usize = 100_000;
const IN_FLIGHT: usize = 512;
/// Runs of each side; the medians are compared.
const RUNS: usize = 5;

/// The limits measured: checked on every run, never refusing.
fn limits() -> Limits {
    Limits::none().max_size(10_000_000).max_payload(1024 * 1024)
}

/// (with limits, without): values per second, medians of alternated runs,
/// for concurrent single offers (`bulk` false) or one `offer_all`.
async fn offers(redis: &RedisServer, bulk: bool) -> (f64, f64) {
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        off.push(offers_once(redis, &format!("limits-{bulk}-off-{run}"), bulk, false).await);
        on.push(offers_once(redis, &format!("limits-{bulk}-on-{run}"), bulk, true).await);
    }
    (crate::measure::median(on), crate::measure::median(off))
}

async fn offers_once(redis: &RedisServer, name: &str, bulk: bool, limited: bool) -> f64 {
    let client = Client::builder().url(redis.url()).pool_size(4).build().await.unwrap();
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    if limited {
        queue.set_limits(&limits()).await.unwrap();
    }
    queue.offer(&0, Duration::from_secs(3600)).await.unwrap();
    let started = Instant::now();
    if bulk {
        queue
            .offer_all((0..OFFERS as i64).map(|i| (i, Duration::from_secs(3600))))
            .await
            .unwrap();
    } else {
        futures_util::stream::iter(0..OFFERS as i64)
            .for_each_concurrent(IN_FLIGHT, |i| {
                let queue = queue.clone();
                async move { queue.offer(&i, Duration::from_secs(3600)).await.unwrap() }
            })
            .await;
    }
    let rate = OFFERS as f64 / started.elapsed().as_secs_f64();
    assert_eq!(queue.len().await.unwrap(), OFFERS + 1, "every offer admitted");
    client.shutdown().await;
    rate
}

/// The Worker's slots.
const SLOTS: usize = 64;

/// One Worker row: a limit (or none) against the same workers with no
/// limit, alternated.
#[derive(Clone, Copy)]
struct WorkerRun {
    /// Values handled per run.
    values: i64,
    /// Workers (each of [`SLOTS`] slots, its own client), with the limit
    /// and without.
    workers: usize,
    baseline_workers: usize,
    /// Each handler's time (a sleep).
    busy: Duration,
    limit: u32,
}

/// (with the limit, without): values per second, medians of alternated runs.
async fn workers(redis: &RedisServer, run: WorkerRun) -> (f64, f64) {
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for i in 0..RUNS {
        off.push(worker_once(redis, &format!("limits-worker-{}-off-{i}", run.limit), run, false).await);
        on.push(worker_once(redis, &format!("limits-worker-{}-on-{i}", run.limit), run, true).await);
    }
    (crate::measure::median(on), crate::measure::median(off))
}

async fn worker_once(redis: &RedisServer, name: &str, run: WorkerRun, limited: bool) -> f64 {
    let admin = Client::builder().url(redis.url()).build().await.unwrap();
    if limited {
        let queue = admin.delayed_queue(name, LongCodec).unwrap();
        queue.set_limits(&Limits::none().concurrency(run.limit)).await.unwrap();
    }
    admin
        .blocking_queue(name, LongCodec)
        .unwrap()
        .offer_all(0..run.values)
        .await
        .unwrap();
    let handled = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0));
    let done = std::sync::Arc::new(tokio::sync::Notify::new());
    let started = Instant::now();
    let mut running = Vec::new();
    for _ in 0..if limited { run.workers } else { run.baseline_workers } {
        let client = Client::builder().url(redis.url()).build().await.unwrap();
        let worker = client.worker(name, LongCodec).unwrap().concurrency(SLOTS).run({
            let (handled, done) = (handled.clone(), done.clone());
            move |_: i64| {
                let (handled, done) = (handled.clone(), done.clone());
                async move {
                    if !run.busy.is_zero() {
                        tokio::time::sleep(run.busy).await;
                    }
                    if handled.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == run.values {
                        done.notify_one();
                    }
                    Ok::<(), std::convert::Infallible>(())
                }
            }
        });
        running.push((client, worker));
    }
    tokio::time::timeout(Duration::from_secs(120), done.notified())
        .await
        .expect("every value handled in time");
    let rate = run.values as f64 / started.elapsed().as_secs_f64();
    let mut succeeded = 0;
    for (client, worker) in running {
        succeeded += worker.shutdown().await.succeeded;
        client.shutdown().await;
    }
    assert_eq!(succeeded, run.values as u64, "each value acked once");
    admin.shutdown().await;
    rate
}

/// Scenario 17. Offers to a queue with limits and without.
pub struct QueueLimits;

impl Scenario for QueueLimits {
    fn name(&self) -> &'static str {
        "limits"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("17. queue limits: offers with a size and payload limit and without...");
            let redis = RedisServer::start().await;
            let (on, off) = offers(&redis, false).await;
            let ratio = on / off;
            rows.push(
                Row::new(
                    "17. queue limits",
                    &format!("offers/s, {IN_FLIGHT} in flight, limits set"),
                )
                .values(rate(on), format!("{} (no limits)", rate(off)))
                .ratio(ratio)
                .target("≥ 0.90× no limits", ratio >= 0.9),
            );
            let (on, off) = offers(&redis, true).await;
            let ratio = on / off;
            rows.push(
                Row::new("17. queue limits", "values/s, one offer_all of 100,000, limits set")
                    .values(rate(on), format!("{} (no limits)", rate(off)))
                    .ratio(ratio)
                    .target("≥ 0.90× no limits", ratio >= 0.9),
            );
            eprintln!("17. queue limits: Workers under a concurrency limit and without...");
            // A limit far above what the worker holds: the check, and the
            // prefetch kept to half the room left.
            let loose = WorkerRun {
                values: 100_000,
                workers: 1,
                baseline_workers: 1,
                busy: Duration::ZERO,
                limit: 1_000,
            };
            let (on, off) = workers(&redis, loose).await;
            let ratio = on / off;
            rows.push(
                Row::new(
                    "17. queue limits",
                    &format!(
                        "values/s, Worker concurrency({SLOTS}), no-op handler, concurrency limit 1,000 (not reached)"
                    ),
                )
                .values(rate(on), format!("{} (no limit)", rate(off)))
                .ratio(ratio)
                .target("≥ 0.90× no limit", ratio >= 0.9),
            );
            // A limit that binds: two workers of 64 slots held to 64 in
            // flight, against one worker of 64 slots and no limit (64 at
            // once by its own concurrency). A value holds its fleet slot
            // from its claim to its ack's landing, and room another
            // process makes is found by asking.
            let tight = WorkerRun {
                values: 20_000,
                workers: 2,
                baseline_workers: 1,
                busy: Duration::from_millis(1),
                limit: 64,
            };
            let (on, off) = workers(&redis, tight).await;
            rows.push(
                Row::new(
                    "17. queue limits",
                    &format!("values/s, 2 Workers of concurrency({SLOTS}), 1 ms handlers, concurrency limit 64"),
                )
                .values(
                    rate(on),
                    format!("{} (1 Worker of concurrency({SLOTS}), no limit)", rate(off)),
                )
                .ratio(on / off)
                .note("measured: a value holds its fleet slot from its claim until its ack lands, so 64 in flight run fewer than 64 handlers"),
            );
            rows
        })
    }
}
