//! `PartitionedWorker`: one worker over every partition of a partitioned
//! queue, with one concurrency budget.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::handle::Counters;
use super::{job_handler, plain_handler, prefetch, watch_signals, Failure, Handler, JobContext, RetryPolicy, Shared};
use super::{Signal, Worker, WorkerHandle};
use crate::error::{BoxError, Result};
use crate::queue::partitioned::PartitionedQueue;
use crate::queue::partitioned::REFRESH;
use crate::wire::format::Format;
use parking_lot::Mutex;
use std::collections::HashMap;
use tokio::time::Instant;

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
    queue: PartitionedQueue<T>,
    /// The settings given, applied to each partition's worker as it starts.
    setups: Vec<Setup<T>>,
    concurrency: usize,
    prefetch: usize,
    signals: Vec<Signal>,
}

/// Longest a re-partition's new partitions wait for the retired ones' ready
/// values to be taken before their workers start anyway.
const NEW_AFTER: Duration = Duration::from_secs(30);

/// A setting of every partition's worker.
type Setup<T> = Arc<dyn Fn(Worker<T>) -> Worker<T> + Send + Sync>;

impl<T: 'static> std::fmt::Debug for PartitionedWorker<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionedWorker")
            .field("queue", &self.queue.name())
            .field("partitions", &self.queue.count())
            .field("concurrency", &self.concurrency)
            .field("prefetch", &self.prefetch)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> PartitionedWorker<T> {
    pub(crate) fn new(queue: &PartitionedQueue<T>) -> Result<Self> {
        Ok(PartitionedWorker {
            queue: queue.clone(),
            setups: Vec::new(),
            concurrency: 1,
            prefetch: prefetch::MOST,
            signals: Vec::new(),
        })
    }

    fn each(mut self, f: impl Fn(Worker<T>) -> Worker<T> + Send + Sync + 'static) -> Self {
        self.setups.push(Arc::new(f));
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
        self.each(move |w| w.retry(policy.clone()))
    }

    /// How long a value stays reserved without news (see
    /// [`Worker::visibility_timeout`]).
    pub fn visibility_timeout(self, timeout: Duration) -> Self {
        self.each(move |w| w.visibility_timeout(timeout))
    }

    /// Fails a handler run that takes longer than this (see
    /// [`Worker::handler_timeout`]).
    pub fn handler_timeout(self, timeout: Duration) -> Self {
        self.each(move |w| w.handler_timeout(timeout))
    }

    /// Element format of retries (see [`Worker::retry_format`]).
    pub fn retry_format(self, format: Format) -> Self {
        self.each(move |w| w.retry_format(format))
    }

    /// How often each partition's worker says it is alive (see
    /// [`Worker::heartbeat`]).
    pub fn heartbeat(self, every: Duration) -> Self {
        self.each(move |w| w.heartbeat(every))
    }

    /// Called for every failed value (see [`Worker::on_error`]);
    /// [`Failure::queue`] names the partition.
    pub fn on_error(self, hook: impl Fn(&Failure) + Send + Sync + 'static) -> Self {
        let hook = Arc::new(hook);
        self.each(move |w| {
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
        let queue = self.queue.name().to_owned();
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
        let counters: Arc<Mutex<Vec<Arc<Counters>>>> = Arc::default();
        let name = self.queue.name().to_owned();
        let partitions = Partitions {
            queue: self.queue,
            setups: self.setups,
            concurrency: self.concurrency,
            prefetch: self.prefetch,
            handler,
            shared: Shared {
                stop: shared.stop.clone(),
                abort: shared.abort.clone(),
                slots: Arc::clone(&shared.slots),
                slots_shared: true,
            },
            counters: Arc::clone(&counters),
            running: HashMap::new(),
        };
        let task = tokio::spawn(partitions.run());
        WorkerHandle {
            queue: name,
            stop: shared.stop,
            abort: shared.abort,
            task,
            counters,
        }
    }
}

/// A partitioned worker's running partitions, and what starts another.
struct Partitions<T> {
    queue: PartitionedQueue<T>,
    setups: Vec<Setup<T>>,
    concurrency: usize,
    prefetch: usize,
    handler: Handler<T>,
    shared: Shared,
    counters: Arc<Mutex<Vec<Arc<Counters>>>>,
    /// Each running partition's worker: its stop and its task.
    running: HashMap<String, (CancellationToken, tokio::task::JoinHandle<()>)>,
}

impl<T: Send + 'static> Partitions<T> {
    /// Runs a worker for every partition of the layout, retired ones
    /// included, reading the layout again every [`REFRESH`]: a
    /// re-partition's new partitions get a worker once the retired ones
    /// have no value ready or in flight (or after [`NEW_AFTER`]), so a key's earlier
    /// values are taken before its later ones, and a partition retired for
    /// good has its worker stopped (it lets its handlers finish). At the
    /// stop, every worker stops and is awaited.
    async fn run(mut self) {
        let stop = self.shared.stop.clone();
        // The generation last seen, and since when.
        let mut seen: Option<(u32, Instant)> = None;
        loop {
            let parts = self.queue.parts_now();
            let layout = parts.layout().clone();
            let since = match seen {
                Some((generation, at)) if generation == layout.generation() => at,
                _ => seen.insert((layout.generation(), Instant::now())).1,
            };
            // A re-partition's new partitions wait while the retired ones
            // have values ready or in flight (a key's earlier values are
            // there: claimed ahead, they would wait for the slot a new
            // partition's value took), for NEW_AFTER at most (a paused
            // retired partition must not hold the new ones for ever).
            // And for RETIRE_GRACE at least: producers' handles still on
            // the old layout (each reads it again within REFRESH) may add
            // to the retired partitions until then.
            let hold_new = !layout.retired().is_empty()
                && since.elapsed() < NEW_AFTER
                && (since.elapsed() < crate::RETIRE_GRACE || !matches!(parts.retired_unfinished().await, Ok(0)));
            let wanted: Vec<String> = layout.names().iter().chain(layout.retired()).cloned().collect();
            for name in layout
                .retired()
                .iter()
                .chain(layout.names().iter().filter(|_| !hold_new))
            {
                if !self.running.contains_key(name) {
                    self.start(name);
                }
            }
            let gone: Vec<String> = self.running.keys().filter(|n| !wanted.contains(n)).cloned().collect();
            for name in gone {
                if let Some((stop, task)) = self.running.remove(&name) {
                    stop.cancel();
                    self.await_partition(&name, task).await;
                }
            }
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(REFRESH) => {}
            }
            if let Err(error) = self.queue.refresh().await {
                tracing::debug!(queue = self.queue.name(), %error, "could not read the partitioned queue's layout again");
            }
        }
        for (name, (_, task)) in std::mem::take(&mut self.running) {
            self.await_partition(&name, task).await;
        }
    }

    fn start(&mut self, name: &str) {
        let reliable = match self.queue.reliable_partition(name) {
            Ok(reliable) => reliable,
            Err(error) => {
                tracing::error!(queue = self.queue.name(), partition = name, %error, "cannot run a worker on this partition");
                return;
            }
        };
        let mut worker = (self.setups.iter()).fold(Worker::new(reliable), |worker, setup| setup(worker));
        worker.concurrency = self.concurrency;
        worker.prefetch = self.prefetch.div_ceil(self.queue.count().max(1));
        worker.slot_share = self.concurrency.div_ceil(self.queue.count().max(1));
        let counters = Arc::<Counters>::default();
        self.counters.lock().push(Arc::clone(&counters));
        // Its own stop, under the whole worker's: a partition retired for
        // good stops alone.
        let stop = self.shared.stop.child_token();
        let shared = Shared {
            stop: stop.clone(),
            abort: self.shared.abort.clone(),
            slots: Arc::clone(&self.shared.slots),
            slots_shared: true,
        };
        let task = worker.spawn(Arc::clone(&self.handler), &shared, counters);
        self.running.insert(name.to_owned(), (stop, task));
    }

    async fn await_partition(&self, name: &str, task: tokio::task::JoinHandle<()>) {
        if let Err(error) = task.await
            && error.is_panic()
        {
            tracing::error!(
                queue = self.queue.name(),
                partition = name,
                "a partition's worker task panicked"
            );
        }
    }
}
