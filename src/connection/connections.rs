//! `Connections`: every connection of one client, and its shutdown signal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fred::clients::{Pool, SubscriberClient};
use fred::prelude::ReconnectPolicy;
use fred::types::Builder;
use tokio_util::sync::CancellationToken;

use super::blocking_pool::BlockingPool;
use super::connect::{address, check_scripting, connect, quit_pool};
use super::sentinel_watch;
use super::settling::Settling;
use crate::error::{Error, Result};

/// What [`open`] needs beyond fred's builder.
pub(crate) struct Settings {
    pub pool_size: usize,
    pub connect_timeout: Duration,
    pub blocking_timeout: Duration,
    pub max_payload: usize,
    pub reconnect: ReconnectPolicy,
}

/// The connections every queue handle of one client shares: the pool for
/// ordinary commands, the dedicated connections for blocking reads, and the
/// signal that ends both.
///
/// Dropped without [`close`](Self::close) (the client's last handle is gone),
/// it cancels what waits on the signal and closes the pool in the background;
/// the blocking pool closes its idle connections in its own `Drop`.
pub(crate) struct Connections {
    pub pool: Pool,
    pub blocking: BlockingPool,
    /// Give-backs of dropped pops still running (see `detached`).
    pub settling: Arc<Settling>,
    /// Cancelled when shutdown begins: blocking waits end, nothing new is
    /// taken, background tasks (reapers, Sentinel watchers) stop.
    pub shutdown: CancellationToken,
    /// Which servers have no `WAITAOF`, for durable writes.
    pub durable: super::durable::Support,
    /// Set once the connections are closed.
    closed: AtomicBool,
    max_payload: usize,
}

/// Pub/sub messages the subscriber buffers for the transfer scheduler.
const SUBSCRIBER_BUFFER: usize = 4096;

/// Connects the command pool and the subscriber, and starts following the
/// Sentinel's failovers when there is one. Returns the subscriber for the
/// transfer scheduler, which owns it.
pub(crate) async fn open(builder: Builder, settings: Settings) -> Result<(Connections, SubscriberClient)> {
    let address = address(builder.get_config().map(|c| &c.server));
    let pool = builder.build_pool(settings.pool_size)?;
    connect(&pool, settings.connect_timeout, &address).await?;
    if let Err(e) = check_scripting(pool.next(), settings.connect_timeout, &address).await {
        quit_pool(&pool).await;
        return Err(e);
    }
    // Wake-ups arrive in bursts (an offer_all of many queues, a backlog's
    // heads): fred's default of 32 buffered messages overflows, and a lost
    // message makes the transfer check every queue of the client. A size
    // set through `ClientBuilder::customize` is kept.
    let subscriber = builder
        .clone()
        .with_performance_config(|p| {
            if p.broadcast_channel_capacity
                == fred::types::config::PerformanceConfig::default().broadcast_channel_capacity
            {
                p.broadcast_channel_capacity = SUBSCRIBER_BUFFER;
            }
        })
        .build_subscriber_client()?;
    if let Err(e) = connect(&subscriber, settings.connect_timeout, &address).await {
        quit_pool(&pool).await;
        return Err(e);
    }
    let shutdown = CancellationToken::new();
    let config = builder.get_config().cloned().unwrap_or_default();
    let settling = Arc::new(Settling::default());
    let blocking = BlockingPool::new(builder, settings.blocking_timeout, shutdown.clone(), settling.clone());
    let targets = sentinel_watch::Targets {
        pool: pool.clone(),
        subscriber: subscriber.clone(),
        blocking: blocking.epoch(),
    };
    sentinel_watch::start(&config, &settings.reconnect, targets, shutdown.clone());
    let connections = Connections {
        pool,
        blocking,
        settling,
        shutdown,
        durable: super::durable::Support::default(),
        closed: AtomicBool::new(false),
        max_payload: settings.max_payload,
    };
    Ok((connections, subscriber))
}

impl Connections {
    /// A connection for one ordinary command, or [`Error::Shutdown`].
    pub(crate) fn conn(&self) -> Result<&fred::clients::Client> {
        self.check_open()?;
        Ok(self.pool.next())
    }

    /// The pool's connection for commands on `key`: always the same one, so
    /// that concurrent takes of one queue pipeline on one connection (fewer
    /// writes and reads per command, on both sides, than when they alternate).
    pub(crate) fn conn_for(&self, key: &str) -> Result<&fred::clients::Client> {
        self.check_open()?;
        let clients = self.pool.clients();
        let slot = usize::from(fred::util::redis_keyslot(key.as_bytes()));
        Ok(&clients[slot % clients.len()])
    }

    /// [`Error::Shutdown`] once the connections are closed.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            Err(Error::Shutdown)
        } else {
            Ok(())
        }
    }

    /// Whether shutdown has begun (blocking waits end, nothing new is taken).
    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// Fails with [`Error::PayloadTooLarge`] for a payload over the limit.
    pub(crate) fn check_payload(&self, payload: &[u8]) -> Result<()> {
        if payload.len() > self.max_payload {
            return Err(Error::PayloadTooLarge {
                size: payload.len(),
                limit: self.max_payload,
            });
        }
        Ok(())
    }

    /// Waits (until `deadline` at most) for blocked reads to end and for
    /// values popped by dropped calls to be given back; call after
    /// cancelling `shutdown`.
    pub(crate) async fn settle(&self, deadline: tokio::time::Instant) {
        let left = || deadline.saturating_duration_since(tokio::time::Instant::now());
        self.blocking.settled(left()).await;
        self.settling.settled(left()).await;
    }

    /// Closes every connection; later calls fail with [`Error::Shutdown`].
    pub(crate) async fn close(&self) {
        self.shutdown.cancel();
        self.blocking.close().await;
        self.closed.store(true, Ordering::SeqCst);
        quit_pool(&self.pool).await;
    }
}

impl Drop for Connections {
    fn drop(&mut self) {
        // Blocked reads, Sentinel watchers, reapers: all stop on the token.
        self.shutdown.cancel();
        if self.closed.swap(true, Ordering::SeqCst) {
            return; // close() already ran
        }
        tracing::debug!("client dropped without shutdown(); closing its connections");
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let pool = self.pool.clone();
            runtime.spawn(async move { quit_pool(&pool).await });
        }
    }
}
