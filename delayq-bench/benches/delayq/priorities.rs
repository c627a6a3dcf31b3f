//! Scenario 20: what priorities, message TTL and headers cost. Offers with
//! a priority (or a TTL, or headers) against plain offers, and takes from a queue whose
//! values have priorities (or TTLs) against takes from a plain one, runs
//! alternated on one server, medians compared.
//! Concurrent priority offers share runs of `offer_priority.lua` as plain
//! offers share `RPUSH`es, and concurrent takes of a queue with priorities
//! share runs of `pop_priority.lua` (one in flight) as plain takes share
//! `LPOP key n`s (eight in flight).

use std::time::Duration;

use delayq::{Client, LongCodec, OfferOptions, Priority};
use futures_util::StreamExt;
use tokio::time::Instant;

use crate::report::{rate, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

const VALUES: usize = 50_000;
const IN_FLIGHT: usize = 256;
/// Runs of each side; the medians are compared.
const RUNS: usize = 3;

/// What the values of a run are offered with.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Plain,
    Priorities,
    Ttl,
    Headers,
}

/// Three headers as a service sends them: a tenant, a source, and a W3C
/// trace context (about 120 bytes of JSON).
fn headers() -> OfferOptions {
    OfferOptions::after(Duration::ZERO)
        .header("tenant", "acme-corp")
        .header("source", "checkout")
        .header("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
}

/// (offers/s, takes/s) of one run: `VALUES` offered concurrently (with
/// levels 1-9 in turn, a TTL of an hour, or plain), then taken by
/// `IN_FLIGHT` concurrent takes.
async fn run_once(redis: &RedisServer, name: &str, kind: Kind) -> (f64, f64) {
    let client = Client::builder().url(redis.url()).pool_size(4).build().await.unwrap();
    let producer = client.delayed_queue(name, LongCodec).unwrap();
    let consumer = client.blocking_queue(name, LongCodec).unwrap();
    let started = Instant::now();
    futures_util::stream::iter(0..VALUES as i64)
        .for_each_concurrent(IN_FLIGHT, |i| {
            let (producer, consumer) = (producer.clone(), consumer.clone());
            async move {
                match kind {
                    Kind::Priorities => {
                        let level = Priority::new(1 + (i % 9) as u8).unwrap();
                        producer.offer_with_priority(&i, Duration::ZERO, level).await.unwrap();
                    }
                    Kind::Ttl => {
                        let options = OfferOptions::after(Duration::ZERO).ttl(Duration::from_secs(3600));
                        producer.offer_with(&i, &options).await.unwrap();
                    }
                    Kind::Headers => producer.offer_with(&i, &headers()).await.unwrap(),
                    // Straight to the list, as the others go straight to
                    // their set: no transfer in any.
                    Kind::Plain => consumer.offer(&i).await.unwrap(),
                }
            }
        })
        .await;
    let offers = VALUES as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    futures_util::stream::iter(0..VALUES)
        .for_each_concurrent(IN_FLIGHT, |_| {
            let consumer = consumer.clone();
            async move {
                if kind == Kind::Headers {
                    // The take that reads them, as a handler would.
                    let (_, headers) = consumer
                        .take_with_headers(Duration::from_secs(60))
                        .await
                        .unwrap()
                        .unwrap();
                    assert_eq!(headers.len(), 3);
                } else {
                    consumer.take().await.unwrap();
                }
            }
        })
        .await;
    let takes = VALUES as f64 / started.elapsed().as_secs_f64();
    assert_eq!(consumer.try_take().await.unwrap(), None, "every value taken once");
    client.shutdown().await;
    (offers, takes)
}

/// Scenario 20. Offers and takes with priorities and without.
pub struct Priorities;

impl Scenario for Priorities {
    fn name(&self) -> &'static str {
        "priorities"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            eprintln!("20. priorities, message TTL and headers: offers and takes with levels 1-9, with a TTL, with headers, and plain...");
            let redis = RedisServer::start().await;
            let (mut offers, mut takes) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
            let (mut ttl_offers, mut ttl_takes) = (Vec::new(), Vec::new());
            let (mut headed_offers, mut headed_takes) = (Vec::new(), Vec::new());
            for run in 0..RUNS {
                let (o, t) = run_once(&redis, &format!("prio-plain-{run}"), Kind::Plain).await;
                offers.1.push(o);
                takes.1.push(t);
                let (o, t) = run_once(&redis, &format!("prio-levels-{run}"), Kind::Priorities).await;
                offers.0.push(o);
                takes.0.push(t);
                let (o, t) = run_once(&redis, &format!("prio-ttl-{run}"), Kind::Ttl).await;
                ttl_offers.push(o);
                ttl_takes.push(t);
                let (o, t) = run_once(&redis, &format!("prio-headers-{run}"), Kind::Headers).await;
                headed_offers.push(o);
                headed_takes.push(t);
            }
            let median = crate::measure::median;
            let (offers_on, offers_off) = (median(offers.0), median(offers.1));
            let (takes_on, takes_off) = (median(takes.0), median(takes.1));
            let (ttl_offers, ttl_takes) = (median(ttl_offers), median(ttl_takes));
            let (headed_offers, headed_takes) = (median(headed_offers), median(headed_takes));
            vec![
                Row::new("20. headers", &format!("offers/s, {IN_FLIGHT} in flight, 3 headers"))
                    .values(
                        rate(headed_offers),
                        format!("{} (plain, to the list)", rate(offers_off)),
                    )
                    .ratio(headed_offers / offers_off)
                    .target("≥ 0.30× plain (joined runs)", headed_offers / offers_off >= 0.3),
                Row::new(
                    "20. headers",
                    &format!("takes/s, {IN_FLIGHT} concurrent take_with_headers, 3 headers"),
                )
                .values(rate(headed_takes), format!("{} (plain LPOP)", rate(takes_off)))
                .ratio(headed_takes / takes_off)
                .target("≥ 0.50× plain (joined pops)", headed_takes / takes_off >= 0.5),
                Row::new("20. message TTL", &format!("offers/s, {IN_FLIGHT} in flight, TTL 1 h"))
                    .values(rate(ttl_offers), format!("{} (plain, to the list)", rate(offers_off)))
                    .ratio(ttl_offers / offers_off)
                    .target("≥ 0.30× plain (joined runs)", ttl_offers / offers_off >= 0.3),
                Row::new(
                    "20. message TTL",
                    &format!("takes/s, {IN_FLIGHT} concurrent takes, TTL 1 h"),
                )
                .values(rate(ttl_takes), format!("{} (plain LPOP)", rate(takes_off)))
                .ratio(ttl_takes / takes_off)
                .target("≥ 0.50× plain (joined pops)", ttl_takes / takes_off >= 0.5),
                Row::new(
                    "20. priorities",
                    &format!("offers/s, {IN_FLIGHT} in flight, levels 1-9"),
                )
                .values(rate(offers_on), format!("{} (plain, to the list)", rate(offers_off)))
                .ratio(offers_on / offers_off)
                .target("≥ 0.30× plain (joined runs)", offers_on / offers_off >= 0.3),
                Row::new(
                    "20. priorities",
                    &format!("takes/s, {IN_FLIGHT} concurrent takes, levels 1-9"),
                )
                .values(rate(takes_on), format!("{} (plain LPOP)", rate(takes_off)))
                .ratio(takes_on / takes_off)
                .target("≥ 0.50× plain (joined pops)", takes_on / takes_off >= 0.5),
            ]
        })
    }
}
