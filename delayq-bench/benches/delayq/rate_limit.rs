//! Scenario 9: a worker rate limit shared by 4 clients × 8 handlers on one
//! queue of ready values: the achieved rate against the limit, the busiest
//! one-second window, and each value handled once. Baseline: the same
//! workers without a limit.

use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::fred::types::Value;
use delayq::{Client, LongCodec};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

pub const CLIENTS: usize = 4;
pub const HANDLERS: usize = 8;
pub const LIMIT: u32 = 100;
pub const VALUES: i64 = 1_000;

pub struct Outcome {
    /// Values per second from the first handled to the last.
    pub rate: f64,
    /// Most values started in any one-second window.
    pub busiest_second: usize,
    /// Values handled more than once, and never.
    pub duplicates: usize,
    pub lost: usize,
}

pub async fn run(redis: &RedisServer, limit: Option<u32>) -> Outcome {
    let admin = Admin::connect(&redis.url()).await;
    let queue = if limit.is_some() { "limited" } else { "unlimited" };
    let mut args: Vec<Value> = vec![queue.into()];
    args.extend((0..VALUES).map(Value::from));
    admin.cmd("RPUSH", args).await;
    let handled: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::default();
    let mut clients = Vec::new();
    let mut workers = Vec::new();
    for _ in 0..CLIENTS {
        let client = Client::builder().url(redis.url()).build().await.unwrap();
        let mut worker = client.worker(queue, LongCodec).unwrap().concurrency(HANDLERS);
        if let Some(limit) = limit {
            worker = worker.rate_limit(limit, Duration::from_secs(1));
        }
        let handled = handled.clone();
        workers.push(worker.run(move |value: i64| {
            let handled = handled.clone();
            async move {
                handled.lock().push((value, Instant::now()));
                Ok::<_, BoxError>(())
            }
        }));
        clients.push(client);
    }
    let give_up = Instant::now() + Duration::from_secs(VALUES as u64 / 10 + 60);
    while handled.lock().len() < VALUES as usize && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for worker in workers {
        worker.shutdown().await;
    }
    for client in clients {
        client.shutdown().await;
    }
    let handled = handled.lock().clone();
    let mut times: Vec<Instant> = handled.iter().map(|(_, t)| *t).collect();
    times.sort_unstable();
    let span = (*times.last().unwrap() - times[0]).as_secs_f64();
    let rate = (times.len() - 1) as f64 / span.max(1e-9);
    let mut busiest_second = 0;
    let mut start = 0;
    for end in 0..times.len() {
        while times[end] - times[start] >= Duration::from_secs(1) {
            start += 1;
        }
        busiest_second = busiest_second.max(end - start + 1);
    }
    let mut values: Vec<i64> = handled.iter().map(|(v, _)| *v).collect();
    values.sort_unstable();
    let total = values.len();
    values.dedup();
    Outcome {
        rate,
        busiest_second,
        duplicates: total - values.len(),
        lost: VALUES as usize - values.len(),
    }
}

/// Scenario 9. A rate limit shared by several clients' workers.
pub struct RateLimit;

impl Scenario for RateLimit {
    fn name(&self) -> &'static str {
        "ratelimit"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("9. rate limit {LIMIT}/s shared by {CLIENTS} clients x {HANDLERS} handlers, {VALUES} values...");
            let redis = RedisServer::start().await;
            let limited = run(&redis, Some(LIMIT)).await;
            let unlimited = run(&redis, None).await;
            let scenario = format!("9. rate limit, {CLIENTS} clients × {HANDLERS} handlers");
            let off = (limited.rate / f64::from(LIMIT) - 1.0) * 100.0;
            rows.push(
                Row::new(&scenario, &format!("values/s, limit {LIMIT}/s, {VALUES} ready"))
                    .values(
                        format!("{:.1} /s ({off:+.1}%)", limited.rate),
                        format!("{} (no limit)", rate(unlimited.rate)),
                    )
                    .target("within ±5%", off.abs() <= 5.0),
            );
            rows.push(
                Row::new(&scenario, "most values started in any 1 s window")
                    .values(limited.busiest_second.to_string(), unlimited.busiest_second.to_string())
                    .target(
                        &format!("≤ {} (limit +5%)", LIMIT as usize * 105 / 100),
                        limited.busiest_second <= LIMIT as usize * 105 / 100,
                    ),
            );
            rows.push(
                Row::new(&scenario, "values handled twice / never")
                    .values(
                        format!("{} / {}", limited.duplicates, limited.lost),
                        format!("{} / {}", unlimited.duplicates, unlimited.lost),
                    )
                    .target("0 / 0", limited.duplicates == 0 && limited.lost == 0),
            );
            rows
        })
    }
}
