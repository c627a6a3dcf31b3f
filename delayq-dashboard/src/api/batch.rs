//! `GET /api/batch?name=Q&id=BID`: a batch's state and counts
//! (`DelayedQueue::batch`), for the batch page; and which batch a job is a
//! member of (its id `<batch>/<n>`), for the job page's link.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::batch::BatchStatus;

use super::error;
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::sampler::view;
use crate::{epoch_ms, Shared};

/// Read-only: the same route either way.
pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new().route("/api/batch", get(batch))
}

/// `GET /api/batch` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct BatchQuery {
    name: String,
    id: String,
}

/// The batch as JSON; 404 with `"found": false` when there is none (never
/// offered, or its record expired), 400 for an id or a queue name the
/// library refuses.
pub(crate) async fn batch(State(shared): State<Arc<Shared>>, Query(query): Query<BatchQuery>) -> Response {
    let read = async { view(&shared.client, &query.name)?.batch(&query.id).await };
    match guarded(&shared, Some(REDIS_WAIT), read).await {
        Ok(Ok(Some(status))) => {
            let mut page = status_json(&status);
            page["now_ms"] = json!(epoch_ms(SystemTime::now()));
            // The header's account of the server, as every page's answer has.
            page["redis"] = health::json(&shared);
            page["queue"] = json!(query.name);
            Json(page).into_response()
        }
        Ok(Ok(None)) => {
            // The page says so in place of the numbers: not an outage.
            let body = json!({
                "ok": false,
                "found": false,
                "error": format!("no such batch {:?} in {}: never offered, or its record expired", query.id, query.name),
                "redis": health::json(&shared),
            });
            (StatusCode::NOT_FOUND, Json(body)).into_response()
        }
        Ok(Err(delayq::Error::InvalidQueueName { name, reason })) => error(
            StatusCode::BAD_REQUEST,
            format!("invalid queue name {name:?}: {reason}"),
        ),
        Ok(Err(delayq::Error::InvalidArgument(why))) => error(StatusCode::BAD_REQUEST, why),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(why) => unavailable(&shared, why),
    }
}

/// A batch's state and counts: `ended` is handled, dead-lettered and
/// cancelled together (the page's bar); times in ms since the epoch.
pub(crate) fn status_json(status: &BatchStatus) -> Value {
    json!({
        "id": status.id,
        "state": status.state.name(),
        "total": status.total,
        "offered": status.offered,
        "handled": status.handled,
        "dead_lettered": status.dead_lettered,
        "cancelled": status.cancelled,
        "ended": status.ended(),
        "created_ms": epoch_ms(status.created),
        "completed_ms": status.completed.map(epoch_ms),
        // The queue its completion goes to, if it asked for one.
        "target": status.target,
    })
}

/// Most bytes of a batch id (`BatchOptions::id`).
const MAX_BATCH_ID: usize = 128;

/// The batch and number of a member's job id, `<batch>/<n>` (`n` from 1):
/// `None` for an id of another shape, so asking never makes a job page fail.
pub(crate) fn member_of(job: &str) -> Option<(&str, u64)> {
    let (batch, n) = job.split_once('/')?;
    let n = n
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| n.parse::<u64>().ok())
        .flatten()?;
    (!batch.is_empty() && batch.len() <= MAX_BATCH_ID && n >= 1).then_some((batch, n))
}

#[cfg(test)]
mod tests {
    use super::member_of;

    #[test]
    fn a_members_id_names_its_batch_and_number() {
        assert_eq!(member_of("import-7/12"), Some(("import-7", 12)));
        assert_eq!(member_of("<b>x<b>/1"), Some(("<b>x<b>", 1)));
        for other in [
            "order-42",
            "a/0",
            "a/",
            "/3",
            "a/b/3",
            "a/+3",
            "a/3x",
            &format!("{}/1", "x".repeat(129)),
        ] {
            assert_eq!(member_of(other), None, "{other}");
        }
    }
}
