//! `Core`: what every queue handle of one client shares.

use std::sync::Arc;
use std::time::Duration;

use crate::connection::settling::Settling;
use crate::connection::Connections;
use crate::error::Result;
use crate::queue::per_queue::PerQueue;
use crate::queue::reliable::delivery::{release, Release};
use crate::queue::reliable::lateness::Background;
use crate::queue::reliable::outstanding::Outstanding;
use crate::queue::reliable::reapers::Reapers;
use crate::transfer::{Scheduler, TransferSettings};

/// The shared state below a [`Client`](crate::Client): its connections, its
/// transfer scheduler, and the per-client registries of reliable deliveries
/// in flight and of reapers. Each queue handle holds it in an `Arc`; when the
/// last holder is gone, the scheduler's channel closes and the connections
/// close in the background (see `Connections`' `Drop`).
pub(crate) struct Core {
    pub connections: Connections,
    pub scheduler: Scheduler,
    /// Reliable deliveries handed out and not settled yet.
    pub outstanding: Outstanding,
    /// One reaper per reliable queue, shared by its handles.
    pub reapers: Reapers,
    /// One lateness-tracking marker refresher per queue, shared by its handles.
    pub trackers: PerQueue<Background>,
    /// What the takes of a queue share, across its handles.
    pub takes: PerQueue<crate::queue::blocking::Takes>,
    pub transfer: TransferSettings,
    pub shutdown_grace: Duration,
}

/// How long shutdown may take after its grace: giving unsettled deliveries
/// back, letting values popped for ended reads go back, and the scheduler's
/// runs in flight end. Bounded as a whole: with Redis out of reach none of
/// them can finish, and shutdown must still end.
const CLOSE_WITHIN: Duration = Duration::from_secs(5);

impl Core {
    pub fn new(connections: Connections, scheduler: Scheduler, transfer: TransferSettings, grace: Duration) -> Self {
        Core {
            connections,
            scheduler,
            outstanding: Outstanding::default(),
            reapers: Reapers::default(),
            trackers: PerQueue::default(),
            takes: PerQueue::default(),
            transfer,
            shutdown_grace: grace,
        }
    }

    /// A connection for one ordinary command, or [`Error::Shutdown`](crate::Error::Shutdown).
    pub fn conn(&self) -> Result<&fred::clients::Client> {
        self.connections.conn()
    }

    /// The connection for commands on `key`, always the same one (see
    /// `Connections::conn_for`), or [`Error::Shutdown`](crate::Error::Shutdown).
    pub fn conn_for(&self, key: &str) -> Result<&fred::clients::Client> {
        self.connections.conn_for(key)
    }

    /// Fails with [`Error::PayloadTooLarge`](crate::Error::PayloadTooLarge) for a payload over the limit.
    pub fn check_payload(&self, payload: &[u8]) -> Result<()> {
        self.connections.check_payload(payload)
    }

    /// Give-backs running detached from dropped calls.
    pub fn settling(&self) -> &Arc<Settling> {
        &self.connections.settling
    }

    /// Whether shutdown has begun.
    pub fn is_shutting_down(&self) -> bool {
        self.connections.is_shutting_down()
    }

    /// The graceful shutdown `Client::shutdown_within` documents: end blocked
    /// reads, let deliveries in flight settle for up to `grace` and give back
    /// the rest, stop the scheduler after its runs in flight, close.
    pub async fn shutdown_within(&self, grace: Duration) {
        if self.connections.is_shutting_down() {
            return;
        }
        self.connections.shutdown.cancel();
        let settled = tokio::time::timeout(grace, self.outstanding.settled()).await;
        let close_by = tokio::time::Instant::now() + CLOSE_WITHIN;
        if settled.is_err() {
            let unsettled = self.outstanding.drain();
            tracing::info!(
                count = unsettled.len(),
                "giving unsettled deliveries back to their queues"
            );
            // Together, and for a bounded time (see `CLOSE_WITHIN`).
            let releases = unsettled.into_iter().map(|(keys, settings, member)| async move {
                if let Err(error) = release(self, &keys, settings, &member, Release::Head).await {
                    tracing::warn!(queue = keys.destination(), %error, "could not give a delivery back; its visibility timeout will");
                }
            });
            if tokio::time::timeout_at(close_by, futures_util::future::join_all(releases))
                .await
                .is_err()
            {
                tracing::warn!(
                    "Redis did not answer the give-backs in time; the visibility timeout returns what is left"
                );
            }
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
