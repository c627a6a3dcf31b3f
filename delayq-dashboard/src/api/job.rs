//! `GET /api/job?name=Q&id=ID`: where a job offered with an id is now, its
//! last attempts, its cancel, its last progress and its result
//! (`ReliableQueue::job`), and the batch it is a member of, for the job
//! page; and `POST /api/actions/cancel-job` (`ReliableQueue::cancel_job`),
//! its Cancel button.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::fred::interfaces::ListInterface;
use delayq::jobs::{Attempt, CancelOutcome, JobHistory, JobState};
use delayq::BytesCodec;

use super::action::{act, done, failed};
use super::batch::{member_of, status_json};
use super::error;
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::{epoch_ms, Shared};

pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    let router = Router::new().route("/api/job", get(job));
    if read_only {
        return router;
    }
    router.route("/api/actions/cancel-job", post(cancel_job))
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
        let history = queue.job(&query.id).await?;
        let dead = match history.state {
            JobState::DeadLettered { .. } => dead_letter_of(&shared, &queue, &query.name, &query.id).await?,
            _ => None,
        };
        let batch = match member_of(&query.id) {
            // An id of a batch's shape whose batch is not there (or one the
            // library refuses as a batch id) is a job like any other.
            Some((batch, n)) => match queue.batch(batch).await {
                Ok(found) => found.map(|status| (status, n)),
                Err(delayq::Error::InvalidArgument(_)) => None,
                Err(e) => return Err(e),
            },
            None => None,
        };
        Ok::<_, delayq::Error>((history, dead, batch))
    };
    match guarded(&shared, Some(REDIS_WAIT), read).await {
        Ok(Ok((history, dead, batch))) => {
            let mut page = history_json(&shared, &query.name, &history);
            // The batch a member (`<batch>/<n>`) belongs to, for the link
            // to its page: its number in it and the batch's counts.
            page["batch"] = match batch {
                Some((status, n)) => {
                    let mut batch = status_json(&status);
                    batch["member"] = json!(n);
                    batch
                }
                None => Value::Null,
            };
            // Where its dead letter is, for the page's Requeue and Delete
            // (the dead-letter page's actions, named by this key) and the
            // link to its row.
            page["dead_letter"] = match dead {
                Some((index, key)) => json!({ "index": index, "key": key.to_string() }),
                None => Value::Null,
            };
            page["dead_letters_looked"] = json!(LOOK_BACK);
            Json(page).into_response()
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

/// Most recent dead letters looked through for a job's own.
const LOOK_BACK: i64 = 10_000;
/// Reason records read per step while looking.
const STEP: i64 = 1_000;

/// The index and key of the job's dead letter: the most recent one naming
/// the job, among the 10,000 most recent. Only the small reason records are
/// read (a job's names its id, `<ms> \x1e<length>:<id>...`), from the tail
/// back, then the one dead letter they point at, whose own record must name
/// the job (the list may move between the reads: then none, until the
/// next poll).
async fn dead_letter_of(
    shared: &Shared,
    queue: &delayq::ReliableQueue<Bytes>,
    name: &str,
    id: &str,
) -> delayq::Result<Option<(usize, delayq::dead_letter::DeadLetterKey)>> {
    let keys = delayq::QueueKeys::new(name)?;
    let redis = shared.client.redis().next();
    let total: i64 = redis.llen(keys.dead_letter()).await?;
    let recorded: i64 = redis.llen(keys.dead_reasons()).await?;
    // The reasons list ends where the dead-letter list does.
    let offset = total - recorded;
    let mark = format!("\x1e{}:{id}", id.len());
    let names_job = |record: &[u8]| {
        record
            .iter()
            .position(|&b| b == b' ')
            .is_some_and(|space| after_headers(&record[space + 1..]).starts_with(mark.as_bytes()))
    };
    let stop = (recorded - LOOK_BACK).max(0);
    let mut end = recorded;
    while end > stop {
        let start = (end - STEP).max(stop);
        let records: Vec<Bytes> = redis.lrange(keys.dead_reasons(), start, end - 1).await?;
        if let Some(at) = records.iter().rposition(|record| names_job(record)) {
            let index = usize::try_from(offset + start + at as i64).unwrap_or(0);
            let dead = queue.dead_letter_page(index, 1).await?;
            return Ok(dead
                .into_iter()
                .find(|dead| dead.job.as_deref() == Some(id))
                .map(|dead| (index, dead.key)));
        }
        end = start;
    }
    Ok(None)
}

fn state_json(state: &JobState) -> Value {
    let (at, detail): (Option<SystemTime>, Value) = match state {
        JobState::Pending { due } => (Some(*due), json!({})),
        JobState::Ready { since } | JobState::Removed { since } => (Some(*since), json!({})),
        JobState::InFlight { since, delivery } => (Some(*since), json!({ "delivery": delivery })),
        JobState::DeadLettered { since, reason } => (Some(*since), json!({ "reason": reason })),
        JobState::Handled { at } | JobState::Deleted { at } => (Some(*at), json!({})),
        JobState::Cancelled { at, how } => (Some(*at), json!({ "how": how })),
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
        "finished": h.is_finished(),
        // When a cancel was asked, while the job has not ended.
        "cancel_requested_ms": h.cancel_requested.map(epoch_ms),
        // What its handler reported last: the value (the page draws a
        // number as a bar) and the same pretty-printed, as text.
        "progress": h.progress.as_ref().map(|p| json!({
            "value": p.value,
            "pretty": pretty(&p.value),
            "at_ms": epoch_ms(p.at),
            "delivery": p.delivery,
        })),
        // The result its handler returned, pretty-printed: the handler's
        // text, which the page puts in as text.
        "result": h.result.as_ref().map(|r| json!({
            "pretty": match serde_json::from_slice::<Value>(&r.json) {
                Ok(value) => pretty(&value),
                Err(_) => String::from_utf8_lossy(&r.json).into_owned(),
            },
            "bytes": r.json.len(),
            "at_ms": epoch_ms(r.at),
        })),
    })
}

/// A JSON value indented, two spaces a level.
fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// The form the Cancel button posts.
#[derive(Debug, Deserialize)]
pub(crate) struct CancelForm {
    name: String,
    id: String,
}

/// Stops a job wherever it is, answered with what that did
/// ([`CancelOutcome`]) as a sentence and as `outcome`.
pub(crate) async fn cancel_job(State(shared): State<Arc<Shared>>, Form(form): Form<CancelForm>) -> Response {
    act(&shared, async {
        let cancel = async {
            let queue = shared
                .client
                .reliable_queue::<Bytes, _>(&form.name, BytesCodec)?
                .without_transfer();
            queue.cancel_job(&form.id).await
        };
        match cancel.await {
            Ok(outcome) => {
                let (kind, message) = cancel_said(&form.name, &form.id, &outcome);
                done(message, json!({ "outcome": kind }))
            }
            Err(e) => failed(e),
        }
    })
    .await
}

/// A cancel's outcome: its name and a sentence for the page (the id as
/// the operator typed it, quoted: it is anyone's text).
fn cancel_said(queue: &str, id: &str, outcome: &CancelOutcome) -> (&'static str, String) {
    match outcome {
        CancelOutcome::Pending => (
            "pending",
            format!("cancelled job {id:?}: it was pending, and its element is removed; it will never be due"),
        ),
        CancelOutcome::Queued { state } => (
            "queued",
            format!("cancel asked for job {id:?} ({state}): it will not run; the take that reaches it drops it"),
        ),
        CancelOutcome::Running { delivery } => (
            "running",
            format!(
                "cancel asked for job {id:?}, which runs (delivery {delivery}): its worker tells its handler \
                 within its cancel poll (500 ms by default), and a handler that stops settles it as cancelled"
            ),
        ),
        CancelOutcome::Finished { state } => (
            "finished",
            format!("job {id:?} had already ended ({state}): nothing changed"),
        ),
        // Unknown (and a kind a later library adds: nothing found to say).
        _ => (
            "unknown",
            format!(
                "no job {id:?} in {queue}: no such id pending, and no history of it. Ready and running jobs \
                 are found only with the queue's job history on (delayq job {queue} --history on)"
            ),
        ),
    }
}

/// A reason record's text after the headers a value was offered with
/// (`\x1d`, `H`, 5 digits of length, the JSON; `lua/lib/element.lua`),
/// where a job's mark starts.
fn after_headers(reason: &[u8]) -> &[u8] {
    let Some(rest) = reason.strip_prefix(b"\x1dH") else {
        return reason;
    };
    let len = rest
        .get(..5)
        .filter(|digits| digits.iter().all(u8::is_ascii_digit))
        .and_then(|digits| std::str::from_utf8(digits).ok()?.parse::<usize>().ok());
    match len {
        Some(len) if rest.len() >= 5 + len => &rest[5 + len..],
        _ => reason,
    }
}

#[cfg(test)]
mod header_tests {
    #[test]
    fn a_job_mark_is_found_after_the_headers() {
        assert_eq!(super::after_headers(b"\x1dH00002{}\x1e1:xwhy"), b"\x1e1:xwhy");
        assert_eq!(super::after_headers(b"\x1e1:xwhy"), b"\x1e1:xwhy");
        assert_eq!(super::after_headers(b"\x1dH00009{}"), b"\x1dH00009{}");
    }
}
