//! `GET /api/search`: values by id or by text across every queue the
//! sampler knows (or one), in their pending elements, ready values and dead
//! letters, a bounded number per request ([`delayq::Client::search`]),
//! matched as the pages show them (each queue's codec).

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::search::{Search, SearchCursor, ValueState};

use super::action::failed;
use super::{show, thousands};
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::{epoch_ms, Shared};

/// Values one request looks at, most: well within the time a read may take.
pub(crate) const BUDGET: usize = 5_000;
/// Matches one request returns, most.
const MATCHES: usize = 50;

pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new().route("/api/search", get(search))
}

/// `GET /api/search` parameters: `text` (an id, or text in the values, any
/// case), `queue` (one queue; empty: every queue), `state` (`pending`,
/// `ready`, `dead`; empty: all three), `from` (the `next` of the answer
/// before).
#[derive(Debug, Deserialize)]
pub(crate) struct SearchQuery {
    #[serde(default)]
    text: String,
    #[serde(default)]
    queue: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    from: String,
}

async fn search(State(shared): State<Arc<Shared>>, Query(query): Query<SearchQuery>) -> Response {
    let work = run(&shared, &query);
    match guarded(&shared, Some(REDIS_WAIT), work).await {
        Ok(Ok(value)) => Json(value).into_response(),
        Ok(Err(e)) => failed(e),
        Err(why) => unavailable(&shared, why),
    }
}

async fn run(shared: &Arc<Shared>, query: &SearchQuery) -> delayq::Result<Value> {
    if query.text.is_empty() {
        return Err(delayq::Error::InvalidArgument(
            "type an id, or text in the values".into(),
        ));
    }
    let from: Option<SearchCursor> = Some(query.from.as_str())
        .filter(|f| !f.is_empty())
        .map(str::parse)
        .transpose()?;
    let states: Vec<ValueState> = match query.state.as_str() {
        "" => Vec::new(),
        state => vec![state.parse()?],
    };
    // The sampler's queues: no SCAN of the keyspace per request.
    let queues: Vec<String> = if query.queue.is_empty() {
        shared.queues.read().entries.keys().cloned().collect()
    } else {
        vec![query.queue.clone()]
    };
    let codecs = shared.clone();
    let search = Search::new(&query.text)
        .queues(queues)
        .states(&states)
        .budget(BUDGET)
        .limit(MATCHES)
        // The text the pages show; bytes no codec reads are matched as UTF-8.
        .render(move |queue, payload| {
            codecs
                .codec_of(queue)
                .decode_detected(payload)
                .0
                .unwrap_or_else(|_| String::from_utf8_lossy(payload).into_owned())
        });
    let page = shared.client.search(&search, from.as_ref()).await?;
    let matches: Vec<Value> = page
        .matches
        .iter()
        .map(|m| {
            let mut row = show(shared.codec_of(&m.queue), &m.payload);
            row["queue"] = json!(m.queue);
            row["state"] = json!(m.state.as_str());
            row["position"] = json!(m.position);
            row["id"] = json!(m.id);
            row["by_id"] = json!(m.by_id);
            row["due_ms"] = json!(m.due.map(epoch_ms));
            row["reason"] = json!(m.reason);
            row
        })
        .collect();
    let found = match matches.len() {
        0 => "no match".to_owned(),
        1 => "1 match".to_owned(),
        n => format!("{n} matches"),
    };
    let looked = format!(
        "searched {} of {} values",
        thousands(page.searched),
        thousands(page.total)
    );
    Ok(json!({
        "now_ms": epoch_ms(SystemTime::now()),
        "redis": health::json(shared),
        "matches": matches,
        "searched": page.searched,
        "total": page.total,
        "complete": page.next.is_none(),
        "next": page.next.as_ref().map(ToString::to_string),
        "message": match &page.next {
            None => format!("{found}; {looked}: all"),
            Some(_) => format!("{found}; {looked}; continue from there"),
        },
    }))
}
