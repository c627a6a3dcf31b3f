//! End-to-end demo: a producer schedules orders with different delays; a
//! worker handles each one when it comes due, retries one that fails once,
//! and dead-letters one that can never succeed.
//!
//! Run with `./scripts/demo.sh` (starts its own Redis and shows
//! `delayq inspect` on the live queue), or against your own:
//! `REDIS_URL=redis://127.0.0.1:6379 cargo run --example demo`.
//!
//! A Java service could take the part of either side: it would use
//! `redisson.getDelayedQueue(redisson.getBlockingQueue("demo-orders", new TypedJsonJacksonCodec(Order.class)))`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use delayq::error::BoxError;
use delayq::fred::interfaces::KeysInterface;
use delayq::worker::{Permanent, RetryPolicy};
use delayq::{Client, JsonCodec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
struct Order {
    id: String,
    amount: i64,
    /// When the order should be processed, ms since the epoch.
    due_ms: u128,
}

fn now_ms() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis()
}

#[tokio::main]
async fn main() -> delayq::Result<()> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    println!("connecting to {url}");
    let client = Client::connect(&url).await?;

    // Producer: a delayed queue (a fresh one each run).
    let delayed = client.delayed_queue("demo-orders", JsonCodec::<Order>::new())?;
    delayed.clear().await?;
    let _: i64 = client.redis().del(delayed.keys().dead_letter()).await?;
    let delays_ms = [3_000u64, 2_000, 4_000, 2_500, 3_500];
    let start = now_ms();
    let orders: Vec<(Order, Duration)> = delays_ms
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let order = Order {
                id: format!("order-{i}"),
                // order-3 is invalid: no retry can fix it.
                amount: if i == 3 { 0 } else { 100 * (i as i64 + 1) },
                due_ms: start + d as u128,
            };
            (order, Duration::from_millis(d))
        })
        .collect();
    delayed.offer_all(orders.iter().map(|(o, d)| (o, *d))).await?;
    println!("offered {} orders, due in 2 to 4 s", orders.len());

    // Consumer: a worker with 4 handlers at most, 3 attempts 500 ms apart.
    let failed_once = Arc::new(Mutex::new(HashSet::new()));
    let worker = client
        .worker("demo-orders", JsonCodec::<Order>::new())?
        .concurrency(4)
        .retry(RetryPolicy::fixed(Duration::from_millis(500)).max_attempts(3))
        .on_error(|failure| {
            println!(
                "           attempt {} failed: {} -> {:?}",
                failure.attempt(),
                failure.error(),
                failure.action()
            )
        })
        .run(move |order: Order| {
            let failed_once = failed_once.clone();
            async move {
                let late = now_ms() as i128 - order.due_ms as i128;
                let at = now_ms() - start;
                if order.amount <= 0 {
                    println!("t+{at:>5} ms  {} has amount {}: rejected", order.id, order.amount);
                    return Err(BoxError::from(Permanent::new(format!("{}: invalid amount", order.id))));
                }
                if order.id == "order-1" && failed_once.lock().unwrap().insert(order.id.clone()) {
                    println!(
                        "t+{at:>5} ms  {} (due t+{} ms): payment gateway timed out",
                        order.id,
                        order.due_ms - start
                    );
                    return Err("payment gateway timed out".into());
                }
                println!(
                    "t+{at:>5} ms  handled {} (amount {:>3}), due at t+{:>5} ms, {late} ms after due",
                    order.id,
                    order.amount,
                    order.due_ms - start
                );
                Ok(())
            }
        });

    while worker.report().succeeded + worker.report().dead_lettered < orders.len() as u64 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let report = worker.shutdown().await;
    println!(
        "done: {} handled, {} retried, {} dead-lettered; pending left: {}",
        report.succeeded,
        report.retried,
        report.dead_lettered,
        delayed.len().await?
    );
    client.shutdown().await;
    Ok(())
}
