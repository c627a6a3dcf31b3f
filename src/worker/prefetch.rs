//! Deliveries claimed ahead of free handler slots: a worker whose handlers
//! finish quickly claims the next batch while the last one is handled, so
//! its slots never wait a round trip for a value; one whose handlers are
//! slow claims only for free slots, as a value waiting here is one no other
//! consumer can take.
//!
//! A buffered delivery's visibility timeout runs from its claim: one that
//! waits here longer than [`STALE`] of it goes back to the queue's head,
//! uncounted, before its lease could lapse (then it would be handed to two
//! consumers).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use tokio::sync::futures::Notified;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::queue::reliable::{Delivery, CLAIM_BATCH};

/// Most deliveries buffered beyond free slots by default: two claim
/// batches (a round trip on a loaded host can take as long as handling
/// two batches).
pub(crate) const MOST: usize = 2 * CLAIM_BATCH;

/// The share of the visibility timeout a delivery may wait here, and the
/// share the buffer's expected wait may reach.
const STALE: u32 = 4;

/// How many deliveries to claim beyond free slots, from how long handlers
/// take: as many as the worker starts within a quarter of the visibility
/// timeout, at most the worker's limit.
pub(crate) struct Pace {
    /// Handler run time, moving average (ns); 0 until a handler has run.
    average_ns: AtomicU64,
    /// The same with each run counted at most [`QUICK_CLIP`]: whether
    /// handlers are quick, which one run held up by the scheduler (a
    /// preempted thread: milliseconds) would otherwise undo for about
    /// sixty runs.
    clipped_ns: AtomicU64,
    concurrency: usize,
    visibility: Duration,
    limit: usize,
}

impl Pace {
    pub(crate) fn new(concurrency: usize, visibility: Duration, limit: usize) -> Pace {
        Pace {
            average_ns: AtomicU64::new(0),
            clipped_ns: AtomicU64::new(0),
            concurrency: concurrency.max(1),
            visibility,
            limit,
        }
    }

    /// Records a handler's run time (an average over about the last eight).
    pub(crate) fn ran(&self, took: Duration) {
        let took = took.as_nanos().min(u64::MAX as u128) as u64;
        let average = |average: &AtomicU64, took: u64| {
            let old = average.load(Ordering::Relaxed);
            let new = if old == 0 {
                took.max(1)
            } else {
                (old - old / 8).saturating_add(took / 8).max(1)
            };
            average.store(new, Ordering::Relaxed);
        };
        average(&self.average_ns, took);
        average(&self.clipped_ns, took.min(QUICK_CLIP.as_nanos() as u64));
    }

    /// Whether handlers take less than [`QUICK`] on average: then a few
    /// woken slots keep up with a claim's answer (see [`Shared::filled`]).
    pub(crate) fn quick(&self) -> bool {
        let average = self.clipped_ns.load(Ordering::Relaxed);
        average != 0 && average < QUICK.as_nanos() as u64
    }

    /// Claimed values waited too long for a slot: the pace was wrong (a
    /// handler is stuck), so nothing more is claimed ahead until a handler
    /// finishes again (then that run's time sets the pace).
    pub(crate) fn stalled(&self) {
        self.average_ns.store(0, Ordering::Relaxed);
        self.clipped_ns.store(0, Ordering::Relaxed);
    }

    /// Deliveries to hold beyond free slots now: none before a handler has
    /// run (its pace is unknown).
    pub(crate) fn ahead(&self) -> usize {
        let average = self.average_ns.load(Ordering::Relaxed);
        if average == 0 || self.limit == 0 {
            return 0;
        }
        let window = (self.visibility / STALE).as_nanos();
        let startable = window.saturating_mul(self.concurrency as u128) / u128::from(average);
        startable.min(self.limit as u128) as usize
    }
}

/// Claimed deliveries waiting for a slot, oldest first. Claims on their
/// way at once may answer out of order (one may wait on more than its
/// script), so the values of a claim (numbered from 0 by the claim stream,
/// in the order sent) wait here until every claim sent before it has
/// answered: values start in the queue's order.
pub(crate) struct Buffer<T> {
    waiting: VecDeque<(Instant, Delivery<T>)>,
    /// Answers of claims that came before an earlier claim's, by number.
    early: BTreeMap<u64, (Instant, Vec<Delivery<T>>)>,
    /// The number of the next claim to be taken in.
    next: u64,
    /// How long one may wait: a quarter of the visibility timeout.
    patience: Duration,
}

impl<T: 'static> Buffer<T> {
    pub(crate) fn new(visibility: Duration) -> Buffer<T> {
        Buffer {
            waiting: VecDeque::new(),
            early: BTreeMap::new(),
            next: 0,
            patience: visibility / STALE,
        }
    }

    /// Deliveries held: waiting for a slot, or for an earlier claim.
    pub(crate) fn len(&self) -> usize {
        self.waiting.len() + self.early.values().map(|(_, d)| d.len()).sum::<usize>()
    }

    /// Deliveries waiting for a slot (not those behind an earlier claim).
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Whether no delivery waits for a slot.
    pub(crate) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The answer of claim `claim`, sent at `at` (no deliveries when it
    /// took none or failed): taken in once every earlier claim answered.
    pub(crate) fn answered(&mut self, claim: u64, at: Instant, deliveries: Vec<Delivery<T>>) {
        self.early.insert(claim, (at, deliveries));
        while let Some((at, deliveries)) = self.early.remove(&self.next) {
            self.waiting.extend(deliveries.into_iter().map(|d| (at, d)));
            self.next += 1;
        }
    }

    /// The oldest delivery that has not waited too long at `now`.
    pub(crate) fn pop(&mut self, now: Instant) -> Option<Delivery<T>> {
        let (at, _) = self.waiting.front()?;
        if now.saturating_duration_since(*at) >= self.patience {
            return None;
        }
        self.waiting.pop_front().map(|(_, delivery)| delivery)
    }

    /// Whether a delivery held has waited too long (one behind an earlier
    /// claim included).
    pub(crate) fn any_stale(&self) -> bool {
        self.next_stale().is_some_and(|at| Instant::now() >= at)
    }

    /// When the oldest becomes stale, if any is held.
    pub(crate) fn next_stale(&self) -> Option<Instant> {
        let early = self.early.values().filter(|(_, d)| !d.is_empty()).map(|(at, _)| *at);
        self.waiting
            .front()
            .map(|(at, _)| *at)
            .into_iter()
            .chain(early)
            .min()
            .map(|at| at + self.patience)
    }

    /// Every delivery held, in claim order. Claims still on their way are
    /// taken in as they answer.
    pub(crate) fn drain(&mut self) -> Vec<Delivery<T>> {
        let mut all: Vec<Delivery<T>> = self.waiting.drain(..).map(|(_, delivery)| delivery).collect();
        for (_, deliveries) in self.early.values_mut() {
            all.append(deliveries);
        }
        all
    }
}

/// The buffer a worker's loop fills and its handler slots take from. A
/// slot whose handler finished takes the next delivery itself, oldest
/// first, instead of ending so that the loop starts another: that round
/// through the loop's one task for every value was the worker's serial
/// part (the loop now works per claim, the slots per value). A slot that
/// finds the buffer empty while a claim is on its way waits for its answer
/// instead of ending: with quick handlers the buffer runs dry between
/// claims, and then nearly one value in two started a task of its own,
/// and woke the loop as it ended.
pub(crate) struct Shared<T> {
    buffer: Mutex<Buffer<T>>,
    /// Set by the loop while the queue is paused or the worker stops:
    /// slots take nothing then, and what is held goes back.
    closed: AtomicBool,
    /// Set by the loop while a claim is on its way: an idle slot waits for
    /// it then, and ends otherwise (freeing its permit for a take).
    expecting: AtomicBool,
    /// Slots waiting for a claim's answer: free for the loop's claims.
    idle: AtomicUsize,
    /// Wakes the loop when slots have taken enough that it may claim again.
    taken: Notify,
    /// Wakes idle slots: deliveries came in, the buffer closed, or no claim
    /// is on its way any more.
    changed: Notify,
}

/// Handlers quicker than this on average take a claim's answer with a slot
/// woken per [`PER_WOKEN`] values: about what waking a slot costs, so more
/// slots would not start the values sooner.
const QUICK: Duration = Duration::from_micros(20);

/// Whether one handler run took less than [`QUICK`].
pub(crate) fn is_quick(took: Duration) -> bool {
    took < QUICK
}

/// The most one run counts towards whether handlers are [`QUICK`]: handlers
/// that all take this long turn the pace slow within three runs, one run
/// alone does not.
const QUICK_CLIP: Duration = Duration::from_micros(80);

/// Values per slot woken for an answer, while handlers are [`QUICK`].
const PER_WOKEN: usize = 16;

/// Slots wake the loop each time this many more were taken (and when the
/// buffer runs out): it claims at half a batch of room at the earliest.
const WAKE_EVERY: usize = CLAIM_BATCH / 4;

impl<T: 'static> Shared<T> {
    pub(crate) fn new(visibility: Duration) -> Shared<T> {
        Shared {
            buffer: Mutex::new(Buffer::new(visibility)),
            closed: AtomicBool::new(false),
            expecting: AtomicBool::new(false),
            idle: AtomicUsize::new(0),
            taken: Notify::new(),
            changed: Notify::new(),
        }
    }

    /// The buffer, for the loop.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Buffer<T>> {
        self.buffer.lock()
    }

    /// Slots take nothing until [`open`](Self::open): set before the loop
    /// drains the buffer, so that no delivery is both given back and run.
    pub(crate) fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.changed.notify_waiters();
        }
    }

    pub(crate) fn open(&self) {
        self.closed.store(false, Ordering::SeqCst);
    }

    /// Tells idle slots whether a claim is on its way (they wait for it)
    /// or not (they end).
    pub(crate) fn expect(&self, claiming: bool) {
        if self.expecting.swap(claiming, Ordering::SeqCst) && !claiming {
            self.changed.notify_waiters();
        }
    }

    /// `n` deliveries came in: idle slots take them. All of them wake,
    /// unless handlers are `quick`: then one per [`PER_WOKEN`] values. A
    /// worker faster than Redis waits on it between answers, and waking
    /// every idle slot for each answer was most of what a value cost more
    /// at concurrency 64 than at 8; the slots woken take on until the
    /// buffer is empty. A slot whose handler waits, takes [`QUICK`] or
    /// more, or fails wakes one more ([`spread`](Self::spread)), and the
    /// pace (a moving average over about eight runs) soon wakes all again.
    /// The cost, once per change from quick to slow handlers: a handler
    /// that blocks its thread at its first poll holds up to
    /// `PER_WOKEN - 1` values of its answer for one run.
    pub(crate) fn filled(&self, n: usize, quick: bool) {
        let idle = self.idle.load(Ordering::SeqCst);
        if idle == 0 || n == 0 {
            return;
        }
        if quick {
            // With no slot waiting, one wake is kept (a `Notify` keeps one)
            // for the next that waits, which takes on as the others would.
            for _ in 0..idle.min(n.div_ceil(PER_WOKEN)) {
                self.changed.notify_one();
            }
        } else {
            self.changed.notify_waiters();
        }
    }

    /// A slot's value was not quick (its handler waited at its first poll,
    /// took [`QUICK`] or more, or failed, which costs a round trip to
    /// settle): one more idle slot wakes while deliveries wait,
    /// so that slow handlers after quick ones still reach the worker's
    /// concurrency, a slot at a time, when an answer woke only a few.
    pub(crate) fn spread(&self) {
        if self.idle.load(Ordering::SeqCst) > 0 && !self.buffer.lock().is_empty() {
            self.changed.notify_one();
        }
    }

    /// Slots waiting for a claim's answer.
    pub(crate) fn idle_slots(&self) -> usize {
        self.idle.load(Ordering::SeqCst)
    }

    /// For a slot whose handler finished: the oldest delivery that has not
    /// waited too long; when none is held but a claim is on its way, the
    /// first of its answer. `None` (the slot ends) when closed, when the
    /// oldest waited too long (the loop gives it back), or when no claim
    /// is on its way.
    /// `now`: the slot's last clock read, as its handler finished.
    pub(crate) async fn take_next(&self, now: Instant) -> Option<Delivery<T>> {
        // Most takes find a delivery at once: they register no waiter
        // (a lock of the `Notify` and back, per value, shared by every slot).
        if let Some(decided) = self.try_take(now, false) {
            return decided;
        }
        loop {
            // Registered before the look, so that a change after it wakes.
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            if let Some(decided) = self.try_take(Instant::now(), true) {
                return decided;
            }
            // Counted idle (by `try_take`) until woken, also when the slot
            // is dropped.
            let _idle = Idle(&self.idle);
            changed.await;
        }
    }

    /// What a take decides now: the next delivery, or `Some(None)` (the
    /// slot ends); `None` when it should wait for a claim on its way,
    /// counted idle if `idle`.
    fn try_take(&self, now: Instant, idle: bool) -> Option<Option<Delivery<T>>> {
        let mut buffer = self.buffer.lock();
        if self.closed.load(Ordering::SeqCst) {
            return Some(None);
        }
        let next = buffer.pop(now);
        if next.is_some() && buffer.waiting.len().is_multiple_of(WAKE_EVERY) {
            self.taken.notify_one();
        }
        if next.is_some() || !buffer.is_empty() || !self.expecting.load(Ordering::SeqCst) {
            return Some(next);
        }
        if idle {
            self.idle.fetch_add(1, Ordering::SeqCst);
        }
        None
    }

    /// Resolves once slots took [`WAKE_EVERY`] more (or a wake was stored).
    pub(crate) fn taken(&self) -> Notified<'_> {
        self.taken.notified()
    }
}

/// A slot counted idle while this lives.
struct Idle<'a>(&'a AtomicUsize);

impl Drop for Idle<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_held_up_does_not_make_quick_handlers_slow_but_slow_ones_soon_are() {
        let pace = Pace::new(64, Duration::from_secs(30), MOST);
        assert!(!pace.quick(), "unknown before a run");
        for _ in 0..32 {
            pace.ran(Duration::from_micros(2));
        }
        assert!(pace.quick());
        // A run preempted for 5 ms (a busy host) counts as 80 us at most.
        pace.ran(Duration::from_millis(5));
        assert!(pace.quick(), "one held-up run");
        // Handlers that turn slow are slow within three runs.
        for _ in 0..3 {
            pace.ran(Duration::from_millis(1));
        }
        assert!(!pace.quick());
        // The prefetch pace (`ahead`) still sees the runs' real time.
        assert!(pace.average_ns.load(Ordering::Relaxed) > 4 * pace.clipped_ns.load(Ordering::Relaxed));
    }

    #[test]
    fn nothing_ahead_before_a_handler_ran() {
        let pace = Pace::new(8, Duration::from_secs(30), MOST);
        assert_eq!(pace.ahead(), 0);
    }

    #[test]
    fn fast_handlers_claim_ahead_up_to_the_limit() {
        let pace = Pace::new(8, Duration::from_secs(30), MOST);
        pace.ran(Duration::from_micros(50));
        assert_eq!(pace.ahead(), MOST);
    }

    #[test]
    fn slow_handlers_claim_only_what_starts_within_a_quarter_of_the_visibility_timeout() {
        // 8 slots, 10 s a run: 16 start in 20 s, 4 in a quarter of 20 s.
        let pace = Pace::new(8, Duration::from_secs(20), MOST);
        pace.ran(Duration::from_secs(10));
        assert_eq!(pace.ahead(), 4);
        // 60 s a run (on average, after a while): none ahead.
        for _ in 0..64 {
            pace.ran(Duration::from_secs(60));
        }
        assert_eq!(pace.ahead(), 0);
    }

    #[test]
    fn a_stall_stops_claiming_ahead_until_a_handler_finishes() {
        let pace = Pace::new(8, Duration::from_secs(30), MOST);
        pace.ran(Duration::from_micros(50));
        pace.stalled();
        assert_eq!(pace.ahead(), 0);
        pace.ran(Duration::from_secs(5));
        assert_eq!(pace.ahead(), 12);
    }

    #[test]
    fn a_limit_of_zero_claims_only_for_free_slots() {
        let pace = Pace::new(8, Duration::from_secs(30), 0);
        pace.ran(Duration::from_micros(50));
        assert_eq!(pace.ahead(), 0);
    }
}
