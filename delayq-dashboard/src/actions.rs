//! The actions: every one a `POST` (the guard has checked the token, the
//! site and the CSRF token), each calling one of the library's operations.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Form, Json};
use serde::Deserialize;
use serde_json::json;

use bytes::Bytes;

use delayq::{BytesCodec, Format, ReliableQueue};

use super::api::error;
use super::health::{guarded, unavailable};
use super::sampler::view;
use super::Shared;

/// How long one action may keep going (batches of a big queue), unless
/// [`Dashboard::action_time`](super::Dashboard::action_time) says otherwise.
pub(crate) const ACTION_TIME: Duration = Duration::from_secs(60);
/// Elements per step: each step is one short atomic script.
const BATCH: usize = 1_000;

/// The form every action posts.
#[derive(Debug, Deserialize)]
pub(crate) struct ActionForm {
    name: String,
    /// Purge: the queue's name, typed again.
    #[serde(default)]
    confirm: String,
    /// Migrate: `modern` or `legacy`.
    #[serde(default)]
    to: String,
}

fn done(message: String, extra: serde_json::Value) -> Response {
    let mut body = json!({"ok": true, "message": message});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    Json(body).into_response()
}

/// What an answer adds when the time ran out with `left` still to do.
fn press_again(left: u64) -> String {
    match left {
        0 => String::new(),
        n => format!("; {n} left, press again"),
    }
}

/// An action's answer, or 503 at once if Redis is unreachable or goes
/// away while it runs (the atomic steps it finished stay done).
async fn act(shared: &Shared, work: impl std::future::Future<Output = Response>) -> Response {
    match guarded(shared, None, work).await {
        Ok(answer) => answer,
        Err(why) => unavailable(shared, why),
    }
}

fn failed(e: delayq::Error) -> Response {
    let status = match e {
        delayq::Error::InvalidQueueName { .. } | delayq::Error::InvalidArgument(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.to_string())
}

/// Moves the dead letters back to the queue's tail (fresh delivery counts).
pub(crate) async fn requeue_dead_letters(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, requeue_dead_letters_now(&shared, form)).await
}

async fn requeue_dead_letters_now(shared: &Shared, form: ActionForm) -> Response {
    let run = async {
        let queue: ReliableQueue<Bytes> = shared.client.reliable_queue(&form.name, BytesCodec)?.without_transfer();
        // At most what was there when asked: values that come back dead
        // while this runs wait for the next press.
        let mut left = queue.dead_letter_len().await?;
        let mut moved = 0;
        let started = Instant::now();
        while left > 0 && started.elapsed() < shared.action_time {
            let n = queue.requeue_dead_letters(left.min(BATCH)).await?;
            if n == 0 {
                left = 0;
                break;
            }
            moved += n;
            left -= n.min(left);
        }
        let paused = view(&shared.client, &form.name)?.is_paused().await?;
        Ok::<_, delayq::Error>((moved, left, paused))
    };
    match run.await {
        Ok((moved, left, paused)) => done(
            format!(
                "requeued {moved} dead letters{}{}",
                press_again(left as u64),
                if paused {
                    "; the queue is paused: consumers take them once it is resumed"
                } else {
                    ""
                }
            ),
            json!({"moved": moved, "complete": left == 0}),
        ),
        Err(e) => failed(e),
    }
}

/// Deletes the dead letters.
pub(crate) async fn delete_dead_letters(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, delete_dead_letters_now(&shared, form)).await
}

async fn delete_dead_letters_now(shared: &Shared, form: ActionForm) -> Response {
    let run = async {
        let queue: ReliableQueue<Bytes> = shared.client.reliable_queue(&form.name, BytesCodec)?.without_transfer();
        let mut left = queue.dead_letter_len().await?;
        let mut deleted = 0;
        let started = Instant::now();
        while left > 0 && started.elapsed() < shared.action_time {
            let n = queue.remove_dead_letters(left.min(BATCH)).await?;
            if n == 0 {
                left = 0;
                break;
            }
            deleted += n;
            left -= n.min(left);
        }
        Ok::<_, delayq::Error>((deleted, left))
    };
    match run.await {
        Ok((deleted, left)) => done(
            format!("deleted {deleted} dead letters{}", press_again(left as u64)),
            json!({"deleted": deleted, "complete": left == 0}),
        ),
        Err(e) => failed(e),
    }
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

/// Why an action did nothing.
enum Refused {
    /// The queue is paused: nothing is moved on purpose.
    Paused,
    Failed(delayq::Error),
}

impl From<delayq::Error> for Refused {
    fn from(e: delayq::Error) -> Self {
        Refused::Failed(e)
    }
}

fn paused(name: &str) -> String {
    format!("{name} is paused: nothing moves until it is resumed (Resume, or `delayq resume`)")
}

/// Pauses the queue for every delayq process (Java's do not know pauses).
pub(crate) async fn pause(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, pause_now(&shared, form)).await
}

async fn pause_now(shared: &Shared, form: ActionForm) -> Response {
    let run = async {
        let queue = view(&shared.client, &form.name)?;
        // A pause of a name with no key would create the queue's only key.
        if !queue.status().await?.exists {
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
