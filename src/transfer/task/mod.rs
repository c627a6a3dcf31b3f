//! The scheduler's event loop (see the module docs of `transfer`).

use std::collections::{HashMap, VecDeque};
use std::future::poll_fn;
use std::sync::Arc;
use std::time::Duration;

use fred::clients::{Pool, SubscriberClient};
use fred::prelude::EventInterface;
use fred::types::Message;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{mpsc, oneshot};
use tokio::task::{Id, JoinSet};
use tokio::time::Instant;
use tokio_util::time::{delay_queue, DelayQueue};

use crate::connection::request::Lane;
use crate::error::Result;
use crate::transfer::precise_timer::{Fired, PreciseTimer};
use crate::transfer::stats::Stats;
use crate::transfer::step::{Mode, Step};
use crate::transfer::subscriptions::{self, SubEvent, SubOp};
use crate::transfer::Command;
use crate::transfer::TransferSettings;
use crate::wire::keys::QueueKeys;
use crate::wire::time;

mod outcome;
mod timers;

/// Pub/sub messages handled in one turn of the event loop, at most.
const MESSAGE_BURST: usize = 256;

/// How long shutdown waits for transfer runs in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Shortest and longest wait for a queue's sweep lease to go (another
/// client's sweep, or the rest after a sweep: the lease says how long it has
/// left) before trying to take it.
const SWEEP_WAIT_MS: (i64, i64) = (10, 2_000);

/// Longest a timer is set for: the wheel holds about two years, and a queue
/// whose head is due later simply gets an extra, empty run every hour.
const MAX_TIMER_MS: i64 = 3_600_000;

enum Run {
    /// Waiting for its timer, or for a message.
    Idle,
    /// In a ready queue, to start as soon as a slot is free; `urgent` when
    /// something is due (not just a check).
    Queued { urgent: bool },
    /// In flight; `rerun_at` is the earliest wake-up asked for meanwhile.
    Running { rerun_at: Option<i64> },
}

/// A queue's next wake-up while idle, and the local due time (ms) it is for.
enum Timer {
    /// On the wheel, set a little before the due time ([`precise_timer::EARLY`](crate::transfer::precise_timer::EARLY)).
    Wheel(delay_queue::Key, i64),
    /// Due within a few ms: on the precise timer.
    Precise(i64),
}

impl Timer {
    fn due(&self) -> i64 {
        match self {
            Timer::Wheel(_, due) | Timer::Precise(due) => *due,
        }
    }

    /// Clears a queue's timer, taking its entry off the wheel (a precise
    /// deadline left behind no longer matches the timer when it fires, and is ignored).
    fn clear(timer: &mut Option<Timer>, wheel: &mut DelayQueue<Arc<str>>) {
        if let Some(Timer::Wheel(key, _)) = timer.take() {
            wheel.remove(&key);
        }
    }
}

struct QueueState {
    keys: Arc<QueueKeys>,
    /// Live registrations (handles) of the queue in this client.
    refs: usize,
    /// When the queue's next run starts; only while idle.
    timer: Option<Timer>,
    run: Run,
    /// What the next run does (a regular transfer, or a step of a sweep).
    mode: Mode,
    failures: u32,
    last_run: Instant,
    /// Local time (ms) until which the queue's sweep lease is known to be held.
    swept_elsewhere_until: i64,
    /// The lease found held then was a rest after a sweep (nobody sweeps).
    sweep_resting: bool,
}

pub(crate) struct SchedulerTask {
    pool: Pool,
    subscriber: Option<SubscriberClient>,
    settings: TransferSettings,
    stats: Arc<Stats>,
    queues: HashMap<Arc<str>, QueueState>,
    by_channel: HashMap<String, Arc<str>>,
    wheel: DelayQueue<Arc<str>>,
    /// The last few ms before each due time, to the tenth of a ms.
    precise: PreciseTimer,
    fired: Option<mpsc::UnboundedReceiver<Fired>>,
    /// Queues with something due: these runs go first.
    ready_due: VecDeque<Arc<str>>,
    /// Queues to check (after subscribing, reconnecting, lost messages,
    /// resync): thousands can pile up at once, and must not delay due runs.
    ready_check: VecDeque<Arc<str>>,
    running: JoinSet<(Arc<str>, Result<Step>)>,
    running_ids: HashMap<Id, Arc<str>>,
    sub_ops: Option<mpsc::UnboundedSender<SubOp>>,
    /// Server clock minus local clock (ms), learned from runs under [`Clock::Server`](crate::Clock::Server).
    clock_offset_ms: i64,
    /// Numbers the runs, one at a time per queue, so that a resent run
    /// answers what it did (`connection::request::Lane`); its token names
    /// this client as the holder of a sweep lease (see `QueueKeys::sweep`).
    lane: Lane,
}

impl SchedulerTask {
    pub(super) fn new(pool: Pool, subscriber: SubscriberClient, settings: TransferSettings, stats: Arc<Stats>) -> Self {
        let (precise, fired) = PreciseTimer::start();
        SchedulerTask {
            pool,
            subscriber: Some(subscriber),
            settings,
            stats,
            queues: HashMap::new(),
            by_channel: HashMap::new(),
            wheel: DelayQueue::new(),
            precise,
            fired: Some(fired),
            ready_due: VecDeque::new(),
            ready_check: VecDeque::new(),
            running: JoinSet::new(),
            running_ids: HashMap::new(),
            sub_ops: None,
            clock_offset_ms: 0,
            lane: Lane::new(),
        }
    }

    pub(super) async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) {
        let subscriber = self.subscriber.take().expect("run is called once");
        let mut messages = subscriber.message_rx();
        let mut messages_open = true;
        let mut fired = self.fired.take().expect("run is called once");
        let (ops_tx, ops_rx) = mpsc::unbounded_channel();
        let (events_tx, mut events) = mpsc::unbounded_channel();
        // A command connection that comes back ends the backoff of runs that
        // failed while it was down: transfer everything again at once.
        let (reconnect_tx, mut reconnects) = mpsc::unbounded_channel::<()>();
        for client in self.pool.clients() {
            let mut rx = client.reconnect_rx();
            let tx = reconnect_tx.clone();
            tokio::spawn(async move {
                while !matches!(rx.recv().await, Err(RecvError::Closed)) {
                    if tx.send(()).is_err() {
                        return;
                    }
                }
            });
        }
        drop(reconnect_tx);
        let closing = subscriber.clone();
        let mut sub_task = tokio::spawn(subscriptions::run(subscriber, ops_rx, events_tx));
        self.sub_ops = Some(ops_tx);

        let resync_every = self.settings.resync_interval;
        let mut resync = tokio::time::interval(
            resync_every.map_or(Duration::from_secs(3600), |d| (d / 8).max(Duration::from_millis(100))),
        );
        resync.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

        let mut shutdown: Option<oneshot::Sender<()>> = None;
        loop {
            self.dispatch();
            tokio::select! {
                command = commands.recv() => match command {
                    Some(Command::Register(keys)) => self.register(keys),
                    Some(Command::Unregister(name)) => self.unregister(&name),
                    Some(Command::Shutdown(done)) => {
                        shutdown = Some(done);
                        break;
                    }
                    None => break,
                },
                message = messages.recv(), if messages_open => match message {
                    Ok(message) => {
                        self.on_message(message);
                        // A burst is read in one turn (up to MESSAGE_BURST), so it
                        // never waits behind other events and rarely overflows.
                        let mut lost = 0;
                        for _ in 0..MESSAGE_BURST {
                            match messages.try_recv() {
                                Ok(message) => self.on_message(message),
                                Err(TryRecvError::Lagged(n)) => lost += n,
                                Err(_) => break,
                            }
                        }
                        if lost > 0 {
                            self.messages_lost(lost);
                        }
                    }
                    Err(RecvError::Lagged(lost)) => self.messages_lost(lost),
                    Err(RecvError::Closed) => {
                        tracing::warn!("pub/sub stream closed; relying on resync");
                        messages_open = false;
                    }
                },
                Some(event) = events.recv() => match event {
                    SubEvent::Subscribed(channels) => {
                        for channel in channels {
                            if let Some(name) = self.by_channel.get(&channel).cloned() {
                                self.check(&name);
                            }
                        }
                    }
                    SubEvent::Resubscribed => self.wake_all(),
                },
                Some(()) = reconnects.recv() => {
                    tracing::debug!("command connection back; transferring every queue");
                    self.wake_all();
                }
                Some(expired) = poll_fn(|cx| self.wheel.poll_expired(cx)) => {
                    // A little before the due time: the precise timer waits out the rest.
                    let name = expired.into_inner();
                    if let Some(queue) = self.queues.get_mut(&name)
                        && let Some(due) = queue.timer.take().map(|timer| timer.due()) {
                            self.wake_at(&name, due);
                        }
                }
                Some((name, due)) = fired.recv() => {
                    // Stale when the queue ran or was set for another time meanwhile.
                    if let Some(queue) = self.queues.get_mut(&name)
                        && matches!(queue.timer, Some(Timer::Precise(at)) if at == due) {
                            queue.timer = None;
                            self.wake_at(&name, i64::MIN);
                        }
                }
                Some(done) = self.running.join_next_with_id(), if !self.running.is_empty() => match done {
                    Ok((id, (name, outcome))) => {
                        self.running_ids.remove(&id);
                        self.on_done(&name, outcome);
                    }
                    Err(error) => {
                        let name = self.running_ids.remove(&error.id());
                        tracing::error!(%error, "transfer task failed");
                        if let Some(name) = name {
                            self.on_done(&name, Err(crate::Error::Protocol(format!("transfer task failed: {error}"))));
                        }
                    }
                },
                _ = resync.tick(), if resync_every.is_some() => self.resync(),
            }
        }

        // Shutdown: let runs in flight finish, then close the subscriber.
        let drain = async { while self.running.join_next().await.is_some() {} };
        if tokio::time::timeout(SHUTDOWN_GRACE, drain).await.is_err() {
            self.running.abort_all();
        }
        if let Some(ops) = self.sub_ops.take() {
            // Its task ends once it has quit (awaited just below).
            let _ = ops.send(SubOp::Quit);
        }
        // The task may be retrying against a Redis that is gone (it reads no
        // Quit while resubscribing): stop it, and close its connection here.
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut sub_task).await.is_err() {
            sub_task.abort();
            crate::connection::quit(&closing).await;
        }
        if let Some(done) = shutdown {
            let _ = done.send(());
        }
    }

    fn register(&mut self, keys: Arc<QueueKeys>) {
        let name: Arc<str> = Arc::from(keys.destination());
        if let Some(queue) = self.queues.get_mut(&name) {
            queue.refs += 1;
            return;
        }
        let channel = keys.channel().to_owned();
        self.by_channel.insert(channel.clone(), name.clone());
        self.queues.insert(
            name,
            QueueState {
                keys,
                refs: 1,
                timer: None,
                run: Run::Idle,
                mode: Mode::Regular { full_scans: 0 },
                failures: 0,
                last_run: Instant::now(),
                swept_elsewhere_until: i64::MIN,
                sweep_resting: false,
            },
        );
        self.subscriptions(SubOp::Subscribe(vec![channel]));
    }

    fn unregister(&mut self, name: &Arc<str>) {
        let Some(queue) = self.queues.get_mut(name) else {
            return;
        };
        queue.refs = queue.refs.saturating_sub(1);
        if queue.refs > 0 || matches!(queue.run, Run::Running { .. }) {
            return; // a run in flight finishes first (see on_done)
        }
        self.forget(name);
    }

    /// Drops a queue with no handle left from the schedule.
    fn forget(&mut self, name: &Arc<str>) {
        if let Some(mut queue) = self.queues.remove(name) {
            Timer::clear(&mut queue.timer, &mut self.wheel);
            let channel = queue.keys.channel().to_owned();
            self.by_channel.remove(&channel);
            self.subscriptions(SubOp::Unsubscribe(vec![channel]));
        }
    }

    fn subscriptions(&self, op: SubOp) {
        if let Some(ops) = &self.sub_ops {
            let _ = ops.send(op);
        }
    }

    fn on_message(&mut self, message: Message) {
        let Some(name) = self.by_channel.get(&*message.channel).cloned() else {
            return;
        };
        let due = message.value.as_string().and_then(|text| time::parse_score(&text));
        match due {
            Some(due) => self.wake_at(&name, due.saturating_sub(self.clock_offset_ms)),
            None => self.wake_at(&name, i64::MIN),
        }
    }

    /// Wake-ups may be among the messages lost: every queue is checked.
    fn messages_lost(&mut self, lost: u64) {
        tracing::debug!(lost, "pub/sub messages lost; transferring every queue");
        self.wake_all();
    }

    fn wake_all(&mut self) {
        let names: Vec<Arc<str>> = self.queues.keys().cloned().collect();
        for name in names {
            self.check(&name);
        }
    }

    fn resync(&mut self) {
        let Some(every) = self.settings.resync_interval else {
            return;
        };
        let stale: Vec<Arc<str>> = self
            .queues
            .iter()
            .filter(|(_, q)| matches!(q.run, Run::Idle) && q.last_run.elapsed() >= every)
            .map(|(name, _)| name.clone())
            .collect();
        for name in stale {
            self.check(&name);
        }
    }
}
