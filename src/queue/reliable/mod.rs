//! `ReliableQueue<T>`: at-least-once consumption of a destination list, with
//! acknowledgements, a visibility timeout, delivery counts and a dead-letter list.

pub(crate) mod delivery;
pub(crate) mod outstanding;
pub(crate) mod reapers;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::interfaces::{ListInterface, SortedSetsInterface};
use fred::types::Value;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Result};
use crate::queue::reliable::delivery::{Delivery, GiveBack, Handle};
use crate::queue::reliable::reapers::ReaperLease;
use crate::queue::Core;
use crate::transfer::Registration;
use crate::wire::codec::{self, Codec};
use crate::wire::format::{ElementId, Format};
use crate::wire::keys::QueueKeys;

/// Default time a delivery may stay unsettled before it goes back to the queue.
const DEFAULT_VISIBILITY: Duration = Duration::from_secs(30);
/// Default deliveries of one value before it goes to the dead-letter list.
const DEFAULT_MAX_DELIVERIES: u32 = 10;
/// Default time a given-back value's delivery count is remembered after it
/// is back in the destination (plus any nack delay).
const DEFAULT_COUNT_MEMORY: Duration = Duration::from_secs(3600);
/// How far from the staging list's tail a claim looks for its value.
const CLAIM_SCAN: i64 = 1000;
/// Most deliveries (or stray copies) one reap call returns ...
const REAP_BATCH: i64 = 100;
/// ... and most payload bytes (at least one value).
const REAP_BYTES: i64 = 128 << 10;
/// Most reap calls in a row while each says there is more to do.
const REAP_CALLS: usize = 1000;
/// Reliable consumption of a queue's destination list: each value taken is
/// moved atomically (`BLMOVE`) to a staging list, claimed as a delivery, and
/// handed out as a [`Delivery`] that must be [`ack`](Delivery::ack)ed.
///
/// # Guarantees
///
/// - **At least once.** A value is only removed for good by `ack`. If the
///   consumer dies, loses its connection, drops the delivery, or does not ack
///   within the visibility timeout, the value goes back to the head of the
///   destination list and is delivered again (to any consumer, Java ones
///   included: the destination stays a plain Redisson list).
/// - **Acked once.** `ack` is idempotent (an ack retried within 5 minutes,
///   and among the last 100,000 acks of the queue, reports success again) and
///   returns `false` when it came too late (the value was already given back).
///   `nack` too reports the truth after a lost reply.
/// - **Delivery counts per delivery.** Every value taken counts on its own:
///   identical values taken at once are each at count 1. A value given back
///   (nack, visibility timeout, dropped delivery) keeps its count for its next
///   delivery, for up to [`with_count_memory`](Self::with_count_memory) (1 h
///   by default) after it is back in the destination. The destination holds
///   only payloads, so the count waits for the next claim of an equal value:
///   counts are never dropped or doubled, but which of several equal copies
///   takes which is not known. A count given back with a delay (`nack(d)`)
///   is not taken before that copy is back, so an equal job offered
///   meanwhile starts at 1; one given back to the list now can be taken by
///   an equal copy claimed before it. If a Java consumer or a plain `take`
///   takes the copy, its count is forgotten when that time is up (an equal
///   value taken by a reliable consumer before then counts on from it).
/// - **Dead letters.** A value delivered more than `max_deliveries` times
///   without an ack goes to `delayq_dead_letter:{name}` instead (a plain list;
///   see [`requeue_dead_letters`](Self::requeue_dead_letters)).
///
/// # Implementation
///
/// `take` waits with `BLMOVE` (destination → `delayq_staging:{name}`) on a
/// connection of its own, then a script claims the moved value: it removes
/// it from the staging list (looking at most 1,000 values from the tail) and
/// records a delivery with a deadline (`delayq_leases:{name}`, a sorted set
/// of 8-byte id, 10-digit count and value, Redis server clock). Ack, nack and
/// extend act on that one member: each script costs O(log n) in the
/// deliveries in flight. Counts of given-back values wait for their next
/// claim in `delayq_counts:{name}` (by SHA1 of the value; expiry times in
/// `delayq_counts_expiry:{name}`); acked ids in `delayq_acked:{name}`.
///
/// One reaper per queue and client, shared by all its handles, runs while
/// any handle lives: every quarter of the shortest visibility timeout (50 ms
/// to 5 s) it returns deliveries past their deadline, values moved but never
/// claimed (a consumer that died between the two steps) once they have sat
/// in the staging list for a whole visibility timeout, and drops expired
/// count records, at most 100 values or 128 KiB per script call. All keys
/// follow the queue's brace rule.
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::{Client, StringCodec};
///
/// # async fn demo() -> delayq::Result<()> {
/// let client = Client::connect("redis://127.0.0.1:6379").await?;
/// let orders = client.reliable_queue("orders", StringCodec)?.with_visibility_timeout(Duration::from_secs(60));
/// loop {
///     let delivery = orders.take().await?;
///     match handle(delivery.value()).await {
///         Ok(()) => { delivery.ack().await?; }
///         Err(_) => { delivery.nack(Duration::from_secs(30)).await?; }
///     }
/// }
/// # }
/// # async fn handle(_: &String) -> Result<(), ()> { Ok(()) }
/// ```
pub struct ReliableQueue<T> {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
    codec: Arc<dyn Codec<T>>,
    settings: Settings,
    reaper: Arc<ReaperLease>,
    tracker: Option<Arc<Background>>,
    transfer: Option<Arc<Registration>>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Visibility timeout of each delivery.
    pub visibility: Duration,
    /// Deliveries before the dead-letter list (0: no limit).
    pub max_deliveries: u32,
    /// Format of values given back through the delayed queue.
    pub format: Format,
    /// How long a given-back value's delivery count outlives its return.
    pub count_memory: Duration,
    /// A value that cannot be decoded goes to the dead-letter list at once
    /// (a worker's choice) instead of back to the queue.
    pub dead_letter_undecodable: bool,
}

impl<T> Clone for ReliableQueue<T> {
    fn clone(&self) -> Self {
        ReliableQueue {
            core: self.core.clone(),
            keys: self.keys.clone(),
            codec: self.codec.clone(),
            settings: self.settings,
            reaper: self.reaper.clone(),
            tracker: self.tracker.clone(),
            transfer: self.transfer.clone(),
        }
    }
}

impl<T: 'static> std::fmt::Debug for ReliableQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReliableQueue")
            .field("name", &self.keys.destination())
            .field("codec", &self.codec.name())
            .field("visibility_timeout", &self.settings.visibility)
            .field("max_deliveries", &self.settings.max_deliveries)
            .finish()
    }
}

/// A task that runs while any handle lives: the lateness tracker.
pub(crate) struct Background {
    task: parking_lot::Mutex<Option<JoinHandle<()>>>,
}

impl Background {
    fn spawn(task: impl std::future::Future<Output = ()> + Send + 'static) -> Arc<Self> {
        Arc::new(Background {
            task: parking_lot::Mutex::new(Some(tokio::spawn(task))),
        })
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(task) = self.task.lock().take() {
            task.abort();
        }
    }
}

/// What one run of the reaper returned to the queue.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let reaped = queue.reap_now().await?;
/// println!("{} timed out, {} never claimed", reaped.timed_out, reaped.unclaimed);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Reaped {
    /// Deliveries whose visibility timeout ran out.
    pub timed_out: u64,
    /// Values moved to the staging list but never claimed, for a whole timeout.
    pub unclaimed: u64,
}

impl<T: 'static> ReliableQueue<T> {
    pub(crate) fn new(core: Arc<Core>, name: &str, codec: Arc<dyn Codec<T>>) -> Result<Self> {
        let keys = Arc::new(QueueKeys::new(name)?);
        let settings = Settings {
            visibility: DEFAULT_VISIBILITY,
            max_deliveries: DEFAULT_MAX_DELIVERIES,
            format: Format::default(),
            count_memory: DEFAULT_COUNT_MEMORY,
            dead_letter_undecodable: false,
        };
        let reaper = Arc::new(
            core.reapers
                .lease(&core, &keys, settings.visibility, settings.count_memory),
        );
        Ok(ReliableQueue {
            core,
            keys,
            codec,
            settings,
            reaper,
            tracker: None,
            transfer: None,
        })
    }

    /// How long a delivery may stay unsettled before its value goes back to
    /// the queue (default 30 s). Also the grace given to a value moved but not
    /// yet claimed.
    pub fn with_visibility_timeout(mut self, timeout: Duration) -> Self {
        self.settings.visibility = timeout.max(Duration::from_millis(10));
        self.renew_lease();
        self
    }

    /// How long the delivery count of a value given back (nack, visibility
    /// timeout, dropped delivery) is remembered once the value is back in
    /// the destination, waiting for its next delivery (default 1 h; a nack
    /// delay comes on top). A count not claimed by then (a Java consumer or
    /// a plain take took the value) is forgotten, and the value starts over
    /// at 1 if it comes again.
    pub fn with_count_memory(mut self, memory: Duration) -> Self {
        self.settings.count_memory = memory;
        self.renew_lease();
        self
    }

    /// Tells the queue's reaper this handle's settings (the previous lease drops).
    fn renew_lease(&mut self) {
        let lease = self.core.reapers.lease(
            &self.core,
            &self.keys,
            self.settings.visibility,
            self.settings.count_memory,
        );
        self.reaper = Arc::new(lease);
    }

    /// Deliveries of one value without an ack before it goes to the
    /// dead-letter list (default 10; 0: never).
    pub fn with_max_deliveries(mut self, max: u32) -> Self {
        self.settings.max_deliveries = max;
        self
    }

    /// Element format for values [`nack`](Delivery::nack)ed with a delay (they
    /// go back through the delayed queue; default [`Format::Modern`]).
    pub fn with_format(mut self, format: Format) -> Self {
        self.settings.format = format;
        self
    }

    /// The same queue, also running the transfer for its delayed queue while
    /// this handle lives (see [`BlockingQueue::with_transfer`](crate::BlockingQueue::with_transfer)).
    pub fn with_transfer(mut self) -> Self {
        if self.transfer.is_none() {
            self.transfer = Some(self.core.scheduler.register(self.keys.clone()));
        }
        self
    }

    /// The same queue, asking transfers to record when each value was due
    /// while this handle lives, so that [`Delivery::lateness`] is known.
    /// Costs one `ZADD` per moved value (capped at 100,000 recorded values,
    /// expiring an hour after the last record) and is only honoured by delayq
    /// transfers, not by Redisson's. [`Worker`](crate::Worker)s turn it on.
    pub fn with_lateness_tracking(mut self) -> Self {
        if self.tracker.is_none() {
            self.tracker = Some(start_tracker(&self.core, &self.keys));
        }
        self
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        self.keys.destination()
    }

    /// The Redis key names of this queue.
    pub fn keys(&self) -> &QueueKeys {
        &self.keys
    }

    /// Waits for a value and delivers it. Keeps waiting across reconnects;
    /// fails on [`Error::Shutdown`] or bad data. A value that cannot be
    /// decoded is given straight back to the queue (so it counts towards the
    /// dead-letter limit) and reported as [`Error::Decode`].
    ///
    /// Cancel safe: a value moved for a take dropped before it returns goes
    /// back to the head of the list at once, or, if the take was dropped
    /// while claiming it, after the visibility timeout. The same holds for
    /// [`poll`](Self::poll).
    pub async fn take(&self) -> Result<Delivery<T>> {
        loop {
            if let Some(delivery) = self.next(None).await? {
                return Ok(delivery);
            }
        }
    }

    /// Waits up to `timeout` for a value to deliver (a timeout too long for
    /// the clock waits like [`take`](Self::take)).
    pub async fn poll(&self, timeout: Duration) -> Result<Option<Delivery<T>>> {
        let Some(deadline) = Instant::now().checked_add(timeout) else {
            return self.take().await.map(Some);
        };
        loop {
            match self.next(Some(deadline)).await? {
                Some(delivery) => return Ok(Some(delivery)),
                None if Instant::now() >= deadline => return Ok(None),
                None => continue,
            }
        }
    }

    /// One move and claim; `None` when nothing came or the claim lost its value.
    async fn next(&self, deadline: Option<Instant>) -> Result<Option<Delivery<T>>> {
        if self.core.is_shutting_down() {
            return Err(Error::Shutdown);
        }
        let (dest, staging) = (self.keys.destination(), self.keys.staging());
        let args = |secs: f64| {
            let mut args: Vec<Value> = [dest, staging, "LEFT", "RIGHT"].into_iter().map(Value::from).collect();
            args.push(Value::from(secs));
            args
        };
        let Some(moved) = self
            .core
            .connections
            .blocking
            .wait("BLMOVE", dest, deadline, args)
            .await?
        else {
            return Ok(None);
        };
        let value = reply::bytes(moved)?;
        let id = ElementId::random(Format::Modern).to_bytes();
        let keys = vec![
            self.keys.staging().into(),
            self.keys.inflight().into(),
            self.keys.dead_letter().into(),
            self.keys.due().into(),
            self.keys.counts().into(),
            self.keys.counts_expiry().into(),
            self.keys.staging_mark().into(),
        ];
        let args = vec![
            Value::Bytes(value.clone()),
            Value::Bytes(Bytes::copy_from_slice(&id)),
            Value::from(crate::wire::time::saturating_ms(self.settings.visibility)),
            Value::from(i64::from(self.settings.max_deliveries)),
            Value::from(CLAIM_SCAN),
        ];
        // One attempt: a claim applied twice would leave a delivery nobody holds.
        // If the reply is lost, the reaper returns the value either way.
        let conn = self.core.conn()?; // sent once: the script is declared `Resend::Once`
        let claim = match SCRIPTS.claim.run(conn, keys, args).await {
            Ok(claim) => claim,
            Err(error) => {
                let error = Error::from_script(error, SCRIPTS.claim.name, self.name());
                if error.is_transient() {
                    tracing::warn!(queue = self.name(), %error, "claim failed; the reaper will return the value");
                    return Ok(None);
                }
                return Err(error);
            }
        };
        let mut claim = reply::array(claim)?.into_iter();
        let status = claim
            .next()
            .map(reply::opt_text)
            .transpose()?
            .flatten()
            .unwrap_or_default();
        let count = claim.next().map(|v| reply::int(&v)).transpose()?.unwrap_or(0);
        let due = claim.next().map(reply::opt_text).transpose()?.flatten();
        let now = claim.next().map(|v| reply::int(&v)).transpose()?;
        let lateness = match (due.as_deref().and_then(crate::wire::time::parse_score), now) {
            (Some(due), Some(now)) => {
                let ms = (now - due).max(0);
                crate::telemetry::delivered(self.name(), ms);
                Some(Duration::from_millis(ms as u64))
            }
            _ => None,
        };
        match status.as_str() {
            "ok" => {}
            "gone" => return Ok(None),
            "dead" => {
                crate::transfer::stats::Stats::add(&self.core.scheduler.stats.dead_lettered, 1);
                crate::telemetry::dead_lettered(self.name(), "deliveries");
                tracing::warn!(
                    queue = self.name(),
                    deliveries = count,
                    dead_letter = self.keys.dead_letter(),
                    "value delivered too often without an ack; moved to the dead-letter list"
                );
                return Ok(None);
            }
            other => return Err(Error::Protocol(format!("claim answered {other:?}"))),
        }
        let count = u32::try_from(count).unwrap_or(u32::MAX);
        let member = crate::queue::reliable::delivery::member(id, count, &value);
        match codec::decode(&*self.codec, value) {
            Ok(decoded) => Ok(Some(Delivery::new(self, member, count, lateness, decoded))),
            Err(error) => {
                // Given back at once, where it counts towards the dead-letter
                // limit, or dead-lettered now if the consumer asked for that.
                let to = if self.settings.dead_letter_undecodable {
                    crate::telemetry::dead_lettered(self.name(), "undecodable");
                    GiveBack::DeadLetter
                } else {
                    GiveBack::Tail
                };
                let mut handle = Handle::new(self.core.clone(), &self.keys, self.settings, member);
                let restored = handle.give_back(to).await.unwrap_or(false);
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// Values ready in the destination list.
    pub async fn len(&self) -> Result<usize> {
        let n: i64 = self
            .core
            .conn()?
            .llen(self.name())
            .await
            .map_err(|e| Error::from_command(e, self.name()))?;
        Ok(n as usize)
    }

    /// Whether no value is ready.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// Deliveries not yet settled, across all consumers.
    pub async fn in_flight(&self) -> Result<usize> {
        let n: i64 = self
            .core
            .conn()?
            .zcard(self.keys.inflight())
            .await
            .map_err(|e| Error::from_command(e, self.keys.inflight()))?;
        Ok(n as usize)
    }

    /// Values in the dead-letter list.
    pub async fn dead_letter_len(&self) -> Result<usize> {
        let n: i64 = self
            .core
            .conn()?
            .llen(self.keys.dead_letter())
            .await
            .map_err(|e| Error::from_command(e, self.keys.dead_letter()))?;
        Ok(n as usize)
    }

    /// The dead-lettered values, oldest first, without removing them.
    pub async fn dead_letters(&self) -> Result<Vec<T>> {
        let raw: Vec<Bytes> = self
            .core
            .conn()?
            .lrange(self.keys.dead_letter(), 0, -1)
            .await
            .map_err(|e| Error::from_command(e, self.keys.dead_letter()))?;
        Ok(codec::decode_all(&*self.codec, raw)?)
    }

    /// Moves up to `max` dead-lettered values back to the queue's tail, to
    /// start over at delivery count 1; returns how many moved. At most 10,000 per call
    /// (one script run); `0` moves nothing.
    pub async fn requeue_dead_letters(&self, max: usize) -> Result<usize> {
        let keys = vec![self.keys.dead_letter().into(), self.name().into()];
        if max == 0 {
            return Ok(0);
        }
        let max = max.min(crate::queue::delayed::MAX_BATCH) as i64;
        let value = crate::connection::request::Request::new(self.name())
            .apply(
                self.core.conn()?,
                self.core.settling(),
                &SCRIPTS.requeue_dead_letters,
                keys,
                vec![Value::from(max)],
                self.name(),
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Runs the reaper once now (it also runs on its own while a handle lives).
    pub async fn reap_now(&self) -> Result<Reaped> {
        reap(
            &self.core,
            &self.keys,
            self.settings.visibility,
            self.settings.count_memory,
        )
        .await
    }

    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.core
    }

    pub(crate) fn queue_keys(&self) -> &QueueKeys {
        &self.keys
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    pub(crate) fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }
}

/// How long the lateness-tracking marker lives without a refresh.
const TRACKING_TTL: Duration = Duration::from_secs(60);

/// Keeps the lateness-tracking marker alive (refreshed at a third of its life).
fn start_tracker(core: &Arc<Core>, keys: &Arc<QueueKeys>) -> Arc<Background> {
    let (core, keys) = (core.clone(), keys.clone());
    Background::spawn(async move {
        let mut tick = tokio::time::interval(TRACKING_TTL / 3);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = core.connections.shutdown.cancelled() => return,
            }
            let Ok(conn) = core.conn() else { return };
            let set: std::result::Result<(), _> = fred::interfaces::KeysInterface::set(
                conn,
                keys.due_tracking(),
                1,
                Some(fred::types::Expiration::PX(TRACKING_TTL.as_millis() as i64)),
                None,
                false,
            )
            .await;
            if let Err(error) = set {
                tracing::debug!(queue = keys.destination(), %error, "could not refresh the lateness-tracking marker");
            }
        }
    })
}

/// Runs the reap script until a call leaves nothing to do now (at most
/// [`REAP_CALLS`] calls: each is bounded, so Redis serves others in between).
pub(crate) async fn reap(
    core: &Arc<Core>,
    keys: &QueueKeys,
    grace: Duration,
    count_memory: Duration,
) -> Result<Reaped> {
    let script = &SCRIPTS.reap;
    let mut total = Reaped::default();
    for _ in 0..REAP_CALLS {
        let value = script
            .run(
                core.conn()?,
                vec![
                    keys.staging().into(),
                    keys.inflight().into(),
                    keys.destination().into(),
                    keys.counts().into(),
                    keys.counts_expiry().into(),
                    keys.staging_mark().into(),
                ],
                vec![
                    Value::from(crate::wire::time::saturating_ms(grace)),
                    Value::from(crate::wire::time::saturating_ms(count_memory)),
                    Value::from(REAP_BATCH),
                    Value::from(REAP_BYTES),
                ],
            )
            .await
            .map_err(|e| Error::from_script(e, script.name, keys.destination()))?;
        let [timed_out, unclaimed, more] = reply::tuple::<3>(value)?;
        total.timed_out += reply::int(&timed_out)? as u64;
        total.unclaimed += reply::int(&unclaimed)? as u64;
        if reply::int(&more)? == 0 {
            break;
        }
    }
    Ok(total)
}
