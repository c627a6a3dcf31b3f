//! Where a delivery's lateness goes, part by part, measured in the same run
//! as scenario 2: how late each kind of timer wakes, one transfer script's
//! round trip, and how long a value pushed to a list takes to reach a
//! `take()` already waiting on it.

use std::time::Duration;

use delayq::{Client, LongCodec};
use parking_lot::{Condvar, Mutex};
use tokio::time::Instant;

use crate::measure::{now_ms_f64, percentiles};
use crate::RedisServer;

const SAMPLES: usize = 300;

/// (p50, p99) in ms of each part.
pub struct Parts {
    pub tokio_sleep: (f64, f64),
    pub precise_sleep: (f64, f64),
    pub transfer_script: (f64, f64),
    pub push_to_take: (f64, f64),
}

fn p50_p99(values: Vec<f64>) -> (f64, f64) {
    let (p50, p99, _) = percentiles(values);
    (p50, p99)
}

/// A random wait of 1–5 ms, as between due times at 2,000/s.
fn wait() -> Duration {
    Duration::from_micros(fastrand::u64(1_000..5_000))
}

pub async fn run(redis: &RedisServer) -> Parts {
    // tokio's timer: what the wheel alone gave.
    let mut late = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let at = Instant::now() + wait();
        tokio::time::sleep_until(at).await;
        late.push(at.elapsed().as_secs_f64() * 1000.0);
    }
    let tokio_sleep = p50_p99(late);

    // A condition variable's timed wait on a thread of its own, as the
    // transfer's precise timer does (the wake reaches the waiter's thread).
    let precise_sleep = tokio::task::spawn_blocking(|| {
        let (lock, cond) = (Mutex::new(()), Condvar::new());
        let mut late = Vec::with_capacity(SAMPLES);
        let mut guard = lock.lock();
        for _ in 0..SAMPLES {
            let at = std::time::Instant::now() + wait();
            while std::time::Instant::now() < at {
                cond.wait_until(&mut guard, at);
            }
            late.push(at.elapsed().as_secs_f64() * 1000.0);
        }
        p50_p99(late)
    })
    .await
    .unwrap();

    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let queue = client.delayed_queue("parts", LongCodec).unwrap().without_transfer();
    let destination = queue.destination();
    // One transfer script moving one due element, round trip.
    let mut script = Vec::with_capacity(SAMPLES);
    for i in 0..SAMPLES as i64 {
        queue.offer(&i, Duration::ZERO).await.unwrap();
        let t = Instant::now();
        let moved = queue.transfer_now().await.unwrap();
        script.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(moved.moved, 1);
        destination.try_take().await.unwrap();
    }
    let transfer_script = p50_p99(script);

    // A value pushed by another connection reaching a waiting take().
    let pusher = Client::builder().url(redis.url()).build().await.unwrap();
    let target = pusher.blocking_queue("parts-push", LongCodec).unwrap();
    let taker = client.blocking_queue("parts-push", LongCodec).unwrap();
    let mut reach = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let waiting = tokio::spawn({
            let taker = taker.clone();
            async move { (taker.take().await.unwrap(), now_ms_f64()) }
        });
        tokio::time::sleep(Duration::from_millis(3)).await; // the take is blocked by now
        let sent = now_ms_f64();
        target.offer(&((sent * 1000.0) as i64)).await.unwrap();
        let (value, got) = waiting.await.unwrap();
        reach.push(got - value as f64 / 1000.0);
    }
    let push_to_take = p50_p99(reach);
    pusher.shutdown().await;
    client.shutdown().await;
    Parts {
        tokio_sleep,
        precise_sleep,
        transfer_script,
        push_to_take,
    }
}
