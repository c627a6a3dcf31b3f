//! `GET /api/history?range=1h|24h|7d|30d[&name=Q]`: a queue's lasting
//! history (or, without `name`, the whole server's) as chart points, read
//! from Redis each time: what any dashboard kept, before a restart too.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::error;
use crate::health::{guarded, unavailable, REDIS_WAIT};
use crate::history::{self, Range, Series};
use crate::{epoch_ms, Shared};

pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new().route("/api/history", get(read))
}

/// `GET /api/history` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct HistoryQuery {
    name: Option<String>,
    range: Option<String>,
}

pub(crate) async fn read(State(shared): State<Arc<Shared>>, Query(query): Query<HistoryQuery>) -> Response {
    let text = query.range.as_deref().unwrap_or("1h");
    let Some(range) = Range::parse(text) else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("unknown range {text:?}: one of 1h, 24h, 7d, 30d"),
        );
    };
    let series = match &query.name {
        Some(name) => Series::Queue(name),
        None => Series::Server,
    };
    let now = epoch_ms(SystemTime::now());
    let read = history::read(&shared.client, series, range, now.div_euclid(60_000));
    match guarded(&shared, Some(REDIS_WAIT), read).await {
        Ok(Ok(points)) => Json(json!({
            "name": query.name,
            "range": text,
            "step_ms": range.step_ms(),
            "now_ms": now,
            "points": points.iter().map(history::Point::json).collect::<Vec<_>>(),
        }))
        .into_response(),
        Ok(Err(delayq::Error::InvalidQueueName { name, reason })) => error(
            StatusCode::BAD_REQUEST,
            format!("invalid queue name {name:?}: {reason}"),
        ),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(why) => unavailable(&shared, why),
    }
}
