//! Talking to Redis: connections, the Lua scripts, and commands that must
//! finish even when their caller is gone.
//!
//! Owns the [`Connections`] every queue shares (the command pool, the
//! dedicated connections for blocking reads, the shutdown signal), how a
//! first connection is made ([`connect`]), the script table and how a script
//! is sent ([`script`]), request-keyed scripts that may be resent
//! ([`request`]), takes undone when their caller drops the future
//! ([`detached`], [`settling`]), following a Sentinel's failovers
//! ([`sentinel_watch`]) and TLS ([`tls`]).
//!
//! May use: `wire`, `error`. Knows nothing of queues, the scheduler or
//! `Client`: a script here is bytes and keys, not an operation on a queue.

pub(crate) mod blocking_pool;
pub(crate) mod connect;
pub(crate) mod connections;
pub(crate) mod detached;
pub(crate) mod reply;
pub(crate) mod request;
pub(crate) mod script;
pub(crate) mod sentinel_watch;
pub(crate) mod settling;
#[cfg(feature = "tls")]
pub(crate) mod tls;

pub(crate) use connect::quit;
pub(crate) use connections::Connections;

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
