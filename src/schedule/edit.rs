//! Changing an existing schedule: its spec, time zone or value, keeping its
//! name, paused state, counts and fire history (`lua/schedule_save.lua` in
//! its edit mode: it refuses a name it does not hold).

use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use fred::types::Value;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::delayed::DelayedQueue;
use crate::queue::Core;
use crate::wire::format::Format;
use crate::wire::keys::QueueKeys;

use super::spec::{Misfire, ScheduleSpec};
use super::store::{self, ScheduleInfo, Stored, MAX_SCHEDULES};

/// What [`Schedules::edit`](crate::schedule::Schedules::edit) changes; what
/// it leaves unset stays as stored.
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::schedule::{every, Misfire, ScheduleEdit, ScheduleSpec};
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let reports = client.delayed_queue("reports", delayq::StringCodec)?;
/// let schedules = client.schedules(&reports)?;
/// // Another cron expression, in another zone, with another value:
/// let edit = ScheduleEdit::new()
///     .spec(ScheduleSpec::cron("0 7 * * MON-FRI")?)
///     .time_zone("Europe/Paris")
///     .value(&reports, &"weekday-report".to_string())?;
/// let info = schedules.edit("daily", edit).await?;
/// assert_eq!(info.spec.time_zone(), Some("Europe/Paris"));
/// // Only the misfire policy: the next occurrence stays.
/// schedules.edit("daily", ScheduleEdit::new().misfire(Misfire::FireOnce)).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct ScheduleEdit {
    spec: Option<ScheduleSpec>,
    time_zone: Option<String>,
    misfire: Option<Misfire>,
    misfire_after: Option<Duration>,
    payload: Option<(Bytes, Option<Format>)>,
}

impl ScheduleEdit {
    /// Changes nothing yet.
    pub fn new() -> ScheduleEdit {
        ScheduleEdit::default()
    }

    /// When it fires: a cron expression or a period. Its misfire policy and
    /// window are the stored ones unless [`misfire`](Self::misfire) or
    /// [`misfire_after`](Self::misfire_after) are given too. A new timing
    /// fires from its first occurrence after the edit.
    pub fn spec(mut self, spec: ScheduleSpec) -> ScheduleEdit {
        self.spec = Some(spec);
        self
    }

    /// The IANA time zone of its cron expression (`"America/New_York"`);
    /// refused with [`Error::InvalidArgument`] for an unknown zone or a
    /// schedule by period.
    pub fn time_zone(mut self, zone: &str) -> ScheduleEdit {
        self.time_zone = Some(zone.to_owned());
        self
    }

    /// What to do with missed occurrences.
    pub fn misfire(mut self, policy: Misfire) -> ScheduleEdit {
        self.misfire = Some(policy);
        self
    }

    /// How late an occurrence may fire and still count as on time.
    pub fn misfire_after(mut self, late: Duration) -> ScheduleEdit {
        self.misfire_after = Some(late);
        self
    }

    /// The value it offers, encoded as the queue's codec encodes it
    /// (packed in the element format stored with the schedule).
    pub fn payload(mut self, payload: impl Into<Bytes>) -> ScheduleEdit {
        self.payload = Some((payload.into(), None));
        self
    }

    /// The value it offers, encoded by `queue`'s codec and packed in its
    /// element format, as [`Client::schedule`](crate::Client::schedule) does.
    pub fn value<T: 'static>(mut self, queue: &DelayedQueue<T>, value: &T) -> Result<ScheduleEdit> {
        self.payload = Some((queue.encode(value)?, Some(queue.format())));
        Ok(self)
    }

    /// The spec it leaves, from the stored one.
    fn apply(&self, stored: &ScheduleSpec) -> Result<ScheduleSpec> {
        let mut spec = match &self.spec {
            Some(spec) => spec
                .clone()
                .misfire(stored.misfire_policy())
                .misfire_after(stored.misfire_grace()),
            None => stored.clone(),
        };
        if let Some(zone) = &self.time_zone {
            spec = spec.in_time_zone(zone)?;
        }
        if let Some(policy) = self.misfire {
            spec = spec.misfire(policy);
        }
        if let Some(late) = self.misfire_after {
            spec = spec.misfire_after(late);
        }
        spec.validate()?;
        Ok(spec)
    }
}

/// Whether two specs fire at the same times (their misfire settings aside).
fn same_timing(a: &ScheduleSpec, b: &ScheduleSpec) -> bool {
    a.clone().misfire(b.misfire_policy()).misfire_after(b.misfire_grace()) == *b
}

/// Edits the schedule `name`: a compare-and-set on the revision read, so an
/// edit never undoes a save made meanwhile (read again and retried).
pub(crate) async fn edit(core: &Core, keys: &QueueKeys, name: &str, edit: &ScheduleEdit) -> Result<ScheduleInfo> {
    store::check_name(name)?;
    for _ in 0..10 {
        let (now, found) = store::list(core, keys, Some(name)).await?;
        let Some((_, stored)) = found.into_iter().next() else {
            return Err(store::no_such(keys, name));
        };
        let spec = edit.apply(&stored.spec)?;
        // A new timing starts from now; the same one keeps its next occurrence.
        let next = if same_timing(&spec, &stored.spec) {
            stored.record.next_ms.clone()
        } else {
            spec.first(now)?.to_string()
        };
        let (payload, format) = match &edit.payload {
            Some((payload, format)) => (payload.clone(), format.unwrap_or(stored.format)),
            None => (stored.payload.clone(), stored.format),
        };
        let mut def = spec.definition();
        def.payload = base64::engine::general_purpose::STANDARD.encode(&payload);
        def.format = format.as_str().to_owned();
        let def = serde_json::to_string(&def).map_err(|e| Error::Protocol(e.to_string()))?;
        let args = vec![
            Value::from(name),
            Value::from(def),
            Value::from(next),
            Value::from(MAX_SCHEDULES as i64),
            Value::from("edit"),
            Value::from(stored.record.rev.as_str()),
        ];
        let reply = reply::array(store::request(core, keys, &SCRIPTS.schedule_save, args).await?)?;
        match reply.as_slice() {
            [code] if reply::int(code)? == -1 => return Err(store::no_such(keys, name)),
            [code] if reply::int(code)? == -2 => continue,
            [_, raw] => return Ok(Stored::parse(&reply::bytes(raw.clone())?)?.info(keys.destination(), name)),
            _ => return Err(Error::Protocol("schedule_save: unexpected edit reply".into())),
        }
    }
    Err(Error::Protocol(format!(
        "schedule {name:?} kept changing while it was edited"
    )))
}
