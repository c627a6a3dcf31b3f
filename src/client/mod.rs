//! The client: the facade a user holds. It builds the shared core below it
//! (connections, scheduler, registries) and hands it to each queue handle.
//!
//! Owns `Client` and [`ClientBuilder`]. May use every layer below; nothing
//! below uses it (see ARCHITECTURE.md).

mod builder;
mod discovery;
mod registry;
pub(crate) mod search;

use std::sync::Arc;
use std::time::Duration;

pub use builder::ClientBuilder;

use crate::error::Result;
use crate::queue::blocking::BlockingQueue;
use crate::queue::delayed::DelayedQueue;
use crate::queue::events::{Event, Events, EventsFrom};
use crate::queue::partitioned::PartitionedQueue;
use crate::queue::reliable::ReliableQueue;
use crate::queue::Core;
use crate::wire::codec::Codec;
use crate::wire::keys::QueueKeys;
use crate::worker::Worker;

/// A connection to Redis shared by every queue handle made from it.
///
/// It owns a small pool of multiplexed connections for ordinary commands, one
/// subscriber connection that listens to every queue's channel, dedicated
/// connections for blocking reads (so a `take()` never blocks other
/// commands), and the transfer scheduler that moves due elements of every
/// [`DelayedQueue`] made from it. Cloning is cheap and shares all of that.
///
/// # Dropping without `shutdown`
///
/// Call [`shutdown`](Self::shutdown) to stop gracefully. A client that is
/// simply dropped (its last clone and every queue handle, delivery and worker
/// made from it gone, since each of them holds the client's shared core) still releases
/// everything, at once and without the graceful wait: blocked reads and
/// background tasks (scheduler, Sentinel watchers) are cancelled and every
/// connection is closed in the background, including the pool
/// [`redis`](Self::redis) returns. Nothing is lost, but nothing is handed
/// back gracefully either: a reliable [`Delivery`](crate::Delivery) dropped
/// unsettled is given back to the tail of its queue in the background (not
/// to the head, as shutdown does), and one that cannot be (the process exits
/// first, Redis is unreachable) returns when its visibility timeout passes,
/// through the reaper of any client of the queue. A due element not
/// transferred yet stays in the timeout set for the next transfer, Java or
/// Rust. Closing needs a Tokio runtime; without one, the connections end
/// with the runtime that ran them.
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::{Client, StringCodec};
///
/// # async fn demo() -> delayq::Result<()> {
/// let client = Client::connect("redis://127.0.0.1:6379").await?;
/// let delayed = client.delayed_queue("orders", StringCodec)?;
/// delayed.offer(&"order-1".to_string(), Duration::from_secs(10)).await?;
///
/// let orders = client.blocking_queue("orders", StringCodec)?;
/// let order = orders.take().await?; // about 10 s later
/// client.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    core: Arc<Core>,
    /// The recurring schedules' runner, started by the first `schedule` or `run_schedules`.
    schedules: crate::schedule::RunnerSlot,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("shut_down", &self.core.is_shutting_down())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects with default settings to `url` (see [`ClientBuilder::url`]).
    pub async fn connect(url: &str) -> Result<Client> {
        Client::builder().url(url).build().await
    }

    /// A builder for a client with custom settings.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A handle on the delayed queue whose destination is `name`; the Java
    /// equivalent is `redisson.getDelayedQueue(redisson.getBlockingQueue(name, codec))`.
    ///
    /// While the handle or a clone lives, this client's scheduler moves the
    /// queue's due elements to the destination: from the handle's first
    /// operation, and at the latest 250 ms after it was made;
    /// `.with_transfer()` starts that at once, `.without_transfer()` right
    /// away means never (see [`DelayedQueue`]).
    pub fn delayed_queue<T, C>(&self, name: &str, codec: C) -> Result<DelayedQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        Ok(DelayedQueue::new(self.core.clone(), name, Arc::new(codec))?.transferring_once_used())
    }

    /// A handle on the destination list `name`, where due elements arrive; the
    /// Java equivalent is `redisson.getBlockingQueue(name, codec)`.
    ///
    /// It does not transfer due elements unless [`BlockingQueue::with_transfer`] is called.
    pub fn blocking_queue<T, C>(&self, name: &str, codec: C) -> Result<BlockingQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        BlockingQueue::new(self.core.clone(), name, Arc::new(codec))
    }

    /// Reliable, at-least-once consumption of the destination list `name`:
    /// see [`ReliableQueue`].
    pub fn reliable_queue<T, C>(&self, name: &str, codec: C) -> Result<ReliableQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        ReliableQueue::new(self.core.clone(), name, Arc::new(codec))
    }

    /// A [`Worker`] for the queue `name`: configure it, then
    /// [`run`](crate::Worker::run) it with a handler.
    pub fn worker<T, C>(&self, name: &str, codec: C) -> Result<Worker<T>>
    where
        C: Codec<T>,
        T: Send + 'static,
    {
        Ok(Worker::new(self.reliable_queue(name, codec)?))
    }

    /// Creates the partitioned queue `name` with `count` partitions (1 to
    /// [`MAX_PARTITIONS`](crate::MAX_PARTITIONS)) and returns a handle on
    /// it (see [`PartitionedQueue`]): stores its layout, the partitions'
    /// names spread over the Cluster's slots, in the hash
    /// `delayq_partitions:{name}`, in one script. Creating it again with
    /// the same count (another process at start-up, a resend after a lost
    /// reply) opens the stored layout; with another count it fails with
    /// [`Error::PartitionCountMismatch`](crate::Error::PartitionCountMismatch)
    /// and changes nothing (only [`repartition`](Self::repartition)
    /// changes the count). A name with braces is
    /// refused ([`Error::InvalidQueueName`](crate::Error::InvalidQueueName)):
    /// a hash tag would put every partition in one slot.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.create_partitioned_queue("orders", 6, delayq::StringCodec).await?;
    /// assert_eq!(orders.count(), 6);
    /// # Ok(()) }
    /// ```
    pub async fn create_partitioned_queue<T, C>(
        &self,
        name: &str,
        count: usize,
        codec: C,
    ) -> Result<PartitionedQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        crate::queue::partitioned::create(self.core.clone(), name, count, Arc::new(codec)).await
    }

    /// A handle on the partitioned queue `name`, from its stored layout;
    /// [`Error::NotPartitioned`](crate::Error::NotPartitioned) when it has
    /// none (see [`create_partitioned_queue`](Self::create_partitioned_queue)).
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.partitioned_queue("orders", delayq::StringCodec).await?;
    /// println!("{:?}", orders.names());
    /// # Ok(()) }
    /// ```
    pub async fn partitioned_queue<T, C>(&self, name: &str, codec: C) -> Result<PartitionedQueue<T>>
    where
        C: Codec<T>,
        T: 'static,
    {
        self.check_open()?;
        crate::queue::partitioned::open(self.core.clone(), name, Arc::new(codec)).await
    }

    /// The stored layout of the partitioned queue `name`, or `None` when
    /// `name` is not one (a name with braces or a line break never is; for
    /// tools: no codec needed).
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// if let Some(layout) = client.partition_layout("orders").await? {
    ///     println!("{} partitions: {:?}", layout.count(), layout.names());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn partition_layout(&self, name: &str) -> Result<Option<crate::PartitionLayout>> {
        self.check_open()?;
        crate::queue::partitioned::stored_layout(&self.core, name).await
    }

    /// Re-partitions `name` to `count` partitions: stores a new generation
    /// of its layout, whose partitions (new names, spread over the slots as
    /// at creation) take every offer from then on, and makes the old ones
    /// *retired*. Nothing is moved: values in a retired partition (ready,
    /// delayed, in flight, retried) stay there, with their headers, ids and
    /// groups, and are taken from there: takes and partitioned workers read
    /// retired partitions, before the new ones, until they are retired for
    /// good ([`retire_partitions`](Self::retire_partitions)), so nothing is
    /// lost and a key's earlier values come before its later ones (handled
    /// one at a time only with a concurrency of 1 or groups, as always).
    /// Handles in use follow within about a second
    /// ([`PartitionedQueue`]: each reads the layout again every second it
    /// is used; a `PartitionedWorker` starts workers on the new
    /// partitions). A Java producer routing by `CRC-32 mod N` itself must
    /// read the new names and count; one still writing to an old name
    /// writes to a retired partition, which is still read until retired.
    ///
    /// Resumable and resend-safe: a lost reply's resend, or a run again
    /// after a crash, finds the generation stored and answers the same; a
    /// call with the count the queue has changes nothing. Returns the new
    /// layout. [`Error::NotPartitioned`](crate::Error::NotPartitioned) when
    /// `name` has no layout.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let layout = client.repartition("orders", 6).await?;
    /// println!("generation {}: {:?}, draining {:?}", layout.generation(), layout.names(), layout.retired());
    /// // Later, once consumers have drained the old partitions:
    /// let retirement = client.retire_partitions("orders").await?;
    /// println!("retired {:?}; still holding values: {:?}", retirement.retired, retirement.holding);
    /// # Ok(()) }
    /// ```
    pub async fn repartition(&self, name: &str, count: usize) -> Result<crate::PartitionLayout> {
        self.check_open()?;
        crate::queue::partitioned::repartition(&self.core, name, count).await
    }

    /// Retires for good the retired partitions of `name` that hold nothing
    /// (no value ready, delayed, in flight or dead-lettered), seen empty
    /// twice [`RETIRE_GRACE`](crate::RETIRE_GRACE) apart (so that offers that
    /// were on their way as the layout changed have landed): takes and
    /// workers stop reading them. The others are listed with what they
    /// hold; call again once they are drained. Safe to repeat.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let retirement = client.retire_partitions("orders").await?;
    /// for (name, values) in &retirement.holding {
    ///     println!("{name} still holds {values} values");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn retire_partitions(&self, name: &str) -> Result<crate::Retirement> {
        self.check_open()?;
        crate::queue::partitioned::retire_drained(&self.core, name).await
    }

    /// The primary (`host:port`) that serves each partition of `layout`
    /// now, from one `CLUSTER SLOTS`, in partition order; `None` each on a
    /// deployment that is not a Redis Cluster (for tools: `delayq
    /// partition show`, the dashboard).
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// if let Some(layout) = client.partition_layout("orders").await? {
    ///     let nodes = client.partition_nodes(&layout).await?;
    ///     for (name, node) in layout.names().iter().zip(nodes) {
    ///         println!("{name}: {}", node.as_deref().unwrap_or("-"));
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn partition_nodes(&self, layout: &crate::PartitionLayout) -> Result<Vec<Option<String>>> {
        self.check_open()?;
        crate::queue::partitioned::partition_nodes(&self.core, layout).await
    }

    /// A [`PartitionedWorker`](crate::worker::PartitionedWorker) over every
    /// partition of `queue`, with one concurrency budget: configure it,
    /// then run it with a handler.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.partitioned_queue("orders", delayq::StringCodec).await?;
    /// let worker = client
    ///     .partitioned_worker(&orders)?
    ///     .concurrency(8)
    ///     .run(|order: String| async move { Ok::<_, std::io::Error>(println!("{order}")) });
    /// # worker.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub fn partitioned_worker<T>(&self, queue: &PartitionedQueue<T>) -> Result<crate::worker::PartitionedWorker<T>>
    where
        T: Send + 'static,
    {
        self.check_open()?;
        crate::worker::PartitionedWorker::new(queue)
    }

    /// The workers of `queue`, in any process, latest beat first: each
    /// running [`Worker`] beats in the queue's side keys with its host,
    /// process id, delayq version, settings, counts and the deliveries its
    /// handlers run (see [`Worker::heartbeat`](crate::Worker::heartbeat)).
    /// One that stopped is gone; one that died shows
    /// [`silent`](crate::worker::WorkerInfo::silent) until it is forgotten
    /// an hour later. At most 500, read in one script; times are on the
    /// Redis server's clock. Java consumers do not beat, so they are not
    /// listed.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = delayq::QueueKeys::new("orders")?;
    /// let workers = client.workers(&orders).await?;
    /// let busy: usize = workers.iter().filter(|w| !w.silent).map(|w| w.busy).sum();
    /// println!("{} workers, {busy} handlers running", workers.len());
    /// # Ok(()) }
    /// ```
    pub async fn workers(&self, queue: &impl AsRef<QueueKeys>) -> Result<Vec<crate::worker::WorkerInfo>> {
        self.check_open()?;
        crate::worker::list_workers(&self.core, queue.as_ref()).await
    }

    /// Saves the recurring schedule `name` of `queue` — offer `value` at each
    /// occurrence of `spec` — and runs the queue's schedules in this client
    /// from now on (see [`run_schedules`](Self::run_schedules)).
    ///
    /// `spec` is a [`ScheduleSpec`](crate::schedule::ScheduleSpec), [`every(period)`](crate::schedule::every)
    /// or cron text (`"*/5 * * * *"`, `"CRON_TZ=Europe/Paris 0 9 * * MON-FRI"`).
    /// The value is encoded with the queue's codec and packed in its
    /// format. Saving the same definition again (each process of a fleet at
    /// start-up) keeps the stored schedule as it is — next occurrence, paused
    /// state, counts; another definition replaces it from its next
    /// occurrence after now.
    ///
    /// Each occurrence is offered exactly once, by one of the processes
    /// running the schedule, as an element due at the occurrence: it reaches
    /// the destination through the queue's transfer (this client's, while a
    /// transferring handle of the queue lives, another process's, or
    /// Java's). Bad specs fail with [`Error::InvalidArgument`](crate::Error::InvalidArgument).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::{Client, StringCodec};
    /// use delayq::schedule::{every, Misfire, ScheduleSpec};
    ///
    /// # async fn demo() -> delayq::Result<()> {
    /// let client = Client::connect("redis://127.0.0.1:6379").await?;
    /// let jobs = client.delayed_queue("jobs", StringCodec)?; // keeps transferring while it lives
    /// client.schedule("cleanup", "*/5 * * * *", &jobs, &"cleanup".to_string()).await?;
    /// client
    ///     .schedule("digest", ScheduleSpec::cron("0 8 * * MON")?.in_time_zone("Europe/Paris")?, &jobs, &"digest".to_string())
    ///     .await?;
    /// client
    ///     .schedule("heartbeat", every(Duration::from_secs(30)).misfire(Misfire::FireOnce), &jobs, &"ping".to_string())
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn schedule<T: 'static>(
        &self,
        name: &str,
        spec: impl crate::schedule::IntoScheduleSpec,
        queue: &DelayedQueue<T>,
        value: &T,
    ) -> Result<crate::schedule::ScheduleInfo> {
        self.check_open()?;
        crate::schedule::schedule(&self.core, &self.schedules, name, spec.into_spec()?, queue, value).await
    }

    /// Runs the recurring schedules stored for `queue` in this client, from
    /// now until it is shut down or dropped: it wakes at each occurrence and
    /// offers it unless another process did first. For processes that run
    /// schedules saved elsewhere (after a restart, or a fleet where one
    /// service defines them).
    pub fn run_schedules(&self, queue: &impl AsRef<QueueKeys>) -> Result<()> {
        self.check_open()?;
        crate::schedule::run(&self.core, &self.schedules, queue.as_ref().destination())
    }

    /// The recurring schedules of `queue`, to list, pause, resume or remove
    /// (see [`Schedules`](crate::schedule::Schedules)).
    pub fn schedules(&self, queue: &impl AsRef<QueueKeys>) -> Result<crate::schedule::Schedules> {
        self.check_open()?;
        crate::schedule::Schedules::new(self.core.clone(), &self.schedules, queue.as_ref().destination())
    }

    /// Turns on the lifecycle events of `queue` for every delayq process:
    /// from now on each delayq operation that changes the queue writes an
    /// event ([`EventKind`](crate::events::EventKind)) to its stream
    /// `delayq_events:{queue}`, in the same script as the change (atomic, no
    /// extra round trip), trimmed to about `max_len` entries (`XADD …
    /// MAXLEN ~`; [`DEFAULT_EVENTS_MAX_LEN`](crate::events::DEFAULT_EVENTS_MAX_LEN)
    /// is 10,000). Calling it again changes the max length.
    ///
    /// The switch is the key `delayq_events_config:{queue}` (holding the max
    /// length); each instrumented script reads it (one `GET` while events are
    /// off). Java Redisson's own operations write no events. Fails with
    /// [`Error::WrongType`](crate::Error::WrongType) when the stream key
    /// holds something else, and [`Error::InvalidArgument`](crate::Error::InvalidArgument)
    /// for a max length of 0.
    ///
    /// ```no_run
    /// use futures_util::StreamExt;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.delayed_queue("orders", delayq::StringCodec)?;
    /// client.enable_events(&orders, delayq::events::DEFAULT_EVENTS_MAX_LEN).await?;
    /// let mut events = client.events(&orders)?;
    /// while let Some(event) = events.next().await {
    ///     let event = event?;
    ///     println!("{} {}", event.time_ms, event.kind.name());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn enable_events(&self, queue: &impl AsRef<QueueKeys>, max_len: u64) -> Result<()> {
        self.check_open()?;
        crate::queue::events::enable(&self.core, queue.as_ref(), max_len).await
    }

    /// Turns off the lifecycle events of `queue` (the stream and its
    /// history stay); returns whether they were on.
    pub async fn disable_events(&self, queue: &impl AsRef<QueueKeys>) -> Result<bool> {
        self.check_open()?;
        crate::queue::events::disable(&self.core, queue.as_ref()).await
    }

    /// The max length of `queue`'s event stream while its events are on,
    /// `None` while they are off; [`Error::EventsConfig`](crate::Error::EventsConfig)
    /// when its switch does not parse.
    pub async fn events_max_len(&self, queue: &impl AsRef<QueueKeys>) -> Result<Option<u64>> {
        self.check_open()?;
        crate::queue::events::max_len(&self.core, queue.as_ref()).await
    }

    /// The lifecycle events of `queue` as a [`Stream`](futures_util::Stream)
    /// of typed [`Event`]s, from the first written after the
    /// first poll unless [`Events::from`](crate::events::Events::from) says
    /// otherwise. It waits with `XREAD BLOCK` on a connection of its own
    /// and reads on from its last event after a reconnect (see
    /// [`Events`]). Reading does not need the events to be
    /// on: it waits until some come.
    pub fn events(&self, queue: &impl AsRef<QueueKeys>) -> Result<Events> {
        self.check_open()?;
        Ok(Events::new(self.core.clone(), queue.as_ref().clone()))
    }

    /// Up to `count` of the events `queue`'s stream keeps, oldest first,
    /// from `from` ([`EventsFrom::Oldest`], or
    /// [`After`](crate::events::EventsFrom::After) the last one read to page on),
    /// without waiting for more (`XRANGE`). For a live view, read the last
    /// page and go on with [`events`](Self::events) from its last id.
    pub async fn kept_events(
        &self,
        queue: &impl AsRef<QueueKeys>,
        from: EventsFrom,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.check_open()?;
        crate::queue::events::kept(&self.core, queue.as_ref(), &from, count).await
    }

    /// The newest `count` events `queue`'s stream keeps, oldest first (one
    /// `XREVRANGE`): what a live view opens with before it follows
    /// [`events`](Self::events) from the last of them.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// // A tool that has only the queue's name passes its keys.
    /// let orders = delayq::QueueKeys::new("orders")?;
    /// for event in client.newest_events(&orders, 100).await? {
    ///     println!("{} {}", event.stream_id, event.kind.name());
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn newest_events(&self, queue: &impl AsRef<QueueKeys>, count: usize) -> Result<Vec<Event>> {
        self.check_open()?;
        crate::queue::events::newest(&self.core, queue.as_ref(), count).await
    }

    /// The underlying fred pool, for commands this crate does not wrap.
    pub fn redis(&self) -> &fred::clients::Pool {
        self.core.pool()
    }

    /// What this client's transfer scheduler has done so far.
    pub fn stats(&self) -> crate::transfer::ClientStats {
        self.core.stats()
    }

    /// Whether [`shutdown`](Self::shutdown) was called.
    pub fn is_shut_down(&self) -> bool {
        self.core.is_shutting_down()
    }

    /// Shuts down gracefully, waiting up to the builder's
    /// [`shutdown_grace`](ClientBuilder::shutdown_grace) for deliveries in
    /// flight (see [`shutdown_within`](Self::shutdown_within)).
    pub async fn shutdown(&self) {
        self.core.shutdown().await;
    }

    /// Shuts down gracefully, losing nothing:
    ///
    /// 1. blocked reads end with [`Error::Shutdown`](crate::Error::Shutdown) and nothing new is taken
    ///    (a value popped for one as it ended goes back first);
    /// 2. reliable deliveries already handed out may still be acked or nacked
    ///    for up to `grace`; those still unsettled then go back to the head of
    ///    their queues;
    /// 3. the scheduler stops after its transfer runs in flight end (a due
    ///    element not moved yet stays in the timeout set for any other client,
    ///    Java or Rust);
    /// 4. every connection closes; later calls fail with [`Error::Shutdown`](crate::Error::Shutdown).
    ///
    /// Steps 2 (the giving back) to 4 take at most 5 s after `grace`
    /// together, so shutdown ends while Redis is out of reach too: what could
    /// not be given back then returns after its visibility timeout.
    pub async fn shutdown_within(&self, grace: Duration) {
        self.core.shutdown_within(grace).await;
    }

    /// [`Error::Shutdown`](crate::Error::Shutdown) once the client is shut down.
    fn check_open(&self) -> Result<()> {
        self.core.check_open()
    }
}
