//! Durable writes: a write acknowledged only once replicas have it
//! (`WAIT`, or `WAITAOF` where the server has it), sent after the write on
//! the connection that made it.
//!
//! `WAIT` (and `WAITAOF`) count only the writes of the connection that
//! sends them: a replica's acknowledged offset must reach that
//! connection's last write. So [`Support::confirm`] sends it through the
//! same fred client as the write (one connection per server), sent once
//! (`max_attempts` 1, fail fast: never queued for a new connection), and
//! reads fred's cached connection ids (`CLIENT ID`, per server) before the
//! write and after the wait: when they differ the connection was replaced
//! in between (a resend of the write after a lost reply, a reconnect), a
//! `WAIT` on the new connection says nothing of the first one's write,
//! and the write is reported as not confirmed rather than confirmed by a
//! wait that did not cover it. Nothing is ever written again for a wait:
//! a write's resend rules stay those of its script (`script.rs`).
//!
//! On a Redis Cluster the wait carries the slot of the queue's keys (fred
//! routes it to the node that owns it, the one that took the write); a
//! slot that moved between the write and the wait makes the ids differ or
//! the wait count another node's replicas, and is reported as above only
//! in the first case (see the README's "Durable offers and acks").

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use fred::interfaces::{ClientInterface, ClientLike};
use fred::prelude::Options;
use fred::types::config::Server;
use fred::types::{ClusterHash, CustomCommand, Value};
use parking_lot::Mutex;

/// How many replicas must have a write before delayq reports it done, and
/// how long to wait for them: an opt-in setting of a client
/// ([`ClientBuilder::durability`](crate::ClientBuilder::durability)), a
/// queue handle (`with_durability`) or one offer
/// ([`OfferOptions::durability`](crate::OfferOptions::durability)).
///
/// # Usage
///
/// With a durability set, an offer (single, joined with others, bulk), an
/// ack (one, or a worker's batch), a nack and a move to the dead letters
/// return once `replicas` replicas have the write (`WAIT replicas
/// timeout`, one per joined run or bulk call or ack batch), or fail with
/// [`Error::NotReplicated`](crate::Error::NotReplicated): the write *is*
/// on the primary, and only `replicas_acked` replicas confirmed it in
/// time. Without one (the default) nothing more is sent than before.
///
/// # Implementation
///
/// The wait goes on the connection that made the write, after it; see the
/// README's "Durable offers and acks" for what it guarantees and what it
/// does not (it is not strong consistency: a failover may still promote a
/// replica that was not among those waited for).
///
/// ```
/// use std::time::Duration;
/// use delayq::Durability;
///
/// let one = Durability::replicas(1);
/// assert_eq!(one.replicas_wanted(), 1);
/// assert_eq!(one.timeout(), Duration::from_secs(1));
/// let on_disk = Durability::replicas(2).within(Duration::from_millis(250)).fsynced();
/// assert!(on_disk.is_fsynced());
/// assert_eq!(on_disk.timeout(), Duration::from_millis(250));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Durability {
    /// Small, as every delivery's settings hold it: no deployment has more.
    replicas: u16,
    /// In ms (at most a day), small for the same reason.
    timeout_ms: u32,
    fsynced: bool,
}

impl Durability {
    /// The default wait for the replicas.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

    /// Wait for `replicas` replicas to have each write (`WAIT`), a second
    /// at most ([`within`](Self::within) changes it). `0` waits for none:
    /// the wait is still sent, and always answers at once. At most 65,535.
    pub fn replicas(replicas: u32) -> Durability {
        Durability {
            replicas: u16::try_from(replicas).unwrap_or(u16::MAX),
            timeout_ms: Self::DEFAULT_TIMEOUT.as_millis() as u32,
            fsynced: false,
        }
    }

    /// The same, waiting at most `timeout` (at least 1 ms: `WAIT`'s 0
    /// would wait for ever; at most a day).
    pub fn within(mut self, timeout: Duration) -> Durability {
        let timeout = timeout.clamp(Duration::from_millis(1), Duration::from_secs(24 * 3600));
        self.timeout_ms = timeout.as_millis() as u32;
        self
    }

    /// The same, waiting until the replicas have also written it to their
    /// append-only file and fsynced it (`WAITAOF 0 replicas timeout`,
    /// Redis 7.2 and later; replicas without `appendonly yes` never count).
    /// A server without `WAITAOF` gets `WAIT` (received, not fsynced): found
    /// out once per server, and logged.
    pub fn fsynced(mut self) -> Durability {
        self.fsynced = true;
        self
    }

    /// How many replicas must have a write.
    pub fn replicas_wanted(&self) -> u32 {
        u32::from(self.replicas)
    }

    /// The longest wait for them.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(u64::from(self.timeout_ms))
    }

    /// Whether it waits for the replicas' append-only files ([`fsynced`](Self::fsynced)).
    pub fn is_fsynced(&self) -> bool {
        self.fsynced
    }

    fn timeout_ms(&self) -> i64 {
        i64::from(self.timeout_ms.max(1))
    }
}

/// A durable write's wait that fell short: the write is on the primary,
/// confirmed by `acked` of the `wanted` replicas, and why.
#[derive(Debug, Clone)]
pub(crate) struct Shortfall {
    pub acked: u32,
    pub wanted: u32,
    pub detail: String,
}

impl Shortfall {
    /// delayq's error for `operation` on `queue` that fell short so.
    pub(crate) fn into_error(self, operation: &'static str, queue: String) -> crate::error::Error {
        crate::error::Error::NotReplicated {
            operation,
            queue,
            replicas_acked: self.acked,
            replicas_wanted: self.wanted,
            detail: self.detail,
        }
    }
}

/// fred's ids (`CLIENT ID`) of a client's connections, per server, read
/// before a write (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Watch(HashMap<Server, i64>);

impl Watch {
    /// The connections of `conn`, as they are now.
    pub(crate) fn of(conn: &fred::clients::Client) -> Watch {
        Watch(conn.connection_ids())
    }
}

/// A durability and what the client knows of its servers' support for
/// `WAITAOF`: what a durable write needs.
#[derive(Clone, Copy)]
pub(crate) struct Durable<'a> {
    pub durability: Durability,
    pub support: &'a Support,
}

/// Which servers (by address) answered that they have no `WAITAOF`: each
/// is asked once, then sent `WAIT`.
#[derive(Debug, Default)]
pub(crate) struct Support {
    without_waitaof: Mutex<HashSet<String>>,
}

impl Support {
    /// Waits for the replicas of the write made through `conn` on `slot`
    /// since `watch` was read: `Ok` once `durability` is met, else what
    /// fell short.
    pub(crate) async fn confirm(
        &self,
        conn: &fred::clients::Client,
        durability: Durability,
        slot: u16,
        watch: &Watch,
    ) -> Result<(), Shortfall> {
        let wanted = durability.replicas_wanted();
        let short = |acked: u32, detail: String| Shortfall { acked, wanted, detail };
        if watch.0.is_empty() {
            return Err(short(0, "no connection was up when the write was sent".into()));
        }
        let servers: Vec<String> = watch.0.keys().map(|s| s.to_string()).collect();
        let aof = durability.fsynced && !servers.iter().any(|s| self.without_waitaof.lock().contains(s));
        let acked = match self.wait(conn, durability, slot, aof).await {
            Err(error) if aof && error.details().to_ascii_lowercase().contains("unknown command") => {
                tracing::info!(servers = ?servers, "the server has no WAITAOF (Redis < 7.2): waiting with WAIT, replicas that received a write count, fsynced or not");
                self.without_waitaof.lock().extend(servers);
                self.wait(conn, durability, slot, false).await
            }
            other => other,
        };
        let acked = match acked {
            Ok(acked) => acked,
            Err(error) => {
                return Err(short(
                    0,
                    format!("the wait for replicas failed, nothing is known of them: {error}"),
                ))
            }
        };
        if Watch::of(conn) != *watch {
            return Err(short(
                0,
                "the connection was replaced between the write and its wait, which cannot count it".into(),
            ));
        }
        if acked < wanted {
            let command = if aof { "WAITAOF" } else { "WAIT" };
            return Err(short(
                acked,
                format!("{command} timed out after {:?}", durability.timeout()),
            ));
        }
        Ok(())
    }

    /// One `WAIT` (or `WAITAOF 0 n`), sent once: how many replicas confirmed.
    async fn wait(
        &self,
        conn: &fred::clients::Client,
        durability: Durability,
        slot: u16,
        aof: bool,
    ) -> Result<u32, fred::error::Error> {
        let options = Options {
            max_attempts: Some(1),
            fail_fast: true,
            // The server answers by the durability's timeout; fred's own
            // timeout only guards against a reply that never comes.
            timeout: Some(durability.timeout() + Duration::from_secs(5)),
            ..Options::default()
        };
        let conn = conn.with_options(&options);
        let (name, args) = if aof {
            let args = vec![
                Value::from(0),
                Value::from(i64::from(durability.replicas)),
                Value::from(durability.timeout_ms()),
            ];
            ("WAITAOF", args)
        } else {
            let args = vec![
                Value::from(i64::from(durability.replicas)),
                Value::from(durability.timeout_ms()),
            ];
            ("WAIT", args)
        };
        // Blocking, as fred's own WAIT: the connection's other commands
        // wait behind it (Redis would hold them anyway).
        let command = CustomCommand::new_static(name, ClusterHash::Custom(slot), true);
        let reply: Value = conn.custom(command, args).await?;
        let count = match &reply {
            // WAITAOF: [local fsyncs, replica fsyncs].
            Value::Array(parts) if parts.len() == 2 => parts[1].as_i64(),
            other => other.as_i64(),
        };
        count.map(|n| n.max(0) as u32).ok_or_else(|| {
            fred::error::Error::new(fred::error::ErrorKind::Protocol, format!("{name} answered {reply:?}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_durability_waits_at_least_a_millisecond() {
        let zero = Durability::replicas(1).within(Duration::ZERO);
        assert_eq!(zero.timeout_ms(), 1);
        let long = Durability::replicas(1).within(Duration::MAX);
        assert_eq!(long.timeout(), Duration::from_secs(24 * 3600));
        assert!(!Durability::replicas(1).is_fsynced());
    }
}
