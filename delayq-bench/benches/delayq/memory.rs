//! Scenario 6: Redis memory per pending element with 100-byte payloads.

use std::time::Duration;

use bytes::Bytes;
use delayq::fred::types::Value;
use delayq::{BytesCodec, Client};

use crate::admin::Admin;
use crate::RedisServer;

pub const ELEMENTS: usize = 100_000;
pub const PAYLOAD: usize = 100;

/// Bytes of Redis memory per pending element (timeout set + pending list).
pub async fn run(redis: &RedisServer) -> f64 {
    let admin = Admin::connect(&redis.url()).await;
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let queue = client
        .delayed_queue::<Bytes, _>("memory", BytesCodec)
        .unwrap()
        .without_transfer();
    for chunk in (0..ELEMENTS).collect::<Vec<_>>().chunks(1_000) {
        let items = chunk.iter().map(|_| {
            let payload: Vec<u8> = (0..PAYLOAD).map(|_| fastrand::alphanumeric() as u8).collect();
            (Bytes::from(payload), Duration::from_secs(3600 + fastrand::u64(0..3600)))
        });
        queue.offer_all(items).await.unwrap();
    }
    let mut total = 0;
    for key in [queue.keys().pending(), queue.keys().timeout()] {
        let usage = admin
            .cmd("MEMORY", vec!["USAGE".into(), key.into(), "SAMPLES".into(), 0.into()])
            .await;
        total += match usage {
            Value::Integer(n) => n,
            other => panic!("MEMORY USAGE: {other:?}"),
        };
    }
    client.shutdown().await;
    total as f64 / ELEMENTS as f64
}
