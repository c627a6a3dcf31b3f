//! Whether a take tries `LPOP` before it waits with `BLPOP`.
//!
//! With a backlog, an `LPOP` on the shared, pipelined connections is as good
//! as a `BLPOP` and cheaper (concurrent takes share round trips). With an
//! empty list it is a wasted round trip before every wait: at 2,000 values a
//! second over 8 consumers it doubled the commands per value. So after a pop
//! that found nothing, takes go straight to `BLPOP`, and only one in
//! [`PROBE_EVERY`] tries `LPOP` first to notice a backlog again.

use std::sync::atomic::{AtomicU32, Ordering};

/// One take in this many tries `LPOP` first while pops find the list empty.
const PROBE_EVERY: u32 = 8;

/// Shared by a handle's clones: takes of one queue see the same list.
#[derive(Debug, Default)]
pub(super) struct ReadyHint {
    /// Takes since an `LPOP` last found a value.
    misses: AtomicU32,
}

impl ReadyHint {
    /// Whether this take should try `LPOP` first (and counts it if not).
    pub(super) fn probe(&self) -> bool {
        if self.misses.load(Ordering::Relaxed) == 0 {
            return true;
        }
        // One decision per take, so concurrent takes never step past a probe.
        self.misses.fetch_add(1, Ordering::Relaxed).is_multiple_of(PROBE_EVERY)
    }

    /// What the `LPOP` found.
    pub(super) fn found(&self, value: bool) {
        if value {
            self.misses.store(0, Ordering::Relaxed);
        } else {
            // Counted from 1: the next seven takes go straight to `BLPOP`.
            let _ = self.misses.compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_list_is_probed_once_in_eight_takes_and_a_value_resumes_every_take() {
        let hint = ReadyHint::default();
        assert!(hint.probe(), "the first take tries LPOP");
        hint.found(false);
        let probes = (0..16)
            .filter(|_| {
                hint.probe() && {
                    hint.found(false);
                    true
                }
            })
            .count();
        assert_eq!(probes, 2, "one take in eight probes while the list is empty");
        while !hint.probe() {}
        hint.found(true);
        assert!((0..4).all(|_| hint.probe()), "after a value, every take tries LPOP");
    }
}
