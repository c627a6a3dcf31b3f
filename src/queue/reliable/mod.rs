//! `ReliableQueue<T>`: at-least-once consumption of a destination list, with
//! acknowledgements, a visibility timeout, delivery counts and a dead-letter list.
//!
//! Besides its public API, a reliable queue offers a consumer that runs
//! many deliveries at once (the [`Worker`](crate::Worker)) one crate-internal
//! seam: a claim stream ([`Claims`]: batch claims asked for, polled as a
//! stream of their answers), an ack sink ([`AckSink`]: acks of many
//! deliveries to a script), the settle half of each delivery
//! ([`Delivery::into_parts`] gives a [`DeliveryLease`]: extend, retry, dead
//! letter, give back), and one ordered give-back of what no handler saw
//! ([`ReliableQueue::release_unhandled`]).

mod ack_sink;
mod batch_outbox;
mod claim_batch;
mod claims;
mod dead_letters;
pub(crate) mod delivery;
mod lateness;
mod lost_claim;
mod outstanding;
mod reap;
mod reapers;
mod reason_shape;
mod take;
mod take_many;

pub(crate) use ack_sink::AckSink;
pub(crate) use claims::{Answer, Claim, Claims, CLAIM_BATCH};
pub(crate) use dead_letters::read_dead_letter_run;
pub use dead_letters::{BulkOutcome, DeadLetter, DeadLetterKey, DeadLetterReasons, ReasonGroup};
pub(crate) use delivery::{Delivery, DeliveryLease};
use lateness::{start_tracker, Background};
pub(crate) use reap::reap;
pub use reap::Reaped;
pub use reason_shape::{reason_shape, ShapeGroup};
pub(crate) use take::{Ready, FULL_WAIT, FULL_WAIT_MOST};

use std::sync::Arc;
use std::time::Duration;

use fred::interfaces::{ListInterface, SortedSetsInterface};

use crate::error::{CommandResult, Result};
use crate::queue::handle::QueueHandle;
use crate::queue::per_queue::PerQueue;
use crate::queue::reliable::outstanding::Outstanding;
use crate::queue::reliable::reapers::{ReaperLease, Reapers};
use crate::queue::Core;
use crate::wire::codec::Codec;
use crate::wire::format::Format;
use crate::wire::keys::QueueKeys;

/// Default time a delivery may stay unsettled before it goes back to the queue.
const DEFAULT_VISIBILITY: Duration = Duration::from_secs(30);
/// Default deliveries of one value before it goes to the dead-letter list.
const DEFAULT_MAX_DELIVERIES: u32 = 10;
/// Default time a given-back value's delivery count is remembered after it
/// is back in the destination (plus any nack delay).
const DEFAULT_COUNT_MEMORY: Duration = Duration::from_secs(3600);
/// Reliable consumption of a queue's destination list: each value taken is
/// moved atomically (`LMOVE`, or `BLMOVE` to wait for one) to a staging
/// list, claimed as a delivery, and handed out as a
/// [`Delivery`] that must be [`ack`](Delivery::ack)ed.
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
/// `take` moves a value from the destination to `delayq_staging:{name}` with
/// `LMOVE` on the shared connections when one is ready, else waits for one
/// with `BLMOVE` on a connection of its own; then a script claims the moved
/// value: it removes it from the staging list (looking at most 1,000 values
/// from the tail) and records a delivery with a deadline
/// (`delayq_leases:{name}`, a sorted set of 8-byte id, 10-digit count and
/// value, Redis server clock). Ack, nack and extend act on that one member:
/// each script costs O(log n) in the deliveries in flight. Counts of
/// given-back values wait for their next claim in `delayq_counts:{name}` (by
/// SHA1 of the value; expiry times in `delayq_counts_expiry:{name}`); acked
/// ids in `delayq_acked:{name}`.
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
    handle: QueueHandle<T>,
    settings: Settings,
    reaper: Arc<ReaperLease>,
    tracker: Option<Arc<Background>>,
    /// Who takes, as a job's attempts name it (a worker's id and host; the
    /// process otherwise).
    consumer: Arc<str>,
}

/// What the reliable queues of one client share, across their handles: kept
/// in the client's [`Core`] ([`Core::reliable_queues`]), reached inside only
/// from here.
#[derive(Default)]
pub(crate) struct Registries {
    /// Deliveries handed out and not settled yet.
    outstanding: Outstanding,
    /// One reaper per queue, shared by its handles.
    reapers: Reapers,
    /// One lateness-tracking marker refresher per queue, shared by its handles.
    trackers: PerQueue<Background>,
}

impl Registries {
    /// Waits until every delivery handed out is settled.
    pub(crate) async fn settled(&self) {
        self.outstanding.settled().await
    }

    /// Gives every delivery still unsettled back to the head of its queue,
    /// until `close_by` at most (shutdown, after its grace).
    pub(crate) async fn release_unsettled(&self, core: &Core, close_by: tokio::time::Instant) {
        self.outstanding.release_all(core, close_by).await
    }
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
    /// How long a handled job's history is kept (`lua/lib/jobs.lua`).
    pub history_ttl: Duration,
    /// How many replicas an ack, a nack and a move to the dead letters
    /// wait for (`connection/durable.rs`).
    pub durability: Option<crate::Durability>,
}

impl<T> Clone for ReliableQueue<T> {
    fn clone(&self) -> Self {
        ReliableQueue {
            handle: self.handle.clone(),
            settings: self.settings,
            reaper: self.reaper.clone(),
            tracker: self.tracker.clone(),
            consumer: self.consumer.clone(),
        }
    }
}

impl<T: 'static> std::fmt::Debug for ReliableQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReliableQueue")
            .field("name", &self.handle.keys.destination())
            .field("codec", &self.handle.codec.name())
            .field("visibility_timeout", &self.settings.visibility)
            .field("max_deliveries", &self.settings.max_deliveries)
            .finish()
    }
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
            history_ttl: crate::queue::jobs::DEFAULT_HISTORY_TTL,
            durability: core.durability(),
        };
        let reaper = Arc::new(core.reliable_queues().reapers.lease(
            &core,
            &keys,
            settings.visibility,
            settings.count_memory,
        ));
        Ok(ReliableQueue {
            handle: QueueHandle::new(core, keys, codec),
            settings,
            reaper,
            tracker: None,
            consumer: crate::queue::jobs::this_process(),
        })
    }

    /// The same queue, its deliveries' settling acknowledged only once
    /// `durability`'s replicas have it (`None`: as soon as the primary
    /// has it), in place of the client's
    /// ([`ClientBuilder::durability`](crate::ClientBuilder::durability)):
    /// [`Delivery::ack`](crate::Delivery::ack), a [`Worker`](crate::Worker)'s
    /// acks (one wait per batch), [`nack`](crate::Delivery::nack),
    /// [`dead_letter`](crate::Delivery::dead_letter) and
    /// [`reject`](crate::Delivery::reject), and a worker's retries and
    /// dead letters. Give-backs (a dropped delivery, a worker's values held
    /// ahead, shutdown) do not wait: a lost one leaves the value leased,
    /// and its visibility timeout gives it back. One not confirmed in time
    /// fails with [`Error::NotReplicated`](crate::Error::NotReplicated):
    /// it is done on the primary.
    ///
    /// ```no_run
    /// use delayq::Durability;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let jobs = client
    ///     .reliable_queue("jobs", delayq::StringCodec)?
    ///     .with_durability(Some(Durability::replicas(1)));
    /// assert_eq!(jobs.durability(), Some(Durability::replicas(1)));
    /// if let Some(delivery) = jobs.take_timeout(std::time::Duration::from_secs(1)).await? {
    ///     delivery.ack().await?; // once a replica has the ack
    /// }
    /// # Ok(()) }
    /// ```
    pub fn with_durability(mut self, durability: Option<crate::Durability>) -> Self {
        self.settings.durability = durability;
        self.handle.durability = durability;
        self
    }

    /// How many replicas this handle's acks, nacks and dead letters wait for.
    pub fn durability(&self) -> Option<crate::Durability> {
        self.settings.durability
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
        let lease = self.handle.core.reliable_queues().reapers.lease(
            &self.handle.core,
            &self.handle.keys,
            self.settings.visibility,
            self.settings.count_memory,
        );
        self.reaper = Arc::new(lease);
    }

    /// How long the history of a handled job (a value offered with an id,
    /// then acked) is kept, for [`job`](Self::job) (default 24 h), when the
    /// queue's switch does not say: the time given to
    /// [`set_job_history`](Self::set_job_history) wins, so this only serves
    /// records left from before that switch existed. Expired histories are
    /// dropped a few at a time by later acks.
    ///
    /// ```no_run
    /// # fn demo(client: &delayq::Client) -> delayq::Result<()> {
    /// use std::time::Duration;
    /// let orders = client
    ///     .reliable_queue("orders", delayq::StringCodec)?
    ///     .with_history_ttl(Duration::from_secs(7 * 24 * 3600));
    /// # let _ = orders; Ok(()) }
    /// ```
    pub fn with_history_ttl(mut self, ttl: Duration) -> Self {
        self.settings.history_ttl = ttl;
        self
    }

    /// Where the job offered with `id` is now (pending, ready, in flight,
    /// dead-lettered, handled, ...) and its last attempts, each with its
    /// consumer, times, outcome and error (see [`JobHistory`](crate::jobs::JobHistory)).
    /// One read script: two hash lookups and a score lookup. Fails with
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for an
    /// empty id or one over 1,024 bytes.
    ///
    /// ```no_run
    /// # async fn demo(orders: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// let history = orders.job("order-42").await?;
    /// println!("{}: {} attempts", history.state.name(), history.attempts_total);
    /// # Ok(()) }
    /// ```
    pub async fn job(&self, id: &str) -> Result<crate::queue::jobs::JobHistory> {
        crate::queue::jobs::history(&self.handle.core, &self.handle.keys, id).await
    }

    /// Batch `id`'s state and counts (see
    /// [`DelayedQueue::offer_batch`](crate::DelayedQueue::offer_batch)), or
    /// `None` when there is no such batch.
    ///
    /// ```no_run
    /// # async fn demo(rows: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// if let Some(batch) = rows.batch("import-2026-11").await? {
    ///     println!("{} of {} ended", batch.ended(), batch.total);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn batch(&self, id: &str) -> Result<Option<crate::queue::delayed::BatchStatus>> {
        crate::queue::delayed::batch_status(&self.handle.core, &self.handle.keys, id).await
    }

    /// Sets the settings every group key of this queue shares (see
    /// [`groups`](crate::groups)), for every client: one `HSET`. Claims
    /// follow them from the next one; a key whose values held all its slots
    /// when the concurrency was raised takes the new room after its next
    /// settle.
    ///
    /// ```no_run
    /// # async fn demo(orders: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// use delayq::groups::GroupLimits;
    /// orders.set_group_limits(&GroupLimits::new().concurrency(2)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn set_group_limits(&self, limits: &crate::queue::groups::GroupLimits) -> Result<()> {
        crate::queue::groups::set_limits(&self.handle.core, &self.handle.keys, limits).await
    }

    /// The settings every group key of this queue shares (the defaults when
    /// none were set).
    ///
    /// ```no_run
    /// # async fn demo(orders: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// println!("{:?}", orders.group_limits().await?);
    /// # Ok(()) }
    /// ```
    pub async fn group_limits(&self) -> Result<crate::queue::groups::GroupLimits> {
        crate::queue::groups::limits(&self.handle.core, &self.handle.keys).await
    }

    /// Stops the job offered with `id`, wherever it is (see
    /// [`CancelOutcome`](crate::jobs::CancelOutcome)): a pending element is
    /// removed; a ready job is dropped by the take that reaches it; a
    /// running job's [`Worker`](crate::Worker) tells its handler
    /// ([`JobContext::cancelled`](crate::worker::JobContext::cancelled))
    /// within its [`cancel_poll`](crate::Worker::cancel_poll), and a handler
    /// that then returns an error settles it as cancelled: it is neither
    /// retried nor dead-lettered. A handler that finishes anyway is acked.
    ///
    /// Ready and running jobs are found by their history, so the queue must
    /// keep one ([`set_job_history`](Self::set_job_history)); without,
    /// only a pending element is found. Only delayq's reliable takes and
    /// workers read a cancel: a Java consumer, or a plain
    /// [`BlockingQueue`](crate::BlockingQueue) take, may still take a
    /// ready job's value. Asking twice asks once; a resent call answers as
    /// the first.
    ///
    /// ```no_run
    /// # async fn demo(imports: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// use delayq::jobs::CancelOutcome;
    /// if let CancelOutcome::Running { delivery } = imports.cancel_job("import-7").await? {
    ///     println!("told the handler of delivery {delivery}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn cancel_job(&self, id: &str) -> Result<crate::queue::jobs::CancelOutcome> {
        crate::queue::jobs::cancel(&self.handle.core, &self.handle.keys, id).await
    }

    /// Waits until the job offered with `id` has ended (handled,
    /// dead-lettered, cancelled, deleted) and returns its history, with
    /// its [`result`](crate::jobs::JobHistory::result) when its handler
    /// returned one; `None` after `timeout` (BullMQ's
    /// `waitUntilFinished`). Reads the history at once, then every 10 ms,
    /// doubling up to every 250 ms: one read script each. Needs the
    /// queue's job history ([`set_job_history`](Self::set_job_history)):
    /// without, a job is never seen to end, and the wait times out.
    ///
    /// ```no_run
    /// # async fn demo(orders: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// use std::time::Duration;
    /// match orders.wait_job("order-42", Duration::from_secs(30)).await? {
    ///     Some(done) => println!("{}: {:?}", done.state.name(), done.result),
    ///     None => println!("still running"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn wait_job(&self, id: &str, timeout: Duration) -> Result<Option<crate::queue::jobs::JobHistory>> {
        crate::queue::jobs::wait(&self.handle.core, &self.handle.keys, id, timeout).await
    }

    /// Turns job history on or off for this queue (for every client of it:
    /// the switch is kept in Redis). Off by default: a queue that never
    /// turns it on keeps no history and pays nothing for it (one `EXISTS` a
    /// script). On, each value offered with an id gets a history from its
    /// transfer on, at a cost: a Worker over such values runs at about a
    /// fifth of the rate of values without (string work in Lua per value,
    /// see BENCHMARKS.md scenario 18).
    ///
    /// `Some(keep)`: histories start at the next transfer; handled and
    /// deleted ones are kept for `keep` (it replaces
    /// [`with_history_ttl`](Self::with_history_ttl) for this queue).
    /// `None`: off; **this deletes every history the queue kept** (both of
    /// its keys are unlinked). Values still pending stay findable by id
    /// ([`DelayedQueue::get`](crate::DelayedQueue::get), and
    /// [`job`](Self::job) says they are pending).
    ///
    /// ```no_run
    /// # async fn demo(orders: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// use std::time::Duration;
    /// orders.set_job_history(Some(Duration::from_secs(24 * 3600))).await?;
    /// assert_eq!(orders.job_history().await?, Some(Duration::from_secs(24 * 3600)));
    /// orders.set_job_history(None).await?; // drops the histories
    /// # Ok(()) }
    /// ```
    pub async fn set_job_history(&self, keep: Option<Duration>) -> Result<()> {
        crate::queue::jobs::set_switch(&self.handle.core, &self.handle.keys, keep).await
    }

    /// The queue's job history switch: how long handled histories are kept,
    /// or `None` when the queue keeps none (the default; see
    /// [`set_job_history`](Self::set_job_history)).
    ///
    /// ```no_run
    /// # async fn demo(orders: delayq::ReliableQueue<String>) -> delayq::Result<()> {
    /// if orders.job_history().await?.is_none() {
    ///     println!("orders keeps no job history");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn job_history(&self) -> Result<Option<Duration>> {
        crate::queue::jobs::switch(&self.handle.core, &self.handle.keys).await
    }

    /// The same queue, naming `consumer` in the attempts of the jobs it
    /// takes (a worker: its id and host).
    pub(crate) fn with_consumer(mut self, consumer: Arc<str>) -> Self {
        self.consumer = consumer;
        self
    }

    /// Who takes, as job attempts name it.
    pub(crate) fn consumer(&self) -> &Arc<str> {
        &self.consumer
    }

    /// Deliveries of one value without an ack before it goes to the
    /// dead-letter list (default 10; 0: never).
    pub fn with_max_deliveries(mut self, max: u32) -> Self {
        self.settings.max_deliveries = max;
        self
    }

    /// Element format for values [`nack`](crate::Delivery::nack)ed with a delay (they
    /// go back through the delayed queue; default [`Format::Modern`]).
    pub fn with_format(mut self, format: Format) -> Self {
        self.settings.format = format;
        self
    }

    /// The same queue, also running the transfer for its delayed queue while
    /// this handle lives (see [`BlockingQueue::with_transfer`](crate::BlockingQueue::with_transfer)).
    pub fn with_transfer(mut self) -> Self {
        self.handle.with_transfer();
        self
    }

    /// The same queue, not running the transfer from this handle (the
    /// default for handles from [`Client::reliable_queue`](crate::Client::reliable_queue)).
    pub fn without_transfer(mut self) -> Self {
        self.handle.without_transfer();
        self
    }

    /// Whether this handle runs the transfer.
    pub fn transfers(&self) -> bool {
        self.handle.transfers()
    }

    /// The same queue, asking transfers to record when each value was due
    /// while this handle lives, so that [`Delivery::lateness`](crate::Delivery::lateness) is known.
    /// Costs one `ZADD` per moved value (capped at 100,000 recorded values,
    /// expiring an hour after the last record) and is only honoured by delayq
    /// transfers, not by Redisson's. [`Worker`](crate::Worker)s turn it on.
    pub fn with_lateness_tracking(mut self) -> Self {
        if self.tracker.is_none() {
            let (core, keys) = (&self.handle.core, &self.handle.keys);
            self.tracker = Some(
                core.reliable_queues()
                    .trackers
                    .get_or_start(keys.destination(), || start_tracker(core, keys)),
            );
        }
        self
    }

    /// The queue's name.
    pub fn name(&self) -> &str {
        self.handle.keys.destination()
    }

    /// The Redis key names of this queue.
    pub fn keys(&self) -> &QueueKeys {
        &self.handle.keys
    }

    /// Values ready in the destination list.
    pub async fn len(&self) -> Result<usize> {
        let n: i64 = self.handle.core.conn()?.llen(self.name()).await.on_key(self.name())?;
        Ok(n as usize)
    }

    /// Whether no value is ready.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// Deliveries not yet settled, across all consumers.
    pub async fn in_flight(&self) -> Result<usize> {
        let n: i64 = self
            .handle
            .core
            .conn()?
            .zcard(self.handle.keys.leases())
            .await
            .on_key(self.handle.keys.leases())?;
        Ok(n as usize)
    }

    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.handle.core
    }

    pub(crate) fn shared_keys(&self) -> &Arc<QueueKeys> {
        &self.handle.keys
    }

    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    /// How long a delivery may stay unsettled (see
    /// [`with_visibility_timeout`](Self::with_visibility_timeout)).
    pub(crate) fn visibility_timeout(&self) -> Duration {
        self.settings.visibility
    }

    /// The same queue, sending a value that cannot be decoded to the
    /// dead-letter list at once instead of back to the queue (a worker's
    /// choice: no handler can ever run on it).
    pub(crate) fn with_undecodable_dead_lettered(mut self) -> Self {
        self.settings.dead_letter_undecodable = true;
        self
    }

    /// Gives `deliveries` (taken from this queue, in the order they were
    /// claimed) back to its head, uncounted, in one ordered release (see
    /// [`DeliveryLease::release_unhandled`]): values no handler saw.
    /// Returns how many went back; past `within` (Redis out of reach) the
    /// visibility timeout returns the rest.
    pub(crate) async fn release_unhandled(&self, deliveries: Vec<Delivery<T>>, within: Duration) -> Result<usize> {
        let leases = deliveries.into_iter().map(|d| d.into_parts().1).collect();
        DeliveryLease::release_unhandled(leases, within).await
    }

    /// Waits, `within` at most, for the give-backs of takes dropped on
    /// their way (they finish in the background) to land.
    pub(crate) async fn settled(&self, within: Duration) {
        self.handle.core.settling().settled(within).await
    }
}

/// What the client's per-queue calls take ([`Client::events`](crate::Client::events),
/// [`Client::schedules`](crate::Client::schedules), ...): the handle stands for its queue.
impl<T> AsRef<QueueKeys> for ReliableQueue<T> {
    fn as_ref(&self) -> &QueueKeys {
        &self.handle.keys
    }
}
