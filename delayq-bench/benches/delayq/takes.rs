//! Scenario 5: take() throughput with 1, 4, 16 and 64 workers draining 100,000
//! ready values, against redis-benchmark's LPOP on the same list. With
//! `layers`, the same drain by the layers below a take, to show where the
//! time goes: fred's `LPOP` on a pool like delayq's, and a bare socket.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use delayq::fred::bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::fred::types::Value;
use delayq::{Client, LongCodec};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, Row};
use crate::resp::{Conn, Reply};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

pub const VALUES: u64 = 100_000;

/// Runs of each side; the medians are compared.
const RUNS: usize = 3;

/// Takes per second, medians of alternating runs.
pub struct Takes {
    pub delayq: f64,
    /// redis-benchmark `LPOP -c N`.
    pub lpop: f64,
    /// fred's `LPOP` on a pool of 2 (delayq's default), no delayq.
    pub fred: Option<f64>,
    /// `LPOP` from a bare socket per worker, no client library.
    pub bare: Option<f64>,
}

#[derive(Clone, Copy)]
enum Taker {
    Delayq,
    Fred,
    Bare,
}

async fn fill(admin: &Admin) {
    admin.cmd("DEL", vec!["take".into()]).await;
    for chunk in (0..VALUES).collect::<Vec<_>>().chunks(10_000) {
        let mut args: Vec<Value> = vec!["take".into()];
        args.extend(chunk.iter().map(|v| Value::from(*v as i64)));
        admin.cmd("RPUSH", args).await;
    }
}

pub async fn run(redis: &RedisServer, workers: usize, layers: bool) -> Takes {
    let admin = Admin::connect(&redis.url()).await;
    let takers: &[Taker] = if layers {
        &[Taker::Delayq, Taker::Fred, Taker::Bare]
    } else {
        &[Taker::Delayq]
    };
    let mut rates = vec![Vec::new(); takers.len()];
    let mut lpop = Vec::new();
    for _ in 0..RUNS {
        for (taker, rates) in takers.iter().zip(&mut rates) {
            fill(&admin).await;
            rates.push(drain(redis, &admin, workers, *taker).await);
        }
        fill(&admin).await;
        let (clients, n) = (workers.to_string(), VALUES.to_string());
        lpop.push(crate::redis_benchmark::requests_per_second(
            redis.port(),
            &["-c", &clients, "-n", &n, "LPOP", "take"],
        ));
    }
    let mut medians = rates.into_iter().map(crate::measure::median);
    Takes {
        delayq: medians.next().unwrap(),
        fred: medians.next(),
        bare: medians.next(),
        lpop: crate::measure::median(lpop),
    }
}

/// `workers` tasks take until the list is empty; takes per second.
async fn drain(redis: &RedisServer, admin: &Admin, workers: usize, taker: Taker) -> f64 {
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let queue = client.blocking_queue("take", LongCodec).unwrap();
    // Built like delayq's command pool (2 connections, TCP_NODELAY).
    let pool = Builder::from_config(Config::from_url(&redis.url()).unwrap())
        .with_connection_config(|c| c.tcp.nodelay = Some(true))
        .build_pool(2)
        .unwrap();
    if let Taker::Fred = taker {
        pool.init().await.unwrap();
    }
    let mut bare = Vec::new();
    if let Taker::Bare = taker {
        for _ in 0..workers {
            bare.push(Conn::connect(redis.port()).await);
        }
    }
    let taken = Arc::new(AtomicU64::new(0));
    // The worker that takes the last value says so: no timer wakes this
    // process while it is measured (redis-benchmark has none either).
    let done = Arc::new(Notify::new());
    let started = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, pool, taken, done) = (queue.clone(), pool.clone(), taken.clone(), done.clone());
            let mut bare = bare.pop();
            tokio::spawn(async move {
                while taken.load(Ordering::Relaxed) < VALUES {
                    let took = match (taker, &mut bare) {
                        (Taker::Delayq, _) => queue.take().await.map(|_| true).expect("take"),
                        (Taker::Fred, _) => {
                            let value: Option<Bytes> = pool.next().lpop("take", None).await.expect("LPOP");
                            value.is_some()
                        }
                        (Taker::Bare, Some(conn)) => !matches!(conn.call(&[b"LPOP", b"take"]).await, Reply::Nil),
                        (Taker::Bare, None) => unreachable!("a socket per worker"),
                    };
                    if !took {
                        break; // the layers below a take do not wait
                    }
                    if taken.fetch_add(1, Ordering::Relaxed) + 1 == VALUES {
                        done.notify_one();
                    }
                }
            })
        })
        .collect();
    done.notified().await;
    let seconds = started.elapsed().as_secs_f64();
    // Wake the workers still blocked in take(), then stop.
    let extra: Vec<Value> = std::iter::once(Value::from("take"))
        .chain((0..workers).map(|_| Value::from(0)))
        .collect();
    admin.cmd("RPUSH", extra).await;
    for task in tasks {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), task).await;
    }
    if let Taker::Fred = taker {
        let _ = pool.quit().await;
    }
    client.shutdown().await;
    VALUES as f64 / seconds
}

/// Scenario 5. Take throughput at 1, 4, 16 and 64 workers against `redis-benchmark LPOP`, and its layers.
pub struct TakeThroughput;

impl Scenario for TakeThroughput {
    fn name(&self) -> &'static str {
        "takes"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("5. take throughput (1, 4, 16, 64 workers; fred and a bare socket at 1 and 4)...");
            let redis = RedisServer::start().await;
            // DELAYQ_BENCH_TAKERS: the worker counts to run (1, 4, 16 and 64).
            let counts: Vec<usize> = std::env::var("DELAYQ_BENCH_TAKERS")
                .ok()
                .map(|list| list.split(',').filter_map(|w| w.trim().parse().ok()).collect())
                .unwrap_or_else(|| vec![1, 4, 16, 64]);
            for workers in counts {
                let t = run(&redis, workers, workers <= 4).await;
                let ratio = t.delayq / t.lpop;
                let target = if workers == 1 { 0.95 } else { 0.90 };
                let baseline = format!("{} (redis-benchmark LPOP -c {workers})", rate(t.lpop));
                rows.push(
                    Row::new("5. take throughput", &format!("{workers} worker(s), 100,000 ready"))
                        .values(rate(t.delayq), baseline.clone())
                        .ratio(ratio)
                        .target(&format!("≥ {target:.2}×"), ratio >= target),
                );
                let layers = [
                    ("fred LPOP, pool of 2, no delayq", t.fred),
                    ("LPOP from bare sockets, no client library", t.bare),
                ];
                for (layer, measured) in layers {
                    if let Some(measured) = measured {
                        rows.push(
                            Row::new("5. take throughput, layers", &format!("{workers} worker(s): {layer}"))
                                .values(rate(measured), baseline.clone())
                                .ratio(measured / t.lpop)
                                .note("where the time goes"),
                        );
                    }
                }
            }
            rows
        })
    }
}
