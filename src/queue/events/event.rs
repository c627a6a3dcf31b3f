//! One lifecycle event as the scripts write it (`lua/lib/events.lua`) and
//! as Rust code, the CLI and the dashboard read it.

use std::collections::BTreeMap;

use serde::Serialize;

/// One entry of a queue's event stream (see [`Client::events`](crate::Client::events)).
///
/// Its JSON form (`serde_json::to_string(&event)`, what `delayq events
/// --format json` prints, one object a line) is flat: `queue`, `stream_id`,
/// `time_ms` and `kind`, then the kind's own fields, named as in Redis:
///
/// ```
/// use delayq::events::{Event, EventKind};
/// let event = Event::decode("orders", "1700000000000-0", vec![
///     ("kind".into(), "offered".into()),
///     ("count".into(), "1".into()),
///     ("id".into(), "order-42".into()),
/// ]);
/// assert_eq!(event.kind, EventKind::Offered { count: 1, id: Some("order-42".into()) });
/// assert_eq!(event.time_ms, 1_700_000_000_000);
/// assert_eq!(
///     serde_json::to_string(&event).unwrap(),
///     r#"{"queue":"orders","stream_id":"1700000000000-0","time_ms":1700000000000,"kind":"offered","count":1,"id":"order-42"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// The queue.
    pub queue: String,
    /// The entry's id in the stream (`<ms>-<seq>`); read on from it with
    /// [`EventsFrom::After`](crate::events::EventsFrom::After).
    pub stream_id: String,
    /// When it was written: the ms part of the stream id (the Redis
    /// server's clock, ms since the Unix epoch).
    pub time_ms: u64,
    /// What happened, with its fields.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What happened to a queue: one variant per kind, with the kind's fields
/// (the Redis stream entry has the field `kind`, holding the snake_case name
/// of the variant, and these fields by the same names).
///
/// Granularity: a script writes at most one event of a kind per run, never
/// one per value. A single offer, [`offer_with_id`](crate::DelayedQueue::offer_with_id),
/// `cancel`, `reschedule`, `ack`, `nack` or reliable `take` is one run; offers
/// that wait for each other are joined into one run of up to 250 values,
/// [`offer_all`](crate::DelayedQueue::offer_all) sends chunks of up to 250
/// values, a transfer moves up to its batch, a [`Worker`](crate::Worker)
/// claims up to 64 values and acks up to 128 per run: each such run writes
/// one event with its `count` and, for deliveries, the ids of the first 32.
///
/// Java Redisson's own operations on the queue (its offers, its transfers,
/// its takes) write no events: they do not run delayq's scripts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventKind {
    /// Values were offered: `count` of them in one run; `id` for an offer
    /// with an id (also when it replaced the pending element with that id).
    Offered {
        /// How many values the run added.
        count: u64,
        /// The id, for [`offer_with_id`](crate::DelayedQueue::offer_with_id) and
        /// [`replace_with_id`](crate::DelayedQueue::replace_with_id).
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// A transfer run (or a run of a backlog sweep) moved due elements to
    /// the destination list; also one element run now (`run_element_now`).
    Transferred {
        /// Elements moved to the destination.
        count: u64,
        /// Elements moved to the quarantine list (no format unpacks them).
        quarantined: u64,
    },
    /// Reliable deliveries began (a reliable `take`, or a worker's batch).
    Claimed {
        /// How many values the run claimed.
        count: u64,
        /// The delivery ids (16 hex digits) of the first 32.
        deliveries: Vec<String>,
        /// The delivery count of a single claim (1 for a first delivery).
        #[serde(skip_serializing_if = "Option::is_none")]
        attempt: Option<u32>,
        /// The ids of their jobs (values offered with an id), the first 32.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        jobs: Vec<String>,
    },
    /// Deliveries were acknowledged (a resent ack writes no second event).
    Acked {
        /// How many the run acknowledged.
        count: u64,
        /// The delivery ids of the first 32.
        deliveries: Vec<String>,
        /// The ids of their jobs (values offered with an id), the first 32.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        jobs: Vec<String>,
    },
    /// A delivery was given back to be delivered again: a nack, a worker's
    /// retry, a release, or a delivery dropped unsettled (given back to the
    /// tail). Deliveries whose visibility timeout ran out are
    /// [`TimedOut`](EventKind::TimedOut).
    Retried {
        /// The delivery id.
        delivery: String,
        /// Its delivery count (1: the first delivery failed).
        attempt: u32,
        /// When it is delivered again, from now (0: at once).
        delay_ms: u64,
        /// The ids of their jobs (values offered with an id), the first 32.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        jobs: Vec<String>,
    },
    /// Deliveries no handler saw went back to the head of the queue, in
    /// the order they were claimed, their counts as they were before (not
    /// retries): a worker's values claimed ahead of its slots that waited
    /// too long, or that it held as the queue paused or as it stopped
    /// (one event for them all); values taken for a call that stopped
    /// waiting.
    Released {
        /// How many the run gave back.
        count: u64,
        /// The delivery ids of the first 32.
        deliveries: Vec<String>,
        /// The ids of their jobs (values offered with an id), the first 32.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        jobs: Vec<String>,
    },
    /// Deliveries whose visibility timeout ran out unsettled were given back
    /// to the head of the queue by a reaper (one event per reaper run).
    TimedOut {
        /// How many.
        count: u64,
    },
    /// Values offered with a time to live were met by a take after it ran
    /// out, and not delivered (one event per take that met any; see
    /// [`OfferOptions::ttl`](crate::OfferOptions::ttl)).
    Expired {
        /// How many.
        count: u64,
        /// How many of them went to the dead-letter list (reason
        /// `expired`); the others were dropped.
        dead_lettered: u64,
    },
    /// Values went to the dead-letter list.
    DeadLettered {
        /// How many the run dead-lettered.
        count: u64,
        /// Why (the first one's reason, for a batch).
        reason: String,
        /// The delivery id, when one delivery was released there.
        #[serde(skip_serializing_if = "Option::is_none")]
        delivery: Option<String>,
        /// The ids of their jobs (values offered with an id), the first 32.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        jobs: Vec<String>,
    },
    /// Pending elements were removed before they were due: by
    /// [`cancel`](crate::DelayedQueue::cancel) (one, with its id) or by value
    /// ([`remove`](crate::DelayedQueue::remove), `remove_all`: one event per
    /// call, with the count), or one element deleted by its bytes
    /// (`delete_element`).
    Cancelled {
        /// How many.
        count: u64,
        /// The id, for a cancel.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// A pending element got a new due time ([`reschedule`](crate::DelayedQueue::reschedule),
    /// or `reschedule_element`: no id).
    Rescheduled {
        /// Its id, for a reschedule by id.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Its new due time (ms since the Unix epoch).
        due_ms: u64,
    },
    /// A recurring schedule offered its due occurrences.
    ScheduleFired {
        /// The schedule's name.
        schedule: String,
        /// How many occurrences it offered.
        count: u64,
    },
    /// A recurring schedule's value was offered by hand, once, outside its
    /// occurrences ([`Schedules::run_now`](crate::schedule::Schedules::run_now)).
    ScheduleRun {
        /// The schedule's name.
        schedule: String,
    },
    /// The queue's limits refused an offer run
    /// ([`Error::OfferRefused`](crate::Error::OfferRefused)): nothing of
    /// it was queued (of a bulk-offer chunk, the values before the refused
    /// one were, and are in an `offered` event).
    Refused {
        /// How many values the run offered that were not queued.
        count: u64,
        /// Which limit, with its numbers: `offers_off`, `max_payload
        /// <limit> <bytes>` or `max_size <limit> <size> <offered>`.
        reason: String,
        /// The id, for an offer with an id.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// Values offered with a deduplication window were not queued: an offer
    /// with the same id or payload was made within the window
    /// ([`Offered::Duplicate`](crate::dedup::Offered::Duplicate)).
    Duplicate {
        /// How many values of the run were duplicates.
        count: u64,
    },
    /// The queue's limits were set ([`DelayedQueue::set_limits`](crate::DelayedQueue::set_limits)),
    /// as `delayq limits` shows them (`max_size=100 takes=off`, or `none`).
    LimitsSet {
        /// The new limits.
        limits: String,
    },
    /// A cancel was asked for a job that had not ended
    /// ([`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job);
    /// asking again writes none).
    CancelRequested {
        /// The job's id.
        id: String,
        /// Where it was: `running` (a consumer holds it) or `queued`.
        state: String,
    },
    /// Jobs stopped on their cancel: dropped by a take before they ran
    /// (`running` false: one event per take, with the first 32 ids), or
    /// settled as cancelled after their handler stopped (`running` true).
    JobCancelled {
        /// How many.
        count: u64,
        /// Whether they were running.
        running: bool,
        /// Their ids, the first 32.
        jobs: Vec<String>,
    },
    /// A running job reported progress
    /// ([`JobContext::progress`](crate::worker::JobContext::progress)).
    Progress {
        /// The job's id.
        job: String,
        /// The delivery that reported it.
        delivery: String,
    },
    /// Acks kept jobs' results ([`Worker::run_job`](crate::Worker::run_job),
    /// [`Delivery::ack_with_result`](crate::Delivery::ack_with_result)).
    Result {
        /// How many.
        count: u64,
        /// Their ids, the first 32.
        jobs: Vec<String>,
    },
    /// Every member of a batch has ended: its completion is on its way
    /// ([`DelayedQueue::offer_batch`](crate::DelayedQueue::offer_batch)).
    BatchCompleted {
        /// The batch's id.
        batch: String,
        /// Members handled.
        handled: u64,
        /// Members dead-lettered.
        dead_lettered: u64,
        /// Members cancelled.
        cancelled: u64,
    },
    /// The queue was paused (by this call: pausing a paused queue writes none).
    Paused,
    /// The queue was resumed (by this call).
    Resumed,
    /// A kind this version does not know (written by a newer one), or a known
    /// kind whose fields do not parse: kept as read, never an error.
    Unknown {
        /// The entry's `kind` field (empty when it has none).
        name: String,
        /// Its other fields.
        fields: BTreeMap<String, String>,
    },
}

impl Event {
    /// Decodes a stream entry: its id and fields. Never fails: an entry it
    /// cannot read as a known kind is [`EventKind::Unknown`].
    pub fn decode(queue: &str, stream_id: &str, fields: Vec<(String, String)>) -> Event {
        let time_ms = stream_id
            .split_once('-')
            .map_or(stream_id, |(ms, _)| ms)
            .parse()
            .unwrap_or(0);
        let mut map: BTreeMap<String, String> = fields.into_iter().collect();
        let name = map.remove("kind").unwrap_or_default();
        let kind = known(&name, &map).unwrap_or(EventKind::Unknown { name, fields: map });
        Event {
            queue: queue.to_owned(),
            stream_id: stream_id.to_owned(),
            time_ms,
            kind,
        }
    }
}

/// The known kind `name` from its fields, or `None` when either is not as
/// this version writes them.
fn known(name: &str, f: &BTreeMap<String, String>) -> Option<EventKind> {
    let num = |key: &str| f.get(key)?.parse::<u64>().ok();
    let text = |key: &str| f.get(key).cloned();
    // One job ('job'), or several as a JSON array ('jobs').
    let jobs = || -> Vec<String> {
        match (f.get("job"), f.get("jobs")) {
            (Some(job), _) => vec![job.clone()],
            (None, Some(list)) => serde_json::from_str(list).unwrap_or_default(),
            (None, None) => Vec::new(),
        }
    };
    let ids = |key: &str| -> Vec<String> {
        f.get(key)
            .map(|s| s.split_ascii_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    Some(match name {
        "offered" => EventKind::Offered {
            count: num("count")?,
            id: text("id"),
        },
        "transferred" => EventKind::Transferred {
            count: num("count")?,
            quarantined: num("quarantined").unwrap_or(0),
        },
        "claimed" => EventKind::Claimed {
            count: num("count")?,
            deliveries: ids("deliveries"),
            attempt: num("attempt").and_then(|n| u32::try_from(n).ok()),
            jobs: jobs(),
        },
        "acked" => EventKind::Acked {
            count: num("count")?,
            deliveries: ids("deliveries"),
            jobs: jobs(),
        },
        "retried" => EventKind::Retried {
            delivery: text("delivery")?,
            attempt: u32::try_from(num("attempt")?).ok()?,
            delay_ms: num("delay_ms")?,
            jobs: jobs(),
        },
        "released" => EventKind::Released {
            count: num("count")?,
            deliveries: ids("deliveries"),
            jobs: jobs(),
        },
        "timed_out" => EventKind::TimedOut { count: num("count")? },
        "expired" => EventKind::Expired {
            count: num("count")?,
            dead_lettered: num("dead_lettered")?,
        },
        "dead_lettered" => EventKind::DeadLettered {
            count: num("count")?,
            reason: text("reason").unwrap_or_default(),
            delivery: text("delivery"),
            jobs: jobs(),
        },
        "cancelled" => EventKind::Cancelled {
            count: num("count")?,
            id: text("id"),
        },
        "rescheduled" => EventKind::Rescheduled {
            id: text("id"),
            due_ms: num("due_ms")?,
        },
        "schedule_fired" => EventKind::ScheduleFired {
            schedule: text("schedule")?,
            count: num("count")?,
        },
        "schedule_run" => EventKind::ScheduleRun {
            schedule: text("schedule")?,
        },
        "refused" => EventKind::Refused {
            count: num("count")?,
            reason: text("reason")?,
            id: text("id"),
        },
        "duplicate" => EventKind::Duplicate { count: num("count")? },
        "limits_set" => EventKind::LimitsSet {
            limits: text("limits")?,
        },
        "cancel_requested" => EventKind::CancelRequested {
            id: text("id")?,
            state: text("state")?,
        },
        "job_cancelled" => EventKind::JobCancelled {
            count: num("count")?,
            running: num("running")? == 1,
            jobs: jobs(),
        },
        "progress" => EventKind::Progress {
            job: text("job")?,
            delivery: text("delivery")?,
        },
        "result" => EventKind::Result {
            count: num("count")?,
            jobs: jobs(),
        },
        "batch_completed" => EventKind::BatchCompleted {
            batch: text("batch")?,
            handled: num("handled")?,
            dead_lettered: num("dead_lettered")?,
            cancelled: num("cancelled")?,
        },
        "paused" => EventKind::Paused,
        "resumed" => EventKind::Resumed,
        _ => return None,
    })
}

impl EventKind {
    /// The kind's name as stored in the `kind` field (`offered`, ...; for
    /// [`Unknown`](EventKind::Unknown), the name read).
    pub fn name(&self) -> &str {
        match self {
            EventKind::Offered { .. } => "offered",
            EventKind::Transferred { .. } => "transferred",
            EventKind::Claimed { .. } => "claimed",
            EventKind::Acked { .. } => "acked",
            EventKind::Retried { .. } => "retried",
            EventKind::Released { .. } => "released",
            EventKind::TimedOut { .. } => "timed_out",
            EventKind::Expired { .. } => "expired",
            EventKind::DeadLettered { .. } => "dead_lettered",
            EventKind::Cancelled { .. } => "cancelled",
            EventKind::Rescheduled { .. } => "rescheduled",
            EventKind::ScheduleFired { .. } => "schedule_fired",
            EventKind::ScheduleRun { .. } => "schedule_run",
            EventKind::Refused { .. } => "refused",
            EventKind::Duplicate { .. } => "duplicate",
            EventKind::LimitsSet { .. } => "limits_set",
            EventKind::CancelRequested { .. } => "cancel_requested",
            EventKind::JobCancelled { .. } => "job_cancelled",
            EventKind::Progress { .. } => "progress",
            EventKind::Result { .. } => "result",
            EventKind::BatchCompleted { .. } => "batch_completed",
            EventKind::Paused => "paused",
            EventKind::Resumed => "resumed",
            EventKind::Unknown { name, .. } => name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(fields: &[(&str, &str)]) -> EventKind {
        let fields = fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Event::decode("q", "5-1", fields).kind
    }

    #[test]
    fn unknown_kinds_and_bad_fields_decode_to_unknown() {
        assert!(matches!(decode(&[("kind", "teleported"), ("to", "mars")]),
            EventKind::Unknown { name, fields } if name == "teleported" && fields["to"] == "mars"));
        assert!(matches!(decode(&[("kind", "offered"), ("count", "many")]),
            EventKind::Unknown { name, .. } if name == "offered"));
        assert!(matches!(decode(&[]), EventKind::Unknown { name, .. } if name.is_empty()));
    }

    #[test]
    fn job_events_decode() {
        assert_eq!(
            decode(&[("kind", "cancel_requested"), ("id", "j-1"), ("state", "running")]),
            EventKind::CancelRequested {
                id: "j-1".into(),
                state: "running".into()
            }
        );
        assert_eq!(
            decode(&[
                ("kind", "job_cancelled"),
                ("count", "1"),
                ("running", "1"),
                ("job", "j-1")
            ]),
            EventKind::JobCancelled {
                count: 1,
                running: true,
                jobs: vec!["j-1".into()]
            }
        );
        assert_eq!(
            decode(&[
                ("kind", "job_cancelled"),
                ("count", "2"),
                ("running", "0"),
                ("jobs", "[\"a\",\"b\"]")
            ]),
            EventKind::JobCancelled {
                count: 2,
                running: false,
                jobs: vec!["a".into(), "b".into()]
            }
        );
        assert_eq!(
            decode(&[("kind", "progress"), ("job", "j-1"), ("delivery", "00ff")]).name(),
            "progress"
        );
        assert_eq!(
            decode(&[("kind", "result"), ("count", "1"), ("jobs", "[\"j-1\"]")]),
            EventKind::Result {
                count: 1,
                jobs: vec!["j-1".into()]
            }
        );
    }

    #[test]
    fn fields_decode_by_name() {
        assert_eq!(
            decode(&[
                ("kind", "retried"),
                ("delivery", "00ff"),
                ("attempt", "2"),
                ("delay_ms", "500")
            ]),
            EventKind::Retried {
                delivery: "00ff".into(),
                attempt: 2,
                delay_ms: 500,
                jobs: vec![]
            }
        );
        assert_eq!(
            decode(&[("kind", "acked"), ("count", "2"), ("deliveries", "aa bb")]),
            EventKind::Acked {
                count: 2,
                deliveries: vec!["aa".into(), "bb".into()],
                jobs: vec![]
            }
        );
        // A job's id, or a batch's as a JSON array (ids may hold spaces).
        assert_eq!(
            decode(&[
                ("kind", "retried"),
                ("delivery", "00ff"),
                ("attempt", "1"),
                ("delay_ms", "0"),
                ("job", "order 42")
            ]),
            EventKind::Retried {
                delivery: "00ff".into(),
                attempt: 1,
                delay_ms: 0,
                jobs: vec!["order 42".into()]
            }
        );
        assert_eq!(
            decode(&[
                ("kind", "acked"),
                ("count", "2"),
                ("deliveries", "aa bb"),
                ("jobs", r#"["a b","c"]"#)
            ]),
            EventKind::Acked {
                count: 2,
                deliveries: vec!["aa".into(), "bb".into()],
                jobs: vec!["a b".into(), "c".into()]
            }
        );
        let json = serde_json::to_string(&Event::decode("q", "5-1", vec![("kind".into(), "paused".into())])).unwrap();
        assert_eq!(json, r#"{"queue":"q","stream_id":"5-1","time_ms":5,"kind":"paused"}"#);
    }
}
