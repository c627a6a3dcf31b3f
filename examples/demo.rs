//! End-to-end demo: a producer schedules orders with different delays, a
//! worker takes each one when it comes due and prints how late it was.
//!
//! Run with `./scripts/demo.sh` (starts its own Redis), or against your own:
//! `REDIS_URL=redis://127.0.0.1:6379 cargo run --example demo`.
//!
//! A Java service could take the part of either side: it would use
//! `redisson.getDelayedQueue(redisson.getBlockingQueue("demo-orders", new TypedJsonJacksonCodec(Order.class)))`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

    // Producer: a delayed queue. While this handle lives, the client moves due orders.
    let delayed = client.delayed_queue("demo-orders", JsonCodec::<Order>::new())?;
    delayed.clear().await?;
    let delays_ms = [2_500u64, 500, 1_500, 1_000, 2_000];
    let start = now_ms();
    let orders: Vec<(Order, Duration)> = delays_ms
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let order = Order {
                id: format!("order-{i}"),
                amount: 100 * (i as i64 + 1),
                due_ms: start + d as u128,
            };
            (order, Duration::from_millis(d))
        })
        .collect();
    delayed.offer_all(orders.iter().map(|(o, d)| (o, *d))).await?;
    println!(
        "offered {} orders; pending: {:?}",
        orders.len(),
        delayed.read_all().await?.iter().map(|o| &o.id).collect::<Vec<_>>()
    );

    // Consumer: the destination list, read with a blocking take.
    let worker = client.blocking_queue("demo-orders", JsonCodec::<Order>::new())?;
    for _ in 0..orders.len() {
        let order = worker.take().await?;
        let late = now_ms() as i128 - order.due_ms as i128;
        println!(
            "t+{:>5} ms  took {} (amount {:>3}), due at t+{:>5} ms, {late} ms late",
            now_ms() - start,
            order.id,
            order.amount,
            order.due_ms - start
        );
    }
    println!(
        "pending left: {}, transferred by this client: {}",
        delayed.len().await?,
        client.stats().transferred
    );
    client.shutdown().await;
    Ok(())
}
