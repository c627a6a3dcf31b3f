//! Finds every queue (`SCAN`, incrementally) and samples each one's counts
//! every interval: the overview's cache, the history charts, the gauges.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;

use delayq::fred::interfaces::ClientLike;
use delayq::fred::interfaces::KeysInterface;
use delayq::fred::types::{ClusterHash, CustomCommand, Value};
use delayq::worker::WorkerInfo;
use delayq::{BytesCodec, Client, DelayedQueue, PartitionLayout, QueueKeys, QueueStatus, QueueTotals};

use super::{history, Shared};

/// Minutes of history kept in memory per queue (the lasting history is in
/// Redis, see `history.rs`).
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
    /// The last minute kept in the whole server's history.
    server_minute: Option<i64>,
    /// Every partitioned queue's layout, by its logical name
    /// (`Client::partitioned_queues`): its partitions are sampled as
    /// queues of their own, and shown as one.
    pub partitioned: BTreeMap<String, PartitionLayout>,
    /// Each partition's logical queue and index.
    pub partition_of: HashMap<String, (String, usize)>,
}

impl Queues {
    /// Whether `name` is a partition of a partitioned queue.
    pub(crate) fn is_partition(&self, name: &str) -> bool {
        self.partition_of.contains_key(name)
    }

    /// The queues as a reader names them: each partitioned queue once, its
    /// partitions not; every other queue as it is.
    pub(crate) fn logical_count(&self) -> usize {
        let plain = self.entries.keys().filter(|name| !self.is_partition(name)).count();
        plain + self.partitioned.len()
    }

    /// The partitions of `layout` (retired ones included: they still hold
    /// values) as one queue: their statuses added up
    /// once every partition has been sampled (`None` before: a partial sum
    /// would read as fewer values than there are), their worker counts
    /// ([`WorkerCounts::of_partitions`]), untaken if any partition is,
    /// schedule runners added up, and the first error of a partition.
    pub(crate) fn partitioned_row(&self, layout: &PartitionLayout) -> PartitionedRow {
        let entries: Vec<Option<&Entry>> = layout.all_names().map(|n| self.entries.get(n)).collect();
        let statuses: Option<Vec<QueueStatus>> = entries.iter().map(|e| e.and_then(|e| e.status)).collect();
        let workers: Vec<&[WorkerInfo]> = entries.iter().flatten().map(|e| e.workers.as_slice()).collect();
        let runners = entries.iter().flatten().filter_map(|e| e.runners).reduce(|a, b| a + b);
        let error = layout.all_names().zip(&entries).find_map(|(name, e)| {
            e.and_then(|e| e.error.as_ref())
                .map(|error| format!("partition {name}: {error}"))
        });
        PartitionedRow {
            status: statuses.map(|s| QueueStatus::sum(&s)),
            // Of the current partitions (the row shows "n of count").
            sampled: (entries.iter().take(layout.count()).flatten())
                .filter(|e| e.status.is_some())
                .count(),
            workers: WorkerCounts::of_partitions(&workers),
            untaken: entries.iter().flatten().any(|e| e.untaken),
            runners,
            error,
        }
    }
}

/// A partitioned queue as the overview shows it: its partitions' samples
/// added up ([`Queues::partitioned_row`]).
pub(crate) struct PartitionedRow {
    pub status: Option<QueueStatus>,
    /// Partitions sampled so far.
    pub sampled: usize,
    pub workers: WorkerCounts,
    pub untaken: bool,
    pub runners: Option<usize>,
    pub error: Option<String>,
}

/// One queue's latest sample and history.
#[derive(Default)]
pub(crate) struct Entry {
    pub status: Option<QueueStatus>,
    pub error: Option<String>,
    pub sampled_at: Option<SystemTime>,
    previous: Option<Previous>,
    pub history: VecDeque<Minute>,
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

    /// The workers of a partitioned queue's partitions, counted per
    /// process: a `PartitionedWorker` beats in every partition's records
    /// (one loop each, sharing one concurrency budget), so its records are
    /// one worker of that budget, not N. A process (host and pid) is alive
    /// if any of its records is; its slots are the largest concurrency it
    /// reports; busy handlers are added up over its records.
    pub(crate) fn of_partitions(partitions: &[&[WorkerInfo]]) -> WorkerCounts {
        let mut processes: BTreeMap<(&str, u32), (bool, usize, usize)> = BTreeMap::new();
        for worker in partitions.iter().flat_map(|w| w.iter()) {
            let process = processes.entry((worker.host.as_str(), worker.pid)).or_default();
            if !worker.silent {
                process.0 = true;
                process.1 += worker.busy;
                process.2 = process.2.max(worker.concurrency);
            }
        }
        let mut counts = WorkerCounts::default();
        for (alive, busy, slots) in processes.into_values() {
            if alive {
                counts.alive += 1;
                counts.busy += busy;
                counts.slots += slots;
            } else {
                counts.silent += 1;
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
    /// The server-side totals at the minute's last sample.
    pub totals: Option<QueueTotals>,
    /// The oldest ready value's age at its highest in the minute, ms.
    pub oldest_ready_ms: Option<u64>,
    /// The levels at the minute's last sample.
    pub ready: u64,
    pub pending: u64,
    pub dead_letters: u64,
}

impl Minute {
    /// The median transfer lag of the minute, ms.
    pub(crate) fn lag_p50(&self) -> Option<u64> {
        self.lag_quantile(0.5)
    }

    /// The 99th percentile of the minute's transfer lag, ms.
    pub(crate) fn lag_p99(&self) -> Option<u64> {
        self.lag_quantile(0.99)
    }

    /// The minute as the lasting history keeps it (its memory is measured
    /// when it is kept); `None` before a sample read the totals.
    fn record(&self) -> Option<history::Record> {
        let totals = self.totals?;
        Some(history::Record {
            at: self.minute,
            totals: [
                totals.offered,
                totals.transferred,
                totals.acked,
                totals.failed,
                totals.dead_lettered,
                totals.timed_out,
            ],
            delivered: self.delivered,
            lag_p50_ms: self.lag_p50(),
            lag_p99_ms: self.lag_p99(),
            oldest_ready_ms: self.oldest_ready_ms,
            memory_bytes: None,
            ready: self.ready,
            pending: self.pending,
            dead_letters: self.dead_letters,
            cancelled: Some(totals.cancelled),
        })
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
    // Partitioned queues: their partitions are sampled whether or not they
    // hold anything yet (the sum is of every partition). A failed read keeps
    // the layouts known (a layout never changes once stored).
    let layouts = match shared.client.partitioned_queues().await {
        Ok(layouts) => Some(layouts),
        Err(error) => {
            tracing::debug!(%error, "could not read the partitioned queues' layouts");
            None
        }
    };
    // Queues found now, and known ones that still have any key (a queue
    // whose pending set emptied has no timeout set, but may have ready
    // values or dead letters).
    let names: Vec<(String, Option<SystemTime>)> = {
        let mut queues = shared.queues.write();
        if let Some(layouts) = layouts {
            queues.partition_of = (layouts.iter())
                .flat_map(|l| {
                    l.all_names()
                        .enumerate()
                        .map(|(i, n)| (n.clone(), (l.queue().to_owned(), i)))
                })
                .collect();
            queues.partitioned = layouts.into_iter().map(|l| (l.queue().to_owned(), l)).collect();
        }
        let partitions: Vec<String> = queues.partition_of.keys().cloned().collect();
        for name in found.iter().chain(&partitions) {
            queues.entries.entry(name.clone()).or_default();
        }
        let Queues {
            entries, partition_of, ..
        } = &mut *queues;
        entries.retain(|name, entry| {
            found.contains(name) || partition_of.contains_key(name) || entry.status.is_none_or(|s| s.exists)
        });
        queues
            .entries
            .iter()
            .map(|(name, entry)| (name.clone(), entry.previous.map(|p| p.bound)))
            .collect()
    };
    let interval = shared.sample_interval;
    let mut samples = futures_util::stream::iter(names)
        .map(|(name, bound)| async move {
            let sample = sample(&shared.client, &name, bound, interval).await;
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
    // Each finished minute into Redis, for the charts' ranges and any
    // dashboard started later.
    let mut stores = futures_util::stream::iter(finished)
        .map(|(name, mut minute)| async move {
            minute.memory_bytes = memory(&shared.client, &name).await.ok();
            if let Err(error) = history::put(&shared.client, history::Series::Queue(&name), &minute).await {
                tracing::debug!(queue = %name, %error, "could not keep a minute of history in Redis");
            }
        })
        .buffer_unordered(CONCURRENCY);
    while stores.next().await.is_some() {}
    drop(stores);
    keep_server_minute(shared, super::epoch_ms(started_at).div_euclid(60_000) - 1).await;
    let mut queues = shared.queues.write();
    queues.discovered = true;
    queues.cycles += 1;
    queues.last_cycle = Some(started.elapsed());
    queues.sampled_at = Some(started_at);
    queues.error = None;
}

/// The memory of a queue's keys (pending set and list, ready list, dead
/// letters), bytes: `MEMORY USAGE` with 5 samples per key, so its cost does
/// not grow with the queue (an estimate for a long list).
async fn memory(client: &Client, name: &str) -> delayq::Result<u64> {
    let keys = QueueKeys::new(name)?;
    let redis = client.redis().next();
    let mut total = 0;
    for key in [keys.timeout(), keys.pending(), keys.destination(), keys.dead_letter()] {
        let slot = delayq::fred::util::redis_keyslot(key.as_bytes());
        let command = CustomCommand::new_static("MEMORY", ClusterHash::Custom(slot), false);
        let used: Value = redis
            .custom(
                command,
                vec![
                    Value::from("USAGE"),
                    Value::from(key),
                    Value::from("SAMPLES"),
                    Value::from(5),
                ],
            )
            .await?;
        total += used.as_u64().unwrap_or(0);
    }
    Ok(total)
}

/// Keeps the whole server's `minute` once, after the first cycle that
/// started past it (every queue's sample of that minute is in by then):
/// totals and flows summed over the queues, their highest lag and oldest
/// ready age, and Redis's `used_memory`.
async fn keep_server_minute(shared: &Shared, minute: i64) {
    let record = {
        let mut queues = shared.queues.write();
        if queues.server_minute.is_some_and(|kept| kept >= minute) {
            return;
        }
        queues.server_minute = Some(minute);
        let mut server = history::Record {
            at: minute,
            ..history::Record::default()
        };
        let mut any = false;
        for entry in queues.entries.values() {
            let Some(record) = entry
                .history
                .iter()
                .rev()
                .find(|m| m.minute == minute)
                .and_then(Minute::record)
            else {
                continue;
            };
            any = true;
            for (sum, total) in server.totals.iter_mut().zip(record.totals) {
                *sum += total;
            }
            server.delivered += record.delivered;
            server.lag_p50_ms = server.lag_p50_ms.max(record.lag_p50_ms);
            server.lag_p99_ms = server.lag_p99_ms.max(record.lag_p99_ms);
            server.oldest_ready_ms = server.oldest_ready_ms.max(record.oldest_ready_ms);
            server.ready += record.ready;
            server.pending += record.pending;
            server.dead_letters += record.dead_letters;
            server.cancelled = Some(server.cancelled.unwrap_or(0) + record.cancelled.unwrap_or(0));
        }
        if !any {
            return;
        }
        server.memory_bytes = shared.server.read().info.as_ref().and_then(|i| i.used_memory);
        server
    };
    if let Err(error) = history::put(&shared.client, history::Series::Server, &record).await {
        tracing::debug!(%error, "could not keep a minute of the server's history in Redis");
    }
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
}

async fn sample(client: &Client, name: &str, bound: Option<SystemTime>, interval: Duration) -> delayq::Result<Sample> {
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
    Ok(Sample {
        at,
        status,
        due_by: Some([(previous, counts[0]), (next, counts[1])]),
        runners,
        workers,
    })
}

/// Folds a sample into the entry: latest status, estimates. Returns the
/// minute the sample ended, to keep in Redis.
fn record(entry: &mut Entry, sample: delayq::Result<Sample>) -> Option<history::Record> {
    let sample = match sample {
        Ok(sample) => sample,
        Err(error) => {
            entry.error = Some(error.to_string());
            return None;
        }
    };
    entry.runners = sample.runners;
    entry.workers = sample.workers;
    let status = sample.status;
    let minute = super::epoch_ms(sample.at).div_euclid(60_000);
    let mut finished = None;
    if entry.history.back().is_none_or(|m| m.minute != minute) {
        // The minute that just ended.
        finished = entry.history.back().and_then(Minute::record);
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
    current.totals = Some(status.totals);
    if let Some(age) = status.oldest_ready_age_at(sample.at) {
        let age = age.as_millis() as u64;
        current.oldest_ready_ms = Some(current.oldest_ready_ms.map_or(age, |m| m.max(age)));
    }
    (current.ready, current.pending, current.dead_letters) = (status.ready, status.pending, status.dead_letters);
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
