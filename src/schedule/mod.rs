//! Recurring schedules: offer a value to a queue at each occurrence of a
//! cron expression or a fixed period, exactly once per occurrence however
//! many processes run the schedule.
//!
//! A schedule lives in Redis (`delayq_schedules:{N}`, a hash in the queue's
//! cluster slot: name → definition, value, next occurrence, counts), so it
//! survives restarts and every process sees the same one. Each client that
//! runs a queue's schedules ([`Client::schedule`](crate::Client::schedule),
//! [`Client::run_schedules`](crate::Client::run_schedules)) wakes at the next
//! occurrence and runs `lua/schedule_fire.lua`, which offers the value (ZADD,
//! RPUSH and PUBLISH, as Redisson's offer, in the queue's element format and
//! due at the occurrence) only if the stored next occurrence is still the one
//! the caller computed, and moves it on in the same atomic step. The fired
//! element is an ordinary pending element: any transfer, Java's included,
//! moves it to the destination.
//!
//!
//! ```no_run
//! use std::time::Duration;
//! use delayq::schedule::{every, Misfire};
//! # async fn demo(client: delayq::Client) -> delayq::Result<()> {
//! let jobs = client.delayed_queue("jobs", delayq::StringCodec)?;
//! client
//!     .schedule("heartbeat", every(Duration::from_secs(30)).misfire(Misfire::FireOnce), &jobs, &"ping".to_string())
//!     .await?;
//! for schedule in client.schedules(&jobs)?.list().await? {
//!     println!("{schedule:?}");
//! }
//! # Ok(()) }
//! ```

// Owns the specs (`spec`), the stored records (`store`) and the per-client
// runner (`runner`). May use: `queue`, `connection` (its own scripts),
// `wire`, `telemetry`, `error`; beside `worker`, never above it.

mod edit;
mod history;
mod runner;
mod spec;
mod store;

use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;

pub use edit::ScheduleEdit;
pub use history::{FireKind, ScheduleFire, FIRES_KEPT};
pub use spec::{every, parse_period, Misfire, ScheduleSpec, DEFAULT_MISFIRE_AFTER};
pub use store::{ScheduleInfo, ScheduleRunner};

use crate::error::Result;
use crate::queue::delayed::DelayedQueue;
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

pub(crate) use runner::Runner;

/// What [`Client::schedule`](crate::Client::schedule) accepts as a spec: a
/// [`ScheduleSpec`], or its text: cron (`"*/5 * * * *"`,
/// `"CRON_TZ=Europe/Paris 0 9 * * MON-FRI"`) or a period (`"every 5m"`), as
/// a spec displays itself.
///
/// ```
/// use delayq::schedule::IntoScheduleSpec;
/// let spec = "0 9 * * MON-FRI".into_spec()?;
/// assert_eq!(spec.to_string(), "0 9 * * MON-FRI");
/// # Ok::<(), delayq::Error>(())
/// ```
pub trait IntoScheduleSpec {
    /// The spec, or [`Error::InvalidArgument`](crate::Error::InvalidArgument) for text that does not parse.
    fn into_spec(self) -> Result<ScheduleSpec>;
}

impl IntoScheduleSpec for ScheduleSpec {
    fn into_spec(self) -> Result<ScheduleSpec> {
        Ok(self)
    }
}

impl IntoScheduleSpec for &str {
    fn into_spec(self) -> Result<ScheduleSpec> {
        self.parse()
    }
}

impl IntoScheduleSpec for String {
    fn into_spec(self) -> Result<ScheduleSpec> {
        self.parse()
    }
}

/// The client's schedule runner, started on first use.
pub(crate) type RunnerSlot = Arc<OnceLock<Runner>>;

fn runner<'a>(slot: &'a RunnerSlot, core: &Arc<Core>) -> &'a Runner {
    slot.get_or_init(|| Runner::start(core.clone()))
}

/// Saves the schedule `name` of `queue` and runs the queue's schedules in this client.
pub(crate) async fn schedule<T: 'static>(
    core: &Arc<Core>,
    slot: &RunnerSlot,
    name: &str,
    spec: ScheduleSpec,
    queue: &DelayedQueue<T>,
    value: &T,
) -> Result<ScheduleInfo> {
    let payload = queue.encode(value)?;
    let info = store::save(core, queue.keys(), name, &spec, &payload, queue.format()).await?;
    runner(slot, core).watch(Arc::new(queue.keys().clone()));
    Ok(info)
}

/// Runs the schedules of `queue` in this client from now on.
pub(crate) fn run(core: &Arc<Core>, slot: &RunnerSlot, queue: &str) -> Result<()> {
    let keys = Arc::new(QueueKeys::new(queue)?);
    runner(slot, core).watch(keys);
    Ok(())
}

/// The recurring schedules of one queue: list, edit, run now, pause,
/// resume, remove, and each one's recent fires. From
/// [`Client::schedules`](crate::Client::schedules); it does not run them
/// (see [`Client::run_schedules`](crate::Client::run_schedules)).
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::{Client, StringCodec};
/// use delayq::schedule::every;
///
/// # async fn demo() -> delayq::Result<()> {
/// let client = Client::connect("redis://127.0.0.1:6379").await?;
/// let reports = client.delayed_queue("reports", StringCodec)?;
/// client.schedule("hourly", every(Duration::from_secs(3600)), &reports, &"build-report".to_string()).await?;
///
/// let schedules = client.schedules(&reports)?;
/// schedules.pause("hourly").await?;
/// for info in schedules.list().await? {
///     println!("{}: {} paused={}", info.name, info.spec, info.paused);
/// }
/// schedules.resume("hourly").await?;   // from its next occurrence after now
/// schedules.remove("hourly").await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Schedules {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
    notify: Option<mpsc::UnboundedSender<runner::Message>>,
}

impl std::fmt::Debug for Schedules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schedules")
            .field("queue", &self.keys.destination())
            .finish()
    }
}

impl Schedules {
    pub(crate) fn new(core: Arc<Core>, slot: &RunnerSlot, queue: &str) -> Result<Schedules> {
        Ok(Schedules {
            core,
            keys: Arc::new(QueueKeys::new(queue)?),
            notify: slot.get().map(Runner::notifier),
        })
    }

    /// The queue's name.
    pub fn queue(&self) -> &str {
        self.keys.destination()
    }

    /// Every schedule of the queue, by name.
    pub async fn list(&self) -> Result<Vec<ScheduleInfo>> {
        let (_, items) = store::list(&self.core, &self.keys, None).await?;
        Ok(items
            .iter()
            .map(|(name, stored)| stored.info(self.queue(), name))
            .collect())
    }

    /// One schedule, if it exists.
    pub async fn get(&self, name: &str) -> Result<Option<ScheduleInfo>> {
        store::check_name(name)?;
        let (_, items) = store::list(&self.core, &self.keys, Some(name)).await?;
        Ok(items.first().map(|(name, stored)| stored.info(self.queue(), name)))
    }

    /// The processes running the queue's schedules that are alive: those
    /// whose runner beat within the last 30 s (a runner beats every few
    /// seconds while it runs, and takes its beat back as it stops), latest
    /// first. Empty: nothing fires the queue's schedules (runners of delayq
    /// versions before heartbeats do not show).
    pub async fn runners(&self) -> Result<Vec<ScheduleRunner>> {
        store::runners(&self.core, &self.keys).await
    }

    /// Stops firing the schedule until [`resume`](Self::resume); whether it exists.
    /// Takes effect at once in every process: a fire checks the flag atomically.
    pub async fn pause(&self, name: &str) -> Result<bool> {
        store::check_name(name)?;
        let found = store::set(&self.core, &self.keys, "pause", name).await?;
        self.changed();
        Ok(found)
    }

    /// Fires the schedule again from its next occurrence after now
    /// (occurrences that passed while it was paused are skipped, not
    /// missed); whether it exists.
    pub async fn resume(&self, name: &str) -> Result<bool> {
        store::check_name(name)?;
        let found = store::resume(&self.core, &self.keys, name).await?;
        self.changed();
        Ok(found)
    }

    /// Changes the schedule `name`'s spec, time zone, misfire settings or
    /// value ([`ScheduleEdit`]), keeping its name, paused state, counts and
    /// fire history; the schedule as it is now. A new timing fires from its
    /// first occurrence after now; the same timing keeps its next occurrence.
    ///
    /// Refused with [`Error::NoSuchSchedule`](crate::Error::NoSuchSchedule)
    /// when the queue has no schedule of that name (it adds none: see
    /// [`Client::schedule`](crate::Client::schedule)), and with
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a spec
    /// or zone that cannot be; nothing changes then. An edit never undoes a
    /// save or edit made meanwhile: it compares the revision it read, and
    /// reads again if it moved. Every runner picks it up at its next read
    /// (at once in this client's own runner).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::schedule::{every, ScheduleEdit};
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let schedules = client.schedules(&delayq::QueueKeys::new("reports")?)?;
    /// let info = schedules.edit("hourly", ScheduleEdit::new().spec(every(Duration::from_secs(1800)))).await?;
    /// println!("now {}, fired {} so far", info.spec, info.fired);
    /// # Ok(()) }
    /// ```
    pub async fn edit(&self, name: &str, edit: ScheduleEdit) -> Result<ScheduleInfo> {
        let info = edit::edit(&self.core, &self.keys, name, &edit).await?;
        self.changed();
        Ok(info)
    }

    /// Offers the schedule's value once, now ("run now"), without moving its
    /// next occurrence or its counts; returns when the value is due (now, on
    /// the Redis server's clock). A paused schedule runs too. The run shows
    /// in [`fires`](Self::fires) as [`FireKind::ByHand`] and, with events on,
    /// as a `schedule_run` event.
    ///
    /// Refused with [`Error::NoSuchSchedule`](crate::Error::NoSuchSchedule)
    /// for a name the queue does not hold. Request-keyed: fred's resend after
    /// a lost reply answers as the first run and offers no second value; a
    /// reply lost for good fails with
    /// [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown).
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let schedules = client.schedules(&delayq::QueueKeys::new("reports")?)?;
    /// let due = schedules.run_now("nightly").await?;
    /// println!("offered, due {due:?}");
    /// # Ok(()) }
    /// ```
    pub async fn run_now(&self, name: &str) -> Result<std::time::SystemTime> {
        store::run_now(&self.core, &self.keys, name).await
    }

    /// The schedule's recent fires, newest first: at most [`FIRES_KEPT`],
    /// each with when it was due and ran, how many values it offered or
    /// skipped, whether it was on time, and the runner that fired it.
    /// Empty for a schedule that never fired, or one that does not exist.
    /// Fires by delayq versions before the history are not in it.
    ///
    /// ```no_run
    /// use delayq::schedule::FireKind;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let schedules = client.schedules(&delayq::QueueKeys::new("reports")?)?;
    /// let late = schedules.fires("hourly").await?.iter().filter(|f| f.kind == FireKind::Late).count();
    /// println!("{late} of the last fires were late");
    /// # Ok(()) }
    /// ```
    pub async fn fires(&self, name: &str) -> Result<Vec<ScheduleFire>> {
        store::check_name(name)?;
        history::fires(&self.core, &self.keys, name).await
    }

    /// Deletes the schedule and its fire history; whether it existed. Values it already offered stay queued.
    ///
    /// Like [`pause`](Self::pause) and [`resume`](Self::resume), it answers
    /// as its first run did when fred resends it after a lost reply (a resent
    /// remove does not say "no such schedule"); a reply lost for good fails
    /// with [`Error::OutcomeUnknown`](crate::Error::OutcomeUnknown). A name
    /// removed and added again is a new schedule: a process that still holds
    /// the old one never fires its value or its spec.
    pub async fn remove(&self, name: &str) -> Result<bool> {
        store::check_name(name)?;
        let found = store::set(&self.core, &self.keys, "remove", name).await?;
        self.changed();
        Ok(found)
    }

    fn changed(&self) {
        if let Some(notify) = &self.notify {
            let _ = notify.send(runner::Message {
                keys: self.keys.clone(),
                watch: false,
            });
        }
    }
}
