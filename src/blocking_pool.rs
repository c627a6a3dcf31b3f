//! Dedicated connections for blocking reads.
//!
//! A blocking command (`BLPOP`, `BLMOVE`) holds its connection until it
//! returns, so each one runs on a connection of its own, taken from this pool
//! and given back when it ends. The command pool and the subscriber are never
//! used for blocking commands.

use std::time::Duration;

use fred::clients::Client as FredClient;
use fred::prelude::{Blocking, ClientLike, Options};
use fred::types::Builder;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// Idle connections kept for reuse; more are opened on demand.
const MAX_IDLE: usize = 64;

pub(crate) struct BlockingPool {
    builder: Builder,
    idle: Mutex<Vec<FredClient>>,
    /// Server-side timeout of one blocking command in a wait loop.
    pub timeout: Duration,
    pub shutdown: CancellationToken,
}

/// A connection checked out of the pool; returns to it when dropped, unless
/// it was [`discard`](Lease::discard)ed or dropped in the middle of a
/// blocking command (a cancelled `take()`): then it is closed, which makes
/// the server abandon the command, so the connection never carries a stale
/// pop into its next use.
pub(crate) struct Lease<'a> {
    pool: &'a BlockingPool,
    client: Option<FredClient>,
    busy: bool,
}

impl BlockingPool {
    pub fn new(mut builder: Builder, timeout: Duration, shutdown: CancellationToken) -> Self {
        // Anything sent to a connection while it blocks (our QUIT on cancel)
        // first unblocks it with CLIENT UNBLOCK, so the blocked pop ends empty.
        builder.with_config(|config| config.blocking = Blocking::Interrupt);
        BlockingPool {
            builder,
            idle: Mutex::new(Vec::new()),
            timeout,
            shutdown,
        }
    }

    /// An idle connection, or a new one; waits for a new one to connect until
    /// `deadline` (or forever).
    pub async fn lease_until(&self, deadline: Option<tokio::time::Instant>) -> Result<Lease<'_>> {
        if self.shutdown.is_cancelled() {
            return Err(Error::Shutdown);
        }
        if let Some(client) = self.idle.lock().pop() {
            return Ok(Lease {
                pool: self,
                client: Some(client),
                busy: false,
            });
        }
        let client = self.builder.build()?;
        let _task = client.connect();
        let expired = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = client.wait_for_connect() => {
                if let Err(error) = result {
                    close_in_background(client);
                    return Err(error.into());
                }
            }
            _ = expired => {
                close_in_background(client);
                return Err(Error::Redis(fred::error::Error::new(
                    fred::error::ErrorKind::Timeout,
                    "could not open a connection for a blocking read in time",
                )));
            }
            _ = self.shutdown.cancelled() => {
                close_in_background(client);
                return Err(Error::Shutdown);
            }
        }
        Ok(Lease {
            pool: self,
            client: Some(client),
            busy: false,
        })
    }

    /// Options of one blocking command that waits up to `server_timeout` on
    /// the server: one attempt (a retried pop could pop twice) and a
    /// client-side deadline a little later, so a dead connection is noticed.
    pub fn command_options(&self, server_timeout: Duration) -> Options {
        Options {
            max_attempts: Some(1),
            timeout: Some(server_timeout + Duration::from_secs(2) + server_timeout / 2),
            ..Options::default()
        }
    }

    pub async fn close(&self) {
        let idle: Vec<FredClient> = std::mem::take(&mut *self.idle.lock());
        for client in idle {
            let _ = client.quit().await;
        }
    }
}

impl Lease<'_> {
    pub fn client(&self) -> &FredClient {
        self.client.as_ref().expect("lease holds a client until dropped")
    }

    /// Runs one blocking command on this connection, marking it busy until
    /// the reply arrives (see the type's docs for why).
    pub async fn run<F, T>(&mut self, f: impl FnOnce(FredClient) -> F) -> T
    where
        F: std::future::Future<Output = T>,
    {
        let client = self.client().clone();
        self.busy = true;
        let out = f(client).await;
        self.busy = false;
        out
    }

    /// Drops the connection instead of returning it (after a timeout or an
    /// I/O error its state is unknown).
    pub fn discard(mut self) {
        if let Some(client) = self.client.take() {
            close_in_background(client);
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let mut idle = self.pool.idle.lock();
            if !self.busy && idle.len() < MAX_IDLE && !self.pool.shutdown.is_cancelled() {
                idle.push(client);
            } else {
                drop(idle);
                close_in_background(client);
            }
        }
    }
}

/// Closes a connection without waiting (also from `Drop`, where we cannot await).
fn close_in_background(client: FredClient) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            let _ = client.quit().await;
        });
    }
}
