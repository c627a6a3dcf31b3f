//! Scenario 6: Redis memory per pending element with 100-byte payloads.

use std::time::Duration;

use bytes::Bytes;
use delayq::fred::types::Value;
use delayq::{BytesCodec, Client};

use crate::admin::Admin;
use crate::report::Row;
use crate::scenario::{Context, Rows, Scenario};
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

/// Scenario 6. Redis memory per pending element.
pub struct MemoryPerElement;

impl Scenario for MemoryPerElement {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("6. memory per pending element...");
            let redis = RedisServer::start().await;
            let per_element = run(&redis).await;
            rows.push(
                Row::new("6. memory", "Redis bytes per pending element, 100-byte payload")
                    .values(format!("{per_element:.0} B"), format!("{} B (the payload)", PAYLOAD))
                    .ratio(per_element / PAYLOAD as f64)
                    .note("timeout set + pending list"),
            );
            rows
        })
    }
}
