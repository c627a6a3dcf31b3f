//! Scenario 5: take() throughput with 1, 4 and 16 workers draining 100,000
//! ready values, against redis-benchmark's LPOP on the same list.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, LongCodec};
use tokio::time::Instant;

use crate::admin::Admin;
use crate::RedisServer;

pub const VALUES: u64 = 100_000;

async fn fill(admin: &Admin) {
    admin.cmd("DEL", vec!["take".into()]).await;
    for chunk in (0..VALUES).collect::<Vec<_>>().chunks(10_000) {
        let mut args: Vec<Value> = vec!["take".into()];
        args.extend(chunk.iter().map(|v| Value::from(*v as i64)));
        admin.cmd("RPUSH", args).await;
    }
}

/// Runs of each side; the medians are compared.
const RUNS: usize = 3;

/// (delayq take()s per second, redis-benchmark LPOPs per second), medians of
/// alternating runs.
pub async fn run(redis: &RedisServer, workers: usize) -> (f64, f64) {
    let admin = Admin::connect(&redis.url()).await;
    let (mut ours, mut lpop) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        fill(&admin).await;
        ours.push(takes(redis, &admin, workers).await);
        fill(&admin).await;
        let (clients, n) = (workers.to_string(), VALUES.to_string());
        lpop.push(crate::redis_benchmark::requests_per_second(
            redis.port(),
            &["-c", &clients, "-n", &n, "LPOP", "take"],
        ));
    }
    (crate::measure::median(ours), crate::measure::median(lpop))
}

async fn takes(redis: &RedisServer, admin: &Admin, workers: usize) -> f64 {
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let queue = client.blocking_queue("take", LongCodec).unwrap();
    let taken = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, taken) = (queue.clone(), taken.clone());
            tokio::spawn(async move {
                while taken.load(Ordering::Relaxed) < VALUES {
                    match queue.take().await {
                        Ok(_) => {
                            taken.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => panic!("take: {e}"),
                    }
                }
            })
        })
        .collect();
    while taken.load(Ordering::Relaxed) < VALUES {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let seconds = started.elapsed().as_secs_f64();
    // Wake the workers still blocked, then stop.
    let extra: Vec<Value> = std::iter::once(Value::from("take"))
        .chain((0..workers).map(|_| Value::from(0)))
        .collect();
    admin.cmd("RPUSH", extra).await;
    for task in tasks {
        let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
    }
    client.shutdown().await;
    VALUES as f64 / seconds
}
