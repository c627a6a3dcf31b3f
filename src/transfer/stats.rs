//! Counters of what a client did: its transfer scheduler counts its runs,
//! sweeps and registrations (`transfer/task/outcome.rs`, `transfer/mod.rs`),
//! and the queues above it count what they quarantine or dead-letter
//! (`queue/delayed`, `queue/reliable/take.rs`). They live here, in the
//! lowest layer that counts, so that every counter is one atomic add.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub transfer_runs: AtomicU64,
    pub transfer_failures: AtomicU64,
    pub transferred: AtomicU64,
    pub quarantined: AtomicU64,
    pub dead_lettered: AtomicU64,
    pub sweeps: AtomicU64,
    pub registrations: AtomicU64,
}

impl Stats {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> ClientStats {
        ClientStats {
            transfer_runs: self.transfer_runs.load(Ordering::Relaxed),
            transfer_failures: self.transfer_failures.load(Ordering::Relaxed),
            transferred: self.transferred.load(Ordering::Relaxed),
            quarantined: self.quarantined.load(Ordering::Relaxed),
            dead_lettered: self.dead_lettered.load(Ordering::Relaxed),
            sweeps: self.sweeps.load(Ordering::Relaxed),
            registrations: self.registrations.load(Ordering::Relaxed),
        }
    }
}

/// What a [`Client`](crate::Client) has done since it started.
///
/// Who counts what: the client's transfer scheduler counts `transfer_runs`,
/// `transfer_failures`, `transferred`, `sweeps` and `registrations`, and
/// the part of `quarantined` its runs set aside; the queues count the rest of
/// `quarantined` (elements a `remove_first`/`poll_last_and_offer_first_to`
/// found malformed) and `dead_lettered` (values this client's reliable takes
/// and workers dead-lettered). Other processes' work is not counted: see
/// the dashboard or `QueueStatus` for a queue's totals.
///
/// ```no_run
/// # async fn demo(client: delayq::Client) {
/// let stats = client.stats();
/// println!("{} moved in {} runs, {} quarantined", stats.transferred, stats.transfer_runs, stats.quarantined);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ClientStats {
    /// Transfer scripts run (successful or not).
    pub transfer_runs: u64,
    /// Transfer scripts that failed (and were retried with backoff).
    pub transfer_failures: u64,
    /// Elements moved to destination lists.
    pub transferred: u64,
    /// Malformed elements moved aside to quarantine lists (by transfer runs
    /// and by removals).
    pub quarantined: u64,
    /// Values moved to dead-letter lists by this client's reliable consumers.
    pub dead_lettered: u64,
    /// Backlog sweeps started (a backlog scattered through a long pending list).
    pub sweeps: u64,
    /// Queues handed to the scheduler: one per queue while any handle of it
    /// transfers, however many handles there are.
    pub registrations: u64,
}
