//! The queue page's dead letters: the section of `GET /api/queue`, and
//! the actions that requeue or delete them.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::response::Response;
use axum::routing::post;
use axum::{Form, Router};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::{BytesCodec, QueueStatus, ReliableQueue};

use super::action::{act, done, failed, press_again, BATCH};
use super::show;
use crate::sampler::view;
use crate::{epoch_ms, Shared};

pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    let router = Router::new();
    if read_only {
        return router;
    }
    router
        .route("/api/actions/requeue-dead-letters", post(requeue_dead_letters))
        .route("/api/actions/delete-dead-letters", post(delete_dead_letters))
}

/// The form the dead-letter actions post.
#[derive(Debug, Deserialize)]
pub(crate) struct ActionForm {
    name: String,
}

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
            .map(|dead| {
                let mut shown = show(&*shared.codec, &dead.raw);
                // The reason recorded when it was dead-lettered; for older
                // values, what can be told from the value.
                shown["reason"] = match &dead.reason {
                    Some(reason) => json!(reason),
                    None => json!((shown["decoded"] == json!(false))
                        .then(|| format!("does not decode with the {} codec", shared.codec.name()))),
                };
                shown["at_ms"] = json!(dead.at.map(epoch_ms));
                shown
            })
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
