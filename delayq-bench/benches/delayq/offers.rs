//! Scenario 1: offer throughput, against redis-benchmark running the same
//! offer script over EVALSHA with pipelining (the server's ceiling).

use std::time::Duration;

use delayq::{Client, LongCodec};
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

const OFFERS: usize = 300_000;
/// Offers in flight at once (the Java client reached 24k/s with 128).
pub const IN_FLIGHT: usize = 512;
/// delayq's offer script, as the crate sends it.
pub fn offer_script() -> String {
    delayq_test_support::script_body(include_str!("../../../lua/offer.lua"))
}

/// Runs of each side; the medians are compared.
const RUNS: usize = 3;

/// (delayq offers per second, ceiling: redis-benchmark EVALSHA pipelined),
/// medians of alternating runs (this machine is shared and noisy).
pub async fn run(redis: &RedisServer) -> (f64, f64) {
    let admin = Admin::connect(&redis.url()).await;
    let sha = admin.script_load(&offer_script()).await;
    let (mut ours, mut ceiling) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        ours.push(offers(redis, &format!("offers-{run}")).await);
        ceiling.push(ceiling_once(redis, &sha, &format!("offers-ceiling-{run}")));
    }
    (crate::measure::median(ours), crate::measure::median(ceiling))
}

async fn offers(redis: &RedisServer, name: &str) -> f64 {
    let client = Client::builder().url(redis.url()).pool_size(4).build().await.unwrap();
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

/// The single-offer ceiling: the offer script (loaded as `sha`) with
/// delayq's keys and argument shapes, as fast as the server runs it, in
/// offers per second: the best of a few connection and pipeline depths.
/// Scenario 1b measures bulk offers against it too.
pub fn ceiling_once(redis: &RedisServer, sha: &str, name: &str) -> f64 {
    let keys = delayq::QueueKeys::new(name).unwrap();
    let n = OFFERS.to_string();
    [["2", "256"], ["4", "128"], ["50", "32"]]
        .iter()
        .map(|[clients, depth]| {
            let args = [
                "-c",
                clients,
                "-P",
                depth,
                "-n",
                &n,
                "-r",
                "1000000000",
                "EVALSHA",
                sha,
                "3",
                keys.timeout(),
                keys.pending(),
                keys.channel(),
                "4102444800000",
                "__rand_int__",
            ];
            crate::redis_benchmark::requests_per_second(redis.port(), &args)
        })
        .fold(0.0, f64::max)
}

/// Scenario 1. Offer throughput: offers with 512 in flight against redis-benchmark's pipelined `EVALSHA` of
/// the same script.
pub struct Offers;

impl Scenario for Offers {
    fn name(&self) -> &'static str {
        "offers"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("1. offer throughput...");
            let redis = RedisServer::start().await;
            let (ours, ceiling) = run(&redis).await;
            let ratio = ours / ceiling;
            rows.push(
                Row::new("1. offer throughput", &format!("offers/s, {} in flight", IN_FLIGHT))
                    .values(
                        rate(ours),
                        format!(
                            "{} (redis-benchmark EVALSHA, pipelined, best of 3 depths)",
                            rate(ceiling)
                        ),
                    )
                    .ratio(ratio)
                    .target("≥ 0.80× ceiling", ratio >= 0.8),
            );
            rows
        })
    }
}
