//! A running job's side of cancels, progress and results: the
//! [`JobContext`] a handler reads (task-local, as `Headers::current`), and
//! the worker's watch over the cancels asked for the jobs it runs.
//!
//! A cancel is a field of the queue's job records (`lua/lib/jobs.lua`'s
//! `x:<id>`, set by `lua/cancel_job.lua`). A worker that runs values with
//! job ids reads those of its running jobs in one `HMGET` every
//! [`Worker::cancel_poll`](crate::Worker::cancel_poll): polling, not pub/sub,
//! because a message lost while a connection was down would need the same
//! read to be found again, and a worker running no job sends nothing.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::error::{CommandResult, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

/// How often a worker reads the cancels of the jobs it runs, by default.
pub(super) const DEFAULT_CANCEL_POLL: Duration = Duration::from_millis(500);

/// Job ids a worker's cancel poll reads with one `HMGET`, at most.
const POLL_CHUNK: usize = 1000;

tokio::task_local! {
    static CURRENT: JobContext;
}

/// The job a [`Worker`](crate::Worker) handler runs: its id, whether a
/// cancel was asked for it, and where it reports progress and a result.
///
/// A closure handler of [`Worker::run`](crate::Worker::run) reads it with
/// [`JobContext::current`]; one of [`Worker::run_job`](crate::Worker::run_job)
/// gets it as its second argument. A value has a job when it was offered
/// with an id ([`DelayedQueue::offer_with_id`](crate::DelayedQueue::offer_with_id))
/// on a queue that keeps job history
/// ([`ReliableQueue::set_job_history`](crate::ReliableQueue::set_job_history)).
///
/// ```no_run
/// use delayq::worker::JobContext;
///
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let worker = client.worker("imports", delayq::StringCodec)?.run_job(
///     |file: String, job: JobContext| async move {
///         for part in 0..10u32 {
///             if job.is_cancelled() {
///                 return Err(std::io::Error::other("cancelled").into());
///             }
///             import_part(&file, part).await?;
///             job.progress(&(f64::from(part + 1) / 10.0)).await?;
///         }
///         Ok::<_, delayq::error::BoxError>(serde_json::json!({ "parts": 10 }))
///     },
/// );
/// # worker.shutdown().await;
/// # Ok(()) }
/// # async fn import_part(_: &str, _: u32) -> Result<(), std::io::Error> { Ok(()) }
/// ```
#[derive(Clone)]
pub struct JobContext {
    inner: Arc<Inner>,
}

struct Inner {
    /// The job's id (`None`: a value without one).
    id: Option<Arc<str>>,
    cancel: CancellationToken,
    /// Where progress goes: the queue and the delivery's lease member.
    delivery: Option<(Arc<Core>, Arc<QueueKeys>, Bytes)>,
    /// The result a `run_job` handler returned (JSON), for its ack.
    result: Mutex<Option<Bytes>>,
}

impl std::fmt::Debug for JobContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobContext")
            .field("id", &self.inner.id)
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl JobContext {
    /// The context of a delivery with a job.
    pub(super) fn new(id: &str, core: Arc<Core>, keys: Arc<QueueKeys>, member: Bytes) -> JobContext {
        JobContext {
            inner: Arc::new(Inner {
                id: Some(id.into()),
                cancel: CancellationToken::new(),
                delivery: Some((core, keys, member)),
                result: Mutex::new(None),
            }),
        }
    }

    /// The context of a value without a job: never cancelled, and its
    /// progress and result are not kept.
    pub(super) fn detached() -> JobContext {
        JobContext {
            inner: Arc::new(Inner {
                id: None,
                cancel: CancellationToken::new(),
                delivery: None,
                result: Mutex::new(None),
            }),
        }
    }

    /// The job the calling [`Worker`](crate::Worker) handler runs; `None`
    /// outside a handler's task, in a task the handler spawned (pass it a
    /// clone), and for a value without a job.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let worker = client.worker("imports", delayq::StringCodec)?.run(|file: String| async move {
    ///     if let Some(job) = delayq::worker::JobContext::current() {
    ///         println!("job {:?} imports {file}", job.id());
    ///     }
    ///     Ok::<(), std::io::Error>(())
    /// });
    /// # worker.shutdown().await;
    /// # Ok(()) }
    /// ```
    pub fn current() -> Option<JobContext> {
        CURRENT.try_with(JobContext::clone).ok()
    }

    /// The job's id (`None` for a value offered without one, or on a
    /// queue that keeps no job history).
    pub fn id(&self) -> Option<&str> {
        self.inner.id.as_deref()
    }

    /// Whether a cancel was asked for the job
    /// ([`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job)) and
    /// its worker has seen it.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Completes once a cancel for the job is seen: race it against the
    /// work (`tokio::select!`), then return an error, which settles the
    /// value as cancelled. Never completes for a value without a job.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// The cancel as a [`CancellationToken`], for code that takes one.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }

    /// Reports the job's progress: a number (`0.4`, `40`) or a small JSON
    /// object, at most [`MAX_PROGRESS_BYTES`](crate::jobs::MAX_PROGRESS_BYTES)
    /// as JSON, kept with its history
    /// ([`JobHistory::progress`](crate::jobs::JobHistory::progress)) and
    /// announced by a `progress` event. One script run a call: report as
    /// the work moves, not in a tight loop. `false` when it was not kept
    /// (no job, or its lease has ended).
    pub async fn progress(&self, progress: &impl serde::Serialize) -> Result<bool> {
        let json = crate::queue::jobs::to_json(progress, "progress", crate::queue::jobs::MAX_PROGRESS_BYTES)?;
        match &self.inner.delivery {
            Some((core, keys, member)) => crate::queue::jobs::report_progress(core, keys, member, json).await,
            None => Ok(false),
        }
    }

    /// Sets the result its ack keeps (JSON), as a `run_job` handler's
    /// return value does.
    pub(super) fn set_result(&self, json: Bytes) {
        *self.inner.result.lock() = Some(json);
    }

    /// The result to send with the ack, taken out.
    pub(super) fn take_result(&self) -> Option<Bytes> {
        self.inner.result.lock().take()
    }

    /// Runs a handler's poll with this job at hand ([`JobContext::current`]).
    pub(super) fn poll_scoped<R>(job: Option<&JobContext>, poll: impl FnOnce() -> R) -> R {
        match job {
            Some(job) => CURRENT.sync_scope(job.clone(), poll),
            None => poll(),
        }
    }

    /// A handler's future with this job at hand in every poll.
    pub(super) fn scope<F: Future + Send + 'static>(
        job: Option<JobContext>,
        handling: F,
    ) -> std::pin::Pin<Box<dyn Future<Output = F::Output> + Send>>
    where
        F::Output: Send,
    {
        match job {
            Some(job) => Box::pin(CURRENT.scope(job, handling)),
            None => Box::pin(handling),
        }
    }
}

/// The jobs a worker runs, by delivery, for its cancel poll.
#[derive(Default)]
pub(super) struct Watch {
    running: Mutex<HashMap<[u8; 8], JobContext>>,
    /// Told when the first job starts: the poll sleeps while none runs.
    started: Notify,
}

/// A job's place in the [`Watch`], left when dropped.
pub(super) struct Watched<'a> {
    watch: &'a Watch,
    delivery: [u8; 8],
}

impl Drop for Watched<'_> {
    fn drop(&mut self) {
        self.watch.running.lock().remove(&self.delivery);
    }
}

impl Watch {
    /// Watches `job`'s cancel while its delivery runs.
    pub(super) fn enter(&self, delivery: [u8; 8], job: &JobContext) -> Watched<'_> {
        let first = {
            let mut running = self.running.lock();
            running.insert(delivery, job.clone());
            running.len() == 1
        };
        if first {
            self.started.notify_one();
        }
        Watched { watch: self, delivery }
    }

    /// Reads the cancels of the running jobs every `every` while any run,
    /// and tells their handlers. Runs until the worker's task ends.
    pub(super) async fn poll_on(self: Arc<Self>, core: Arc<Core>, keys: Arc<QueueKeys>, every: Duration) {
        loop {
            if self.running.lock().is_empty() {
                self.started.notified().await;
            }
            tokio::time::sleep(every).await;
            let jobs: Vec<JobContext> = self.running.lock().values().cloned().collect();
            for chunk in jobs.chunks(POLL_CHUNK) {
                if let Err(error) = cancel_asked(&core, &keys, chunk).await {
                    tracing::debug!(queue = keys.destination(), %error, "could not read the cancels of running jobs");
                }
            }
        }
    }
}

/// One `HMGET` of the cancel fields of `jobs`, cancelling those asked.
async fn cancel_asked(core: &Core, keys: &QueueKeys, jobs: &[JobContext]) -> Result<()> {
    let jobs: Vec<&JobContext> = jobs.iter().filter(|j| j.id().is_some() && !j.is_cancelled()).collect();
    if jobs.is_empty() {
        return Ok(());
    }
    let key = keys.jobs();
    let mut args = Vec::with_capacity(jobs.len() + 1);
    args.push(Value::from(key.as_str()));
    args.extend(
        jobs.iter()
            .map(|j| Value::from(format!("x:{}", j.id().unwrap_or_default()))),
    );
    let asked: Vec<Value> = core
        .conn()?
        .custom(CustomCommand::new_static("HMGET", ClusterHash::FirstKey, false), args)
        .await
        .on_key(&key)?;
    for (job, asked) in jobs.iter().zip(asked) {
        if !matches!(asked, Value::Null) {
            tracing::info!(
                queue = keys.destination(),
                job = job.id(),
                "cancel asked: the handler is told"
            );
            job.inner.cancel.cancel();
        }
    }
    Ok(())
}
