//! The per-minute history kept in Redis, so a restarted dashboard (or a
//! second one) shows the minutes sampled before it started.
//!
//! Each queue has a list `delayq_dashboard_history:{queue}` in the queue's
//! slot: one JSON object per finished minute, appended by the sampler as a
//! minute ends (`RPUSH`, `LTRIM` to the last [`KEPT`], `EXPIRE` in one
//! pipeline: bounded whatever the queue's size), read once when the
//! dashboard first samples the queue. The key expires [`EXPIRY`] after the
//! last minute written, so a vanished queue's history goes away on its own.
//!
//! Two dashboards on one Redis each estimate the same server-side flows
//! from their own samples and each append their own minute: the list then
//! holds a minute twice, and a reader keeps one entry per minute (the last
//! written), so nothing is counted twice; with n dashboards the list spans
//! `KEPT / n` minutes. A resent `RPUSH` (fred resends after a lost reply)
//! is a duplicate of the same kind. Two dashboards' estimates of a minute
//! can differ by what moved within one sample interval of its edges (each
//! puts it in the minute its own sample fell in); the one kept is then the
//! last written.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use delayq::fred::interfaces::{KeysInterface, ListInterface};
use delayq::fred::types::Value;
use delayq::{Client, QueueKeys};

use super::sampler::Minute;

/// Entries a list keeps (two dashboards' worth of an hour).
pub(crate) const KEPT: i64 = 120;
/// A queue's history goes this long after its last minute was written.
pub(crate) const EXPIRY: Duration = Duration::from_secs(2 * 60 * 60);

/// The history key of `queue`: `delayq_dashboard_history:{queue}`, in the
/// queue's cluster slot ([`QueueKeys::companion`]).
pub(crate) fn key(queue: &str) -> delayq::Result<String> {
    Ok(QueueKeys::new(queue)?.companion("dashboard_history"))
}

/// One finished minute as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Stored {
    /// Minutes since the Unix epoch.
    pub minute: i64,
    pub transferred: u64,
    pub delivered: u64,
    pub dead_lettered: u64,
    pub lag_p50_ms: Option<u64>,
    pub lag_p99_ms: Option<u64>,
}

impl Stored {
    pub(crate) fn of(minute: &Minute) -> Stored {
        Stored {
            minute: minute.minute,
            transferred: minute.transferred,
            delivered: minute.delivered,
            dead_lettered: minute.dead_lettered,
            lag_p50_ms: minute.lag_p50(),
            lag_p99_ms: minute.lag_p99(),
        }
    }
}

/// Appends a finished minute of `queue`.
pub(crate) async fn store(client: &Client, queue: &str, minute: &Stored) -> delayq::Result<()> {
    let key = key(queue)?;
    let json = serde_json::to_string(minute).expect("plain numbers serialize");
    let pipeline = client.redis().next().pipeline();
    let _: () = pipeline.rpush(&key, json).await?;
    let _: () = pipeline.ltrim(&key, -KEPT, -1).await?;
    let _: () = pipeline.expire(&key, EXPIRY.as_secs() as i64, None).await?;
    let replies: Vec<Value> = pipeline.all().await?;
    drop(replies);
    Ok(())
}

/// The stored minutes of `queue` before `before` (minutes since the
/// epoch), one per minute, oldest first, at most `most`.
pub(crate) async fn load(client: &Client, queue: &str, before: i64, most: usize) -> delayq::Result<Vec<Stored>> {
    let raw: Vec<String> = client.redis().next().lrange(key(queue)?, 0, -1).await?;
    let mut minutes = BTreeMap::new();
    for text in raw {
        // Not ours, or from a later version: skipped, the rest still shows.
        if let Ok(stored) = serde_json::from_str::<Stored>(&text) {
            if stored.minute < before {
                minutes.insert(stored.minute, stored);
            }
        }
    }
    let skip = minutes.len().saturating_sub(most);
    Ok(minutes.into_values().skip(skip).collect())
}
