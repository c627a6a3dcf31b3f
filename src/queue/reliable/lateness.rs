//! The lateness-tracking marker, kept alive while a tracking handle lives.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::queue::Core;
use crate::wire::keys::QueueKeys;

/// A task that runs while any handle lives: the lateness tracker.
pub(crate) struct Background {
    task: parking_lot::Mutex<Option<JoinHandle<()>>>,
}

impl Background {
    pub(super) fn spawn(task: impl std::future::Future<Output = ()> + Send + 'static) -> Arc<Self> {
        Arc::new(Background {
            task: parking_lot::Mutex::new(Some(tokio::spawn(task))),
        })
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(task) = self.task.lock().take() {
            task.abort();
        }
    }
}

/// How long the lateness-tracking marker lives without a refresh.
const TRACKING_TTL: Duration = Duration::from_secs(60);

/// Keeps the lateness-tracking marker alive (refreshed at a third of its life).
pub(super) fn start_tracker(core: &Arc<Core>, keys: &Arc<QueueKeys>) -> Arc<Background> {
    let (core, keys) = (core.clone(), keys.clone());
    Background::spawn(async move {
        let mut tick = tokio::time::interval(TRACKING_TTL / 3);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = core.shutdown_begun() => return,
            }
            let Ok(conn) = core.conn() else { return };
            let set: std::result::Result<(), _> = fred::interfaces::KeysInterface::set(
                conn,
                keys.due_tracking(),
                1,
                Some(fred::types::Expiration::PX(TRACKING_TTL.as_millis() as i64)),
                None,
                false,
            )
            .await;
            if let Err(error) = set {
                tracing::debug!(queue = keys.destination(), %error, "could not refresh the lateness-tracking marker");
            }
        }
    })
}
