//! `GET /api/workers`: the workers of one queue, read now (`?queue=N`), or
//! of every queue that has some, as the sampler last read them: host,
//! process, version, settings, counts, what each runs now and its lease,
//! and whether it went silent.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use delayq::worker::WorkerInfo;
use delayq::QueueKeys;

use super::error;
use crate::health::{self, guarded, unavailable, REDIS_WAIT};
use crate::sampler::WorkerCounts;
use crate::{epoch_ms, Shared};

pub(crate) fn routes(_read_only: bool) -> Router<Arc<Shared>> {
    Router::new().route("/api/workers", get(workers))
}

/// `GET /api/workers` parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct WorkersQuery {
    queue: Option<String>,
}

pub(crate) async fn workers(State(shared): State<Arc<Shared>>, Query(query): Query<WorkersQuery>) -> Response {
    let now = SystemTime::now();
    let queues: Vec<(String, Vec<WorkerInfo>)> = match &query.queue {
        Some(name) => {
            let read = async { shared.client.workers(&QueueKeys::new(name)?).await };
            match guarded(&shared, Some(REDIS_WAIT), read).await {
                Ok(Ok(workers)) => vec![(name.clone(), workers)],
                Ok(Err(delayq::Error::InvalidQueueName { name, reason })) => {
                    return error(
                        StatusCode::BAD_REQUEST,
                        format!("invalid queue name {name:?}: {reason}"),
                    )
                }
                Ok(Err(e)) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
                Err(why) => return unavailable(&shared, why),
            }
        }
        None => {
            let queues = shared.queues.read();
            queues
                .entries
                .iter()
                .filter(|(_, entry)| !entry.workers.is_empty())
                .map(|(name, entry)| (name.clone(), entry.workers.clone()))
                .collect()
        }
    };
    let sampled_at = shared.queues.read().sampled_at.map(epoch_ms);
    let rows: Vec<Value> = queues
        .iter()
        .map(|(name, workers)| {
            let counts = WorkerCounts::of(workers);
            json!({
                "queue": name,
                "alive": counts.alive,
                "silent": counts.silent,
                "busy": counts.busy,
                "slots": counts.slots,
                "workers": workers.iter().map(worker_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    Json(json!({
        "now_ms": epoch_ms(now),
        "queue": query.queue,
        // Read now for one queue; else as the last sampling pass read them.
        "sampled_at_ms": if query.queue.is_some() { Some(epoch_ms(now)) } else { sampled_at },
        "sample_interval_ms": shared.sample_interval.as_millis() as u64,
        "redis": health::json(&shared),
        "queues": rows,
    }))
    .into_response()
}

/// A worker as JSON: times in ms since the epoch (the Redis server's clock).
pub(crate) fn worker_json(worker: &WorkerInfo) -> Value {
    json!({
        "id": worker.id,
        "host": worker.host,
        "pid": worker.pid,
        "version": worker.version,
        "concurrency": worker.concurrency,
        "prefetch": worker.prefetch,
        "rate_limit": worker.rate_limit.map(|r| json!({"limit": r.limit, "per_ms": r.per.as_millis() as u64, "burst": r.burst})),
        "heartbeat_ms": worker.heartbeat.as_millis() as u64,
        "started_at_ms": epoch_ms(worker.started_at),
        "last_beat_ms": epoch_ms(worker.last_beat),
        "silent": worker.silent,
        "handled": worker.handled,
        "failed": worker.failed,
        "busy": worker.busy,
        "running": worker.running.iter().map(|r| json!({
            "delivery": r.delivery,
            "attempt": r.attempt,
            "since_ms": epoch_ms(r.since),
            "lease_expires_ms": epoch_ms(r.lease_expires),
        })).collect::<Vec<_>>(),
    })
}
