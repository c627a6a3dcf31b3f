//! What happened to every value of a soak run, in arrays allocated up
//! front (a byte or three per value), so the bookkeeping itself does not
//! grow the heap the soak measures.

use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering::Relaxed};

/// What a value is, by its number: fixed shares of the stream.
pub mod kind {
    /// Offered with an id (10%).
    pub fn by_id(n: usize) -> bool {
        n.is_multiple_of(10)
    }
    /// Cancelled after its id offer (1% of the id offers).
    pub fn cancelled(n: usize) -> bool {
        n.is_multiple_of(1000)
    }
    /// Rescheduled after its id offer (1% of the id offers).
    pub fn rescheduled(n: usize) -> bool {
        n % 1000 == 500
    }
    /// Fails its first attempt, succeeds on the retry (1%).
    pub fn retried(n: usize) -> bool {
        n % 100 == 37
    }
    /// Fails for good: a dead letter (0.1%).
    pub fn permanent(n: usize) -> bool {
        n % 1000 == 777
    }
}

/// Flags of one value.
pub mod flag {
    /// The offer succeeded.
    pub const OFFERED: u8 = 1;
    /// The offer's outcome is unknown (its reply was lost for good).
    pub const UNKNOWN: u8 = 2;
    /// The offer failed: not queued.
    pub const FAILED: u8 = 4;
    /// `cancel` said it removed the value.
    pub const CANCELLED: u8 = 8;
    /// A cancel whose outcome is unknown.
    pub const CANCEL_UNKNOWN: u8 = 16;
    /// Read from the dead-letter list.
    pub const DEAD_LETTER: u8 = 32;
    /// An id offer answered that the id was pending already (never expected: ids are unique).
    pub const ID_KEPT: u8 = 64;
}

pub struct Ledger {
    flags: Box<[AtomicU8]>,
    /// Handler runs per value.
    calls: Box<[AtomicU8]>,
    /// Handler runs that returned `Ok` per value.
    oks: Box<[AtomicU8]>,
    next: AtomicUsize,
    /// Handler runs of the schedule's value.
    pub schedule_handled: AtomicU64,
    pub offered: AtomicU64,
    pub offers_failed: AtomicU64,
    pub offers_unknown: AtomicU64,
    pub handled: AtomicU64,
    pub retried: AtomicU64,
    pub dead_lettered: AtomicU64,
    pub cancelled: AtomicU64,
    pub rescheduled: AtomicU64,
    pub pauses: AtomicU64,
    pub cuts: AtomicU64,
    /// A value number past the ledger's end was handled (corrupt data).
    pub strangers: AtomicU64,
}

fn zeros(n: usize) -> Box<[AtomicU8]> {
    (0..n).map(|_| AtomicU8::new(0)).collect()
}

impl Ledger {
    pub fn new(capacity: usize) -> Ledger {
        Ledger {
            flags: zeros(capacity),
            calls: zeros(capacity),
            oks: zeros(capacity),
            next: AtomicUsize::new(0),
            schedule_handled: AtomicU64::new(0),
            offered: AtomicU64::new(0),
            offers_failed: AtomicU64::new(0),
            offers_unknown: AtomicU64::new(0),
            handled: AtomicU64::new(0),
            retried: AtomicU64::new(0),
            dead_lettered: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            rescheduled: AtomicU64::new(0),
            pauses: AtomicU64::new(0),
            cuts: AtomicU64::new(0),
            strangers: AtomicU64::new(0),
        }
    }

    /// The next value's number, or `None` once the ledger is full.
    pub fn next_value(&self) -> Option<usize> {
        let n = self.next.fetch_add(1, Relaxed);
        (n < self.flags.len()).then_some(n)
    }

    /// The heap the ledger holds (allocated once, up front).
    pub fn bytes(&self) -> u64 {
        3 * self.flags.len() as u64
    }

    /// Whether `n` was given out.
    pub fn given(&self, n: usize) -> bool {
        n < self.next.load(Relaxed).min(self.flags.len())
    }

    pub fn mark(&self, n: usize, flag: u8) {
        self.flags[n].fetch_or(flag, Relaxed);
    }

    /// Records a handler run of `n`; returns which run it is (1 the first),
    /// or `None` for a number the ledger never gave out.
    pub fn called(&self, n: i64) -> Option<u8> {
        match usize::try_from(n).ok().filter(|&n| self.given(n)) {
            Some(n) => Some(self.calls[n].fetch_add(1, Relaxed).saturating_add(1)),
            None => {
                self.strangers.fetch_add(1, Relaxed);
                None
            }
        }
    }

    pub fn succeeded(&self, n: i64) {
        self.oks[n as usize].fetch_add(1, Relaxed);
        self.handled.fetch_add(1, Relaxed);
    }

    /// Checks every value given out; the violations, at most a few of each
    /// kind spelled out.
    pub fn verdict(&self, schedule_fired: Option<u64>) -> Verdict {
        let given = self.next.load(Relaxed).min(self.flags.len());
        let mut v = Verdict::default();
        for n in 0..given {
            let flags = self.flags[n].load(Relaxed);
            let calls = self.calls[n].load(Relaxed);
            let oks = self.oks[n].load(Relaxed);
            let has = |f: u8| flags & f != 0;
            let expected_calls = if kind::retried(n) { 2 } else { 1 };
            let wrong = |list: &mut Vec<String>, what: &str| {
                if list.len() < 5 {
                    list.push(format!("{n} ({what}; flags {flags:#04x}, runs {calls}, ok {oks})"));
                }
            };
            if calls > 0 && has(flag::CANCELLED) {
                v.cancelled_delivered += 1;
                wrong(&mut v.examples, "cancelled, then delivered");
            }
            if calls > 0 && has(flag::FAILED) {
                v.failed_delivered += 1;
                wrong(&mut v.examples, "its offer failed, yet it was delivered");
            }
            if oks > 1 || calls > expected_calls {
                v.duplicated += 1;
                wrong(&mut v.examples, "handled more often than its retries explain");
            }
            if has(flag::ID_KEPT) {
                v.ids_kept += 1;
                wrong(&mut v.examples, "a new id was found pending");
            }
            if has(flag::UNKNOWN) && calls > 0 {
                v.unknown_delivered += 1;
            }
            let settled = oks >= 1 || (kind::permanent(n) && has(flag::DEAD_LETTER));
            let maybe_gone = has(flag::UNKNOWN) || has(flag::CANCELLED) || has(flag::CANCEL_UNKNOWN);
            if has(flag::OFFERED) && !settled && !maybe_gone {
                v.lost += 1;
                wrong(&mut v.examples, "offered, never handled");
            }
            if kind::permanent(n) && calls > 0 && !has(flag::DEAD_LETTER) {
                v.lost += 1;
                wrong(&mut v.examples, "failed for good, not in the dead letters");
            }
        }
        v.strangers = self.strangers.load(Relaxed);
        v.offers_failed = self.offers_failed.load(Relaxed);
        v.offers_unknown = self.offers_unknown.load(Relaxed);
        v.cuts = self.cuts.load(Relaxed);
        v.pauses = self.pauses.load(Relaxed);
        let handled = self.schedule_handled.load(Relaxed);
        v.schedule = (handled, schedule_fired);
        v
    }
}

#[derive(Default, Debug, Clone)]
pub struct Verdict {
    pub lost: u64,
    pub duplicated: u64,
    pub cancelled_delivered: u64,
    pub failed_delivered: u64,
    pub ids_kept: u64,
    pub strangers: u64,
    pub offers_failed: u64,
    pub offers_unknown: u64,
    /// Offers whose outcome was unknown and whose value was delivered (they had run).
    pub unknown_delivered: u64,
    pub cuts: u64,
    pub pauses: u64,
    /// Schedule occurrences handled, and fired according to the schedule's record.
    pub schedule: (u64, Option<u64>),
    /// Whether the queue drained at the end (nothing pending, ready or in flight).
    pub drained: bool,
    /// Values still in the queue when the drain gave up (delayed, ready,
    /// staged or in flight): a worker that fell behind, not a loss. Of the
    /// `lost` count (offered, never handled), at most `lost - still_queued`
    /// are gone.
    pub still_queued: u64,
    pub examples: Vec<String>,
}

impl Verdict {
    /// Whether the only fault is a drain that gave up while values were
    /// still queued, no more of them never handled than are queued.
    pub fn only_behind(&self) -> bool {
        !self.drained
            && self.lost <= self.still_queued
            && Verdict {
                drained: true,
                lost: 0,
                ..self.clone()
            }
            .ok()
    }

    pub fn ok(&self) -> bool {
        self.drained
            && self.lost == 0
            && self.duplicated == 0
            && self.cancelled_delivered == 0
            && self.failed_delivered == 0
            && self.ids_kept == 0
            && self.strangers == 0
            && self.schedule.1 == Some(self.schedule.0)
    }
}
