//! Scenario 18: what job histories cost: a `Worker` handling values offered
//! with ids (a history each: transfer, claim and ack each rewrite the job's
//! record) against the same number offered without, runs alternated on one
//! server. The offers and the transfer happen before the clock starts; the
//! transfer's own share is measured apart.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::{Client, LongCodec};
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

/// Values per run, and the worker's concurrency.
const VALUES: u64 = 20_000;
const CONCURRENCY: usize = 64;
/// Runs of each side; the medians are compared.
const RUNS: usize = 3;

/// One run: (values/s the worker handled, elements/s the transfer moved).
async fn once(redis: &RedisServer, name: &str, ids: bool) -> (f64, f64) {
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    futures_util::stream::iter(0..VALUES as i64)
        .for_each_concurrent(256, |i| {
            let queue = queue.clone();
            async move {
                if ids {
                    queue
                        .offer_with_id(&format!("job-{i}"), &i, Duration::ZERO)
                        .await
                        .unwrap();
                } else {
                    queue.offer(&i, Duration::ZERO).await.unwrap();
                }
            }
        })
        .await;
    let started = Instant::now();
    let mut moved = 0;
    while moved < VALUES {
        moved += queue.transfer_now().await.unwrap().moved;
    }
    let transfer = VALUES as f64 / started.elapsed().as_secs_f64();
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
    if ids {
        let history = client
            .reliable_queue(name, LongCodec)
            .unwrap()
            .job("job-0")
            .await
            .unwrap();
        assert_eq!(history.attempts_total, 1, "{history:?}");
    }
    client.shutdown().await;
    (rate, transfer)
}

/// Scenario 18. A Worker over jobs with histories against plain values.
pub struct JobHistories;

impl Scenario for JobHistories {
    fn name(&self) -> &'static str {
        "job_history"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            eprintln!("18. job histories: a Worker over values with and without ids...");
            let redis = RedisServer::start().await;
            let (mut on, mut off, mut moved_on, mut moved_off) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for run in 0..RUNS {
                let (worker, transfer) = once(&redis, &format!("plain-{run}"), false).await;
                off.push(worker);
                moved_off.push(transfer);
                let (worker, transfer) = once(&redis, &format!("jobs-{run}"), true).await;
                on.push(worker);
                moved_on.push(transfer);
            }
            let (on, off) = (crate::measure::median(on), crate::measure::median(off));
            let (moved_on, moved_off) = (crate::measure::median(moved_on), crate::measure::median(moved_off));
            vec![
                Row::new(
                    "18. job histories",
                    &format!(
                        "values/s, Worker concurrency({CONCURRENCY}), {} ready, each with an id (history kept)",
                        thousands(VALUES)
                    ),
                )
                .values(rate(on), format!("{} (no ids)", rate(off)))
                .ratio(on / off),
                Row::new("18. job histories", "elements/s a transfer moves, each with an id")
                    .values(rate(moved_on), format!("{} (no ids)", rate(moved_off)))
                    .ratio(moved_on / moved_off),
            ]
        })
    }
}
