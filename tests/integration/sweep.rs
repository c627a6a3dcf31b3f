//! Sweeps of a deep backlog with large payloads, by several clients at once:
//! each sweep window reads a bounded share of the list (counted in Redis's
//! own log of every command), one client sweeps at a time, and every due
//! element arrives once, never early. How long the scripts take is the
//! benchmark's to measure (scenario 3), not a test's: a loaded machine makes
//! every script slow.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use delayq::fred::prelude::*;
use delayq::fred::types::Value;
use delayq::StringCodec;
use parking_lot::Mutex;

use delayq_test_support::{deadline, eventually, now_ms, redis_test, RedisServer};

/// The bytes of the list one sweep window may read (`transfer/run.rs`
/// `SWEEP_BYTES`). A pass over the list takes at least its bytes / this many
/// windows; the bug this guards against read 10,000 elements a window
/// (100 MB of 10 KB payloads, ~500 ms a script).
const SWEEP_BYTES: usize = 1 << 20;

/// `{index}:{due ms}:` padded to `size` bytes.
fn payload(i: usize, due_ms: i64, size: usize) -> String {
    let mut s = format!("{i}:{due_ms}:");
    s.extend(std::iter::repeat_n('x', size.saturating_sub(s.len())));
    s
}

fn parse(payload: &str) -> (usize, i64) {
    let mut parts = payload.splitn(3, ':');
    let i = parts.next().unwrap().parse().unwrap();
    let due = parts.next().unwrap().parse().unwrap();
    (i, due)
}

/// Every run of `lua/sweep_window.lua` in `SLOWLOG` (which logs every
/// command here): each one's duration (µs), for the report.
async fn sweep_windows(raw: &delayq_test_support::RawRedis) -> Vec<i64> {
    let sha = delayq_test_support::script_sha1(include_str!("../../lua/sweep_window.lua"));
    let Value::Array(entries) = raw.cmd("SLOWLOG", vec!["GET".into(), "-1".into()]).await else {
        panic!("SLOWLOG GET");
    };
    entries
        .into_iter()
        .filter_map(|entry| {
            let Value::Array(fields) = entry else { return None };
            let Value::Array(args) = &fields[3] else { return None };
            let command = args.first()?.as_string()?.to_ascii_lowercase();
            let script = args.get(1)?.as_string()?;
            (command == "evalsha" && script == sha).then(|| fields[2].as_i64().unwrap())
        })
        .collect()
}

/// `total` elements of `size` bytes offered in order: every fifth already due,
/// every fifth (the next) due in 2–3 s, the rest in an hour; three clients
/// transfer the queue. Returns the server-measured script durations (µs).
async fn three_clients_sweep(total: usize, size: usize) {
    let redis = RedisServer::start().await;
    let raw = redis.raw().await;
    let producer = redis.client().await;
    let name = format!("deep{size}");
    let q = producer.delayed_queue(&name, StringCodec).unwrap().without_transfer();
    let keys = q.keys().clone();
    let started = now_ms();
    let class = |i: usize| i % 5;
    let delay = |i: usize| match class(i) {
        0 => Duration::ZERO,
        1 => Duration::from_millis(2_000 + (i as u64 * 7) % 1_000),
        _ => Duration::from_secs(3600),
    };
    for chunk in (0..total).collect::<Vec<_>>().chunks(500) {
        let items: Vec<(String, Duration)> = chunk
            .iter()
            .map(|&i| (payload(i, started + delay(i).as_millis() as i64, size), delay(i)))
            .collect();
        q.offer_all(items).await.unwrap();
    }
    assert_eq!(raw.llen(keys.pending()).await, total);
    let expected: Vec<usize> = (0..total).filter(|&i| class(i) < 2).collect();

    // Redis logs every command from here on, with its arguments.
    raw.cmd(
        "CONFIG",
        vec!["SET".into(), "slowlog-log-slower-than".into(), "0".into()],
    )
    .await;
    raw.cmd("CONFIG", vec!["SET".into(), "slowlog-max-len".into(), "1000000".into()])
        .await;
    raw.cmd("SLOWLOG", vec!["RESET".into()]).await;
    raw.cmd("CONFIG", vec!["RESETSTAT".into()]).await;

    // A consumer takes each value as it lands and notes when.
    let arrived: Arc<Mutex<Vec<(String, i64)>>> = Arc::default();
    let consumer = {
        let raw = redis.raw().await;
        let (arrived, dest) = (arrived.clone(), name.clone());
        tokio::spawn(async move {
            loop {
                let popped: Vec<String> = raw.client.lpop(dest.as_str(), Some(1000)).await.unwrap_or_default();
                let at = now_ms();
                if popped.is_empty() {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                arrived.lock().extend(popped.into_iter().map(|value| (value, at)));
            }
        })
    };
    // A watcher counts sweep keys (leases) between scripts.
    let most_sweep_keys = Arc::new(Mutex::new(0usize));
    let owners: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    let watcher = {
        let raw = redis.raw().await;
        let (most, owners, lease) = (most_sweep_keys.clone(), owners.clone(), keys.sweep());
        tokio::spawn(async move {
            loop {
                if let Value::Array(found) = raw.cmd("KEYS", vec!["delayq_sweep*".into()]).await {
                    let mut most = most.lock();
                    *most = (*most).max(found.len());
                }
                let owner: Option<String> = raw.client.get(lease.as_str()).await.unwrap();
                if let Some(owner) = owner {
                    *owners.lock().entry(owner).or_default() += 1;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };

    let sweep_started = std::time::Instant::now();
    let mut clients = Vec::new();
    for _ in 0..3 {
        let client = redis.client().await;
        let queue = client.delayed_queue(&name, StringCodec).unwrap();
        clients.push((client, queue));
    }
    eventually(Duration::from_secs(60), "every due element arrives", || async {
        arrived.lock().len() >= expected.len()
    })
    .await;
    let drained = sweep_started.elapsed();
    // Nothing more arrives (no element twice).
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    consumer.abort();
    watcher.abort();
    // Every sweep window of the drain, logged by Redis (before the checks below run scripts of their own).
    let windows = sweep_windows(&raw).await;
    let stats = match raw.cmd("INFO", vec!["commandstats".into()]).await {
        Value::String(s) => s.to_string(),
        other => format!("{other:?}"),
    };

    let arrived = arrived.lock().clone();
    let mut got: Vec<usize> = arrived.iter().map(|(value, _)| parse(value).0).collect();
    got.sort_unstable();
    assert_eq!(got.len(), expected.len(), "as many as were due, none twice");
    assert_eq!(got, expected, "each due element exactly once");
    for (value, at) in &arrived {
        let (i, due) = parse(value);
        assert!(*at >= due, "element {i} taken at {at}, before it was due at {due}");
    }
    // The rest is pending still, in offer order, and the sweep left nothing behind.
    let pending: Vec<usize> = q.read_all().await.unwrap().iter().map(|p| parse(p).0).collect();
    assert_eq!(pending, (0..total).filter(|&i| class(i) >= 2).collect::<Vec<_>>());
    assert_eq!(raw.zcard(keys.timeout()).await, pending.len());
    eventually(Duration::from_secs(20), "no sweep lease left", || async {
        matches!(raw.cmd("KEYS", vec!["delayq_sweep*".into()]).await, Value::Array(v) if v.is_empty())
    })
    .await;
    let most_sweep_keys = *most_sweep_keys.lock();
    assert!(most_sweep_keys <= 1, "{most_sweep_keys} sweep keys at once");
    let sweeps: u64 = clients.iter().map(|(c, _)| c.stats().sweeps).sum();
    assert!(sweeps >= 1, "the backlog was swept");

    let longest = windows.iter().copied().max().unwrap_or(0);
    let evalsha = stats
        .lines()
        .find(|l| l.starts_with("cmdstat_evalsha"))
        .unwrap_or("")
        .to_owned();
    eprintln!(
        "{size} B payloads, {total} pending, {} due: drained in {:.2} s by 3 clients ({sweeps} sweeps, lease holders seen {:?}); \
         sweep windows: {}, longest {:.1} ms; {evalsha}",
        expected.len(),
        drained.as_secs_f64(),
        owners.lock().values().collect::<Vec<_>>(),
        windows.len(),
        longest as f64 / 1000.0,
    );
    // At least one pass over the whole list, in windows of a bounded size.
    let list_bytes = total * size;
    assert!(
        windows.len() >= list_bytes / (2 * SWEEP_BYTES),
        "{} sweep windows read a {list_bytes}-byte list: more than twice {SWEEP_BYTES} bytes a window",
        windows.len()
    );
    for (client, _) in clients {
        client.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_clients_sweep_a_deep_backlog_of_1kb_payloads_in_short_scripts() {
    deadline(three_clients_sweep(20_000, 1_024)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_clients_sweep_a_deep_backlog_of_10kb_payloads_in_short_scripts() {
    deadline(three_clients_sweep(6_000, 10_240)).await;
}

/// Offers `total` values ("0", "1", ...) in order: every tenth due now, the
/// rest in an hour, so the due ones are spread through the whole list.
async fn offer_every_tenth_due(q: &delayq::DelayedQueue<String>, total: usize) {
    let items: Vec<(String, Duration)> = (0..total)
        .map(|i| {
            let delay = if i % 10 == 0 {
                Duration::ZERO
            } else {
                Duration::from_secs(3600)
            };
            (i.to_string(), delay)
        })
        .collect();
    q.offer_all(items).await.unwrap();
}

redis_test! {
    async fn a_sweep_lease_left_by_a_dead_client_is_taken_over_when_it_expires(redis, raw) {
        let producer = redis.client().await;
        let q = producer.delayed_queue("big", StringCodec).unwrap().without_transfer();
        // Long enough that regular runs cannot search it (only probe its ends):
        // the backlog needs the sweep.
        offer_every_tenth_due(&q, 100_000).await;
        // A client that died mid-sweep left its lease, for 3 more seconds.
        let lease = q.keys().sweep();
        raw.cmd(
            "SET",
            vec![lease.as_str().into(), "dead-client".into(), "PX".into(), 3000.into()],
        )
        .await;
        let client = redis.client().await;
        let _transfer = client.delayed_queue("big", StringCodec).unwrap();
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        let owner: Option<String> = raw.client.get(lease.as_str()).await.unwrap();
        assert_eq!(owner.as_deref(), Some("dead-client"), "a live lease is never taken");
        assert_eq!(client.stats().sweeps, 0);
        eventually(
            Duration::from_secs(60),
            "the sweep taken over drains the backlog",
            || async { raw.llen("big").await == 10_000 },
        )
        .await;
        assert!(client.stats().sweeps >= 1, "{:?}", client.stats());
        let mut arrived: Vec<i64> = raw
            .lrange("big")
            .await
            .iter()
            .map(|b| std::str::from_utf8(b).unwrap().parse().unwrap())
            .collect();
        arrived.sort_unstable();
        assert_eq!(arrived, (0..100_000).step_by(10).collect::<Vec<i64>>());
        eventually(Duration::from_secs(20), "the lease is released", || async {
            raw.client.exists::<i64, _>(lease.as_str()).await.unwrap() == 0
        })
        .await;
    }
}

redis_test! {
    /// A sweep that ends leaves its lease behind as `resting` for three times
    /// what its scripts took, at most a second, so that no client (the sweeper
    /// included) starts another sweep of the queue at once; then the lease goes.
    async fn a_finished_sweep_leaves_its_lease_resting_for_a_moment(redis, raw) {
        let producer = redis.client().await;
        let q = producer.delayed_queue("rests", StringCodec).unwrap().without_transfer();
        offer_every_tenth_due(&q, 100_000).await;
        let lease = q.keys().sweep();
        let monitor = redis.monitor().await;
        let clients = [redis.client().await, redis.client().await];
        let _transfers: Vec<_> = clients
            .iter()
            .map(|c| c.delayed_queue("rests", StringCodec).unwrap())
            .collect();
        eventually(Duration::from_secs(60), "the backlog swept", || async {
            raw.llen("rests").await == 10_000
        })
        .await;
        eventually(Duration::from_secs(20), "the lease is gone", || async {
            raw.client.exists::<i64, _>(lease.as_str()).await.unwrap() == 0
        })
        .await;
        let sets: Vec<Vec<Vec<u8>>> = monitor
            .entries()
            .await
            .into_iter()
            .filter(|e| e.from_lua && e.name() == "set" && e.args.get(1).map(Vec::as_slice) == Some(lease.as_bytes()))
            .map(|e| e.args)
            .collect();
        let resting: Vec<i64> = sets
            .iter()
            .filter(|args| args[2] == b"resting")
            .map(|args| {
                assert_eq!(args[3].to_ascii_uppercase(), b"PX");
                std::str::from_utf8(&args[4]).unwrap().parse().unwrap()
            })
            .collect();
        assert!(
            !resting.is_empty(),
            "no rest after the sweep: {} lease sets",
            sets.len()
        );
        assert!(resting.iter().all(|&ms| ms > 0 && ms <= 1_000), "{resting:?}");
        let sweeps: u64 = clients.iter().map(|c| c.stats().sweeps).sum();
        assert!(sweeps >= 1, "the backlog was swept");
    }
}

/// A sweep of a long list with few due elements moves just what the timeout
/// set says is due: each due element once, a due member missing from the
/// list (left by a failed writer) by the regular run after it, and an element
/// of the list missing from the set not at all. Java's lists are left as
/// single removals would leave them. With small due elements the windows
/// are checked against them, read once (no `ZMSCORE`); with 1 KB ones those
/// are too many bytes to read, and each window asks the set.
async fn few_due(size: usize, checked_in_lua: bool) {
    let redis = RedisServer::start().await;
    let raw = redis.raw().await;
    let producer = redis.client().await;
    let q = producer.delayed_queue("few", StringCodec).unwrap().without_transfer();
    let due = |i: usize| i.is_multiple_of(100);
    // Only the due elements take `size` bytes: the rest stay small.
    let value = |i: usize| payload(i, 0, if due(i) { size } else { 8 });
    let items: Vec<(String, Duration)> = (0..100_000)
        .map(|i| {
            let delay = if due(i) {
                Duration::ZERO
            } else {
                Duration::from_secs(3600)
            };
            (value(i), delay)
        })
        .collect();
    for chunk in items.chunks(10_000) {
        q.offer_all(chunk.to_vec()).await.unwrap();
    }
    let keys = q.keys().clone();
    let orphan = delayq::format::pack(delayq::format::Format::Modern, b"in the list only");
    // At the head, so that the first window reads it (the one that asks the set).
    let _: i64 = raw.client.lpush(keys.pending(), orphan.clone()).await.unwrap();
    let missing = delayq::format::pack(delayq::format::Format::Modern, b"in the set only");
    let _: i64 = raw
        .client
        .zadd(keys.timeout(), None, None, false, false, (1.0, missing))
        .await
        .unwrap();
    let pending_before = raw.lrange(keys.pending()).await;
    raw.cmd("CONFIG", vec!["RESETSTAT".into()]).await;

    let client = redis.client().await;
    let _transfer = client.delayed_queue("few", StringCodec).unwrap();
    eventually(Duration::from_secs(60), "the due elements arrive", || async {
        raw.llen("few").await == 1_001
    })
    .await;
    assert!(client.stats().sweeps >= 1, "{:?}", client.stats());
    assert_eq!(client.stats().transfer_failures, 0, "{:?}", client.stats());
    let zmscores = raw.command_calls("zmscore").await;
    assert_eq!(zmscores == 0, checked_in_lua, "{zmscores} ZMSCORE calls");
    let mut arrived: Vec<String> = raw
        .lrange("few")
        .await
        .iter()
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
        .collect();
    arrived.sort();
    let mut want: Vec<String> = (0..100_000).filter(|&i| due(i)).map(value).collect();
    want.push("in the set only".to_string());
    want.sort();
    assert_eq!(arrived, want);
    let kept: Vec<Bytes> = pending_before
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !due(*i - 1))
        .map(|(_, element)| element)
        .collect();
    assert_eq!(raw.lrange(keys.pending()).await, kept);
    assert_eq!(raw.zcard(keys.timeout()).await, 99_000);
    assert_eq!(raw.lrange(keys.pending()).await.first(), Some(&orphan));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_with_few_small_due_elements_checks_them_in_lua_and_moves_just_those() {
    deadline(few_due(8, true)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_with_few_large_due_elements_asks_the_set_and_moves_just_those() {
    deadline(few_due(1_024, false)).await;
}
