//! The last few milliseconds before a due time, to a tenth of a millisecond.
//!
//! tokio's timer (and so the wheel of `tokio_util::time::DelayQueue`) fires
//! on a 1 ms tick and its driver sleeps in whole milliseconds, so a run set
//! for a due time started 0–2 ms after it. The wheel now fires a little
//! early ([`EARLY`]), and this timer waits out the rest on a thread of its
//! own: `parking_lot`'s condition variable sleeps until an exact instant
//! (a futex with a nanosecond deadline, which Linux keeps to its ~50 µs
//! timer slack). It never spins: the thread sleeps until the earliest
//! deadline it holds, and holds only deadlines less than [`EARLY`] away.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use tokio::sync::mpsc;

/// How long before a due time the wheel hands a queue to this timer: more
/// than the wheel's lateness (its tick plus the driver's rounding).
pub(crate) const EARLY: Duration = Duration::from_millis(3);

/// A deadline that fired: the queue, and the due time (local ms) it was set for.
pub(crate) type Fired = (Arc<str>, i64);

/// Deadlines to the sub-millisecond, each sent back on a channel when it passes.
pub(crate) struct PreciseTimer {
    shared: Arc<Shared>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

/// When, an insertion number (keeps equal instants apart), the queue, its due ms.
type Deadline = (Instant, u64, Arc<str>, i64);

#[derive(Default)]
struct State {
    /// Earliest first.
    deadlines: BinaryHeap<Reverse<Deadline>>,
    next_seq: u64,
    closed: bool,
}

impl PreciseTimer {
    /// Starts the timer's thread; fired deadlines arrive on the receiver.
    pub(super) fn start() -> (PreciseTimer, mpsc::UnboundedReceiver<Fired>) {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let (fired_tx, fired_rx) = mpsc::unbounded_channel();
        let thread_shared = shared.clone();
        thread::Builder::new()
            .name("delayq-timer".into())
            .spawn(move || wait_loop(&thread_shared, &fired_tx))
            .expect("spawning the transfer timer thread");
        (PreciseTimer { shared }, fired_rx)
    }

    /// Sends `(name, due)` back once `at` has passed.
    pub(super) fn insert(&self, at: Instant, name: Arc<str>, due: i64) {
        let mut state = self.shared.state.lock();
        let earliest = state.deadlines.peek().is_none_or(|Reverse((first, ..))| at < *first);
        let seq = state.next_seq;
        state.next_seq += 1;
        state.deadlines.push(Reverse((at, seq, name, due)));
        drop(state);
        if earliest {
            self.shared.changed.notify_one();
        }
    }
}

impl Drop for PreciseTimer {
    fn drop(&mut self) {
        self.shared.state.lock().closed = true;
        self.shared.changed.notify_one();
    }
}

fn wait_loop(shared: &Shared, fired: &mpsc::UnboundedSender<Fired>) {
    let mut state = shared.state.lock();
    loop {
        if state.closed {
            return;
        }
        let now = Instant::now();
        match state.deadlines.peek() {
            None => shared.changed.wait(&mut state),
            Some(Reverse((at, ..))) if *at > now => {
                let at = *at;
                shared.changed.wait_until(&mut state, at);
            }
            Some(_) => {
                let Some(Reverse((_, _, name, due))) = state.deadlines.pop() else {
                    continue;
                };
                if fired.send((name, due)).is_err() {
                    return; // the scheduler is gone
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn deadlines_fire_in_order_and_never_before_their_instant() {
        let (timer, mut fired) = PreciseTimer::start();
        let start = Instant::now();
        let later = start + Duration::from_millis(4);
        let sooner = start + Duration::from_millis(2);
        timer.insert(later, Arc::from("later"), 2);
        timer.insert(sooner, Arc::from("sooner"), 1);
        let (name, due) = fired.recv().await.unwrap();
        assert_eq!((&*name, due), ("sooner", 1));
        assert!(Instant::now() >= sooner);
        let (name, due) = fired.recv().await.unwrap();
        assert_eq!((&*name, due), ("later", 2));
        assert!(Instant::now() >= later);
    }

    #[tokio::test]
    async fn dropping_the_timer_ends_its_thread() {
        let (timer, mut fired) = PreciseTimer::start();
        timer.insert(Instant::now() + Duration::from_secs(3600), Arc::from("q"), 0);
        drop(timer);
        // The thread drops its sender as it ends: the channel closes.
        assert!(tokio::time::timeout(Duration::from_secs(10), fired.recv())
            .await
            .expect("the thread ended")
            .is_none());
    }
}
