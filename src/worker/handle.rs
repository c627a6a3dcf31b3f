//! `WorkerHandle`: stops a running worker and reports what it did.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A running [`Worker`](crate::Worker). Dropping the handle leaves the worker
/// running (until the client shuts down or its shutdown signal fires).
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let worker = client
///     .worker("emails", delayq::StringCodec)?
///     .run(|address: String| async move { send(&address).await });
/// // ... later:
/// let report = worker.shutdown().await;
/// println!("{} sent, {} retried, {} dead-lettered", report.succeeded, report.retried, report.dead_lettered);
/// # Ok(()) }
/// # async fn send(_: &str) -> Result<(), std::io::Error> { Ok(()) }
/// ```
#[derive(Debug)]
pub struct WorkerHandle {
    pub(crate) queue: String,
    pub(crate) stop: CancellationToken,
    pub(crate) abort: CancellationToken,
    pub(crate) task: JoinHandle<()>,
    /// Its counts: one set, or one per partition of a partitioned worker
    /// (each partition's worker record shows its own), added up here.
    pub(crate) counters: Arc<parking_lot::Mutex<Vec<Arc<Counters>>>>,
}

/// What a worker did.
///
/// ```no_run
/// # async fn demo(worker: delayq::worker::WorkerHandle) {
/// let report = worker.report();
/// assert!(report.succeeded + report.retried + report.dead_lettered <= report.handled + report.undecodable);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct WorkerReport {
    /// Handler runs started.
    pub handled: u64,
    /// Values handled and acknowledged.
    pub succeeded: u64,
    /// Failed values scheduled for another attempt.
    pub retried: u64,
    /// Values moved to the dead-letter list (failed last attempt, permanent
    /// error, or undecodable).
    pub dead_lettered: u64,
    /// Values that could not be decoded (dead-lettered at once).
    pub undecodable: u64,
    /// Handler runs that panicked (counted as failures).
    pub panicked: u64,
    /// Handler runs stopped by the handler timeout (counted as failures).
    pub timed_out: u64,
    /// Handler runs that failed (retried, dead-lettered, or left to their
    /// visibility timeout when settling failed), and values that could not
    /// be decoded.
    pub failed: u64,
    /// Jobs whose handler stopped on a cancel and which were settled as
    /// cancelled ([`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job)).
    pub cancelled: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub handled: AtomicU64,
    pub succeeded: AtomicU64,
    pub retried: AtomicU64,
    pub dead_lettered: AtomicU64,
    pub undecodable: AtomicU64,
    pub panicked: AtomicU64,
    pub timed_out: AtomicU64,
    pub failed: AtomicU64,
    pub cancelled: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_many(counter: &AtomicU64, n: usize) {
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// The reports of `all` added up.
    fn sum(all: &[Arc<Counters>]) -> WorkerReport {
        all.iter()
            .map(|c| c.snapshot())
            .fold(WorkerReport::default(), |a, b| WorkerReport {
                handled: a.handled + b.handled,
                succeeded: a.succeeded + b.succeeded,
                retried: a.retried + b.retried,
                dead_lettered: a.dead_lettered + b.dead_lettered,
                undecodable: a.undecodable + b.undecodable,
                panicked: a.panicked + b.panicked,
                timed_out: a.timed_out + b.timed_out,
                failed: a.failed + b.failed,
                cancelled: a.cancelled + b.cancelled,
            })
    }

    pub(super) fn snapshot(&self) -> WorkerReport {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        WorkerReport {
            handled: get(&self.handled),
            succeeded: get(&self.succeeded),
            retried: get(&self.retried),
            dead_lettered: get(&self.dead_lettered),
            undecodable: get(&self.undecodable),
            panicked: get(&self.panicked),
            timed_out: get(&self.timed_out),
            failed: get(&self.failed),
            cancelled: get(&self.cancelled),
        }
    }
}

impl WorkerHandle {
    /// The queue this worker consumes.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// What the worker did so far.
    pub fn report(&self) -> WorkerReport {
        Counters::sum(&self.counters.lock())
    }

    /// Whether the worker has stopped.
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Asks the worker to stop without waiting: it takes nothing new and
    /// finishes the values in hand.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Stops the worker: it takes nothing new, lets every handler in flight
    /// finish and settle, then returns.
    pub async fn shutdown(self) -> WorkerReport {
        self.stop.cancel();
        self.join().await
    }

    /// Like [`shutdown`](Self::shutdown), but handlers still running after
    /// `grace` are cancelled and their values go back to the queue at once
    /// (a later attempt of the same delivery).
    pub async fn shutdown_within(mut self, grace: Duration) -> WorkerReport {
        self.stop.cancel();
        let joined = match tokio::time::timeout(grace, &mut self.task).await {
            Ok(joined) => joined,
            Err(_) => {
                self.abort.cancel();
                (&mut self.task).await
            }
        };
        self.finish(joined)
    }

    /// Waits until the worker stops (its shutdown signal fired, or the
    /// client shut down).
    pub async fn join(mut self) -> WorkerReport {
        let joined = (&mut self.task).await;
        self.finish(joined)
    }

    fn finish(&self, joined: Result<(), tokio::task::JoinError>) -> WorkerReport {
        if let Err(error) = joined
            && error.is_panic()
        {
            tracing::error!(queue = self.queue, "the worker task panicked");
        }
        Counters::sum(&self.counters.lock())
    }
}
