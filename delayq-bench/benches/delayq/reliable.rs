//! Scenario 7: the reliable queue's scripts with 100,000 deliveries in
//! flight (claim, ack, nack, extend 1,000 times each; a `Worker`'s batch
//! claims and acks of 20,000 values; reap of 2,000 timed
//! out deliveries of 10 KB, 5,000 of 100 bytes and 2,000 stray copies). Every script run is timed by the server (SLOWLOG, every command
//! logged) and grouped by SHA; the baseline is a trivial script
//! (`return 1`) by EVALSHA against the same server in the same run.

use std::collections::HashMap;
use std::time::Duration;

use delayq::fred::types::Value;
use delayq::{Client, StringCodec};

use crate::admin::Admin;
use crate::report::{thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

pub const IN_FLIGHT: i64 = 100_000;
/// Timed-out deliveries for the reap: some with a 10 KB payload, more with 100 bytes.
const TIMED_OUT_BIG: i64 = 2_000;
const BIG: usize = 10 * 1024;
const TIMED_OUT_SMALL: i64 = 5_000;
/// Copies left in the staging list by consumers that died.
const STRAYS: i64 = 2_000;
/// Runs of each measured operation.
const OPS: usize = 1_000;
/// Values a `Worker` takes in batches beside the deliveries in flight.
const WORKER_VALUES: i64 = 20_000;

/// Longest and mean server time of one script, in µs, and its runs.
pub struct Timing {
    pub longest_us: u64,
    pub mean_us: f64,
    pub runs: usize,
}

pub struct Reliable {
    /// (script name, timing), in the order measured.
    pub scripts: Vec<(&'static str, Timing)>,
    pub baseline: Timing,
}

const SEED: &str = r#"
local start, n, deadline, size = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local pad = string.rep('x', size)
local batch = {}
for i = start, start + n - 1 do
  batch[#batch + 1] = deadline
  batch[#batch + 1] = string.format('%08d', i) .. '0000000001' .. i .. ':' .. pad
  if #batch >= 1000 then
    redis.call('zadd', KEYS[1], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then
  redis.call('zadd', KEYS[1], unpack(batch))
end
return n
"#;

/// Adds one phase's runs to the others'.
fn merge(all: &mut HashMap<String, Vec<u64>>, phase: HashMap<String, Vec<u64>>) {
    for (sha, runs) in phase {
        all.entry(sha).or_default().extend(runs);
    }
}

/// Every EVALSHA in the slow log since the last reset, by SHA: durations in
/// µs; resets the log.
async fn script_runs(admin: &Admin) -> HashMap<String, Vec<u64>> {
    let entries = match admin.cmd("SLOWLOG", vec!["GET".into(), (-1).into()]).await {
        Value::Array(entries) => entries,
        other => panic!("SLOWLOG GET: {other:?}"),
    };
    let mut runs: HashMap<String, Vec<u64>> = HashMap::new();
    for entry in entries {
        let Value::Array(fields) = entry else { continue };
        let (Some(us), Some(Value::Array(args))) = (fields.get(2).and_then(|f| f.as_u64()), fields.get(3)) else {
            continue;
        };
        let name = args.first().and_then(|a| a.as_string()).unwrap_or_default();
        if name.eq_ignore_ascii_case("evalsha")
            && let Some(sha) = args.get(1).and_then(|a| a.as_string())
        {
            runs.entry(sha).or_default().push(us);
        }
    }
    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
    runs
}

fn timing(runs: Option<&Vec<u64>>) -> Timing {
    let runs = runs.cloned().unwrap_or_default();
    Timing {
        longest_us: runs.iter().copied().max().unwrap_or(0),
        mean_us: runs.iter().sum::<u64>() as f64 / runs.len().max(1) as f64,
        runs: runs.len(),
    }
}

pub async fn run(redis: &RedisServer) -> Reliable {
    let admin = Admin::connect(&redis.url()).await;
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let q = client
        .reliable_queue("reliable", StringCodec)
        .unwrap()
        .with_visibility_timeout(Duration::from_secs(60))
        .with_max_deliveries(0);
    let keys = q.keys().clone();
    let far = delayq_now_ms() + 3_600_000;
    for start in (0..IN_FLIGHT).step_by(10_000) {
        let args = vec![
            SEED.into(),
            1.into(),
            keys.leases().into(),
            start.into(),
            10_000.into(),
            far.into(),
            100.into(),
        ];
        admin.cmd("EVAL", args).await;
    }
    eprintln!("  {} deliveries in flight", q.in_flight().await.unwrap());
    admin.config_set("slowlog-log-slower-than", "0").await;
    admin.config_set("slowlog-max-len", "100000").await;
    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;

    // Baseline: a trivial script, as many runs. The slow log is read after
    // each phase, so that no phase's entries push another's out of it.
    let trivial = admin.script_load("return 1").await;
    for _ in 0..OPS {
        admin.cmd("EVALSHA", vec![trivial.as_str().into(), 0.into()]).await;
    }
    let mut runs = script_runs(&admin).await;
    // claim + ack, claim + nack, extend, each OPS times.
    for i in 0..OPS {
        admin
            .cmd("RPUSH", vec!["reliable".into(), format!("job:{i}").into()])
            .await;
        let d = q.take().await.unwrap();
        d.extend(Duration::from_secs(60)).await.unwrap();
        if i % 2 == 0 {
            assert!(d.ack().await.unwrap());
        } else {
            assert!(d.nack(Duration::ZERO).await.unwrap());
            let again = q.take().await.unwrap();
            assert!(again.ack().await.unwrap());
        }
    }
    merge(&mut runs, script_runs(&admin).await);
    // A Worker's batch claims and acks: WORKER_VALUES values, no-op handler.
    for chunk in (0..WORKER_VALUES).collect::<Vec<_>>().chunks(10_000) {
        let mut args: Vec<Value> = vec!["reliable".into()];
        args.extend(chunk.iter().map(|i| Value::from(format!("batch:{i}"))));
        admin.cmd("RPUSH", args).await;
    }
    let handled = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let worker = client.worker("reliable", StringCodec).unwrap().concurrency(64).run({
        let handled = handled.clone();
        move |_: String| {
            handled.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async { Ok::<(), std::convert::Infallible>(()) }
        }
    });
    while handled.load(std::sync::atomic::Ordering::Relaxed) < WORKER_VALUES as u64 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let report = worker.shutdown().await;
    assert_eq!(report.succeeded, WORKER_VALUES as u64, "{report:?}");
    merge(&mut runs, script_runs(&admin).await);
    // Reap: timed out deliveries of 10 KB and of 100 bytes, and strays,
    // with a handle whose grace (its visibility timeout) is 100 ms.
    for (start, n, size) in [(1_000_000, TIMED_OUT_BIG, BIG), (2_000_000, TIMED_OUT_SMALL, 100)] {
        let args = vec![
            SEED.into(),
            1.into(),
            keys.leases().into(),
            start.into(),
            n.into(),
            1.into(),
            (size as i64).into(),
        ];
        admin.cmd("EVAL", args).await;
    }
    let strays: Vec<Value> = std::iter::once(Value::from(keys.staging()))
        .chain((0..STRAYS).map(|i| Value::from(format!("stray:{i}"))))
        .collect();
    admin.cmd("RPUSH", strays).await;
    let quick = q.clone().with_visibility_timeout(Duration::from_millis(100));
    let mut reaped = quick.reap_now().await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let more = quick.reap_now().await.unwrap();
    reaped.timed_out += more.timed_out;
    reaped.unclaimed += more.unclaimed;
    eprintln!("  reaped {reaped:?}; {} still in flight", q.in_flight().await.unwrap());

    merge(&mut runs, script_runs(&admin).await);
    let scripts = [
        ("claim", include_str!("../../../lua/claim.lua")),
        ("ack", include_str!("../../../lua/ack.lua")),
        ("nack", include_str!("../../../lua/nack.lua")),
        ("extend", include_str!("../../../lua/extend.lua")),
        ("claim_batch", include_str!("../../../lua/claim_batch.lua")),
        ("ack_batch", include_str!("../../../lua/ack_batch.lua")),
        ("reap", include_str!("../../../lua/reap.lua")),
    ]
    .into_iter()
    .map(|(name, own)| (name, timing(runs.get(&delayq_test_support::script_sha1(own)))))
    .collect();
    let baseline = timing(runs.get(&trivial));
    drop((q, quick));
    client.shutdown().await;
    Reliable { scripts, baseline }
}

fn delayq_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Scenario 7. The reliable queue's scripts beside 100,000 deliveries in flight.
pub struct ReliableScripts;

impl Scenario for ReliableScripts {
    fn name(&self) -> &'static str {
        "reliable"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("7. reliable queue scripts, {} deliveries in flight...", IN_FLIGHT);
            let redis = RedisServer::start().await;
            let r = run(&redis).await;
            let b = &r.baseline;
            let longest = r.scripts.iter().map(|(_, t)| t.longest_us).max().unwrap_or(0);
            for (name, t) in &r.scripts {
                let metric = format!("{name}: longest / mean server time ({} runs)", thousands(t.runs as u64));
                rows.push(
                    Row::new("7. reliable, 100,000 in flight", &metric)
                        .values(
                            format!("{:.2} ms / {:.0} µs", t.longest_us as f64 / 1000.0, t.mean_us),
                            format!(
                                "{:.2} ms / {:.0} µs (EVALSHA `return 1`, {} runs)",
                                b.longest_us as f64 / 1000.0,
                                b.mean_us,
                                thousands(b.runs as u64)
                            ),
                        )
                        .ratio(t.mean_us / b.mean_us)
                        // No run seen means nothing was measured: not a pass.
                        // The Worker's batch scripts run per value, so they must stay under 1 ms.
                        .target(
                            if name.ends_with("_batch") {
                                "≤ 1 ms"
                            } else {
                                "≤ 5 ms"
                            },
                            t.runs > 0 && t.longest_us <= if name.ends_with("_batch") { 1_000 } else { 5_000 },
                        ),
                );
            }
            rows.push(
                Row::new("7. reliable, 100,000 in flight", "longest script of all")
                    .values(format!("{:.2} ms", longest as f64 / 1000.0), "—".into())
                    .target("≤ 5 ms", r.scripts.iter().all(|(_, t)| t.runs > 0) && longest <= 5_000),
            );
            rows
        })
    }
}
