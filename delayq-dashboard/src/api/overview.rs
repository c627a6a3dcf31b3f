//! `GET /api/overview`: every known queue's latest sample, filtered (by
//! name, ignoring case), sorted (by default: what needs attention first)
//! and paged.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::QueueStatus;

use super::{next_hour, status_json};
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::sampler::{Entry, WorkerCounts};
use crate::{epoch_ms, Shared};

/// Rows of the overview per page, most.
const MAX_ROWS: usize = 500;
/// Transfer lag, or an oldest ready value's wait, above this needs
/// attention (the pages show it in red).
const LATE: Duration = Duration::from_secs(5);
/// A pause older than this needs attention: one forgotten, not a short hold.
const LONG_PAUSE: Duration = Duration::from_secs(3600);

pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new().route("/api/overview", get(overview))
}

/// `GET /api/overview` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct OverviewQuery {
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
    #[serde(default)]
    filter: String,
    #[serde(default)]
    sort: String,
}

/// Every known queue's latest sample, a page of them with their next hour;
/// 503 while Redis is unreachable.
pub(crate) async fn overview(State(shared): State<Arc<Shared>>, Query(query): Query<OverviewQuery>) -> Response {
    match guarded(&shared, Some(REDIS_WAIT), read_overview(&shared, &query)).await {
        Ok(answer) => answer,
        Err(why) => unavailable(&shared, why),
    }
}

async fn read_overview(shared: &Arc<Shared>, query: &OverviewQuery) -> Response {
    let now = SystemTime::now();
    let limit = query.limit.unwrap_or(50).min(MAX_ROWS);
    let (totals, matching, rows, meta) = {
        let queues = shared.queues.read();
        let mut totals = QueueStatus::default();
        let filter = query.filter.to_lowercase();
        let mut matching: Vec<(&String, &Entry)> = Vec::new();
        for (name, entry) in &queues.entries {
            if let Some(s) = &entry.status {
                totals.pending += s.pending;
                totals.ready += s.ready;
                totals.in_flight += s.in_flight;
                totals.dead_letters += s.dead_letters;
                totals.quarantined += s.quarantined;
            }
            if filter.is_empty() || name.to_lowercase().contains(&filter) {
                matching.push((name, entry));
            }
        }
        let key = |e: &Entry, f: fn(&QueueStatus) -> u64| e.status.as_ref().map_or(0, f);
        match query.sort.as_str() {
            "pending" => matching.sort_by_key(|(_, e)| std::cmp::Reverse(key(e, |s| s.pending))),
            "dead" => matching.sort_by_key(|(_, e)| std::cmp::Reverse(key(e, |s| s.dead_letters))),
            "lag" => matching
                .sort_by_key(|(_, e)| std::cmp::Reverse(e.status.as_ref().map_or(Duration::ZERO, |s| s.lag_at(now)))),
            "name" => {}
            // The entries are by name already: ties stay in name order.
            _ => matching.sort_by_key(|(_, e)| std::cmp::Reverse(attention(e, now))),
        }
        let rows: Vec<Row> = matching
            .iter()
            .skip(query.offset)
            .take(limit)
            .map(|(name, entry)| Row {
                name: (*name).clone(),
                status: entry.status,
                error: entry.error.clone(),
                runners: entry.runners,
                workers: WorkerCounts::of(&entry.workers),
                untaken: entry.untaken,
            })
            .collect();
        let meta = json!({
            "discovered": queues.discovered,
            "cycles": queues.cycles,
            "last_cycle_ms": queues.last_cycle.map(|d| d.as_millis() as u64),
            "error": queues.error,
            "queues": queues.entries.len(),
        });
        (totals, matching.len(), rows, meta)
    };
    let wanted: Vec<(String, bool)> = rows
        .iter()
        .map(|row| (row.name.clone(), row.status.is_some_and(|s| s.pending > 0)))
        .collect();
    let hours: Vec<Option<Value>> = futures_util::stream::iter(wanted)
        .map(|(name, pending)| {
            let shared = shared.clone();
            async move {
                if pending {
                    next_hour(&shared, &name, now).await.ok()
                } else {
                    None
                }
            }
        })
        .buffered(16)
        .collect()
        .await;
    let queues: Vec<Value> = rows
        .iter()
        .zip(hours)
        .map(|(queue, hour)| {
            let mut row = status_json(queue.status.as_ref(), now);
            row["name"] = json!(queue.name);
            row["error"] = json!(queue.error);
            row["due_next_hour"] = hour.unwrap_or(Value::Null);
            row["untaken"] = json!(queue.untaken);
            // null: no schedule; else {"runners": n, "alive": n > 0}.
            row["workers"] = json!({
                "alive": queue.workers.alive,
                "silent": queue.workers.silent,
                "busy": queue.workers.busy,
                "slots": queue.workers.slots,
            });
            row["schedules"] = match queue.runners {
                Some(n) => json!({"runners": n, "alive": n > 0}),
                None => Value::Null,
            };
            row
        })
        .collect();
    Json(json!({
        "now_ms": epoch_ms(now),
        "read_only": shared.read_only,
        "redis": health::json(shared),
        "sample_interval_ms": shared.sample_interval.as_millis() as u64,
        "sampler": meta,
        "totals": status_json(Some(&totals), now),
        "matching": matching,
        "sort": match query.sort.as_str() {
            known @ ("name" | "pending" | "dead" | "lag") => known,
            _ => "attention",
        },
        "offset": query.offset,
        "limit": limit,
        "queues": queues,
    }))
    .into_response()
}

/// One row of the page, copied out of the sampler's map.
struct Row {
    name: String,
    status: Option<QueueStatus>,
    error: Option<String>,
    runners: Option<usize>,
    workers: WorkerCounts,
    untaken: bool,
}

/// How much a queue needs attention; fields compare in order.
#[derive(Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Attention {
    dead_letters: u64,
    /// Transfer lag beyond [`LATE`] (a paused queue's is deliberate).
    late: Duration,
    /// Ready values nobody takes ([`sampler::untaken`](crate::sampler::untaken)).
    untaken: bool,
    /// The oldest ready value's wait beyond [`LATE`], where known.
    waiting: Duration,
    /// Ready values, counted only while nobody takes them.
    untaken_ready: u64,
    /// How long the queue has been paused, beyond [`LONG_PAUSE`].
    long_pause: Duration,
    quarantined: u64,
    /// Schedules that no runner fires.
    unrun: bool,
}

fn attention(entry: &Entry, now: SystemTime) -> Attention {
    let Some(s) = &entry.status else {
        return Attention::default();
    };
    let beyond = |d: Duration, limit: Duration| if d > limit { d } else { Duration::ZERO };
    Attention {
        dead_letters: s.dead_letters,
        late: if s.paused {
            Duration::ZERO
        } else {
            beyond(s.lag_at(now), LATE)
        },
        untaken: entry.untaken,
        waiting: if s.paused {
            Duration::ZERO
        } else {
            beyond(s.oldest_ready_age_at(now).unwrap_or_default(), LATE)
        },
        untaken_ready: if entry.untaken { s.ready } else { 0 },
        long_pause: beyond(s.paused_for_at(now).unwrap_or_default(), LONG_PAUSE),
        quarantined: s.quarantined,
        unrun: entry.runners == Some(0),
    }
}
