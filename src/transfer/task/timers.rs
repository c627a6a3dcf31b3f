//! When a queue's run starts: its timer on the wheel, and the ready queues
//! that start runs as slots free up.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::transfer::precise_timer::EARLY;
use crate::transfer::step::{self};
use crate::wire::time;

use super::*;

/// How far past a due ms a run starts: the precise timer's instant and
/// this host's wall clock (which the run reads) may disagree by a few µs.
const PAST_DUE_US: u64 = 50;

impl SchedulerTask {
    /// Asks for a run of `name` soon, behind every run that has something due.
    pub(super) fn check(&mut self, name: &Arc<str>) {
        let Some(queue) = self.queues.get_mut(name) else {
            return;
        };
        match &mut queue.run {
            Run::Queued { .. } => {}
            Run::Running { rerun_at } => *rerun_at = Some(i64::MIN),
            Run::Idle => {
                Timer::clear(&mut queue.timer, &mut self.wheel);
                queue.run = Run::Queued { urgent: false };
                self.ready_check.push_back(name.clone());
            }
        }
    }

    /// Asks for a run of `name` at local time `due` (ms); `i64::MIN` means now.
    pub(super) fn wake_at(&mut self, name: &Arc<str>, due: i64) {
        let Self {
            queues,
            wheel,
            precise,
            ready_due,
            ..
        } = self;
        let Some(queue) = queues.get_mut(name) else {
            return;
        };
        let now_us = time::now_us();
        let now = now_us.div_euclid(1000);
        match &mut queue.run {
            Run::Queued { urgent } => {
                // A queue waiting behind checks moves up once something is due.
                if !*urgent && due <= now {
                    *urgent = true;
                    ready_due.push_back(name.clone());
                }
            }
            Run::Running { rerun_at } => *rerun_at = Some(rerun_at.map_or(due, |at| at.min(due))),
            Run::Idle => {
                if due <= now {
                    Timer::clear(&mut queue.timer, wheel);
                    queue.run = Run::Queued { urgent: true };
                    ready_due.push_back(name.clone());
                    return;
                }
                let due = due.min(now + MAX_TIMER_MS);
                if queue.timer.as_ref().is_some_and(|timer| timer.due() <= due) {
                    return;
                }
                Timer::clear(&mut queue.timer, wheel);
                // To the microsecond, a little past the due ms so that this
                // host's clock (which the run reads) has surely reached it.
                let wait = Duration::from_micros((due * 1000 - now_us) as u64 + PAST_DUE_US);
                let at = Instant::now() + wait;
                queue.timer = Some(if wait <= EARLY {
                    precise.insert(at.into_std(), name.clone(), due);
                    Timer::Precise(due)
                } else {
                    Timer::Wheel(wheel.insert_at(name.clone(), at - EARLY), due)
                });
            }
        }
    }

    /// Starts queued runs while slots are free.
    pub(super) fn dispatch(&mut self) {
        while self.running.len() < self.settings.max_in_flight {
            let Some(name) = self.ready_due.pop_front().or_else(|| self.ready_check.pop_front()) else {
                break;
            };
            let Some(queue) = self.queues.get_mut(&name) else {
                continue;
            };
            // Entries left in the other ready queue after a move up are stale.
            if !matches!(queue.run, Run::Queued { .. }) {
                continue;
            }
            queue.run = Run::Running { rerun_at: None };
            let conn = self.pool.next().clone();
            let keys = queue.keys.clone();
            let (clock, batch) = (self.settings.clock, self.settings.batch);
            let mode = queue.mode.clone();
            let run = self.lane.next(&keys);
            let task_name = name.clone();
            let handle = self.running.spawn(async move {
                let outcome = step::run(&conn, &keys, &mode, &run, clock, batch).await;
                (task_name, outcome)
            });
            self.running_ids.insert(handle.id(), name);
        }
    }
}
