//! When a schedule fires: a cron expression in a time zone, or a fixed
//! period; and what happens to occurrences nobody was there to fire.

use std::str::FromStr;
use std::time::Duration;

use chrono::TimeZone;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Default for [`ScheduleSpec::misfire_after`]: an occurrence fired later
/// than this counts as missed and follows the [`Misfire`] policy.
pub const DEFAULT_MISFIRE_AFTER: Duration = Duration::from_secs(60);

/// Occurrences one `FireAll` catch-up offers per script run (the runner
/// loops until caught up).
pub(crate) const MAX_FIRE_PER_CALL: usize = 100;

/// Occurrences looked at one by one before the rest of a long gap is
/// skipped in one jump (`Skip` and `FireOnce` only).
const SCAN_CAP: usize = 10_000;

/// What to do with occurrences that were missed: due more than
/// [`misfire_after`](ScheduleSpec::misfire_after) ago when a runner got to
/// them (no process ran the schedule, Redis was unreachable, the schedule
/// was replaced).
///
/// ```
/// use std::time::Duration;
/// use delayq::schedule::{every, Misfire};
/// let spec = every(Duration::from_secs(60)).misfire(Misfire::FireOnce);
/// assert_eq!(spec.misfire_policy(), Misfire::FireOnce);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Misfire {
    /// Offer none of them; carry on from the next occurrence (the default).
    #[default]
    Skip,
    /// Offer one value for all of them (due at the latest one), then carry on.
    FireOnce,
    /// Offer every one of them, in order, 100 per script run until caught up.
    FireAll,
}

impl Misfire {
    /// The name used in the stored record and by the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            Misfire::Skip => "skip",
            Misfire::FireOnce => "fire_once",
            Misfire::FireAll => "fire_all",
        }
    }
}

impl FromStr for Misfire {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "skip" => Ok(Misfire::Skip),
            "fire_once" | "fire-once" | "once" => Ok(Misfire::FireOnce),
            "fire_all" | "fire-all" | "all" => Ok(Misfire::FireAll),
            other => Err(Error::InvalidArgument(format!(
                "misfire policy {other:?} is not one of skip, fire_once, fire_all"
            ))),
        }
    }
}

/// When a recurring schedule fires: a cron expression (in UTC or a time
/// zone) or a fixed period, with its [`Misfire`] policy.
///
/// Cron expressions have 5 fields (minute hour day-of-month month
/// day-of-week) or 6 with seconds first, with `*`, `,`, `-`, `/`, names
/// (`MON-FRI`, `JAN`), `L`, `W` and `#` (parsed by the `croner` crate). A
/// time zone is an IANA name, given with [`in_time_zone`](Self::in_time_zone)
/// or as a `CRON_TZ=Europe/Paris ` (or `TZ=`) prefix; occurrences follow its
/// daylight saving changes.
///
/// ```
/// use std::time::Duration;
/// use delayq::schedule::{every, Misfire, ScheduleSpec};
///
/// let nightly = ScheduleSpec::cron("30 2 * * *")?.in_time_zone("Europe/Paris")?;
/// let same = ScheduleSpec::cron("CRON_TZ=Europe/Paris 30 2 * * *")?;
/// assert_eq!(nightly, same);
/// let reports = every(Duration::from_secs(300)).misfire(Misfire::FireAll);
/// assert!(ScheduleSpec::cron("61 * * * *").is_err()); // Error::InvalidArgument
/// # Ok::<(), delayq::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ScheduleSpec {
    kind: Kind,
    misfire: Misfire,
    misfire_after: Duration,
}

#[derive(Debug, Clone)]
enum Kind {
    Cron {
        expr: String,
        tz: chrono_tz::Tz,
        cron: Box<croner::Cron>,
    },
    Every(Duration),
}

impl PartialEq for ScheduleSpec {
    fn eq(&self, other: &Self) -> bool {
        self.definition() == other.definition()
    }
}

impl Eq for ScheduleSpec {}

/// A fixed period: the first occurrence is `period` after the schedule is
/// added, then one every `period` (anchored: a late run does not shift the
/// ones after it).
///
/// Occurrences are whole milliseconds (as due times are), so a period with
/// a fraction of a millisecond is rounded up, never down: `every(1.9 ms)`
/// fires every 2 ms, never more often than asked. A period below 1 ms is
/// refused with [`Error::InvalidArgument`] when the schedule is saved.
///
/// ```
/// use std::time::Duration;
/// let spec = delayq::schedule::every(Duration::from_secs(5));
/// assert_eq!(spec.to_string(), "every 5s");
/// assert_eq!(delayq::schedule::every(Duration::from_micros(1900)).to_string(), "every 2ms");
/// ```
pub fn every(period: Duration) -> ScheduleSpec {
    ScheduleSpec {
        kind: Kind::Every(whole_ms_up(period)),
        misfire: Misfire::default(),
        misfire_after: DEFAULT_MISFIRE_AFTER,
    }
}

impl ScheduleSpec {
    /// A cron expression, in UTC unless it starts with `CRON_TZ=Zone ` or
    /// `TZ=Zone `. Fails with [`Error::InvalidArgument`] for an expression or
    /// zone that does not parse.
    pub fn cron(expr: &str) -> Result<ScheduleSpec> {
        let expr = expr.trim();
        let (tz, expr) = match expr.split_once(char::is_whitespace) {
            Some((prefix, rest)) if prefix.starts_with("CRON_TZ=") || prefix.starts_with("TZ=") => {
                let zone = prefix.split_once('=').map(|(_, z)| z).unwrap_or_default();
                (parse_tz(zone)?, rest.trim())
            }
            _ => (chrono_tz::Tz::UTC, expr),
        };
        let cron = croner::Cron::from_str(expr)
            .map_err(|e| Error::InvalidArgument(format!("cron expression {expr:?} does not parse: {e}")))?;
        Ok(ScheduleSpec {
            kind: Kind::Cron {
                expr: expr.to_owned(),
                tz,
                cron: Box::new(cron),
            },
            misfire: Misfire::default(),
            misfire_after: DEFAULT_MISFIRE_AFTER,
        })
    }

    /// The same cron expression in the IANA time zone `zone`
    /// (`"America/New_York"`). Fails with [`Error::InvalidArgument`] for an
    /// unknown zone, or on an `every` spec.
    pub fn in_time_zone(mut self, zone: &str) -> Result<ScheduleSpec> {
        match &mut self.kind {
            Kind::Cron { tz, .. } => *tz = parse_tz(zone)?,
            Kind::Every(_) => {
                return Err(Error::InvalidArgument(
                    "a time zone applies to cron expressions, not to every(period)".into(),
                ))
            }
        }
        Ok(self)
    }

    /// What to do with missed occurrences (default [`Misfire::Skip`]).
    pub fn misfire(mut self, policy: Misfire) -> ScheduleSpec {
        self.misfire = policy;
        self
    }

    /// How late an occurrence may be fired and still count as on time
    /// (default 60 s); a later one is missed and follows the
    /// [`misfire`](Self::misfire) policy.
    pub fn misfire_after(mut self, late: Duration) -> ScheduleSpec {
        self.misfire_after = late;
        self
    }

    /// The misfire policy.
    pub fn misfire_policy(&self) -> Misfire {
        self.misfire
    }

    /// How late an occurrence may fire and still count as on time, as
    /// [`misfire_after`](Self::misfire_after) set it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use delayq::schedule::{every, DEFAULT_MISFIRE_AFTER};
    /// let spec = every(Duration::from_secs(60));
    /// assert_eq!(spec.misfire_grace(), DEFAULT_MISFIRE_AFTER);
    /// assert_eq!(spec.misfire_after(Duration::from_secs(5)).misfire_grace(), Duration::from_secs(5));
    /// ```
    pub fn misfire_grace(&self) -> Duration {
        self.misfire_after
    }

    /// The IANA time zone of a cron spec (`"UTC"` unless one was given);
    /// `None` for [`every`].
    ///
    /// ```
    /// # fn main() -> delayq::Result<()> {
    /// use delayq::schedule::ScheduleSpec;
    /// assert_eq!(ScheduleSpec::cron("0 3 * * *")?.time_zone(), Some("UTC"));
    /// assert_eq!(ScheduleSpec::cron("CRON_TZ=Europe/Paris 0 3 * * *")?.time_zone(), Some("Europe/Paris"));
    /// assert_eq!(delayq::schedule::every(std::time::Duration::from_secs(1)).time_zone(), None);
    /// # Ok(()) }
    /// ```
    pub fn time_zone(&self) -> Option<&'static str> {
        match &self.kind {
            Kind::Cron { tz, .. } => Some(tz.name()),
            Kind::Every(_) => None,
        }
    }

    /// Checks what the stored record cannot hold.
    pub(crate) fn validate(&self) -> Result<()> {
        if let Kind::Every(period) = self.kind {
            if period < Duration::from_millis(1) {
                return Err(Error::InvalidArgument(
                    "every(period) needs a period of at least 1 ms".into(),
                ));
            }
            if period.as_millis() > crate::wire::time::MAX_DUE_MS as u128 {
                return Err(Error::InvalidArgument("every(period): the period is too long".into()));
            }
        }
        Ok(())
    }

    /// The first occurrence after `now_ms`, for a schedule added at `now_ms`.
    pub(crate) fn first(&self, now_ms: i64) -> Result<i64> {
        match &self.kind {
            Kind::Every(period) => Ok(now_ms.saturating_add(period.as_millis() as i64)),
            Kind::Cron { .. } => self
                .first_at_or_after(now_ms + 1)
                .ok_or_else(|| Error::InvalidArgument(format!("schedule {self} never fires"))),
        }
    }

    /// The occurrence following `occurrence`.
    pub(crate) fn following(&self, occurrence: i64) -> Option<i64> {
        match &self.kind {
            Kind::Every(period) => occurrence.checked_add(period.as_millis() as i64),
            Kind::Cron { .. } => self.first_at_or_after(occurrence + 1),
        }
    }

    /// The first occurrence at or after `t` of the timeline that `anchor` (an
    /// occurrence) is on.
    pub(crate) fn first_on_or_after(&self, anchor: i64, t: i64) -> Option<i64> {
        match &self.kind {
            Kind::Every(period) => {
                let p = period.as_millis() as i64;
                if t <= anchor {
                    return Some(anchor);
                }
                let steps = (t - anchor + p - 1) / p;
                anchor.checked_add(steps.checked_mul(p)?)
            }
            Kind::Cron { .. } => self.first_at_or_after(t),
        }
    }

    fn first_at_or_after(&self, t: i64) -> Option<i64> {
        let Kind::Cron { tz, cron, .. } = &self.kind else {
            return None;
        };
        // croner works in whole seconds: start at the first whole second >= t.
        let secs = t.div_euclid(1000) + i64::from(t.rem_euclid(1000) != 0);
        let start = tz.timestamp_opt(secs, 0).single()?;
        cron.find_next_occurrence(&start, true)
            .ok()
            .map(|at| at.timestamp_millis())
    }

    /// What a runner does at `now_ms` with a schedule whose stored next
    /// occurrence is `next_ms`.
    pub(crate) fn plan(&self, next_ms: i64, now_ms: i64) -> Plan {
        let grace = self.misfire_after.as_millis().min(i64::MAX as u128) as i64;
        let missed_before = now_ms.saturating_sub(grace);
        let mut plan = Plan {
            fire: Vec::new(),
            missed: 0,
            next_ms,
            late: false,
        };
        let mut last_missed = None;
        let mut scanned = 0usize;
        let mut at = Some(next_ms);
        while let Some(o) = at {
            if o > now_ms || plan.fire.len() >= MAX_FIRE_PER_CALL {
                break;
            }
            if o < missed_before {
                match self.misfire {
                    Misfire::FireAll => plan.fire.push(o),
                    Misfire::Skip => plan.missed += 1,
                    Misfire::FireOnce => {
                        if last_missed.replace(o).is_some() {
                            plan.missed += 1;
                        }
                    }
                }
            } else {
                if let Some(m) = last_missed.take() {
                    plan.fire.push(m);
                }
                if plan.fire.len() >= MAX_FIRE_PER_CALL {
                    break;
                }
                plan.fire.push(o);
            }
            scanned += 1;
            at = self.following(o);
            if scanned >= SCAN_CAP
                && self.misfire != Misfire::FireAll
                && let Some(next) = at.filter(|&n| n < missed_before)
            {
                // A long gap: jump over the rest of it, counting it as one.
                plan.missed += 1;
                at = self.first_on_or_after(next, missed_before);
            }
        }
        if let Some(m) = last_missed {
            plan.fire.push(m);
        }
        plan.late = plan.fire.first().is_some_and(|&o| o < missed_before);
        // Never fire twice for one occurrence: FireOnce may have pushed its
        // latest missed one after the on-time ones were cut by the cap.
        plan.fire.sort_unstable();
        plan.fire.dedup();
        plan.next_ms = at.unwrap_or(i64::MAX);
        plan
    }

    /// The stored definition (compared on save: the same one keeps the record).
    pub(crate) fn definition(&self) -> Definition {
        let (kind, expr, tz, every_ms) = match &self.kind {
            Kind::Cron { expr, tz, .. } => ("cron", Some(expr.clone()), Some(tz.name().to_owned()), None),
            Kind::Every(period) => ("every", None, None, Some(period.as_millis() as u64)),
        };
        Definition {
            kind: kind.to_owned(),
            expr,
            tz,
            every_ms,
            misfire: self.misfire,
            misfire_after_ms: self.misfire_after.as_millis() as u64,
            payload: String::new(),
            format: String::new(),
        }
    }

    /// The spec a stored definition describes.
    pub(crate) fn from_definition(def: &Definition) -> Result<ScheduleSpec> {
        let spec = match (def.kind.as_str(), &def.expr, def.every_ms) {
            ("cron", Some(expr), _) => {
                let spec = ScheduleSpec::cron(expr)?;
                match &def.tz {
                    Some(zone) => spec.in_time_zone(zone)?,
                    None => spec,
                }
            }
            ("every", _, Some(ms)) => every(Duration::from_millis(ms)),
            _ => return Err(Error::Protocol(format!("unknown stored schedule kind {:?}", def.kind))),
        };
        Ok(spec
            .misfire(def.misfire)
            .misfire_after(Duration::from_millis(def.misfire_after_ms)))
    }
}

impl std::fmt::Display for ScheduleSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Cron { expr, tz, .. } if *tz == chrono_tz::Tz::UTC => write!(f, "{expr}"),
            Kind::Cron { expr, tz, .. } => write!(f, "CRON_TZ={} {expr}", tz.name()),
            Kind::Every(period) => write!(f, "every {}", format_period(*period)),
        }
    }
}

/// What [`Display`](std::fmt::Display) writes, read back: `every 1h30m`
/// (a period: whole numbers with `d`, `h`, `m`, `s`, `ms`) or a cron
/// expression with its optional `CRON_TZ=Zone ` prefix
/// ([`ScheduleSpec::cron`]). The misfire settings are the defaults. Fails
/// with [`Error::InvalidArgument`] for text that is neither.
///
/// ```
/// use std::time::Duration;
/// use delayq::schedule::{every, ScheduleSpec};
/// let spec: ScheduleSpec = "every 1h30m".parse()?;
/// assert_eq!(spec, every(Duration::from_secs(5400)));
/// let cron: ScheduleSpec = "CRON_TZ=Europe/Paris 0 9 * * *".parse()?;
/// assert_eq!(cron.to_string().parse::<ScheduleSpec>()?, cron);
/// assert!("every 1.5h".parse::<ScheduleSpec>().is_err());
/// # Ok::<(), delayq::Error>(())
/// ```
impl FromStr for ScheduleSpec {
    type Err = Error;

    fn from_str(text: &str) -> Result<ScheduleSpec> {
        match text.trim().strip_prefix("every ") {
            Some(period) => parse_period(period).map(every).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "period {period:?} does not parse: write it as 90s, 10m, 1h30m, 2d or 500ms"
                ))
            }),
            None => ScheduleSpec::cron(text),
        }
    }
}

/// Reads a period written as a sum of whole numbers with units: `90s`,
/// `10m`, `1h30m`, `2d`, `500ms` (units `ms`, `s`, `m`, `h`, `d`; spaces
/// around a unit allowed). `None` for anything else: no unit, a fraction,
/// a sign, an overflow. What `every …` schedules, the CLI and the
/// dashboard's delay fields take, so the three read a period alike.
///
/// ```
/// use std::time::Duration;
/// use delayq::schedule::parse_period;
///
/// assert_eq!(parse_period("1h30m"), Some(Duration::from_secs(5_400)));
/// assert_eq!(parse_period("500ms"), Some(Duration::from_millis(500)));
/// assert_eq!(parse_period("1.5h"), None);
/// ```
pub fn parse_period(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let ms: u64 = match rest[..unit].trim() {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            _ => return None,
        };
        total = total.checked_add(Duration::from_millis(n.checked_mul(ms)?))?;
        rest = &rest[unit..];
    }
    Some(total)
}

/// `d` as people write it: `1h30m`, `500ms`, `1d2h`, `1s500ms` (every
/// unit that is not zero, largest first; what `--every` takes).
fn format_period(d: Duration) -> String {
    let ms = d.as_millis();
    let units = [
        (ms / 86_400_000, "d"),
        (ms / 3_600_000 % 24, "h"),
        (ms / 60_000 % 60, "m"),
        (ms / 1_000 % 60, "s"),
        (ms % 1_000, "ms"),
    ];
    let text: String = units
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect();
    if text.is_empty() {
        "0ms".into()
    } else {
        text
    }
}

/// `period` rounded up to whole milliseconds; below 1 ms it is kept as it
/// is, for [`ScheduleSpec::validate`] to refuse.
fn whole_ms_up(period: Duration) -> Duration {
    const MS: Duration = Duration::from_millis(1);
    let fraction = period.subsec_nanos() % 1_000_000;
    if period < MS || fraction == 0 {
        return period;
    }
    period
        .checked_add(Duration::from_nanos(u64::from(1_000_000 - fraction)))
        .unwrap_or(Duration::MAX)
}

fn parse_tz(zone: &str) -> Result<chrono_tz::Tz> {
    zone.parse::<chrono_tz::Tz>()
        .map_err(|_| Error::InvalidArgument(format!("{zone:?} is not an IANA time zone (like Europe/Paris)")))
}

/// What one runner offers for one schedule, and where it leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Occurrences to offer (each an element due at that time), in order.
    pub fire: Vec<i64>,
    /// Occurrences skipped by the misfire policy.
    pub missed: u64,
    /// The stored next occurrence afterwards (`i64::MAX`: none).
    pub next_ms: i64,
    /// Whether it offers an occurrence past the misfire window (the policy
    /// fires it late).
    pub late: bool,
}

/// A schedule's definition as stored (JSON) in `delayq_schedules:{N}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Definition {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_ms: Option<u64>,
    pub misfire: Misfire,
    pub misfire_after_ms: u64,
    /// The codec's bytes of the value, base64.
    pub payload: String,
    /// `modern` or `legacy`.
    pub format: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;

    #[test]
    fn periods_parse_or_are_refused() {
        assert_eq!(parse_period("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_period("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_period("1h 30 m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_period("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_period("2d"), Some(Duration::from_secs(172_800)));
        for bad in ["", "10", "m", "10x", "-5m", "1.5h", "99999999999999999999d"] {
            assert_eq!(parse_period(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn cron_occurrences_follow_the_time_zone() {
        // 2026-03-29: Paris moves from +01:00 to +02:00 at 02:00 local.
        let spec = ScheduleSpec::cron("0 9 * * *")
            .unwrap()
            .in_time_zone("Europe/Paris")
            .unwrap();
        let before = chrono::Utc
            .with_ymd_and_hms(2026, 3, 28, 12, 0, 0)
            .unwrap()
            .timestamp_millis();
        let first = spec.first(before).unwrap();
        assert_eq!(
            first,
            chrono::Utc
                .with_ymd_and_hms(2026, 3, 29, 7, 0, 0)
                .unwrap()
                .timestamp_millis()
        );
        let utc = ScheduleSpec::cron("0 9 * * *").unwrap();
        assert_eq!(
            utc.first(before).unwrap(),
            chrono::Utc
                .with_ymd_and_hms(2026, 3, 29, 9, 0, 0)
                .unwrap()
                .timestamp_millis()
        );
        assert_eq!(spec.following(first).unwrap() - first, 24 * 60 * MIN);
    }

    #[test]
    fn a_local_time_that_daylight_saving_skips_neither_loops_nor_repeats() {
        // 02:30 does not exist in Paris on 2026-03-29 (02:00 -> 03:00).
        let spec = ScheduleSpec::cron("30 2 * * *")
            .unwrap()
            .in_time_zone("Europe/Paris")
            .unwrap();
        let mut at = chrono::Utc
            .with_ymd_and_hms(2026, 3, 27, 12, 0, 0)
            .unwrap()
            .timestamp_millis();
        let mut seen = Vec::new();
        for _ in 0..4 {
            let next = spec.following(at).unwrap();
            assert!(next > at, "occurrences move forward");
            seen.push(next);
            at = next;
        }
        assert!(
            seen.windows(2).all(|w| w[1] - w[0] >= 23 * 60 * MIN),
            "at most one a day: {seen:?}"
        );
    }

    #[test]
    fn a_cron_that_never_fires_is_an_invalid_argument() {
        let spec = ScheduleSpec::cron("0 0 30 2 *").unwrap(); // February 30th
        let started = std::time::Instant::now();
        assert!(matches!(spec.first(0), Err(Error::InvalidArgument(_))));
        println!("searched for {:?}", started.elapsed());
    }

    #[test]
    fn bad_specs_are_invalid_arguments() {
        for bad in ["61 * * * *", "* * *", "CRON_TZ=Mars/Olympus 0 * * * *", ""] {
            assert!(
                matches!(ScheduleSpec::cron(bad), Err(Error::InvalidArgument(_))),
                "{bad:?}"
            );
        }
        assert!(every(Duration::from_secs(1)).in_time_zone("UTC").is_err());
        assert!(every(Duration::ZERO).validate().is_err());
    }

    #[test]
    fn first_is_strictly_after_now() {
        let spec = ScheduleSpec::cron("*/5 * * * *").unwrap();
        assert_eq!(spec.first(10 * MIN).unwrap(), 15 * MIN);
        assert_eq!(spec.first(10 * MIN - 1).unwrap(), 10 * MIN);
        assert_eq!(spec.following(10 * MIN), Some(15 * MIN));
        assert_eq!(every(Duration::from_secs(1)).first(5).unwrap(), 1005);
    }

    fn plan(spec: &ScheduleSpec, next: i64, now: i64) -> Plan {
        spec.plan(next, now)
    }

    #[test]
    fn on_time_and_late_within_grace_fire_each() {
        let spec = every(Duration::from_secs(1));
        assert_eq!(plan(&spec, 1000, 999).fire, Vec::<i64>::new());
        let p = plan(&spec, 1000, 3500);
        assert_eq!(p.fire, vec![1000, 2000, 3000]);
        assert_eq!((p.missed, p.next_ms, p.late), (0, 4000, false));
    }

    #[test]
    fn misfire_policies() {
        let base = every(Duration::from_secs(1)).misfire_after(Duration::from_millis(1500));
        // Due: 1000..=10000; missed: those before 10000 - 1500 = 8500 (1000..=8000: 8 of them).
        let skip = plan(&base.clone().misfire(Misfire::Skip), 1000, 10_000);
        assert!(!skip.late, "Skip offers only occurrences within the window");
        assert_eq!((skip.fire, skip.missed, skip.next_ms), (vec![9000, 10_000], 8, 11_000));
        let once = plan(&base.clone().misfire(Misfire::FireOnce), 1000, 10_000);
        assert!(once.late, "FireOnce offers the latest missed one, late");
        assert_eq!(
            (once.fire, once.missed, once.next_ms),
            (vec![8000, 9000, 10_000], 7, 11_000)
        );
        let all = plan(&base.clone().misfire(Misfire::FireAll), 1000, 10_000);
        assert!(all.late);
        assert_eq!((all.fire.len(), all.missed, all.next_ms), (10, 0, 11_000));
    }

    #[test]
    fn fire_all_is_bounded_per_call_and_resumes_where_it_stopped() {
        let spec = every(Duration::from_millis(10)).misfire(Misfire::FireAll);
        let p = plan(&spec, 10, 100_000);
        assert_eq!(p.fire.len(), MAX_FIRE_PER_CALL);
        assert_eq!(p.next_ms, 10 + 10 * MAX_FIRE_PER_CALL as i64);
    }

    #[test]
    fn long_gaps_are_jumped_not_scanned() {
        let spec = every(Duration::from_millis(1)).misfire_after(Duration::ZERO);
        let p = plan(&spec, 1, 1_000_000_000);
        assert_eq!(p.fire, vec![1_000_000_000]);
        assert_eq!(p.next_ms, 1_000_000_001);
        assert!(p.missed >= SCAN_CAP as u64);
        let once = plan(&spec.clone().misfire(Misfire::FireOnce), 1, 1_000_000_000);
        assert_eq!(once.fire.len(), 2, "{:?}", once.fire);
    }

    #[test]
    fn a_fraction_of_a_millisecond_rounds_the_period_up() {
        let spec = every(Duration::from_micros(1900));
        assert_eq!(spec.to_string(), "every 2ms");
        assert_eq!(spec.following(10), Some(12));
        assert_eq!(spec.first(10).unwrap(), 12);
        assert_eq!(spec.definition().every_ms, Some(2));
        assert_eq!(every(Duration::from_nanos(1_000_001)).to_string(), "every 2ms");
        assert_eq!(every(Duration::from_millis(7)).to_string(), "every 7ms");
        assert!(every(Duration::from_micros(999)).validate().is_err());
        assert!(every(Duration::from_micros(1000)).validate().is_ok());
        assert!(every(Duration::MAX).validate().is_err());
    }

    /// Periods read as people write them (and as `--every` takes them),
    /// not as a count of seconds.
    #[test]
    fn periods_display_in_the_largest_units() {
        for (ms, shown) in [
            (3_600_000, "every 1h"),
            (5_400_000, "every 1h30m"),
            (500, "every 500ms"),
            (1_500, "every 1s500ms"),
            (5_000, "every 5s"),
            (90_061_001, "every 1d1h1m1s1ms"),
            (172_800_000, "every 2d"),
        ] {
            assert_eq!(every(Duration::from_millis(ms)).to_string(), shown, "{ms} ms");
        }
    }

    #[test]
    fn definitions_round_trip() {
        for spec in [
            ScheduleSpec::cron("CRON_TZ=Asia/Tokyo 0 */2 * * MON-FRI").unwrap(),
            every(Duration::from_millis(1500)).misfire(Misfire::FireAll),
        ] {
            let back = ScheduleSpec::from_definition(&spec.definition()).unwrap();
            assert_eq!(back, spec);
            assert_eq!(back.to_string(), spec.to_string());
        }
    }
}
