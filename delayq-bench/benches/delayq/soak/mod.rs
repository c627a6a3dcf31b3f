//! The soak: one queue for minutes or hours at a steady rate, to show that
//! memory stays flat. Producers and a reliable `Worker` (concurrency 8) in
//! one process, on two clients through a fault proxy (both transfer):
//! plain offers, id offers (10%; 1% of those cancelled, 1% rescheduled),
//! 1% of values failing once (retried), 0.1% failing for good (dead
//! letters, read and removed every 30 s as an operator would), a schedule
//! firing every second, a pause of 5 s every 3 minutes and a cut of every
//! connection every 2 minutes. Every 30 s a row: RSS, heap in use (the
//! benchmark's counting allocator), Redis `used_memory`, keys by prefix and
//! the queue's collections, and the counts. At the end: nothing lost,
//! nothing handled more often than its retries explain, no cancelled value
//! delivered, every occurrence of the schedule handled once.
//!
//! `--only soak --soak-minutes 30 --soak-rate 1000 [--soak-dashboard]`.

mod dashboard;
mod ledger;
mod probe;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use delayq::schedule::every;
use delayq::worker::{FailureAction, Permanent, RetryPolicy};
use delayq::{Client, DelayedQueue, Error, LongCodec, ReliableQueue};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use dashboard::{child as dashboard_child, CHILD_FLAG as DASHBOARD_CHILD_FLAG};
use dashboard::{mb, ChildRow};
use ledger::{flag, kind, Ledger, Verdict};
use probe::Sample;

use crate::admin::Admin;
use crate::report::Row;
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;
use delayq_test_support::fault_proxy::FaultProxy;

const QUEUE: &str = "soak";
/// The schedule's value (values offered are numbered from 0).
const SCHEDULED: i64 = -1;
const ROW_EVERY: Duration = Duration::from_secs(30);
const CUT_FOR: Duration = Duration::from_millis(300);
const PAUSE_FOR: Duration = Duration::from_secs(5);
/// Offers (and their cancels and reschedules) in flight at most.
const IN_FLIGHT: usize = 1024;
/// Longest wait for the queue to drain at the end.
const DRAIN_AT_MOST: Duration = Duration::from_secs(180);

pub struct Config {
    pub minutes: f64,
    pub rate: u32,
    pub dashboard: bool,
    /// Every connection through the proxy is cut this often.
    pub cut_every: Duration,
    /// The queue is paused for [`PAUSE_FOR`] this often.
    pub pause_every: Duration,
    /// Where each row also goes as CSV, for plotting the curve.
    pub csv: Option<std::path::PathBuf>,
}

impl Config {
    /// `--soak-minutes M` (default 3), `--soak-rate R` per second (default
    /// 1,000), `--soak-dashboard`, `--soak-cut-every S` seconds (default
    /// 120), `--soak-pause-every S` seconds (default 180), `--soak-csv
    /// PATH` (every row as CSV too).
    pub fn from_args() -> Config {
        let args: Vec<String> = std::env::args().collect();
        let value = |name: &str| {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1))
                .map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: a number, not {v:?}")))
        };
        Config {
            minutes: value("--soak-minutes").unwrap_or(3.0),
            rate: value("--soak-rate").map(|r: f64| r as u32).unwrap_or(1_000).max(1),
            dashboard: args.iter().any(|a| a == "--soak-dashboard"),
            cut_every: Duration::from_secs_f64(value("--soak-cut-every").unwrap_or(120.0_f64).max(1.0)),
            pause_every: Duration::from_secs_f64(value("--soak-pause-every").unwrap_or(180.0_f64).max(10.0)),
            csv: args
                .iter()
                .position(|a| a == "--soak-csv")
                .and_then(|i| args.get(i + 1))
                .map(std::path::PathBuf::from),
        }
    }

    fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.minutes * 60.0)
    }

    /// Rows before this are warm-up (caches, pools and Redis's sets filling).
    fn warm_up(&self) -> Duration {
        (self.duration() / 6).clamp(Duration::from_secs(60), Duration::from_secs(300))
    }
}

/// A row of the soak's curve.
#[derive(Clone)]
struct Point {
    seconds: f64,
    rss: u64,
    heap: u64,
    allocations: u64,
    /// Free memory glibc's arenas keep (0 elsewhere).
    arenas_free: u64,
    redis: u64,
    keys: u64,
}

pub struct Soak {
    pub verdict: Verdict,
    pub rows: Vec<Row>,
}

struct Ctx {
    ledger: Ledger,
    /// The producers' handles, one per client (both transfer).
    producers: [DelayedQueue<i64>; 2],
    /// For the dead letters.
    reliable: ReliableQueue<i64>,
}

pub async fn run(config: &Config) -> Soak {
    let redis = RedisServer::start().await;
    let proxy = Arc::new(FaultProxy::start(redis.port()).await);
    let admin = Admin::connect(&redis.url()).await;
    // As a service exposing /metrics would: delayq's series recorded.
    let _ = delayq_dashboard::install_recorder();
    let client = || async {
        Client::builder()
            .url(proxy.url())
            .build()
            .await
            .expect("a client through the proxy")
    };
    let (producing, working) = (client().await, client().await);
    let capacity = (config.rate as f64 * (config.duration().as_secs_f64() + 60.0) * 1.05) as usize + 1_000;
    let ctx = Arc::new(Ctx {
        ledger: Ledger::new(capacity),
        producers: [
            producing.delayed_queue(QUEUE, LongCodec).unwrap().with_transfer(),
            working.delayed_queue(QUEUE, LongCodec).unwrap().with_transfer(),
        ],
        reliable: producing.reliable_queue(QUEUE, LongCodec).unwrap(),
    });
    let keys = ctx.producers[0].keys().clone();
    producing
        .schedule("tick", every(Duration::from_secs(1)), &ctx.producers[0], &SCHEDULED)
        .await
        .expect("save the schedule");
    let worker = start_worker(&working, &ctx);
    let beside = if config.dashboard {
        Some(dashboard::Beside::start(&redis.url(), QUEUE).await)
    } else {
        None
    };

    let stop = CancellationToken::new();
    let producer = tokio::spawn(produce(ctx.clone(), config.rate, stop.clone()));
    let cutter = tokio::spawn(cut(ctx.clone(), proxy.clone(), config.cut_every, stop.clone()));
    let pauser = tokio::spawn(pause(ctx.clone(), config.pause_every, stop.clone()));

    println!(
        "soak: {} values/s for {} min, queue {QUEUE:?}, a row every {} s; the heap includes the \
         soak's own ledger, {:.2} MB allocated up front",
        config.rate,
        config.minutes,
        ROW_EVERY.as_secs(),
        mb(ctx.ledger.bytes())
    );
    println!(
        "{:>6} | {:>8} | {:>8} | {:>9} | {:>8} | {:>6} | {:>9} | {:>9} | {:>7} | {:>5} | {:>6}",
        "min", "RSS MB", "heap MB", "allocs", "Redis MB", "keys", "offered", "handled", "retried", "dead", "cancel"
    );
    let started = Instant::now();
    let mut points = Vec::with_capacity((config.minutes * 2.0) as usize + 16);
    let mut next_row = started + ROW_EVERY;
    while started.elapsed() < config.duration() {
        tokio::time::sleep_until(next_row.min(started + config.duration()).into()).await;
        if Instant::now() >= next_row {
            next_row += ROW_EVERY;
            drain_dead_letters(&ctx).await;
            let sample = probe::sample(&admin, &keys).await;
            points.push(print_row(started, &ctx.ledger, &sample));
            if let Some(path) = &config.csv {
                write_csv(path, &points);
            }
        }
    }

    // The end: stop offering, stop the schedule, let the queue drain.
    stop.cancel();
    producer.await.unwrap();
    cutter.await.unwrap();
    pauser.await.unwrap();
    let schedules = producing.schedules(&delayq::QueueKeys::new(QUEUE).unwrap()).unwrap();
    let fired = stop_schedule(&schedules).await;
    println!("soak: offers stopped; waiting for the queue to drain");
    let drained = drain(&ctx, &admin, &keys).await;
    let still_queued = if drained { 0 } else { queued(&admin, &keys).await };
    drain_dead_letters(&ctx).await;
    let last = probe::sample(&admin, &keys).await;
    points.push(print_row(started, &ctx.ledger, &last));
    let report = worker.shutdown().await;
    println!("soak: worker report {report:?}");
    let dashboard_rows = match beside {
        Some(beside) => {
            let rows = beside.rows.borrow().clone();
            beside.stop().await;
            Some(rows)
        }
        None => None,
    };
    producing.shutdown().await;
    working.shutdown().await;
    print_leftovers(&admin).await;

    let mut verdict = ctx.ledger.verdict(fired);
    verdict.drained = drained;
    verdict.still_queued = still_queued;
    print_verdict(&verdict);
    let rows = summary(config, &points, &verdict, dashboard_rows.as_deref());
    drop(proxy);
    Soak { verdict, rows }
}

fn start_worker(client: &Client, ctx: &Arc<Ctx>) -> delayq::worker::WorkerHandle {
    let hooks = ctx.clone();
    let handling = ctx.clone();
    client
        .worker(QUEUE, LongCodec)
        .unwrap()
        .concurrency(8)
        .retry(RetryPolicy::fixed(Duration::from_secs(1)).max_attempts(5))
        .on_error(move |failure| match failure.action() {
            FailureAction::Retry { .. } => {
                hooks.ledger.retried.fetch_add(1, Relaxed);
            }
            FailureAction::DeadLettered => {
                hooks.ledger.dead_lettered.fetch_add(1, Relaxed);
            }
            _ => {}
        })
        .run(move |n: i64| {
            let ctx = handling.clone();
            async move {
                let ledger = &ctx.ledger;
                if n == SCHEDULED {
                    ledger.schedule_handled.fetch_add(1, Relaxed);
                    return Ok(());
                }
                let Some(run) = ledger.called(n) else {
                    return Ok(());
                };
                let value = n as usize;
                if kind::permanent(value) {
                    return Err(Permanent::new("soak: fails for good").into());
                }
                if kind::retried(value) && run == 1 {
                    return Err::<(), delayq::error::BoxError>("soak: the first attempt fails".into());
                }
                ledger.succeeded(n);
                Ok(())
            }
        })
}

/// Offers `rate` values a second until stopped, then waits for those in flight.
async fn produce(ctx: Arc<Ctx>, rate: u32, stop: CancellationToken) {
    let in_flight = Arc::new(Semaphore::new(IN_FLIGHT));
    let started = Instant::now();
    let mut sent = 0u64;
    let mut tick = tokio::time::interval(Duration::from_millis(10));
    'producing: loop {
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tick.tick() => {}
        }
        let due = (started.elapsed().as_secs_f64() * rate as f64) as u64;
        while sent < due {
            let permit = tokio::select! {
                _ = stop.cancelled() => break 'producing,
                permit = in_flight.clone().acquire_owned() => permit.unwrap(),
            };
            let Some(n) = ctx.ledger.next_value() else {
                eprintln!("soak: the ledger is full; no more offers");
                break 'producing;
            };
            sent += 1;
            let ctx = ctx.clone();
            tokio::spawn(async move {
                offer(&ctx, n).await;
                drop(permit);
            });
        }
    }
    let _ = in_flight.acquire_many(IN_FLIGHT as u32).await;
}

fn millis(range: std::ops::Range<u64>) -> Duration {
    Duration::from_millis(fastrand::u64(range))
}

/// Offers value `n` as its kind says, and cancels or reschedules it.
async fn offer(ctx: &Ctx, n: usize) {
    let ledger = &ctx.ledger;
    let queue = &ctx.producers[n % 2];
    let value = n as i64;
    if !kind::by_id(n) {
        match queue.offer(&value, millis(0..4_000)).await {
            Ok(()) => offered(ledger, n),
            Err(error) => offer_failed(ledger, n, &error),
        }
        return;
    }
    let id = format!("soak-{n}");
    match queue.offer_with_id(&id, &value, millis(1_500..4_000)).await {
        Ok(true) => offered(ledger, n),
        Ok(false) => ledger.mark(n, flag::ID_KEPT),
        Err(error) => return offer_failed(ledger, n, &error),
    }
    if kind::cancelled(n) {
        tokio::time::sleep(millis(100..500)).await;
        match queue.cancel(&id).await {
            Ok(true) => {
                ledger.mark(n, flag::CANCELLED);
                ledger.cancelled.fetch_add(1, Relaxed);
            }
            Ok(false) => {}
            Err(Error::OutcomeUnknown { .. }) => ledger.mark(n, flag::CANCEL_UNKNOWN),
            Err(error) => eprintln!("soak: cancel {id}: {error}"),
        }
    } else if kind::rescheduled(n) {
        tokio::time::sleep(millis(100..500)).await;
        match queue.reschedule(&id, millis(500..3_000)).await {
            Ok(true) => {
                ledger.rescheduled.fetch_add(1, Relaxed);
            }
            Ok(false) => {}
            Err(error) => eprintln!("soak: reschedule {id}: {error}"),
        }
    }
}

fn offered(ledger: &Ledger, n: usize) {
    ledger.mark(n, flag::OFFERED);
    ledger.offered.fetch_add(1, Relaxed);
}

fn offer_failed(ledger: &Ledger, n: usize, error: &Error) {
    if matches!(error, Error::OutcomeUnknown { .. }) {
        ledger.mark(n, flag::UNKNOWN);
        ledger.offers_unknown.fetch_add(1, Relaxed);
    } else {
        ledger.mark(n, flag::FAILED);
        let failed = ledger.offers_failed.fetch_add(1, Relaxed) + 1;
        if failed.is_power_of_two() {
            eprintln!("soak: an offer failed ({failed} so far): {error}");
        }
    }
}

/// Cuts every connection through the proxy `every` so long, the first
/// 15 s after a multiple of the row interval (rows and cuts apart).
async fn cut(ctx: Arc<Ctx>, proxy: Arc<FaultProxy>, every: Duration, stop: CancellationToken) {
    let mut next = tokio::time::Instant::now() + first_at(every, 15);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep_until(next) => {}
        }
        next += every;
        proxy.set_outage(true);
        tokio::time::sleep(CUT_FOR).await;
        proxy.set_outage(false);
        ctx.ledger.cuts.fetch_add(1, Relaxed);
    }
}

/// The first of a periodic event: about half a period in, `offset` seconds
/// after a row (when the period is a multiple of the row interval, every
/// one falls between rows).
fn first_at(every: Duration, offset: u64) -> Duration {
    let rows = ROW_EVERY.as_secs();
    let half = every.as_secs() / 2;
    Duration::from_secs((half / rows * rows + offset).max(1))
}

/// Pauses the queue for [`PAUSE_FOR`] `every` so long, the first 10 s
/// after a multiple of the row interval.
async fn pause(ctx: Arc<Ctx>, every: Duration, stop: CancellationToken) {
    let queue = &ctx.producers[0];
    let mut next = tokio::time::Instant::now() + first_at(every, 10);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep_until(next) => {}
        }
        next += every;
        if let Err(error) = queue.pause().await {
            eprintln!("soak: pause: {error}");
        }
        tokio::time::sleep(PAUSE_FOR).await;
        // A resume is never skipped: a queue left paused would stall the run.
        while let Err(error) = queue.resume().await {
            eprintln!("soak: resume: {error}; again");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        ctx.ledger.pauses.fetch_add(1, Relaxed);
    }
}

/// Reads the dead letters into the ledger and removes them, as an operator
/// would, so that they do not count as growth.
async fn drain_dead_letters(ctx: &Ctx) {
    for _ in 0..10 {
        let page = match ctx.reliable.dead_letters_range(0, 1_000).await {
            Ok(page) if !page.is_empty() => page,
            Ok(_) => return,
            Err(error) => return eprintln!("soak: reading the dead letters: {error}"),
        };
        for &n in &page {
            match usize::try_from(n).ok().filter(|&n| ctx.ledger.given(n)) {
                Some(n) => ctx.ledger.mark(n, flag::DEAD_LETTER),
                None => {
                    ctx.ledger.strangers.fetch_add(1, Relaxed);
                }
            }
        }
        if let Err(error) = ctx.reliable.remove_dead_letters(page.len()).await {
            return eprintln!("soak: removing the dead letters: {error}");
        }
    }
}

/// Pauses the schedule; the occurrences it fired (from its record).
async fn stop_schedule(schedules: &delayq::schedule::Schedules) -> Option<u64> {
    for _ in 0..50 {
        match schedules.pause("tick").await {
            Ok(_) => match schedules.get("tick").await {
                Ok(info) => return info.map(|i| i.fired),
                Err(error) => eprintln!("soak: reading the schedule: {error}"),
            },
            Err(error) => eprintln!("soak: pausing the schedule: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

/// Waits until nothing is pending, ready, staged or in flight and the
/// handled count stopped moving; whether it did within [`DRAIN_AT_MOST`].
async fn drain(ctx: &Ctx, admin: &Admin, keys: &delayq::QueueKeys) -> bool {
    let started = Instant::now();
    let mut quiet = 0;
    let mut last = u64::MAX;
    while started.elapsed() < DRAIN_AT_MOST {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let busy = probe::collections(admin, keys)
            .await
            .into_iter()
            .any(|(what, _)| matches!(what, "timeout" | "pending" | "ready" | "staging" | "leases"));
        let ledger = &ctx.ledger;
        let now = ledger.handled.load(Relaxed) + ledger.dead_lettered.load(Relaxed) + ledger.retried.load(Relaxed);
        quiet = if busy || now != last { 0 } else { quiet + 1 };
        last = now;
        if quiet >= 3 {
            return true;
        }
    }
    false
}

/// Values still in the queue: delayed, ready, staged or in flight.
async fn queued(admin: &Admin, keys: &delayq::QueueKeys) -> u64 {
    probe::collections(admin, keys)
        .await
        .into_iter()
        .filter(|(what, _)| matches!(*what, "timeout" | "ready" | "staging" | "leases"))
        .map(|(_, n)| n)
        .sum()
}

/// The "lost" figure: after a drain that gave up, the values never handled
/// include those still queued, which are only late.
fn lost_text(v: &Verdict) -> String {
    if v.drained {
        v.lost.to_string()
    } else {
        format!(
            "{} never handled, {} of them still queued (the worker fell behind), so at most {}",
            v.lost,
            v.still_queued,
            v.lost.saturating_sub(v.still_queued)
        )
    }
}

fn print_row(started: Instant, ledger: &Ledger, s: &Sample) -> Point {
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{:>6.1} | {:>8.1} | {:>8.2} | {:>9} | {:>8.1} | {:>6} | {:>9} | {:>9} | {:>7} | {:>5} | {:>6}",
        seconds / 60.0,
        mb(s.rss),
        mb(s.heap),
        s.allocations,
        mb(s.redis_memory),
        s.key_total(),
        ledger.offered.load(Relaxed),
        ledger.handled.load(Relaxed),
        ledger.retried.load(Relaxed),
        ledger.dead_lettered.load(Relaxed),
        ledger.cancelled.load(Relaxed),
    );
    println!("         keys: {}", s.keys_text());
    println!("         queue: {}", s.collections_text());
    Point {
        seconds,
        rss: s.rss,
        heap: s.heap,
        allocations: s.allocations,
        arenas_free: s.arenas.map_or(0, |(_, free)| free),
        redis: s.redis_memory,
        keys: s.key_total(),
    }
}

/// Every row so far as CSV (rewritten whole: a few hundred rows at most).
fn write_csv(path: &std::path::Path, points: &[Point]) {
    let mut text = String::from("seconds,rss_bytes,heap_bytes,allocations,arenas_free_bytes,redis_bytes,keys\n");
    for p in points {
        text.push_str(&format!(
            "{:.0},{},{},{},{},{},{}\n",
            p.seconds, p.rss, p.heap, p.allocations, p.arenas_free, p.redis, p.keys
        ));
    }
    if let Err(error) = std::fs::write(path, text) {
        eprintln!("soak: could not write {}: {error}", path.display());
    }
}

/// The keys left once everything drained: request keys (which expire on
/// their own) counted, the others by name.
async fn print_leftovers(admin: &Admin) {
    let (by_prefix, _) = probe::keys_by_prefix(admin).await;
    let requests = by_prefix.get("delayq_request").copied().unwrap_or(0);
    let mut others = Vec::new();
    let mut cursor = "0".to_owned();
    loop {
        let (next, keys) = probe::scan_page(admin, &cursor, "*").await;
        others.extend(keys.into_iter().filter(|k| !k.starts_with("delayq_request:")));
        cursor = next;
        if cursor == "0" || others.len() > 50 {
            break;
        }
    }
    println!(
        "soak: keys left at the end: {requests} request keys (they expire), and {}",
        others.join(", ")
    );
}

fn print_verdict(v: &Verdict) {
    println!(
        "soak verdict: {} — lost {}, duplicated {}, cancelled yet delivered {}, failed offers delivered {} \
         ({} failed; {} unknown, {} of them delivered), ids found pending {}, values never offered handled {}, \
         schedule handled {} of {} fired{}",
        if v.ok() {
            "OK"
        } else if v.only_behind() {
            "UNFINISHED (nothing wrong; values still queued)"
        } else {
            "VIOLATION"
        },
        lost_text(v),
        v.duplicated,
        v.cancelled_delivered,
        v.failed_delivered,
        v.offers_failed,
        v.offers_unknown,
        v.unknown_delivered,
        v.ids_kept,
        v.strangers,
        v.schedule.0,
        v.schedule.1.map_or("?".into(), |f| f.to_string()),
        if v.drained { "" } else { "; the queue did not drain" }
    );
    for example in &v.examples {
        println!("  e.g. value {example}");
    }
}

/// Least-squares slope of `y` over minutes, per minute.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = points.iter().fold((0.0, 0.0), |(x, y), p| (x + p.0 / n, y + p.1 / n));
    let (mut num, mut den) = (0.0, 0.0);
    for (x, y) in points {
        num += (x - mx) * (y - my);
        den += (x - mx) * (x - mx);
    }
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

fn summary(config: &Config, points: &[Point], verdict: &Verdict, dashboard: Option<&[ChildRow]>) -> Vec<Row> {
    let scenario = format!("14. soak, {}/s for {} min", config.rate, config.minutes);
    let warm = config.warm_up().as_secs_f64();
    // The last point is taken after the drain: not part of the curve.
    let curve: Vec<&Point> = points[..points.len().saturating_sub(1)]
        .iter()
        .filter(|p| p.seconds >= warm)
        .collect();
    let mut rows = Vec::new();
    let mut curve_row = |what: &str, value: fn(&Point) -> f64, unit: &str| {
        let (Some(first), Some(last)) = (curve.first(), curve.last()) else {
            return;
        };
        let fitted: Vec<(f64, f64)> = curve.iter().map(|p| (p.seconds / 60.0, value(p))).collect();
        let (lo, hi) = fitted
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), (_, y)| (lo.min(*y), hi.max(*y)));
        rows.push(
            Row::new(
                &scenario,
                &format!("{what} after {:.0} min warm-up: first → last (min–max)", warm / 60.0),
            )
            .values(
                format!(
                    "{:.2} → {:.2} {unit} ({lo:.2}–{hi:.2}); slope {:+.3} {unit}/min",
                    value(first),
                    value(last),
                    slope(&fitted)
                ),
                "—".into(),
            ),
        );
    };
    curve_row("heap in use", |p| mb(p.heap), "MB");
    curve_row("live allocations (thousands)", |p| p.allocations as f64 / 1000.0, "k");
    curve_row("process RSS", |p| mb(p.rss), "MB");
    if curve.iter().any(|p| p.arenas_free > 0) {
        curve_row("free memory glibc's arenas keep", |p| mb(p.arenas_free), "MB");
    }
    curve_row("Redis used_memory", |p| mb(p.redis), "MB");
    curve_row("Redis keys", |p| p.keys as f64, "keys");
    if let Some(rows_of_child) = dashboard {
        let child: Vec<(f64, f64, f64)> = rows_of_child
            .iter()
            .filter(|r| r.seconds >= warm)
            .map(|r| (r.seconds / 60.0, mb(r.rss), mb(r.heap)))
            .collect();
        if let (Some(first), Some(last)) = (child.first(), child.last()) {
            let heap: Vec<(f64, f64)> = child.iter().map(|c| (c.0, c.2)).collect();
            rows.push(
                Row::new(
                    &scenario,
                    "dashboard process (page polled every 2 s): RSS, heap first → last",
                )
                .values(
                    format!(
                        "RSS {:.1} → {:.1} MB; heap {:.2} → {:.2} MB, slope {:+.3} MB/min",
                        first.1,
                        last.1,
                        first.2,
                        last.2,
                        slope(&heap)
                    ),
                    "—".into(),
                ),
            );
        }
    }
    rows.push(
        Row::new(
            &scenario,
            "lost / handled beyond retries / cancelled yet delivered / schedule",
        )
        .values(
            format!(
                "{} / {} / {} / {} of {} ({} offers failed, {} unknown; {} cuts, {} pauses)",
                lost_text(verdict),
                verdict.duplicated,
                verdict.cancelled_delivered,
                verdict.schedule.0,
                verdict.schedule.1.map_or("?".into(), |f| f.to_string()),
                verdict.offers_failed,
                verdict.offers_unknown,
                verdict.cuts,
                verdict.pauses
            ),
            "—".into(),
        )
        .target("0 / 0 / 0 / all fired", verdict.ok()),
    );
    rows
}

/// The soak (only when `--only` names it): see the `soak` module.
pub struct SoakRun;

impl Scenario for SoakRun {
    fn name(&self) -> &'static str {
        "soak"
    }

    fn by_default(&self) -> bool {
        false
    }

    fn run<'a>(&'a self, ctx: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let config = Config::from_args();
            eprintln!("14. soak: {}/s for {} min...", config.rate, config.minutes);
            let soak = run(&config).await;
            ctx.violation |= !soak.verdict.ok();
            soak.rows
        })
    }
}
