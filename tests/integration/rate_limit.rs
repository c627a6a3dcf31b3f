//! Worker rate limits: one limiter in Redis shared by every worker of a queue.

use std::sync::Arc;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{BoxError, LongCodec};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::harness::{deadline, eventually, RedisServer};

const VALUES: i64 = 150;
const LIMIT: u32 = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_clients_with_eight_handlers_share_one_rate_limit_and_handle_each_value_once() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let mut args: Vec<Value> = vec!["paid".into()];
        args.extend((0..VALUES).map(Value::from));
        raw.cmd("RPUSH", args).await; // all ready at once: only the limit holds them back

        let handled: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::default();
        let mut clients = Vec::new();
        let mut workers = Vec::new();
        for _ in 0..4 {
            let client = redis.client().await;
            let handled = handled.clone();
            workers.push(
                client
                    .worker("paid", LongCodec)
                    .unwrap()
                    .concurrency(8)
                    .rate_limit(LIMIT, Duration::from_secs(1))
                    .run(move |value: i64| {
                        let handled = handled.clone();
                        async move {
                            handled.lock().push((value, Instant::now()));
                            Ok::<_, BoxError>(())
                        }
                    }),
            );
            clients.push(client);
        }
        eventually(Duration::from_secs(60), "every value handled", || async {
            handled.lock().len() >= VALUES as usize
        })
        .await;
        let mut reports = Vec::new();
        for worker in workers {
            reports.push(worker.shutdown().await);
        }
        let handled = handled.lock().clone();
        let mut values: Vec<i64> = handled.iter().map(|(v, _)| *v).collect();
        values.sort_unstable();
        assert_eq!(
            values,
            (0..VALUES).collect::<Vec<_>>(),
            "each value handled exactly once, none lost"
        );
        assert!(
            reports.iter().all(|r| r.handled > 0),
            "every process took part: {reports:?}"
        );

        let first = handled.iter().map(|(_, t)| *t).min().unwrap();
        let last = handled.iter().map(|(_, t)| *t).max().unwrap();
        let rate = (handled.len() - 1) as f64 / (last - first).as_secs_f64();
        println!(
            "rate limit {LIMIT}/s, 4 clients x 8 handlers: {} values in {:.2} s = {rate:.1}/s ({:+.1}% of the limit)",
            handled.len(),
            (last - first).as_secs_f64(),
            (rate / f64::from(LIMIT) - 1.0) * 100.0
        );
        // Loose sanity only: unlimited, 32 handlers would take these in milliseconds.
        assert!(rate < f64::from(LIMIT) * 2.0, "the limit holds: {rate:.1}/s");
        let state = raw
            .cmd("PTTL", vec![delayq::QueueKeys::new("paid").unwrap().rate().into()])
            .await;
        assert!(
            matches!(state, Value::Integer(ms) if ms > 0 || ms == -2),
            "the limiter's key expires: {state:?}"
        );
        for client in clients {
            client.shutdown().await;
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_worker_leaves_values_it_cannot_start_in_the_queue() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let mut args: Vec<Value> = vec!["slow".into()];
        args.extend((0..20i64).map(Value::from));
        raw.cmd("RPUSH", args).await;
        let client = redis.client().await;
        let worker = client
            .worker("slow", LongCodec)
            .unwrap()
            .concurrency(8)
            .rate_limit(2, Duration::from_secs(1))
            .run(|_: i64| async { Ok::<_, BoxError>(()) });
        let reliable = client.reliable_queue("slow", LongCodec).unwrap();
        eventually(Duration::from_secs(30), "a few handled", || async {
            reliable.len().await.unwrap() <= 17
        })
        .await;
        // Waiting for a permit holds no delivery: nothing sits in flight
        // beyond the values being handled right now.
        assert!(reliable.in_flight().await.unwrap() <= 1);
        worker.shutdown().await;
        assert!(
            reliable.len().await.unwrap() >= 10,
            "the rest stays in the queue for any consumer"
        );
        client.shutdown().await;
    })
    .await;
}
