//! Batches: jobs offered together, and a completion offered once every one
//! has ended (`lua/lib/batches.lua` counts them as their jobs end;
//! `queue::reliable::batch_outbox` offers the completion).

use std::borrow::Borrow;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use fred::interfaces::ClientLike;
use fred::types::{ClusterHash, CustomCommand, Value};
use futures_util::stream::{FuturesOrdered, StreamExt};

use super::DelayedQueue;
use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{CommandResult, Error, Refusal, Result};
use crate::queue::Core;
use crate::wire::keys::QueueKeys;
use crate::wire::time;

/// Members a chunk of a batch's offer carries, at most.
const CHUNK_VALUES: usize = 200;
/// Payload bytes a chunk carries, at most (one value over it goes alone).
const CHUNK_BYTES: usize = 256 * 1024;
/// Chunks of one batch sent before the first answers (one connection).
const CHUNKS_IN_FLIGHT: usize = 4;
/// Rounds in a row that add nothing before a batch's offer gives up.
const MAX_STALLS: usize = 5;
/// How long a delivered batch's record is kept by default.
pub const DEFAULT_BATCH_KEEP: Duration = Duration::from_secs(7 * 24 * 3600);
/// Most bytes of a batch's completion data, as JSON.
pub const MAX_COMPLETION_BYTES: usize = 65536;
/// Most bytes of a batch id.
const MAX_BATCH_ID: usize = 128;
/// Most members of a batch with equal bytes (`lua/lib/jobs.lua` files at
/// most 16 ready ids per payload).
pub const MAX_EQUAL_MEMBERS: usize = 16;

/// How to offer a batch ([`DelayedQueue::offer_batch`]): its id, the queue
/// its completion goes to, and how long its record is kept.
///
/// ```
/// use std::time::Duration;
/// use delayq::batch::BatchOptions;
///
/// let options = BatchOptions::new()
///     .id("import-2026-11")
///     .on_complete("imports-done", serde_json::json!({ "file": "nov.csv" }))
///     .keep(Duration::from_secs(24 * 3600));
/// assert_eq!(options.batch_id(), Some("import-2026-11"));
/// ```
#[derive(Debug, Clone)]
pub struct BatchOptions {
    id: Option<String>,
    target: Option<String>,
    data: serde_json::Value,
    keep: Duration,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions::new()
    }
}

impl BatchOptions {
    /// A batch with a random id, no completion, kept 7 days once done.
    pub fn new() -> BatchOptions {
        BatchOptions {
            id: None,
            target: None,
            data: serde_json::Value::Null,
            keep: DEFAULT_BATCH_KEEP,
        }
    }

    /// The batch's id (1 to 128 bytes, no `/`), instead of a random one.
    /// Offering a batch again under its id resumes its offer from the
    /// members it has (after a refusal, or a crash half way); an id in use
    /// by a batch of another size or target is refused.
    pub fn id(mut self, id: impl Into<String>) -> BatchOptions {
        self.id = Some(id.into());
        self
    }

    /// Once every member has ended, offer a completion to the queue
    /// `target` (any queue, in any slot): a JSON object `{"batch": id,
    /// "queue": this queue, "total", "handled", "dead_lettered",
    /// "cancelled", "data": data}`, due at once, offered once (it is
    /// deduplicated by the batch for 30 days). Read it with a JSON codec
    /// ([`JsonCodec`](crate::JsonCodec); in Java `StringCodec` or
    /// `TypedJsonJacksonCodec`).
    pub fn on_complete(mut self, target: impl Into<String>, data: serde_json::Value) -> BatchOptions {
        self.target = Some(target.into());
        self.data = data;
        self
    }

    /// How long the batch's record is kept once its completion is offered
    /// (default 7 days).
    pub fn keep(mut self, keep: Duration) -> BatchOptions {
        self.keep = keep;
        self
    }

    /// The id given, if any.
    pub fn batch_id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// Where a batch is ([`BatchStatus::state`]).
///
/// ```
/// use delayq::batch::BatchState;
/// assert_eq!(BatchState::Open.name(), "open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchState {
    /// Its offer has not added every member yet (it runs, or stopped half
    /// way: offer it again under its id to resume).
    Offering,
    /// Every member is offered; some have not ended.
    Open,
    /// Every member has ended; its completion is on its way.
    Complete,
    /// Its completion was offered (or it has none).
    Delivered,
}

impl BatchState {
    /// The state's name (`offering`, `open`, `complete`, `delivered`).
    pub fn name(self) -> &'static str {
        match self {
            BatchState::Offering => "offering",
            BatchState::Open => "open",
            BatchState::Complete => "complete",
            BatchState::Delivered => "delivered",
        }
    }
}

/// A batch's state and counts ([`DelayedQueue::batch`]).
///
/// ```no_run
/// # async fn demo(imports: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// if let Some(batch) = imports.batch("import-2026-11").await? {
///     println!("{}: {} of {} done", batch.state.name(), batch.ended(), batch.total);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchStatus {
    /// Its id.
    pub id: String,
    /// Where it is.
    pub state: BatchState,
    /// Members in all.
    pub total: u64,
    /// Members offered so far.
    pub offered: u64,
    /// Members handled (acked).
    pub handled: u64,
    /// Members dead-lettered.
    pub dead_lettered: u64,
    /// Members cancelled.
    pub cancelled: u64,
    /// When its offer began (the Redis server's clock).
    pub created: SystemTime,
    /// When its last member ended.
    pub completed: Option<SystemTime>,
    /// The queue its completion goes to.
    pub target: Option<String>,
    /// The element format its members were offered in: its completion is
    /// written in it too, so the Java fleet that reads the members reads it.
    pub format: crate::wire::format::Format,
}

impl BatchStatus {
    /// Members that have ended (handled, dead-lettered or cancelled).
    pub fn ended(&self) -> u64 {
        self.handled + self.dead_lettered + self.cancelled
    }

    /// A record as `lua/lib/batches.lua` writes it.
    pub(crate) fn parse(id: &str, raw: &[u8]) -> Option<BatchStatus> {
        let text = std::str::from_utf8(raw).ok()?;
        let mut parts = text.splitn(11, '\u{1f}');
        let state = match parts.next()? {
            "offering" => BatchState::Offering,
            "open" => BatchState::Open,
            "complete" => BatchState::Complete,
            "delivered" => BatchState::Delivered,
            _ => return None,
        };
        let mut number = || parts.next()?.parse::<u64>().ok();
        let (total, offered, handled, dead_lettered, cancelled) =
            (number()?, number()?, number()?, number()?, number()?);
        let (created, completed, _keep) = (number()?, number()?, number()?);
        let format = match parts.next()? {
            "legacy" => crate::wire::format::Format::Legacy,
            _ => crate::wire::format::Format::Modern,
        };
        let target = parts.next()?;
        Some(BatchStatus {
            id: id.to_owned(),
            state,
            total,
            offered,
            handled,
            dead_lettered,
            cancelled,
            created: time::from_ms(created as i64),
            completed: (completed > 0).then(|| time::from_ms(completed as i64)),
            target: (!target.is_empty()).then(|| target.to_owned()),
            format,
        })
    }
}

/// A batch id is 1 to 128 bytes, without `/` (members are `<batch>/<n>`).
fn check_batch_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > MAX_BATCH_ID || id.contains('/') {
        return Err(Error::InvalidArgument(format!(
            "a batch id is 1 to {MAX_BATCH_ID} bytes without '/', not {id:?}"
        )));
    }
    Ok(())
}

/// Reads batch `id`'s record.
pub(crate) async fn status(core: &Core, keys: &QueueKeys, id: &str) -> Result<Option<BatchStatus>> {
    check_batch_id(id)?;
    let key = keys.batches();
    let raw: Value = core
        .conn()?
        .custom(
            CustomCommand::new_static("HGET", ClusterHash::FirstKey, false),
            vec![Value::from(key.as_str()), Value::from(format!("b:{id}"))],
        )
        .await
        .on_key(&key)?;
    match reply::opt_bytes(raw)? {
        None => Ok(None),
        Some(raw) => BatchStatus::parse(id, &raw)
            .map(Some)
            .ok_or_else(|| Error::Protocol(format!("the record of batch {id:?} does not read"))),
    }
}

impl<T: 'static> DelayedQueue<T> {
    /// Offers `items` (each a value and its delay) as one batch of jobs,
    /// and returns the batch's id. Each member is offered as
    /// [`offer_with_id`](Self::offer_with_id) offers, under the id
    /// `<batch>/<n>` (from 1, in the order given), so each is a job with a
    /// history, a cancel ([`ReliableQueue::cancel_job`](crate::ReliableQueue::cancel_job))
    /// and a result. Once every member has ended — handled, dead-lettered
    /// or cancelled; a member counts once, at its first such end — the
    /// batch is complete, and its completion, if
    /// [`on_complete`](BatchOptions::on_complete) asked for one, is offered
    /// once to its target by the reaper of any client with a reliable
    /// handle or worker on this queue (within its period, at most 5 s).
    ///
    /// The queue must keep job history
    /// ([`set_job_history`](Self::set_job_history)): members are counted as
    /// their jobs end ([`Error::InvalidArgument`] otherwise). Counted by
    /// delayq's reliable consumers and workers only: a member taken by a
    /// Java consumer or a plain take never counts, and the batch stays
    /// open. Offered in chunks of at most 200 members; a resent chunk adds
    /// nothing twice. When the queue's limits refuse a member, the members
    /// before it are offered and the call fails with
    /// [`Error::OfferRefused`]; the batch stays `offering` (no completion)
    /// until an offer under the same id with the same items resumes it.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::batch::BatchOptions;
    ///
    /// # async fn demo(rows: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// let options = BatchOptions::new().on_complete("imports-done", serde_json::json!({ "file": "nov.csv" }));
    /// let id = rows
    ///     .offer_batch(["row 1", "row 2"].map(|r| (r.to_owned(), Duration::ZERO)), &options)
    ///     .await?;
    /// println!("batch {id}");
    /// # Ok(()) }
    /// ```
    pub async fn offer_batch<I, B>(&self, items: I, options: &BatchOptions) -> Result<String>
    where
        I: IntoIterator<Item = (B, Duration)>,
        B: Borrow<T>,
    {
        let id = match &options.id {
            Some(id) => {
                check_batch_id(id)?;
                id.clone()
            }
            None => format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..)),
        };
        let data = match &options.target {
            Some(target) => {
                QueueKeys::new(target)?;
                let data = serde_json::to_vec(&options.data)
                    .map_err(|e| Error::InvalidArgument(format!("the completion's data is not JSON: {e}")))?;
                if data.len() > MAX_COMPLETION_BYTES {
                    return Err(Error::InvalidArgument(format!(
                        "the completion's data is {} bytes as JSON; at most {MAX_COMPLETION_BYTES}",
                        data.len()
                    )));
                }
                data
            }
            None => Vec::new(),
        };
        let mut encoded = Vec::new();
        for (value, delay) in items {
            encoded.push((self.due_after(delay)?, self.encode(value.borrow())?));
        }
        if encoded.is_empty() {
            return Err(Error::InvalidArgument("a batch has at least one value".into()));
        }
        // A job's history files at most 16 ready ids per payload: a 17th
        // equal member would have none, and never be counted.
        let mut equal: std::collections::HashMap<&[u8], usize> = std::collections::HashMap::new();
        for (_, payload) in &encoded {
            let n = equal.entry(payload.as_ref()).or_default();
            *n += 1;
            if *n > MAX_EQUAL_MEMBERS {
                return Err(Error::InvalidArgument(format!(
                    "a batch holds at most {MAX_EQUAL_MEMBERS} members with equal bytes (make them differ, e.g. by an index)"
                )));
            }
        }
        if crate::queue::jobs::switch(&self.handle.core, &self.handle.keys)
            .await?
            .is_none()
        {
            return Err(Error::InvalidArgument(format!(
                "queue {:?} keeps no job history: a batch's members are counted as their jobs end (set_job_history)",
                self.name()
            )));
        }
        self.handle.core.seen(&self.handle.keys);
        let total = encoded.len();
        let keys = SCRIPTS.offer_batch.keys(&self.handle.keys).build();
        // Chunks go on one connection, up to CHUNKS_IN_FLIGHT at once: Redis
        // runs them in the order sent. A chunk that ran before the one ahead
        // of it (a resend after NOSCRIPT) adds nothing (the record's count
        // had not reached its first member) and is sent again next round.
        let conn = self.conn()?;
        let chunk = |from: usize| {
            let mut to = from;
            let mut bytes = 0;
            while to < total && to - from < CHUNK_VALUES && (to == from || bytes + encoded[to].1.len() <= CHUNK_BYTES) {
                bytes += encoded[to].1.len();
                to += 1;
            }
            to
        };
        let send = |from: usize, to: usize| {
            let mut args = vec![
                Value::from(id.as_str()),
                Value::from(from as i64),
                Value::from(total as i64),
                Value::from(time::saturating_ms(options.keep)),
                Value::from(options.target.as_deref().unwrap_or_default()),
                Value::Bytes(Bytes::from(data.clone())),
                Value::from(self.format.as_str()),
            ];
            for (due, payload) in &encoded[from..to] {
                args.push(due.arg());
                args.push(Value::Bytes(payload.clone()));
            }
            SCRIPTS.offer_batch.run(conn, self.name(), keys.clone(), args)
        };
        let mut from = 0;
        let mut stalls = 0;
        while from < total {
            let mut in_flight = FuturesOrdered::new();
            let mut next = from;
            while next < total && in_flight.len() < CHUNKS_IN_FLIGHT {
                let to = chunk(next);
                in_flight.push_back(send(next, to));
                next = to;
            }
            // Every reply is read before an error is returned, so that none
            // runs after the call has answered.
            let (mut reached, mut lowest) = (from, from);
            let mut failed = None;
            let mut nth = 0;
            while let Some(reply) = in_flight.next().await {
                nth += 1;
                // Only the round's first chunk's failure is decisive: a later
                // one may have run before it (resent after NOSCRIPT, when the
                // record did not exist yet: DELAYQ_BATCH_GONE), and the next
                // round sends it again from where the batch got.
                if nth > 1 && reply.is_err() {
                    continue;
                }
                let reply = reply.map_err(|e| batch_error(e.into(), &id)).and_then(|value| {
                    let [offered, refusal] = reply::tuple::<2>(value)?;
                    let offered = reply::int(&offered)? as usize;
                    match reply::opt_text(refusal).ok().flatten() {
                        Some(refusal) => Err(Refusal::parse(&refusal).map_or_else(
                            || Error::Protocol(format!("offer_batch answered the refusal {refusal:?}")),
                            |refusal| Error::OfferRefused {
                                queue: self.name().to_owned(),
                                refusal,
                            },
                        )),
                        None => Ok(offered),
                    }
                });
                match reply {
                    // A resumed batch may hold more already: go on from there.
                    Ok(offered) => {
                        lowest = lowest.min(offered);
                        reached = reached.max(offered);
                    }
                    Err(error) => {
                        failed.get_or_insert(error);
                    }
                }
            }
            if let Some(error) = failed {
                return Err(error);
            }
            if lowest < from {
                return Err(Error::Protocol(format!(
                    "batch {id:?} holds {lowest} members, fewer than the {from} offered before"
                )));
            }
            if reached == from {
                // Only chunks that ran early: send again, a few times.
                stalls += 1;
                if stalls >= MAX_STALLS {
                    return Err(Error::Protocol(format!(
                        "batch {id:?}: its chunks kept arriving out of order"
                    )));
                }
            } else {
                stalls = 0;
            }
            from = reached;
        }
        Ok(id)
    }

    /// Batch `id`'s state and counts, or `None` when there is no such batch
    /// (never offered, or its record expired).
    ///
    /// ```no_run
    /// # async fn demo(imports: delayq::DelayedQueue<String>) -> delayq::Result<()> {
    /// let done = imports.batch("import-2026-11").await?.is_some_and(|b| b.ended() == b.total);
    /// # Ok(()) }
    /// ```
    pub async fn batch(&self, id: &str) -> Result<Option<BatchStatus>> {
        status(&self.handle.core, &self.handle.keys, id).await
    }
}

/// The script's own refusals as typed errors.
fn batch_error(error: Error, id: &str) -> Error {
    match &error {
        Error::Script { message, .. } if message.starts_with("DELAYQ_BATCH_TAKEN") => Error::InvalidArgument(format!(
            "batch id {id:?} is in use by a batch of another size or target"
        )),
        Error::Script { message, .. } if message.starts_with("DELAYQ_BATCH_FULL") => Error::InvalidArgument(
            "the queue's job history is near its cap of 1,000,000 records: the batch's members could not all be counted".into(),
        ),
        Error::Script { message, .. } if message.starts_with("DELAYQ_BATCH_HISTORY") => Error::InvalidArgument(
            "the queue keeps no job history: a batch's members are counted as their jobs end (set_job_history)".into(),
        ),
        _ => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back() {
        let raw =
            "open\u{1f}3\u{1f}3\u{1f}1\u{1f}1\u{1f}0\u{1f}1700000000000\u{1f}0\u{1f}604800000\u{1f}legacy\u{1f}done-q";
        let status = BatchStatus::parse("b1", raw.as_bytes()).unwrap();
        assert_eq!(status.state, BatchState::Open);
        assert_eq!(
            (status.total, status.handled, status.dead_lettered, status.ended()),
            (3, 1, 1, 2)
        );
        assert_eq!(status.completed, None);
        assert_eq!(status.target.as_deref(), Some("done-q"));
        assert_eq!(status.format, crate::wire::format::Format::Legacy);
        assert!(BatchStatus::parse("b1", b"what").is_none());
    }

    #[test]
    fn batch_ids_are_checked() {
        assert!(check_batch_id("a/b").is_err());
        assert!(check_batch_id("").is_err());
        assert!(check_batch_id(&"x".repeat(129)).is_err());
        assert!(check_batch_id("import-1").is_ok());
    }
}
