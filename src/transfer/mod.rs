//! The transfer scheduler: one per [`Client`](crate::Client), moving the due
//! elements of every registered queue to its destination list.
//!
//! Owns the scheduler task and its registrations ([`Scheduler`]), one
//! transfer run ([`run`]), what a run decides next ([`step`]), the
//! subscriber's channels ([`subscriptions`]), its settings and [`Clock`],
//! and its counters ([`ClientStats`]).
//!
//! May use: `connection`, `wire`, `telemetry`, `error`. Never a queue type
//! or `Client`: queues register their keys here, nothing here calls back up.
//!
//! # How it works
//!
//! A single task owns a timing wheel (`tokio_util::time::DelayQueue`, 1 ms
//! resolution) holding each queue's next due time, set a few ms early; the
//! last few ms are waited out on a thread of its own (`precise_timer`), so
//! a run starts ~0.1 ms after its due time rather than 0–2 ms. It runs the
//! transfer script for a queue:
//! - when the queue is registered, once its channel is subscribed;
//! - at the due time published on the queue's channel (the offer script
//!   publishes when a new element becomes the head), or at once if already due;
//! - at the head due time each run returns, or at once while a backlog remains
//!   (the run moved a full batch, or the head is still due);
//! - for every queue after the subscriber reconnects, and when the pub/sub
//!   stream reports lost (lagged) messages;
//! - every `resync_interval` as a safety net;
//! - after a failed run, with exponential backoff.
//!
//! One subscriber connection serves every queue; subscribing happens in a
//! task of its own ([`subscriptions`]) so a slow `SUBSCRIBE` never delays a
//! due transfer. At most one run per queue is in flight, and at most
//! `max_in_flight` across queues. A queue is dropped from the schedule when
//! its last handle is dropped.
//!
//! Wake-ups never spin: a run only repeats at once when it made progress or
//! the head is still due, otherwise it sleeps until the next due time; due
//! times are whole ms, so everything due in the same ms moves in one run.

mod precise_timer;
mod run;
mod settings;
pub(crate) mod stats;
mod step;
mod subscriptions;
mod task;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use fred::clients::{Pool, SubscriberClient};
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::wire::keys::QueueKeys;
use stats::Stats;

pub(crate) use run::run_transfer;
pub use settings::Clock;
pub(crate) use settings::TransferSettings;
pub use stats::ClientStats;

pub(crate) enum Command {
    Register(Arc<QueueKeys>),
    Unregister(Arc<str>),
    Shutdown(oneshot::Sender<()>),
}

/// Handle on the scheduler task.
pub(crate) struct Scheduler {
    tx: mpsc::UnboundedSender<Command>,
    task: Mutex<Option<JoinHandle<()>>>,
    pub stats: Arc<Stats>,
    /// One registration per queue, shared by every handle that transfers it.
    registrations: Arc<Registrations>,
}

type Registrations = Mutex<HashMap<Arc<str>, Weak<Registration>>>;

/// Keeps a queue scheduled while alive; one per queue per client, shared by
/// every handle of the queue that transfers.
pub(crate) struct Registration {
    keys: Arc<QueueKeys>,
    tx: mpsc::UnboundedSender<Command>,
    registrations: Weak<Registrations>,
    /// Whether the task was told (see `Scheduler::register`).
    sent: AtomicBool,
    stats: Arc<Stats>,
}

impl Registration {
    fn name(&self) -> &str {
        self.keys.destination()
    }

    /// Tells the task, once.
    fn send(&self) {
        if !self.sent.swap(true, Ordering::SeqCst) {
            Stats::add(&self.stats.registrations, 1);
            let _ = self.tx.send(Command::Register(self.keys.clone()));
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if self.sent.load(Ordering::SeqCst) {
            let _ = self.tx.send(Command::Unregister(Arc::from(self.name())));
        }
        if let Some(registrations) = self.registrations.upgrade() {
            let mut registrations = registrations.lock();
            // Unless the queue was registered again meanwhile.
            if registrations.get(self.name()).is_some_and(|r| r.strong_count() == 0) {
                registrations.remove(self.name());
            }
        }
    }
}

impl Scheduler {
    pub(crate) fn start(pool: Pool, subscriber: SubscriberClient, settings: TransferSettings) -> Scheduler {
        let (tx, rx) = mpsc::unbounded_channel();
        let stats = Arc::new(Stats::default());
        let task = tokio::spawn(task::SchedulerTask::new(pool, subscriber, settings, stats.clone()).run(rx));
        Scheduler {
            tx,
            task: Mutex::new(Some(task)),
            stats,
            registrations: Arc::default(),
        }
    }

    /// Schedules the queue until every share of the returned registration
    /// is dropped. A queue registered already gets the same registration.
    pub(crate) fn register(&self, keys: Arc<QueueKeys>) -> Arc<Registration> {
        let mut registrations = self.registrations.lock();
        if let Some(live) = registrations.get(keys.destination()).and_then(Weak::upgrade) {
            return live;
        }
        let name: Arc<str> = Arc::from(keys.destination());
        let registration = Arc::new(Registration {
            keys,
            tx: self.tx.clone(),
            registrations: Arc::downgrade(&self.registrations),
            sent: AtomicBool::new(false),
            stats: self.stats.clone(),
        });
        registrations.insert(name, Arc::downgrade(&registration));
        registration.send();
        registration
    }

    /// Stops the task after the runs in flight end, and closes the subscriber.
    pub(crate) async fn shutdown(&self) {
        let (done_tx, done_rx) = oneshot::channel();
        if self.tx.send(Command::Shutdown(done_tx)).is_ok() {
            let _ = done_rx.await;
        }
        let task = self.task.lock().take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}
