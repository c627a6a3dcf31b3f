//! `GET /api/overview`: every known queue's latest sample, filtered (by
//! name, ignoring case), sorted (by default: what needs attention first,
//! [`delayq::attention`]'s rule) and paged. A partitioned queue is one row,
//! its partitions' samples added up (`partitioned: {count, sampled}`); its
//! partitions are not rows of their own.

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
use crate::sampler::WorkerCounts;
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
        // Every sampled queue counted once: a partitioned queue's values are
        // its partitions' (its logical name has no keys of its own).
        let mut totals = QueueStatus::default();
        for entry in queues.entries.values() {
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
        }
        let order: QueueOrder = query.sort.parse().unwrap_or_default();
        // One row per queue as a reader names it: a partitioned queue is
        // one row, found by its name or any partition's; its partitions
        // are on its own page.
        let mut matching: Vec<Row> = Vec::new();
        for (name, entry) in &queues.entries {
            if !queues.is_partition(name) && name_matches(name, &query.filter) {
                matching.push(Row {
                    name: name.clone(),
                    status: entry.status,
                    error: entry.error.clone(),
                    runners: entry.runners,
                    workers: WorkerCounts::of(&entry.workers),
                    untaken: entry.untaken,
                    partitions: None,
                });
            }
        }
        for (name, layout) in &queues.partitioned {
            let named =
                name_matches(name, &query.filter) || layout.names().iter().any(|p| name_matches(p, &query.filter));
            if !named {
                continue;
            }
            let row = queues.partitioned_row(layout);
            matching.push(Row {
                name: name.clone(),
                status: row.status,
                error: row.error,
                runners: row.runners,
                workers: row.workers,
                untaken: row.untaken,
                partitions: Some((layout.names().to_vec(), row.sampled)),
            });
        }
        // The library's rule, as `delayq list` sorts.
        matching.sort_by_cached_key(|row| order.key(&row.name, row.status.as_ref(), row.signals(), now));
        let count = matching.len();
        let rows: Vec<Row> = matching.into_iter().skip(query.offset).take(limit).collect();
        let meta = json!({
            "discovered": queues.discovered,
            "cycles": queues.cycles,
            "last_cycle_ms": queues.last_cycle.map(|d| d.as_millis() as u64),
            "error": queues.error,
            // Queues as a reader names them (a partitioned queue once), and
            // of the queues sampled, how many are partitions.
            "queues": queues.logical_count(),
            "partitioned": queues.partitioned.len(),
            "partitions": queues.partition_of.len(),
        });
        (totals, count, rows, meta)
    };
    let wanted: Vec<(Vec<String>, bool)> = rows
        .iter()
        .map(|row| {
            let names = match &row.partitions {
                Some((names, _)) => names.clone(),
                None => vec![row.name.clone()],
            };
            (names, row.status.is_some_and(|s| s.pending > 0))
        })
        .collect();
    let hours: Vec<Option<Value>> = futures_util::stream::iter(wanted)
        .map(|(names, pending)| {
            let shared = shared.clone();
            async move {
                if pending {
                    next_hour_of(&shared, &names, now).await.ok()
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
            // null: an ordinary queue; else its partition count, and how
            // many of them are sampled yet (the counts are null until all are).
            row["partitioned"] = match &queue.partitions {
                Some((names, sampled)) => json!({"count": names.len(), "sampled": sampled}),
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

/// The next hour of `names` added up: one queue's, or a partitioned
/// queue's over its partitions (16 read at once).
async fn next_hour_of(shared: &Shared, names: &[String], now: SystemTime) -> delayq::Result<Value> {
    let mut hours: Vec<Value> = Vec::with_capacity(names.len());
    for chunk in names.chunks(16) {
        hours.extend(futures_util::future::try_join_all(chunk.iter().map(|name| next_hour(shared, name, now))).await?);
    }
    let mut overdue = 0;
    let mut buckets: Vec<u64> = Vec::new();
    for hour in &hours {
        overdue += hour["overdue"].as_u64().unwrap_or(0);
        let these = (hour["buckets"].as_array().into_iter().flatten()).map(|b| b.as_u64().unwrap_or(0));
        for (i, n) in these.enumerate() {
            match buckets.get_mut(i) {
                Some(sum) => *sum += n,
                None => buckets.push(n),
            }
        }
    }
    Ok(json!({"overdue": overdue, "bucket_ms": 300_000, "buckets": buckets}))
}

/// One row of the page, copied out of the sampler's map.
struct Row {
    name: String,
    status: Option<QueueStatus>,
    error: Option<String>,
    runners: Option<usize>,
    workers: WorkerCounts,
    untaken: bool,
    /// A partitioned queue's partitions, and how many are sampled yet.
    partitions: Option<(Vec<String>, usize)>,
}

impl Row {
    /// What the sampler knows beyond the counts, for the ranking.
    fn signals(&self) -> Signals {
        Signals::new()
            .with_untaken(self.untaken)
            .with_unrun_schedules(self.runners == Some(0))
    }
}
