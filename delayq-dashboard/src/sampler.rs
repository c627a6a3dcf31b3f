//! Finds every queue (`SCAN`, incrementally) and samples each one's counts
//! every interval: the overview's cache, the history charts, the gauges.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;

use delayq::fred::interfaces::KeysInterface;
use delayq::worker::WorkerInfo;
use delayq::{BytesCodec, Client, DelayedQueue, QueueKeys, QueueStatus};

use super::{history, Shared};

/// Minutes of history kept per queue.
const HISTORY_MINUTES: usize = 60;
/// Queues sampled at once.
const CONCURRENCY: usize = 32;

/// The sampler's picture of the server.
#[derive(Default)]
pub(crate) struct Queues {
    /// Every queue known, by name.
    pub entries: BTreeMap<String, Entry>,
    /// Whether one full discovery pass has finished.
    pub discovered: bool,
    /// Finished sampling cycles.
    pub cycles: u64,
    /// How long the last full cycle took (discovery and every status).
    pub last_cycle: Option<Duration>,
    /// The last error of a cycle, if the last cycle failed.
    pub error: Option<String>,
    /// When the last full cycle began: how old the numbers are.
    pub sampled_at: Option<SystemTime>,
}

/// One queue's latest sample and history.
#[derive(Default)]
pub(crate) struct Entry {
    pub status: Option<QueueStatus>,
    pub error: Option<String>,
    pub sampled_at: Option<SystemTime>,
    previous: Option<Previous>,
    pub history: VecDeque<Minute>,
    /// Whether the history kept in Redis was read into `history`.
    loaded: bool,
    /// `None` while the queue has no schedule; else how many processes
    /// running its schedules are alive (their heartbeats).
    pub runners: Option<usize>,
    /// Its workers, as their heartbeats last described them.
    pub workers: Vec<WorkerInfo>,
    /// Ready values nobody takes: see [`untaken`].
    pub untaken: bool,
}

/// Whether a queue's ready values are left untaken between the last two
/// samples ([`delayq::attention::untaken`], the rule `delayq list` applies
/// too); `delivered` is estimated from the counts.
pub(crate) fn untaken(status: &QueueStatus, previous_ready: u64, delivered: u64, workers: &[WorkerInfo]) -> bool {
    delayq::attention::untaken(status, previous_ready, delivered, WorkerCounts::of(workers).alive)
}

/// What the overview and the gauges say of a queue's workers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WorkerCounts {
    /// Workers beating.
    pub alive: usize,
    /// Workers that missed their last beats (died, hang, or lost Redis).
    pub silent: usize,
    /// Handlers running, of the live workers.
    pub busy: usize,
    /// Handler slots (concurrency), of the live workers.
    pub slots: usize,
}

impl WorkerCounts {
    pub(crate) fn of(workers: &[WorkerInfo]) -> WorkerCounts {
        let mut counts = WorkerCounts::default();
        for worker in workers {
            if worker.silent {
                counts.silent += 1;
            } else {
                counts.alive += 1;
                counts.busy += worker.busy;
                counts.slots += worker.concurrency;
            }
        }
        counts
    }
}

/// What the estimates of the next sample start from.
#[derive(Clone, Copy)]
struct Previous {
    /// The time up to which `due_by_bound` counted.
    bound: SystemTime,
    /// Pending elements due by `bound`, counted at the previous sample.
    due_by_bound: u64,
    ready: u64,
    dead_letters: u64,
}

/// One minute of a queue's history, estimated from samples.
#[derive(Debug, Clone, Default)]
pub(crate) struct Minute {
    /// Minutes since the Unix epoch.
    pub minute: i64,
    /// Elements that left the pending set by falling due (any transferrer).
    pub transferred: u64,
    /// Values that left the destination list (any consumer).
    pub delivered: u64,
    /// Values added to the dead-letter list.
    pub dead_lettered: u64,
    /// Transfer lag samples, ms (how overdue the head was).
    pub lag_ms: Vec<u64>,
    /// p50 and p99 of a minute read back from Redis (its samples are not kept).
    stored_lag: Option<[Option<u64>; 2]>,
}

impl Minute {
    /// The median transfer lag of the minute, ms.
    pub(crate) fn lag_p50(&self) -> Option<u64> {
        match self.stored_lag {
            Some([p50, _]) => p50,
            None => self.lag_quantile(0.5),
        }
    }

    /// The 99th percentile of the minute's transfer lag, ms.
    pub(crate) fn lag_p99(&self) -> Option<u64> {
        match self.stored_lag {
            Some([_, p99]) => p99,
            None => self.lag_quantile(0.99),
        }
    }

    fn from_stored(stored: history::Stored) -> Minute {
        Minute {
            minute: stored.minute,
            transferred: stored.transferred,
            delivered: stored.delivered,
            dead_lettered: stored.dead_lettered,
            lag_ms: Vec::new(),
            stored_lag: Some([stored.lag_p50_ms, stored.lag_p99_ms]),
        }
    }

    /// The `q`-quantile of the lag samples (nearest rank), ms.
    pub(crate) fn lag_quantile(&self, q: f64) -> Option<u64> {
        if self.lag_ms.is_empty() {
            return None;
        }
        let mut sorted = self.lag_ms.clone();
        sorted.sort_unstable();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        Some(sorted[rank - 1])
    }
}

/// Starts the sampling task; it ends when the dashboard is dropped.
pub(crate) fn start(shared: &Arc<Shared>) {
    super::periodic::every(shared, shared.sample_interval, |shared, _| async move {
        // Nothing is asked of a Redis the probe finds down (fred would
        // queue it), and a cycle stops when Redis goes away under it.
        if let Err(super::health::Unavailable::Down(health)) =
            super::health::guarded(&shared, None, cycle(&shared)).await
        {
            shared.queues.write().error = Some(format!("Redis is unreachable: {}", health.error.unwrap_or_default()));
        }
    });
}

/// One full pass: discovery, then every queue's counts.
async fn cycle(shared: &Shared) {
    let started = Instant::now();
    let started_at = SystemTime::now();
    let found: BTreeSet<String> = match shared.client.queues().await {
        Ok(found) => found.into_iter().collect(),
        Err(error) => {
            shared.queues.write().error = Some(format!("discovery failed: {error}"));
            return;
        }
    };
    // Queues found now, and known ones that still have any key (a queue
    // whose pending set emptied has no timeout set, but may have ready
    // values or dead letters).
    let names: Vec<(String, Option<SystemTime>, bool)> = {
        let mut queues = shared.queues.write();
        for name in &found {
            queues.entries.entry(name.clone()).or_default();
        }
        queues
            .entries
            .retain(|name, entry| found.contains(name) || entry.status.is_none_or(|s| s.exists));
        queues
            .entries
            .iter()
            .map(|(name, entry)| (name.clone(), entry.previous.map(|p| p.bound), !entry.loaded))
            .collect()
    };
    let interval = shared.sample_interval;
    let mut samples = futures_util::stream::iter(names)
        .map(|(name, bound, load)| async move {
            let sample = sample(&shared.client, &name, bound, interval, load).await;
            (name, sample)
        })
        .buffer_unordered(CONCURRENCY);
    let mut finished = Vec::new();
    while let Some((name, sample)) = samples.next().await {
        let mut queues = shared.queues.write();
        let Some(entry) = queues.entries.get_mut(&name) else {
            continue;
        };
        if let Some(minute) = record(entry, sample) {
            finished.push((name, minute));
        }
    }
    drop(samples);
    // Each finished minute once into Redis, for a dashboard started later.
    let mut stores = futures_util::stream::iter(finished)
        .map(|(name, minute)| async move {
            if let Err(error) = history::store(&shared.client, &name, &minute).await {
                tracing::debug!(queue = %name, %error, "could not keep a minute of history in Redis");
            }
        })
        .buffer_unordered(CONCURRENCY);
    while stores.next().await.is_some() {}
    drop(stores);
    let mut queues = shared.queues.write();
    queues.discovered = true;
    queues.cycles += 1;
    queues.last_cycle = Some(started.elapsed());
    queues.sampled_at = Some(started_at);
    queues.error = None;
}

/// A read-only handle: turned off as it is made, it never registers the
/// queue with the client's transfer scheduler.
pub(crate) fn view(client: &Client, name: &str) -> delayq::Result<DelayedQueue<bytes::Bytes>> {
    Ok(client.delayed_queue(name, BytesCodec)?.without_transfer())
}

/// What one sample read.
struct Sample {
    at: SystemTime,
    status: QueueStatus,
    /// `(previous bound, due by it now)` and `(next bound, due by it now)`.
    due_by: Option<[(SystemTime, u64); 2]>,
    /// Runners alive, if the queue has schedules.
    runners: Option<usize>,
    /// Its workers' heartbeats.
    workers: Vec<WorkerInfo>,
    /// The minutes kept in Redis, on the queue's first sample.
    loaded: Option<Vec<history::Stored>>,
}

async fn sample(
    client: &Client,
    name: &str,
    bound: Option<SystemTime>,
    interval: Duration,
    load: bool,
) -> delayq::Result<Sample> {
    let queue = view(client, name)?;
    let at = SystemTime::now();
    let status = queue.status().await?;
    let previous = bound.unwrap_or(at);
    let next = at + interval;
    let counts = queue.count_due_by(&[previous, next]).await?;
    // The schedules' key first (one EXISTS): runners are read only for a
    // queue that has schedules.
    let keys = QueueKeys::new(name)?;
    let has_schedules: bool = client.redis().next().exists(keys.schedules()).await?;
    let runners = if has_schedules {
        Some(client.schedules(&delayq::QueueKeys::new(name)?)?.runners().await?.len())
    } else {
        None
    };
    let workers = client.workers(&keys).await?;
    let loaded = if load {
        let this_minute = super::epoch_ms(at).div_euclid(60_000);
        // Without it the charts start empty, as before a restart: no reason
        // to fail the sample.
        let loaded = history::load(client, name, this_minute, HISTORY_MINUTES).await;
        Some(loaded.unwrap_or_else(|error| {
            tracing::debug!(queue = %name, %error, "could not read the history kept in Redis");
            Vec::new()
        }))
    } else {
        None
    };
    Ok(Sample {
        at,
        status,
        due_by: Some([(previous, counts[0]), (next, counts[1])]),
        runners,
        workers,
        loaded,
    })
}

/// Folds a sample into the entry: latest status, estimates. Returns the
/// minute the sample ended, to keep in Redis.
fn record(entry: &mut Entry, sample: delayq::Result<Sample>) -> Option<history::Stored> {
    let sample = match sample {
        Ok(sample) => sample,
        Err(error) => {
            entry.error = Some(error.to_string());
            return None;
        }
    };
    if let Some(loaded) = sample.loaded {
        entry.loaded = true;
        // Read before this dashboard's first minute: older than any it has.
        let first = entry.history.front().map_or(i64::MAX, |m| m.minute);
        for stored in loaded.into_iter().rev().filter(|s| s.minute < first) {
            entry.history.push_front(Minute::from_stored(stored));
        }
        while entry.history.len() > HISTORY_MINUTES {
            entry.history.pop_front();
        }
    }
    entry.runners = sample.runners;
    entry.workers = sample.workers;
    let status = sample.status;
    let minute = super::epoch_ms(sample.at).div_euclid(60_000);
    let mut finished = None;
    if entry.history.back().is_none_or(|m| m.minute != minute) {
        // The minute that just ended, unless it was read from Redis.
        finished = entry
            .history
            .back()
            .filter(|m| m.stored_lag.is_none())
            .map(history::Stored::of);
        entry.history.push_back(Minute {
            minute,
            ..Minute::default()
        });
        while entry.history.len() > HISTORY_MINUTES {
            entry.history.pop_front();
        }
    }
    let lag = status.lag_at(sample.at).as_millis() as u64;
    let current = entry.history.back_mut().expect("pushed above");
    current.lag_ms.push(lag);
    if let (Some(previous), Some([(_, due_by_previous_bound), next])) = (entry.previous, sample.due_by) {
        // Elements due by the previous bound that are gone from the
        // pending set: moved by a transfer (or removed by an operator).
        let transferred = previous.due_by_bound.saturating_sub(due_by_previous_bound);
        current.transferred += transferred;
        let delivered = (previous.ready + transferred).saturating_sub(status.ready);
        current.delivered += delivered;
        entry.untaken = untaken(&status, previous.ready, delivered, &entry.workers);
        current.dead_lettered += status.dead_letters.saturating_sub(previous.dead_letters);
        entry.previous = Some(Previous {
            bound: next.0,
            due_by_bound: next.1,
            ready: status.ready,
            dead_letters: status.dead_letters,
        });
    } else if let Some([_, next]) = sample.due_by {
        entry.untaken = false;
        entry.previous = Some(Previous {
            bound: next.0,
            due_by_bound: next.1,
            ready: status.ready,
            dead_letters: status.dead_letters,
        });
    }
    entry.status = Some(status);
    entry.error = None;
    entry.sampled_at = Some(sample.at);
    finished
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_values_are_untaken_only_while_none_leave_and_the_queue_runs() {
        let mut status = QueueStatus::default();
        status.ready = 3;
        assert!(untaken(&status, 3, 0, &[]));
        assert!(!untaken(&status, 3, 1, &[]), "one left the ready list: someone takes");
        assert!(!untaken(&status, 0, 0, &[]), "none ready at the last sample");
        status.paused = true;
        assert!(!untaken(&status, 3, 0, &[]), "a pause holds consumers on purpose");
        status.paused = false;
        status.ready = 0;
        assert!(!untaken(&status, 3, 0, &[]));
    }
}
