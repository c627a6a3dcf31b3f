//! `PartitionedWorker`: one worker over every partition of a partitioned
//! queue, with one concurrency budget.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{job_handler, plain_handler, prefetch, watch_signals, Failure, Handler, JobContext, RetryPolicy, Shared};
use super::{Signal, Worker, WorkerHandle};
use crate::error::{BoxError, Result};
use crate::queue::partitioned::PartitionedQueue;
use crate::wire::format::Format;

/// A [`Worker`] over every partition of a [`PartitionedQueue`], with one
/// concurrency budget shared by all of them. Made by
/// [`Client::partitioned_worker`](crate::Client::partitioned_worker);
/// configured as a `Worker` is, then run.
///
/// # Implementation
///
/// One worker loop per partition (each claims from its partition's
/// [`ReliableQueue`](crate::ReliableQueue), acks, retries through its
/// partition's delayed queue, dead-letters to its partition's dead-letter
/// list, beats in its partition's worker records, and runs its partition's
/// transfer), all taking their handler slots from one pool of
/// [`concurrency`](Self::concurrency) permits, and stopped, reported and
/// shut down together through one [`WorkerHandle`]. An idle partition
/// waits for a value *before* it takes a slot, so an empty partition never
/// holds one from the others; a busy partition takes the free slots it
/// claims for before the claim (and gives back what the claim did not
/// fill), so `prefetch(0)` holds no value ahead; values claimed ahead
/// ([`prefetch`](Self::prefetch)) wait in its buffer for a slot (or go back
/// to its partition's head, uncounted, after a quarter of the visibility
/// timeout). Each partition's worker record (`delayq workers` on the
/// partition's name, the dashboard) counts that partition's values, and
/// shows the whole worker's concurrency: the budget it shares.
///
/// Cost: while idle, one blocking read per partition (each on a dedicated
/// connection): N partitions hold N connections per worker. Rate limits and
/// batch handlers are not offered here.
///
/// Order: a partition's values are claimed in order; with a
/// [`concurrency`](Self::concurrency) above 1 they run side by side, so
/// per-key order is the order values are taken. With a concurrency of 1
/// every value, and so every key's, is handled one at a time in that order.
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::worker::RetryPolicy;
///
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let orders = client.partitioned_queue("orders", delayq::StringCodec).await?;
/// let worker = client
///     .partitioned_worker(&orders)?
///     .concurrency(16) // across all partitions
///     .retry(RetryPolicy::exponential(Duration::from_secs(1), Duration::from_secs(60)))
///     .run(|order: String| async move { Ok::<_, std::io::Error>(println!("{order}")) });
/// let report = worker.shutdown().await;
/// println!("{} handled", report.succeeded);
/// # Ok(()) }
/// ```
pub struct PartitionedWorker<T> {
    queue: String,
    workers: Vec<Worker<T>>,
    concurrency: usize,
    prefetch: usize,
    signals: Vec<Signal>,
}

impl<T> std::fmt::Debug for PartitionedWorker<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionedWorker")
            .field("queue", &self.queue)
            .field("partitions", &self.workers.len())
            .field("concurrency", &self.concurrency)
            .field("prefetch", &self.prefetch)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> PartitionedWorker<T> {
    pub(crate) fn new(queue: &PartitionedQueue<T>) -> Result<Self> {
        let workers = queue.reliable_partitions()?.into_iter().map(Worker::new).collect();
        Ok(PartitionedWorker {
            queue: queue.name().to_owned(),
            workers,
            concurrency: 1,
            prefetch: prefetch::MOST,
            signals: Vec::new(),
        })
    }

    fn each(mut self, f: impl Fn(Worker<T>) -> Worker<T>) -> Self {
        self.workers = self.workers.into_iter().map(f).collect();
        self
    }

    /// Handlers run at once at most, across all partitions (default 1).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// Values claimed ahead of free slots at most, across all partitions
    /// (default 256; split evenly, rounded up; see [`Worker::prefetch`]).
    pub fn prefetch(mut self, n: usize) -> Self {
        self.prefetch = n;
        self
    }

    /// Attempts per value and the delay between them (see [`Worker::retry`]).
    pub fn retry(self, policy: RetryPolicy) -> Self {
        self.each(|w| w.retry(policy.clone()))
    }

    /// How long a value stays reserved without news (see
    /// [`Worker::visibility_timeout`]).
    pub fn visibility_timeout(self, timeout: Duration) -> Self {
        self.each(|w| w.visibility_timeout(timeout))
    }

    /// Fails a handler run that takes longer than this (see
    /// [`Worker::handler_timeout`]).
    pub fn handler_timeout(self, timeout: Duration) -> Self {
        self.each(|w| w.handler_timeout(timeout))
    }

    /// Element format of retries (see [`Worker::retry_format`]).
    pub fn retry_format(self, format: Format) -> Self {
        self.each(|w| w.retry_format(format))
    }

    /// How often each partition's worker says it is alive (see
    /// [`Worker::heartbeat`]).
    pub fn heartbeat(self, every: Duration) -> Self {
        self.each(|w| w.heartbeat(every))
    }

    /// Called for every failed value (see [`Worker::on_error`]);
    /// [`Failure::queue`] names the partition.
    pub fn on_error(self, hook: impl Fn(&Failure) + Send + Sync + 'static) -> Self {
        let hook = Arc::new(hook);
        self.each(|w| {
            let hook = Arc::clone(&hook);
            w.on_error(move |failure| hook(failure))
        })
    }

    /// Stops every partition gracefully when `signal` completes (see
    /// [`Worker::shutdown_on`]).
    pub fn shutdown_on(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.signals.push(Box::pin(signal));
        self
    }

    /// Stops gracefully on Ctrl-C (SIGINT) or SIGTERM.
    pub fn shutdown_on_signal(self) -> Self {
        self.shutdown_on(super::terminate_signal())
    }

    /// Starts the worker with `handler` (see [`Worker::run`]); the handle's
    /// [`queue`](WorkerHandle::queue) is the logical queue's name, its
    /// report the sum over the partitions.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn run<F, Fut, E>(self, handler: F) -> WorkerHandle
    where
        F: Fn(T) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<(), E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        self.start(plain_handler(handler))
    }

    /// Starts the worker with a handler that gets each value's
    /// [`JobContext`] and returns the job's result (see [`Worker::run_job`]).
    ///
    /// ```no_run
    /// use delayq::worker::JobContext;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let reports = client.partitioned_queue("reports", delayq::StringCodec).await?;
    /// let worker = client.partitioned_worker(&reports)?.run_job(|month: String, _job: JobContext| async move {
    ///     Ok::<_, delayq::error::BoxError>(serde_json::json!({ "month": month }))
    /// });
    /// # worker.shutdown().await;
    /// # Ok(()) }
    /// ```
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn run_job<F, Fut, R, E>(self, handler: F) -> WorkerHandle
    where
        F: Fn(T, JobContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = std::result::Result<R, E>> + Send + 'static,
        R: serde::Serialize + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        let queue = self.queue.clone();
        self.start(job_handler(queue, handler))
    }

    fn start(self, handler: Handler<T>) -> WorkerHandle {
        let stop = CancellationToken::new();
        watch_signals(self.signals, &stop);
        let shared = Shared {
            stop,
            abort: CancellationToken::new(),
            slots: Arc::new(tokio::sync::Semaphore::new(self.concurrency)),
            slots_shared: true,
        };
        let prefetch = self.prefetch.div_ceil(self.workers.len().max(1));
        let mut counters = Vec::new();
        let tasks: Vec<_> = (self.workers.into_iter())
            .map(|mut worker| {
                worker.concurrency = self.concurrency;
                worker.prefetch = prefetch;
                let partition = Arc::<super::handle::Counters>::default();
                counters.push(Arc::clone(&partition));
                worker.spawn(Arc::clone(&handler), &shared, partition)
            })
            .collect();
        let queue = self.queue;
        let name = queue.clone();
        let task = tokio::spawn(async move {
            for task in tasks {
                if let Err(error) = task.await
                    && error.is_panic()
                {
                    tracing::error!(queue = name, "a partition's worker task panicked");
                }
            }
        });
        WorkerHandle {
            queue,
            stop: shared.stop,
            abort: shared.abort,
            task,
            counters,
        }
    }
}
