//! Scenario 18: what a deduplication window costs offers: concurrent single
//! offers and a bulk offer, each value under its own id in a window (none a
//! duplicate, so every one is checked, offered and recorded), against plain
//! offers of the same values, runs alternated on one server.

use std::time::Duration;

use delayq::dedup::{Dedup, DedupKey};
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
const WINDOW: Duration = Duration::from_secs(3600);
const DELAY: Duration = Duration::from_secs(3600);

/// (with a window, plain): values per second, medians of alternated runs,
/// for concurrent single offers (`bulk` false) or one bulk call.
async fn offers(redis: &RedisServer, bulk: bool) -> (f64, f64) {
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        off.push(offers_once(redis, &format!("dedup-{bulk}-off-{run}"), bulk, false).await);
        on.push(offers_once(redis, &format!("dedup-{bulk}-on-{run}"), bulk, true).await);
    }
    (crate::measure::median(on), crate::measure::median(off))
}

async fn offers_once(redis: &RedisServer, name: &str, bulk: bool, windowed: bool) -> f64 {
    let client = Client::builder().url(redis.url()).pool_size(4).build().await.unwrap();
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    queue.offer(&-1, DELAY).await.unwrap();
    let started = Instant::now();
    match (bulk, windowed) {
        (true, true) => {
            let answers = queue
                .offer_all_dedup(
                    (0..OFFERS as i64).map(|i| (i, DELAY, DedupKey::Id(i.to_string()))),
                    WINDOW,
                )
                .await
                .unwrap();
            assert!(answers.iter().all(|a| a.is_queued()));
        }
        (true, false) => queue.offer_all((0..OFFERS as i64).map(|i| (i, DELAY))).await.unwrap(),
        (false, windowed) => {
            futures_util::stream::iter(0..OFFERS as i64)
                .for_each_concurrent(IN_FLIGHT, |i| {
                    let queue = queue.clone();
                    async move {
                        if windowed {
                            let dedup = Dedup::by_id(i.to_string(), WINDOW);
                            assert!(queue.offer_dedup(&i, DELAY, &dedup).await.unwrap().is_queued());
                        } else {
                            queue.offer(&i, DELAY).await.unwrap();
                        }
                    }
                })
                .await
        }
    }
    let rate = OFFERS as f64 / started.elapsed().as_secs_f64();
    assert_eq!(queue.len().await.unwrap(), OFFERS + 1, "every offer queued");
    client.shutdown().await;
    rate
}

/// Scenario 18. Offers with a deduplication window and without.
pub struct DedupWindows;

impl Scenario for DedupWindows {
    fn name(&self) -> &'static str {
        "dedup"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("18. deduplication windows: offers under an id in a window and plain offers...");
            let redis = RedisServer::start().await;
            let (on, off) = offers(&redis, false).await;
            rows.push(
                Row::new(
                    "18. deduplication windows",
                    &format!("offers/s, {IN_FLIGHT} in flight, offer_dedup by id"),
                )
                .values(rate(on), format!("{} (offer, joined runs)", rate(off)))
                .ratio(on / off),
            );
            let (on, off) = offers(&redis, true).await;
            rows.push(
                Row::new(
                    "18. deduplication windows",
                    "values/s, one offer_all_dedup of 100,000 by id",
                )
                .values(rate(on), format!("{} (offer_all)", rate(off)))
                .ratio(on / off),
            );
            rows
        })
    }
}
