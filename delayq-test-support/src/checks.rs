//! Checks on what the library did that several test files make: a request
//! dropped in flight, each value taken once, stored replies settled.

use std::future::Future;
use std::time::Duration;

use delayq::fred::types::Value;

use crate::{eventually, RawRedis};

/// Polls `f` until it has sent its command, then drops it (usually before
/// the reply comes); returns its output if it finished first anyway.
pub async fn drop_in_flight<F: Future>(f: F) -> Option<F::Output> {
    tokio::select! {
        biased;
        out = f => Some(out),
        _ = tokio::task::yield_now() => None,
    }
}

/// Asserts that each of the values `0..n` was taken exactly once by the
/// `takers` (each returns what it took) or is still in `queue`'s list, once
/// the values given back for takes that stopped waiting have settled.
pub async fn assert_each_taken_once_or_left(
    takers: Vec<tokio::task::JoinHandle<Vec<i64>>>,
    queue: &delayq::BlockingQueue<i64>,
    n: i64,
) {
    let mut seen = std::collections::HashMap::<i64, usize>::new();
    for taker in takers {
        for v in taker.await.unwrap() {
            *seen.entry(v).or_default() += 1;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    while let Some(v) = queue.try_take().await.unwrap() {
        *seen.entry(v).or_default() += 1;
    }
    assert_eq!(seen.len() as i64, n, "every value taken or still in the list");
    assert!(seen.values().all(|&times| times == 1), "no value twice");
}

/// Waits until every reply stored for the queue tagged `tag` has been read
/// and marked consumed (`src/connection/request.rs`): that mark is written in the
/// background, and it must not be the next request the proxy sees.
pub async fn settled(raw: &RawRedis, tag: &str) {
    let pattern = format!("delayq_request:{{{tag}}}*");
    eventually(Duration::from_secs(20), "stored replies marked read", || async {
        let Value::Array(keys) = raw.cmd("KEYS", vec![Value::from(pattern.as_str())]).await else {
            return false;
        };
        for key in keys {
            // cmsgpack: a 3-element array is a reply still stored ('done').
            if let Value::Bytes(record) = raw.cmd("GET", vec![key]).await
                && record.first() == Some(&0x93)
            {
                return false;
            }
        }
        true
    })
    .await;
}
