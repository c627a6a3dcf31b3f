//! What a finished run decides: count it, back off after a failure, or set
//! the next run from the step it returns.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::Result;
use crate::telemetry;
use crate::transfer::stats::Stats;
use crate::transfer::step::{self, Lease, Mode, Step, Then};
use crate::transfer::{Clock, TransferSettings};
use crate::wire::time;

use super::*;

impl SchedulerTask {
    pub(super) fn on_done(&mut self, name: &Arc<str>, outcome: Result<Step>) {
        Stats::add(&self.stats.transfer_runs, 1);
        let Some(queue) = self.queues.get_mut(name) else {
            return;
        };
        let rerun_at = match std::mem::replace(&mut queue.run, Run::Idle) {
            Run::Running { rerun_at } => rerun_at,
            _ => None,
        };
        queue.last_run = Instant::now();
        if queue.refs == 0 {
            self.forget(name);
            return;
        }
        let step = match outcome {
            Ok(step) => step,
            Err(error) => {
                queue.failures += 1;
                Stats::add(&self.stats.transfer_failures, 1);
                let backoff = backoff(&self.settings, queue.failures);
                tracing::warn!(queue = %name, %error, retry_in = ?backoff, "transfer failed");
                self.wake_at(name, time::now_ms() + backoff.as_millis() as i64);
                return;
            }
        };
        queue.failures = 0;
        let (moved, quarantined) = match &step {
            Step::Regular(outcome) => (outcome.moved, outcome.quarantined),
            Step::Window(window) => (window.moved, window.quarantined),
        };
        match &step {
            Step::Regular(outcome) => {
                let lateness = outcome
                    .first_moved_due_ms
                    .filter(|_| outcome.moved > 0)
                    .map(|due| outcome.now_ms - due);
                telemetry::transfer_run(name, moved, quarantined, lateness, (outcome.pending, outcome.ready));
            }
            _ => telemetry::swept(name, moved, quarantined),
        }
        // After the metrics: whoever sees the count sees them too.
        Stats::add(&self.stats.transferred, moved);
        if quarantined > 0 {
            Stats::add(&self.stats.quarantined, quarantined);
            tracing::warn!(
                queue = %name,
                count = quarantined,
                quarantine = queue.keys.quarantine(),
                "moved malformed elements (neither Bc0Lc0 nor dLc0) to quarantine"
            );
        }
        let now = time::now_ms();
        if let Step::Window(window) = &step {
            match window.busy_ms {
                Some(ttl) => {
                    tracing::debug!(queue = %name, lease_ms = ttl, "another client sweeps the queue");
                    queue.swept_elsewhere_until = now + ttl.clamp(SWEEP_WAIT_MS.0, SWEEP_WAIT_MS.1);
                    queue.sweep_resting = window.resting;
                }
                None if window.scanned == 0 => tracing::debug!(queue = %name, "sweep finished"),
                None if matches!(queue.mode, Mode::Sweep { cursor: 0, .. }) => {
                    tracing::debug!(queue = %name, "due elements scattered through a long pending list; sweeping it");
                    Stats::add(&self.stats.sweeps, 1);
                }
                None => {}
            }
        }
        let lease = match (now < queue.swept_elsewhere_until, queue.sweep_resting) {
            (false, _) => Lease::Free,
            (true, false) => Lease::Swept,
            (true, true) => Lease::Resting,
        };
        let (mode, then) = step::next(&queue.mode, &step, lease);
        let swept_elsewhere_until = queue.swept_elsewhere_until;
        queue.mode = mode;
        if let (Step::Regular(outcome), Clock::Server) = (&step, self.settings.clock) {
            self.clock_offset_ms = outcome.now_ms - time::now_ms();
        }
        match (step, then) {
            (_, Then::Now) => self.wake_at(name, i64::MIN),
            (_, Then::AfterSweep) => self.wake_at(name, swept_elsewhere_until),
            (Step::Regular(outcome), Then::AtHead) => {
                if outcome.backlog() {
                    self.wake_at(name, i64::MIN);
                } else if let Some(head) = outcome.head_due_ms {
                    self.wake_at(name, head.saturating_sub(self.clock_offset_ms));
                }
            }
            (Step::Window(_), Then::AtHead) => self.wake_at(name, i64::MIN),
        }
        if let Some(at) = rerun_at {
            self.wake_at(name, at);
        }
    }
}

/// Exponential backoff with up to 25% jitter, so failing clients do not retry in step.
fn backoff(settings: &TransferSettings, failures: u32) -> Duration {
    let base = settings
        .min_backoff
        .saturating_mul(1u32 << failures.saturating_sub(1).min(16));
    let base = base.min(settings.max_backoff);
    let jitter = base.mul_f64(fastrand::f64() * 0.25);
    base + jitter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let settings = TransferSettings::default();
        let first = backoff(&settings, 1);
        assert!(first >= Duration::from_millis(100) && first <= Duration::from_millis(125));
        let third = backoff(&settings, 3);
        assert!(third >= Duration::from_millis(400) && third <= Duration::from_millis(500));
        let many = backoff(&settings, 40);
        assert!(many >= Duration::from_secs(5) && many <= Duration::from_millis(6_250));
    }
}
