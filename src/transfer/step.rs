//! What one scheduled run of a queue does: a regular transfer, or one window
//! of a sweep (one read of the whole pending list, window by window, under
//! the queue's sweep lease) when a backlog is scattered through a long
//! pending list.

use super::run::{self as transfer, TransferOutcome, WindowOutcome};
use super::Clock;
use crate::connection::request::LaneRun;
use crate::error::Result;
use crate::wire::keys::QueueKeys;

/// Due elements deep in the pending list from which a sweep (one read of the
/// whole list) costs less than searching the list once per element.
pub(crate) const SWEEP_MIN_DUE: u64 = 64;
/// Deep elements a regular run may search the whole list for (each such
/// search scans the list: ~18 ns an element).
pub(crate) const FULL_SCANS: u32 = 4;

/// How long a queue rests from sweeping after a sweep, in multiples of the
/// time the sweep's scripts took, up to [`SWEEP_REST_MAX_MS`]: sweeps take at
/// most about a quarter of Redis's time. A sweep reads the whole pending
/// list, so one started again as soon as the last ends (a steady stream of
/// offers due out of order keeps dozens of elements deep) costs a read of the
/// list per few dozen elements and, run back to back, holds Redis in sweep
/// scripts from everyone else. The rest is kept in Redis (the lease, left as
/// `resting`), so it holds for every client of the queue; regular runs go on
/// meanwhile.
pub(crate) const SWEEP_REST: i64 = 3;
/// Longest rest after a sweep (ms): a sweep of a very long list must not
/// leave its deep elements waiting long after it.
pub(crate) const SWEEP_REST_MAX_MS: i64 = 1_000;

/// The rest (ms) after a sweep whose scripts took `busy_us` in Redis.
pub(crate) fn rest_ms(busy_us: i64) -> i64 {
    (busy_us.saturating_mul(SWEEP_REST) / 1_000).clamp(0, SWEEP_REST_MAX_MS)
}

/// The queue's sweep lease, as this client last found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lease {
    /// Free (or not known to be held): this client may sweep.
    Free,
    /// Another client sweeps the queue.
    Swept,
    /// Nobody sweeps: the queue rests after a sweep ([`SWEEP_REST`]).
    Resting,
}

/// The next run a queue needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The regular transfer; `full_scans` > 0 right after a sweep, or for a
    /// handful of deep elements.
    Regular { full_scans: u32 },
    /// A sweep: the window at `cursor`; `reserve_us` of the run's time is kept
    /// for removing the marks (what that took in the last run); its scripts
    /// have taken `busy_us` in Redis so far.
    Sweep { cursor: i64, reserve_us: i64, busy_us: i64 },
}

/// What a run did.
#[derive(Debug)]
pub(crate) enum Step {
    Regular(TransferOutcome),
    Window(WindowOutcome),
}

/// When the next run is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Then {
    /// At once.
    Now,
    /// At the head's due time (or at once while a backlog remains).
    AtHead,
    /// When the queue's sweep lease may be gone (another client's sweep over,
    /// or the rest after a sweep): regular runs meanwhile would stop at the
    /// same deep element again.
    AfterSweep,
}

pub(crate) async fn run(
    conn: &fred::clients::Client,
    keys: &QueueKeys,
    mode: &Mode,
    run: &LaneRun,
    clock: Clock,
    batch: usize,
) -> Result<Step> {
    Ok(match mode {
        Mode::Regular { full_scans } => {
            Step::Regular(transfer::run_transfer(conn, keys, run, clock, batch, *full_scans).await?)
        }
        Mode::Sweep {
            cursor,
            reserve_us,
            busy_us,
        } => {
            Step::Window(transfer::sweep_window(conn, keys, run, clock, *cursor, *reserve_us, rest_ms(*busy_us)).await?)
        }
    })
}

/// The mode after a run, and when to run next.
pub(crate) fn next(mode: &Mode, step: &Step, lease: Lease) -> (Mode, Then) {
    match (mode, step) {
        (Mode::Regular { .. }, Step::Regular(outcome)) => match outcome.deep {
            Some(due) if due >= SWEEP_MIN_DUE && lease == Lease::Free => (
                Mode::Sweep {
                    cursor: 0,
                    reserve_us: 0,
                    busy_us: 0,
                },
                Then::Now,
            ),
            // Resting: only the scans a run affords by itself, again at once
            // while they get anywhere (a list short enough to search). While
            // another client sweeps, its sweep moves them.
            Some(due) if due >= SWEEP_MIN_DUE && lease == Lease::Resting && outcome.moved + outcome.quarantined > 0 => {
                (Mode::Regular { full_scans: 0 }, Then::Now)
            }
            Some(due) if due >= SWEEP_MIN_DUE => (Mode::Regular { full_scans: 0 }, Then::AfterSweep),
            Some(_) => (Mode::Regular { full_scans: FULL_SCANS }, Then::Now),
            None => (Mode::Regular { full_scans: 0 }, Then::AtHead),
        },
        // Another client sweeps: regular runs only (they stay correct).
        (Mode::Sweep { .. }, Step::Window(w)) if w.busy_ms.is_some() => (Mode::Regular { full_scans: 0 }, Then::Now),
        (Mode::Sweep { busy_us, .. }, Step::Window(w)) if w.scanned > 0 => (
            Mode::Sweep {
                cursor: w.next_cursor,
                reserve_us: w.remove_us,
                busy_us: busy_us.saturating_add(w.took_us),
            },
            Then::Now,
        ),
        // End of the list: a regular run picks up what the sweep could not
        // see (elements shifted past it by concurrent removals, and new ones).
        (Mode::Sweep { .. }, Step::Window(_)) => (Mode::Regular { full_scans: FULL_SCANS }, Then::Now),
        (mode, _) => (mode.clone(), Then::AtHead),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regular(deep: Option<u64>) -> Step {
        Step::Regular(TransferOutcome {
            moved: 0,
            quarantined: 0,
            head_due_ms: None,
            now_ms: 7,
            deep,
            first_moved_due_ms: None,
            pending: 0,
            ready: 0,
        })
    }

    fn window(next_cursor: i64, scanned: u64, busy_ms: Option<i64>) -> Step {
        Step::Window(WindowOutcome {
            next_cursor,
            moved: 0,
            quarantined: 0,
            scanned,
            busy_ms,
            resting: false,
            bytes: 0,
            remove_us: 1_500,
            took_us: 20_000,
        })
    }

    #[test]
    fn a_large_deep_backlog_starts_a_sweep_and_a_small_one_full_scans() {
        let start = Mode::Regular { full_scans: 0 };
        assert_eq!(
            next(&start, &regular(Some(100_000)), Lease::Free),
            (
                Mode::Sweep {
                    cursor: 0,
                    reserve_us: 0,
                    busy_us: 0
                },
                Then::Now
            )
        );
        assert_eq!(
            next(&start, &regular(Some(3)), Lease::Free),
            (Mode::Regular { full_scans: FULL_SCANS }, Then::Now)
        );
        assert_eq!(
            next(&start, &regular(None), Lease::Free),
            (Mode::Regular { full_scans: 0 }, Then::AtHead)
        );
    }

    #[test]
    fn a_sweep_reads_windows_to_the_end() {
        let sweep = Mode::Sweep {
            cursor: 0,
            reserve_us: 0,
            busy_us: 5_000,
        };
        assert_eq!(
            next(&sweep, &window(900, 1000, None), Lease::Free),
            (
                Mode::Sweep {
                    cursor: 900,
                    reserve_us: 1_500,
                    busy_us: 25_000
                },
                Then::Now
            )
        );
        assert_eq!(
            next(&sweep, &window(900, 0, None), Lease::Free),
            (Mode::Regular { full_scans: FULL_SCANS }, Then::Now)
        );
    }

    #[test]
    fn while_another_client_sweeps_only_regular_runs_are_made_and_they_wait() {
        let sweep = Mode::Sweep {
            cursor: 0,
            reserve_us: 0,
            busy_us: 5_000,
        };
        assert_eq!(
            next(&sweep, &window(0, 0, Some(9_000)), Lease::Free),
            (Mode::Regular { full_scans: 0 }, Then::Now)
        );
        let start = Mode::Regular { full_scans: 0 };
        assert_eq!(
            next(&start, &regular(Some(100_000)), Lease::Swept),
            (Mode::Regular { full_scans: 0 }, Then::AfterSweep)
        );
        let mut moving = regular(Some(100_000));
        if let Step::Regular(outcome) = &mut moving {
            outcome.moved = 12;
        }
        assert_eq!(
            next(&start, &moving, Lease::Swept),
            (Mode::Regular { full_scans: 0 }, Then::AfterSweep)
        );
    }

    #[test]
    fn while_the_queue_rests_regular_runs_go_on_at_once_only_while_they_get_anywhere() {
        let start = Mode::Regular { full_scans: 0 };
        for (moved, quarantined) in [(12, 0), (0, 1)] {
            let mut moving = regular(Some(100_000));
            if let Step::Regular(outcome) = &mut moving {
                outcome.moved = moved;
                outcome.quarantined = quarantined;
            }
            assert_eq!(
                next(&start, &moving, Lease::Resting),
                (Mode::Regular { full_scans: 0 }, Then::Now)
            );
        }
        assert_eq!(
            next(&start, &regular(Some(100_000)), Lease::Resting),
            (Mode::Regular { full_scans: 0 }, Then::AfterSweep)
        );
    }

    #[test]
    fn the_rest_after_a_sweep_is_three_times_its_scripts_time_up_to_a_second() {
        assert_eq!(rest_ms(0), 0);
        assert_eq!(rest_ms(20_000), 60);
        assert_eq!(rest_ms(2_000_000), SWEEP_REST_MAX_MS);
        assert_eq!(rest_ms(i64::MAX), SWEEP_REST_MAX_MS);
    }
}
