//! The queue page's pending elements: a page of them in due order, the
//! `pending` section of `GET /api/queue`.

use std::sync::Arc;

use axum::Router;
use serde_json::{json, Value};

use delayq::QueueStatus;

use super::{hex, show};
use crate::sampler::view;
use crate::{epoch_ms, Shared};

/// Pending elements per page of the queue page, most.
pub(crate) const MAX_PAGE: usize = 500;

pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new()
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
        .map(|element| {
            let mut shown = match &element.value {
                Ok(payload) => show(&*shared.codec, payload),
                Err(_) => json!({"text": hex(&element.raw), "decoded": false, "error": "no element format unpacks it"}),
            };
            shown["due_ms"] = json!(epoch_ms(element.due));
            shown["id"] = json!(element.id);
            shown["format"] = json!(element.format.map_or("malformed", |f| f.as_str()));
            shown["size"] = json!(element.raw.len());
            shown
        })
        .collect();
    Ok(json!({"offset": offset, "limit": limit, "total": status.pending, "elements": elements}))
}
