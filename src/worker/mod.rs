//! Workers: an async handler run over a reliable queue, with a concurrency
//! limit, prefetch, rate limits, retries through the delayed queue, a
//! dead-letter list, an error hook, tracing spans and graceful shutdown —
//! what Java teams get from a `@RedisDelayListener`-style listener.
//!
//! [`Worker`] (also at the crate root) is the builder, made by
//! [`Client::worker`](crate::Client::worker); [`WorkerHandle`] stops a
//! running one and gives its [`WorkerReport`]; a [`RetryPolicy`] says when a
//! failed value is tried again; a handler's error can be [`Permanent`]; the
//! error hook gets a [`Failure`] and what was done with it
//! ([`FailureAction`]).
//!
//! ```no_run
//! use std::time::Duration;
//! use delayq::worker::{Permanent, RetryPolicy};
//! use delayq::StringCodec;
//!
//! # async fn demo(client: delayq::Client) -> delayq::Result<()> {
//! let handle = client
//!     .worker("emails", StringCodec)?
//!     .concurrency(8)
//!     .retry(RetryPolicy::exponential(Duration::from_secs(1), Duration::from_secs(60)).max_attempts(5))
//!     .run(|address: String| async move {
//!         if address.is_empty() {
//!             return Err(Permanent::new("no address").into());
//!         }
//!         Ok::<(), delayq::error::BoxError>(())
//!     });
//! let report = handle.shutdown().await;
//! println!("{report:?}");
//! # Ok(()) }
//! ```

// Owns the consume loop (`consume`), one delivery's run in its handler
// slot (`handling`), what it claims ahead (`prefetch`), retry policies
// (`retry`), failures and their kinds (`failure`), the rate limit
// (`rate_limit`), the running worker's handle (`handle`) and its
// heartbeat in the queue's side keys, read back as `WorkerInfo`s
// (`presence`). May use: `queue`, `connection` (the rate limiter's and the
// heartbeat's scripts), `wire`, `telemetry`, `error`.
//
// A worker is built on a `ReliableQueue`, through its public API (a
// single `take` when the queue is empty) and the seam the queue keeps for
// consumers that run many deliveries at once (`queue::reliable`): its claim
// stream (batch claims asked for, polled for their answers), its ack sink
// (acks many to a script), the settle half of each delivery (extend,
// retry, dead letter, give back first in line) and one ordered give-back
// of what no handler saw. How a claim, an ack or a give-back is written to
// Redis is the queue's; when to claim, how much to hold and what to do with
// a result is the worker's.

mod batch;
mod consume;
mod failure;
mod handle;
mod handling;
mod job_context;
mod partitioned;
mod prefetch;
mod presence;
mod rate_limit;
mod retry;
#[cfg(feature = "tower")]
mod service;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use batch::{BatchError, BatchOutcome};
pub use failure::{Backtraced, Failure, FailureAction, Permanent, RetryAfter};
pub use handle::{WorkerHandle, WorkerReport};
pub use job_context::JobContext;
pub use partitioned::PartitionedWorker;
pub(crate) use presence::list as list_workers;
pub use presence::{RunningDelivery, WorkerInfo, WorkerRateLimit, MOST_SHOWN, SILENT_AFTER_BEATS};
pub use retry::RetryPolicy;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use service::Job;

use crate::error::BoxError;
use crate::queue::reliable::ReliableQueue;
use crate::wire::format::Format;

/// Called with a value and its attempt (the delivery count).
type Handler<T> = Arc<dyn Fn(T, u32) -> Pin<Box<dyn Future<Output = Result<(), BoxError>> + Send>> + Send + Sync>;
type OnError = Arc<dyn Fn(&Failure) + Send + Sync>;
type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A consumer that runs an async handler for each value of a queue. Built by
/// [`Client::worker`](crate::Client::worker), configured, then started with
/// [`run`](Self::run); one call per queue, as many queues as you like in one
/// process.
///
/// - **At least once.** It takes with a [`ReliableQueue`]: a value is acked
///   only after its handler returns `Ok`; if the process dies mid-handler, the
///   visibility timeout gives the value back (the worker keeps extending it
///   while the handler runs).
/// - **Retries** with a [`RetryPolicy`] (default: 5 attempts, exponential
///   backoff 1 s → 5 min with jitter) by offering the value again through
///   the delayed queue — a retry survives restarts and any worker, Rust or
///   Java, may take it. After the last attempt, or at once for a
///   [`Permanent`] error or a value the codec cannot decode, the value goes
///   to the dead-letter list `delayq_dead_letter:{name}`.
/// - A handler that panics or overruns its [`handler_timeout`](Self::handler_timeout)
///   counts as a failed attempt.
/// - Each run is in a `delayq.handle` tracing span with `queue`, `attempt`
///   and `lateness_ms` (how long after its due time the value was taken,
///   when this process ran the transfer that moved it).
/// - It also runs the queue's transfer, so due values move even with no
///   Java producer alive.
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::{Client, JsonCodec};
/// use delayq::worker::RetryPolicy;
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Order { id: String, amount: i64 }
///
/// # async fn demo() -> delayq::Result<()> {
/// let client = Client::connect("redis://127.0.0.1:6379").await?;
/// let worker = client
///     .worker("orders", JsonCodec::<Order>::new())?
///     .concurrency(8)
///     .retry(RetryPolicy::exponential(Duration::from_secs(1), Duration::from_secs(60)).jitter(0.2).max_attempts(5))
///     .on_error(|failure| eprintln!("{} attempt {}: {}", failure.queue(), failure.attempt(), failure.error()))
///     .shutdown_on_signal()
///     .run(|order: Order| async move {
///         charge(&order.id, order.amount).await
///     });
/// let report = worker.join().await; // returns after SIGINT/SIGTERM, once in-flight work is done
/// println!("{report:?}");
/// client.shutdown().await;
/// # Ok(()) }
/// # async fn charge(_: &str, _: i64) -> Result<(), std::io::Error> { Ok(()) }
/// ```
pub struct Worker<T> {
    queue: ReliableQueue<T>,
    concurrency: usize,
    prefetch: usize,
    retry: RetryPolicy,
    handler_timeout: Option<Duration>,
    on_error: Option<OnError>,
    signals: Vec<Signal>,
    rate_limit: Option<rate_limit::RateLimit>,
    heartbeat: Duration,
    cancel_poll: Duration,
    /// With slots shared by the partitions of a partitioned worker: the
    /// most one claim reserves (its share of them).
    slot_share: usize,
}

impl<T> std::fmt::Debug for Worker<T>
where
    T: 'static,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("queue", &self.queue)
            .field("concurrency", &self.concurrency)
            .field("prefetch", &self.prefetch)
            .field("retry", &self.retry)
            .field("handler_timeout", &self.handler_timeout)
            .field("rate_limit", &self.rate_limit)
            .field("heartbeat", &self.heartbeat)
            .finish()
    }
}

impl<T: Send + 'static> Worker<T> {
    pub(crate) fn new(queue: ReliableQueue<T>) -> Self {
        let retry = RetryPolicy::default();
        let queue = (queue.with_transfer().with_lateness_tracking())
            .with_undecodable_dead_lettered()
            .with_max_deliveries(retry.max_attempts_value());
        Worker {
            queue,
            concurrency: 1,
            prefetch: prefetch::MOST,
            slot_share: usize::MAX,
            retry,
            handler_timeout: None,
            on_error: None,
            signals: Vec::new(),
            rate_limit: None,
            heartbeat: presence::DEFAULT_HEARTBEAT,
            cancel_poll: job_context::DEFAULT_CANCEL_POLL,
        }
    }

    /// Handlers run at once at most (default 1). While values are ready,
    /// one script pops and claims up to 128 (on the shared connections; up to
    /// four such claims on their way at once) for free slots and, while
    /// handlers finish quickly, ahead of them (see
    /// [`prefetch`](Self::prefetch)); the acks of handled values go many to
    /// a script. An idle worker waits for values with one blocking read, on
    /// one dedicated connection, whatever its concurrency.
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Values claimed ahead of free slots at most (default 256; 0: claim
    /// only for free slots), as a prefetch count in RabbitMQ or SQS: while
    /// handlers finish quickly, the next batch is claimed while the last is
    /// handled, so no slot waits a round trip for its value. How many it
    /// actually holds follows the handlers' pace: as many as start within a
    /// quarter of the [visibility timeout](Self::visibility_timeout) (none
    /// until a handler has run, and none while handlers are slow). A value
    /// claimed ahead is taken from other consumers and counted as a
    /// delivery; it goes back first in line, uncounted, if it waits a
    /// quarter of its visibility timeout for a slot, when the queue is
    /// paused (a worker holding values ahead checks every 100 ms), and when
    /// the worker stops. A worker that dies holding values ahead gets them
    /// back after their visibility timeout, counted, as any value it took:
    /// with `max_attempts(1)`, use `prefetch(0)` if a killed process must
    /// not spend the only delivery of values no handler saw.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// // Long jobs, shared fairly with other workers: nothing held ahead.
    /// let worker = client
    ///     .worker("reports", delayq::JsonCodec::<String>::new())?
    ///     .concurrency(4)
    ///     .prefetch(0)
    ///     .run(|name: String| async move { Ok::<_, std::io::Error>(println!("{name}")) });
    /// # Ok(()) }
    /// ```
    pub fn prefetch(mut self, n: usize) -> Self {
        self.prefetch = n;
        self
    }

    /// Starts at most `limit` handler runs per `per`, across every worker
    /// of this queue in every process that sets the same limit: one limiter
    /// in Redis (`delayq_rate:{name}`, GCRA on the Redis server's clock, so
    /// the hosts' clocks do not matter), on top of this worker's
    /// [`concurrency`](Self::concurrency).
    ///
    /// A handler slot asks for its permit once a value is ready, and takes
    /// the value right after: a rate-limited value stays in the queue (for
    /// any consumer) rather than waiting out its visibility timeout here,
    /// and no permit is held while the queue is empty. The slots of one
    /// process take turns (wait for a value, permit, take), so a
    /// rate-limited worker takes one value at a time (handlers still run
    /// `concurrency` at once); a permit whose value another consumer took
    /// meanwhile is given back. Permits are evenly spaced (I = `per / limit`
    /// apart) unless [`rate_limit_burst`](Self::rate_limit_burst) allows
    /// bursts: in any window of length t at most `burst + ⌊(t + c) / I⌋`
    /// are granted, c = min(10 ms, I), and after a quiet spell (no permit
    /// for over `burst × I + c`) at most `burst + ⌊t / I⌋` in its first t.
    /// A handler starts one take (a move and a claim) after its permit, so
    /// when values arrive in an idle queue at most `burst` handlers of the
    /// fleet start in the first I. Every worker of the queue must use the
    /// same limit: the limiter keeps one schedule, and each caller spaces it
    /// by its own interval.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let worker = client
    ///     .worker("payments", delayq::StringCodec)?
    ///     .concurrency(8)
    ///     .rate_limit(50, Duration::from_secs(1)) // 50 per second, across the fleet
    ///     .run(|payment: String| async move { call_provider(&payment).await });
    /// # Ok(()) }
    /// # async fn call_provider(_: &str) -> Result<(), std::io::Error> { Ok(()) }
    /// ```
    ///
    /// # Panics
    ///
    /// If `limit` is 0 or `per` is zero.
    pub fn rate_limit(mut self, limit: u32, per: Duration) -> Self {
        assert!(
            limit > 0 && !per.is_zero(),
            "rate_limit needs a limit > 0 per a period > 0"
        );
        let burst = self.rate_limit.map_or(1, |r| r.burst);
        self.rate_limit = Some(rate_limit::RateLimit { limit, per, burst });
        self
    }

    /// How many permits of the [`rate_limit`](Self::rate_limit) may be taken
    /// at once after an idle spell (default 1: evenly spaced). Call after
    /// `rate_limit`.
    pub fn rate_limit_burst(mut self, burst: u32) -> Self {
        if let Some(limit) = &mut self.rate_limit {
            limit.burst = burst.max(1);
        }
        self
    }

    /// How often the running worker says it is alive (default 5 s): its
    /// entry in the queue's `delayq_workers:{name}` and
    /// `delayq_worker_beats:{name}` (host, process id, delayq version,
    /// settings, counts, the deliveries its handlers run and their leases),
    /// which [`Client::workers`](crate::Client::workers) reads. A worker
    /// that missed [`SILENT_AFTER_BEATS`] beats is flagged
    /// [`silent`](WorkerInfo::silent); one that stops takes its entry back.
    /// Each beat is one small script on the shared connections. A zero
    /// heartbeat is taken as 1 ms.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let worker = client
    ///     .worker("emails", delayq::StringCodec)?
    ///     .heartbeat(Duration::from_secs(2)) // flagged silent about 6 s after it dies
    ///     .run(|address: String| async move { Ok::<_, std::io::Error>(println!("{address}")) });
    /// # Ok(()) }
    /// ```
    pub fn heartbeat(mut self, every: Duration) -> Self {
        self.heartbeat = every.max(Duration::from_millis(1));
        self
    }

    /// How often the worker reads whether a cancel was asked for the jobs
    /// it runs ([`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job);
    /// default 500 ms; at least 10 ms): one `HMGET` each time, only while it
    /// runs values with job ids. A handler sees a cancel within about this
    /// long ([`JobContext::cancelled`]).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let worker = client
    ///     .worker("imports", delayq::StringCodec)?
    ///     .cancel_poll(Duration::from_millis(100))
    ///     .run(|file: String| async move { Ok::<_, std::io::Error>(println!("{file}")) });
    /// # Ok(()) }
    /// ```
    pub fn cancel_poll(mut self, every: Duration) -> Self {
        self.cancel_poll = every.max(Duration::from_millis(10));
        self
    }

    /// Attempts per value and the delay between them (default
    /// [`RetryPolicy::default`]).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.queue = self.queue.with_max_deliveries(policy.max_attempts_value());
        self.retry = policy;
        self
    }

    /// How long a value stays reserved for this worker without news (default
    /// 30 s). The worker extends it while the handler runs, so it bounds how
    /// soon a value comes back after this process dies, not how long a
    /// handler may take.
    pub fn visibility_timeout(mut self, timeout: Duration) -> Self {
        self.queue = self.queue.with_visibility_timeout(timeout);
        self
    }

    /// Fails a handler run that takes longer than this (default: no limit).
    pub fn handler_timeout(mut self, timeout: Duration) -> Self {
        self.handler_timeout = Some(timeout);
        self
    }

    /// Element format of retries offered back to the delayed queue (default
    /// [`Format::Modern`]; [`Format::Legacy`] while Java clients older than
    /// Redisson 3.21.1 run the transfer).
    pub fn retry_format(mut self, format: Format) -> Self {
        self.queue = self.queue.with_format(format);
        self
    }

    /// Called for every failed value, after the worker decided what to do
    /// with it (see [`Failure::action`]). Runs on the worker's task: keep it
    /// quick.
    pub fn on_error(mut self, hook: impl Fn(&Failure) + Send + Sync + 'static) -> Self {
        self.on_error = Some(Arc::new(hook));
        self
    }

    /// Stops the worker gracefully when `signal` completes (e.g.
    /// `token.cancelled_owned()` of a `tokio_util` `CancellationToken`):
    /// it takes nothing new and lets handlers in flight finish.
    pub fn shutdown_on(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.signals.push(Box::pin(signal));
        self
    }

    /// Stops the worker gracefully on Ctrl-C (SIGINT) or SIGTERM.
    pub fn shutdown_on_signal(self) -> Self {
        self.shutdown_on(terminate_signal())
    }

    /// Starts the worker on the current tokio runtime with `handler`, which
    /// is called with each decoded value. Returns at once.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn run<F, Fut, E>(self, handler: F) -> WorkerHandle
    where
        F: Fn(T) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        self.start(plain_handler(handler))
    }

    /// Starts the worker, as [`run`](Self::run), with a handler that gets
    /// each value's [`JobContext`] (its job id, its cancel, its progress)
    /// and returns the job's result: kept as JSON with the job's history
    /// for as long as it ([`JobHistory::result`](crate::jobs::JobHistory::result)),
    /// read by [`ReliableQueue::wait_job`](crate::ReliableQueue::wait_job),
    /// `delayq job` and the dashboard, announced by a `result` event.
    ///
    /// A value has a job when it was offered with an id on a queue that
    /// keeps job history
    /// ([`ReliableQueue::set_job_history`](crate::ReliableQueue::set_job_history));
    /// for any other value the context has no id, is never cancelled, and
    /// its progress and result are not kept. A result over
    /// [`MAX_RESULT_BYTES`](crate::jobs::MAX_RESULT_BYTES) as JSON, or one
    /// that does not serialize, is not kept (the value is acked, and a
    /// warning logged). A handler that returns an error after its job's
    /// cancel was seen settles the value as cancelled: neither retried nor
    /// dead-lettered.
    ///
    /// ```no_run
    /// use delayq::worker::JobContext;
    ///
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let worker = client.worker("reports", delayq::StringCodec)?.run_job(
    ///     |month: String, job: JobContext| async move {
    ///         tokio::select! {
    ///             rows = build_report(&month) => Ok::<_, delayq::error::BoxError>(serde_json::json!({ "rows": rows? })),
    ///             _ = job.cancelled() => Err("cancelled".into()),
    ///         }
    ///     },
    /// );
    /// # worker.shutdown().await;
    /// # Ok(()) }
    /// # async fn build_report(_: &str) -> Result<u64, delayq::error::BoxError> { Ok(1) }
    /// ```
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn run_job<F, Fut, R, E>(self, handler: F) -> WorkerHandle
    where
        F: Fn(T, JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, E>> + Send + 'static,
        R: serde::Serialize + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        let queue = self.queue.name().to_owned();
        self.start(job_handler(queue, handler))
    }

    /// Starts the worker, as [`run`](Self::run), with a handler of batches:
    /// values are gathered, up to `max` at a time, and the handler is called
    /// once per batch, for consumers that write many values in one go (a
    /// bulk insert, one HTTP call for many events).
    ///
    /// A batch runs once it holds `max` values, or once `wait` has passed
    /// since its first value came: a quiet queue's values wait at most
    /// `wait` for company. The worker's [`concurrency`](Self::concurrency) is
    /// raised to `max` if it is lower (each value of a batch holds a slot);
    /// a concurrency of `k × max` lets `k` batches run at once.
    ///
    /// The handler answers for the whole batch (`Result<(), E>`) or for each
    /// value, in the batch's order (`Vec<Result<(), E>>`; see
    /// [`BatchOutcome`]). Each value keeps what a value of [`run`](Self::run)
    /// has: its lease, extended while the batch waits and runs; its attempt
    /// count, [`RetryPolicy`] and dead letter; [`Permanent`], [`RetryAfter`]
    /// and rejections; [`handler_timeout`](Self::handler_timeout) (which
    /// counts the wait for the batch to fill). A batch's error fails every
    /// value's attempt with a [`BatchError`] whose source is that error. A
    /// batch cut short before the handler answered (its first value's
    /// timeout, a shutdown's abort, a panic) fails each of its values'
    /// attempts: they are retried, never acked unanswered nor lost.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::{Client, StringCodec};
    ///
    /// # async fn demo() -> delayq::Result<()> {
    /// let client = Client::connect("redis://127.0.0.1:6379").await?;
    /// let worker = client
    ///     .worker("events", StringCodec)?
    ///     .run_batch(100, Duration::from_millis(250), |events: Vec<String>| async move {
    ///         insert_all(&events).await // one outcome for the batch
    ///     });
    /// # worker.shutdown().await;
    /// # Ok(()) }
    /// # async fn insert_all(_: &[String]) -> Result<(), std::io::Error> { Ok(()) }
    /// ```
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn run_batch<F, Fut>(mut self, max: usize, wait: Duration, handler: F) -> WorkerHandle
    where
        F: Fn(Vec<T>) -> Fut + Send + Sync + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: BatchOutcome,
    {
        let batcher = Arc::new(batch::Batcher::new(max, wait, handler));
        self.concurrency = self.concurrency.max(max.max(1));
        let handler: Handler<T> = Arc::new(move |value, _| Box::pin(Arc::clone(&batcher).handle(value)));
        self.start(handler)
    }

    /// Starts the worker, as [`run`](Self::run), with a [`tower::Service`]
    /// as the handler, so that tower layers wrap it: a concurrency limit, a
    /// timeout, load shedding, metrics, your own. (Feature `tower`.)
    ///
    /// The service is called with a [`Job`] (the value, its queue and its
    /// attempt) and answers `()`; each value gets a clone of the service,
    /// awaited ready ([`ServiceExt::ready`](tower::ServiceExt::ready)), then
    /// called. Everything of [`run`](Self::run) holds around it:
    ///
    /// - An error from `poll_ready` or from the call (a tower timeout's
    ///   `Elapsed`, load shedding's `Overloaded`, yours) is a failed attempt:
    ///   the value is retried by the [`RetryPolicy`], or dead-lettered; a
    ///   [`Permanent`] anywhere in its source chain dead-letters it at once.
    ///   A refused value is never lost.
    /// - The layers run inside the worker's own
    ///   [`handler_timeout`](Self::handler_timeout) (waiting for readiness
    ///   included), its panic catching, its lease extension and its
    ///   `delayq.handle` span; [`concurrency`](Self::concurrency) still
    ///   bounds how many values are taken at once, and a shutdown's abort
    ///   cancels the service's future like a closure's.
    ///
    /// Layers whose state is shared by clones (tower's `ConcurrencyLimit`:
    /// one semaphore) act across values, and across workers given clones of
    /// one service; one whose state is per instance (tower's `RateLimit`)
    /// sees a single call per clone, so limits nothing here: use
    /// [`rate_limit`](Self::rate_limit). A value waiting for a limit's
    /// permit is taken and leased by this worker meanwhile.
    ///
    /// Two queues feeding one payment provider, at most 4 calls at once
    /// between them, each call cut off after 10 s (a failed attempt,
    /// retried):
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::{Client, JsonCodec};
    /// use delayq::worker::Job;
    /// use tower::ServiceBuilder;
    ///
    /// #[derive(serde::Serialize, serde::Deserialize)]
    /// struct Order { id: String, amount: i64 }
    ///
    /// # async fn demo() -> delayq::Result<()> {
    /// let client = Client::connect("redis://127.0.0.1:6379").await?;
    /// let charge = ServiceBuilder::new()
    ///     .concurrency_limit(4)
    ///     .timeout(Duration::from_secs(10))
    ///     .service_fn(|job: Job<Order>| async move {
    ///         let order = job.into_value();
    ///         charge(&order.id, order.amount).await
    ///     });
    /// let mut workers = Vec::new();
    /// for queue in ["orders", "orders-express"] {
    ///     let worker = client
    ///         .worker(queue, JsonCodec::<Order>::new())?
    ///         .concurrency(4)
    ///         .handler_timeout(Duration::from_secs(60)) // around the layers, the wait for a permit included
    ///         .run_service(charge.clone());
    ///     workers.push(worker);
    /// }
    /// # Ok(()) }
    /// # async fn charge(_: &str, _: i64) -> Result<(), std::io::Error> { Ok(()) }
    /// ```
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    #[cfg(feature = "tower")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub fn run_service<S>(self, service: S) -> WorkerHandle
    where
        S: tower::Service<Job<T>, Response = ()> + Clone + Send + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        let handler = service::handler(self.queue.name(), service);
        self.start(handler)
    }

    fn start(mut self, handler: Handler<T>) -> WorkerHandle {
        let stop = CancellationToken::new();
        watch_signals(std::mem::take(&mut self.signals), &stop);
        let shared = Shared {
            stop,
            abort: CancellationToken::new(),
            slots: Arc::new(tokio::sync::Semaphore::new(self.concurrency)),
            slots_shared: false,
        };
        let queue = self.queue.name().to_owned();
        let counters = Arc::<handle::Counters>::default();
        let task = self.spawn(handler, &shared, Arc::clone(&counters));
        WorkerHandle {
            queue,
            stop: shared.stop,
            abort: shared.abort,
            task,
            counters: Arc::new(parking_lot::Mutex::new(vec![counters])),
        }
    }

    /// Starts the worker's task with what it shares (its own, or a
    /// partitioned worker's: one stop, one abort, one set of handler slots
    /// for every partition), counting in `counters` (its own, each
    /// partition's: its worker record shows them). Its shutdown signals are
    /// the caller's to watch (`watch_signals`).
    pub(crate) fn spawn(
        self,
        handler: Handler<T>,
        shared: &Shared,
        counters: Arc<handle::Counters>,
    ) -> tokio::task::JoinHandle<()> {
        let stop = shared.stop.clone();
        let abort = shared.abort.clone();
        let limiter = self
            .rate_limit
            .map(|limit| rate_limit::Limiter::new(self.queue.core().clone(), self.queue.name(), limit));
        let pace = prefetch::Pace::new(self.concurrency, self.queue.visibility_timeout(), self.prefetch);
        let busy = Arc::new(presence::Busy::default());
        let jobs = Arc::new(job_context::Watch::default());
        let presence = presence::Presence::new(
            self.queue.core().clone(),
            self.queue.shared_keys().clone(),
            self.heartbeat,
            Arc::clone(&counters),
            Arc::clone(&busy),
            presence::Settings {
                concurrency: self.concurrency,
                prefetch: self.prefetch,
                rate_limit: self.rate_limit,
            },
        );
        // Its jobs' attempts name it as the Workers view does: id and host.
        let consumer: Arc<str> = format!("{}@{}", presence.id, crate::connection::host::host_name()).into();
        let context = Arc::new(consume::Context {
            queue: self.queue.with_consumer(consumer),
            handler,
            retry: self.retry,
            handler_timeout: self.handler_timeout,
            on_error: self.on_error,
            counters: Arc::clone(&counters),
            abort: abort.clone(),
            limiter,
            paused: Default::default(),
            pace,
            busy,
            room: Arc::default(),
            jobs: Arc::clone(&jobs),
            shared_slots: shared.slots_shared,
            slot_share: self.slot_share,
            reserve_slots: shared.slots_shared && self.prefetch == 0,
        });
        let core = Arc::clone(context.queue.core());
        let keeping = presence::keep_leases(
            Arc::clone(&context.busy),
            Arc::clone(&core),
            context.queue.shared_keys().clone(),
            context.queue.visibility_timeout(),
        );
        let cancels = jobs.poll_on(Arc::clone(&core), context.queue.shared_keys().clone(), self.cancel_poll);
        let consuming = consume::consume(context, Arc::clone(&shared.slots), stop.clone());
        // The heartbeat runs in the worker's own task: a task aborted, or a
        // runtime dropped, beats no more. The worker leaves as it stops, or
        // as the client's shutdown begins (its connections close after).
        tokio::spawn(async move {
            let beating = async {
                tokio::select! {
                    _ = presence.beat_on() => {}
                    _ = core.shutdown_begun() => presence.leave().await,
                }
                std::future::pending::<()>().await
            };
            tokio::select! {
                biased;
                _ = consuming => {}
                _ = beating => {}
                _ = keeping => {}
                _ = cancels => {}
            }
            if !core.is_shutting_down() {
                presence.leave().await;
            }
        })
    }
}

/// A [`Worker::run`] handler as the worker calls it.
fn plain_handler<T, F, Fut, E>(handler: F) -> Handler<T>
where
    F: Fn(T) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send + 'static,
    E: Into<BoxError> + 'static,
{
    Arc::new(move |value, _| {
        let run = handler(value);
        Box::pin(async move { run.await.map_err(Into::into) })
    })
}

/// A [`Worker::run_job`] handler as the worker calls it: the job's result
/// kept, if the value has a job.
fn job_handler<T, F, Fut, R, E>(queue: String, handler: F) -> Handler<T>
where
    T: Send + 'static,
    F: Fn(T, JobContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, E>> + Send + 'static,
    R: serde::Serialize + Send + 'static,
    E: Into<BoxError> + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |value, _| {
        let (handler, queue) = (Arc::clone(&handler), queue.clone());
        Box::pin(async move {
            let job = JobContext::current().unwrap_or_else(JobContext::detached);
            let result = handler(value, job.clone()).await.map_err(Into::into)?;
            if let Some(id) = job.id() {
                let max = crate::queue::jobs::MAX_RESULT_BYTES;
                match crate::queue::jobs::to_json(&result, "result", max) {
                    Ok(json) => job.set_result(json),
                    Err(error) => tracing::warn!(queue, job = id, %error, "the job's result is not kept"),
                }
            }
            Ok(())
        })
    })
}

/// What a worker's task shares with its handle, and a partitioned
/// worker's partitions with each other.
pub(crate) struct Shared {
    pub stop: CancellationToken,
    pub abort: CancellationToken,
    /// A permit per handler that may run.
    pub slots: Arc<tokio::sync::Semaphore>,
    /// Whether other workers take from `slots` too.
    pub slots_shared: bool,
}

/// Cancels `stop` when any of `signals` completes.
fn watch_signals(signals: Vec<Signal>, stop: &CancellationToken) {
    for signal in signals {
        let stop = stop.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = signal => stop.cancel(),
                _ = stop.cancelled() => {}
            }
        });
    }
}

/// Completes on SIGINT or SIGTERM; never if they cannot be listened for.
async fn terminate_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
        else {
            tracing::warn!("cannot listen for SIGINT/SIGTERM; the worker stops only on shutdown()");
            return std::future::pending().await;
        };
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
