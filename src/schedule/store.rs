//! The stored schedules of a queue (`delayq_schedules:{N}`) and the scripts
//! that read and change them.

use std::time::{Duration, SystemTime};

use base64::Engine as _;
use bytes::Bytes;
use fred::types::Value;
use serde::Deserialize;

use crate::connection::reply;
use crate::connection::request::Request;
use crate::connection::script::{Script, SCRIPTS};
use crate::error::{Error, Result};
use crate::queue::Core;
use crate::wire::format::{self, Format};
use crate::wire::keys::QueueKeys;
use crate::wire::time;

use super::spec::{Definition, Plan, ScheduleSpec};

/// Most schedules one queue may hold (keeps every schedule script bounded).
pub(crate) const MAX_SCHEDULES: usize = 1_000;

/// Longest schedule name.
const MAX_NAME: usize = 256;

/// A runner beats at most this often per queue it runs.
pub(crate) const BEAT: Duration = Duration::from_secs(5);

/// A runner whose last beat is older is taken for dead (several beats
/// missed: a loaded process is late, not dead).
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(30);

/// Most runners a queue's heartbeat key keeps (the oldest beat goes first).
const MAX_RUNNERS: usize = 1_000;

/// One schedule as stored: the record's JSON, as `lua/schedule_*.lua` write it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Record {
    pub def: String,
    pub rev: String,
    pub next_ms: String,
    #[serde(default)]
    pub paused: bool,
    #[serde(default)]
    pub fired: f64,
    #[serde(default)]
    pub missed: f64,
    #[serde(default)]
    pub last_ms: Option<String>,
}

impl Record {
    fn parse(raw: &[u8]) -> Result<Record> {
        serde_json::from_slice(raw).map_err(|e| Error::Protocol(format!("bad stored schedule record: {e}")))
    }

    pub(super) fn next(&self) -> Result<i64> {
        self.next_ms
            .parse()
            .map_err(|_| Error::Protocol(format!("bad next_ms {:?} in a stored schedule", self.next_ms)))
    }
}

/// A schedule as read from Redis: its definition decoded.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    pub record: Record,
    pub spec: ScheduleSpec,
    pub payload: Bytes,
    pub format: Format,
}

impl Stored {
    pub(super) fn parse(raw: &[u8]) -> Result<Stored> {
        let record = Record::parse(raw)?;
        let def: Definition = serde_json::from_str(&record.def)
            .map_err(|e| Error::Protocol(format!("bad stored schedule definition: {e}")))?;
        let spec = ScheduleSpec::from_definition(&def)?;
        let payload = base64::engine::general_purpose::STANDARD
            .decode(&def.payload)
            .map_err(|e| Error::Protocol(format!("bad stored schedule payload: {e}")))?;
        let format = def.format.parse().map_err(Error::Protocol)?;
        Ok(Stored {
            record,
            spec,
            payload: Bytes::from(payload),
            format,
        })
    }

    pub(super) fn info(&self, queue: &str, name: &str) -> ScheduleInfo {
        let next = self.record.next().ok().filter(|&ms| ms < i64::MAX);
        ScheduleInfo {
            name: name.to_owned(),
            queue: queue.to_owned(),
            spec: self.spec.clone(),
            payload: self.payload.clone(),
            format: self.format,
            next: next.map(time::from_ms),
            paused: self.record.paused,
            fired: self.record.fired as u64,
            missed: self.record.missed as u64,
            last_fired: self
                .record
                .last_ms
                .as_deref()
                .and_then(|ms| ms.parse().ok())
                .map(time::from_ms),
            revision: self.record.rev.parse().unwrap_or(0),
        }
    }
}

/// What is stored about one recurring schedule, as [`Schedules::list`](crate::schedule::Schedules::list) reads it.
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let reports = delayq::QueueKeys::new("reports")?;
/// for info in client.schedules(&reports)?.list().await? {
///     println!("{} ({}): next {:?}, fired {}, missed {}", info.name, info.spec, info.next, info.fired, info.missed);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ScheduleInfo {
    /// The schedule's name (unique within its queue).
    pub name: String,
    /// The queue it offers to.
    pub queue: String,
    /// When it fires.
    pub spec: ScheduleSpec,
    /// The value it offers, as the queue's codec encoded it.
    pub payload: Bytes,
    /// The element format its offers are packed in.
    pub format: Format,
    /// The next occurrence (`None`: it never fires again).
    pub next: Option<SystemTime>,
    /// Whether it is paused.
    pub paused: bool,
    /// Occurrences offered so far, by every process.
    pub fired: u64,
    /// Occurrences skipped by the misfire policy so far.
    pub missed: u64,
    /// The last occurrence offered.
    pub last_fired: Option<SystemTime>,
    /// Changes each time the schedule is saved with another definition, and
    /// when it is removed and added again: never the same number twice for
    /// one name (it grows; from this version on, at least the Redis server's
    /// clock in ms when it was given; schedules saved by older versions
    /// start at 1).
    pub revision: u64,
}

/// The reply of `schedule_fire.lua`.
#[derive(Debug)]
pub(crate) enum FireOutcome {
    /// Offered; the record as it is now.
    Fired(Stored),
    /// Someone else fired it or changed it first (or it is paused): the record as it is.
    Stale(Stored),
    /// Removed.
    Gone,
    /// Not due yet on the server's clock: its time (ms).
    Early(i64),
    /// A random id collided with a pending element: pack again.
    Collision,
}

/// The error of an operation on a schedule the queue does not hold.
pub(super) fn no_such(keys: &QueueKeys, name: &str) -> Error {
    Error::NoSuchSchedule {
        queue: keys.destination().to_owned(),
        name: name.to_owned(),
    }
}

/// Who runs a fire, as the fire history records it: a runner's id (the
/// one its heartbeats carry) and its host.
#[derive(Debug, Clone)]
pub(crate) struct FiredBy {
    pub id: String,
    pub host: String,
}

pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(Error::InvalidArgument(format!(
            "a schedule name must be 1 to {MAX_NAME} bytes, not {}",
            name.len()
        )));
    }
    Ok(())
}

/// Runs `script` on the queue's schedule keys (the script's KEYS, built
/// from its declaration).
async fn run(core: &Core, keys: &QueueKeys, script: &'static Script, args: Vec<Value>) -> Result<Value> {
    let k = script.keys(keys).build();
    Ok(script.run(core.conn()?, keys.destination(), k, args).await?)
}

/// Runs a script that changes a schedule as a [`Request`]: fred's resend
/// after a lost reply gets the first run's answer (a resent remove would
/// find nothing; a resent save would undo a save made meanwhile), and a
/// reply lost for good fails with [`Error::OutcomeUnknown`].
pub(super) async fn request(core: &Core, keys: &QueueKeys, script: &'static Script, args: Vec<Value>) -> Result<Value> {
    let k = script.keys(keys).build();
    Ok(Request::new(keys.destination())
        .apply(core.conn()?, core.settling(), script, k, args)
        .await?)
}

/// The server's clock (ms) and the named schedule, or all of them.
pub(crate) async fn list(core: &Core, keys: &QueueKeys, name: Option<&str>) -> Result<(i64, Vec<(String, Stored)>)> {
    let args = name.map(|n| vec![Value::from(n)]).unwrap_or_default();
    let reply = reply::array(run(core, keys, &SCRIPTS.schedule_list, args).await?)?;
    let mut items = reply.into_iter();
    let now = items
        .next()
        .map(|v| reply::int(&v))
        .transpose()?
        .ok_or_else(|| Error::Protocol("schedule_list: no time".into()))?;
    let mut out = Vec::new();
    while let (Some(name), Some(raw)) = (items.next(), items.next()) {
        let name = reply::opt_text(name)?.unwrap_or_default();
        let raw = reply::bytes(raw)?;
        match Stored::parse(&raw) {
            Ok(stored) => out.push((name, stored)),
            Err(error) => {
                tracing::warn!(queue = keys.destination(), schedule = name, %error, "skipping a stored schedule that does not parse")
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((now, out))
}

/// Adds or replaces a schedule (the same definition keeps its record).
pub(crate) async fn save(
    core: &Core,
    keys: &QueueKeys,
    name: &str,
    spec: &ScheduleSpec,
    payload: &[u8],
    format: Format,
) -> Result<ScheduleInfo> {
    check_name(name)?;
    spec.validate()?;
    let mut def = spec.definition();
    def.payload = base64::engine::general_purpose::STANDARD.encode(payload);
    def.format = format.as_str().to_owned();
    let def = serde_json::to_string(&def).map_err(|e| Error::Protocol(e.to_string()))?;
    let (now, _) = list(core, keys, Some(name)).await?;
    let first = spec.first(now)?;
    let args = vec![
        Value::from(name),
        Value::from(def),
        Value::from(first.to_string()),
        Value::from(MAX_SCHEDULES as i64),
    ];
    let saved = match request(core, keys, &SCRIPTS.schedule_save, args).await {
        Err(Error::Script { message, .. }) if message.contains("schedules, the most") => {
            return Err(Error::InvalidArgument(format!(
                "queue {} already has {MAX_SCHEDULES} schedules, the most a queue may have",
                keys.destination()
            )))
        }
        other => other?,
    };
    let [_, raw] = reply::tuple::<2>(saved)?;
    Ok(Stored::parse(&reply::bytes(raw)?)?.info(keys.destination(), name))
}

/// Offers what `plan` says for the schedule `name` read as `stored`, if
/// nobody did first.
pub(crate) async fn fire(
    core: &Core,
    keys: &QueueKeys,
    name: &str,
    stored: &Stored,
    plan: &Plan,
    by: &FiredBy,
) -> Result<FireOutcome> {
    let mut args = Vec::with_capacity(9 + plan.fire.len() * 2);
    args.push(Value::from(name));
    args.push(Value::from(stored.record.rev.as_str()));
    args.push(Value::from(stored.record.next_ms.as_str()));
    args.push(Value::from(plan.next_ms.to_string()));
    args.push(Value::from(plan.missed as i64));
    // A resend that finds this token in the record knows its first run fired.
    args.push(Value::from(format!("{:016x}", fastrand::u64(..))));
    args.push(Value::from(by.id.as_str()));
    args.push(Value::from(by.host.as_str()));
    args.push(Value::from(if plan.late { "late" } else { "on_time" }));
    for due in &plan.fire {
        args.push(Value::from(due.to_string()));
        args.push(Value::Bytes(format::pack(stored.format, &stored.payload)));
    }
    let reply = reply::array(run(core, keys, &SCRIPTS.schedule_fire, args).await?)?;
    let mut items = reply.into_iter();
    let tag = items
        .next()
        .map(reply::opt_text)
        .transpose()?
        .flatten()
        .unwrap_or_default();
    let mut record = || -> Result<Stored> {
        let raw = items
            .next()
            .ok_or_else(|| Error::Protocol("schedule_fire: no record".into()))?;
        Stored::parse(&reply::bytes(raw)?)
    };
    Ok(match tag.as_str() {
        // Also a resend whose first run fired: the record as it is now.
        "fired" => FireOutcome::Fired(record()?),
        "stale" => FireOutcome::Stale(record()?),
        "gone" => FireOutcome::Gone,
        "collision" => FireOutcome::Collision,
        "early" => {
            let now = items.next().map(|v| reply::int(&v)).transpose()?.unwrap_or(0);
            FireOutcome::Early(now)
        }
        other => return Err(Error::Protocol(format!("schedule_fire: unexpected reply {other:?}"))),
    })
}

/// Offers the schedule's value once, now, by hand, leaving its next
/// occurrence and counts as they are: when it is due (now, on the server's
/// clock). Request-keyed: a resend answers as the first run and offers
/// nothing again.
pub(crate) async fn run_now(core: &Core, keys: &QueueKeys, name: &str) -> Result<SystemTime> {
    check_name(name)?;
    let by = std::process::id().to_string();
    let host = crate::connection::host::host_name();
    for _ in 0..10 {
        let (_, found) = list(core, keys, Some(name)).await?;
        let Some((_, stored)) = found.into_iter().next() else {
            return Err(no_such(keys, name));
        };
        let args = vec![
            Value::from(name),
            Value::from(stored.record.rev.as_str()),
            Value::Bytes(format::pack(stored.format, &stored.payload)),
            Value::from(by.as_str()),
            Value::from(host.as_str()),
        ];
        let reply = reply::array(request(core, keys, &SCRIPTS.schedule_run, args).await?)?;
        let mut items = reply.into_iter();
        let tag = items
            .next()
            .map(reply::opt_text)
            .transpose()?
            .flatten()
            .unwrap_or_default();
        match tag.as_str() {
            "ran" => {
                let due = items.next().map(|v| reply::int(&v)).transpose()?.unwrap_or(0);
                return Ok(time::from_ms(due));
            }
            "gone" => return Err(no_such(keys, name)),
            // Saved again since it was read, or a random id taken: read and pack again.
            "stale" | "collision" => continue,
            other => return Err(Error::Protocol(format!("schedule_run: unexpected reply {other:?}"))),
        }
    }
    Err(Error::Protocol(format!(
        "schedule {name:?} kept changing while it was run"
    )))
}

/// Pauses or removes a schedule; whether it existed.
pub(crate) async fn set(core: &Core, keys: &QueueKeys, op: &'static str, name: &str) -> Result<bool> {
    let args = vec![Value::from(op), Value::from(name)];
    let reply = request(core, keys, &SCRIPTS.schedule_set, args).await?;
    Ok(reply::int(&reply)? > 0)
}

/// Resumes a schedule from its next occurrence after now (those that passed
/// while it was paused are skipped); whether it existed.
pub(crate) async fn resume(core: &Core, keys: &QueueKeys, name: &str) -> Result<bool> {
    for _ in 0..10 {
        let (now, found) = list(core, keys, Some(name)).await?;
        let Some((_, stored)) = found.into_iter().next() else {
            return Ok(false);
        };
        let next = stored.record.next()?;
        let from = if next <= now {
            stored.spec.first_on_or_after(next, now + 1).unwrap_or(i64::MAX)
        } else {
            next
        };
        let args = vec![
            Value::from("resume"),
            Value::from(name),
            Value::from(stored.record.next_ms.as_str()),
            Value::from(stored.record.rev.as_str()),
            Value::from(from.to_string()),
        ];
        let reply = request(core, keys, &SCRIPTS.schedule_set, args).await?;
        if reply::int(&reply)? > 0 {
            return Ok(true);
        }
    }
    Err(Error::Protocol(format!(
        "schedule {name:?} kept changing while it was resumed"
    )))
}

/// A process running a queue's schedules, as its heartbeat shows: from
/// [`Schedules::runners`](crate::schedule::Schedules::runners).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScheduleRunner {
    /// The runner's id: its process id and a random part, new for each client.
    pub id: String,
    /// Its last beat, on the Redis server's clock.
    pub last_beat: SystemTime,
}

/// Says that runner `id` runs the queue's schedules (`leave`: no longer).
pub(crate) async fn beat(conn: &fred::clients::Client, keys: &QueueKeys, id: &str, leave: bool) -> Result<()> {
    let args = vec![
        Value::from(id),
        Value::from(if leave { "leave" } else { "beat" }),
        Value::from(STALE_AFTER.as_millis() as i64),
        Value::from(MAX_RUNNERS as i64),
    ];
    SCRIPTS
        .schedule_beat
        .run(conn, keys.destination(), SCRIPTS.schedule_beat.keys(keys).build(), args)
        .await?;
    Ok(())
}

/// The runners of the queue's schedules that beat within [`STALE_AFTER`], latest first.
pub(crate) async fn runners(core: &Core, keys: &QueueKeys) -> Result<Vec<ScheduleRunner>> {
    let args = vec![
        Value::from(STALE_AFTER.as_millis() as i64),
        Value::from(MAX_RUNNERS as i64),
    ];
    let reply = reply::array(run(core, keys, &SCRIPTS.schedule_runners, args).await?)?;
    let mut items = reply.into_iter().skip(1);
    let mut out = Vec::new();
    while let (Some(id), Some(ms)) = (items.next(), items.next()) {
        out.push(ScheduleRunner {
            id: reply::opt_text(id)?.unwrap_or_default(),
            last_beat: time::from_ms(reply::int(&ms)?),
        });
    }
    Ok(out)
}
