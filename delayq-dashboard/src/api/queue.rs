//! `GET /api/queue`: one queue read now (counts, the ready list's head,
//! the next hour, the sampled history, with the pending and dead-letter
//! sections of their own files); and the actions on the whole queue:
//! move due now, pause, resume, set limits, purge, migrate.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::format::Format;
use delayq::{BytesCodec, QueueStatus};

use super::action::{act, done, failed, paused, press_again, Refused, BATCH};
use super::known::{did_you_mean, known};
use super::{dead_letters, error, headers_json, next_hour, pending, show, status_json};
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::sampler::view;
use crate::{epoch_ms, Shared};

pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    let router = Router::new().route("/api/queue", get(queue));
    if read_only {
        return router;
    }
    router
        .route("/api/actions/move-due", post(move_due))
        .route("/api/actions/pause", post(pause))
        .route("/api/actions/resume", post(resume))
        .route("/api/actions/limits", post(limits))
        .route("/api/actions/purge", post(purge))
        .route("/api/actions/migrate", post(migrate))
}

/// The form the whole-queue actions post.
#[derive(Debug, Deserialize)]
pub(crate) struct ActionForm {
    name: String,
    /// Purge: the queue's name, typed again.
    #[serde(default)]
    confirm: String,
    /// Migrate: `modern` or `legacy`.
    #[serde(default)]
    to: String,
    /// Limits: most values (empty: no limit).
    #[serde(default)]
    max_size: String,
    /// Limits: most payload bytes (empty: no limit).
    #[serde(default)]
    max_payload: String,
    /// Limits: `on` or `off`.
    #[serde(default)]
    offers: String,
    /// Limits: `on` or `off`.
    #[serde(default)]
    takes: String,
    /// Limits: most delayq deliveries in flight across every process
    /// (empty: no limit; absent: the queue's limit stays as it is, so a
    /// page or script that never showed the field does not lift it).
    #[serde(default)]
    concurrency: Option<String>,
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
    let limit = query.limit.unwrap_or(50).clamp(1, pending::MAX_PAGE);
    let name = query.name.as_str();
    let delayed = view(&shared.client, name)?;
    let status = delayed.status().await?;
    let ready = ready_head(shared, name, &status).await?;
    let pending = pending::page(shared, name, query.offset, limit, &status).await?;
    let dead = dead_letters::section(shared, name, &status).await?;
    let hour = if status.pending > 0 {
        next_hour(shared, name, now).await?
    } else {
        Value::Null
    };
    let (history, sampled, untaken) = {
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
                            "lag_p50_ms": m.lag_p50(),
                            "lag_p99_ms": m.lag_p99(),
                        })
                    })
                    .collect::<Vec<_>>(),
                true,
                entry.untaken,
            ),
            None => (Vec::new(), false, false),
        }
    };
    let limits = delayed.limits().await?;
    let known = known(shared, name, &status).await?;
    let suggestions = if known { Vec::new() } else { did_you_mean(shared, name) };
    Ok(json!({
        "name": name,
        "known": known,
        "did_you_mean": suggestions,
        "now_ms": epoch_ms(now),
        "read_only": shared.read_only,
        "codec": shared.codec_of(name).name(),
        "status": status_json(Some(&status), now),
        "exists": status.exists,
        "pending": pending,
        "ready_head": ready,
        "dead_letters": dead,
        "due_next_hour": hour,
        "history": history,
        "sampled": sampled,
        // Ready values nobody takes, as the sampler judged (see the overview).
        "untaken": untaken,
        "schedules": super::schedules::json(shared, name).await?,
        "groups": super::groups::section(shared, name).await?,
        "limits": {
            "text": limits.to_string(),
            "max_size": limits.size_limit(),
            "max_payload": limits.payload_limit(),
            "offers": limits.offers_on(),
            "takes": limits.takes_on(),
            // At most this many delayq deliveries in flight (the status's
            // in_flight) across every process; null: no limit.
            "concurrency": limits.concurrency_limit(),
        },
        "sample_interval_ms": shared.sample_interval.as_millis() as u64,
    }))
}

/// Values the ready list's head shows.
const READY_HEAD: usize = 10;

/// The first [`READY_HEAD`] ready values in the order consumers take them:
/// the values of delayq's ready set (highest level first, then in offer
/// order), then the plain list's head. Each says its `priority` (0: the
/// plain list, all a Java client sees, or a level-0 value with a TTL or
/// headers), its `headers` (an object, `{}` for none) and `expires_at_ms`
/// (null without a TTL). The ready set is read only when the status
/// counted values in it (one command fewer on a queue without them); the
/// two reads are not one atomic step, as the status is not with either.
async fn ready_head(shared: &Shared, name: &str, status: &QueueStatus) -> delayq::Result<Vec<Value>> {
    let codec = shared.codec_of(name);
    let queue = shared.client.blocking_queue::<bytes::Bytes, _>(name, BytesCodec)?;
    let mut head = Vec::with_capacity(READY_HEAD);
    if status.priority_ready > 0 {
        for entry in queue.read_ready_entries(0, READY_HEAD).await? {
            let mut shown = show(codec, &entry.value);
            shown["priority"] = json!(entry.priority.level());
            shown["headers"] = headers_json(&entry.headers);
            shown["expires_at_ms"] = json!(entry.expires_at.map(epoch_ms));
            head.push(shown);
        }
    }
    for raw in queue.read_range(0, READY_HEAD - head.len()).await? {
        let mut shown = show(codec, &raw);
        shown["priority"] = json!(0);
        shown["headers"] = json!({});
        shown["expires_at_ms"] = Value::Null;
        head.push(shown);
    }
    Ok(head)
}

/// Runs the transfer now until nothing due at the press is left.
pub(crate) async fn move_due(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, move_due_now(&shared, form)).await
}

async fn move_due_now(shared: &Shared, form: ActionForm) -> Response {
    let run = async {
        let queue = view(&shared.client, &form.name)?;
        if queue.is_paused().await? {
            return Err(Refused::Paused);
        }
        let cutoff = SystemTime::now();
        let started = Instant::now();
        let (mut moved, mut quarantined) = (0, 0);
        loop {
            let report = queue.transfer_now().await?;
            moved += report.moved;
            quarantined += report.quarantined;
            let more_due = report.next_due.is_some_and(|due| due <= cutoff);
            if !more_due || started.elapsed() >= shared.action_time {
                return Ok::<_, Refused>((moved, quarantined, more_due));
            }
        }
    };
    match run.await {
        Ok((moved, quarantined, more)) => done(
            format!(
                "moved {moved} due elements{}{}",
                if quarantined > 0 {
                    format!(", quarantined {quarantined} malformed")
                } else {
                    String::new()
                },
                if more { "; more are due, press again" } else { "" }
            ),
            json!({"moved": moved, "quarantined": quarantined, "complete": !more}),
        ),
        Err(Refused::Paused) => error(StatusCode::CONFLICT, paused(&form.name)),
        Err(Refused::Failed(e)) => failed(e),
    }
}

/// Pauses the queue for every delayq process (Java's do not know pauses).
pub(crate) async fn pause(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, pause_now(&shared, form)).await
}

async fn pause_now(shared: &Shared, form: ActionForm) -> Response {
    let run = async {
        let queue = view(&shared.client, &form.name)?;
        // A pause of a name delayq does not know would create its only
        // key; a registered queue, or one with only schedules, is paused.
        if !known(shared, &form.name, &queue.status().await?).await? {
            return Ok(None);
        }
        queue.pause().await?;
        Ok::<_, delayq::Error>(Some(()))
    };
    match run.await {
        Ok(Some(())) => done(
            format!(
                "{} paused: delayq's transfers and reliable consumers wait until it is resumed \
                 (Java processes do not know the pause)",
                form.name
            ),
            json!({"paused": true}),
        ),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no queue {}", form.name)),
        Err(e) => failed(e),
    }
}

/// Ends a pause: what fell due meanwhile moves now.
pub(crate) async fn resume(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, resume_now(&shared, form)).await
}

async fn resume_now(shared: &Shared, form: ActionForm) -> Response {
    match async { view(&shared.client, &form.name)?.resume().await }.await {
        Ok(true) => done(format!("{} resumed", form.name), json!({"paused": false})),
        Ok(false) => done(format!("{} was not paused", form.name), json!({"paused": false})),
        Err(e) => failed(e),
    }
}

/// Sets the queue's limits for every delayq process (Java's offers and
/// takes do not read them): the whole set, as the form shows it, but for a
/// concurrency limit the form does not post, which stays.
pub(crate) async fn limits(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, limits_now(&shared, form)).await
}

async fn limits_now(shared: &Shared, form: ActionForm) -> Response {
    let (limits, concurrency) = match limits_of(&form) {
        Ok(limits) => limits,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let run = async {
        let queue = view(&shared.client, &form.name)?;
        // Limits on a name delayq does not know would create its only key.
        if !known(shared, &form.name, &queue.status().await?).await? {
            return Ok(None);
        }
        let limits = match concurrency {
            Some(concurrency) => limits.concurrency(concurrency),
            // Not posted: the limit the queue has now stays.
            None => limits.concurrency(queue.limits().await?.concurrency_limit()),
        };
        queue.set_limits(&limits).await?;
        Ok::<_, delayq::Error>(Some(limits))
    };
    match run.await {
        Ok(Some(limits)) => done(
            format!(
                "{} limits: {limits} (delayq's offers and consumers obey them; Java's do not read them)",
                form.name
            ),
            json!({"limits": limits.to_string()}),
        ),
        Ok(None) => error(StatusCode::NOT_FOUND, format!("no queue {}", form.name)),
        Err(e) => failed(e),
    }
}

/// The limits a form posts: numbers or empty, `on` or `off`; apart, the
/// concurrency limit: `None` when the form did not post the field,
/// `Some(None)` to remove it.
fn limits_of(form: &ActionForm) -> Result<(delayq::limits::Limits, Option<Option<u32>>), String> {
    let bound = |field: &str, text: &str| -> Result<Option<u64>, String> {
        match text.trim() {
            "" => Ok(None),
            n => n
                .parse()
                .map(Some)
                .map_err(|_| format!("{field} must be a whole number or empty, not {n:?}")),
        }
    };
    let switch = |field: &str, text: &str| match text {
        "" | "on" => Ok(true),
        "off" => Ok(false),
        other => Err(format!("{field} must be on or off, not {other:?}")),
    };
    let concurrency = match form.concurrency.as_deref().map(str::trim) {
        None => None,
        Some("") => Some(None),
        Some(n) => match n.parse::<u32>() {
            Ok(0) => {
                return Err(
                    "concurrency must be 1 or more, or empty for no limit: 0 would hold every take \
                            (set takes off to stop them)"
                        .into(),
                )
            }
            Ok(n) => Some(Some(n)),
            Err(_) => {
                return Err(format!(
                    "concurrency must be a whole number from 1 to {}, or empty for no limit, not {n:?}",
                    u32::MAX
                ))
            }
        },
    };
    let limits = delayq::limits::Limits::none()
        .max_size(bound("max_size", &form.max_size)?)
        .max_payload(bound("max_payload", &form.max_payload)?)
        .offers(switch("offers", &form.offers)?)
        .takes(switch("takes", &form.takes)?);
    Ok((limits, concurrency))
}

/// Deletes every pending element, in short atomic batches, once the
/// operator has typed the queue's name.
pub(crate) async fn purge(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, purge_now(&shared, form)).await
}

async fn purge_now(shared: &Shared, form: ActionForm) -> Response {
    if form.confirm != form.name {
        return error(
            StatusCode::BAD_REQUEST,
            format!("type the queue's name ({}) to confirm the purge", form.name),
        );
    }
    let run = async {
        let queue = view(&shared.client, &form.name)?;
        let started = Instant::now();
        let mut removed = 0;
        loop {
            let step = queue.remove_pending(BATCH).await?;
            removed += step.removed;
            if step.remaining == 0 || step.removed == 0 || started.elapsed() >= shared.action_time {
                return Ok::<_, delayq::Error>((removed, step.remaining));
            }
        }
    };
    match run.await {
        Ok((removed, remaining)) => done(
            format!("purged {removed} pending elements{}", press_again(remaining)),
            json!({"removed": removed, "remaining": remaining, "complete": remaining == 0}),
        ),
        Err(e) => failed(e),
    }
}

/// Rewrites the pending elements in one element format, within the time
/// every action has: stopped between two of its atomic batches, it keeps
/// what they rewrote, and pressing again goes on (elements already in the
/// format are left as they are).
pub(crate) async fn migrate(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, migrate_now(&shared, form)).await
}

async fn migrate_now(shared: &Shared, form: ActionForm) -> Response {
    let format: Format = match form.to.parse() {
        Ok(format) => format,
        Err(_) => return error(StatusCode::BAD_REQUEST, "`to` must be modern or legacy".into()),
    };
    let run = async { view(&shared.client, &form.name)?.migrate(format, 500).await };
    let Ok(outcome) = tokio::time::timeout(shared.action_time, run).await else {
        return done(
            format!(
                "stopped after {:?}: the elements rewritten as {} so far stay so; press again to go on",
                shared.action_time,
                format.as_str()
            ),
            json!({"complete": false}),
        );
    };
    match outcome {
        Ok(report) => done(
            format!(
                "{} elements rewritten as {}, {} were already, {} malformed left as they are",
                report.converted,
                format.as_str(),
                report.already,
                report.malformed
            ),
            json!({"converted": report.converted, "already": report.already, "malformed": report.malformed,
                   "complete": true}),
        ),
        Err(e) => failed(e),
    }
}
