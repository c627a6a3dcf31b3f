//! The schedule runner: one task per client that fires the schedules of
//! every queue it watches at their occurrences.
//!
//! It sleeps until the earliest next occurrence of the schedules it knows
//! (on the Redis server's clock, through the offset it last measured), then
//! runs `schedule_fire.lua` for each due one: a compare-and-set on the stored
//! next occurrence, so when several processes wake for the same occurrence
//! exactly one offers it and the others read the record it left. It
//! re-reads each watched queue's schedules every [`POLL`] (schedules added,
//! resumed or replaced elsewhere), and at once after a change made through
//! its own client. One connection from the pool; it never spins: between
//! occurrences it waits on one timer.
//!
//! It says it is alive: at most every [`store::BEAT`], with a read of a
//! queue's schedules, it beats in the queue's `delayq_schedule_runners:{N}`
//! (`lua/schedule_beat.lua`), and it takes its beats back as it stops, so
//! a dashboard can tell schedules that fire from schedules nobody runs.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::queue::Core;
use crate::telemetry;
use crate::wire::keys::QueueKeys;
use crate::wire::time;

use super::store::{self, FireOutcome, FiredBy, Stored};

/// How often each watched queue's schedules are read again.
pub(crate) const POLL: Duration = Duration::from_secs(2);

/// Pause after a failed read or fire.
const RETRY: Duration = Duration::from_secs(1);

/// Longest wait for the beats to be taken back as the runner stops.
const LEAVE_WITHIN: Duration = Duration::from_secs(1);

/// Longest single sleep (the poll wakes it sooner anyway).
const MAX_SLEEP: Duration = Duration::from_secs(3600);

/// The runner of one client: started on first use, stopped when the client
/// (every clone) is dropped or shut down.
#[derive(Debug)]
pub(crate) struct Runner {
    tx: mpsc::UnboundedSender<Message>,
    _stop: DropGuard,
}

impl Runner {
    pub(crate) fn start(core: Arc<Core>) -> Runner {
        let (tx, rx) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        tokio::spawn(run(core, rx, stop.clone()));
        Runner {
            tx,
            _stop: stop.drop_guard(),
        }
    }

    /// Fires the schedules of `keys`' queue from now on, and reads them again now.
    pub(crate) fn watch(&self, keys: Arc<QueueKeys>) {
        let _ = self.tx.send(Message { keys, watch: true });
    }

    /// A sender that tells the runner a queue's schedules changed.
    pub(crate) fn notifier(&self) -> mpsc::UnboundedSender<Message> {
        self.tx.clone()
    }
}

/// To the runner: a queue's schedules changed (read them again if watched),
/// or watch it from now on.
#[derive(Debug)]
pub(crate) struct Message {
    pub keys: Arc<QueueKeys>,
    pub watch: bool,
}

struct Watched {
    keys: Arc<QueueKeys>,
    schedules: HashMap<String, Entry>,
    poll_at: Instant,
    beat_at: Instant,
}

struct Entry {
    stored: Stored,
    wake: Instant,
}

/// The Redis server's clock minus this host's, in ms.
#[derive(Default)]
struct Offset(i64);

impl Offset {
    fn server_now(&self) -> i64 {
        time::now_ms() + self.0
    }

    /// The server read `server_ms` between `sent` and now (local ms): taken
    /// as read half way, so the error is at most half the round trip.
    fn measured(&mut self, server_ms: i64, sent: i64) {
        let received = time::now_ms();
        self.0 = server_ms - (sent + received) / 2;
    }

    /// The instant at which the server's clock reads `at_ms`.
    fn instant(&self, at_ms: i64) -> Instant {
        let wait = at_ms.saturating_sub(self.server_now()).max(0) as u64;
        Instant::now() + Duration::from_millis(wait).min(MAX_SLEEP)
    }
}

async fn run(core: Arc<Core>, mut rx: mpsc::UnboundedReceiver<Message>, stop: CancellationToken) {
    let mut watched: HashMap<String, Watched> = HashMap::new();
    let id = format!("{}-{:08x}", std::process::id(), fastrand::u32(..));
    let by = FiredBy {
        id: id.clone(),
        host: crate::connection::host::host_name(),
    };
    let mut offset = Offset::default();
    loop {
        let wake = watched
            .values()
            .flat_map(|q| {
                std::iter::once(q.poll_at)
                    .chain(q.schedules.values().filter(|e| !e.stored.record.paused).map(|e| e.wake))
            })
            .min()
            .unwrap_or_else(|| Instant::now() + MAX_SLEEP);
        tokio::select! {
            biased;
            _ = stop.cancelled() => break,
            _ = core.shutdown_begun() => break,
            message = rx.recv() => match message {
                None => break,
                Some(Message { keys, watch }) => {
                    let name = keys.destination().to_owned();
                    if let Some(queue) = watched.get_mut(&name) {
                        queue.poll_at = Instant::now();
                    } else if watch {
                        // The first beat after a poll period: a command that saves a
                        // schedule and exits (`delayq schedule add`) never shows as a runner.
                        let beat_at = Instant::now() + POLL;
                        watched.insert(name, Watched { keys, schedules: HashMap::new(), poll_at: Instant::now(), beat_at });
                    }
                }
            },
            _ = tokio::time::sleep_until(wake) => {}
        }
        for queue in watched.values_mut() {
            if queue.poll_at <= Instant::now() {
                reload(&core, queue, &mut offset).await;
                if queue.beat_at <= Instant::now() {
                    beat(&core, queue, &id).await;
                }
            }
            let due: Vec<String> = queue
                .schedules
                .iter()
                .filter(|(_, e)| !e.stored.record.paused && e.wake <= Instant::now())
                .map(|(name, _)| name.clone())
                .collect();
            for name in due {
                fire(&core, queue, &name, &mut offset, &by).await;
            }
        }
    }
    leave(&core, &watched, &id).await;
    tracing::debug!("schedule runner stopped");
}

/// Says in Redis that this runner runs the queue's schedules.
async fn beat(core: &Core, queue: &mut Watched, id: &str) {
    queue.beat_at = Instant::now() + store::BEAT;
    let beat = async { store::beat(core.conn()?, &queue.keys, id, false).await };
    if let Err(error) = beat.await {
        tracing::debug!(queue = queue.keys.destination(), %error, "could not write the schedule runner's heartbeat");
    }
}

/// Takes this runner's beats back, so that it shows as gone at once rather
/// than after [`store::STALE_AFTER`]. Best effort, within a second: the
/// client may be shutting down (its pool answers until it closes), and a
/// beat left behind only goes stale.
async fn leave(core: &Core, watched: &HashMap<String, Watched>, id: &str) {
    let conn = core.pool().next();
    let all = futures_util::future::join_all(watched.values().map(|queue| store::beat(conn, &queue.keys, id, true)));
    let _ = tokio::time::timeout(LEAVE_WITHIN, all).await;
}

/// Reads a queue's schedules again.
async fn reload(core: &Core, queue: &mut Watched, offset: &mut Offset) {
    queue.poll_at = Instant::now() + POLL;
    let sent = time::now_ms();
    match store::list(core, &queue.keys, None).await {
        Ok((now, items)) => {
            offset.measured(now, sent);
            queue.schedules = items
                .into_iter()
                .map(|(name, stored)| {
                    let wake = offset.instant(stored.record.next().unwrap_or(i64::MAX));
                    (name, Entry { stored, wake })
                })
                .collect();
        }
        Err(error) => {
            tracing::warn!(queue = queue.keys.destination(), %error, "could not read the queue's schedules");
            queue.poll_at = Instant::now() + RETRY;
        }
    }
}

/// Fires one schedule's due occurrences, unless another process did first.
async fn fire(core: &Core, queue: &mut Watched, name: &str, offset: &mut Offset, by: &FiredBy) {
    let keys = queue.keys.clone();
    let Some(entry) = queue.schedules.get_mut(name) else {
        return;
    };
    let Ok(next) = entry.stored.record.next() else {
        entry.wake = Instant::now() + MAX_SLEEP;
        return;
    };
    let now = offset.server_now();
    let plan = entry.stored.spec.plan(next, now);
    if plan.fire.is_empty() && plan.missed == 0 {
        entry.wake = offset.instant(next.max(now + 1));
        return;
    }
    for _ in 0..3 {
        let sent = time::now_ms();
        match store::fire(core, &keys, name, &entry.stored, &plan, by).await {
            Ok(FireOutcome::Fired(stored)) => {
                tracing::debug!(
                    queue = keys.destination(),
                    schedule = name,
                    fired = plan.fire.len(),
                    missed = plan.missed,
                    "schedule fired"
                );
                telemetry::schedule_fired(keys.destination(), name, plan.fire.len() as u64, plan.missed);
                entry.wake = offset.instant(stored.record.next().unwrap_or(i64::MAX));
                entry.stored = stored;
            }
            Ok(FireOutcome::Stale(stored)) => {
                entry.wake = offset.instant(stored.record.next().unwrap_or(i64::MAX));
                entry.stored = stored;
            }
            Ok(FireOutcome::Gone) => {
                queue.schedules.remove(name);
            }
            Ok(FireOutcome::Early(server_now)) => {
                offset.measured(server_now, sent);
                entry.wake = offset.instant(next);
            }
            Ok(FireOutcome::Collision) => continue,
            Err(error) => {
                tracing::warn!(queue = keys.destination(), schedule = name, %error, "could not fire a schedule; trying again");
                entry.wake = Instant::now() + RETRY;
            }
        }
        return;
    }
    entry.wake = Instant::now();
}
