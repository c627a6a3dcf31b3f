//! The queue page's dead letters: the section of `GET /api/queue`, their
//! pages (`GET /api/dead-letters`) and counts by reason
//! (`GET /api/dead-letters/reasons`), and the actions that requeue or delete
//! all of them, or the ones named by their keys.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::dead_letter::{DeadLetter, DeadLetterKey};
use delayq::{BytesCodec, QueueStatus, ReliableQueue};

use super::action::{act, done, failed, press_again, BATCH};
use super::{error, headers_json, show};
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::sampler::view;
use crate::{epoch_ms, Shared};

/// Most dead letters on one page, and named by one action.
const MAX_PAGE: usize = 100;
/// Most recent dead letters counted by reason.
const MAX_GROUPED: usize = 10_000;

pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    let router = Router::new()
        .route("/api/dead-letters", get(page))
        .route("/api/dead-letters/reasons", get(reasons));
    if read_only {
        return router;
    }
    router
        .route("/api/actions/requeue-dead-letters", post(requeue_dead_letters))
        .route("/api/actions/delete-dead-letters", post(delete_dead_letters))
        .route("/api/actions/requeue-dead-letter-keys", post(requeue_keys))
        .route("/api/actions/delete-dead-letter-keys", post(delete_keys))
}

/// `GET /api/dead-letters` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct PageQuery {
    name: String,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
    /// Only those with exactly this reason, looked for from `offset` on over
    /// at most 10,000 dead letters; `next_offset` says where to go on.
    reason: Option<String>,
    /// Only those whose reason has this shape
    /// ([`reason_shape`](delayq::dead_letter::reason_shape)), as `reason`.
    shape: Option<String>,
}

/// Which dead letters a filtered page or bulk action takes: those with
/// exactly a reason, or with a reason of a shape.
enum Pick<'a> {
    Reason(&'a str),
    Shape(&'a str),
}

impl<'a> Pick<'a> {
    fn of(reason: &'a Option<String>, shape: &'a Option<String>) -> Option<Pick<'a>> {
        match (reason, shape) {
            (Some(reason), _) => Some(Pick::Reason(reason)),
            (None, Some(shape)) => Some(Pick::Shape(shape)),
            (None, None) => None,
        }
    }

    fn takes(&self, reason: Option<&str>) -> bool {
        match self {
            Pick::Reason(want) => reason == Some(*want),
            Pick::Shape(want) => reason.is_some_and(|r| delayq::dead_letter::reason_shape(r) == *want),
        }
    }

    /// How many of those counted it takes: what the page says and the bulk
    /// actions confirm.
    fn count(&self, counted: &delayq::dead_letter::DeadLetterReasons) -> usize {
        match self {
            Pick::Reason(want) => (counted.groups.iter())
                .find(|g| g.reason.as_deref() == Some(*want))
                .map_or(0, |g| g.count),
            Pick::Shape(want) => (counted.by_shape().into_iter())
                .find(|g| g.shape.as_deref() == Some(*want))
                .map_or(0, |g| g.count),
        }
    }

    /// "with reason \"...\"" or "whose reason looks like \"...\"".
    fn said(&self) -> String {
        match self {
            Pick::Reason(reason) => format!("with reason \"{reason}\""),
            Pick::Shape(shape) => format!("whose reason looks like \"{shape}\""),
        }
    }
}

/// Most dead letters one filtered page looks through.
const MAX_SCAN: usize = 10_000;

/// A page of dead letters, oldest first: each with its index, key (what the
/// per-value actions post back), reason, when it died and its headers.
pub(crate) async fn page(State(shared): State<Arc<Shared>>, Query(query): Query<PageQuery>) -> Response {
    let limit = query.limit.unwrap_or(50).clamp(1, MAX_PAGE);
    let read = async {
        let queue = dead_queue(&shared, &query.name)?;
        let total = queue.dead_letter_len().await?;
        let mut page = json!({
            "name": query.name, "total": total, "offset": query.offset, "limit": limit,
            "now_ms": epoch_ms(SystemTime::now()),
        });
        let Some(pick) = Pick::of(&query.reason, &query.shape) else {
            let items: Vec<Value> = queue
                .dead_letter_page(query.offset, limit)
                .await?
                .iter()
                .map(|dead| item(&shared, &query.name, dead))
                .collect();
            page["items"] = json!(items);
            return Ok::<_, delayq::Error>(page);
        };
        // Filtered: read on in steps until the page is full or 10,000 were looked at.
        let (mut items, mut at) = (Vec::new(), query.offset);
        let stop = query.offset.saturating_add(MAX_SCAN);
        'reading: while items.len() < limit && at < stop {
            let read = queue.dead_letter_page(at, (stop - at).min(BATCH)).await?;
            if read.is_empty() {
                break;
            }
            at += read.len();
            for dead in &read {
                if pick.takes(dead.reason.as_deref()) {
                    items.push(item(&shared, &query.name, dead));
                    if items.len() == limit {
                        at = dead.key.index() + 1;
                        break 'reading;
                    }
                }
            }
        }
        page["items"] = json!(items);
        page["reason"] = json!(query.reason);
        page["shape"] = json!(query.shape);
        page["next_offset"] = json!(at);
        // How many of the 10,000 most recent it takes: what the bulk
        // actions say, and act on, under this filter.
        let counted = queue.dead_letter_reasons(MAX_GROUPED).await?;
        page["matching"] = json!(pick.count(&counted));
        page["matching_among"] = json!(counted.looked);
        Ok(page)
    };
    answer(&shared, read).await
}

/// `GET /api/dead-letters/reasons` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct ReasonsQuery {
    name: String,
    most: Option<usize>,
}

/// The dead letters counted by reason, over at most the 10,000 most recent
/// (`looked` says how many were).
pub(crate) async fn reasons(State(shared): State<Arc<Shared>>, Query(query): Query<ReasonsQuery>) -> Response {
    let most = query.most.unwrap_or(MAX_GROUPED).clamp(1, MAX_GROUPED);
    let read = async {
        let counted = dead_queue(&shared, &query.name)?.dead_letter_reasons(most).await?;
        let groups: Vec<Value> = counted
            .groups
            .iter()
            .map(|g| json!({"reason": g.reason, "count": g.count, "last_at_ms": g.last_at.map(epoch_ms)}))
            .collect();
        // Reasons that differ only by ids and numbers, together.
        let shapes: Vec<Value> = (counted.by_shape().iter())
            .map(|g| {
                json!({"shape": g.shape, "count": g.count, "reasons": g.reasons, "example": g.example,
                    "last_at_ms": g.last_at.map(epoch_ms)})
            })
            .collect();
        Ok::<_, delayq::Error>(json!({
            "name": query.name, "total": counted.total, "looked": counted.looked, "most": most,
            "now_ms": epoch_ms(SystemTime::now()), "groups": groups, "shapes": shapes,
        }))
    };
    answer(&shared, read).await
}

/// A read's JSON, 400 for a bad name, 503 while Redis is away.
async fn answer(shared: &Shared, read: impl std::future::Future<Output = delayq::Result<Value>>) -> Response {
    match guarded(shared, Some(REDIS_WAIT), read).await {
        Ok(Ok(mut value)) => {
            value["redis"] = health::json(shared);
            Json(value).into_response()
        }
        Ok(Err(e @ delayq::Error::InvalidQueueName { .. })) => error(StatusCode::BAD_REQUEST, e.to_string()),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(why) => unavailable(shared, why),
    }
}

fn dead_queue(shared: &Shared, name: &str) -> delayq::Result<ReliableQueue<Bytes>> {
    Ok(shared.client.reliable_queue(name, BytesCodec)?.without_transfer())
}

/// One dead letter as the page shows it.
fn item(shared: &Shared, queue: &str, dead: &DeadLetter<Bytes>) -> Value {
    let codec = shared.codec_of(queue);
    let mut shown = show(codec, &dead.raw);
    // The reason recorded when it was dead-lettered; for older values, what
    // can be told from the value.
    shown["reason"] = match &dead.reason {
        Some(reason) => json!(reason),
        None => {
            json!((shown["decoded"] == json!(false)).then(|| format!("does not decode with the {} codec", codec.name())))
        }
    };
    shown["at_ms"] = json!(dead.at.map(epoch_ms));
    shown["index"] = json!(dead.key.index());
    shown["key"] = json!(dead.key.to_string());
    shown["job"] = json!(dead.job);
    shown["headers"] = headers_json(&dead.headers);
    shown
}

/// The form the bulk dead-letter actions post: what the operator saw and
/// confirmed (the second press).
#[derive(Debug, Deserialize)]
pub(crate) struct ActionForm {
    name: String,
    /// How many the page said the action would take.
    count: Option<usize>,
    /// The page's filter: only dead letters with exactly this reason, among
    /// the 10,000 most recent (as the page counts them).
    #[serde(default)]
    reason: Option<String>,
    /// Or only those whose reason has this shape, likewise.
    #[serde(default)]
    shape: Option<String>,
}

/// The 400 for a bulk action that says no count: nothing was confirmed.
fn unconfirmed() -> Response {
    error(
        StatusCode::BAD_REQUEST,
        "say how many the page showed (count=N): a bulk action acts only on what was confirmed; nothing was done"
            .into(),
    )
}

/// A filtered bulk action: exactly the dead letters the filter takes among
/// the 10,000 most recent, matched here as they are read (where the action
/// runs), if they are still the confirmed count: one more dead-lettered
/// since the page counted them refuses it, and nothing is done.
async fn filtered(shared: &Shared, form: &ActionForm, pick: Pick<'_>, count: usize, requeue: bool) -> Response {
    let run = async {
        let queue = dead_queue(shared, &form.name)?;
        let matches = |r: Option<&str>| pick.takes(r);
        let outcome = if requeue {
            queue
                .requeue_dead_letters_confirmed(MAX_GROUPED, count, matches)
                .await?
        } else {
            queue.delete_dead_letters_confirmed(MAX_GROUPED, count, matches).await?
        };
        let paused = requeue && view(&shared.client, &form.name)?.is_paused().await?;
        Ok::<_, delayq::Error>((outcome, paused))
    };
    match run.await {
        Ok((outcome, paused)) => {
            let verb = if requeue { "requeued" } else { "deleted" };
            let changed = match outcome.changed {
                0 => String::new(),
                n => format!("; {n} changed meanwhile (requeued or deleted by someone else) and were left: the list is read again"),
            };
            let field = if requeue { "moved" } else { "deleted" };
            done(
                format!(
                    "{verb} {} dead letters {}{changed}{}",
                    outcome.done,
                    pick.said(),
                    if paused { PAUSED_NOTE } else { "" }
                ),
                json!({field: outcome.done, "changed": outcome.changed, "complete": outcome.changed == 0}),
            )
        }
        Err(e) => failed(e),
    }
}

const PAUSED_NOTE: &str = "; the queue is paused: consumers take them once it is resumed";

/// The `dead_letters` field of `GET /api/queue`: the total and the first
/// values, oldest first, each with its reason and when it died.
pub(crate) async fn section(shared: &Shared, name: &str, status: &QueueStatus) -> delayq::Result<Value> {
    let items: Vec<Value> = if status.dead_letters > 0 {
        shared
            .client
            .reliable_queue::<Bytes, _>(name, BytesCodec)?
            .without_transfer()
            .dead_letter_page(0, 50)
            .await?
            .iter()
            .map(|dead| item(shared, name, dead))
            .collect()
    } else {
        Vec::new()
    };
    Ok(json!({"total": status.dead_letters, "items": items}))
}

/// Moves the dead letters back to the queue's tail (fresh delivery counts).
pub(crate) async fn requeue_dead_letters(State(shared): State<Arc<Shared>>, Form(form): Form<ActionForm>) -> Response {
    act(&shared, requeue_dead_letters_now(&shared, form)).await
}

async fn requeue_dead_letters_now(shared: &Shared, form: ActionForm) -> Response {
    let Some(count) = form.count else {
        return unconfirmed();
    };
    if let Some(pick) = Pick::of(&form.reason, &form.shape) {
        return filtered(shared, &form, pick, count, true).await;
    }
    let run = async {
        let queue: ReliableQueue<Bytes> = shared.client.reliable_queue(&form.name, BytesCodec)?.without_transfer();
        // At most the oldest `count` (those confirmed): values that die
        // meanwhile join the tail and wait for the next press.
        let mut left = unfiltered(&queue, &form.name, count).await?;
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
                if paused { PAUSED_NOTE } else { "" }
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
    let Some(count) = form.count else {
        return unconfirmed();
    };
    if let Some(pick) = Pick::of(&form.reason, &form.shape) {
        return filtered(shared, &form, pick, count, false).await;
    }
    let run = async {
        let queue: ReliableQueue<Bytes> = shared.client.reliable_queue(&form.name, BytesCodec)?.without_transfer();
        let mut left = unfiltered(&queue, &form.name, count).await?;
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

/// How many an unfiltered bulk action takes from the head: the `count`
/// confirmed, the oldest, which are those the operator was shown as long as
/// none left meanwhile (values die onto the tail); fewer than that left
/// means the list is no longer what was confirmed, and nothing is done.
async fn unfiltered(queue: &ReliableQueue<Bytes>, name: &str, count: usize) -> delayq::Result<usize> {
    let there = queue.dead_letter_len().await?;
    if there < count {
        return Err(delayq::Error::DeadLetterCountChanged {
            queue: name.to_owned(),
            confirmed: count,
            matching: there,
        });
    }
    Ok(count)
}

/// The form the per-value actions post: the keys of the values, as the page
/// read them, separated by commas.
#[derive(Debug, Deserialize)]
pub(crate) struct KeysForm {
    name: String,
    keys: String,
}

/// Moves the named dead letters back to the queue's tail, all or none.
pub(crate) async fn requeue_keys(State(shared): State<Arc<Shared>>, Form(form): Form<KeysForm>) -> Response {
    act(&shared, keyed(&shared, form, true)).await
}

/// Deletes the named dead letters, all or none.
pub(crate) async fn delete_keys(State(shared): State<Arc<Shared>>, Form(form): Form<KeysForm>) -> Response {
    act(&shared, keyed(&shared, form, false)).await
}

async fn keyed(shared: &Shared, form: KeysForm, requeue: bool) -> Response {
    let keys: Result<Vec<DeadLetterKey>, _> = form.keys.split(',').filter(|k| !k.is_empty()).map(str::parse).collect();
    let keys = match keys {
        Ok(keys) if keys.is_empty() => return error(StatusCode::BAD_REQUEST, "no dead letters named".into()),
        Ok(keys) if keys.len() > MAX_PAGE => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("{} dead letters named; at most {MAX_PAGE} at a time", keys.len()),
            )
        }
        Ok(keys) => keys,
        Err(e) => return failed(e),
    };
    let run = async {
        let queue = dead_queue(shared, &form.name)?;
        if requeue {
            let found = queue.requeue_dead_letters_exact(&keys).await?;
            let paused = view(&shared.client, &form.name)?.is_paused().await?;
            Ok::<_, delayq::Error>((found, paused))
        } else {
            Ok((queue.delete_dead_letters_exact(&keys).await?, false))
        }
    };
    match run.await {
        Ok((found, paused)) => {
            let at: Vec<String> = keys.iter().map(|k| format!("#{}", k.index() + 1)).collect();
            done(
                format!(
                    "{} {} dead letter{} ({}){}",
                    if requeue { "requeued" } else { "deleted" },
                    keys.len(),
                    if keys.len() == 1 { "" } else { "s" },
                    at.join(", "),
                    if paused {
                        "; the queue is paused: consumers take them once it is resumed"
                    } else {
                        ""
                    }
                ),
                json!({"found_at": found, "complete": true}),
            )
        }
        Err(delayq::Error::DeadLetterChanged { indices, .. }) => {
            let at: Vec<String> = indices.iter().map(|i| format!("#{}", i + 1)).collect();
            error(
                StatusCode::CONFLICT,
                format!(
                    "{} changed since the page was read (requeued, deleted or moved by someone else): nothing was done; the list is read again",
                    at.join(", ")
                ),
            )
        }
        Err(e) => failed(e),
    }
}
