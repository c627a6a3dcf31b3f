//! Reliable deliveries a client has handed out and not yet settled, so that
//! shutdown can wait for them and give back what is left.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::queue::reliable::Settings;
use crate::wire::keys::QueueKeys;

pub(crate) type Unsettled = (Arc<QueueKeys>, Settings, Bytes);

#[derive(Default)]
pub(crate) struct Outstanding {
    next: AtomicU64,
    deliveries: Mutex<HashMap<u64, Unsettled>>,
    changed: Notify,
}

impl Outstanding {
    pub fn add(&self, keys: Arc<QueueKeys>, settings: Settings, member: Bytes) -> u64 {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        self.deliveries.lock().insert(token, (keys, settings, member));
        token
    }

    pub fn remove(&self, token: u64) {
        if self.deliveries.lock().remove(&token).is_some() {
            self.changed.notify_waiters();
        }
    }

    /// Waits until every delivery is settled.
    pub async fn settled(&self) {
        loop {
            let changed = self.changed.notified();
            if self.deliveries.lock().is_empty() {
                return;
            }
            changed.await;
        }
    }

    /// Takes what is still unsettled.
    pub fn drain(&self) -> Vec<Unsettled> {
        self.deliveries.lock().drain().map(|(_, d)| d).collect()
    }
}
