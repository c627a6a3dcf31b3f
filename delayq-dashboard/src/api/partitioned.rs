//! `GET /api/partitioned`: one partitioned queue read now: its stored
//! layout (count, key hash, created), each partition's counts with its
//! Cluster slot and, on a Cluster, the primary serving it, and their sums
//! (`PartitionedQueue::status`, what `delayq partition show` prints).
//! Read-only: a partition is acted on from its own queue page.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::BytesCodec;

use super::{error, status_json};
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::{epoch_ms, Shared};

pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new().route("/api/partitioned", get(partitioned))
}

/// `GET /api/partitioned` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct PartitionedQuery {
    name: String,
}

/// Why a read of a partitioned queue gave no numbers.
enum Unread {
    /// No layout is stored under this name.
    NotPartitioned,
    Failed(delayq::Error),
}

impl From<delayq::Error> for Unread {
    fn from(error: delayq::Error) -> Self {
        Unread::Failed(error)
    }
}

/// The partitioned queue `name`, read now; 404 when it is not one, 503
/// while Redis is unreachable (never zeros).
pub(crate) async fn partitioned(State(shared): State<Arc<Shared>>, Query(query): Query<PartitionedQuery>) -> Response {
    let read = match guarded(&shared, Some(REDIS_WAIT), read(&shared, &query.name)).await {
        Ok(read) => read,
        Err(why) => return unavailable(&shared, why),
    };
    match read {
        Ok(mut value) => {
            value["redis"] = health::json(&shared);
            Json(value).into_response()
        }
        Err(Unread::NotPartitioned) => error(
            StatusCode::NOT_FOUND,
            format!(
                "{:?} is not a partitioned queue (no layout in delayq_partitions:{{{}}})",
                query.name, query.name
            ),
        ),
        Err(Unread::Failed(delayq::Error::InvalidQueueName { name, reason })) => error(
            StatusCode::BAD_REQUEST,
            format!("invalid queue name {name:?}: {reason}"),
        ),
        // A command that failed as Redis went away: the outage, not a 500.
        Err(Unread::Failed(_)) if !shared.health.borrow().up => {
            let health = shared.health.borrow().clone();
            unavailable(&shared, health::Unavailable::Down(health))
        }
        Err(Unread::Failed(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

async fn read(shared: &Shared, name: &str) -> Result<Value, Unread> {
    let now = SystemTime::now();
    if shared.client.partition_layout(name).await?.is_none() {
        return Err(Unread::NotPartitioned);
    }
    // A handle that only looks: it runs no transfer.
    let queue = (shared
        .client
        .partitioned_queue::<bytes::Bytes, _>(name, BytesCodec)
        .await)
        .map_err(|e| match e {
            delayq::Error::NotPartitioned { .. } => Unread::NotPartitioned,
            e => Unread::Failed(e),
        })?
        .without_transfer();
    let layout = queue.layout();
    let status = queue.status().await?;
    // The Cluster primary of each partition (the library asks only on a
    // Cluster); none shown if it cannot be told.
    let nodes = match shared.client.partition_nodes(&layout).await {
        Ok(nodes) => nodes,
        Err(_) => vec![None; layout.count()],
    };
    let mut partitions: Vec<Value> = (0..layout.count())
        .map(|i| {
            let mut row = status_json(status.partitions.get(i), now);
            row["index"] = json!(i);
            row["name"] = json!(layout.names()[i]);
            row["slot"] = json!(layout.slot(i));
            row["node"] = json!(nodes[i]);
            row["retired"] = json!(false);
            row
        })
        .collect();
    // A re-partition's old partitions, still read until retired for good:
    // rows of their own, so the rows add up to the sums.
    for (j, name) in layout.retired().iter().enumerate() {
        let mut row = status_json(status.retired.get(j), now);
        row["index"] = json!(layout.count() + j);
        row["name"] = json!(name);
        row["slot"] = json!(delayq::PartitionLayout::slot_of_name(name));
        row["node"] = Value::Null;
        row["retired"] = json!(true);
        partitions.push(row);
    }
    Ok(json!({
        "now_ms": epoch_ms(now),
        "read_only": shared.read_only,
        "name": layout.queue(),
        "count": layout.count(),
        "hash": "crc32",
        "created_ms": layout.created().map(epoch_ms),
        "generation": layout.generation(),
        "retired_count": layout.retired().len(),
        "total": status_json(Some(&status.total), now),
        "partitions": partitions,
    }))
}
