//! Whether a queue handle runs the transfer: the switch behind
//! `with_transfer`, `without_transfer` and `transfers`, held by the
//! [`QueueHandle`](crate::queue::handle::QueueHandle) of each handle.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::queue::Core;
use crate::transfer::Registration;
use crate::wire::keys::QueueKeys;

/// How long a wanted handle that does nothing waits before it registers.
const UNUSED_GRACE: Duration = Duration::from_millis(250);

/// The handle's share of its queue's registration with the client's
/// scheduler; the queue is scheduled while any share of it lives.
///
/// A delayed queue from `Client::delayed_queue` starts *wanted*: it
/// registers at its first operation or `destination()` ([`arm`](Self::arm)),
/// or a quarter of a second after it was made if it is still wanted then (a handle kept
/// only so that the queue moves, as Java code keeps an `RDelayedQueue`).
/// So `client.delayed_queue(..)?.without_transfer()`, turned off before it
/// did anything, never reaches the scheduler: a look-only tool must not move
/// what is due, not even for a moment. `with_transfer()` registers at once.
/// Clones share one registration slot: the first to arm registers for all.
#[derive(Clone, Default)]
pub(crate) struct Transferring {
    wanted: bool,
    registration: Arc<OnceLock<Arc<Registration>>>,
}

impl Transferring {
    /// Wanted, registering at the first [`arm`](Self::arm), or after
    /// [`UNUSED_GRACE`] if the slot is still held then.
    pub(super) fn wanted(core: &Arc<Core>, keys: &Arc<QueueKeys>) -> Self {
        let registration: Arc<OnceLock<Arc<Registration>>> = Arc::default();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (slot, core, keys) = (Arc::downgrade(&registration), Arc::downgrade(core), keys.clone());
            runtime.spawn(async move {
                tokio::time::sleep(UNUSED_GRACE).await;
                if let (Some(slot), Some(core)) = (slot.upgrade(), core.upgrade()) {
                    slot.get_or_init(|| core.register_transfer(keys));
                }
            });
        }
        Transferring {
            wanted: true,
            registration,
        }
    }

    /// Turns the transfer on for this handle, now.
    pub(super) fn on(&mut self, core: &Core, keys: &Arc<QueueKeys>) {
        self.wanted = true;
        self.arm(core, keys);
    }

    /// Turns it off for this handle; other handles of the queue keep theirs.
    pub(super) fn off(&mut self) {
        self.wanted = false;
        self.registration = Arc::default();
    }

    /// Registers if wanted and not registered yet (at a handle's operations).
    pub(super) fn arm(&self, core: &Core, keys: &Arc<QueueKeys>) {
        if self.wanted {
            self.registration.get_or_init(|| core.register_transfer(keys.clone()));
        }
    }

    pub(super) fn is_on(&self) -> bool {
        self.wanted
    }
}
