//! Search among the pending elements, by id (the id index) or by text (a
//! bounded scan in due order that says how far it looked), and the jump to
//! a due time (one `ZCOUNT`).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::super::action::failed;
use super::super::{hex, thousands};
use super::{due_before, element_json};
use crate::health::{guarded, unavailable, REDIS_WAIT};
use crate::sampler::view;
use crate::Shared;

/// Elements one text search looks at, most: it says how far it got, and
/// the page goes on from there.
pub(crate) const SCAN: usize = 10_000;
/// Matches one text search returns, most.
pub(crate) const MATCHES: usize = 50;
/// Elements read per script run of a text search.
const SCAN_STEP: usize = 1_000;
/// A text search stops after this long (and says how far it looked), well
/// within the time a read may take.
const SCAN_TIME: Duration = Duration::from_millis(1_500);

/// `GET /api/pending/search` parameters: `id` (exact, through the id index)
/// or `text` (a substring of the decoded payload or of the id, in any case,
/// from rank `from`).
#[derive(Debug, Deserialize)]
pub(crate) struct SearchQuery {
    name: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    from: usize,
}

/// Finds pending elements: by id (two lookups), or by text in a bounded scan
/// in due order that answers how far it looked and where to go on.
pub(crate) async fn search(State(shared): State<Arc<Shared>>, Query(query): Query<SearchQuery>) -> Response {
    let work = async {
        if !query.id.is_empty() {
            search_id(&shared, &query).await
        } else if !query.text.is_empty() {
            search_text(&shared, &query).await
        } else {
            Err(delayq::Error::InvalidArgument("search for an id or a text".into()))
        }
    };
    answer(&shared, guarded(&shared, Some(REDIS_WAIT), work).await)
}

async fn search_id(shared: &Shared, query: &SearchQuery) -> delayq::Result<Value> {
    let queue = view(&shared.client, &query.name)?;
    let Some(element) = queue.pending_by_id(&query.id).await? else {
        return Ok(json!({"matches": [], "message": format!("no pending element has the id {:?}", query.id)}));
    };
    // Its page: where elements due before it end (an equal due time may
    // put it a few places further).
    let rank = due_before(&queue, element.due).await?;
    Ok(json!({"matches": [element_json(shared, &query.name, &element, rank)], "message": "found by its id"}))
}

async fn search_text(shared: &Shared, query: &SearchQuery) -> delayq::Result<Value> {
    let queue = view(&shared.client, &query.name)?;
    let total = queue.len().await?;
    // Case-insensitive: an operator types "ord-42" for "ORD-42".
    let needle = query.text.to_lowercase();
    let (started, mut at, mut matches) = (Instant::now(), query.from, Vec::new());
    while at < total && at - query.from < SCAN && matches.len() < MATCHES && started.elapsed() < SCAN_TIME {
        let step = SCAN_STEP.min(SCAN - (at - query.from));
        let page = queue.pending_page(at, step).await?;
        if page.is_empty() {
            break;
        }
        for element in &page {
            if matches.len() == MATCHES {
                break;
            }
            let text = match &element.value {
                Ok(payload) => shared
                    .codec_of(&query.name)
                    .decode(payload)
                    .unwrap_or_else(|_| hex(payload)),
                Err(_) => hex(&element.raw),
            };
            at += 1;
            let id = element.id.as_deref().unwrap_or_default();
            if text.to_lowercase().contains(&needle) || id.to_lowercase().contains(&needle) {
                matches.push(element_json(shared, &query.name, element, at - 1));
            }
        }
    }
    let complete = at >= total;
    let looked = if at > query.from {
        format!(
            "looked at elements {}–{} of {}",
            thousands((query.from + 1) as u64),
            thousands(at as u64),
            thousands(total as u64)
        )
    } else {
        format!(
            "nothing to look at from element {} of {}",
            thousands((query.from + 1) as u64),
            thousands(total as u64)
        )
    };
    let found = match matches.len() {
        0 => "no match".to_owned(),
        1 => "1 match".to_owned(),
        n => format!("{n} matches"),
    };
    Ok(json!({
        "matches": matches,
        "from": query.from,
        "to": at,
        "total": total,
        "complete": complete,
        "message": format!("{found}; {looked}{}", if complete { "" } else { "; continue from there" }),
    }))
}

/// `GET /api/pending/jump` parameters: `at_ms`, a due time.
#[derive(Debug, Deserialize)]
pub(crate) struct JumpQuery {
    name: String,
    at_ms: i64,
}

/// The rank of the first element due at `at_ms` or later: the page offset
/// that starts there (one `ZCOUNT`, whatever the queue's size).
pub(crate) async fn jump(State(shared): State<Arc<Shared>>, Query(query): Query<JumpQuery>) -> Response {
    let work = async {
        let queue = view(&shared.client, &query.name)?;
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(query.at_ms.max(0) as u64);
        let offset = due_before(&queue, at).await?;
        let total = queue.len().await?;
        Ok(json!({"offset": offset, "total": total}))
    };
    answer(&shared, guarded(&shared, Some(REDIS_WAIT), work).await)
}

fn answer(shared: &Shared, read: Result<delayq::Result<Value>, crate::health::Unavailable>) -> Response {
    match read {
        Ok(Ok(value)) => Json(value).into_response(),
        Ok(Err(e)) => failed(e),
        Err(why) => unavailable(shared, why),
    }
}
