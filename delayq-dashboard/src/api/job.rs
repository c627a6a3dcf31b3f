//! `GET /api/job?name=Q&id=ID`: where a job offered with an id is now and
//! its last attempts (`ReliableQueue::job`), for the job page.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::jobs::{Attempt, JobHistory, JobState};
use delayq::BytesCodec;

use super::error;
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::{epoch_ms, Shared};

pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new().route("/api/job", get(job))
}

/// `GET /api/job` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct JobQuery {
    name: String,
    id: String,
}

pub(crate) async fn job(State(shared): State<Arc<Shared>>, Query(query): Query<JobQuery>) -> Response {
    let read = async {
        let queue = shared
            .client
            .reliable_queue::<Bytes, _>(&query.name, BytesCodec)?
            .without_transfer();
        queue.job(&query.id).await
    };
    match guarded(&shared, Some(REDIS_WAIT), read).await {
        Ok(Ok(history)) => Json(history_json(&shared, &query.name, &history)).into_response(),
        Ok(Err(delayq::Error::InvalidQueueName { name, reason })) => error(
            StatusCode::BAD_REQUEST,
            format!("invalid queue name {name:?}: {reason}"),
        ),
        Ok(Err(delayq::Error::InvalidArgument(why))) => error(StatusCode::BAD_REQUEST, why),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(why) => unavailable(&shared, why),
    }
}

fn state_json(state: &JobState) -> Value {
    let (at, detail): (Option<SystemTime>, Value) = match state {
        JobState::Pending { due } => (Some(*due), json!({})),
        JobState::Ready { since } | JobState::Removed { since } => (Some(*since), json!({})),
        JobState::InFlight { since, delivery } => (Some(*since), json!({ "delivery": delivery })),
        JobState::DeadLettered { since, reason } => (Some(*since), json!({ "reason": reason })),
        JobState::Handled { at } | JobState::Deleted { at } => (Some(*at), json!({})),
        _ => (None, json!({})),
    };
    let mut out = detail;
    out["name"] = json!(state.name());
    out["at_ms"] = json!(at.map(epoch_ms));
    out
}

fn attempt_json(a: &Attempt) -> Value {
    json!({
        "started_ms": epoch_ms(a.started),
        "ended_ms": a.ended.map(epoch_ms),
        "worker": a.worker,
        "delivery": a.delivery,
        "outcome": a.outcome,
        "error": a.error,
        "chain": a.chain,
        "backtrace": a.backtrace,
    })
}

fn history_json(shared: &Shared, queue: &str, h: &JobHistory) -> Value {
    json!({
        "now_ms": epoch_ms(SystemTime::now()),
        // The header's account of the server, as every page's answer has.
        "redis": health::json(shared),
        "queue": queue,
        "id": h.id,
        "state": state_json(&h.state),
        "attempts_total": h.attempts_total,
        "attempts": h.attempts.iter().map(attempt_json).collect::<Vec<_>>(),
        // The queue's history switch: off, the page says only pending jobs are found.
        "history": match h.history {
            Some(keep) => json!({ "on": true, "keep_ms": keep.as_millis() as u64 }),
            None => json!({ "on": false }),
        },
    })
}
