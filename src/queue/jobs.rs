//! Job histories: where a value offered with an id is, and its last
//! attempts, from any state (`lua/lib/jobs.lua` keeps them, atomically with
//! each step; `lua/job_history.lua` reads one).

use std::time::{Duration, SystemTime};

use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};
use serde::Deserialize;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::connection::while_slot_moves;
use crate::error::{CommandResult, Error, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;
use crate::wire::{format, time};

/// Most attempts a job's history keeps (the last ones).
pub const MAX_ATTEMPTS: usize = 10;
/// Most bytes of error text an attempt keeps: its error, then its source
/// chain, then its backtrace, each cut to what is left.
pub const MAX_ERROR_BYTES: usize = 4096;
/// How long a handled job's history is kept by default.
pub const DEFAULT_HISTORY_TTL: Duration = Duration::from_secs(24 * 3600);

/// Where a job offered with an id is now, and its last attempts: what
/// [`ReliableQueue::job`](crate::ReliableQueue::job) and
/// [`DelayedQueue::job`](crate::DelayedQueue::job) read.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// use delayq::jobs::JobState;
///
/// let history = queue.job("order-42").await?;
/// match &history.state {
///     JobState::DeadLettered { reason, .. } => println!("dead: {reason}"),
///     state => println!("{state:?}"),
/// }
/// for attempt in &history.attempts {
///     println!("{:?} on {}: {:?} {:?}", attempt.started, attempt.worker, attempt.outcome, attempt.error);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JobHistory {
    /// The job's id.
    pub id: String,
    /// Where it is now.
    pub state: JobState,
    /// How many attempts it has had in all (more than `attempts` holds
    /// once past [`MAX_ATTEMPTS`]).
    pub attempts_total: u32,
    /// Its last attempts, oldest first.
    pub attempts: Vec<Attempt>,
    /// The queue's history switch when this was read: how long handled and
    /// deleted histories are kept, or `None` when the queue keeps none
    /// ([`ReliableQueue::set_job_history`](crate::ReliableQueue::set_job_history));
    /// then only a pending job is found (through the id index).
    pub history: Option<Duration>,
    /// When a cancel was asked for it
    /// ([`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job)),
    /// while it has not ended yet.
    pub cancel_requested: Option<SystemTime>,
    /// The last progress its handler reported
    /// ([`JobContext::progress`](crate::worker::JobContext::progress)).
    pub progress: Option<Progress>,
    /// The result its handler returned, once it was acknowledged with one
    /// ([`Worker::run_job`](crate::Worker::run_job),
    /// [`Delivery::ack_with_result`](crate::Delivery::ack_with_result)).
    pub result: Option<JobResult>,
}

impl JobHistory {
    /// Whether the job has ended: handled, dead-lettered, deleted,
    /// cancelled or removed. [`ReliableQueue::wait_job`](crate::ReliableQueue::wait_job)
    /// waits for this.
    ///
    /// ```
    /// # fn demo(history: delayq::jobs::JobHistory) {
    /// if history.is_finished() {
    ///     println!("{} is done: {}", history.id, history.state.name());
    /// }
    /// # }
    /// ```
    pub fn is_finished(&self) -> bool {
        matches!(
            self.state,
            JobState::Handled { .. }
                | JobState::DeadLettered { .. }
                | JobState::Deleted { .. }
                | JobState::Cancelled { .. }
                | JobState::Removed { .. }
        )
    }
}

/// The last progress a running job reported: a small JSON value (a number
/// such as `0.4`, or an object), kept with the job's history.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// if let Some(progress) = queue.job("import-7").await?.progress {
///     println!("at {:?}: {}", progress.at, progress.value);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// What the handler reported.
    pub value: serde_json::Value,
    /// When it was kept (the Redis server's clock).
    pub at: SystemTime,
    /// The delivery that reported it (16 hex digits).
    pub delivery: String,
}

impl Eq for Progress {}

/// The result a job's handler returned: JSON, as the handler's value
/// serialized, kept with the job's history for as long as it.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// use std::time::Duration;
///
/// #[derive(serde::Deserialize)]
/// struct Receipt { total: u64 }
///
/// if let Some(history) = queue.wait_job("order-42", Duration::from_secs(30)).await? {
///     if let Some(result) = &history.result {
///         let receipt: Receipt = result.value()?;
///         println!("charged {}", receipt.total);
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JobResult {
    /// When the ack kept it (the Redis server's clock).
    pub at: SystemTime,
    /// The JSON text.
    pub json: bytes::Bytes,
}

impl JobResult {
    /// The result read as `R` (`Error::Decode`'s kin,
    /// [`Error::InvalidArgument`] naming the
    /// serde error, when it does not read as one).
    pub fn value<R: serde::de::DeserializeOwned>(&self) -> Result<R> {
        serde_json::from_slice(&self.json)
            .map_err(|e| Error::InvalidArgument(format!("the job's result does not read as the type asked for: {e}")))
    }
}

/// Most bytes of a job's progress, as JSON.
pub const MAX_PROGRESS_BYTES: usize = 4096;
/// Most bytes of a job's result, as JSON.
pub const MAX_RESULT_BYTES: usize = 65536;

/// What [`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job)
/// did.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// use delayq::jobs::CancelOutcome;
///
/// match queue.cancel_job("import-7").await? {
///     CancelOutcome::Running { delivery } => println!("its handler is told ({delivery})"),
///     CancelOutcome::Pending => println!("it will never be due"),
///     CancelOutcome::Queued { .. } => println!("it will not run"),
///     CancelOutcome::Finished { state } => println!("too late: it is {state}"),
///     CancelOutcome::Unknown => println!("no such job"),
///     _ => {}
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CancelOutcome {
    /// Its element waited in the delayed queue: it is gone, as
    /// [`DelayedQueue::cancel`](crate::DelayedQueue::cancel) does.
    Pending,
    /// It was ready (or waiting as a retry): the take that reaches it drops
    /// it instead of delivering it.
    Queued {
        /// Where it was (`ready`, `pending`).
        state: String,
    },
    /// A consumer holds it: a [`Worker`](crate::Worker) running it tells its
    /// handler within its cancel poll
    /// ([`Worker::cancel_poll`](crate::Worker::cancel_poll)); a handler that
    /// stops settles it as cancelled, and it is not retried.
    Running {
        /// The delivery that runs it (16 hex digits).
        delivery: String,
    },
    /// It had ended already: nothing changed.
    Finished {
        /// How it ended (`handled`, `dead`, `deleted`, `cancelled`, `removed`).
        state: String,
    },
    /// No such id pending and no history of it: never offered with this
    /// id, a queue that keeps no job history, or its history expired.
    Unknown,
}

/// Where a job is (see [`JobHistory`]).
///
/// ```
/// use delayq::jobs::JobState;
/// assert_eq!(JobState::Unknown.name(), "unknown");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobState {
    /// Waiting in the delayed queue (offered, or a retry), due then.
    Pending {
        /// When it is due.
        due: SystemTime,
    },
    /// In the queue's list, ready to be taken, since then.
    Ready {
        /// Since when.
        since: SystemTime,
    },
    /// Taken by a reliable consumer, running since then.
    InFlight {
        /// Since when.
        since: SystemTime,
        /// The delivery's id (16 hex digits, as lifecycle events name it).
        delivery: String,
    },
    /// In the dead-letter list, since then, and why.
    DeadLettered {
        /// Since when.
        since: SystemTime,
        /// Why.
        reason: String,
    },
    /// Acknowledged: done. Its history is kept for the queue's history
    /// time ([`ReliableQueue::set_job_history`](crate::ReliableQueue::set_job_history)).
    Handled {
        /// When it was acknowledged.
        at: SystemTime,
    },
    /// Its dead letter was deleted (its history is kept for the queue's
    /// history time).
    Deleted {
        /// When.
        at: SystemTime,
    },
    /// Stopped by [`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job):
    /// dropped before it ran, or settled as cancelled by its handler.
    Cancelled {
        /// When.
        at: SystemTime,
        /// How (`cancelled before it ran`, `cancelled while it ran`,
        /// `cancelled before it was due`).
        how: String,
    },
    /// It left the pending set without being transferred: cancelled or
    /// removed (by delayq or by Java) while a retry waited.
    Removed {
        /// When it was last seen pending.
        since: SystemTime,
    },
    /// No such id pending and no history: never offered with this id, on
    /// a queue that keeps no job history, taken by a consumer that keeps
    /// none (Java, a plain take), or its history expired.
    Unknown,
}

impl JobState {
    /// A short name of the state (`pending`, `ready`, `in_flight`,
    /// `dead_lettered`, `handled`, `deleted`, `cancelled`, `removed`, `unknown`).
    pub fn name(&self) -> &'static str {
        match self {
            JobState::Pending { .. } => "pending",
            JobState::Ready { .. } => "ready",
            JobState::InFlight { .. } => "in_flight",
            JobState::DeadLettered { .. } => "dead_lettered",
            JobState::Handled { .. } => "handled",
            JobState::Deleted { .. } => "deleted",
            JobState::Cancelled { .. } => "cancelled",
            JobState::Removed { .. } => "removed",
            JobState::Unknown => "unknown",
        }
    }
}

/// One attempt of a job: a delivery to a consumer.
///
/// ```no_run
/// # fn demo(attempt: &delayq::jobs::Attempt) {
/// if let Some(error) = &attempt.error {
///     eprintln!("{} failed: {error}", attempt.worker);
///     for cause in &attempt.chain {
///         eprintln!("  caused by: {cause}");
///     }
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// When its delivery was claimed.
    pub started: SystemTime,
    /// When it ended (`None`: still running).
    pub ended: Option<SystemTime>,
    /// The consumer that ran it: a worker's id and host (`<pid>-<random>@host`),
    /// or the host and process of a plain reliable take.
    pub worker: String,
    /// The delivery's id (16 hex digits).
    pub delivery: String,
    /// How it ended: `ok`, `failed`, `timed_out` (its visibility timeout
    /// lapsed: the consumer died or stalled), `nacked`, `rejected`,
    /// `dead_lettered`, `dropped`, `cancelled`; `None` while running.
    pub outcome: Option<String>,
    /// Its error, when it failed.
    pub error: Option<String>,
    /// The error's source chain, outermost first.
    pub chain: Vec<String>,
    /// A backtrace, when the handler's error carried one
    /// ([`Backtraced`](crate::worker::Backtraced)).
    pub backtrace: Option<String>,
}

/// A job's record as `lua/lib/jobs.lua` writes it.
#[derive(Deserialize)]
struct Record {
    s: String,
    t: f64,
    #[serde(default)]
    n: f64,
    #[serde(default)]
    a: Option<Vec<RawAttempt>>,
    #[serde(default)]
    r: Option<String>,
    #[serde(default)]
    d: Option<String>,
}

#[derive(Deserialize)]
struct RawAttempt {
    s: f64,
    #[serde(default)]
    e: Option<f64>,
    #[serde(default)]
    w: Option<String>,
    #[serde(default)]
    d: Option<String>,
    #[serde(default)]
    o: Option<String>,
    #[serde(default)]
    x: Option<String>,
    #[serde(default)]
    c: Option<String>,
    #[serde(default)]
    b: Option<String>,
}

fn at(ms: f64) -> SystemTime {
    time::from_ms(ms as i64)
}

/// Reads the history of job `id` of a queue.
pub(crate) async fn history(core: &Core, keys: &QueueKeys, id: &str) -> Result<JobHistory> {
    crate::queue::delayed::check_id(id)?;
    let script = &SCRIPTS.job_history;
    let value = script
        .run(
            core.conn()?,
            keys.destination(),
            script.keys(keys).build(),
            vec![Value::from(id)],
        )
        .await?;
    let [element, due, record, keep, cancel, progress, result] = reply::tuple::<7>(value)?.map(|v| match v {
        Value::Boolean(false) => Value::Null,
        v => v,
    });
    let pending = match (reply::opt_bytes(element)?, reply::opt_score(due)?) {
        (Some(element), Some(due)) => {
            format::unpack(&element).map_err(|e| Error::Protocol(format!("id {id:?}: {e}")))?;
            Some(time::from_ms(due))
        }
        _ => None,
    };
    let record: Option<Record> = match reply::opt_bytes(record)? {
        Some(raw) => Some(
            serde_json::from_slice(&raw)
                .map_err(|e| Error::Protocol(format!("the history of job {id:?} does not parse: {e}")))?,
        ),
        None => None,
    };
    let mut history = parse(id, pending, record);
    history.history = keep_of(keep)?;
    if !history.is_finished() {
        history.cancel_requested = reply::opt_score(cancel).ok().flatten().map(time::from_ms);
    }
    history.progress = reply::opt_bytes(progress)?.and_then(|raw| parse_progress(&raw));
    history.result = reply::opt_bytes(result)?.and_then(|raw| parse_result(&raw));
    Ok(history)
}

/// `p:<id>` as `lua/progress.lua` writes it: delivery, sequence, ms, JSON
/// (`\x1f` between); `None` for one that does not read (written by hand).
fn parse_progress(raw: &[u8]) -> Option<Progress> {
    let mut parts = raw.splitn(4, |b| *b == 0x1f);
    let delivery = std::str::from_utf8(parts.next()?).ok()?.to_owned();
    let _seq = parts.next()?;
    let at: i64 = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
    let value = serde_json::from_slice(parts.next()?).ok()?;
    Some(Progress {
        value,
        at: time::from_ms(at),
        delivery,
    })
}

/// `o:<id>` as the acks write it: ms, `\x1f`, JSON.
fn parse_result(raw: &[u8]) -> Option<JobResult> {
    let cut = raw.iter().position(|b| *b == 0x1f)?;
    let at: i64 = std::str::from_utf8(&raw[..cut]).ok()?.parse().ok()?;
    Some(JobResult {
        at: time::from_ms(at),
        json: bytes::Bytes::copy_from_slice(&raw[cut + 1..]),
    })
}

/// Asks a cancel of job `id` (`lua/cancel_job.lua`).
pub(crate) async fn cancel(core: &Core, keys: &QueueKeys, id: &str) -> Result<CancelOutcome> {
    crate::queue::delayed::check_id(id)?;
    let script = &SCRIPTS.cancel_job;
    let value = crate::connection::request::Request::new(keys.destination())
        .apply(
            core.conn()?,
            core.settling(),
            script,
            script.keys(keys).build(),
            vec![Value::from(id)],
        )
        .await?;
    let [what, detail] = reply::tuple::<2>(value)?;
    let detail = match detail {
        Value::Boolean(false) | Value::Null => String::new(),
        v => reply::opt_text(v)?.unwrap_or_default(),
    };
    let what = reply::opt_text(what)?.unwrap_or_default();
    Ok(match what.as_str() {
        "pending" => CancelOutcome::Pending,
        "queued" => CancelOutcome::Queued { state: detail },
        "running" => CancelOutcome::Running { delivery: detail },
        "finished" => CancelOutcome::Finished { state: detail },
        "unknown" => CancelOutcome::Unknown,
        other => return Err(Error::Protocol(format!("cancel_job answered {other:?}"))),
    })
}

/// How often [`wait`] reads a job's history at first, and at most.
const WAIT_POLL: (Duration, Duration) = (Duration::from_millis(10), Duration::from_millis(250));

/// Reads job `id`'s history until it has ended, or `None` after `timeout`:
/// a read at once, then one every 10 ms, doubling up to 250 ms.
pub(crate) async fn wait(core: &Core, keys: &QueueKeys, id: &str, timeout: Duration) -> Result<Option<JobHistory>> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = WAIT_POLL.0;
    loop {
        let history = history(core, keys, id).await?;
        if history.is_finished() {
            return Ok(Some(history));
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(WAIT_POLL.1);
    }
}

/// Sequence numbers of progress reports: one counter for the process, so
/// each delivery's reports rise.
static PROGRESS_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A value as JSON, within `max` bytes.
pub(crate) fn to_json(value: &impl serde::Serialize, what: &str, max: usize) -> Result<bytes::Bytes> {
    let json = serde_json::to_vec(value)
        .map_err(|e| Error::InvalidArgument(format!("the {what} does not serialize as JSON: {e}")))?;
    if json.len() > max {
        return Err(Error::InvalidArgument(format!(
            "the {what} is {} bytes as JSON; at most {max} are kept",
            json.len()
        )));
    }
    Ok(bytes::Bytes::from(json))
}

/// Keeps the progress `json` of the delivery `member` (`lua/progress.lua`):
/// `true` when it is kept, `false` when the delivery is no longer in
/// flight or has no job.
pub(crate) async fn report_progress(
    core: &Core,
    keys: &QueueKeys,
    member: &bytes::Bytes,
    json: bytes::Bytes,
) -> Result<bool> {
    let seq = PROGRESS_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let script = &SCRIPTS.progress;
    let value = script
        .run(
            core.conn()?,
            keys.destination(),
            script.keys(keys).build(),
            vec![
                Value::Bytes(member.clone()),
                Value::from(seq as i64),
                Value::Bytes(json),
            ],
        )
        .await?;
    match reply::int(&value)? {
        1 => Ok(true),
        0 | 2 => Ok(false),
        _ => Err(Error::InvalidArgument(format!(
            "a progress is at most {MAX_PROGRESS_BYTES} bytes as JSON"
        ))),
    }
}

/// The switch's field in the job records' hash (`lua/lib/jobs.lua`).
const SWITCH: &str = "on";

fn keep_of(raw: Value) -> Result<Option<Duration>> {
    match reply::opt_bytes(raw)? {
        None => Ok(None),
        Some(raw) => std::str::from_utf8(&raw)
            .ok()
            .and_then(|ms| ms.parse::<u64>().ok())
            .map(|ms| Some(Duration::from_millis(ms)))
            .ok_or_else(|| Error::Protocol(format!("the job history switch holds {raw:?}, not a time in ms"))),
    }
}

/// Turns the queue's job history on, keeping handled and deleted histories
/// for `keep`, or off (`None`): both keys go, and every history with them.
pub(crate) async fn set_switch(core: &Core, keys: &QueueKeys, keep: Option<Duration>) -> Result<()> {
    let conn = core.conn()?;
    let jobs = keys.jobs();
    let (command, args) = match keep {
        Some(keep) => (
            CustomCommand::new_static("HSET", ClusterHash::FirstKey, false),
            vec![
                Value::from(jobs.as_str()),
                Value::from(SWITCH),
                Value::from(time::saturating_ms(keep)),
            ],
        ),
        None => (
            CustomCommand::new_static("UNLINK", ClusterHash::FirstKey, false),
            vec![Value::from(jobs.as_str()), Value::from(keys.jobs_expiry())],
        ),
    };
    // UNLINK's two keys: while the queue's Cluster slot moves, TRYAGAIN until it is done.
    let _: Value = while_slot_moves(|| conn.custom(command.clone(), args.clone()))
        .await
        .on_key(&jobs)?;
    Ok(())
}

/// The queue's job history switch: how long handled histories are kept, or
/// `None` when it keeps none.
pub(crate) async fn switch(core: &Core, keys: &QueueKeys) -> Result<Option<Duration>> {
    let jobs = keys.jobs();
    let raw: Value = core
        .conn()?
        .custom(
            CustomCommand::new_static("HGET", ClusterHash::FirstKey, false),
            vec![Value::from(jobs.as_str()), Value::from(SWITCH)],
        )
        .await
        .on_key(&jobs)?;
    keep_of(raw)
}

fn parse(id: &str, pending: Option<SystemTime>, record: Option<Record>) -> JobHistory {
    let (state, attempts_total, attempts) = match record {
        None => (
            pending.map_or(JobState::Unknown, |due| JobState::Pending { due }),
            0,
            Vec::new(),
        ),
        Some(record) => {
            let since = at(record.t);
            let state = match (pending, record.s.as_str()) {
                (Some(due), _) => JobState::Pending { due },
                (None, "ready") => JobState::Ready { since },
                (None, "in_flight") => JobState::InFlight {
                    since,
                    delivery: record.d.unwrap_or_default(),
                },
                (None, "dead") => JobState::DeadLettered {
                    since,
                    reason: record.r.unwrap_or_default(),
                },
                (None, "handled") => JobState::Handled { at: since },
                (None, "deleted") => JobState::Deleted { at: since },
                (None, "cancelled") => JobState::Cancelled {
                    at: since,
                    how: record.r.unwrap_or_default(),
                },
                (None, _) => JobState::Removed { since },
            };
            let attempts = record.a.unwrap_or_default().into_iter().map(attempt).collect();
            (state, record.n as u32, attempts)
        }
    };
    JobHistory {
        id: id.to_owned(),
        state,
        attempts_total,
        attempts,
        history: None,
        cancel_requested: None,
        progress: None,
        result: None,
    }
}

fn attempt(raw: RawAttempt) -> Attempt {
    Attempt {
        started: at(raw.s),
        ended: raw.e.map(at),
        worker: raw.w.unwrap_or_default(),
        delivery: raw.d.unwrap_or_default(),
        outcome: raw.o,
        error: raw.x,
        chain: raw
            .c
            .map(|c| c.lines().map(str::to_owned).collect())
            .unwrap_or_default(),
        backtrace: raw.b,
    }
}

/// How an attempt ended, as a release sends it to `lua/nack.lua`: the
/// outcome, the error, its source chain (one a line), a backtrace.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ending {
    pub outcome: &'static str,
    pub error: String,
    pub chain: String,
    pub backtrace: String,
}

impl Ending {
    /// A failed attempt with `error`: its text, its sources, and the first
    /// backtrace `backtrace_of` finds in its chain (the worker looks for its
    /// `Backtraced`: the queue layer does not name the worker's types); cut
    /// to [`MAX_ERROR_BYTES`] together on character boundaries (the script
    /// cuts again, so no caller passes more).
    pub(crate) fn failed(
        outcome: &'static str,
        error: &(dyn std::error::Error + 'static),
        backtrace_of: impl Fn(&(dyn std::error::Error + 'static)) -> Option<String>,
    ) -> Ending {
        let mut left = MAX_ERROR_BYTES;
        let text = cut(&error.to_string(), &mut left);
        let mut chain = String::new();
        let mut backtrace = None;
        // Each source's text, one a line, skipping one that repeats the
        // text before it (a wrapper that displays as what it wraps).
        let mut last = error.to_string();
        let mut next = Some(error);
        while let Some(e) = next {
            if backtrace.is_none() {
                backtrace = backtrace_of(e);
            }
            if let Some(source) = e.source() {
                let line = source.to_string().replace(['\n', '\r'], " ");
                if line != last && left > 0 {
                    if !chain.is_empty() {
                        chain.push('\n');
                        left = left.saturating_sub(1);
                    }
                    chain.push_str(&cut(&line, &mut left));
                }
                last = line;
            }
            next = e.source();
        }
        let backtrace = backtrace.map(|b| cut(&b, &mut left)).unwrap_or_default();
        Ending {
            outcome,
            error: text,
            chain,
            backtrace,
        }
    }
}

/// At most `*left` bytes of `text`, cut on a character boundary; `*left`
/// goes down by what is kept.
fn cut(text: &str, left: &mut usize) -> String {
    let mut end = text.len().min(*left);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    *left -= end;
    text[..end].to_owned()
}

/// The name a plain reliable take records as its attempts' consumer: the
/// host and the process.
pub(crate) fn this_process() -> std::sync::Arc<str> {
    static NAME: std::sync::OnceLock<std::sync::Arc<str>> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let host = crate::connection::host::host_name();
        format!("pid {}@{host}", std::process::id()).into()
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "charging failed")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn an_ending_keeps_the_chain_and_caps_the_text_on_a_char_boundary() {
        let error = Outer(std::io::Error::other("card declined"));
        let ending = Ending::failed("failed", &error, |_| None);
        assert_eq!(ending.error, "charging failed");
        assert_eq!(ending.chain, "card declined");
        let long = Outer(std::io::Error::other("é".repeat(5000)));
        let ending = Ending::failed("failed", &long, |_| None);
        assert!(ending.error.len() + ending.chain.len() <= MAX_ERROR_BYTES);
        assert!(ending.chain.len() >= MAX_ERROR_BYTES - 20 - 1);
    }
}
