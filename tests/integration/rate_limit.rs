//! Worker rate limits: one limiter in Redis shared by every worker of a queue.

use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::fred::types::Value;
use delayq::{LongCodec, QueueKeys};
use parking_lot::Mutex;
use tokio::time::Instant;

use delayq_test_support::{deadline, eventually, redis_test, Monitor, RawRedis, RedisServer};

const VALUES: i64 = 150;
const LIMIT: u32 = 50;

redis_test! {
    async fn four_clients_with_eight_handlers_share_one_rate_limit_and_handle_each_value_once(redis, raw) {
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
    }
}

redis_test! {
    async fn a_rate_limited_worker_leaves_values_it_cannot_start_in_the_queue(redis, raw) {
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
    }
}

redis_test! {
    async fn values_arriving_after_an_idle_spell_do_not_start_in_a_burst(redis, raw) {
        const LIMIT: usize = 20;
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
    }
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

const HOUR_US: i64 = 3_600_000_000;

/// The Redis server's clock, µs.
async fn server_us(raw: &RawRedis) -> i64 {
    match raw.cmd("TIME", vec![]).await {
        Value::Array(parts) => {
            let part = |i: usize| parts[i].as_str().unwrap().parse::<i64>().unwrap();
            part(0) * 1_000_000 + part(1)
        }
        other => panic!("TIME answered {other:?}"),
    }
}

/// Runs `lua/rate_limit.lua` by hand with an interval of an hour, a burst
/// of 2 and a catch-up of half an hour: `op` and its arguments -> its reply.
async fn limiter(raw: &RawRedis, keys: &QueueKeys, op: &str, args: &[Value]) -> Vec<Value> {
    let body = delayq_test_support::script_body(include_str!("../../lua/rate_limit.lua"));
    let mut argv: Vec<Value> = vec![
        body.into(),
        2.into(),
        keys.rate().into(),
        keys.paused().into(),
        HOUR_US.into(),
        HOUR_US.into(),
        (HOUR_US / 2).into(),
        op.into(),
    ];
    argv.extend(args.iter().cloned());
    match raw.cmd("EVAL", argv).await {
        Value::Array(reply) => reply,
        other => panic!("rate_limit answered {other:?}"),
    }
}

fn us(value: &Value) -> i64 {
    value.as_str().unwrap().parse().unwrap()
}

redis_test! {
    async fn the_limiter_spaces_permits_on_the_server_clock_and_a_refund_restores_only_the_last_permit(raw) {
        let keys = QueueKeys::new("spaced").unwrap();
        let stored = || async { raw.cmd("GET", vec![keys.rate().into()]).await };

        // A full bucket: the burst at once, the first charged at its own time.
        let before = server_us(&raw).await;
        let first = limiter(&raw, &keys, "take", &[]).await;
        let after = server_us(&raw).await;
        assert_eq!((first[0].as_i64(), first[1].as_str().as_deref()), (Some(0), Some("0")));
        let first_after = us(&first[2]);
        assert!((before + HOUR_US..=after + HOUR_US).contains(&first_after), "{first:?}");
        let second = limiter(&raw, &keys, "take", &[]).await;
        assert_eq!(second[0].as_i64(), Some(0));
        assert_eq!(us(&second[1]), first_after);
        let second_after = us(&second[2]);
        assert_eq!(second_after, first_after + HOUR_US, "spaced by the interval");
        // The third waits for the first to age out: about an hour.
        let third = limiter(&raw, &keys, "take", &[]).await;
        assert_eq!(third[0].as_i64(), Some(1), "{third:?}");
        let wait = third[1].as_i64().unwrap();
        assert!(wait > HOUR_US - 60_000_000 && wait <= HOUR_US, "{wait} µs");
        assert_eq!(us(&stored().await), second_after, "a refused take changes nothing");

        // Refunds: only the last permit; the first, refunded while the
        // second stands, is spent (giving it back would let the second's
        // successor come an interval early).
        let refund = |permit: &Vec<Value>| vec![permit[1].clone(), permit[2].clone()];
        limiter(&raw, &keys, "refund", &refund(&first)).await;
        assert_eq!(us(&stored().await), second_after);
        limiter(&raw, &keys, "refund", &refund(&second)).await;
        assert_eq!(us(&stored().await), first_after, "the state before the second");
        // A refund applied twice (a resend) would give back another permit.
        limiter(&raw, &keys, "refund", &refund(&second)).await;
        assert_eq!(us(&stored().await), first_after, "a second refund of it does nothing");
        limiter(&raw, &keys, "refund", &refund(&first)).await;
        assert_eq!(stored().await, Value::Null, "back to the full bucket");

        // An asker late by at most the catch-up is charged at its turn; one
        // after a longer quiet spell, at its own time.
        let late = server_us(&raw).await - HOUR_US / 6;
        raw.cmd("SET", vec![keys.rate().into(), late.to_string().into()]).await;
        let caught_up = limiter(&raw, &keys, "take", &[]).await;
        assert_eq!(us(&caught_up[2]), late + HOUR_US, "{caught_up:?}");
        let quiet = server_us(&raw).await - HOUR_US;
        raw.cmd("SET", vec![keys.rate().into(), quiet.to_string().into()]).await;
        let before = server_us(&raw).await;
        let fresh = limiter(&raw, &keys, "take", &[]).await;
        assert!(us(&fresh[2]) >= before + HOUR_US, "{fresh:?}");

        // Paused: no permit, and the state stays.
        let state = stored().await;
        raw.cmd("SET", vec![keys.paused().into(), "1".into()]).await;
        assert_eq!(limiter(&raw, &keys, "take", &[]).await, vec![Value::Integer(2)]);
        assert_eq!(stored().await, state);
    }
}

/// The limiter's script, loaded so that each call is one `EVALSHA` (not a
/// `NOSCRIPT` answer and an `EVAL`) for [`limiter_calls`] to count.
async fn load_limiter(raw: &RawRedis) {
    let body = delayq_test_support::script_body(include_str!("../../lua/rate_limit.lua"));
    raw.cmd("SCRIPT", vec!["LOAD".into(), body.into()]).await;
}

/// Limiter calls (`take` or `refund`) of a queue that the monitor saw.
async fn limiter_calls(monitor: &Monitor, queue: &str, op: &str) -> usize {
    let key = QueueKeys::new(queue).unwrap().rate();
    monitor
        .entries()
        .await
        .iter()
        .filter(|e| !e.from_lua && e.name().starts_with("eval"))
        .filter(|e| e.args.iter().any(|a| a == key.as_bytes()) && e.args.iter().any(|a| a == op.as_bytes()))
        .count()
}

redis_test! {
    async fn a_permit_whose_value_another_consumer_took_is_given_back(redis, raw) {
        let other = redis.raw().await;
        load_limiter(&raw).await;
        let monitor = redis.monitor().await;
        // Its wait for a value stays first in line for the test's span (a
        // wait that timed out and came back would queue behind the other).
        let client = redis
            .client_builder()
            .blocking_timeout(Duration::from_secs(60))
            .build()
            .await
            .unwrap();
        let handled: Arc<Mutex<Vec<String>>> = Arc::default();
        // One permit an hour: without its refund, the next value would wait that long.
        let worker = client
            .worker("raced", delayq::StringCodec)
            .unwrap()
            .rate_limit(1, Duration::from_secs(3600))
            .run({
                let handled = handled.clone();
                move |value: String| {
                    let handled = handled.clone();
                    async move {
                        handled.lock().push(value);
                        Ok::<_, BoxError>(())
                    }
                }
            });
        let blocked = || async { raw.info_field("clients", "blocked_clients").await };
        eventually(Duration::from_secs(20), "the worker waits for a value", || async {
            blocked().await == "1"
        })
        .await;
        // Another consumer waits behind it: Redis serves the worker's wait
        // first, then that consumer takes the value.
        let popped = tokio::spawn(async move { other.cmd("BLPOP", vec!["raced".into(), 20.into()]).await });
        eventually(Duration::from_secs(20), "the other consumer waits", || async {
            blocked().await == "2"
        })
        .await;
        raw.cmd("RPUSH", vec!["raced".into(), "taken elsewhere".into()]).await;
        let popped = popped.await.unwrap();
        assert!(matches!(&popped, Value::Array(v) if v.len() == 2), "{popped:?}");
        eventually(
            Duration::from_secs(20),
            "the worker's permit, then its refund",
            || async { limiter_calls(&monitor, "raced", "refund").await == 1 },
        )
        .await;
        assert_eq!(limiter_calls(&monitor, "raced", "take").await, 1);
        assert_eq!(
            raw.cmd("EXISTS", vec![QueueKeys::new("raced").unwrap().rate().into()])
                .await,
            Value::Integer(0),
            "the bucket is full again"
        );
        raw.cmd("RPUSH", vec!["raced".into(), "mine".into()]).await;
        eventually(Duration::from_secs(20), "the next value handled at once", || async {
            handled.lock().len() == 1
        })
        .await;
        assert_eq!(*handled.lock(), ["mine"]);
        worker.shutdown().await;
        client.shutdown().await;
    }
}

redis_test! {
    async fn rate_limited_workers_of_a_paused_queue_move_nothing_until_the_resume(redis, raw) {
        load_limiter(&raw).await;
        let monitor = redis.monitor().await;
        let admin = redis.client().await;
        let delayed = admin.delayed_queue("held", LongCodec).unwrap().without_transfer();
        delayed.pause().await.unwrap();
        admin
            .blocking_queue("held", LongCodec)
            .unwrap()
            .offer_all(0..6i64)
            .await
            .unwrap();
        let handled: Arc<Mutex<Vec<i64>>> = Arc::default();
        let mut clients = Vec::new();
        let mut workers = Vec::new();
        for _ in 0..2 {
            let client = redis.client().await;
            let handled = handled.clone();
            workers.push(
                client
                    .worker("held", LongCodec)
                    .unwrap()
                    .concurrency(4)
                    .rate_limit(50, Duration::from_secs(1))
                    .run(move |value: i64| {
                        let handled = handled.clone();
                        async move {
                            handled.lock().push(value);
                            Ok::<_, BoxError>(())
                        }
                    }),
            );
            clients.push(client);
        }
        // Each worker asks, is told the queue is paused, and asks again later.
        eventually(Duration::from_secs(30), "both workers asked twice", || async {
            limiter_calls(&monitor, "held", "take").await >= 4
        })
        .await;
        let moves = monitor
            .entries()
            .await
            .iter()
            .filter(|e| !e.from_lua && e.name() == "lmove")
            .count();
        assert_eq!(moves, 0, "no value moved out (and back) while paused");
        assert!(handled.lock().is_empty());
        assert_eq!(raw.llen("held").await, 6);
        delayed.resume().await.unwrap();
        eventually(Duration::from_secs(30), "all handled after the resume", || async {
            handled.lock().len() == 6
        })
        .await;
        for worker in workers {
            worker.shutdown().await;
        }
        let mut values = handled.lock().clone();
        values.sort_unstable();
        assert_eq!(values, (0..6).collect::<Vec<_>>());
        for client in clients {
            client.shutdown().await;
        }
        admin.shutdown().await;
    }
}
