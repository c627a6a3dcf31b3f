//! A Worker with a no-op handler over values already in a queue, alone, to
//! profile (perf, strace) what scenario 12 measures, without its baselines:
//!
//! `cargo run --release -p delayq-bench --example worker_profile -- REDIS_URL [VALUES] [CONCURRENCY] [ROUNDS]`
//!
//! It fills a fresh queue before each round and prints the rate and this
//! process's CPU per value.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use delayq::fred::interfaces::ClientLike;
use delayq::Client;
use delayq::LongCodec;

#[path = "../benches/delayq/measure.rs"]
#[allow(dead_code)]
mod measure;
use tokio::sync::Notify;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let url = args.next().expect("a redis:// URL");
    let values: u64 = args.next().map_or(200_000, |v| v.parse().unwrap());
    let concurrency: usize = args.next().map_or(64, |v| v.parse().unwrap());
    let rounds: usize = args.next().map_or(3, |v| v.parse().unwrap());
    // DELAYQ_PROFILE_FRESH=1: a new client each round, as scenario 12 does.
    let fresh = std::env::var_os("DELAYQ_PROFILE_FRESH").is_some_and(|v| v == "1");
    let mut client = Client::builder().url(&url).build().await.unwrap();
    let admin = delayq::fred::clients::Client::new(
        delayq::fred::types::config::Config::from_url(&url).unwrap(),
        None,
        None,
        None,
    );
    admin.init().await.unwrap();
    for round in 0..rounds {
        let name = format!("worker-profile-{}-{round}", std::process::id());
        for start in (0..values).step_by(10_000) {
            let chunk: Vec<i64> = (start..(start + 10_000).min(values)).map(|v| v as i64).collect();
            let _: i64 = delayq::fred::interfaces::ListInterface::rpush(&admin, name.as_str(), chunk)
                .await
                .unwrap();
        }
        if fresh && round > 0 {
            client.shutdown().await;
            client = Client::builder().url(&url).build().await.unwrap();
        }
        let (handled, done) = (Arc::new(AtomicU64::new(0)), Arc::new(Notify::new()));
        let cpu = own_cpu();
        let started = Instant::now();
        let (h, d) = (Arc::clone(&handled), Arc::clone(&done));
        let worker = client
            .worker(&name, LongCodec)
            .unwrap()
            .concurrency(concurrency)
            .run(move |_: i64| {
                if h.fetch_add(1, Ordering::Relaxed) + 1 == values {
                    d.notify_one();
                }
                async { Ok::<(), std::convert::Infallible>(()) }
            });
        done.notified().await;
        let rate = values as f64 / started.elapsed().as_secs_f64();
        let report = worker.shutdown().await;
        assert_eq!(report.succeeded, values);
        println!(
            "round {round}: {rate:.0} values/s, this process {:.2} µs CPU per value",
            (own_cpu() - cpu) * 1e6 / values as f64
        );
    }
    client.shutdown().await;
}

/// This process's user and system CPU seconds.
fn own_cpu() -> f64 {
    measure::own_cpu_time().as_secs_f64()
}
