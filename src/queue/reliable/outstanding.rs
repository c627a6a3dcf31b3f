//! Reliable deliveries a client has handed out and not yet settled, so that
//! shutdown can wait for them and give back what is left.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::queue::reliable::delivery::{release, Release};
use crate::queue::reliable::Settings;
use crate::queue::tokens::TokenMap;
use crate::queue::Core;
use crate::wire::keys::QueueKeys;

pub(crate) type Unsettled = (Arc<QueueKeys>, Settings, Bytes);

#[derive(Default)]
pub(crate) struct Outstanding {
    next: AtomicU64,
    deliveries: Mutex<TokenMap<Unsettled>>,
    changed: Notify,
}

impl Outstanding {
    pub(super) fn add(&self, keys: Arc<QueueKeys>, settings: Settings, member: Bytes) -> u64 {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        self.deliveries.lock().insert(token, (keys, settings, member));
        token
    }

    pub(super) fn remove(&self, token: u64) {
        self.remove_all([token]);
    }

    /// Removes many at once (an ack batch's), under one lock.
    pub(super) fn remove_all(&self, tokens: impl IntoIterator<Item = u64>) {
        let mut deliveries = self.deliveries.lock();
        // Only `settled` waits, and only for none left: a wake per
        // settled delivery cost a busy worker a lock per value.
        let mut removed = false;
        for token in tokens {
            removed |= deliveries.remove(&token).is_some();
        }
        if removed && deliveries.is_empty() {
            drop(deliveries);
            self.changed.notify_waiters();
        }
    }

    /// Waits until every delivery is settled.
    pub(super) async fn settled(&self) {
        loop {
            let changed = self.changed.notified();
            if self.deliveries.lock().is_empty() {
                return;
            }
            changed.await;
        }
    }

    /// Gives what is still unsettled back to the head of its queue, all
    /// together, until `close_by` at most (shutdown, after its grace).
    pub(super) async fn release_all(&self, core: &Core, close_by: tokio::time::Instant) {
        let unsettled: Vec<Unsettled> = self.deliveries.lock().drain().map(|(_, d)| d).collect();
        tracing::info!(
            count = unsettled.len(),
            "giving unsettled deliveries back to their queues"
        );
        let releases = unsettled.into_iter().map(|(keys, settings, member)| async move {
            if let Err(error) = release(core, &keys, settings, &member, Release::Head, None).await {
                tracing::warn!(queue = keys.destination(), %error, "could not give a delivery back; its visibility timeout will");
            }
        });
        if tokio::time::timeout_at(close_by, futures_util::future::join_all(releases))
            .await
            .is_err()
        {
            tracing::warn!("Redis did not answer the give-backs in time; the visibility timeout returns what is left");
        }
    }
}
