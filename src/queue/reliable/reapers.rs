//! One reaper per reliable queue per client, shared by every handle of the
//! queue made from that client (clones, `with_visibility_timeout` copies,
//! workers).
//!
//! A handle holds a [`ReaperLease`] naming its visibility timeout and how
//! long its count records live. The queue's reaper runs while any lease
//! lives: it reaps every quarter of the shortest visibility timeout of the
//! live leases (between 50 ms and 5 s), with that timeout as the grace of
//! values moved but never claimed. It stops when the last lease drops, or at
//! the client's shutdown.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::connection::request::Lane;
use crate::error::Error;
use crate::queue::per_queue::PerQueue;
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

/// The reapers of one client, by queue name.
#[derive(Default)]
pub(crate) struct Reapers {
    queues: PerQueue<Reaper>,
}

/// What the live leases of one queue ask of its reaper.
#[derive(Default)]
struct Wanted {
    /// (visibility timeout, count record lifetime) of each live lease.
    leases: Mutex<Vec<(Duration, Duration)>>,
    changed: Notify,
    /// An ack of this client completed a batch: read the outbox now.
    completed: Notify,
}

impl Wanted {
    /// The shortest visibility timeout and the longest record lifetime.
    fn get(&self) -> Option<(Duration, Duration)> {
        let leases = self.leases.lock();
        let grace = leases.iter().map(|l| l.0).min()?;
        let memory = leases.iter().map(|l| l.1).max()?;
        Some((grace, memory))
    }
}

/// A queue's running reaper.
pub(crate) struct Reaper {
    wanted: Arc<Wanted>,
    task: JoinHandle<()>,
}

impl Drop for Reaper {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Keeps a queue's reaper running, for one handle (and its clones).
pub(crate) struct ReaperLease {
    reaper: Arc<Reaper>,
    wants: (Duration, Duration),
}

impl Drop for ReaperLease {
    fn drop(&mut self) {
        let mut leases = self.reaper.wanted.leases.lock();
        if let Some(at) = leases.iter().position(|l| *l == self.wants) {
            leases.swap_remove(at);
        }
        drop(leases);
        self.reaper.wanted.changed.notify_one();
    }
}

impl Reapers {
    /// An ack of this client completed a batch of `queue`: its reaper reads
    /// the outbox now, not at its next once-a-second look.
    pub(crate) fn batch_completed(&self, queue: &str) {
        if let Some(reaper) = self.queues.get(queue) {
            reaper.wanted.completed.notify_one();
        }
    }

    /// A lease on the reaper of `keys`' queue, started if none runs.
    pub(super) fn lease(
        &self,
        core: &Arc<Core>,
        keys: &Arc<QueueKeys>,
        visibility: Duration,
        count_memory: Duration,
    ) -> ReaperLease {
        let wants = (visibility, count_memory);
        let reaper = self.queues.get_or_start(keys.destination(), || {
            let wanted = Arc::new(Wanted::default());
            let task = tokio::spawn(run(core.clone(), keys.clone(), wanted.clone()));
            Arc::new(Reaper { wanted, task })
        });
        reaper.wanted.leases.lock().push(wants);
        reaper.wanted.changed.notify_one();
        ReaperLease { reaper, wants }
    }
}

/// How often a reaper looks for complete batches to deliver, besides when
/// an ack of its client completed one.
const OUTBOX_EVERY: Duration = Duration::from_secs(1);

async fn run(core: Arc<Core>, keys: Arc<QueueKeys>, wanted: Arc<Wanted>) {
    let mut last = tokio::time::Instant::now();
    let mut outbox_last = last;
    // Its calls run one at a time: one lane (a resent call answers what it returned).
    let lane = Lane::new();
    loop {
        let Some((grace, memory)) = wanted.get() else {
            // No lease yet (the first is being added) or none left (the
            // reaper is being dropped): wait for a change.
            tokio::select! {
                _ = wanted.changed.notified() => continue,
                _ = core.shutdown_begun() => return,
            }
        };
        let every = (grace / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
        // The batch outbox is looked at once a second, between reaps too:
        // a completion waits at most about a second, not a reap period.
        let wake = (last + every).min(outbox_last + OUTBOX_EVERY);
        let mut completed = false;
        tokio::select! {
            _ = tokio::time::sleep_until(wake) => {}
            // A lease came or went: its timeout may change the interval.
            _ = wanted.changed.notified() => continue,
            _ = wanted.completed.notified() => completed = true,
            _ = core.shutdown_begun() => return,
        }
        let now = tokio::time::Instant::now();
        if now >= last + every {
            last = now;
            match crate::queue::reliable::reap(&core, &keys, &lane, grace, memory).await {
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
        // Complete batches' completions (one ZRANGE a second when none wait).
        if completed || now >= outbox_last + OUTBOX_EVERY {
            outbox_last = now;
            match super::batch_outbox::deliver(&core, &keys).await {
                Ok(_) => {}
                Err(Error::Shutdown) => return,
                Err(error) => tracing::warn!(queue = keys.destination(), %error, "could not read the batch outbox"),
            }
        }
    }
}
