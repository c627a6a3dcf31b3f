//! Talking to Redis: connections, the Lua scripts, and commands that must
//! finish even when their caller is gone.
//!
//! Owns the [`Connections`] every queue shares (the command pool, the
//! dedicated connections for blocking reads, the shutdown signal), how a
//! first connection is made ([`connect`]), the script table and how a script
//! is sent ([`script`]), request-keyed scripts that may be resent
//! ([`request`]), takes undone when their caller drops the future
//! ([`detached`], [`settling`]), retrying through connection failures
//! ([`retrying`]), following a Sentinel's failovers ([`sentinel_watch`]),
//! TLS ([`tls`]) and the host name records in Redis carry ([`host`]).
//!
//! May use: `wire`, `error`. Knows nothing of queues, the scheduler or
//! `Client`: a script here is bytes and keys (and a queue's name, to say in
//! its errors), not an operation on a queue.

pub(crate) mod blocking_pool;
pub(crate) mod connect;
pub(crate) mod connections;
pub(crate) mod detached;
pub(crate) mod durable;
pub(crate) mod host;
pub(crate) mod reply;
pub(crate) mod request;
pub(crate) mod script;
pub(crate) mod sentinel_watch;
pub(crate) mod settling;
#[cfg(feature = "tls")]
pub(crate) mod tls;

pub(crate) use connect::quit;
pub(crate) use connections::Connections;

/// How long a command is sent again while its Cluster slot moves
/// ([`crate::error::slot_moving`]: answered `TRYAGAIN`, or redirected more
/// often than fred follows): as long as a slot may stay half-moved (a
/// resharding tool moves a slot's keys a few at a time), bounded; and the
/// waits between (from 5 ms to 100 ms). Scripts ([`script::Script::run`])
/// and [`while_slot_moves`].
pub(crate) const SLOT_MOVING_FOR: std::time::Duration = std::time::Duration::from_secs(30);
pub(crate) const SLOT_MOVING_FIRST: std::time::Duration = std::time::Duration::from_millis(5);
pub(crate) const SLOT_MOVING_MAX: std::time::Duration = std::time::Duration::from_millis(100);

/// Sends a command of several keys (`DEL a b`, `UNLINK a b`) again while
/// its Cluster slot moves, for up to [`SLOT_MOVING_FOR`]: each such answer
/// means it did not run, so any command may go again, one sent once too.
/// Anything else is returned as it came.
pub(crate) async fn while_slot_moves<T, F, Fut>(mut attempt: F) -> Result<T, fred::error::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, fred::error::Error>>,
{
    // A budget of time gone by (a try can take seconds itself), not of pauses.
    let (mut wait, started) = (SLOT_MOVING_FIRST, tokio::time::Instant::now());
    loop {
        match attempt().await {
            Err(error) if crate::error::slot_moving(&error) && started.elapsed() < SLOT_MOVING_FOR => {
                tracing::debug!(%error, "slot moving; sending again");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(SLOT_MOVING_MAX);
            }
            other => return other,
        }
    }
}

/// `work`, or a transient `Timeout` error saying `what` once `deadline`
/// passes. The work is dropped then: only for work that is safe to drop
/// (a request-keyed script, a detached pop, a settle that acts once).
pub(crate) async fn by_deadline<T, E: From<fred::error::Error>>(
    deadline: tokio::time::Instant,
    what: &'static str,
    work: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, E> {
    tokio::time::timeout_at(deadline, work)
        .await
        .unwrap_or_else(|_| Err(fred::error::Error::new(fred::error::ErrorKind::Timeout, what).into()))
}

/// Retries `attempt` through connection failures (transient errors) for
/// `retry_for`; past it fails with a transient error saying `late`. For
/// work that is safe to run again and to give up on: an ack (it only acts
/// while the delivery is in flight, and one already applied reports
/// success again), a search.
pub(crate) async fn retrying<T, F, Fut>(
    retry_for: std::time::Duration,
    late: &'static str,
    mut attempt: F,
) -> crate::error::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = crate::error::Result<T>>,
{
    let deadline = tokio::time::Instant::now() + retry_for;
    loop {
        // An attempt waits no longer than the retries do: while Redis is out
        // of reach it would wait in fred's queue for as long as that lasts
        // (and a worker's shutdown with it). Each attempt is a request or
        // acts once, so one given up on here and run later changes nothing.
        match by_deadline(deadline, late, attempt()).await {
            Err(error) if error.is_transient() && tokio::time::Instant::now() < deadline => {
                tracing::debug!(%error, "failed through the connection; retrying");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
}
