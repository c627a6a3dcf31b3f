//! The JSON the pages poll: `GET /api/overview` and `GET /api/queue`.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::{BytesCodec, Codec, QueueStatus};

use super::health::{self, guarded, unavailable, REDIS_WAIT};
use super::sampler::{view, Entry};
use super::{epoch_ms, Shared};

/// Rows of the overview per page, most.
const MAX_ROWS: usize = 500;
/// Pending elements per page of the queue page, most.
const MAX_PAGE: usize = 500;
/// Characters of a payload shown.
const PREVIEW: usize = 2_000;

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
        let mut matching: Vec<(&String, &Entry)> = Vec::new();
        for (name, entry) in &queues.entries {
            if let Some(s) = &entry.status {
                totals.pending += s.pending;
                totals.ready += s.ready;
                totals.in_flight += s.in_flight;
                totals.dead_letters += s.dead_letters;
                totals.quarantined += s.quarantined;
            }
            if query.filter.is_empty() || name.contains(&query.filter) {
                matching.push((name, entry));
            }
        }
        let key = |e: &Entry, f: fn(&QueueStatus) -> u64| e.status.as_ref().map_or(0, f);
        match query.sort.as_str() {
            "pending" => matching.sort_by_key(|(_, e)| std::cmp::Reverse(key(e, |s| s.pending))),
            "dead" => matching.sort_by_key(|(_, e)| std::cmp::Reverse(key(e, |s| s.dead_letters))),
            "lag" => matching
                .sort_by_key(|(_, e)| std::cmp::Reverse(e.status.as_ref().map_or(Duration::ZERO, |s| s.lag_at(now)))),
            _ => {}
        }
        let rows: Vec<(String, Option<QueueStatus>, Option<String>)> = matching
            .iter()
            .skip(query.offset)
            .take(limit)
            .map(|(name, entry)| ((*name).clone(), entry.status, entry.error.clone()))
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
        .map(|(name, status, _)| (name.clone(), status.is_some_and(|s| s.pending > 0)))
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
        .map(|((name, status, error), hour)| {
            let mut row = status_json(status.as_ref(), now);
            row["name"] = json!(name);
            row["error"] = json!(error);
            row["due_next_hour"] = hour.unwrap_or(Value::Null);
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
        "offset": query.offset,
        "limit": limit,
        "queues": queues,
    }))
    .into_response()
}

/// `GET /api/queue` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct QueueQuery {
    name: String,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
}

/// One queue, read now: counts, a page of pending elements, the ready
/// list's head, dead letters, the next hour and the sampled history.
pub(crate) async fn queue(State(shared): State<Arc<Shared>>, Query(query): Query<QueueQuery>) -> Response {
    let read = match guarded(&shared, Some(REDIS_WAIT), read_queue(&shared, &query)).await {
        Ok(read) => read,
        Err(why) => return unavailable(&shared, why),
    };
    match read {
        Ok(mut value) => {
            value["redis"] = health::json(&shared);
            Json(value).into_response()
        }
        Err(delayq::Error::InvalidQueueName { name, reason }) => error(
            StatusCode::BAD_REQUEST,
            format!("invalid queue name {name:?}: {reason}"),
        ),
        // A command that failed as Redis went away: the outage, not a 500.
        Err(_) if !shared.health.borrow().up => {
            let health = shared.health.borrow().clone();
            unavailable(&shared, health::Unavailable::Down(health))
        }
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn read_queue(shared: &Shared, query: &QueueQuery) -> delayq::Result<Value> {
    let now = SystemTime::now();
    let limit = query.limit.unwrap_or(50).clamp(1, MAX_PAGE);
    let name = query.name.as_str();
    let delayed = view(&shared.client, name)?;
    let status = delayed.status().await?;
    let page = delayed.pending_page(query.offset, limit).await?;
    let elements: Vec<Value> = page
        .iter()
        .map(|element| {
            let mut shown = match &element.value {
                Ok(payload) => show(&*shared.codec, payload),
                Err(_) => json!({"text": hex(&element.raw), "decoded": false, "error": "no element format unpacks it"}),
            };
            shown["due_ms"] = json!(epoch_ms(element.due));
            shown["id"] = json!(element.id);
            shown["format"] = json!(element.format.map_or("malformed", |f| f.as_str()));
            shown["size"] = json!(element.raw.len());
            shown
        })
        .collect();
    let ready: Vec<Value> = shared
        .client
        .blocking_queue(name, BytesCodec)?
        .read_range(0, 10)
        .await?
        .iter()
        .map(|raw: &bytes::Bytes| show(&*shared.codec, raw))
        .collect();
    let dead: Vec<Value> = if status.dead_letters > 0 {
        shared
            .client
            .reliable_queue::<bytes::Bytes, _>(name, BytesCodec)?
            .without_transfer()
            .dead_letter_page(0, 50)
            .await?
            .iter()
            .map(|dead| {
                let mut shown = show(&*shared.codec, &dead.raw);
                // The reason recorded when it was dead-lettered; for older
                // values, what can be told from the value.
                shown["reason"] = match &dead.reason {
                    Some(reason) => json!(reason),
                    None => json!((shown["decoded"] == json!(false))
                        .then(|| format!("does not decode with the {} codec", shared.codec.name()))),
                };
                shown["at_ms"] = json!(dead.at.map(epoch_ms));
                shown
            })
            .collect()
    } else {
        Vec::new()
    };
    let hour = if status.pending > 0 {
        next_hour(shared, name, now).await?
    } else {
        Value::Null
    };
    let (history, sampled) = {
        let queues = shared.queues.read();
        match queues.entries.get(name) {
            Some(entry) => (
                entry
                    .history
                    .iter()
                    .map(|m| {
                        json!({
                            "minute_ms": m.minute * 60_000,
                            "transferred": m.transferred,
                            "delivered": m.delivered,
                            "dead_lettered": m.dead_lettered,
                            "lag_p50_ms": m.lag_quantile(0.5),
                            "lag_p99_ms": m.lag_quantile(0.99),
                        })
                    })
                    .collect::<Vec<_>>(),
                true,
            ),
            None => (Vec::new(), false),
        }
    };
    Ok(json!({
        "name": name,
        "now_ms": epoch_ms(now),
        "read_only": shared.read_only,
        "codec": shared.codec.name(),
        "status": status_json(Some(&status), now),
        "exists": status.exists,
        "pending": {"offset": query.offset, "limit": limit, "total": status.pending, "elements": elements},
        "ready_head": ready,
        "dead_letters": {"total": status.dead_letters, "items": dead},
        "due_next_hour": hour,
        "history": history,
        "sampled": sampled,
        "schedules": super::schedules::json(shared, name).await?,
        "sample_interval_ms": shared.sample_interval.as_millis() as u64,
    }))
}

/// Overdue now, then twelve five-minute buckets of the next hour.
async fn next_hour(shared: &Shared, name: &str, now: SystemTime) -> delayq::Result<Value> {
    let edges: Vec<SystemTime> = (0..=12).map(|i| now + Duration::from_secs(300 * i)).collect();
    let by = view(&shared.client, name)?.count_due_by(&edges).await?;
    let buckets: Vec<u64> = by.windows(2).map(|w| w[1].saturating_sub(w[0])).collect();
    Ok(json!({"overdue": by[0], "bucket_ms": 300_000, "buckets": buckets}))
}

/// Counts and times of a status as JSON.
pub(crate) fn status_json(status: Option<&QueueStatus>, now: SystemTime) -> Value {
    match status {
        Some(s) => json!({
            "pending": s.pending,
            "ready": s.ready,
            "in_flight": s.in_flight,
            "dead_letters": s.dead_letters,
            "quarantined": s.quarantined,
            "next_due_ms": s.next_due.map(epoch_ms),
            "lag_ms": s.lag_at(now).as_millis() as u64,
            "paused": s.paused,
        }),
        None => json!({}),
    }
}

/// A payload decoded with the dashboard's codec, or as hex.
/// With a codec that detects (`--codec auto`), `codec` names the one found.
pub(crate) fn show(codec: &dyn Codec<String>, payload: &[u8]) -> Value {
    let (decoded, detected) = codec.decode_detected(payload);
    match decoded {
        Ok(text) => json!({"text": preview(&text), "decoded": true, "codec": detected}),
        Err(e) => {
            let hint = codec.diagnose(payload);
            json!({"text": hex(&payload[..payload.len().min(PREVIEW / 2)]), "decoded": false, "codec": detected,
                   "error": hint.map_or_else(|| e.to_string(), str::to_owned)})
        }
    }
}

fn preview(text: &str) -> String {
    match text.char_indices().nth(PREVIEW) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn error(status: StatusCode, message: String) -> Response {
    (status, Json(json!({"ok": false, "error": message}))).into_response()
}
