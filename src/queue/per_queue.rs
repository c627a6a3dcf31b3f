//! `PerQueue<T>`: one shared `T` per queue name per client, alive while any
//! handle of the queue holds it (reapers, lateness trackers; the
//! scheduler's registrations, one layer down, keep a map of the same shape
//! that drops entries as they die).

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

pub(crate) struct PerQueue<T> {
    live: Mutex<HashMap<String, Weak<T>>>,
}

impl<T> Default for PerQueue<T> {
    fn default() -> Self {
        PerQueue {
            live: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> PerQueue<T> {
    /// The live `T` of `queue`, if a handle holds one.
    pub(crate) fn get(&self, queue: &str) -> Option<Arc<T>> {
        self.live.lock().get(queue).and_then(Weak::upgrade)
    }

    /// The live `T` of `queue`, or a new one from `start`.
    pub(crate) fn get_or_start(&self, queue: &str, start: impl FnOnce() -> Arc<T>) -> Arc<T> {
        let mut live = self.live.lock();
        if let Some(running) = live.get(queue).and_then(Weak::upgrade) {
            return running;
        }
        // Entries of queues no handle holds any more go as the map doubles,
        // so it stays within twice the queues in use.
        if live.len() >= 64 && live.len().is_power_of_two() {
            live.retain(|_, t| t.strong_count() > 0);
        }
        let started = start();
        live.insert(queue.to_owned(), Arc::downgrade(&started));
        started
    }
}
