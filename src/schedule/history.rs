//! A schedule's recent fires: what `lua/lib/schedules.lua` records, in the
//! run that fires, in `delayq_schedule_fires:{N}` (the last 20 per
//! schedule), and how it reads back.

use std::time::{Duration, SystemTime};

use fred::types::Value;
use serde::Deserialize;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;
use crate::wire::time;

/// Fires kept per schedule (`DELAYQ_FIRES_KEPT` of `lua/lib/schedules.lua`).
pub const FIRES_KEPT: usize = 20;

/// How a fire went: on time, late by the misfire policy, skipped by it,
/// or run by hand.
///
/// ```
/// use delayq::schedule::FireKind;
/// assert_eq!(FireKind::Late.as_str(), "late");
/// assert_eq!("by_hand".parse::<FireKind>().ok(), Some(FireKind::ByHand));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FireKind {
    /// Every occurrence it offered was within the spec's misfire window
    /// ([`misfire_grace`](crate::schedule::ScheduleSpec::misfire_grace)).
    OnTime,
    /// It offered an occurrence past the misfire window: the
    /// [`Misfire`](crate::schedule::Misfire) policy (`FireOnce`, `FireAll`)
    /// fired it late.
    Late,
    /// It offered nothing: the misfire policy (`Skip`) skipped what was due.
    Missed,
    /// Run by hand ([`Schedules::run_now`](crate::schedule::Schedules::run_now)):
    /// one value, outside the schedule's occurrences.
    ByHand,
}

impl FireKind {
    /// The name stored in the history and shown by the CLI and the dashboard.
    pub fn as_str(self) -> &'static str {
        match self {
            FireKind::OnTime => "on_time",
            FireKind::Late => "late",
            FireKind::Missed => "missed",
            FireKind::ByHand => "by_hand",
        }
    }
}

impl std::str::FromStr for FireKind {
    type Err = Error;

    fn from_str(s: &str) -> Result<FireKind> {
        Ok(match s {
            "on_time" => FireKind::OnTime,
            "late" => FireKind::Late,
            "missed" => FireKind::Missed,
            "by_hand" => FireKind::ByHand,
            other => return Err(Error::Protocol(format!("unknown schedule fire kind {other:?}"))),
        })
    }
}

/// One fire of a schedule, as its history keeps it: from
/// [`Schedules::fires`](crate::schedule::Schedules::fires), newest first.
/// A fire is one run of the schedule by a runner (it may offer several
/// occurrences at once when catching up) or one run by hand.
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let schedules = client.schedules(&delayq::QueueKeys::new("reports")?)?;
/// for fire in schedules.fires("hourly").await? {
///     println!(
///         "{:?}: {} ({} offered, {} missed, {:?} after it was due) by {} on {}",
///         fire.due, fire.kind.as_str(), fire.offered, fire.missed, fire.late_by(), fire.runner, fire.host
///     );
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScheduleFire {
    /// The first occurrence it offered (or, offering none, skipped); for a
    /// run by hand, when it ran.
    pub due: SystemTime,
    /// When it ran, on the Redis server's clock.
    pub fired_at: SystemTime,
    /// Values it offered (occurrences; 1 for a run by hand).
    pub offered: u64,
    /// Occurrences the misfire policy skipped in this fire.
    pub missed: u64,
    /// On time, late, missed or by hand.
    pub kind: FireKind,
    /// The runner that fired it, by the id its heartbeats carry
    /// ([`ScheduleRunner::id`](crate::schedule::ScheduleRunner::id)); for a
    /// run by hand, the process id of the one that asked.
    pub runner: String,
    /// The host that runner ran on (empty if it could not tell).
    pub host: String,
}

impl ScheduleFire {
    /// How long after [`due`](Self::due) it ran (zero for a run by hand).
    pub fn late_by(&self) -> Duration {
        self.fired_at.duration_since(self.due).unwrap_or_default()
    }
}

/// One entry as `lua/lib/schedules.lua` writes it (cjson: counts may come
/// back as floats).
#[derive(Deserialize)]
struct Entry {
    due: String,
    at: String,
    #[serde(default)]
    n: f64,
    #[serde(default)]
    missed: f64,
    kind: String,
    #[serde(default)]
    by: String,
    #[serde(default)]
    host: String,
}

impl Entry {
    fn fire(self) -> Result<ScheduleFire> {
        let ms = |text: &str| {
            text.parse::<i64>()
                .map(time::from_ms)
                .map_err(|_| Error::Protocol(format!("bad time {text:?} in a schedule's fire history")))
        };
        Ok(ScheduleFire {
            due: ms(&self.due)?,
            fired_at: ms(&self.at)?,
            offered: self.n as u64,
            missed: self.missed as u64,
            kind: self.kind.parse()?,
            runner: self.by,
            host: self.host,
        })
    }
}

/// The history as stored: newest first. An entry this version cannot read
/// (a kind a later version added) is left out, not an error.
pub(crate) fn parse(raw: &[u8]) -> Result<Vec<ScheduleFire>> {
    let entries: Vec<serde_json::Value> =
        serde_json::from_slice(raw).map_err(|e| Error::Protocol(format!("bad schedule fire history: {e}")))?;
    Ok(entries
        .into_iter()
        .filter_map(|entry| {
            let fire = serde_json::from_value::<Entry>(entry)
                .map_err(|e| Error::Protocol(e.to_string()))
                .and_then(Entry::fire);
            fire.map_err(|error| tracing::debug!(%error, "skipping a schedule fire this version cannot read"))
                .ok()
        })
        .collect())
}

/// The recent fires of the schedule `name`, newest first (empty: it never
/// fired, or it does not exist).
pub(crate) async fn fires(core: &Core, keys: &QueueKeys, name: &str) -> Result<Vec<ScheduleFire>> {
    let script = &SCRIPTS.schedule_fires;
    let reply = script
        .run(
            core.conn()?,
            keys.destination(),
            script.keys(keys).build(),
            vec![Value::from(name)],
        )
        .await?;
    let [_, raw] = reply::tuple::<2>(reply)?;
    match raw {
        Value::Null => Ok(Vec::new()),
        raw => parse(&reply::bytes(raw)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back_newest_first_and_unknown_kinds_are_left_out() {
        let raw = br#"[
            {"due":"1000","at":"1250","n":1,"missed":0,"kind":"on_time","by":"7-0000abcd","host":"h1"},
            {"due":"500","at":"9500","n":2,"missed":3.0,"kind":"late","by":"7-0000abcd","host":"h1"},
            {"due":"1","at":"2","n":0,"missed":1,"kind":"teleported","by":"x","host":""},
            {"due":"2000","at":"2000","n":1,"missed":0,"kind":"by_hand","by":"42","host":"h2"}
        ]"#;
        let fires = parse(raw).unwrap();
        assert_eq!(fires.len(), 3);
        assert_eq!(fires[0].kind, FireKind::OnTime);
        assert_eq!(fires[0].late_by(), Duration::from_millis(250));
        assert_eq!(
            (fires[1].offered, fires[1].missed, fires[1].kind),
            (2, 3, FireKind::Late)
        );
        assert_eq!(fires[1].late_by(), Duration::from_millis(9000));
        assert_eq!((fires[2].kind, fires[2].runner.as_str()), (FireKind::ByHand, "42"));
        assert!(parse(b"{").is_err());
    }
}
