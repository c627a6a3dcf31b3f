//! Scenario 2: delivery lateness at 2,000 offers/s, delays spread over 0–5 s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::{Client, LongCodec};
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::admin::Admin;
use crate::measure::{now_ms_f64, percentiles, CpuWindow};
use crate::RedisServer;

pub const ELEMENTS: usize = 20_000;
const RATE: usize = 2_000;
const MAX_DELAY_MS: u64 = 5_000;

pub struct Lateness {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub cpu_ours: f64,
    pub cpu_redis: f64,
    pub script_runs: u64,
}

/// Which transfer moves the elements.
#[derive(Clone, Copy, PartialEq)]
pub enum Transfer {
    Delayq,
    Redisson,
}

pub async fn run(redis: &RedisServer, transfer: Transfer) -> Lateness {
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
    let lateness = Arc::new(Mutex::new(Vec::with_capacity(ELEMENTS)));
    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let dest = queue.destination();
            let lateness = lateness.clone();
            tokio::spawn(async move {
                while lateness.lock().len() < ELEMENTS {
                    if let Ok(Some(due)) = dest.take_timeout(Duration::from_millis(200)).await {
                        lateness.lock().push(now_ms_f64() - due as f64);
                    }
                }
            })
        })
        .collect();
    // 2,000 offers a second: 10 every 5 ms, each its own offer.
    let mut tick = tokio::time::interval(Duration::from_millis(5));
    let per_tick = RATE / 200;
    for _ in 0..ELEMENTS / per_tick {
        tick.tick().await;
        let offers = (0..per_tick).map(|_| {
            let delay = Duration::from_millis(fastrand::u64(0..=MAX_DELAY_MS));
            let due = (now_ms_f64() + delay.as_millis() as f64) as i64;
            let queue = queue.clone();
            async move { queue.offer(&due, delay).await.unwrap() }
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
    stop.cancel();
    let script_runs = match transfer {
        Transfer::Delayq => client.stats().transfer_runs - runs_before,
        Transfer::Redisson => redisson_runs.load(Ordering::Relaxed),
    };
    client.shutdown().await;
    let (p50, p99, max) = percentiles(std::mem::take(&mut *lateness.lock()));
    Lateness {
        p50,
        p99,
        max,
        cpu_ours,
        cpu_redis,
        script_runs,
    }
}
