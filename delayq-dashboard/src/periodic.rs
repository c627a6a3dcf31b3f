//! The dashboard's background loops (the health probe, the `INFO` reader,
//! the sampler): each a task that runs a step at a fixed period for as long
//! as the dashboard lives.

use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::Shared;

/// Runs `step` every `period` (a late tick waits, none is made up) until
/// the dashboard is dropped or its client shut down. Between steps the task
/// holds only a weak reference; `step` gets the dashboard's state and that
/// weak reference, so a step that waits on Redis can let go of the state
/// meanwhile and take it back after.
pub(crate) fn every<F, Fut>(shared: &Arc<Shared>, period: Duration, mut step: F)
where
    F: FnMut(Arc<Shared>, Weak<Shared>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let weak = Arc::downgrade(shared);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let Some(shared) = weak.upgrade() else { return };
            if shared.client.is_shut_down() {
                return;
            }
            step(shared, weak.clone()).await;
        }
    });
}
