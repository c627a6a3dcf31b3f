//! Work that finishes in the background, counted so that it can be waited
//! for before connections close.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

/// Work that finishes in the background (give-backs of dropped pops,
/// blocking connections being closed), counted so that a worker's stop and a
/// client's shutdown can wait for it: a value given back after `join()`
/// returned, or after the connections closed, would surprise or be lost.
#[derive(Default)]
pub(crate) struct Settling {
    running: AtomicUsize,
    done: Notify,
}

/// One piece of work counted by [`Settling`] until dropped.
pub(crate) struct SettlingGuard(Arc<Settling>);

impl Settling {
    pub(crate) fn enter(self: &Arc<Self>) -> SettlingGuard {
        self.running.fetch_add(1, Ordering::SeqCst);
        SettlingGuard(self.clone())
    }

    /// Resolves when nothing counted is running (waits at most `within`).
    pub(crate) async fn settled(&self, within: Duration) {
        let wait = async {
            loop {
                // Registered before the check: a wake-up in between is not missed.
                let done = self.done.notified();
                if self.running.load(Ordering::SeqCst) == 0 {
                    return;
                }
                done.await;
            }
        };
        let _ = tokio::time::timeout(within, wait).await;
    }
}

impl Drop for SettlingGuard {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.done.notify_waiters();
        }
    }
}
