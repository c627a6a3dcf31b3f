//! `ReliableQueue<T>`: at-least-once consumption of a destination list, with
//! acknowledgements, a visibility timeout, delivery counts and a dead-letter list.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::interfaces::{ListInterface, SortedSetsInterface};
use fred::types::Value;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::client::Client;
use crate::codec::{self, Codec};
use crate::delivery::{Delivery, GiveBack, Handle};
use crate::error::{Error, Result};
use crate::format::{ElementId, Format};
use crate::keys::QueueKeys;
use crate::reply;
use crate::scheduler::Registration;
use crate::script::SCRIPTS;

/// Default time a delivery may stay unsettled before it goes back to the queue.
const DEFAULT_VISIBILITY: Duration = Duration::from_secs(30);
/// Default deliveries of one value before it goes to the dead-letter list.
const DEFAULT_MAX_DELIVERIES: u32 = 10;

/// Reliable consumption of a queue's destination list: each value taken is
/// moved atomically (`BLMOVE`) to a processing list and handed out as a
/// [`Delivery`] that must be [`ack`](Delivery::ack)ed.
///
/// # Guarantees
///
/// - **At least once.** A value is only removed for good by `ack`. If the
///   consumer dies, loses its connection, drops the delivery, or does not ack
///   within the visibility timeout, the value goes back to the head of the
///   destination list and is delivered again (to any consumer, Java ones
///   included: the destination stays a plain Redisson list).
/// - **Acked once.** `ack` is idempotent (a retried ack reports success) and
///   returns `false` when it came too late (the value was already given back).
/// - **Dead letters.** A value delivered more than `max_deliveries` times
///   without an ack goes to `delayq_dead_letter:{name}` instead (a plain list;
///   see [`requeue_dead_letters`](Self::requeue_dead_letters)).
/// - Delivery counts are kept per value: identical values share one count.
///
/// # Implementation
///
/// `take` waits with `BLMOVE` (destination → `delayq_processing:{name}`) on a
/// connection of its own, then a script claims the moved value: it records a
/// delivery with a deadline (`delayq_inflight:{name}`, Redis server clock) and
/// counts it (`delayq_deliveries:{name}`). While a handle lives, a reaper
/// returns deliveries past their deadline, and values moved but never claimed
/// (a consumer that died between the two steps) once seen unclaimed for a
/// whole visibility timeout. All keys follow the queue's brace rule.
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
    client: Client,
    keys: Arc<QueueKeys>,
    codec: Arc<dyn Codec<T>>,
    settings: Settings,
    reaper: Arc<Background>,
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
    /// A value that cannot be decoded goes to the dead-letter list at once
    /// (a worker's choice) instead of back to the queue.
    pub dead_letter_undecodable: bool,
}

impl<T> Clone for ReliableQueue<T> {
    fn clone(&self) -> Self {
        ReliableQueue {
            client: self.client.clone(),
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

/// A task that runs while any handle lives: the reaper, the lateness tracker.
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
    /// Values moved to the processing list but never claimed, for a whole timeout.
    pub unclaimed: u64,
}

impl<T: 'static> ReliableQueue<T> {
    pub(crate) fn new(client: Client, name: &str, codec: Arc<dyn Codec<T>>) -> Result<Self> {
        let keys = Arc::new(QueueKeys::new(name)?);
        let settings = Settings {
            visibility: DEFAULT_VISIBILITY,
            max_deliveries: DEFAULT_MAX_DELIVERIES,
            format: Format::default(),
            dead_letter_undecodable: false,
        };
        let reaper = start_reaper(&client, &keys, settings.visibility);
        Ok(ReliableQueue {
            client,
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
        self.reaper = start_reaper(&self.client, &self.keys, self.settings.visibility);
        self
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
            self.transfer = Some(self.client.inner.scheduler.register(self.keys.clone()));
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
            self.tracker = Some(start_tracker(&self.client, &self.keys));
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

    /// Waits up to `timeout` for a value to deliver.
    pub async fn poll(&self, timeout: Duration) -> Result<Option<Delivery<T>>> {
        let deadline = Instant::now() + timeout;
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
        if self.client.inner.shutdown.is_cancelled() {
            return Err(Error::Shutdown);
        }
        let (dest, processing) = (self.keys.destination(), self.keys.processing());
        let args = |secs: f64| {
            let mut args: Vec<Value> = [dest, processing, "LEFT", "RIGHT"]
                .into_iter()
                .map(Value::from)
                .collect();
            args.push(Value::from(secs));
            args
        };
        let Some(moved) = self.client.inner.blocking.wait("BLMOVE", dest, deadline, args).await? else {
            return Ok(None);
        };
        let value = reply::bytes(moved)?;
        let id = ElementId::random(Format::Modern).to_bytes();
        let keys = vec![
            self.keys.processing().into(),
            self.keys.inflight().into(),
            self.keys.deliveries().into(),
            self.keys.dead_letter().into(),
            self.keys.due().into(),
        ];
        let args = vec![
            Value::Bytes(value.clone()),
            Value::Bytes(Bytes::copy_from_slice(&id)),
            Value::from(self.settings.visibility.as_millis() as i64),
            Value::from(i64::from(self.settings.max_deliveries)),
        ];
        // One attempt: a claim applied twice would leave a delivery nobody holds.
        // If the reply is lost, the reaper returns the value either way.
        let conn = self.client.conn()?; // sent once: the script is declared `Resend::Once`
        let claim = match SCRIPTS.claim.run(&conn, keys, args).await {
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
        let lateness = match (due.as_deref().and_then(crate::time::parse_score), now) {
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
                crate::stats::Stats::add(&self.client.inner.scheduler.stats.dead_lettered, 1);
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
        let mut member = Vec::with_capacity(8 + value.len());
        member.extend_from_slice(&id);
        member.extend_from_slice(&value);
        let member = Bytes::from(member);
        match codec::decode(&*self.codec, value) {
            Ok(decoded) => Ok(Some(Delivery::new(self, member, count as u32, lateness, decoded))),
            Err(error) => {
                // Given back at once, where it counts towards the dead-letter
                // limit, or dead-lettered now if the consumer asked for that.
                let to = if self.settings.dead_letter_undecodable {
                    crate::telemetry::dead_lettered(self.name(), "undecodable");
                    GiveBack::DeadLetter
                } else {
                    GiveBack::Tail
                };
                let mut handle = Handle::new(self.client.clone(), &self.keys, self.settings, member);
                let restored = handle.give_back(to).await.unwrap_or(false);
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// Values ready in the destination list.
    pub async fn len(&self) -> Result<usize> {
        let n: i64 = self
            .client
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
            .client
            .conn()?
            .zcard(self.keys.inflight())
            .await
            .map_err(|e| Error::from_command(e, self.keys.inflight()))?;
        Ok(n as usize)
    }

    /// Values in the dead-letter list.
    pub async fn dead_letter_len(&self) -> Result<usize> {
        let n: i64 = self
            .client
            .conn()?
            .llen(self.keys.dead_letter())
            .await
            .map_err(|e| Error::from_command(e, self.keys.dead_letter()))?;
        Ok(n as usize)
    }

    /// The dead-lettered values, oldest first, without removing them.
    pub async fn dead_letters(&self) -> Result<Vec<T>> {
        let raw: Vec<Bytes> = self
            .client
            .conn()?
            .lrange(self.keys.dead_letter(), 0, -1)
            .await
            .map_err(|e| Error::from_command(e, self.keys.dead_letter()))?;
        Ok(codec::decode_all(&*self.codec, raw)?)
    }

    /// Moves up to `max` dead-lettered values back to the queue's tail, with a
    /// fresh delivery count; returns how many moved. At most 10,000 per call
    /// (one script run); `0` moves nothing.
    pub async fn requeue_dead_letters(&self, max: usize) -> Result<usize> {
        let keys = vec![
            self.keys.dead_letter().into(),
            self.name().into(),
            self.keys.deliveries().into(),
        ];
        if max == 0 {
            return Ok(0);
        }
        let max = max.min(crate::delayed_queue::MAX_BATCH) as i64;
        let value = crate::request::Request::new(self.name())
            .remove(
                self.client.conn()?,
                &self.client.inner.settling,
                &SCRIPTS.requeue_dead_letters,
                keys,
                vec![Value::from(max)],
            )
            .await
            .map_err(|e| Error::from_script(e, SCRIPTS.requeue_dead_letters.name, self.name()))?;
        Ok(reply::int(&value)? as usize)
    }

    /// Runs the reaper once now (it also runs on its own while a handle lives).
    pub async fn reap_now(&self) -> Result<Reaped> {
        reap(&self.client, &self.keys, self.settings.visibility).await
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
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

/// Reaps every quarter of the visibility timeout (between 50 ms and 5 s).
fn start_reaper(client: &Client, keys: &Arc<QueueKeys>, visibility: Duration) -> Arc<Background> {
    let every = (visibility / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
    let (client, keys) = (client.clone(), keys.clone());
    Background::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = client.inner.shutdown.cancelled() => return,
            }
            match reap(&client, &keys, visibility).await {
                Ok(reaped) if reaped.timed_out > 0 || reaped.unclaimed > 0 => {
                    tracing::info!(
                        queue = keys.destination(),
                        ?reaped,
                        "returned unsettled deliveries to the queue"
                    );
                }
                Ok(_) => {}
                Err(Error::Shutdown) => return,
                Err(error) => tracing::warn!(queue = keys.destination(), %error, "reaper run failed"),
            }
        }
    })
}

/// How long the lateness-tracking marker lives without a refresh.
const TRACKING_TTL: Duration = Duration::from_secs(60);

/// Keeps the lateness-tracking marker alive (refreshed at a third of its life).
fn start_tracker(client: &Client, keys: &Arc<QueueKeys>) -> Arc<Background> {
    let (client, keys) = (client.clone(), keys.clone());
    Background::spawn(async move {
        let mut tick = tokio::time::interval(TRACKING_TTL / 3);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = client.inner.shutdown.cancelled() => return,
            }
            let Ok(conn) = client.conn() else { return };
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

async fn reap(client: &Client, keys: &QueueKeys, visibility: Duration) -> Result<Reaped> {
    let script = &SCRIPTS.reap;
    let remember_acks = (visibility * 10).max(Duration::from_secs(3600));
    let value = script
        .run(
            client.conn()?,
            vec![
                keys.processing().into(),
                keys.inflight().into(),
                keys.deliveries().into(),
                keys.destination().into(),
                keys.acked().into(),
            ],
            vec![
                Value::from(visibility.as_millis() as i64),
                Value::from(remember_acks.as_millis() as i64),
            ],
        )
        .await
        .map_err(|e| Error::from_script(e, script.name, keys.destination()))?;
    let [timed_out, unclaimed] = reply::tuple::<2>(value)?;
    Ok(Reaped {
        timed_out: reply::int(&timed_out)? as u64,
        unclaimed: reply::int(&unclaimed)? as u64,
    })
}
