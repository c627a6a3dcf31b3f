//! Finds every queue (`SCAN`, incrementally) and samples each one's counts
//! every interval: the overview's cache, the history charts, the gauges.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;

use delayq::fred::interfaces::ClientLike;
use delayq::fred::types::scan::{ScanType, Scanner};
use delayq::{BytesCodec, Client, DelayedQueue, QueueKeys, QueueStatus};

use super::Shared;

/// Minutes of history kept per queue.
const HISTORY_MINUTES: usize = 60;
/// Queues sampled at once.
const CONCURRENCY: usize = 32;
/// Keys asked for per `SCAN` call.
const SCAN_COUNT: u32 = 1_000;

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
#[derive(Debug, Clone, Default, serde::Serialize)]
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
    #[serde(skip)]
    pub lag_ms: Vec<u64>,
}

impl Minute {
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
    let weak = Arc::downgrade(shared);
    let interval = shared.sample_interval;
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(shared) = weak.upgrade() else { return };
            if shared.client.is_shut_down() {
                return;
            }
            // Nothing is asked of a Redis the probe finds down (fred would
            // queue it), and a cycle stops when Redis goes away under it.
            if let Err(super::health::Unavailable::Down(health)) =
                super::health::guarded(&shared, None, cycle(&shared)).await
            {
                shared.queues.write().error =
                    Some(format!("Redis is unreachable: {}", health.error.unwrap_or_default()));
            }
            drop(shared);
            if Weak::strong_count(&weak) == 0 {
                return;
            }
        }
    });
}

/// One full pass: discovery, then every queue's counts.
async fn cycle(shared: &Shared) {
    let started = Instant::now();
    let started_at = SystemTime::now();
    let found = match discover(&shared.client).await {
        Ok(found) => found,
        Err(error) => {
            shared.queues.write().error = Some(format!("discovery failed: {error}"));
            return;
        }
    };
    // Queues found now, and known ones that still have any key (a queue
    // whose pending set emptied has no timeout set, but may have ready
    // values or dead letters).
    let names: Vec<(String, Option<SystemTime>)> = {
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
    let mut gone = Vec::new();
    while let Some((name, sample)) = samples.next().await {
        if sample.as_ref().is_ok_and(|s| !s.status.exists) {
            gone.push(name.clone());
        }
        let mut queues = shared.queues.write();
        let Some(entry) = queues.entries.get_mut(&name) else {
            continue;
        };
        record(entry, &name, sample);
    }
    drop(samples);
    // Keeps the registry bounded as queues come and go.
    for name in gone {
        if let Err(error) = shared.client.forget_queue_if_gone(&name).await {
            tracing::debug!(queue = %name, %error, "could not drop a gone queue from the registry");
        }
    }
    let mut queues = shared.queues.write();
    queues.discovered = true;
    queues.cycles += 1;
    queues.last_cycle = Some(started.elapsed());
    queues.sampled_at = Some(started_at);
    queues.error = None;
}

/// Every queue name with a timeout set or a dead-letter list, by `SCAN`
/// (every master of a cluster), a page at a time, and every name in
/// delayq's registry of queues (queues holding only ready values have
/// neither key for `SCAN` to find).
pub(crate) async fn discover(client: &Client) -> delayq::Result<BTreeSet<String>> {
    let mut names: BTreeSet<String> = client.registered_queues().await?.into_iter().collect();
    for pattern in ["redisson_delay_queue_timeout:*", "delayq_dead_letter:*"] {
        let kind = if pattern.starts_with("redisson") {
            ScanType::ZSet
        } else {
            ScanType::List
        };
        let redis = client.redis().next();
        let mut pages = if redis.is_clustered() {
            redis.scan_cluster(pattern, Some(SCAN_COUNT), Some(kind)).boxed()
        } else {
            redis.scan(pattern, Some(SCAN_COUNT), Some(kind)).boxed()
        };
        while let Some(page) = pages.next().await {
            let mut page = page.map_err(delayq::Error::from)?;
            for key in page.take_results().unwrap_or_default() {
                if let Some(keys) = key.as_str().and_then(QueueKeys::from_key) {
                    names.insert(keys.destination().to_owned());
                }
            }
            // Dropping the page asks for the next one.
        }
    }
    Ok(names)
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
}

async fn sample(client: &Client, name: &str, bound: Option<SystemTime>, interval: Duration) -> delayq::Result<Sample> {
    let queue = view(client, name)?;
    let at = SystemTime::now();
    let status = queue.status().await?;
    let previous = bound.unwrap_or(at);
    let next = at + interval;
    let counts = queue.count_due_by(&[previous, next]).await?;
    Ok(Sample {
        at,
        status,
        due_by: Some([(previous, counts[0]), (next, counts[1])]),
    })
}

/// Folds a sample into the entry: latest status, estimates, gauges.
fn record(entry: &mut Entry, name: &str, sample: delayq::Result<Sample>) {
    let sample = match sample {
        Ok(sample) => sample,
        Err(error) => {
            entry.error = Some(error.to_string());
            return;
        }
    };
    let status = sample.status;
    let minute = super::epoch_ms(sample.at).div_euclid(60_000);
    if entry.history.back().is_none_or(|m| m.minute != minute) {
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
        current.delivered += (previous.ready + transferred).saturating_sub(status.ready);
        current.dead_lettered += status.dead_letters.saturating_sub(previous.dead_letters);
        entry.previous = Some(Previous {
            bound: next.0,
            due_by_bound: next.1,
            ready: status.ready,
            dead_letters: status.dead_letters,
        });
    } else if let Some([_, next]) = sample.due_by {
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
    super::metrics::set_queue_gauges(name, &status, sample.at);
}
