//! `QueueStatus`: where a queue's elements are, for monitoring and operators.

use std::time::{Duration, SystemTime};

/// How many elements a queue holds where, read in one atomic step (see
/// [`DelayedQueue::status`](crate::DelayedQueue::status)).
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let status = queue.status().await?;
/// println!("{} pending, {} ready, transfer lag {:?}", status.pending, status.ready, status.lag());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueueStatus {
    /// Elements waiting in the delayed queue (the timeout set), and delayed
    /// values in delayq's priority sets (`priority_pending` of them).
    pub pending: u64,
    /// Values ready to take: in the destination list, and in delayq's
    /// priority sets (`priority_ready` of them, which Java does not see).
    pub ready: u64,
    /// Of `pending`, delayed values in delayq's priority sets: offered with
    /// a priority above the default (see
    /// [`DelayedQueue::offer_with_priority`](crate::DelayedQueue::offer_with_priority)),
    /// a TTL or headers ([`OfferOptions`](crate::OfferOptions)).
    pub priority_pending: u64,
    /// Of `ready`, values in delayq's priority sets (a priority above the
    /// default, a TTL or headers), which only delayq's consumers take.
    pub priority_ready: u64,
    /// Of `pending`, values offered with a group key
    /// ([`OfferOptions::group`](crate::OfferOptions::group)) and a delay,
    /// not in their key's line yet (not due, or due and not yet moved
    /// there by a claim).
    pub grouped_pending: u64,
    /// Of `ready`, values offered with a group key waiting in their key's
    /// line, which only delayq's reliable consumers take.
    pub grouped_ready: u64,
    /// Reliable deliveries not yet settled.
    pub in_flight: u64,
    /// Values in the dead-letter list.
    pub dead_letters: u64,
    /// Malformed elements moved aside by the transfer.
    pub quarantined: u64,
    /// When the earliest pending element is due (producer's clock).
    pub next_due: Option<SystemTime>,
    /// Whether any key of the queue exists in Redis (a misspelt name has none).
    pub exists: bool,
    /// Whether the queue is paused ([`DelayedQueue::pause`](crate::DelayedQueue::pause)).
    pub paused: bool,
    /// Entries of the id index: pending elements offered with an id, plus
    /// entries not cleaned up yet of ones that left (see
    /// [`DelayedQueue::offer_with_id`](crate::DelayedQueue::offer_with_id)).
    pub ids: u64,
    /// When the oldest ready value (the destination's head) fell due, if
    /// known: a transfer records due times only while lateness tracking is
    /// on (a [`Worker`](crate::Worker) or reliable consumer runs), and a
    /// value offered straight to the destination has none. `None` with
    /// `ready > 0` means *unknown*, not new.
    pub oldest_ready_due: Option<SystemTime>,
    /// When the queue was paused, from its pause flag (`None` while it runs,
    /// or when the flag holds no time).
    pub paused_since: Option<SystemTime>,
    /// The queue's fleet-wide concurrency limit, if it has one
    /// ([`Limits::concurrency`](crate::limits::Limits::concurrency)): at
    /// most that many delayq deliveries in flight.
    pub concurrency_limit: Option<u32>,
    /// Of `in_flight`, deliveries past their visibility timeout: their
    /// consumer is gone or stalled, and a reaper (one runs in each client
    /// with a reliable consumer of the queue) has not returned them yet.
    /// The concurrency limit does not count them.
    pub lapsed: u64,
    /// What the queue has seen, counted on the server by delayq's scripts
    /// (every process's work, see [`QueueTotals`]).
    pub totals: QueueTotals,
}

/// A queue's totals since its counts began: kept on the Redis server in the
/// hash `delayq_stats:{name}` (seven fields, in the queue's cluster slot) and
/// added to by the scripts that do each thing, in the same atomic step, so
/// every delayq process is counted once, whichever does the work, and a
/// resent script counts nothing twice. The key expires 35 days after its
/// last count (the totals then start again from zero, as a Prometheus
/// counter may). Not counted: what Java's Redisson does with its own
/// commands (its offers and takes), plain takes of a
/// [`BlockingQueue`](crate::BlockingQueue) (one Redis command, no script),
/// and removals by an operator.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let totals = queue.status().await?.totals;
/// println!("{} offered, {} acked, {} failed", totals.offered, totals.acked, totals.failed);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueueTotals {
    /// Elements offered by delayq (offers, bulk offers, offers with an id,
    /// schedule fires and runs).
    pub offered: u64,
    /// Elements the transfer moved to the ready list as they fell due (by
    /// any process's transfer or sweep).
    pub transferred: u64,
    /// Reliable deliveries acknowledged (handled), by consumers and workers.
    pub acked: u64,
    /// Reliable deliveries nacked (handler failures: retried later, or
    /// dead-lettered); a shutdown's give-back is not counted.
    pub failed: u64,
    /// Values moved to the dead-letter list (a nack that dead-letters, or
    /// too many deliveries).
    pub dead_lettered: u64,
    /// Deliveries whose lease ran out before a settle (given back by a
    /// reaper).
    pub timed_out: u64,
    /// Values a deduplication window answered as duplicates (neither
    /// offered nor refused: not counted in [`offered`](Self::offered)).
    pub duplicates: u64,
    /// Values offered with a time to live that were not taken within it
    /// (see [`OfferOptions::ttl`](crate::OfferOptions::ttl)): dead-lettered
    /// with reason `expired` (also counted in
    /// [`dead_lettered`](Self::dead_lettered)) or dropped.
    pub expired: u64,
    /// Jobs stopped by [`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job):
    /// dropped by the take that reached a job's value, or settled as
    /// cancelled by the worker whose handler stopped.
    pub cancelled: u64,
}

impl QueueTotals {
    /// The totals in the order `status.lua` answers them.
    pub(crate) fn from_fields(fields: [u64; 9]) -> QueueTotals {
        let [offered, transferred, acked, failed, dead_lettered, timed_out, duplicates, expired, cancelled] = fields;
        QueueTotals {
            offered,
            transferred,
            acked,
            failed,
            dead_lettered,
            timed_out,
            duplicates,
            expired,
            cancelled,
        }
    }
}

impl QueueStatus {
    /// The statuses of a partitioned queue's partitions added up, as
    /// [`PartitionedQueue::status`](crate::PartitionedQueue::status) adds
    /// them: counts and totals summed, the earliest due times, paused if any
    /// is, the concurrency limits summed where every partition has one.
    ///
    /// ```no_run
    /// # async fn demo(queue: delayq::PartitionedQueue<String>) -> delayq::Result<()> {
    /// let mut parts = Vec::new();
    /// for i in 0..queue.count() {
    ///     parts.push(queue.partition(i).expect("a partition").status().await?);
    /// }
    /// let total = delayq::QueueStatus::sum(&parts);
    /// println!("{} ready over {} partitions", total.ready, parts.len());
    /// # Ok(()) }
    /// ```
    pub fn sum(parts: &[QueueStatus]) -> QueueStatus {
        let mut total = QueueStatus::default();
        let earliest = |a: Option<SystemTime>, b: Option<SystemTime>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for part in parts {
            total.pending += part.pending;
            total.ready += part.ready;
            total.priority_pending += part.priority_pending;
            total.priority_ready += part.priority_ready;
            total.grouped_pending += part.grouped_pending;
            total.grouped_ready += part.grouped_ready;
            total.in_flight += part.in_flight;
            total.dead_letters += part.dead_letters;
            total.quarantined += part.quarantined;
            total.next_due = earliest(total.next_due, part.next_due);
            total.exists |= part.exists;
            total.paused |= part.paused;
            total.ids += part.ids;
            total.oldest_ready_due = earliest(total.oldest_ready_due, part.oldest_ready_due);
            total.paused_since = earliest(total.paused_since, part.paused_since);
            total.lapsed += part.lapsed;
            let t = &mut total.totals;
            let p = &part.totals;
            t.offered += p.offered;
            t.transferred += p.transferred;
            t.acked += p.acked;
            t.failed += p.failed;
            t.dead_lettered += p.dead_lettered;
            t.timed_out += p.timed_out;
            t.duplicates += p.duplicates;
            t.expired += p.expired;
            t.cancelled += p.cancelled;
        }
        let limits: Option<Vec<u32>> = parts.iter().map(|p| p.concurrency_limit).collect();
        total.concurrency_limit = limits.filter(|l| !l.is_empty()).map(|l| l.iter().sum());
        total
    }

    /// Deliveries in flight whose visibility timeout has not ended: what
    /// the concurrency limit counts.
    ///
    /// ```
    /// let mut status = delayq::QueueStatus::default();
    /// (status.in_flight, status.lapsed) = (5, 2);
    /// assert_eq!(status.live_in_flight(), 3);
    /// ```
    pub fn live_in_flight(&self) -> u64 {
        self.in_flight.saturating_sub(self.lapsed)
    }

    /// How overdue the earliest pending element is by this host's clock:
    /// zero while the transfer keeps up. A lag that grows means no process is
    /// running the transfer for this queue.
    pub fn lag(&self) -> Duration {
        self.lag_at(SystemTime::now())
    }

    /// [`lag`](Self::lag) as of `now`.
    pub fn lag_at(&self, now: SystemTime) -> Duration {
        self.next_due
            .and_then(|due| now.duration_since(due).ok())
            .unwrap_or_default()
    }

    /// How long the oldest ready value has waited for a consumer since it
    /// fell due (queue latency, as Sidekiq shows it), by this host's clock.
    /// `None` when nothing is ready or its due time is unknown (see
    /// [`oldest_ready_due`](Self::oldest_ready_due)): never a guess.
    pub fn oldest_ready_age(&self) -> Option<Duration> {
        self.oldest_ready_age_at(SystemTime::now())
    }

    /// [`oldest_ready_age`](Self::oldest_ready_age) as of `now`.
    pub fn oldest_ready_age_at(&self, now: SystemTime) -> Option<Duration> {
        if self.ready == 0 {
            return None;
        }
        self.oldest_ready_due
            .map(|due| now.duration_since(due).unwrap_or_default())
    }

    /// How long the queue has been paused, by this host's clock (`None`
    /// while it runs or when the pause's time is unknown).
    pub fn paused_for_at(&self, now: SystemTime) -> Option<Duration> {
        self.paused_since
            .filter(|_| self.paused)
            .map(|since| now.duration_since(since).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_how_overdue_the_head_is() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        let mut status = QueueStatus::default();
        assert_eq!(status.lag_at(now), Duration::ZERO);
        status.next_due = Some(now + Duration::from_secs(5));
        assert_eq!(status.lag_at(now), Duration::ZERO);
        status.next_due = Some(now - Duration::from_millis(1500));
        assert_eq!(status.lag_at(now), Duration::from_millis(1500));
    }
}
