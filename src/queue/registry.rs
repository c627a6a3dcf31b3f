//! The registry of queues delayq has seen: the sorted set `delayq_queues`
//! (queue name → ms it was last registered), so that tools find a queue
//! that holds only ready values (no timeout set, no dead letter for `SCAN`
//! to find), after a restart too.
//!
//! A process registers a queue when it offers to it, consumes from it or
//! starts transferring it: one `ZADD GT` in the background, at most once
//! per queue per [`REFRESH`] (a cache per client), never in a script and
//! never awaited by the operation. Java does not know the key. It lives in
//! one slot of a cluster, on its own: no queue's script touches it.
//!
//! The set stays bounded: `Client::forget_queue_if_gone` drops a name that
//! no key of the queue holds any more and that nobody registered for
//! [`FORGET_AFTER`], by a script that removes it only if its score is still
//! the one read (a registration in between keeps it). As every process
//! registers again once its cache entry is older than [`REFRESH`], a name
//! that was dropped is registered again at the next offer or take.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fred::interfaces::SortedSetsInterface;

use crate::wire::keys::{QueueKeys, REGISTRY_KEY};
use crate::wire::time;

/// How long a process's registration of a queue counts before it writes again.
const REFRESH: Duration = Duration::from_secs(10 * 60);
/// How long after its last registration a name without keys may be dropped.
pub(crate) const FORGET_AFTER: Duration = Duration::from_secs(30 * 60);
/// Queues a client remembers registering; past this, it forgets them all
/// (registering again costs one command each).
const MAX_CACHED: usize = 100_000;

/// One client's cache of the queues it registered, and when.
#[derive(Default)]
pub(crate) struct Registry {
    seen: Arc<parking_lot::Mutex<HashMap<String, Instant>>>,
}

impl Registry {
    /// Registers `keys`' queue in the background unless this client did
    /// within [`REFRESH`]. A failed write is forgotten, so the next call
    /// tries again.
    pub(crate) fn seen(&self, pool: &fred::clients::Pool, keys: &QueueKeys) {
        let name = keys.destination();
        {
            let mut seen = self.seen.lock();
            if seen.get(name).is_some_and(|at| at.elapsed() < REFRESH) {
                return;
            }
            if seen.len() >= MAX_CACHED {
                seen.clear();
            }
            seen.insert(name.to_owned(), Instant::now());
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (conn, name, seen) = (pool.next().clone(), name.to_owned(), self.seen.clone());
        runtime.spawn(async move {
            let written: std::result::Result<i64, _> = conn
                .zadd(
                    REGISTRY_KEY,
                    None,
                    Some(fred::types::sorted_sets::Ordering::GreaterThan),
                    false,
                    false,
                    (time::now_ms() as f64, name.as_str()),
                )
                .await;
            if let Err(error) = written {
                tracing::debug!(queue = %name, %error, "could not register the queue in {REGISTRY_KEY}");
                seen.lock().remove(&name);
            }
        });
    }
}
