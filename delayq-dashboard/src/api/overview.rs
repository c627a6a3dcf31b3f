//! `GET /api/overview`: every known queue's latest sample, filtered (by
//! name, ignoring case), sorted (by default: what needs attention first,
//! [`delayq::attention`]'s rule) and paged.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::attention::{name_matches, QueueOrder, Signals};
use delayq::QueueStatus;

use super::{next_hour, status_json};
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::sampler::{Entry, WorkerCounts};
use crate::{epoch_ms, Shared};

/// Rows of the overview per page, most.
const MAX_ROWS: usize = 500;

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
        let order: QueueOrder = query.sort.parse().unwrap_or_default();
        let mut matching: Vec<(&String, &Entry)> = Vec::new();
        for (name, entry) in &queues.entries {
            if let Some(s) = &entry.status {
                totals.pending += s.pending;
                totals.ready += s.ready;
                totals.priority_pending += s.priority_pending;
                totals.priority_ready += s.priority_ready;
                totals.grouped_pending += s.grouped_pending;
                totals.grouped_ready += s.grouped_ready;
                totals.in_flight += s.in_flight;
                totals.dead_letters += s.dead_letters;
                totals.quarantined += s.quarantined;
            }
            if name_matches(name, &query.filter) {
                matching.push((name, entry));
            }
        }
        // The library's rule, as `delayq list` sorts.
        matching.sort_by_cached_key(|(name, e)| order.key(name, e.status.as_ref(), signals(e), now));
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
        "sort": query.sort.parse::<QueueOrder>().unwrap_or_default().as_str(),
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

/// What the sampler knows of a queue beyond its counts, for the ranking.
pub(crate) fn signals(entry: &Entry) -> Signals {
    Signals::new()
        .with_untaken(entry.untaken)
        .with_unrun_schedules(entry.runners == Some(0))
}
