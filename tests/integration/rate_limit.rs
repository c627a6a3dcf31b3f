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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_arriving_after_an_idle_spell_do_not_start_in_a_burst() {
    deadline(async {
        const LIMIT: usize = 20;
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let started: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let mut clients = Vec::new();
        let mut workers = Vec::new();
        for _ in 0..4 {
            let client = redis.client().await;
            let started = started.clone();
            workers.push(
                client
                    .worker("idle", LongCodec)
                    .unwrap()
                    .concurrency(8)
                    .rate_limit(LIMIT as u32, Duration::from_secs(1))
                    .run(move |_: i64| {
                        let started = started.clone();
                        async move {
                            started.lock().push(Instant::now());
                            Ok::<_, BoxError>(())
                        }
                    }),
            );
            clients.push(client);
        }
        // Idle: no process holds a permit (each used to hold one, waiting
        // for a value, and start it at once when values came).
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let pushed = Instant::now();
        let mut args: Vec<Value> = vec!["idle".into()];
        args.extend((0..3 * LIMIT as i64).map(Value::from));
        raw.cmd("RPUSH", args).await;
        eventually(Duration::from_secs(60), "all handled", || async {
            started.lock().len() >= 3 * LIMIT
        })
        .await;
        for worker in workers {
            worker.shutdown().await;
        }
        let mut times = started.lock().clone();
        times.sort_unstable();
        let first_second = times.iter().filter(|t| **t - pushed < Duration::from_secs(1)).count();
        println!("after an idle spell, {first_second} values started in the first second (limit {LIMIT}/s)");
        // Every permit comes after the push, one per interval (burst 1), and
        // each start after its permit: the 21st no sooner than a second on.
        assert!(first_second <= LIMIT, "{first_second} started in the first second");
        let early = early_starts(pushed, &times, LIMIT as u32, 1);
        assert!(
            early.is_empty(),
            "starts (number, after the push) before the limit allows them: {early:?}"
        );
        for client in clients {
            client.shutdown().await;
        }
    })
    .await;
}

/// Starts, sorted, that came earlier than the limit allows when counted
/// from `from`: start k (1-based) may come no sooner than `(k - burst)`
/// intervals after it. Empty when the limit held.
fn early_starts(from: Instant, starts: &[Instant], limit: u32, burst: u32) -> Vec<(usize, Duration)> {
    let interval = Duration::from_secs(1) / limit;
    starts
        .iter()
        .enumerate()
        .map(|(i, at)| (i + 1, *at - from))
        .filter(|(k, after)| *k > burst as usize && *after < interval * (*k as u32 - burst))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_idle_spell_six_processes_start_at_most_the_burst_in_the_first_interval() {
    deadline(async {
        // Small: 200 ms between permits, so that the bound is far from the
        // machine's timer and scheduling noise.
        const LIMIT: u32 = 5;
        const BURST: u32 = 2;
        const PROCESSES: usize = 6;
        const VALUES: i64 = 14;
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let started: Arc<Mutex<Vec<(i64, Instant)>>> = Arc::default();
        let mut clients = Vec::new();
        let mut workers = Vec::new();
        for _ in 0..PROCESSES {
            // A client each, as separate processes would have.
            let client = redis.client().await;
            let started = started.clone();
            workers.push(
                client
                    .worker("fleet", LongCodec)
                    .unwrap()
                    .concurrency(4)
                    .rate_limit(LIMIT, Duration::from_secs(1))
                    .rate_limit_burst(BURST)
                    .run(move |value: i64| {
                        let started = started.clone();
                        async move {
                            started.lock().push((value, Instant::now()));
                            Ok::<_, BoxError>(())
                        }
                    }),
            );
            clients.push(client);
        }
        // Idle far longer than the bucket takes to refill (2 intervals).
        tokio::time::sleep(Duration::from_secs(2)).await;
        // Every permit is granted after this instant (the values were not
        // there before), and each start comes after its permit: a slow
        // machine makes starts later, never more of them before a bound.
        let pushed = Instant::now();
        let mut args: Vec<Value> = vec!["fleet".into()];
        args.extend((0..VALUES).map(Value::from));
        raw.cmd("RPUSH", args).await;
        eventually(Duration::from_secs(60), "every value handled", || async {
            started.lock().len() >= VALUES as usize
        })
        .await;
        for worker in workers {
            worker.shutdown().await;
        }
        let started = started.lock().clone();
        let mut values: Vec<i64> = started.iter().map(|(v, _)| *v).collect();
        values.sort_unstable();
        assert_eq!(values, (0..VALUES).collect::<Vec<_>>(), "each value handled once");
        let mut starts: Vec<Instant> = started.iter().map(|(_, at)| *at).collect();
        starts.sort_unstable();
        let interval = Duration::from_secs(1) / LIMIT;
        let first_interval = starts.iter().filter(|at| **at - pushed < interval).count();
        println!(
            "{PROCESSES} processes at {LIMIT}/s, burst {BURST}, after an idle spell: {first_interval} started in the first {interval:?}; starts after the push: {:?}",
            starts.iter().map(|at| (*at - pushed).as_millis()).collect::<Vec<_>>()
        );
        assert!(
            first_interval <= BURST as usize,
            "{first_interval} handlers started within {interval:?} of the values' arrival (burst {BURST})"
        );
        // Over longer windows from the arrival: within t, at most BURST + t x LIMIT.
        let early = early_starts(pushed, &starts, LIMIT, BURST);
        assert!(early.is_empty(), "starts (number, after the push) before the limit allows them: {early:?}");
        for client in clients {
            client.shutdown().await;
        }
    })
    .await;
}
