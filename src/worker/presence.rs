//! A running worker's presence on its queue, for operators: who consumes
//! the queue, with what settings, doing what.
//!
//! Each worker beats every [`heartbeat`](super::Worker::heartbeat) in two
//! side keys of its queue's slot (`lua/worker_beat.lua`): a hash of worker
//! id → a small JSON record (host, process, version, settings, counts, the
//! deliveries its handlers run now, at most [`MOST_SHOWN`] of them), and a
//! sorted set of worker id → its last beat on the Redis server's clock. A
//! worker that stops takes its entry back; one that dies leaves it, and a
//! reader flags it silent once it missed [`SILENT_AFTER_BEATS`] beats. Beats
//! forget workers silent for [`FORGET_AFTER`], a few at a time, and the keys
//! expire when no worker beats. Java knows neither key.
//!
//! Times in a record are ages as the worker measured them at its beat
//! (running for, lease left, up for); the reader turns them into times on
//! the Redis server's clock (the beat's time minus the age), so hosts whose
//! clocks disagree still line up.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fred::types::Value;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::handle::Counters;
use crate::connection::host::host_name;
use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::Result;
use crate::queue::tokens::TokenMap;
use crate::queue::Core;
use crate::wire::keys::QueueKeys;
use crate::wire::time;

/// How often a worker beats unless told otherwise.
pub(crate) const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(5);

/// A worker that missed this many beats in a row is flagged silent.
pub const SILENT_AFTER_BEATS: u32 = 3;

/// A worker silent this long is forgotten (by the next beat of any worker
/// of the queue), and the keys of a queue no worker beats in expire.
const FORGET_AFTER: Duration = Duration::from_secs(3600);

/// Most workers kept, and listed, per queue.
const MOST_WORKERS: usize = 500;

/// Most running deliveries a record names (the oldest); its `busy` counts all.
pub const MOST_SHOWN: usize = 16;

/// Longest wait for the entry to be taken back as the worker stops.
const LEAVE_WITHIN: Duration = Duration::from_secs(2);

/// A worker of a queue, as its last beat described it: from
/// [`Client::workers`](crate::Client::workers). Every time is on the Redis
/// server's clock.
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let orders = delayq::QueueKeys::new("orders")?;
/// for worker in client.workers(&orders).await? {
///     let state = if worker.silent { "SILENT" } else { "alive" };
///     println!(
///         "{} on {} (pid {}): {state}, {}/{} busy, {} handled, {} failed",
///         worker.id, worker.host, worker.pid, worker.busy, worker.concurrency, worker.handled, worker.failed
///     );
///     for running in &worker.running {
///         println!("  delivery {} (attempt {}) since {:?}", running.delivery, running.attempt, running.since);
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerInfo {
    /// The worker's id: its process id and a random part, new for each run.
    pub id: String,
    /// The host name of its machine (as the worker read it; may be empty).
    pub host: String,
    /// Its process id.
    pub pid: u32,
    /// The delayq version it runs.
    pub version: String,
    /// Handlers it runs at once at most ([`Worker::concurrency`](crate::Worker::concurrency)).
    pub concurrency: usize,
    /// Values it may claim ahead ([`Worker::prefetch`](crate::Worker::prefetch)).
    pub prefetch: usize,
    /// Its rate limit, if it has one.
    pub rate_limit: Option<WorkerRateLimit>,
    /// How often it beats.
    pub heartbeat: Duration,
    /// When it started.
    pub started_at: SystemTime,
    /// Its last beat.
    pub last_beat: SystemTime,
    /// Whether it missed its last [`SILENT_AFTER_BEATS`] beats: its process
    /// died, hangs, or lost Redis (a worker that stops takes its entry back).
    pub silent: bool,
    /// Values its handlers finished with success (acknowledged).
    pub handled: u64,
    /// Handler runs that failed (retried or dead-lettered), and values it
    /// could not decode.
    pub failed: u64,
    /// Handlers running at its last beat.
    pub busy: usize,
    /// What they run, the oldest first (at most [`MOST_SHOWN`]).
    pub running: Vec<RunningDelivery>,
}

/// A worker's rate limit, as it was set: `limit` values per `per`, bursts
/// of `burst` (see [`Worker::rate_limit`](crate::Worker::rate_limit)).
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// for worker in client.workers(&delayq::QueueKeys::new("payments")?).await? {
///     if let Some(rate) = worker.rate_limit {
///         println!("{} per {:?} (burst {})", rate.limit, rate.per, rate.burst);
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkerRateLimit {
    /// Permits per `per`.
    pub limit: u32,
    /// The period of `limit`.
    pub per: Duration,
    /// Permits that may be taken at once after an idle spell.
    pub burst: u32,
}

/// A delivery a worker's handler was running at its last beat.
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// for worker in client.workers(&delayq::QueueKeys::new("orders")?).await? {
///     for running in worker.running {
///         let left = running.lease_expires.duration_since(worker.last_beat).unwrap_or_default();
///         println!("{} attempt {}, lease {left:?} left", running.delivery, running.attempt);
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunningDelivery {
    /// The delivery id, as lifecycle events name it (16 hex digits).
    pub delivery: String,
    /// Its attempt (delivery count; 1 the first time).
    pub attempt: u32,
    /// The id its value was offered with, when it has one (its history:
    /// [`ReliableQueue::job`](crate::ReliableQueue::job)).
    pub job: Option<String>,
    /// When its handler started.
    pub since: SystemTime,
    /// When its lease runs out unless the worker extends it again (it does
    /// while the handler runs): the value goes back to the queue then.
    pub lease_expires: SystemTime,
}

/// The record a worker beats with (JSON in `delayq_workers:{N}`). Ages in
/// ms as the worker measured them at the beat; unknown fields are ignored
/// and missing ones default, so workers of other versions still list.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
struct Record {
    host: String,
    pid: u32,
    version: String,
    concurrency: usize,
    prefetch: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    rate: Option<RateRecord>,
    heartbeat_ms: u64,
    up_ms: u64,
    handled: u64,
    failed: u64,
    busy: usize,
    running: Vec<RunningRecord>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
struct RateRecord {
    limit: u32,
    per_ms: u64,
    burst: u32,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
struct RunningRecord {
    delivery: String,
    attempt: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    job: Option<String>,
    for_ms: u64,
    lease_ms: u64,
}

/// The deliveries a worker's handlers run now.
#[derive(Debug, Default)]
pub(crate) struct Busy {
    running: Mutex<TokenMap<Running>>,
    next: AtomicU64,
}

#[derive(Debug)]
struct Running {
    /// Formatted only when shown: the id is kept as its bytes per value.
    delivery: [u8; 8],
    attempt: u32,
    job: Option<String>,
    since: Instant,
    lease_until: Instant,
    /// Its lease set member: [`keep_leases`] extends a lease no one else
    /// does (a handler blocking its thread in its first poll, run in place).
    member: bytes::Bytes,
}

/// A delivery in [`Busy`] while its handler runs: dropped, it leaves.
pub(crate) struct Shown {
    busy: Arc<Busy>,
    key: u64,
}

impl Busy {
    /// Shows `delivery` (of `job`, if any) as running from `since`, its
    /// lease until `lease_until`.
    pub(crate) fn enter(
        self: &Arc<Self>,
        delivery: [u8; 8],
        attempt: u32,
        job: Option<&str>,
        since: Instant,
        lease_until: Instant,
        member: bytes::Bytes,
    ) -> Shown {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let running = Running {
            delivery,
            attempt,
            job: job.map(str::to_owned),
            since,
            lease_until,
            member,
        };
        self.running.lock().insert(key, running);
        Shown {
            busy: Arc::clone(self),
            key,
        }
    }

    /// How many run, and the oldest [`MOST_SHOWN`] as recorded at `now`.
    fn snapshot(&self, now: Instant) -> (usize, Vec<RunningRecord>) {
        let running = self.running.lock();
        let mut oldest: Vec<&Running> = running.values().collect();
        oldest.sort_by_key(|r| r.since);
        let shown = oldest
            .into_iter()
            .take(MOST_SHOWN)
            .map(|r| RunningRecord {
                delivery: r.delivery.iter().map(|b| format!("{b:02x}")).collect(),
                attempt: r.attempt,
                job: r.job.clone(),
                for_ms: now.saturating_duration_since(r.since).as_millis() as u64,
                lease_ms: r.lease_until.saturating_duration_since(now).as_millis() as u64,
            })
            .collect();
        (running.len(), shown)
    }
}

impl Busy {
    /// The running deliveries with less than half their lease left at
    /// `now`: a handler's own timer extends at a third (see `handling`), so
    /// these are leases no one extends.
    fn lapsing(&self, now: Instant, visibility: Duration) -> Vec<(u64, bytes::Bytes)> {
        let running = self.running.lock();
        (running.iter())
            .filter(|(_, r)| r.lease_until.saturating_duration_since(now) < visibility / 2)
            .map(|(key, r)| (*key, r.member.clone()))
            .collect()
    }

    fn extended(&self, key: u64, until: Instant) {
        if let Some(running) = self.running.lock().get_mut(&key) {
            running.lease_until = until;
        }
    }
}

/// Extends, every sixth of the visibility timeout, the leases of running
/// deliveries that no one extends: a handler is polled once in place
/// before it gets a task and its extension timer, and one that blocks its
/// thread in that poll would otherwise lose its lease while it runs. Runs
/// in the worker's own task, beside its loop, for good.
pub(crate) async fn keep_leases(busy: Arc<Busy>, core: Arc<Core>, keys: Arc<QueueKeys>, visibility: Duration) {
    let mut every = tokio::time::interval(visibility / 6);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        for (key, member) in busy.lapsing(Instant::now(), visibility) {
            let sent = Instant::now();
            match crate::queue::reliable::delivery::extend_member(&core, &keys, &member, visibility).await {
                Ok(true) => busy.extended(key, sent + visibility),
                Ok(false) => {}
                Err(error) => tracing::debug!(%error, "could not extend the lease of a running delivery"),
            }
        }
    }
}

impl Shown {
    /// The lease was extended: it now runs until `until`.
    pub(crate) fn extended(&self, until: Instant) {
        self.busy.extended(self.key, until);
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        self.busy.running.lock().remove(&self.key);
    }
}

/// What a worker beats with: its settings, fixed at the start, and where
/// to read its counts and its running deliveries.
pub(crate) struct Presence {
    pub core: Arc<Core>,
    pub keys: Arc<QueueKeys>,
    pub id: String,
    pub heartbeat: Duration,
    pub started: Instant,
    pub counters: Arc<Counters>,
    pub busy: Arc<Busy>,
    settings: Record,
}

/// The settings a worker shows.
pub(crate) struct Settings {
    pub concurrency: usize,
    pub prefetch: usize,
    pub rate_limit: Option<super::rate_limit::RateLimit>,
}

impl Presence {
    pub(crate) fn new(
        core: Arc<Core>,
        keys: Arc<QueueKeys>,
        heartbeat: Duration,
        counters: Arc<Counters>,
        busy: Arc<Busy>,
        settings: Settings,
    ) -> Presence {
        let id = format!("{}-{:08x}", std::process::id(), fastrand::u32(..));
        let settings = Record {
            host: host_name(),
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            concurrency: settings.concurrency,
            prefetch: settings.prefetch,
            rate: settings.rate_limit.map(|rate| RateRecord {
                limit: rate.limit,
                per_ms: rate.per.as_millis() as u64,
                burst: rate.burst,
            }),
            heartbeat_ms: heartbeat.as_millis() as u64,
            ..Record::default()
        };
        Presence {
            core,
            keys,
            id,
            heartbeat,
            started: Instant::now(),
            counters,
            busy,
            settings,
        }
    }

    /// Beats every heartbeat, for good (the worker's task drops it as it
    /// stops, then [`leave`](Self::leave)s). A failed beat is logged and
    /// tried again at the next.
    pub(crate) async fn beat_on(&self) {
        let mut every = tokio::time::interval(self.heartbeat);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            if let Err(error) = self.beat().await {
                tracing::debug!(queue = self.keys.destination(), %error, "a worker heartbeat failed");
            }
        }
    }

    async fn beat(&self) -> Result<()> {
        let now = Instant::now();
        let (busy, running) = self.busy.snapshot(now);
        let report = self.counters.snapshot();
        let record = Record {
            up_ms: now.saturating_duration_since(self.started).as_millis() as u64,
            handled: report.succeeded,
            failed: report.failed,
            busy,
            running,
            ..self.settings.clone()
        };
        let json = serde_json::to_string(&record).map_err(|e| crate::error::Error::Protocol(e.to_string()))?;
        self.run(vec![
            Value::from(self.id.as_str()),
            Value::from("beat"),
            Value::from(json),
            Value::from(time::saturating_ms(FORGET_AFTER)),
            Value::from(MOST_WORKERS as i64),
        ])
        .await
    }

    /// Takes the worker's entry back (it stopped), within [`LEAVE_WITHIN`].
    pub(crate) async fn leave(&self) {
        let leave = self.run(vec![Value::from(self.id.as_str()), Value::from("leave")]);
        match tokio::time::timeout(LEAVE_WITHIN, leave).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::debug!(queue = self.keys.destination(), %error, "a stopped worker could not take its entry back; it shows as silent")
            }
            Err(_) => tracing::debug!(
                queue = self.keys.destination(),
                "a stopped worker's leave got no answer in time; it shows as silent"
            ),
        }
    }

    async fn run(&self, args: Vec<Value>) -> Result<()> {
        let script = &SCRIPTS.worker_beat;
        let keys = script.keys(&self.keys).build();
        script
            .run(self.core.conn()?, self.keys.destination(), keys, args)
            .await?;
        Ok(())
    }
}

/// The workers of `keys`' queue, latest beat first (at most 500).
pub(crate) async fn list(core: &Core, keys: &QueueKeys) -> Result<Vec<WorkerInfo>> {
    let script = &SCRIPTS.workers;
    let reply = script
        .run(
            core.conn()?,
            keys.destination(),
            script.keys(keys).build(),
            vec![Value::from(MOST_WORKERS as i64)],
        )
        .await?;
    let mut items = reply::array(reply)?.into_iter();
    let now = match items.next() {
        Some(now) => reply::int(&now)?,
        None => return Err(crate::error::Error::Protocol("workers answered nothing".into())),
    };
    let mut out = Vec::new();
    while let (Some(id), Some(beat), Some(record)) = (items.next(), items.next(), items.next()) {
        let id = reply::opt_text(id)?.unwrap_or_default();
        let beat = reply::int(&beat)?;
        let Some(text) = reply::opt_text(record)? else {
            continue; // taken back between the two reads of the script: none
        };
        match serde_json::from_str::<Record>(&text) {
            Ok(record) => out.push(info(id, now, beat, record)),
            Err(error) => {
                tracing::warn!(queue = keys.destination(), worker = id, %error, "a worker record does not parse; not listed")
            }
        }
    }
    Ok(out)
}

/// A record read at `now` (server ms), beaten at `beat`, as a [`WorkerInfo`].
fn info(id: String, now: i64, beat: i64, record: Record) -> WorkerInfo {
    let at = |ms: i64| time::from_ms(ms.max(0));
    let ago = |age: u64| at(beat.saturating_sub(age.min(i64::MAX as u64) as i64));
    let ahead = |left: u64| at(beat.saturating_add(left.min(i64::MAX as u64) as i64));
    let heartbeat = Duration::from_millis(record.heartbeat_ms.max(1));
    let silent_after = heartbeat.as_millis() as i64 * i64::from(SILENT_AFTER_BEATS);
    WorkerInfo {
        id,
        host: record.host,
        pid: record.pid,
        version: record.version,
        concurrency: record.concurrency,
        prefetch: record.prefetch,
        rate_limit: record.rate.map(|r| WorkerRateLimit {
            limit: r.limit,
            per: Duration::from_millis(r.per_ms),
            burst: r.burst,
        }),
        heartbeat,
        started_at: ago(record.up_ms),
        last_beat: at(beat),
        silent: now - beat > silent_after,
        handled: record.handled,
        failed: record.failed,
        busy: record.busy,
        running: record
            .running
            .into_iter()
            .map(|r| RunningDelivery {
                delivery: r.delivery,
                attempt: r.attempt,
                job: r.job,
                since: ago(r.for_ms),
                lease_expires: ahead(r.lease_ms),
            })
            .collect(),
    }
}
