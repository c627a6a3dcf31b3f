//! The queue page's pending elements: a page of them in due order (the
//! `pending` section of `GET /api/queue`), and, in files of their own, how
//! the page names one element ([`naming`]), search by id and by text and a
//! jump to a due time ([`search`]), and the actions on one element
//! ([`actions`]).
//!
//! Every element shown carries its packed bytes as hex (`raw`): that names
//! it exactly for an action, whether or not it has a delayq id (equal
//! payloads are different elements; a byte-identical legacy copy is acted on
//! one at a time). An action on an element a transfer took meanwhile
//! answers 409 and changes nothing.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::routing::{get, post};
use axum::Router;
use bytes::Bytes;
use serde_json::{json, Value};

use delayq::pending::PendingElement;
use delayq::{DelayedQueue, QueueStatus};

use self::naming::handle;
use super::{hex, show};
use crate::sampler::view;
use crate::{epoch_ms, Shared};

mod actions;
mod naming;
mod search;

/// Pending elements per page of the queue page, most.
pub(crate) const MAX_PAGE: usize = 500;

pub(crate) fn routes(read_only: bool) -> Router<Arc<Shared>> {
    let router = Router::new()
        .route("/api/pending/search", get(search::search))
        .route("/api/pending/jump", get(search::jump));
    if read_only {
        return router;
    }
    router
        .route("/api/actions/element-delete", post(actions::element_delete))
        .route("/api/actions/element-run", post(actions::element_run))
        .route("/api/actions/element-reschedule", post(actions::element_reschedule))
}

/// The `pending` field of `GET /api/queue`: `limit` elements from
/// `offset` in due order, each decoded with the dashboard's codec.
pub(crate) async fn page(
    shared: &Shared,
    name: &str,
    offset: usize,
    limit: usize,
    status: &QueueStatus,
) -> delayq::Result<Value> {
    let page = view(&shared.client, name)?.pending_page(offset, limit).await?;
    let elements: Vec<Value> = page
        .iter()
        .enumerate()
        .map(|(i, element)| element_json(shared, name, element, offset + i))
        .collect();
    // The total of what the pages list: the delayed queue's elements, not
    // the delayed values with a priority or a group key (delayq's own sets)
    // that `status.pending` counts too.
    let total = status
        .pending
        .saturating_sub(status.priority_pending)
        .saturating_sub(status.grouped_pending);
    Ok(json!({"offset": offset, "limit": limit, "total": total, "elements": elements}))
}

/// One pending element as the page shows it; `rank` is its place in due
/// order when it was read (0 is the next due).
fn element_json(shared: &Shared, queue: &str, element: &PendingElement<Bytes>, rank: usize) -> Value {
    let mut shown = match &element.value {
        Ok(payload) => show(shared.codec_of(queue), payload),
        Err(_) => json!({"text": hex(&element.raw), "decoded": false, "error": "no element format unpacks it"}),
    };
    shown["due_ms"] = json!(epoch_ms(element.due));
    shown["id"] = json!(element.id);
    shown["format"] = json!(element.format.map_or("malformed", |f| f.as_str()));
    shown["size"] = json!(element.raw.len());
    shown["raw"] = json!(handle(&element.raw, epoch_ms(element.due)));
    shown["rank"] = json!(rank);
    shown
}

/// How many elements are due before `at` (to the ms).
async fn due_before(queue: &DelayedQueue<Bytes>, at: SystemTime) -> delayq::Result<usize> {
    let before = at
        .checked_sub(Duration::from_millis(1))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    Ok(queue.count_due_by(&[before]).await?.first().copied().unwrap_or(0) as usize)
}
