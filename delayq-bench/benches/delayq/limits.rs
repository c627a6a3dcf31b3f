//! Scenario 17: what a queue's limits cost its offers: concurrent single
//! offers and a bulk offer to a queue with a size and a payload limit
//! (never reached) against the same with no limits, runs alternated on one
//! server. Goal: ≤ 10% slower.

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
            rows
        })
    }
}
