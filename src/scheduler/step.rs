//! What one scheduled run of a queue does: a regular transfer, or one step of
//! a sweep (record the due elements, then read the pending list window by
//! window) when a backlog is scattered through a long pending list.

use super::transfer::{self, TransferOutcome, WindowOutcome, SWEEP_COLLECT};
use crate::client::Clock;
use crate::error::Result;
use crate::keys::QueueKeys;

/// Due elements deep in the pending list from which a sweep (one read of the
/// whole list) costs less than searching the list once per element.
pub(crate) const SWEEP_MIN_DUE: u64 = 64;
/// Deep elements a regular run may search the whole list for (each such
/// search scans the list: ~18 ns an element).
pub(crate) const FULL_SCANS: u32 = 4;

/// The next run a queue needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The regular transfer; `full_scans` > 0 right after a sweep, or for a
    /// handful of deep elements.
    Regular { full_scans: u32 },
    /// Sweep, first part: record the elements due by `bound` (ms), from `offset`.
    Collect { bound: i64, offset: u64 },
    /// Sweep, second part: the window at `cursor`.
    Windows { cursor: i64 },
}

/// What a run did.
#[derive(Debug)]
pub(crate) enum Step {
    Regular(TransferOutcome),
    Collected(u64),
    Window(WindowOutcome),
}

pub(crate) async fn run(
    conn: &fred::clients::Client,
    keys: &QueueKeys,
    mode: &Mode,
    sweep_key: &str,
    clock: Clock,
    batch: usize,
) -> Result<Step> {
    Ok(match mode {
        Mode::Regular { full_scans } => {
            Step::Regular(transfer::run_transfer(conn, keys, clock, batch, *full_scans).await?)
        }
        Mode::Collect { bound, offset } => {
            Step::Collected(transfer::sweep_collect(conn, keys, sweep_key, *bound, *offset).await?)
        }
        Mode::Windows { cursor } => Step::Window(transfer::sweep_window(conn, keys, sweep_key, *cursor).await?),
    })
}

/// The mode after a run, and whether to run again at once.
pub(crate) fn next(mode: &Mode, step: &Step) -> (Mode, bool) {
    match (mode, step) {
        (Mode::Regular { .. }, Step::Regular(outcome)) => match outcome.deep {
            Some(due) if due >= SWEEP_MIN_DUE => (
                Mode::Collect {
                    bound: outcome.now_ms,
                    offset: 0,
                },
                true,
            ),
            Some(_) => (Mode::Regular { full_scans: FULL_SCANS }, true),
            None => (Mode::Regular { full_scans: 0 }, false),
        },
        (Mode::Collect { bound, offset }, Step::Collected(n)) if *n >= SWEEP_COLLECT as u64 => (
            Mode::Collect {
                bound: *bound,
                offset: offset + n,
            },
            true,
        ),
        (Mode::Collect { .. }, Step::Collected(_)) => (Mode::Windows { cursor: 0 }, true),
        (Mode::Windows { .. }, Step::Window(w)) if w.scanned > 0 => (Mode::Windows { cursor: w.next_cursor }, true),
        // End of the list: a regular run picks up what the sweep could not
        // see (elements shifted past it by concurrent removals, and new ones).
        (Mode::Windows { .. }, Step::Window(_)) => (Mode::Regular { full_scans: FULL_SCANS }, true),
        (mode, _) => (mode.clone(), false),
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

    #[test]
    fn a_large_deep_backlog_starts_a_sweep_and_a_small_one_full_scans() {
        let start = Mode::Regular { full_scans: 0 };
        assert_eq!(
            next(&start, &regular(Some(100_000))),
            (Mode::Collect { bound: 7, offset: 0 }, true)
        );
        assert_eq!(
            next(&start, &regular(Some(3))),
            (Mode::Regular { full_scans: FULL_SCANS }, true)
        );
        assert_eq!(next(&start, &regular(None)), (Mode::Regular { full_scans: 0 }, false));
    }

    #[test]
    fn a_sweep_collects_then_reads_windows_to_the_end() {
        let collect = Mode::Collect { bound: 7, offset: 0 };
        let full = SWEEP_COLLECT as u64;
        assert_eq!(
            next(&collect, &Step::Collected(full)),
            (Mode::Collect { bound: 7, offset: full }, true)
        );
        assert_eq!(next(&collect, &Step::Collected(5)), (Mode::Windows { cursor: 0 }, true));
        let window = Mode::Windows { cursor: 0 };
        let step = Step::Window(WindowOutcome {
            next_cursor: 900,
            moved: 100,
            quarantined: 0,
            scanned: 1000,
        });
        assert_eq!(next(&window, &step), (Mode::Windows { cursor: 900 }, true));
        let end = Step::Window(WindowOutcome {
            next_cursor: 900,
            moved: 0,
            quarantined: 0,
            scanned: 0,
        });
        assert_eq!(next(&window, &end), (Mode::Regular { full_scans: FULL_SCANS }, true));
    }
}
