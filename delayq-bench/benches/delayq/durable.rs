//! Scenario 21: what durable offers cost (`Durability::replicas(1)`: each
//! joined run, each bulk call, waits for a replica with `WAIT`): concurrent
//! single offers and a bulk offer against plain offers of the same values,
//! runs alternated on one primary with one replica on loopback, both
//! started here.

use std::time::Duration;

use delayq::{Client, Durability, LongCodec};
use delayq_test_support::redis_server::{eventually, node_command, wait_replicated};
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::report::{rate, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

const OFFERS: usize = 100_000;
const IN_FLIGHT: usize = 512;
/// Runs of each side; the medians are compared.
const RUNS: usize = 3;
const DELAY: Duration = Duration::from_secs(3600);

/// (durable, plain): values per second, medians of alternated runs, for
/// concurrent single offers (`bulk` false) or one bulk call.
async fn offers(primary: &RedisServer, bulk: bool) -> (f64, f64) {
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        off.push(offers_once(primary, &format!("durable-{bulk}-off-{run}"), bulk, false).await);
        on.push(offers_once(primary, &format!("durable-{bulk}-on-{run}"), bulk, true).await);
    }
    (crate::measure::median(on), crate::measure::median(off))
}

async fn offers_once(primary: &RedisServer, name: &str, bulk: bool, durable: bool) -> f64 {
    let mut builder = Client::builder().url(primary.url()).pool_size(4);
    if durable {
        builder = builder.durability(Durability::replicas(1).within(Duration::from_secs(5)));
    }
    let client = builder.build().await.unwrap();
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    queue.offer(&-1, DELAY).await.unwrap();
    let started = Instant::now();
    if bulk {
        queue.offer_all((0..OFFERS as i64).map(|i| (i, DELAY))).await.unwrap();
    } else {
        futures_util::stream::iter(0..OFFERS as i64)
            .for_each_concurrent(IN_FLIGHT, |i| {
                let queue = queue.clone();
                async move { queue.offer(&i, DELAY).await.unwrap() }
            })
            .await;
    }
    let rate = OFFERS as f64 / started.elapsed().as_secs_f64();
    assert_eq!(queue.len().await.unwrap(), OFFERS + 1, "every offer queued");
    client.shutdown().await;
    rate
}

/// Scenario 21. Durable offers (a replica confirms each run) and plain ones.
pub struct DurableOffers;

impl Scenario for DurableOffers {
    fn name(&self) -> &'static str {
        "durable"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("21. durable offers: waiting for one replica, and plain offers...");
            let primary = RedisServer::start().await;
            let port = primary.port().to_string();
            let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]).await;
            eventually(Duration::from_secs(60), "the replica's first sync", || async {
                node_command(replica.port(), "INFO", vec!["replication".into()])
                    .await
                    .contains("master_link_status:up")
            })
            .await;
            wait_replicated(primary.port(), Duration::from_secs(30)).await;
            let (on, off) = offers(&primary, false).await;
            rows.push(
                Row::new(
                    "21. durable offers",
                    &format!("offers/s, {IN_FLIGHT} in flight, Durability::replicas(1), 1 replica"),
                )
                .values(rate(on), format!("{} (offer, joined runs, no wait)", rate(off)))
                .ratio(on / off),
            );
            let (on, off) = offers(&primary, true).await;
            rows.push(
                Row::new(
                    "21. durable offers",
                    "values/s, one offer_all of 100,000, Durability::replicas(1)",
                )
                .values(rate(on), format!("{} (offer_all, no wait)", rate(off)))
                .ratio(on / off),
            );
            drop(replica);
            rows
        })
    }
}
