//! Scenario 22: what a job's result, its progress and a batch cost, each
//! against the same work without it, runs alternated on one server.
//!
//! - A `Worker` (concurrency 64, history on, values offered with ids) whose
//!   `run_job` handler returns a small JSON result (sent with the ack,
//!   `ack_batch.lua`'s 'R' layout, kept as the job's `o:` field), against
//!   `run` (no result); and a `run_job` handler that also reports one
//!   progress per value (`progress.lua`, a round trip each), against the
//!   same without progress.
//! - `offer_batch` of 20,000 values (members are jobs, a batch record)
//!   against `offer_all` of 20,000, repeated until a run takes a second.
//! - A `Worker` over a 20,000-member batch until its completion is on its
//!   target (members counted as they end by `lua/lib/batches.lua`; the
//!   completion offered by a reaper pass), against a `Worker` over 20,000
//!   values offered with ids one by one.
//! - Redis's time per value in `ack_batch` with results and without (slow
//!   log, every command logged, in runs of their own: the log slows both
//!   sides, so the rates are measured without it).
//!
//! Offers and the transfer to the ready list happen before a Worker's clock
//! starts. `DELAYQ_BENCH_BREAKDOWN=1` prints each run's per-script server
//! time (scenario 19's helpers); `DELAYQ_BENCH_JOBS=workers,offers,acks`
//! runs only these parts.

use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::batch::BatchOptions;
use delayq::worker::JobContext;
use delayq::{Client, LongCodec};
use futures_util::StreamExt;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::job_history::{account_print, account_start, breakdown, script_times};
use crate::measure::median;
use crate::report::{rate, thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

/// Values per offer call, per batch and per slow-logged Worker run.
const VALUES: u64 = 20_000;
/// Values per Worker run of the result and progress rows (a second or more).
const WORKER_VALUES: u64 = 40_000;
const CONCURRENCY: usize = 64;
/// Runs of each side; the medians are compared.
const RUNS: usize = 5;
/// The Worker's visibility timeout in the batch run that shows what the
/// reaper's period costs (a quarter of it: 0.5 s; the default 30 s gives 5 s).
const SHORT_VISIBILITY: Duration = Duration::from_secs(2);
/// An offer run repeats its call (a fresh queue each) until it has taken this long.
const OFFER_RUN: Duration = Duration::from_secs(1);
/// How often the batch run looks for its batch's end and its completion.
const POLL: Duration = Duration::from_millis(5);
/// How long histories (and results) are kept.
const HISTORY: Duration = Duration::from_secs(3600);

/// What a Worker run handles, and how.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// `offer_with_id` values, `run` with a no-op handler.
    Run,
    /// The same values, `run_job` returning a small JSON result.
    Result,
    /// The same, the handler reporting one progress first.
    Progress,
    /// One `offer_batch` of the values (a completion to a target queue),
    /// `run` with a no-op handler, until the completion is on its target.
    Batch,
}

/// A Worker run: what it handles, how many, and its visibility timeout
/// (`None`: the default).
#[derive(Clone, Copy, Debug)]
struct Side {
    kind: Kind,
    values: u64,
    visibility: Option<Duration>,
}

impl Side {
    const fn new(kind: Kind, values: u64) -> Side {
        Side {
            kind,
            values,
            visibility: None,
        }
    }
}

/// One Worker run's times, from the Worker's start (seconds).
struct WorkerRun {
    /// Until the last value's handler ran (for [`Kind::Batch`]: until the
    /// completion was on its target).
    done: f64,
    /// [`Kind::Batch`]: until the batch was seen complete (every member
    /// counted), and until the last value's handler ran.
    complete: f64,
    handled: f64,
}

/// Offers the run's values (with ids one by one, or as one batch) and
/// moves them all to the ready list; returns the batch's id.
async fn offer_ready(queue: &delayq::DelayedQueue<i64>, side: Side, target: &str) -> Option<String> {
    let batch = if side.kind == Kind::Batch {
        let options = BatchOptions::new().on_complete(target, serde_json::json!({ "run": queue.name() }));
        let items = (0..side.values as i64).map(|i| (i, Duration::ZERO));
        Some(queue.offer_batch(items, &options).await.unwrap())
    } else {
        futures_util::stream::iter(0..side.values as i64)
            .for_each_concurrent(256, |i| {
                let queue = queue.clone();
                async move {
                    queue
                        .offer_with_id(&format!("job-{i}"), &i, Duration::ZERO)
                        .await
                        .unwrap();
                }
            })
            .await;
        None
    };
    let mut moved = 0;
    while moved < side.values {
        moved += queue.transfer_now().await.unwrap().moved;
    }
    batch
}

/// One Worker run of `side` on a fresh queue `name`; with `logged` (or
/// `DELAYQ_BENCH_BREAKDOWN=1`) the slow log logs every command from the
/// Worker's start.
async fn worker_once(redis: &RedisServer, name: &str, side: Side, logged: bool) -> WorkerRun {
    let (kind, values) = (side.kind, side.values);
    let admin = Admin::connect(&redis.url()).await;
    if breakdown() || logged {
        admin.config_set("slowlog-log-slower-than", "0").await;
        admin.config_set("slowlog-max-len", "1000000").await;
    }
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
    queue.set_job_history(Some(HISTORY)).await.unwrap();
    let target_name = format!("{name}-done");
    let batch = offer_ready(&queue, side, &target_name).await;
    let target = client
        .delayed_queue(&target_name, LongCodec)
        .unwrap()
        .without_transfer();
    account_start(&admin).await;
    if logged {
        admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
    }

    let handled = Arc::new(AtomicU64::new(0));
    let progress_kept = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let count = {
        let (handled, done) = (handled.clone(), done.clone());
        move || {
            if handled.fetch_add(1, Ordering::Relaxed) + 1 == values {
                done.notify_one();
            }
        }
    };
    let started = Instant::now();
    let mut worker = client.worker(name, LongCodec).unwrap().concurrency(CONCURRENCY);
    if let Some(visibility) = side.visibility {
        worker = worker.visibility_timeout(visibility);
    }
    let worker = match kind {
        Kind::Run | Kind::Batch => worker.run(move |_: i64| {
            count();
            async { Ok::<(), Infallible>(()) }
        }),
        Kind::Result => worker.run_job(move |v: i64, _: JobContext| {
            count();
            async move { Ok::<_, Infallible>(serde_json::json!({ "ok": true, "n": v })) }
        }),
        Kind::Progress => {
            let kept = progress_kept.clone();
            worker.run_job(move |v: i64, job: JobContext| {
                let (count, kept) = (count.clone(), kept.clone());
                async move {
                    if job.progress(&0.5).await.unwrap() {
                        kept.fetch_add(1, Ordering::Relaxed);
                    }
                    count();
                    Ok::<_, Infallible>(serde_json::json!({ "ok": true, "n": v }))
                }
            })
        }
    };
    let mut run = WorkerRun {
        done: 0.0,
        complete: 0.0,
        handled: 0.0,
    };
    match &batch {
        None => {
            tokio::time::timeout(Duration::from_secs(300), done.notified())
                .await
                .expect("every value handled in time");
            run.done = started.elapsed().as_secs_f64();
        }
        Some(id) => {
            // Each end seen at the first look after it: POLL's resolution.
            let deadline = started + Duration::from_secs(300);
            loop {
                let now = started.elapsed().as_secs_f64();
                if run.handled == 0.0 && handled.load(Ordering::Relaxed) == values {
                    run.handled = now;
                }
                if run.complete == 0.0 {
                    let status = queue.batch(id).await.unwrap().expect("the batch's record");
                    if status.ended() == status.total {
                        run.complete = now;
                    }
                }
                if target.len().await.unwrap() > 0 {
                    run.done = now;
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "the batch's completion on its target in time"
                );
                tokio::time::sleep(POLL).await;
            }
            run.complete = if run.complete == 0.0 { run.done } else { run.complete };
            run.handled = if run.handled == 0.0 { run.complete } else { run.handled };
        }
    }
    let report = worker.shutdown().await;
    account_print(&admin, &format!("{name} ({side:?}), worker"), values).await;
    assert_eq!(report.succeeded, values, "every value acked once: {report:?}");
    // What each kind keeps, read back (correctness, not timing).
    let reliable = client.reliable_queue(name, LongCodec).unwrap();
    match (kind, &batch) {
        (Kind::Batch, Some(id)) => {
            let status = reliable.batch(id).await.unwrap().expect("the batch's record");
            assert_eq!(
                (status.handled, status.total),
                (values, values),
                "every member counted once"
            );
            assert_eq!(target.len().await.unwrap(), 1, "one completion on the target");
        }
        _ => {
            let job = reliable.job("job-0").await.unwrap();
            assert_eq!(job.attempts_total, 1, "{job:?}");
            assert_eq!(job.result.is_some(), kind != Kind::Run, "{job:?}");
            assert_eq!(job.progress.is_some(), kind == Kind::Progress, "{job:?}");
        }
    }
    if kind == Kind::Progress {
        assert_eq!(progress_kept.load(Ordering::Relaxed), values, "every progress kept");
    }
    drop(reliable);
    client.shutdown().await;
    run
}

/// One offer run: 20,000 values a call (a fresh queue each, history on)
/// by `offer_batch` or by `offer_all`, calls repeated until the run has
/// taken [`OFFER_RUN`]; values/s. The server is emptied after it.
async fn offers_once(redis: &RedisServer, run: usize, batch: bool) -> f64 {
    let admin = Admin::connect(&redis.url()).await;
    if breakdown() {
        admin.config_set("slowlog-log-slower-than", "0").await;
        admin.config_set("slowlog-max-len", "1000000").await;
    }
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let side = if batch { "batch" } else { "all" };
    let mut queues = Vec::new();
    for call in 0.. {
        let name = format!("offers-{side}-{run}-{call}");
        let queue = client.delayed_queue(&name, LongCodec).unwrap().without_transfer();
        queue.set_job_history(Some(HISTORY)).await.unwrap();
        queues.push(queue);
        if call == 50 {
            break;
        }
    }
    let items = || (0..VALUES as i64).map(|i| (i, Duration::ZERO));
    account_start(&admin).await;
    let mut calls = 0;
    let started = Instant::now();
    for queue in &queues {
        if batch {
            let options = BatchOptions::new().on_complete(format!("{}-done", queue.name()), serde_json::json!({}));
            queue.offer_batch(items(), &options).await.unwrap();
        } else {
            queue.offer_all(items()).await.unwrap();
        }
        calls += 1;
        if started.elapsed() >= OFFER_RUN {
            break;
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    account_print(
        &admin,
        &format!("offer_{side} run {run}, {calls} calls"),
        calls as u64 * VALUES,
    )
    .await;
    assert!(
        calls < queues.len(),
        "an offer run of {} calls took under {OFFER_RUN:?}",
        queues.len()
    );
    for queue in &queues[..calls] {
        assert_eq!(queue.len().await.unwrap(), VALUES as usize, "every value offered");
    }
    drop(queues);
    client.shutdown().await;
    admin.cmd("FLUSHALL", vec![]).await;
    (calls as u64 * VALUES) as f64 / elapsed
}

/// One slow-logged Worker run (`Kind::Run` or `Kind::Result`): `ack_batch`'s
/// server time per value (µs); it and `claim_batch`'s are printed on stderr.
async fn ack_time_once(redis: &RedisServer, name: &str, kind: Kind) -> f64 {
    let admin = Admin::connect(&redis.url()).await;
    worker_once(redis, name, Side::new(kind, VALUES), true).await;
    let times = script_times(&admin).await;
    admin.config_set("slowlog-log-slower-than", "10000").await;
    admin.cmd("SLOWLOG", vec!["RESET".into()]).await;
    let (runs, us) = times.get("ack_batch").copied().unwrap_or_default();
    let (claims, claim_us) = times.get("claim_batch").copied().unwrap_or_default();
    let per = VALUES as f64;
    eprintln!(
        "    {name} ({kind:?}): ack_batch {runs} runs, {:.1} µs a run, {:.2} µs per value; claim_batch {claims} runs, {:.2} µs per value",
        us as f64 / runs.max(1) as f64,
        us as f64 / per,
        claim_us as f64 / per
    );
    assert!(runs > 0, "ack_batch runs in the slow log");
    us as f64 / per
}

/// The ratios of each round's two sides (run one after the other, so a slow
/// phase of the shared machine hits both): "per round: median, min–max".
fn per_round(sides: &[f64], baselines: &[f64]) -> String {
    let mut ratios: Vec<f64> = sides.iter().zip(baselines).map(|(s, b)| s / b).collect();
    ratios.sort_by(|a, b| a.total_cmp(b));
    format!(
        "per round: {:.2}×, {:.2}–{:.2}×",
        median(ratios.clone()),
        ratios[0],
        ratios[ratios.len() - 1]
    )
}

/// Whether `DELAYQ_BENCH_JOBS` (a list of `workers`, `offers`, `acks`; all
/// when unset) names `part`.
fn wanted(part: &str) -> bool {
    let only = std::env::var("DELAYQ_BENCH_JOBS").unwrap_or_default().to_lowercase();
    only.is_empty() || only.split(',').any(|o| o.trim() == part)
}

/// Scenario 22. Results, progress and batches, each against the same work without.
pub struct JobResultsAndBatches;

impl Scenario for JobResultsAndBatches {
    fn name(&self) -> &'static str {
        "jobs"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            const S: &str = "22. jobs: results, progress, batches";
            let (values, worker_values) = (thousands(VALUES), thousands(WORKER_VALUES));
            let redis = RedisServer::start().await;
            let mut rows = Vec::new();

            if wanted("workers") {
                eprintln!("22. jobs: Workers with results, progress and a batch, and without...");
                // The first Worker of the process pays one-time costs: not counted.
                worker_once(&redis, "warm-up", Side::new(Kind::Run, VALUES), false).await;
                let sides = [
                    Side::new(Kind::Run, WORKER_VALUES),
                    Side::new(Kind::Result, WORKER_VALUES),
                    Side::new(Kind::Progress, WORKER_VALUES),
                    Side::new(Kind::Run, VALUES),
                    Side::new(Kind::Batch, VALUES),
                    Side {
                        visibility: Some(SHORT_VISIBILITY),
                        ..Side::new(Kind::Batch, VALUES)
                    },
                ];
                let mut runs: [Vec<WorkerRun>; 6] = Default::default();
                for run in 0..RUNS {
                    // Each run's sides in a rotated order: none always first.
                    for k in 0..sides.len() {
                        let k = (k + run) % sides.len();
                        let side = sides[k];
                        let r = worker_once(&redis, &format!("w{k}-{run}"), side, false).await;
                        eprintln!(
                        "  run {run}, {:?} of {}{}: {} ({:.2} s; every member counted at {:.2} s, all handled at {:.2} s)",
                        side.kind,
                        side.values,
                        side.visibility.map(|v| format!(", visibility {v:?}")).unwrap_or_default(),
                        rate(side.values as f64 / r.done),
                        r.done,
                        r.complete,
                        r.handled
                    );
                        runs[k].push(r);
                    }
                }
                let rates =
                    |k: usize| -> Vec<f64> { runs[k].iter().map(|r| sides[k].values as f64 / r.done).collect() };
                let rate_of = |k: usize| median(rates(k));
                let rates_members =
                    |k: usize| -> Vec<f64> { runs[k].iter().map(|r| VALUES as f64 / r.complete).collect() };
                let (plain, result, progress) = (rate_of(0), rate_of(1), rate_of(2));
                let (plain_20k, batch, batch_quick) = (rate_of(3), rate_of(4), rate_of(5));
                let members = |k: usize| median(runs[k].iter().map(|r| VALUES as f64 / r.complete).collect());
                let wait = |k: usize| median(runs[k].iter().map(|r| r.done - r.complete).collect());
                let took = |k: usize| median(runs[k].iter().map(|r| r.done).collect());
                let worker = |n: &str| {
                    format!("values/s, Worker concurrency({CONCURRENCY}), {n} ready, each with an id, history on")
                };
                let ids_baseline = format!(
                    "{} (Worker over {values} offered with ids, history on)",
                    rate(plain_20k)
                );
                rows.extend([
                Row::new(S, &format!("{}: run_job returning a small JSON result", worker(&worker_values)))
                    .values(rate(result), format!("{} (run, no result)", rate(plain)))
                    .ratio(result / plain)
                    .target(&format!("≥ 0.80× no result ({})", per_round(&rates(1), &rates(0))), result / plain >= 0.8),
                Row::new(S, &format!("{}: run_job reporting one progress per value, and a result", worker(&worker_values)))
                    .values(rate(progress), format!("{} (run_job, result, no progress)", rate(result)))
                    .ratio(progress / result)
                    .note(&format!("measured: one progress.lua round trip per value ({})", per_round(&rates(2), &rates(1)))),
                Row::new(
                    S,
                    &format!("values/s, Worker concurrency({CONCURRENCY}) over a {values}-member batch, until its completion is on its target"),
                )
                .values(format!("{} ({:.2} s)", rate(batch), took(4)), ids_baseline.clone())
                .ratio(batch / plain_20k)
                .target(&format!("≥ 0.50× ids one by one ({})", per_round(&rates(4), &rates(3))), batch / plain_20k >= 0.5),
                Row::new(S, "the same, until every member is counted (completion not included)")
                    .values(rate(members(4)), ids_baseline.clone())
                    .ratio(members(4) / plain_20k)
                    .note(&format!("then {:.2} s (median) until a reaper pass offers the completion ({})", wait(4), per_round(&rates_members(4), &rates(3)))),
                Row::new(
                    S,
                    &format!("the same, until the completion is on its target, Worker visibility_timeout({SHORT_VISIBILITY:?}): a reaper pass every 0.5 s"),
                )
                .values(format!("{} ({:.2} s)", rate(batch_quick), took(5)), ids_baseline)
                .ratio(batch_quick / plain_20k)
                .note(&format!(
                    "measured: {:.2} s (median) from every member counted to the completion ({})",
                    wait(5), per_round(&rates(5), &rates(3))
                )),
            ]);
            }

            if wanted("offers") {
                eprintln!("22. jobs: offer_batch and offer_all of {values}...");
                let (mut all, mut batched) = (Vec::new(), Vec::new());
                for run in 0..RUNS {
                    all.push(offers_once(&redis, run, false).await);
                    batched.push(offers_once(&redis, run, true).await);
                    eprintln!(
                        "  run {run}: offer_all {}, offer_batch {}",
                        rate(all[run]),
                        rate(batched[run])
                    );
                }
                let rounds = per_round(&batched, &all);
                let (all, batched) = (median(all), median(batched));
                rows.push(
                    Row::new(
                        S,
                        &format!("values/s, offer_batch of {values} (members are jobs), history on"),
                    )
                    .values(rate(batched), format!("{} (offer_all of {values})", rate(all)))
                    .ratio(batched / all)
                    .target(&format!("≥ 0.50× offer_all ({rounds})"), batched / all >= 0.5),
                );
            }

            if wanted("acks") {
                eprintln!("22. jobs: ack_batch's server time with results and without (slow log)...");
                let (mut with, mut without) = (Vec::new(), Vec::new());
                for run in 0..RUNS {
                    without.push(ack_time_once(&redis, &format!("ack-run-{run}"), Kind::Run).await);
                    with.push(ack_time_once(&redis, &format!("ack-result-{run}"), Kind::Result).await);
                }
                let rounds = per_round(&with, &without);
                let (with, without) = (median(with), median(without));
                rows.push(
                    Row::new(
                        S,
                        "ack_batch server time per value, with results (slow log, runs of their own)",
                    )
                    .values(format!("{with:.2} µs"), format!("{without:.2} µs (run, no result)"))
                    .ratio(with / without)
                    .note(&format!(
                        "Redis's time in ack_batch.lua per value, median of the runs ({rounds})"
                    )),
                );
            }
            rows
        })
    }
}
