//! Dedicated connections for blocking reads.
//!
//! A blocking command (`BLPOP`, `BLMOVE`) holds its connection until it
//! returns, so each one runs on a connection of its own, taken from this pool
//! and given back when it ends. The command pool and the subscriber are never
//! used for blocking commands.

use std::sync::Arc;
use std::time::Duration;

use fred::clients::Client as FredClient;
use fred::interfaces::ClientInterface;
use fred::prelude::{Blocking, ClientLike, Options};
use fred::types::{Builder, ClientUnblockFlag, ClusterHash, CustomCommand, Value};
use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// Idle connections kept for reuse; more are opened on demand.
const MAX_IDLE: usize = 64;

/// Pause before retrying a blocking read whose connection failed.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

pub(crate) struct BlockingPool {
    builder: Builder,
    /// Idle connections and the epoch each was opened in.
    idle: Mutex<Vec<(u64, FredClient)>>,
    /// Bumped when every connection must be opened anew (a Sentinel
    /// failover: see `sentinel_watch`): waits in progress start over on a new
    /// connection, and connections of older epochs are closed, not reused.
    epoch: Arc<watch::Sender<u64>>,
    /// Server-side timeout of one blocking command in a wait loop.
    pub timeout: Duration,
    pub shutdown: CancellationToken,
}

/// A connection checked out of the pool; returns to it when dropped, unless
/// it was [`discard`](Lease::discard)ed or dropped in the middle of a
/// blocking command (a cancelled `take()`): then the server is told to end
/// that command (`CLIENT UNBLOCK`, sent on another connection) before the
/// connection is closed. Closing alone is not enough: the server only sees
/// the close after the command, and a command left blocked would pop a value
/// nobody reads.
pub(crate) struct Lease<'a> {
    pool: &'a BlockingPool,
    client: Option<FredClient>,
    epoch: u64,
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
            epoch: Arc::new(watch::Sender::new(0)),
            timeout,
            shutdown,
        }
    }

    /// An idle connection, or a new one; waits for a new one to connect until
    /// `deadline` (or forever).
    pub async fn lease_until(&self, deadline: Option<Instant>) -> Result<Lease<'_>> {
        if self.shutdown.is_cancelled() {
            return Err(Error::Shutdown);
        }
        let epoch = *self.epoch.borrow();
        loop {
            let popped = self.idle.lock().pop();
            match popped {
                Some((opened, client)) if opened == epoch => {
                    return Ok(Lease {
                        pool: self,
                        client: Some(client),
                        epoch,
                        busy: false,
                    })
                }
                // Opened before a switch: may still be on the old master.
                Some((_, client)) => close_in_background(client, false),
                None => break,
            }
        }
        let client = self.builder.build()?;
        let expired = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            // init(), not connect() + wait_for_connect(): see client.rs.
            result = client.init() => {
                if let Err(error) = result {
                    close_in_background(client, false);
                    return Err(error.into());
                }
            }
            _ = expired => {
                close_in_background(client, false);
                return Err(Error::Redis(fred::error::Error::new(
                    fred::error::ErrorKind::Timeout,
                    "could not open a connection for a blocking read in time",
                )));
            }
            _ = self.shutdown.cancelled() => {
                close_in_background(client, false);
                return Err(Error::Shutdown);
            }
        }
        Ok(Lease {
            pool: self,
            client: Some(client),
            epoch,
            busy: false,
        })
    }

    /// The handle that makes every connection be opened anew.
    pub fn epoch(&self) -> Arc<watch::Sender<u64>> {
        self.epoch.clone()
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

    /// Runs the blocking `command` until it returns something other than nil,
    /// or `deadline` passes (`None`: forever). Each try waits at most
    /// [`timeout`](Self::timeout) on the server; `args` builds the arguments
    /// for a server-side wait of that many seconds. Connection failures are
    /// retried on a new connection; if the deadline passes while they last,
    /// the last one is returned, so "nothing came" and "unreachable" differ.
    pub async fn wait(
        &self,
        command: &'static str,
        queue: &str,
        deadline: Option<Instant>,
        args: impl Fn(f64) -> Vec<Value>,
    ) -> Result<Option<Value>> {
        let mut last_error: Option<Error> = None;
        loop {
            let wait = match deadline {
                None => self.timeout,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return last_error.map_or(Ok(None), Err);
                    }
                    left.min(self.timeout)
                }
            };
            let outcome = match self.lease_until(deadline).await {
                Ok(mut lease) => {
                    // Seconds with millisecond precision; 0 would mean forever.
                    let argv = args((wait.as_millis().max(1) as f64) / 1000.0);
                    let options = self.command_options(wait);
                    let mut epoch = self.epoch.subscribe();
                    if *epoch.borrow_and_update() != lease.epoch {
                        continue; // opened just before a switch: open another
                    }
                    let sent = tokio::select! {
                        out = lease.run(|conn| async move { blocking_command(&conn, command, options, argv).await }) => out,
                        _ = self.shutdown.cancelled() => return Err(Error::Shutdown),
                        // The lease is dropped busy: unblocked and closed.
                        _ = epoch.changed() => continue,
                    };
                    let outcome = sent.map_err(|e| Error::from_command(e, queue));
                    if outcome.is_err() {
                        lease.discard();
                    }
                    outcome
                }
                Err(error) => Err(error),
            };
            match outcome {
                Ok(Value::Null) => last_error = None,
                Ok(value) => return Ok(Some(value)),
                Err(error) if error.is_transient() => {
                    tracing::warn!(queue, command, %error, "blocking read failed; retrying on a new connection");
                    last_error = Some(error);
                    tokio::select! {
                        _ = tokio::time::sleep(RETRY_PAUSE) => {}
                        _ = self.shutdown.cancelled() => return Err(Error::Shutdown),
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }

    pub async fn close(&self) {
        let idle = std::mem::take(&mut *self.idle.lock());
        for (_, client) in idle {
            crate::client::quit(&client).await;
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
            close_in_background(client, false);
        }
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let mut idle = self.pool.idle.lock();
            let current = self.epoch == *self.pool.epoch.borrow();
            if !self.busy && current && idle.len() < MAX_IDLE && !self.pool.shutdown.is_cancelled() {
                idle.push((self.epoch, client));
            } else {
                drop(idle);
                close_in_background(client, self.busy);
            }
        }
    }
}

/// Closes a connection without waiting (also from `Drop`, where we cannot
/// await); first unblocks the command it is `blocked` in, if any.
fn close_in_background(client: FredClient, blocked: bool) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            if blocked {
                // Either the pop already happened (its value is in the reply
                // we drop: see the callers' docs) or it never will.
                if let Err(error) = client.unblock_self(Some(ClientUnblockFlag::Error)).await {
                    tracing::debug!(%error, "could not unblock a cancelled blocking read");
                }
            }
            crate::client::quit(&client).await;
        });
    }
}

/// Sends a blocking command as a fred custom command: fred's own BLPOP/BLMOVE
/// turn the server's "timed out" nil into the same error as a client-side
/// timeout, and a wait that ended empty must not look like a dead connection.
async fn blocking_command(
    conn: &FredClient,
    name: &'static str,
    options: Options,
    args: Vec<Value>,
) -> std::result::Result<Value, fred::error::Error> {
    let command = CustomCommand::new_static(name, ClusterHash::FirstKey, true);
    conn.with_options(&options).custom(command, args).await
}
