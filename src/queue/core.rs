//! `Core`: what every queue handle of one client shares, behind methods.
//!
//! A core holds the client's [`Connections`] and its transfer [`Scheduler`],
//! and hands out only what a caller needs: a connection for a command, the
//! dedicated connections blocking reads wait on, the shutdown signal to stop
//! on, a registration with the scheduler, a counter to add to. Its fields
//! are private, so each of those has one way in.
//!
//! The per-queue registries belong to the queue kind that uses them:
//! [`reliable::Registries`] (deliveries handed out and not settled, one
//! reaper and one lateness tracker per queue) and [`blocking::Registries`]
//! (what the takes of each queue share). The core stores one of each, for
//! the whole client, but only its own kind reaches inside (their fields are
//! private to `reliable/` and `blocking/`); the core itself only asks the
//! reliable one, at shutdown, to wait for its deliveries and give back the
//! rest.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::WaitForCancellationFuture;

use crate::connection::blocking_pool::BlockingPool;
use crate::connection::durable::{Durability, Durable, Watch};
use crate::connection::settling::Settling;
use crate::connection::Connections;
use crate::error::Result;
use crate::queue::per_queue::PerQueue;
use crate::queue::priority::Marker;
use crate::queue::{blocking, registry, reliable};
use crate::transfer::stats::Stats;
use crate::transfer::{ClientStats, Registration, Scheduler, TransferSettings};
use crate::wire::keys::QueueKeys;

/// The shared state below a [`Client`](crate::Client) (see the module
/// doc). Each queue handle holds it in an `Arc`; when the last holder is
/// gone, the scheduler's channel closes and the connections close in the
/// background (see `Connections`' `Drop`).
pub(crate) struct Core {
    connections: Connections,
    scheduler: Scheduler,
    transfer: TransferSettings,
    shutdown_grace: Duration,
    reliable: reliable::Registries,
    blocking: blocking::Registries,
    registry: registry::Registry,
    /// What this client knows of each queue's priority marker.
    priorities: PerQueue<Marker>,
    /// The durability of every write that has one, unless a handle or a
    /// call says otherwise (`ClientBuilder::durability`).
    durability: Option<Durability>,
}

/// How long shutdown may take after its grace: giving unsettled deliveries
/// back, letting values popped for ended reads go back, and the scheduler's
/// runs in flight end. Bounded as a whole: with Redis out of reach none of
/// them can finish, and shutdown must still end.
const CLOSE_WITHIN: Duration = Duration::from_secs(5);

impl Core {
    pub(crate) fn new(
        connections: Connections,
        scheduler: Scheduler,
        transfer: TransferSettings,
        grace: Duration,
        durability: Option<Durability>,
    ) -> Self {
        Core {
            connections,
            scheduler,
            transfer,
            shutdown_grace: grace,
            reliable: reliable::Registries::default(),
            blocking: blocking::Registries::default(),
            registry: registry::Registry::default(),
            priorities: PerQueue::default(),
            durability,
        }
    }

    /// The client's durability: what a new queue handle starts with.
    pub(crate) fn durability(&self) -> Option<Durability> {
        self.durability
    }

    /// What a write with `durability` (if any) needs to wait for its
    /// replicas (`Script::run_durable`).
    pub(crate) fn durable(&self, durability: Option<Durability>) -> Option<Durable<'_>> {
        durability.map(|durability| Durable {
            durability,
            support: &self.connections.durable,
        })
    }

    /// Waits, with `durability` (else at once), for the replicas of the
    /// write `operation` made on `queue` through `conn` since `watch` was
    /// read (`durable.rs`): `Error::NotReplicated` when they fall short.
    pub(crate) async fn confirm(
        &self,
        conn: &fred::clients::Client,
        durability: Option<Durability>,
        watch: &Watch,
        operation: &'static str,
        queue: &str,
    ) -> Result<()> {
        let Some(durability) = durability else {
            return Ok(());
        };
        let slot = fred::util::redis_keyslot(queue.as_bytes());
        self.connections
            .durable
            .confirm(conn, durability, slot, watch)
            .await
            .map_err(|shortfall| shortfall.into_error(operation, queue.to_owned()))
    }

    /// A connection for one ordinary command, or [`Error::Shutdown`](crate::Error::Shutdown).
    pub(crate) fn conn(&self) -> Result<&fred::clients::Client> {
        self.connections.conn()
    }

    /// The connection for commands on `key`, always the same one (see
    /// `Connections::conn_for`), or [`Error::Shutdown`](crate::Error::Shutdown).
    pub(crate) fn conn_for(&self, key: &str) -> Result<&fred::clients::Client> {
        self.connections.conn_for(key)
    }

    /// The command pool itself, for `Client::redis`.
    pub(crate) fn pool(&self) -> &fred::clients::Pool {
        &self.connections.pool
    }

    /// The dedicated connections blocking commands wait on (`BLPOP`,
    /// `BLMOVE`, ...), never shared with other commands.
    pub(crate) fn blocking(&self) -> &BlockingPool {
        &self.connections.blocking
    }

    /// Fails with [`Error::PayloadTooLarge`](crate::Error::PayloadTooLarge) for a payload over the limit.
    pub(crate) fn check_payload(&self, payload: &[u8]) -> Result<()> {
        self.connections.check_payload(payload)
    }

    /// Give-backs running detached from dropped calls.
    pub(crate) fn settling(&self) -> &Arc<Settling> {
        &self.connections.settling
    }

    /// [`Error::Shutdown`](crate::Error::Shutdown) once the connections are closed.
    pub(crate) fn check_open(&self) -> Result<()> {
        self.connections.check_open()
    }

    /// Whether shutdown has begun.
    pub(crate) fn is_shutting_down(&self) -> bool {
        self.connections.is_shutting_down()
    }

    /// Ready once shutdown has begun (or the client is dropped): what
    /// background tasks and waits stop on.
    pub(crate) fn shutdown_begun(&self) -> WaitForCancellationFuture<'_> {
        self.connections.shutdown.cancelled()
    }

    /// Schedules the transfer of `keys`' queue until every share of the
    /// returned registration is dropped (see `Scheduler::register`).
    pub(crate) fn register_transfer(&self, keys: Arc<QueueKeys>) -> Arc<Registration> {
        self.seen(&keys);
        self.scheduler.register(keys)
    }

    /// Registers the queue in delayq's registry of queues, in the
    /// background, unless this client did lately (see `registry.rs`).
    pub(crate) fn seen(&self, keys: &QueueKeys) {
        self.registry.seen(self.pool(), keys);
    }

    /// How this client transfers (its clock, its batch size).
    pub(crate) fn transfer_settings(&self) -> &TransferSettings {
        &self.transfer
    }

    /// What this client has counted so far.
    pub(crate) fn stats(&self) -> ClientStats {
        self.scheduler.stats.snapshot()
    }

    /// Counts malformed elements a queue operation moved to quarantine.
    pub(crate) fn count_quarantined(&self, n: u64) {
        Stats::add(&self.scheduler.stats.quarantined, n);
    }

    /// Counts values a reliable take moved to the dead-letter list.
    pub(crate) fn count_dead_lettered(&self, n: u64) {
        Stats::add(&self.scheduler.stats.dead_lettered, n);
    }

    /// What this client's reliable queues share (see [`reliable::Registries`]).
    pub(crate) fn reliable_queues(&self) -> &reliable::Registries {
        &self.reliable
    }

    /// What this client knows of `queue`'s priority marker, shared by its handles.
    pub(crate) fn priority_marker(&self, queue: &str) -> Arc<Marker> {
        self.priorities.get_or_start(queue, Arc::default)
    }

    /// What this client's blocking queues share (see [`blocking::Registries`]).
    pub(crate) fn blocking_queues(&self) -> &blocking::Registries {
        &self.blocking
    }

    /// [`shutdown_within`](Self::shutdown_within) the builder's grace.
    pub(crate) async fn shutdown(&self) {
        self.shutdown_within(self.shutdown_grace).await;
    }

    /// The graceful shutdown `Client::shutdown_within` documents: end blocked
    /// reads, let deliveries in flight settle for up to `grace` and give back
    /// the rest, stop the scheduler after its runs in flight, close.
    pub(crate) async fn shutdown_within(&self, grace: Duration) {
        if self.connections.is_shutting_down() {
            return;
        }
        self.connections.shutdown.cancel();
        let settled = tokio::time::timeout(grace, self.reliable.settled()).await;
        let close_by = tokio::time::Instant::now() + CLOSE_WITHIN;
        if settled.is_err() {
            self.reliable.release_unsettled(self, close_by).await;
        }
        // Blocked reads end now; values popped for them go back before the
        // connections close.
        self.connections.settle(close_by).await;
        if tokio::time::timeout_at(close_by, self.scheduler.shutdown())
            .await
            .is_err()
        {
            // Its runs in flight wait for Redis; closing the connections ends them.
            tracing::warn!("transfer runs in flight did not end in time; closing");
        }
        self.connections.close().await;
    }
}
