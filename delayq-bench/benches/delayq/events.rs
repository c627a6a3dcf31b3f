//! Scenario 16: what lifecycle events cost: offers and a
//! `Worker` with a queue's events on against the same with them off, runs
//! alternated on one server. Goal: ≤ 10% slower.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, LongCodec};
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

const OFFERS: usize = 100_000;
const IN_FLIGHT: usize = 512;
/// Values a worker handles per run, and its concurrency.
pub const VALUES: u64 = 100_000;
pub const CONCURRENCY: usize = 64;
/// Runs of each side; the medians are compared.
const RUNS: usize = 5;

/// (with events, without): offers per second, medians of alternated runs;
/// and the events written per 1,000 offers (XADD calls the server counted).
pub async fn offers(redis: &RedisServer) -> (f64, f64, f64) {
    let admin = Admin::connect(&redis.url()).await;
    let before = xadd_calls(&admin).await;
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        off.push(offers_once(redis, &format!("events-offers-off-{run}"), false).await);
        on.push(offers_once(redis, &format!("events-offers-on-{run}"), true).await);
    }
    let per_1000 = (xadd_calls(&admin).await - before) as f64 * 1000.0 / (RUNS * (OFFERS + 1)) as f64;
    (crate::measure::median(on), crate::measure::median(off), per_1000)
}

async fn offers_once(redis: &RedisServer, name: &str, events: bool) -> f64 {
    let client = Client::builder().url(redis.url()).pool_size(4).build().await.unwrap();
    if events {
        client
            .enable_events(
                &delayq::QueueKeys::new(name).unwrap(),
                delayq::events::DEFAULT_EVENTS_MAX_LEN,
            )
            .await
            .unwrap();
    }
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    queue.offer(&0, Duration::from_secs(3600)).await.unwrap();
    let started = Instant::now();
    futures_util::stream::iter(0..OFFERS as i64)
        .for_each_concurrent(IN_FLIGHT, |i| {
            let queue = queue.clone();
            async move { queue.offer(&i, Duration::from_secs(3600)).await.unwrap() }
        })
        .await;
    let rate = OFFERS as f64 / started.elapsed().as_secs_f64();
    client.shutdown().await;
    rate
}

/// (with events, without): values a no-op `Worker` handles per second;
/// and the events written per 1,000 values (claims and acks).
pub async fn worker(redis: &RedisServer) -> (f64, f64, f64) {
    let admin = Admin::connect(&redis.url()).await;
    let (mut on, mut off) = (Vec::new(), Vec::new());
    let mut written = 0;
    for run in 0..RUNS {
        off.push(worker_once(redis, &admin, &format!("events-worker-off-{run}"), false).await);
        let before = xadd_calls(&admin).await;
        on.push(worker_once(redis, &admin, &format!("events-worker-on-{run}"), true).await);
        written += xadd_calls(&admin).await - before;
    }
    let per_1000 = written as f64 * 1000.0 / (RUNS as u64 * VALUES) as f64;
    (crate::measure::median(on), crate::measure::median(off), per_1000)
}

async fn worker_once(redis: &RedisServer, admin: &Admin, name: &str, events: bool) -> f64 {
    for chunk in (0..VALUES as i64).collect::<Vec<_>>().chunks(10_000) {
        let mut args: Vec<Value> = vec![name.into()];
        args.extend(chunk.iter().map(|v| Value::from(*v)));
        admin.cmd("RPUSH", args).await;
    }
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    if events {
        client
            .enable_events(
                &delayq::QueueKeys::new(name).unwrap(),
                delayq::events::DEFAULT_EVENTS_MAX_LEN,
            )
            .await
            .unwrap();
    }
    let handled = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let started = Instant::now();
    let worker = client.worker(name, LongCodec).unwrap().concurrency(CONCURRENCY).run({
        let (handled, done) = (handled.clone(), done.clone());
        move |_: i64| {
            if handled.fetch_add(1, Ordering::Relaxed) + 1 == VALUES {
                done.notify_one();
            }
            async { Ok::<(), std::convert::Infallible>(()) }
        }
    });
    done.notified().await;
    let rate = VALUES as f64 / started.elapsed().as_secs_f64();
    let report = worker.shutdown().await;
    assert_eq!(report.succeeded, VALUES, "every value acked once: {report:?}");
    client.shutdown().await;
    rate
}

/// XADD calls the server counted (`INFO commandstats`; those of scripts too).
async fn xadd_calls(admin: &Admin) -> u64 {
    (admin.command_stats().await.into_iter())
        .find_map(|(command, calls, _)| (command == "xadd").then_some(calls))
        .unwrap_or(0)
}

/// Scenario 16. Offers and a Worker with lifecycle events on and off.
pub struct LifecycleEvents;

impl Scenario for LifecycleEvents {
    fn name(&self) -> &'static str {
        "events"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("16. lifecycle events: offers and a Worker with events on and off...");
            let redis = RedisServer::start().await;
            let (on, off, per_1000) = offers(&redis).await;
            let ratio = on / off;
            rows.push(
                Row::new(
                    "16. lifecycle events",
                    &format!("offers/s, {} in flight, events on", 512),
                )
                .values(rate(on), format!("{} (events off)", rate(off)))
                .ratio(ratio)
                .target("≥ 0.90× events off", ratio >= 0.9),
            );
            rows.push(
                Row::new("16. lifecycle events", "events written per 1,000 offers (joined runs)")
                    .values(format!("{per_1000:.1}"), "—".into())
                    .note("one XADD per run of offer.lua"),
            );
            let (on, off, worker_per_1000) = worker(&redis).await;
            let ratio = on / off;
            rows.push(
                Row::new(
                    "16. lifecycle events",
                    &format!(
                        "values/s, Worker concurrency({}), {} ready, events on",
                        CONCURRENCY,
                        thousands(VALUES)
                    ),
                )
                .values(rate(on), format!("{} (events off)", rate(off)))
                .ratio(ratio)
                .target("≥ 0.90× events off", ratio >= 0.9),
            );
            rows.push(
                Row::new(
                    "16. lifecycle events",
                    "events written per 1,000 values a Worker handles",
                )
                .values(format!("{worker_per_1000:.1}"), "—".into())
                .note("one XADD per claim_batch and per ack_batch run"),
            );
            rows
        })
    }
}
