//! Metrics through the [`metrics`](https://docs.rs/metrics) facade, with the
//! `metrics` feature; without it every call here compiles to nothing. The
//! bottom layer beside `error`: every module may report here. May use:
//! nothing.
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
//! | `delayq_offers_refused_total` | counter | offer calls the queue's limits refused, labelled `limit` (`max_size`, `max_payload`, `offers_off`) |
//! | `delayq_offers_duplicate_total` | counter | values offered with a deduplication window and refused as duplicates, labelled `by` (`id`, `payload`) |
//! | `delayq_schedule_fired_total` | counter | occurrences of a recurring schedule this process offered, labelled `schedule` |
//! | `delayq_schedule_missed_total` | counter | occurrences skipped by the misfire policy (by this process), labelled `schedule` |
//! | `delayq_rate_limit_waits_total` | counter | times a worker handler slot waited for the queue's shared rate limit |
//! | `delayq_rate_limit_wait_seconds` | histogram | how long each of those waits was |
//!
//! The same figures, without labels, are in [`ClientStats`](crate::report::ClientStats)
//! and a worker's [`WorkerReport`](crate::worker::WorkerReport).
//!
//! With the `opentelemetry` feature, traces go from an offer to the handler
//! of its value: see the `trace_context` module.

#[cfg(feature = "opentelemetry")]
#[cfg_attr(docsrs, doc(cfg(feature = "opentelemetry")))]
pub mod trace_context;

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
pub(crate) fn handled(queue: &str, outcome: Handled, took: Duration) {
    handled_all(queue, outcome, std::iter::once(took));
}

/// Many handler runs with the same outcome (an ack batch's): the metric
/// handles are looked up once for the lot, not once per value.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn handled_all(queue: &str, outcome: Handled, took: impl ExactSizeIterator<Item = Duration>) {
    #[cfg(feature = "metrics")]
    {
        if took.len() == 0 {
            return;
        }
        let count = took.len() as u64;
        let histogram = metrics::histogram!("delayq_handler_duration_seconds", "queue" => queue.to_owned(), "outcome" => outcome.label());
        for took in took {
            histogram.record(took.as_secs_f64());
        }
        metrics::counter!("delayq_handled_total", "queue" => queue.to_owned(), "outcome" => outcome.label())
            .increment(count);
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
pub(crate) fn dead_lettered(queue: &str, reason: DeadLettered) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_dead_lettered_total", "queue" => queue.to_owned(), "reason" => reason.label())
        .increment(1);
}

/// Occurrences of a schedule this process offered, and those it skipped.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn schedule_fired(queue: &str, schedule: &str, fired: u64, missed: u64) {
    #[cfg(feature = "metrics")]
    {
        let labels = [("queue", queue.to_owned()), ("schedule", schedule.to_owned())];
        if fired > 0 {
            metrics::counter!("delayq_schedule_fired_total", &labels).increment(fired);
        }
        if missed > 0 {
            metrics::counter!("delayq_schedule_missed_total", &labels).increment(missed);
        }
    }
}

/// A worker slot waited `waited` for the queue's shared rate limit.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn rate_limit_waited(queue: &str, waited: Duration) {
    #[cfg(feature = "metrics")]
    {
        metrics::counter!("delayq_rate_limit_waits_total", "queue" => queue.to_owned()).increment(1);
        metrics::histogram!("delayq_rate_limit_wait_seconds", "queue" => queue.to_owned()).record(waited.as_secs_f64());
    }
}

#[cfg(feature = "metrics")]
fn seconds_ms(ms: i64) -> f64 {
    ms.max(0) as f64 / 1000.0
}

/// An offer call the queue's limits refused (after any wait); `limit` names
/// the limit (`max_size`, `max_payload`, `offers_off`). A label, not the
/// error: telemetry sits below the error layer.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn offer_refused(queue: &str, limit: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_offers_refused_total", "queue" => queue.to_owned(), "limit" => limit).increment(1);
}

/// A value offered with a deduplication window was a duplicate; `by` is
/// `id` or `payload`.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn offer_duplicate(queue: &str, by: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_offers_duplicate_total", "queue" => queue.to_owned(), "by" => by).increment(1);
}

/// After an offer with an id: `new`, `kept` (the id was pending) or `replaced`.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn offered_with_id(queue: &str, outcome: IdOffer) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_id_offers_total", "queue" => queue.to_owned(), "outcome" => outcome.label()).increment(1);
}

/// After a pending element was cancelled by its id.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn cancelled(queue: &str) {
    #[cfg(feature = "metrics")]
    metrics::counter!("delayq_cancelled_total", "queue" => queue.to_owned()).increment(1);
}

/// The `outcome` label of a handler run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handled {
    Ok,
    Retry,
    DeadLetter,
    /// The handler returned without settling the delivery (shutdown).
    Unsettled,
}

/// The `reason` label of a dead-lettered value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeadLettered {
    /// A worker's retry policy ran out of attempts.
    Attempts,
    /// The handler said the failure is permanent.
    Permanent,
    /// The value could not be decoded (and the consumer dead-letters those).
    Undecodable,
    /// Delivered more often than the queue's limit without an ack.
    Deliveries,
}

/// The `outcome` label of an offer with an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdOffer {
    New,
    /// The id was pending: nothing changed.
    Kept,
    Replaced,
}

/// A label's text, as the metric names in the table above spell it.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) trait Label: Copy {
    fn label(self) -> &'static str;
}

impl Label for Handled {
    fn label(self) -> &'static str {
        match self {
            Handled::Ok => "ok",
            Handled::Retry => "retry",
            Handled::DeadLetter => "dead_letter",
            Handled::Unsettled => "unsettled",
        }
    }
}

impl Label for DeadLettered {
    fn label(self) -> &'static str {
        match self {
            DeadLettered::Attempts => "attempts",
            DeadLettered::Permanent => "permanent",
            DeadLettered::Undecodable => "undecodable",
            DeadLettered::Deliveries => "deliveries",
        }
    }
}

impl Label for IdOffer {
    fn label(self) -> &'static str {
        match self {
            IdOffer::New => "new",
            IdOffer::Kept => "kept",
            IdOffer::Replaced => "replaced",
        }
    }
}
