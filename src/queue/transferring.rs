//! Whether a queue handle runs the transfer: the one switch all three handle
//! types share (`with_transfer`, `without_transfer`, `transfers`).

use std::sync::Arc;

use crate::queue::Core;
use crate::transfer::Registration;
use crate::wire::keys::QueueKeys;

/// The handle's share of its queue's registration with the client's
/// scheduler; the queue is scheduled while any share of it lives.
#[derive(Clone, Default)]
pub(crate) struct Transferring(Option<Arc<Registration>>);

impl Transferring {
    /// Turns the transfer on for this handle (a no-op when it is on).
    pub fn on(&mut self, core: &Core, keys: &Arc<QueueKeys>) {
        if self.0.is_none() {
            self.0 = Some(core.scheduler.register(keys.clone()));
        }
    }

    /// Turns it off for this handle; other handles of the queue keep theirs.
    pub fn off(&mut self) {
        self.0 = None;
    }

    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }
}
