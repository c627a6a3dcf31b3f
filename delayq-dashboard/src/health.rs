//! Whether Redis answers: a `PING` every second with a short deadline.
//!
//! fred queues commands while it reconnects, so without this a request made
//! while Redis is down waits for minutes. The probe's verdict lets every
//! handler answer at once (HTTP 503 naming the outage), stops the sampler
//! from queueing work, feeds `/metrics`, and logs when Redis went away and
//! came back.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use tokio::sync::watch;

use delayq::fred::interfaces::ClientLike;

use super::{epoch_ms, Shared};

/// Time between probes.
const PROBE_EVERY: Duration = Duration::from_secs(1);
/// How long a probe, or one read of an API, may wait for Redis.
pub(crate) const REDIS_WAIT: Duration = Duration::from_secs(3);

/// What the last probe found.
#[derive(Debug, Clone)]
pub(crate) struct Health {
    pub up: bool,
    /// When the current state began (when Redis went away, or came back).
    pub since: SystemTime,
    /// Why Redis counts as down.
    pub error: Option<String>,
}

/// The probe's channel: up until a probe says otherwise.
pub(crate) fn channel() -> watch::Sender<Health> {
    watch::channel(Health {
        up: true,
        since: SystemTime::now(),
        error: None,
    })
    .0
}

/// Starts the probe; it ends when the dashboard is dropped.
pub(crate) fn start(shared: &Arc<Shared>) {
    super::periodic::every(shared, PROBE_EVERY, |shared, weak| async move {
        // The state is let go while PING waits.
        let redis = shared.client.redis().next().clone();
        drop(shared);
        let found = match tokio::time::timeout(REDIS_WAIT, redis.ping::<String>(None)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no reply to PING within {REDIS_WAIT:?}")),
        };
        if let Some(shared) = weak.upgrade() {
            set(&shared, found);
        }
    });
}

/// Records a probe's result, logging each change.
fn set(shared: &Shared, found: Result<(), String>) {
    let now = SystemTime::now();
    shared.health.send_if_modified(|health| match (&found, health.up) {
        (Ok(()), true) | (Err(_), false) => {
            if let Err(error) = &found {
                health.error = Some(error.clone());
            }
            false
        }
        (Ok(()), false) => {
            let down_for = now.duration_since(health.since).unwrap_or_default();
            tracing::info!(down_for = ?down_for, "Redis is reachable again; the dashboard reads it again");
            *health = Health {
                up: true,
                since: now,
                error: None,
            };
            true
        }
        (Err(error), true) => {
            tracing::warn!(%error, "Redis is unreachable: the dashboard answers 503 and /metrics says redis_up 0 until it is back");
            *health = Health {
                up: false,
                since: now,
                error: Some(error.clone()),
            };
            true
        }
    });
}

/// Why a request got no answer from Redis.
#[derive(Debug)]
pub(crate) enum Unavailable {
    /// The probe finds Redis down.
    Down(Health),
    /// This request's reads took longer than they may.
    Slow,
}

/// `work` unless Redis is down, or goes down while it runs, or it takes
/// longer than `limit`: then the outage, at once.
pub(crate) async fn guarded<T>(
    shared: &Shared,
    limit: Option<Duration>,
    work: impl Future<Output = T>,
) -> Result<T, Unavailable> {
    let mut health = shared.health.subscribe();
    if let Some(down) = down(&health.borrow_and_update()) {
        return Err(Unavailable::Down(down));
    }
    let went_down = async {
        loop {
            if health.changed().await.is_err() {
                return std::future::pending().await;
            }
            if let Some(down) = down(&health.borrow_and_update()) {
                return down;
            }
        }
    };
    let deadline = async {
        match limit {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        done = work => Ok(done),
        down = went_down => Err(Unavailable::Down(down)),
        () = deadline => Err(Unavailable::Slow),
    }
}

fn down(health: &Health) -> Option<Health> {
    (!health.up).then(|| health.clone())
}

/// The health as JSON, for every API answer, with which Redis this is.
pub(crate) fn json(shared: &Shared) -> Value {
    let health = shared.health.borrow().clone();
    let sampled = shared.queues.read().sampled_at;
    json!({
        "now_ms": epoch_ms(SystemTime::now()),
        "up": health.up,
        "since_ms": epoch_ms(health.since),
        "error": health.error,
        "sampled_at_ms": sampled.map(epoch_ms),
        "server": super::server_info::json(shared),
    })
}

/// HTTP 503 with a JSON error naming the outage, and what the page needs
/// to show how old its numbers are.
pub(crate) fn unavailable(shared: &Shared, why: Unavailable) -> Response {
    let message = match &why {
        Unavailable::Down(health) => format!(
            "Redis is unreachable: {}",
            health.error.as_deref().unwrap_or("no reply")
        ),
        Unavailable::Slow => format!("Redis did not answer within {REDIS_WAIT:?}"),
    };
    let body = json!({"ok": false, "error": message, "redis": json(shared)});
    (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response()
}

/// `/metrics` lines of the dashboard itself: whether it reaches Redis, and
/// how old the per-queue gauges are (seconds since the start of the last
/// full sampling pass; since the dashboard started if none finished yet).
pub(crate) fn metrics_text(shared: &Shared) -> String {
    let up = shared.health.borrow().up;
    let sampled = shared.queues.read().sampled_at.unwrap_or(shared.started);
    let age = SystemTime::now().duration_since(sampled).unwrap_or_default();
    format!(
        "# HELP delayq_dashboard_redis_up Whether the dashboard reaches Redis (1) or not (0).\n\
         # TYPE delayq_dashboard_redis_up gauge\n\
         delayq_dashboard_redis_up {}\n\
         # HELP delayq_dashboard_sample_age_seconds How old the per-queue gauges are.\n\
         # TYPE delayq_dashboard_sample_age_seconds gauge\n\
         delayq_dashboard_sample_age_seconds {:.3}\n",
        u8::from(up),
        age.as_secs_f64()
    )
}
