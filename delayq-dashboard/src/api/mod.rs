//! The JSON API the pages poll and the actions they post, one file per
//! part of the pages: the overview, a queue's header and actions, a
//! partitioned queue's page, its
//! pending elements, its dead letters, its schedules and its groups, a job, a batch,
//! and the search across queues. Each part routes
//! its own paths ([`routes`]); this file holds what they share.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::{json, Value};

use delayq::{Codec, QueueStatus};

use super::sampler::view;
use crate::{epoch_ms, Shared};

pub(crate) mod action;
mod batch;
mod dead_letters;
mod events;
mod groups;
mod history;
mod job;
mod known;
mod overview;
mod partitioned;
mod pending;
mod queue;
mod schedules;
mod search;
mod workers;

/// Characters of a payload shown.
pub(crate) const PREVIEW: usize = 2_000;

/// Every API path and, unless the dashboard is read-only, every action.
pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    Router::new()
        .merge(overview::routes(read_only))
        .merge(queue::routes(read_only))
        .merge(partitioned::routes(read_only))
        .merge(groups::routes(read_only))
        .merge(pending::routes(read_only))
        .merge(dead_letters::routes(read_only))
        .merge(schedules::routes(read_only))
        .merge(events::routes(read_only))
        .merge(workers::routes(read_only))
        .merge(job::routes(read_only))
        .merge(batch::routes(read_only))
        .merge(history::routes(read_only))
        .merge(search::routes(read_only))
}

/// Overdue now, then twelve five-minute buckets of the next hour.
pub(crate) async fn next_hour(shared: &Shared, name: &str, now: SystemTime) -> delayq::Result<Value> {
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
            // Of pending and ready, the values in delayq's priority sets (a
            // priority, a TTL or headers): delayq's consumers take them
            // first; Java does not see them.
            "priority_pending": s.priority_pending,
            "priority_ready": s.priority_ready,
            // Of pending and ready, the values offered with a group key
            // (delayq's group keys): delayq's reliable consumers take them
            // in their key's order; Java does not see them.
            "grouped_pending": s.grouped_pending,
            "grouped_ready": s.grouped_ready,
            "in_flight": s.in_flight,
            // Of those, past their visibility timeout: a reaper returns
            // them, and the concurrency limit does not count them.
            "lapsed": s.lapsed,
            "concurrency_limit": s.concurrency_limit,
            "dead_letters": s.dead_letters,
            "quarantined": s.quarantined,
            "next_due_ms": s.next_due.map(epoch_ms),
            "lag_ms": s.lag_at(now).as_millis() as u64,
            "paused": s.paused,
            // null with ready values: their wait is unknown (no transfer
            // recorded the head's due time), never a guess.
            "oldest_ready_age_ms": s.oldest_ready_age_at(now).map(|age| age.as_millis() as u64),
            "paused_since_ms": s.paused_since.map(epoch_ms),
        }),
        None => json!({}),
    }
}

/// A payload decoded with the queue's codec, or as hex.
/// With a codec that detects (`--codec auto`), `codec` names the one found.
/// A Java object names its `class`; one whose fields were not read (a Kryo
/// POJO without a schema) says why in `unread`, and shows as hex. `json`
/// says the text is JSON (Java objects, JSON and Jackson payloads): the page
/// draws it as a tree.
pub(crate) fn show(codec: &dyn Codec<String>, payload: &[u8]) -> Value {
    let (decoded, detected) = codec.decode_detected(payload);
    let name = detected.as_deref().unwrap_or(codec.name());
    let java = if reads_java(name) {
        codec.java_object(payload)
    } else {
        None
    };
    let class = java.as_ref().map(|j| j.class.as_str());
    let unread = java.as_ref().and_then(|j| j.unread.as_deref());
    let why = match (unread, decoded) {
        (Some(why), _) => why.to_owned(),
        (None, Err(e)) => codec.diagnose(payload).map_or_else(|| e.to_string(), str::to_owned),
        (None, Ok(text)) => {
            let json = java.is_some() || matches!(inner(name), "json" | "jackson");
            return json!({"text": preview(&text), "decoded": true, "codec": detected, "class": class, "json": json});
        }
    };
    json!({"text": hex(&payload[..payload.len().min(PREVIEW / 2)]), "decoded": false, "codec": detected,
           "class": class, "unread": unread, "error": why})
}

/// A value's headers (`OfferOptions::header`) as a JSON object of strings,
/// by key; `{}` for none. They are the offerer's text: the pages put them
/// in as text, as they do payloads.
pub(crate) fn headers_json(headers: &delayq::Headers) -> Value {
    json!(headers.as_map())
}

/// The codec inside a compression (`lz4/jackson`: `jackson`; `lz4`: Kryo).
fn inner(codec: &str) -> &str {
    match codec.split_once('/') {
        Some((_, inner)) => inner,
        None if matches!(codec, "lz4" | "lz4v2" | "snappy" | "zstd") => "kryo",
        None => codec,
    }
}

/// Whether values of the codec named `codec` are Java objects.
fn reads_java(codec: &str) -> bool {
    matches!(inner(codec), "kryo" | "serialization" | "marshalling" | "auto")
}

pub(crate) fn preview(text: &str) -> String {
    match text.char_indices().nth(PREVIEW) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// 12345 -> "12,345", as the pages write counts.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn error(status: StatusCode, message: String) -> Response {
    (status, Json(json!({"ok": false, "error": message}))).into_response()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_get_thousands_separators() {
        assert_eq!(super::thousands(200_000), "200,000");
        assert_eq!(super::thousands(999), "999");
    }
}
