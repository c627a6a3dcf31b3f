//! Scenario 23: what groups cost (issue 46, item 1): a `Worker` over values
//! offered with a group key against the same number of plain values, runs
//! alternated on one server, medians of three. Offers happen before the
//! clock starts; grouped offers are one script each (no bulk form, not
//! joined), timed apart against plain single offers (joined into runs).
//! One key's line (each value waits for the ack of the one before) is
//! compared with plain values taken and acked one at a time: a Worker of
//! one slot on plain values claims ahead, which a key's line cannot.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::{Client, LongCodec, OfferOptions};
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

/// Values per run over many keys.
const VALUES: u64 = 20_000;
/// Values per run of one key, one at a time (each waits for the ack of the
/// one before: a round trip or three a value).
const SEQUENTIAL_VALUES: u64 = 2_000;
/// Runs of each side; the medians are compared.
const RUNS: usize = 3;

/// What a run offers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Plain values.
    Plain,
    /// Values over this many group keys, round robin.
    Grouped(u64),
}

/// One run: (values/s offered, values/s the worker handled).
async fn once(redis: &RedisServer, name: &str, kind: Kind, concurrency: usize) -> (f64, f64) {
    // Concurrency 1 runs the one-key comparison, on fewer values.
    let values = if concurrency == 1 { SEQUENTIAL_VALUES } else { VALUES };
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    // No transfer of its own: the loop below moves the plain values (with
    // one running, `transfer_now` found nothing and the loop never ended).
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    let started = Instant::now();
    futures_util::stream::iter(0..values as i64)
        .for_each_concurrent(256, |i| {
            let queue = queue.clone();
            async move {
                match kind {
                    Kind::Plain => queue.offer(&i, Duration::ZERO).await.unwrap(),
                    Kind::Grouped(keys) => {
                        let options = OfferOptions::default().group(format!("key-{}", i as u64 % keys));
                        queue.offer_with(&i, &options).await.unwrap()
                    }
                }
            }
        })
        .await;
    let offered = values as f64 / started.elapsed().as_secs_f64();
    if kind == Kind::Plain {
        // The plain values must be in the list before the clock starts, as
        // the grouped ones are in their lines.
        let mut moved = 0;
        while moved < values {
            moved += queue.transfer_now().await.unwrap().moved;
        }
    }
    if kind == Kind::Plain && concurrency == 1 {
        // The like-for-like baseline of one key's line: one value at a
        // time, each taken once the one before is acked.
        let reliable = client.reliable_queue(name, LongCodec).unwrap();
        let started = Instant::now();
        for _ in 0..values {
            reliable.take().await.unwrap().ack().await.unwrap();
        }
        let rate = values as f64 / started.elapsed().as_secs_f64();
        client.shutdown().await;
        return (offered, rate);
    }
    let handled = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let started = Instant::now();
    let worker = client.worker(name, LongCodec).unwrap().concurrency(concurrency).run({
        let (handled, done) = (handled.clone(), done.clone());
        move |_: i64| {
            if handled.fetch_add(1, Ordering::Relaxed) + 1 == values {
                done.notify_one();
            }
            async { Ok::<(), std::convert::Infallible>(()) }
        }
    });
    done.notified().await;
    let rate = values as f64 / started.elapsed().as_secs_f64();
    let report = worker.shutdown().await;
    assert_eq!(report.succeeded, values, "every value acked once: {report:?}");
    client.shutdown().await;
    (offered, rate)
}

/// Scenario 23. A Worker over grouped values against plain ones.
pub struct Groups;

impl Scenario for Groups {
    fn name(&self) -> &'static str {
        "groups"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            eprintln!("23. groups: a Worker over grouped values and over plain ones...");
            let redis = RedisServer::start().await;
            // (kind, concurrency) of each side, compared in pairs.
            let sides = [
                (Kind::Plain, 64),
                (Kind::Grouped(1_000), 64),
                (Kind::Plain, 1),
                (Kind::Grouped(1), 1),
            ];
            let mut offered = [vec![], vec![], vec![], vec![]];
            let mut handled = [vec![], vec![], vec![], vec![]];
            for run in 0..RUNS {
                for (s, (kind, concurrency)) in sides.into_iter().enumerate() {
                    let (o, h) = once(&redis, &format!("g{s}-{run}"), kind, concurrency).await;
                    offered[s].push(o);
                    handled[s].push(h);
                }
            }
            let [plain64, grouped64, plain1, sequential] = handled.map(crate::measure::median);
            let [offer_plain, offer_grouped, _, _] = offered.map(crate::measure::median);
            let values = thousands(VALUES);
            vec![
                Row::new(
                    "23. groups",
                    &format!("values/s, Worker concurrency(64), {values} ready over 1,000 group keys (one at a time per key)"),
                )
                .values(rate(grouped64), format!("{} (plain)", rate(plain64)))
                .ratio(grouped64 / plain64)
                // A grouped value costs about 20 Redis calls in the claim and
                // the ack (its key's line, turn and slot) against about 4.
                .target("≥ 0.20× plain", grouped64 / plain64 >= 0.2),
                Row::new(
                    "23. groups",
                    &format!(
                        "values/s, Worker concurrency(1), {} ready in one key (sequential)",
                        thousands(SEQUENTIAL_VALUES)
                    ),
                )
                .values(rate(sequential), format!("{} (plain, take then ack, one at a time)", rate(plain1)))
                .ratio(sequential / plain1)
                .target("≥ 0.50× plain", sequential / plain1 >= 0.5),
                Row::new("23. groups", "offers/s, 256 at once, each with a group key")
                    .values(rate(offer_grouped), format!("{} (plain)", rate(offer_plain)))
                    .ratio(offer_grouped / offer_plain),
            ]
        })
    }
}
