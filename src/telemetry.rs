//! Metrics through the [`metrics`](https://docs.rs/metrics) facade, with the
//! `metrics` feature; without it every call here compiles to nothing.
//!
//! Install any `metrics` recorder (e.g. `metrics-exporter-prometheus`) and
//! delayq reports, each labelled with `queue`:
//!
//! | name | kind | what |
//! |---|---|---|
//! | `delayq_pending` | gauge | elements waiting in the delayed queue (after each transfer run) |
//! | `delayq_ready` | gauge | values in the destination list (after each transfer run) |
//! | `delayq_transferred_total` | counter | elements moved to the destination by this process |
//! | `delayq_quarantined_total` | counter | malformed elements moved aside |
//! | `delayq_transfer_lateness_seconds` | histogram | how late each transfer run moved its earliest element |
//! | `delayq_delivery_lateness_seconds` | histogram | due time to a worker's take (when tracked) |
//! | `delayq_handler_duration_seconds` | histogram | worker handler runs, labelled `outcome` |
//! | `delayq_handled_total` | counter | worker handler runs, labelled `outcome` (`ok`, `retry`, `dead_letter`) |
//! | `delayq_retries_total` | counter | values a worker scheduled for another attempt |
//! | `delayq_dead_lettered_total` | counter | values moved to the dead-letter list, labelled `reason` |
//! | `delayq_id_offers_total` | counter | offers with an id, labelled `outcome` (`new`, `kept`: the id was pending, `replaced`) |
//! | `delayq_cancelled_total` | counter | pending elements cancelled by id |
//!
//! The same figures, without labels, are in [`ClientStats`](crate::ClientStats)
//! and a worker's [`WorkerReport`](crate::WorkerReport).

use std::time::Duration;

/// After a regular transfer run: what it moved, how late, and the queue's depth.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn transfer_run(queue: &str, moved: u64, quarantined: u64, lateness_ms: Option<i64>, depth: (u64, u64)) {
    swept(queue, moved, quarantined);
    #[cfg(feature = "metrics")]
    {
        let q = queue.to_owned();
        if let Some(ms) = lateness_ms {
            metrics::histogram!("delayq_transfer_lateness_seconds", "queue" => q.clone()).record(seconds_ms(ms));
        }
        metrics::gauge!("delayq_pending", "queue" => q.clone()).set(depth.0 as f64);
        metrics::gauge!("delayq_ready", "queue" => q).set(depth.1 as f64);
    }
}

/// After any run that moves elements (a sweep window reports only this).
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn swept(queue: &str, moved: u64, quarantined: u64) {
    #[cfg(feature = "metrics")]
    {
        if moved > 0 {
            metrics::counter!("delayq_transferred_total", "queue" => queue.to_owned()).increment(moved);
        }
        if quarantined > 0 {
            metrics::counter!("delayq_quarantined_total", "queue" => queue.to_owned()).increment(quarantined);
        }
    }
}

/// A value a worker took, `lateness_ms` after it was due.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn delivered(queue: &str, lateness_ms: i64) {
    #[cfg(feature = "metrics")]
    metrics::histogram!("delayq_delivery_lateness_seconds", "queue" => queue.to_owned())
        .record(seconds_ms(lateness_ms));
}

/// A handler run and what became of its value.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn handled(queue: &str, outcome: &'static str, took: Duration) {
    #[cfg(feature = "metrics")]
    {
        metrics::histogram!("delayq_handler_duration_seconds", "queue" => queue.to_owned(), "outcome" => outcome)
            .record(took.as_secs_f64());
        metrics::counter!("delayq_handled_total", "queue" => queue.to_owned(), "outcome" => outcome).increment(1);
    }
}

/// A value scheduled for another attempt.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn retried(queue: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_retries_total", "queue" => queue.to_owned()).increment(1);
}

/// A value moved to the dead-letter list (`reason`: `attempts`, `permanent`,
/// `undecodable`, `deliveries`).
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn dead_lettered(queue: &str, reason: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_dead_lettered_total", "queue" => queue.to_owned(), "reason" => reason).increment(1);
}

#[cfg(feature = "metrics")]
fn seconds_ms(ms: i64) -> f64 {
    ms.max(0) as f64 / 1000.0
}

/// After an offer with an id: `new`, `kept` (the id was pending) or `replaced`.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn offered_with_id(queue: &str, outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_id_offers_total", "queue" => queue.to_owned(), "outcome" => outcome).increment(1);
}

/// After a pending element was cancelled by its id.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn cancelled(queue: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_cancelled_total", "queue" => queue.to_owned()).increment(1);
}
