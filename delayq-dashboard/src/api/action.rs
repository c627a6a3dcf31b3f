//! What every action shares: each is a `POST` (the guard has checked the
//! token, the site and the CSRF token) calling one of the library's
//! operations, answered with a message, or 503 while Redis is away.

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::error;
use crate::health::{guarded, unavailable};
use crate::Shared;

/// How long one action may keep going (batches of a big queue), unless
/// [`Dashboard::action_time`](crate::Dashboard::action_time) says otherwise.
pub(crate) const ACTION_TIME: Duration = Duration::from_secs(60);
/// Elements per step: each step is one short atomic script.
pub(crate) const BATCH: usize = 1_000;

pub(crate) fn done(message: String, extra: serde_json::Value) -> Response {
    let mut body = json!({"ok": true, "message": message});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    Json(body).into_response()
}

/// What an answer adds when the time ran out with `left` still to do.
pub(crate) fn press_again(left: u64) -> String {
    match left {
        0 => String::new(),
        n => format!("; {n} left, press again"),
    }
}

/// An action's answer, or 503 at once if Redis is unreachable or goes
/// away while it runs (the atomic steps it finished stay done).
pub(crate) async fn act(shared: &Shared, work: impl std::future::Future<Output = Response>) -> Response {
    match guarded(shared, None, work).await {
        Ok(answer) => answer,
        Err(why) => unavailable(shared, why),
    }
}

pub(crate) fn failed(e: delayq::Error) -> Response {
    let status = match e {
        delayq::Error::InvalidQueueName { .. } | delayq::Error::InvalidArgument(_) => StatusCode::BAD_REQUEST,
        delayq::Error::DeadLetterCountChanged { .. } | delayq::Error::DeadLetterChanged { .. } => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.to_string())
}

/// Why an action did nothing.
pub(crate) enum Refused {
    /// The queue is paused: nothing is moved on purpose.
    Paused,
    Failed(delayq::Error),
}

impl From<delayq::Error> for Refused {
    fn from(e: delayq::Error) -> Self {
        Refused::Failed(e)
    }
}

pub(crate) fn paused(name: &str) -> String {
    format!("{name} is paused: nothing moves until it is resumed (Resume, or `delayq resume`)")
}
