use std::time::Duration;

use delayq::{Client, JsonCodec};

#[derive(serde::Serialize, serde::Deserialize)]
struct Order {
    id: String,
    amount: i64,
}

#[tokio::main]
async fn main() -> delayq::Result<()> {
    let client = Client::connect("redis://127.0.0.1:6379").await?;

    // Producer — Java: redisson.getDelayedQueue(redisson.getBlockingQueue("orders", codec))
    let delayed = client.delayed_queue("orders", JsonCodec::<Order>::new())?;
    let order = Order {
        id: "o-1".into(),
        amount: 1234,
    };
    delayed.offer(&order, Duration::from_secs(10)).await?;

    // Consumer — Java: redisson.getBlockingQueue("orders", codec).take()
    let orders = client.blocking_queue("orders", JsonCodec::<Order>::new())?;
    let order = orders.take().await?; // ten seconds later
    println!("order {} for {}", order.id, order.amount);
    client.shutdown().await;
    Ok(())
}
