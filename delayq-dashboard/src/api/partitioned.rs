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

use delayq::fred::interfaces::ClientLike;
use delayq::fred::types::{ClusterHash, CustomCommand};
use delayq::{BytesCodec, PartitionLayout};

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
    let nodes = nodes(shared, layout).await;
    let partitions: Vec<Value> = (0..layout.count())
        .map(|i| {
            let mut row = status_json(status.partitions.get(i), now);
            row["index"] = json!(i);
            row["name"] = json!(layout.names()[i]);
            row["slot"] = json!(layout.slot(i));
            row["node"] = json!(nodes[i]);
            row
        })
        .collect();
    Ok(json!({
        "now_ms": epoch_ms(now),
        "read_only": shared.read_only,
        "name": layout.queue(),
        "count": layout.count(),
        "hash": "crc32",
        "created_ms": layout.created_ms(),
        "total": status_json(Some(&status.total), now),
        "partitions": partitions,
    }))
}

/// The Cluster primary (`host:port`) serving each partition's slot, from one
/// `CLUSTER SLOTS` (as `delayq partition show`); `None` each when the
/// deployment is not a Cluster (nothing is asked) or the command fails.
async fn nodes(shared: &Shared, layout: &PartitionLayout) -> Vec<Option<String>> {
    let clustered = {
        let server = shared.server.read();
        server.mode == "cluster" || server.info.as_ref().and_then(|i| i.redis_mode.as_deref()) == Some("cluster")
    };
    let mut ranges: Vec<(i64, i64, String)> = Vec::new();
    if clustered {
        let command = CustomCommand::new_static("CLUSTER", ClusterHash::Random, false);
        let slots = (shared.client.redis().next())
            .custom::<delayq::fred::types::Value, _>(command, vec![delayq::fred::types::Value::from("SLOTS")])
            .await;
        if let Ok(delayq::fred::types::Value::Array(entries)) = slots {
            ranges = entries.into_iter().filter_map(slot_range).collect();
        }
    }
    (0..layout.count())
        .map(|i| {
            let slot = i64::from(layout.slot(i));
            (ranges.iter())
                .find(|(start, end, _)| (*start..=*end).contains(&slot))
                .map(|(_, _, node)| node.clone())
        })
        .collect()
}

/// One `CLUSTER SLOTS` entry: its first slot, last slot and primary.
fn slot_range(entry: delayq::fred::types::Value) -> Option<(i64, i64, String)> {
    use delayq::fred::types::Value;
    let Value::Array(fields) = entry else { return None };
    let (start, end) = (fields.first()?.as_i64()?, fields.get(1)?.as_i64()?);
    let Value::Array(primary) = fields.get(2)? else {
        return None;
    };
    let host = primary.first()?.as_string()?;
    let port = primary.get(1)?.as_i64()?;
    Some((start, end, format!("{host}:{port}")))
}
