//! What one scheduled run of a queue does: a regular transfer, or one window
//! of a sweep (one read of the whole pending list, window by window, under
//! the queue's sweep lease) when a backlog is scattered through a long
//! pending list.

use super::run::{self as transfer, TransferOutcome, WindowOutcome};
use super::Clock;
use crate::error::Result;
use crate::wire::keys::QueueKeys;

/// Due elements deep in the pending list from which a sweep (one read of the
/// whole list) costs less than searching the list once per element.
pub(crate) const SWEEP_MIN_DUE: u64 = 64;
/// Deep elements a regular run may search the whole list for (each such
/// search scans the list: ~18 ns an element).
pub(crate) const FULL_SCANS: u32 = 4;

/// How long a queue rests from sweeping after a sweep, in multiples of the
/// sweep's own duration: at most a quarter of the time goes to sweeps. A
/// sweep reads the whole pending list, so one started again as soon as the
/// last ends (a steady stream of offers due out of order keeps a few dozen
/// elements deep) costs a read of the list per few dozen elements and, run
/// back to back, holds Redis in 30 ms scripts from everyone else. Meanwhile
/// regular runs keep moving what they find cheaply.
pub(crate) const SWEEP_REST: i64 = 3;

/// Whether a queue may start a sweep now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MaySweep {
    Yes,
    /// Another client sweeps the queue.
    Elsewhere,
    /// This client swept it a moment ago (see [`SWEEP_REST`]).
    Resting,
}

/// The next run a queue needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The regular transfer; `full_scans` > 0 right after a sweep, or for a
    /// handful of deep elements.
    Regular { full_scans: u32 },
    /// A sweep: the window at `cursor`; `reserve_us` of the run's time is kept
    /// for removing the marks (what that took in the last run).
    Sweep { cursor: i64, reserve_us: i64 },
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
    /// When another client's sweep of the queue may be over (its lease gone):
    /// regular runs meanwhile would stop at the same deep element again.
    AfterSweep,
    /// When this client may sweep the queue again ([`SWEEP_REST`]).
    AfterRest,
}

pub(crate) async fn run(
    conn: &fred::clients::Client,
    keys: &QueueKeys,
    mode: &Mode,
    holder: &str,
    clock: Clock,
    batch: usize,
) -> Result<Step> {
    Ok(match mode {
        Mode::Regular { full_scans } => {
            Step::Regular(transfer::run_transfer(conn, keys, clock, batch, *full_scans).await?)
        }
        Mode::Sweep { cursor, reserve_us } => {
            Step::Window(transfer::sweep_window(conn, keys, holder, clock, *cursor, *reserve_us).await?)
        }
    })
}

/// The mode after a run, and when to run next.
pub(crate) fn next(mode: &Mode, step: &Step, may_sweep: MaySweep) -> (Mode, Then) {
    match (mode, step) {
        (Mode::Regular { .. }, Step::Regular(outcome)) => match outcome.deep {
            Some(due) if due >= SWEEP_MIN_DUE && may_sweep == MaySweep::Yes => (
                Mode::Sweep {
                    cursor: 0,
                    reserve_us: 0,
                },
                Then::Now,
            ),
            Some(due) if due >= SWEEP_MIN_DUE && may_sweep == MaySweep::Elsewhere => {
                (Mode::Regular { full_scans: 0 }, Then::AfterSweep)
            }
            // Resting: only the scans the run can afford by itself, again at
            // once while they move anything (a list short enough to search).
            Some(due) if due >= SWEEP_MIN_DUE && outcome.moved > 0 => (Mode::Regular { full_scans: 0 }, Then::Now),
            Some(due) if due >= SWEEP_MIN_DUE => (Mode::Regular { full_scans: 0 }, Then::AfterRest),
            Some(_) => (Mode::Regular { full_scans: FULL_SCANS }, Then::Now),
            None => (Mode::Regular { full_scans: 0 }, Then::AtHead),
        },
        // Another client sweeps: regular runs only (they stay correct).
        (Mode::Sweep { .. }, Step::Window(w)) if w.busy_ms.is_some() => (Mode::Regular { full_scans: 0 }, Then::Now),
        (Mode::Sweep { .. }, Step::Window(w)) if w.scanned > 0 => (
            Mode::Sweep {
                cursor: w.next_cursor,
                reserve_us: w.remove_us,
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
            bytes: 0,
            remove_us: 1_500,
        })
    }

    #[test]
    fn a_large_deep_backlog_starts_a_sweep_and_a_small_one_full_scans() {
        let start = Mode::Regular { full_scans: 0 };
        assert_eq!(
            next(&start, &regular(Some(100_000)), MaySweep::Yes),
            (
                Mode::Sweep {
                    cursor: 0,
                    reserve_us: 0
                },
                Then::Now
            )
        );
        assert_eq!(
            next(&start, &regular(Some(3)), MaySweep::Yes),
            (Mode::Regular { full_scans: FULL_SCANS }, Then::Now)
        );
        assert_eq!(
            next(&start, &regular(None), MaySweep::Yes),
            (Mode::Regular { full_scans: 0 }, Then::AtHead)
        );
    }

    #[test]
    fn a_sweep_reads_windows_to_the_end() {
        let sweep = Mode::Sweep {
            cursor: 0,
            reserve_us: 0,
        };
        assert_eq!(
            next(&sweep, &window(900, 1000, None), MaySweep::Yes),
            (
                Mode::Sweep {
                    cursor: 900,
                    reserve_us: 1_500
                },
                Then::Now
            )
        );
        assert_eq!(
            next(&sweep, &window(900, 0, None), MaySweep::Yes),
            (Mode::Regular { full_scans: FULL_SCANS }, Then::Now)
        );
    }

    #[test]
    fn while_another_client_sweeps_only_regular_runs_are_made_and_they_wait() {
        let sweep = Mode::Sweep {
            cursor: 0,
            reserve_us: 0,
        };
        assert_eq!(
            next(&sweep, &window(0, 0, Some(9_000)), MaySweep::Yes),
            (Mode::Regular { full_scans: 0 }, Then::Now)
        );
        let start = Mode::Regular { full_scans: 0 };
        assert_eq!(
            next(&start, &regular(Some(100_000)), MaySweep::Elsewhere),
            (Mode::Regular { full_scans: 0 }, Then::AfterSweep)
        );
    }

    #[test]
    fn a_queue_resting_from_a_sweep_runs_again_at_once_only_while_runs_move_elements() {
        let start = Mode::Regular { full_scans: 0 };
        let mut moving = regular(Some(100_000));
        if let Step::Regular(outcome) = &mut moving {
            outcome.moved = 12;
        }
        assert_eq!(
            next(&start, &moving, MaySweep::Resting),
            (Mode::Regular { full_scans: 0 }, Then::Now)
        );
        assert_eq!(
            next(&start, &regular(Some(100_000)), MaySweep::Resting),
            (Mode::Regular { full_scans: 0 }, Then::AfterRest)
        );
    }
}
