//! Scenario 24: a partitioned queue of 3 partitions against one plain
//! queue on the same 3-master Cluster (issue 47, item 2), runs alternated,
//! medians of three: offers/s (256 at once), a Worker's values/s
//! (concurrency 64, values ready before the clock starts), and the Redis
//! CPU each value cost, `used_cpu_user + used_cpu_sys` deltas of `INFO cpu`
//! summed over the masters, from the first offer to the last ack; and how
//! that CPU was spread (the busiest master's share).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::{Client, LongCodec};
use delayq_test_support::redis_cluster::RedisCluster;
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};

/// Values per run.
const VALUES: u64 = 20_000;
/// Runs of each side; the medians are compared.
const RUNS: usize = 3;
/// Partitions of the partitioned side: one per master.
const PARTITIONS: usize = 3;

/// One run's numbers.
struct Run {
    offers_per_s: f64,
    handled_per_s: f64,
    /// Redis CPU µs per value, summed over the masters.
    cpu_us: f64,
    /// The busiest master's share of that CPU.
    busiest: f64,
}

/// Each master's `used_cpu_user + used_cpu_sys`, in seconds.
async fn masters_cpu(masters: &[Admin]) -> Vec<f64> {
    let mut cpu = Vec::new();
    for admin in masters {
        let text = admin.info("cpu").await;
        let field = |name: &str| -> f64 {
            text.lines()
                .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0.0)
        };
        cpu.push(field("used_cpu_user") + field("used_cpu_sys"));
    }
    cpu
}

/// One run: offers (timed), the transfer of all of them (not timed), a
/// Worker over them (timed).
async fn once(cluster: &RedisCluster, masters: &[Admin], name: &str, partitioned: bool) -> Run {
    let client = Client::builder().url(cluster.url()).build().await.unwrap();
    let before = masters_cpu(masters).await;
    let started = Instant::now();
    let handled = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let handler = {
        let (handled, done) = (handled.clone(), done.clone());
        move |_: i64| {
            if handled.fetch_add(1, Ordering::Relaxed) + 1 == VALUES {
                done.notify_one();
            }
            async { Ok::<(), std::convert::Infallible>(()) }
        }
    };
    let (offers_per_s, handled_per_s, report) = if partitioned {
        // No transfer of its own while offering: the loop below moves them.
        let queue = client
            .create_partitioned_queue(name, PARTITIONS, LongCodec)
            .await
            .unwrap()
            .without_transfer();
        futures_util::stream::iter(0..VALUES as i64)
            .for_each_concurrent(256, |i| {
                let queue = queue.clone();
                async move { queue.offer(&i, Duration::ZERO).await.unwrap() }
            })
            .await;
        let offers = VALUES as f64 / started.elapsed().as_secs_f64();
        for i in 0..PARTITIONS {
            let partition = queue.partition(i).unwrap();
            while partition.len().await.unwrap() > 0 {
                partition.transfer_now().await.unwrap();
            }
        }
        let started = Instant::now();
        let worker = client.partitioned_worker(&queue).unwrap().concurrency(64).run(handler);
        done.notified().await;
        let handled = VALUES as f64 / started.elapsed().as_secs_f64();
        (offers, handled, worker.shutdown().await)
    } else {
        let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
        futures_util::stream::iter(0..VALUES as i64)
            .for_each_concurrent(256, |i| {
                let queue = queue.clone();
                async move { queue.offer(&i, Duration::ZERO).await.unwrap() }
            })
            .await;
        let offers = VALUES as f64 / started.elapsed().as_secs_f64();
        while queue.len().await.unwrap() > 0 {
            queue.transfer_now().await.unwrap();
        }
        let started = Instant::now();
        let worker = client.worker(name, LongCodec).unwrap().concurrency(64).run(handler);
        done.notified().await;
        let handled = VALUES as f64 / started.elapsed().as_secs_f64();
        (offers, handled, worker.shutdown().await)
    };
    assert_eq!(report.succeeded, VALUES, "every value acked once: {report:?}");
    client.shutdown().await;
    let after = masters_cpu(masters).await;
    let used: Vec<f64> = before.iter().zip(&after).map(|(b, a)| (a - b).max(0.0)).collect();
    let total: f64 = used.iter().sum();
    let busiest = used.iter().cloned().fold(0.0, f64::max) / total.max(f64::MIN_POSITIVE);
    Run {
        offers_per_s,
        handled_per_s,
        cpu_us: total * 1e6 / VALUES as f64,
        busiest,
    }
}

/// Scenario 24. A partitioned queue of 3 against a plain queue on a
/// 3-master Cluster.
pub struct PartitionedQueues;

impl Scenario for PartitionedQueues {
    fn name(&self) -> &'static str {
        "partitioned"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            eprintln!("24. partitioned: a partitioned queue of 3 and a plain queue on a 3-master Cluster...");
            let cluster = RedisCluster::start().await;
            let mut masters = Vec::new();
            for port in cluster.masters().await {
                masters.push(Admin::connect(&format!("redis://127.0.0.1:{port}")).await);
            }
            let (mut plain, mut parts) = (Vec::new(), Vec::new());
            for run in 0..RUNS {
                plain.push(once(&cluster, &masters, &format!("bplain-{run}"), false).await);
                parts.push(once(&cluster, &masters, &format!("bpart-{run}"), true).await);
            }
            let median = |runs: &[Run], f: fn(&Run) -> f64| crate::measure::median(runs.iter().map(f).collect());
            let (offers_plain, offers_parts) = (median(&plain, |r| r.offers_per_s), median(&parts, |r| r.offers_per_s));
            let (handled_plain, handled_parts) =
                (median(&plain, |r| r.handled_per_s), median(&parts, |r| r.handled_per_s));
            let (cpu_plain, cpu_parts) = (median(&plain, |r| r.cpu_us), median(&parts, |r| r.cpu_us));
            let (busy_plain, busy_parts) = (median(&plain, |r| r.busiest), median(&parts, |r| r.busiest));
            let values = thousands(VALUES);
            vec![
                Row::new(
                    "24. partitioned",
                    &format!("offers/s, 256 at once, {values} values, 3 partitions round robin"),
                )
                .values(rate(offers_parts), format!("{} (one plain queue)", rate(offers_plain)))
                .ratio(offers_parts / offers_plain),
                Row::new(
                    "24. partitioned",
                    &format!("values/s, one Worker concurrency(64), {values} ready over 3 partitions"),
                )
                .values(
                    rate(handled_parts),
                    format!("{} (one plain queue)", rate(handled_plain)),
                )
                .ratio(handled_parts / handled_plain),
                Row::new(
                    "24. partitioned",
                    "Redis CPU µs per value (offer, transfer, claim, ack), all masters",
                )
                .values(format!("{cpu_parts:.1}"), format!("{cpu_plain:.1} (one plain queue)"))
                .ratio(cpu_parts / cpu_plain),
                Row::new("24. partitioned", "busiest master's share of that CPU")
                    .values(
                        format!("{:.0} %", busy_parts * 100.0),
                        format!("{:.0} % (one plain queue)", busy_plain * 100.0),
                    )
                    .note("1/3 is an even spread"),
            ]
        })
    }
}
