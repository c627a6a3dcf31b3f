//! Scenario 19: what job histories cost: a `Worker` handling values offered
//! with ids on a queue with history on (a history each: transfer, claim and
//! ack each rewrite the job's record) and on one with history off (the
//! default), against the same number offered without ids, runs alternated
//! on one server. The offers happen before the clock starts; the transfer's
//! own share is measured apart.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::{Client, LongCodec};
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

/// Values per run, and the worker's concurrency.
const VALUES: u64 = 20_000;
const CONCURRENCY: usize = 64;
/// Runs of each side; the medians are compared.
const RUNS: usize = 3;

/// The scripts the breakdowns name (this scenario's and scenario 21's), by SHA.
fn script_names() -> Vec<(String, &'static str)> {
    use delayq_test_support::script_body;
    [
        ("transfer", include_str!("../../../lua/transfer.lua")),
        ("claim_batch", include_str!("../../../lua/claim_batch.lua")),
        ("ack_batch", include_str!("../../../lua/ack_batch.lua")),
        ("claim", include_str!("../../../lua/claim.lua")),
        ("ack", include_str!("../../../lua/ack.lua")),
        ("extend", include_str!("../../../lua/extend.lua")),
        ("reap", include_str!("../../../lua/reap.lua")),
        ("worker_beat", include_str!("../../../lua/worker_beat.lua")),
        ("release_unhandled", include_str!("../../../lua/release_unhandled.lua")),
        // Scenario 21's: offers with ids, bulk and batch offers, progress,
        // a batch's completion.
        ("offer_id", include_str!("../../../lua/offer_id.lua")),
        ("offer_all", include_str!("../../../lua/offer_all.lua")),
        ("offer_batch", include_str!("../../../lua/offer_batch.lua")),
        ("offer_dedup", include_str!("../../../lua/offer_dedup.lua")),
        ("progress", include_str!("../../../lua/progress.lua")),
        ("batch_delivered", include_str!("../../../lua/batch_delivered.lua")),
    ]
    .into_iter()
    .map(|(name, source)| (delayq::fred::util::sha1_hash(&script_body(source)), name))
    .collect()
}

/// Starts a phase's server-side account: command counts and times, and
/// every script run in the slow log.
pub(crate) async fn account_start(admin: &Admin) {
    if !breakdown() {
        return;
    }
    admin.cmd("CONFIG", vec!["RESETSTAT".into()]).await;
    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
}

/// Where a phase's server time went, per value: each script's runs and µs
/// (slow log; the commands scripts call are logged too, inside their
/// script's time), each command's calls (scripts' own included), printed on
/// stderr.
pub(crate) async fn account_print(admin: &Admin, phase: &str, values: u64) {
    if !breakdown() {
        return;
    }
    let scripts = script_times(admin).await;
    let per = values as f64;
    let total: u64 = scripts.values().map(|(_, us)| us).sum();
    eprintln!("    {phase}: {:.2} µs of server time per value", total as f64 / per);
    for (name, (runs, us)) in &scripts {
        eprintln!(
            "      {name:<20} {runs:>6} runs, {:>8.1} µs a run, {:>6.2} µs per value",
            *us as f64 / *runs as f64,
            *us as f64 / per
        );
    }
    let mut calls = admin.command_stats().await;
    calls.retain(|(command, _, _)| !matches!(command.as_str(), "slowlog" | "config" | "info"));
    let line: Vec<String> = calls
        .iter()
        .map(|(command, n, usec)| format!("{command} {:.2}/{:.2}µs", *n as f64 / per, *usec as f64 / per))
        .collect();
    eprintln!("      commands per value (calls/µs): {}", line.join(", "));
}

/// Each script's runs and server time (µs) in the slow log since its last
/// reset, by name (a script not named in [`script_names`] by its SHA's
/// head, any other command by its own name). The slow log must log every
/// command (`slowlog-log-slower-than 0`).
pub(crate) async fn script_times(admin: &Admin) -> std::collections::BTreeMap<String, (u64, u64)> {
    let names = script_names();
    let entries = match admin.cmd("SLOWLOG", vec!["GET".into(), (-1).into()]).await {
        delayq::fred::types::Value::Array(entries) => entries,
        other => panic!("SLOWLOG GET: {other:?}"),
    };
    let mut scripts: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for entry in entries {
        let delayq::fred::types::Value::Array(fields) = entry else {
            continue;
        };
        let (Some(us), Some(delayq::fred::types::Value::Array(args))) =
            (fields.get(2).and_then(|f| f.as_u64()), fields.get(3))
        else {
            continue;
        };
        let command = args
            .first()
            .and_then(|a| a.as_string())
            .unwrap_or_default()
            .to_lowercase();
        let name = if command == "evalsha" {
            let sha = args.get(1).and_then(|a| a.as_string()).unwrap_or_default();
            names
                .iter()
                .find(|(s, _)| *s == sha)
                .map(|(_, n)| (*n).to_owned())
                .unwrap_or_else(|| format!("evalsha {}", &sha[..8.min(sha.len())]))
        } else {
            command
        };
        let slot = scripts.entry(name).or_default();
        slot.0 += 1;
        slot.1 += us;
    }
    scripts
}

/// Whether to print where each phase's server time went
/// (`DELAYQ_BENCH_BREAKDOWN=1`): the slow log then logs every command,
/// which slows both sides, so the rates are measured without it.
pub(crate) fn breakdown() -> bool {
    std::env::var_os("DELAYQ_BENCH_BREAKDOWN").is_some_and(|v| v == "1")
}

/// What a run offers: plain values, values with ids on a queue without
/// history, or with history on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    IdsOnly,
    History,
}

/// One run: (values/s the worker handled, elements/s the transfer moved).
async fn once(redis: &RedisServer, name: &str, kind: Kind) -> (f64, f64) {
    let ids = kind != Kind::Plain;
    let admin = Admin::connect(&redis.url()).await;
    if breakdown() {
        admin.config_set("slowlog-log-slower-than", "0").await;
        admin.config_set("slowlog-max-len", "1000000").await;
    }
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    if kind == Kind::History {
        queue.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    }
    futures_util::stream::iter(0..VALUES as i64)
        .for_each_concurrent(256, |i| {
            let queue = queue.clone();
            async move {
                if ids {
                    queue
                        .offer_with_id(&format!("job-{i}"), &i, Duration::ZERO)
                        .await
                        .unwrap();
                } else {
                    queue.offer(&i, Duration::ZERO).await.unwrap();
                }
            }
        })
        .await;
    account_start(&admin).await;
    let started = Instant::now();
    let mut moved = 0;
    while moved < VALUES {
        moved += queue.transfer_now().await.unwrap().moved;
    }
    let transfer = VALUES as f64 / started.elapsed().as_secs_f64();
    account_print(&admin, &format!("{name}, transfer"), VALUES).await;
    account_start(&admin).await;
    let handled = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let started = Instant::now();
    let worker = client.worker(name, LongCodec).unwrap().concurrency(CONCURRENCY).run({
        let (handled, done) = (handled.clone(), done.clone());
        move |_: i64| {
            if handled.fetch_add(1, Ordering::Relaxed) + 1 == VALUES {
                done.notify_one();
            }
            async { Ok::<(), std::convert::Infallible>(()) }
        }
    });
    done.notified().await;
    let rate = VALUES as f64 / started.elapsed().as_secs_f64();
    let report = worker.shutdown().await;
    account_print(&admin, &format!("{name}, worker"), VALUES).await;
    assert_eq!(report.succeeded, VALUES, "every value acked once: {report:?}");
    if ids {
        let history = client
            .reliable_queue(name, LongCodec)
            .unwrap()
            .job("job-0")
            .await
            .unwrap();
        let kept = u32::from(kind == Kind::History);
        assert_eq!(history.attempts_total, kept, "{history:?}");
    }
    client.shutdown().await;
    (rate, transfer)
}

/// Scenario 19. A Worker over jobs with histories against plain values.
pub struct JobHistories;

impl Scenario for JobHistories {
    fn name(&self) -> &'static str {
        "job_history"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            eprintln!("19. job histories: a Worker over values with and without ids...");
            let redis = RedisServer::start().await;
            let kinds = [Kind::Plain, Kind::IdsOnly, Kind::History];
            let (mut worker, mut moved) = ([vec![], vec![], vec![]], [vec![], vec![], vec![]]);
            for run in 0..RUNS {
                for (k, kind) in kinds.into_iter().enumerate() {
                    let (rate, transfer) = once(&redis, &format!("q{k}-{run}"), kind).await;
                    worker[k].push(rate);
                    moved[k].push(transfer);
                }
            }
            let [plain, ids_only, history] = worker.map(crate::measure::median);
            let [moved_plain, moved_ids_only, moved_history] = moved.map(crate::measure::median);
            let values = thousands(VALUES);
            vec![
                Row::new(
                    "19. job histories",
                    &format!("values/s, Worker concurrency({CONCURRENCY}), {values} ready, each with an id, history off (the default)"),
                )
                .values(rate(ids_only), format!("{} (no ids)", rate(plain)))
                .ratio(ids_only / plain)
                .target("≥ 0.90× no ids", ids_only / plain >= 0.9),
                Row::new("19. job histories", "elements/s a transfer moves, each with an id, history off")
                    .values(rate(moved_ids_only), format!("{} (no ids)", rate(moved_plain)))
                    .ratio(moved_ids_only / moved_plain)
                    .target("≥ 0.90× no ids", moved_ids_only / moved_plain >= 0.9),
                Row::new(
                    "19. job histories",
                    &format!("values/s, Worker concurrency({CONCURRENCY}), {values} ready, each with an id, history on"),
                )
                .values(rate(history), format!("{} (no ids)", rate(plain)))
                .ratio(history / plain)
                .target("≥ 0.60× no ids", history / plain >= 0.6),
                Row::new("19. job histories", "elements/s a transfer moves, each with an id, history on")
                    .values(rate(moved_history), format!("{} (no ids)", rate(moved_plain)))
                    .ratio(moved_history / moved_plain)
                    .target("≥ 0.60× no ids", moved_history / moved_plain >= 0.6),
            ]
        })
    }
}
