//! Offers: single, at a time, and in bulk, with the due time on either clock.
//!
//! A single offer is one run of `lua/offer.lua`, sent once. A bulk offer
//! ([`DelayedQueue::offer_all`]) is a sequence of `lua/offer_all.lua` runs
//! (chunks) sent ahead of their replies on one connection, all keyed by one
//! request (`delayq_request:{N}:<id>`) that counts the call's elements added
//! so far: a chunk adds only elements from that count on, so any copy of a
//! chunk — fred's resend after a lost reply, or this module's own resend —
//! adds nothing twice, and chunks land in the caller's order whatever order
//! they arrive in.

use std::borrow::Borrow;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use fred::types::{Key, Value};
use futures_util::stream::{FuturesOrdered, StreamExt};

use crate::connection::durable::Watch;
use crate::connection::reply;
use crate::connection::request::Sequence;
use crate::connection::script::SCRIPTS;
use crate::error::{Error, Refusal, Result};
use crate::queue::batch::OfferRun;
use crate::queue::traces::OfferTrace;
use crate::transfer::Clock;
use crate::wire::format;
use crate::wire::keys::KeyRole;
use crate::wire::time;

use super::limits::Waiting;
use super::DelayedQueue;

/// Bulk-offer scripts sent ahead of their replies: enough that Redis always
/// has the next ones while the client reads a reply.
const BULK_IN_FLIGHT: usize = 8;
/// How long `offer_all` keeps sending again after failures, without
/// progress, before it gives up.
const BULK_RETRY_FOR: Duration = Duration::from_secs(30);
/// Random-id collisions one element may have (each is a 1-in-2^64 event:
/// more mean something else is wrong).
const MAX_COLLISIONS: u32 = 3;
/// Rounds without progress (every chunk arriving early) before giving up.
const MAX_STALLS: u32 = 3;

/// When an offered element is due.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Due {
    /// At this time (ms since the epoch, the producer's clock, as Java).
    At(i64),
    /// This many ms after "now" on the Redis server's clock ([`Clock::Server`]).
    After(i64),
}

impl Due {
    /// The scripts' spelling: ms since the epoch, or "+ms" on the server's clock.
    pub(super) fn arg(self) -> Value {
        match self {
            Due::At(ms) => Value::from(ms),
            Due::After(ms) => Value::from(format!("+{ms}")),
        }
    }
}

/// How one round of bulk-offer chunks ended.
enum Stop {
    /// Every element is added.
    Done,
    /// The element at this index collided with a pending one: re-pack it.
    Collision(usize),
    /// A chunk came before its predecessor was added (nothing changed).
    Early,
    /// A chunk failed (Redis said no, or no reply came).
    Failed(Error),
    /// The call's record is gone (expired, flushed, or lost in a failover):
    /// where to go on from is not known any more.
    RecordLost,
    /// The queue's limits refused the element at the round's `added`.
    Refused(Refusal),
}

/// One round: how many elements are added, how far the chunks whose
/// outcome is unknown reach, and why it ended.
struct Round {
    added: usize,
    unknown_until: usize,
    stop: Stop,
}

impl<T: 'static> DelayedQueue<T> {
    /// Offers `value`, due `delay` from now (as Java's `offer(value, delay,
    /// unit)`: on this host's clock, or the Redis server's under
    /// [`Clock::Server`]).
    ///
    /// Fails with [`Error::InvalidDelay`] when the due time would pass the
    /// largest exact score (2^53 - 1 ms since the epoch), with
    /// [`Error::PayloadTooLarge`] over the client's payload limit, and with
    /// [`Error::OfferRefused`] when the queue's limits refuse it
    /// ([`set_limits`](Self::set_limits); a full queue waits instead under
    /// [`WhenFull::Wait`](crate::limits::WhenFull::Wait)).
    ///
    /// Concurrent offers to one queue (through this handle or its clones)
    /// share script runs: an offer made while another is in flight waits
    /// for it, then goes with every offer that came meanwhile in one atomic
    /// run (at most 250 values or 256 KiB), which leaves what offering them
    /// one by one in that order would. A lone offer waits for nothing; under
    /// concurrency this multiplies throughput (BENCHMARKS.md, scenario 1).
    /// An offer whose caller stops waiting before its run is sent is not
    /// added; one whose run fails fails with that run's error.
    pub async fn offer(&self, value: &T, delay: Duration) -> Result<()> {
        let due = self.due_after(delay)?;
        self.offer_one(due, self.encode(value)?).await
    }

    /// Offers `value`, due at `at`. A time in the past is a negative delay and
    /// fails with [`Error::InvalidDelay`], as a negative delay does in Java.
    pub async fn offer_at(&self, value: &T, at: SystemTime) -> Result<()> {
        let due = Due::At(time::due_at(time::now_ms(), at)?);
        self.offer_one(due, self.encode(value)?).await
    }

    /// Offers many values, each with its own delay, several times faster
    /// than one `offer` per value: Java sees exactly what offering them one
    /// by one, in order, would leave (the same elements and due times, the
    /// pending list in the order given), with one publish per chunk whose
    /// earliest value became the queue's head instead of one per value.
    ///
    /// All delays and payloads are checked before anything is sent. Then
    /// the values go in chunks (at most 250 values or 256 KiB each, one
    /// atomic script apiece, so Redis is never blocked for long), several
    /// in flight at once on one connection. Chunks that fail on the way are
    /// sent again for up to 30 s; none adds a value twice, whatever the
    /// connection does (a resent chunk adds only what its first run did not).
    ///
    /// # Errors
    ///
    /// When nothing was queued: the error itself ([`Error::InvalidDelay`],
    /// [`Error::PayloadTooLarge`], [`Error::OfferRefused`], [`Error::WrongType`],
    /// a connection error...). When some values may be queued:
    /// [`Error::PartlyOffered`], which says exactly how many, from the first
    /// one, are. The queue's limits ([`set_limits`](Self::set_limits)) admit
    /// values in order as offering them one by one would: those before the
    /// first refused one are queued, none from it on (with
    /// [`WhenFull::Wait`](crate::limits::WhenFull::Wait), a full queue's call
    /// goes on from there as room appears).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let reminders = client.delayed_queue("reminders", delayq::StringCodec)?;
    /// let users = ["ann", "bob", "eve"];
    /// reminders
    ///     .offer_all(users.iter().map(|u| (format!("remind {u}"), Duration::from_secs(3600))))
    ///     .await?;
    /// assert_eq!(reminders.len().await?, 3);
    /// # Ok(()) }
    /// ```
    pub async fn offer_all<I, B>(&self, items: I) -> Result<()>
    where
        I: IntoIterator<Item = (B, Duration)>,
        B: Borrow<T>,
    {
        let mut encoded = Vec::new();
        for (value, delay) in items {
            encoded.push((self.due_after(delay)?, self.encode(value.borrow())?));
        }
        self.offer_bulk(&encoded).await
    }

    /// The due time `delay` from now, on the clock the client is set to.
    pub(super) fn due_after(&self, delay: Duration) -> Result<Due> {
        // Checked on this host's clock whatever the setting: it only guards the range.
        let local = time::due_after(time::now_ms(), delay)?;
        Ok(match self.handle.core.transfer_settings().clock {
            Clock::Local => Due::At(local),
            Clock::Server => Due::After(delay.as_millis() as i64),
        })
    }

    /// Offers one encoded payload with `lua/offer.lua`: alone, or joined
    /// with offers made meanwhile (see `joined_offers`).
    async fn offer_one(&self, due: Due, payload: Bytes) -> Result<()> {
        let mut waiting = Waiting::new(self.when_full);
        loop {
            match self.offer_once(due, payload.clone()).await {
                Err(error) if waiting.again(&error).await => continue,
                outcome => return outcome,
            }
        }
    }

    /// One try of [`offer_one`](Self::offer_one).
    async fn offer_once(&self, due: Due, payload: Bytes) -> Result<()> {
        self.handle.core.seen(&self.handle.keys);
        // Inside a span (feature `opentelemetry`): alone, with its context (`traced`).
        let trace = OfferTrace::current();
        // A collision of random ids is astronomically rare; re-pack and resend.
        for _ in 0..MAX_COLLISIONS {
            let element = format::pack(self.format, &payload);
            self.handle.arm(); // the run itself fails after shutdown
            let collided = if trace.is_some() {
                let durability = self.handle.durability;
                self.offer_target()
                    .offer_traced(due, element, &trace, durability)
                    .await?
            } else {
                let durability = self.handle.durability;
                self.joined
                    .offer(self.offer_target(), due, element, payload.len(), durability)
                    .await?
            };
            if !collided {
                return Ok(());
            }
        }
        Err(Error::Protocol("offer kept colliding with pending elements".into()))
    }

    /// Offers encoded payloads in order with `lua/offer_all.lua`, round
    /// after round until every one is added: a round sends chunks from the
    /// first element not added yet, until a reply says to start again
    /// (a collision, a chunk that came early, a failure).
    async fn offer_bulk(&self, items: &[(Due, Bytes)]) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        self.handle.core.seen(&self.handle.keys);
        // One connection for every chunk: Redis runs them in the order sent,
        // so early arrivals (which cost a resend) do not happen in practice.
        let conn = self.conn()?;
        // With a durability: one wait for the replicas once every chunk is
        // in, on this connection (it counts the chunks it sent).
        let durability = self.handle.durability;
        let watch = durability.map(|_| Watch::of(conn));
        let sequence = Sequence::new(self.name(), conn, self.handle.core.settling());
        // Inside a span (feature `opentelemetry`): one context for the call.
        let trace = OfferTrace::current();
        let keys = SCRIPTS
            .offer_all
            .keys(&self.handle.keys)
            .with(KeyRole::Request, sequence.key())
            .traced(trace.is_some())
            .build();
        let mut added = 0;
        // Chunks of any round whose outcome is unknown may still land (until
        // the sequence is cancelled): how far they reach.
        let mut unknown_until = 0;
        let mut collisions = (0, 0);
        let mut stalls = 0;
        let mut failing_since = None;
        let mut pause = Duration::from_millis(50);
        let mut waiting = Waiting::new(self.when_full);
        loop {
            let round = self.bulk_round(conn, &keys, items, added, &trace).await;
            let progress = round.added > added;
            added = round.added;
            unknown_until = unknown_until.max(round.unknown_until);
            if progress {
                (stalls, failing_since, pause) = (0, None, Duration::from_millis(50));
            }
            let give_up = |error: Error| self.partly_offered(added, unknown_until, error);
            match round.stop {
                Stop::Done => {
                    sequence.finish();
                    if let Some(watch) = &watch {
                        let core = &self.handle.core;
                        core.confirm(conn, durability, watch, SCRIPTS.offer_all.name, self.name())
                            .await?;
                    }
                    return Ok(());
                }
                Stop::Collision(at) => {
                    collisions = if collisions.0 == at {
                        (at, collisions.1 + 1)
                    } else {
                        (at, 1)
                    };
                    if collisions.1 >= MAX_COLLISIONS {
                        return Err(give_up(Error::Protocol(
                            "offer_all kept colliding with pending elements".into(),
                        )));
                    }
                }
                Stop::Early if !progress => {
                    stalls += 1;
                    if stalls >= MAX_STALLS {
                        return Err(give_up(Error::Protocol(
                            "offer_all's chunks kept arriving out of order".into(),
                        )));
                    }
                }
                Stop::Early => {}
                Stop::Failed(error) if !error.is_transient() => return Err(give_up(error)),
                Stop::Failed(error) => {
                    let since = *failing_since.get_or_insert_with(tokio::time::Instant::now);
                    if since.elapsed() >= BULK_RETRY_FOR {
                        return Err(give_up(error));
                    }
                    tracing::debug!(queue = self.name(), added, %error, "offer_all: chunks failed; sending again");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                Stop::Refused(refusal) => {
                    let error = Error::OfferRefused {
                        queue: self.name().to_owned(),
                        refusal,
                    };
                    if !waiting.again(&error).await {
                        return Err(give_up(error));
                    }
                }
                Stop::RecordLost => {
                    return Err(give_up(Error::Protocol(
                        "offer_all's request record disappeared (expired, flushed, or lost in a failover)".into(),
                    )))
                }
            }
        }
    }

    /// One round of chunks from element `from`: up to [`BULK_IN_FLIGHT`]
    /// ahead of the replies, until the last element is sent or a reply says
    /// to stop; then the replies of those in flight are read.
    async fn bulk_round(
        &self,
        conn: &fred::clients::Client,
        keys: &[Key],
        items: &[(Due, Bytes)],
        from: usize,
        trace: &OfferTrace,
    ) -> Round {
        let mut in_flight = FuturesOrdered::new();
        let mut next = from;
        let mut round = Round {
            added: from,
            unknown_until: from,
            stop: Stop::Done,
        };
        let mut stopped = false;
        loop {
            while !stopped && in_flight.len() < BULK_IN_FLIGHT && next < items.len() {
                let (start, end) = (next, chunk_end(items, next));
                // What Redis had added before this chunk was sent: its reply
                // cannot be less (replies of chunks that ran out of order,
                // such as after NOSCRIPT, can be less than later ones).
                let known = round.added;
                let chunk = self.send_chunk(conn, keys.to_vec(), items, start, end, trace);
                in_flight.push_back(async move { (start, end, known, chunk.await) });
                next = end;
            }
            let Some((start, end, known, reply)) = in_flight.next().await else {
                return round;
            };
            let stop = match reply {
                Ok((added, _)) if added < known => Some(Stop::RecordLost),
                Ok((added, refused)) => {
                    round.added = round.added.max(added);
                    match added {
                        _ if refused.is_some() && added >= start => refused.map(Stop::Refused),
                        _ if added >= end => None,
                        _ if added >= start => Some(Stop::Collision(added)),
                        _ => Some(Stop::Early),
                    }
                }
                Err((error, unknown)) => {
                    if unknown {
                        round.unknown_until = round.unknown_until.max(end);
                    }
                    Some(Stop::Failed(error))
                }
            };
            // The first reason to stop is the one acted on; the chunks after
            // it only tell how far the call got.
            if let (Some(stop), false) = (stop, stopped) {
                round.stop = stop;
                stopped = true;
            }
        }
    }

    /// Sends elements `start..end` as one chunk, packed with fresh ids
    /// (so a chunk sent again after a collision re-packs the collided one).
    /// Returns how many of the call's elements are added after it (and the
    /// refusal of the next one when the queue's limits stopped it), or the
    /// error and whether the chunk may have run.
    async fn send_chunk(
        &self,
        conn: &fred::clients::Client,
        keys: Vec<Key>,
        items: &[(Due, Bytes)],
        start: usize,
        end: usize,
        trace: &OfferTrace,
    ) -> std::result::Result<(usize, Option<Refusal>), (Error, bool)> {
        let script = &SCRIPTS.offer_all;
        let mut args = Vec::with_capacity(1 + 2 * (end - start));
        args.push(Value::from(start as i64));
        for (due, payload) in &items[start..end] {
            args.push(due.arg());
            args.push(Value::Bytes(format::pack(self.format, payload)));
        }
        trace.append_arg(&mut args);
        let reply = script.run(conn, self.name(), keys, args).await.map_err(|e| {
            let unknown = e.may_have_run();
            (Error::from(e), unknown)
        })?;
        chunk_reply(reply).map_err(|e| (e, false))
    }

    /// The error of a bulk offer that stopped with the first `added` values
    /// queued and those up to `unknown_until` perhaps: `error` itself when
    /// none can be.
    fn partly_offered(&self, added: usize, unknown_until: usize, error: Error) -> Error {
        let unknown = unknown_until.saturating_sub(added);
        if added == 0 && unknown == 0 {
            return error;
        }
        Error::PartlyOffered {
            queue: self.name().to_owned(),
            offered: added,
            unknown,
            source: Box::new(error),
        }
    }
}

/// An `offer_all.lua` reply: the call's count of elements added, alone or
/// with the refusal that stopped the chunk.
fn chunk_reply(reply: Value) -> Result<(usize, Option<Refusal>)> {
    if let Value::Array(parts) = &reply {
        let [count, refusal] = parts.as_slice() else {
            return Err(Error::Protocol(format!("offer_all answered {reply:?}")));
        };
        let refusal = refusal.as_str().as_deref().and_then(Refusal::parse);
        let refusal = refusal.ok_or_else(|| Error::Protocol(format!("offer_all answered {reply:?}")))?;
        return Ok((reply::int(count)? as usize, Some(refusal)));
    }
    Ok((reply::int(&reply)? as usize, None))
}

/// Where the chunk starting at `start` ends: as many elements as one
/// offering run takes (`queue/batch.rs`), at least one.
pub(super) fn chunk_end(items: &[(Due, Bytes)], start: usize) -> usize {
    let mut run = OfferRun::default();
    start
        + items[start..]
            .iter()
            .take_while(|(_, payload)| run.take(payload.len()))
            .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(sizes: &[usize]) -> Vec<(Due, Bytes)> {
        sizes
            .iter()
            .map(|&n| (Due::At(0), Bytes::from(vec![b'x'; n])))
            .collect()
    }

    #[test]
    fn chunks_are_bounded_by_count_and_bytes_and_hold_at_least_one_element() {
        let small = items(&[10; 2_500]);
        assert_eq!(chunk_end(&small, 0), 250);
        assert_eq!(chunk_end(&small, 2_400), 2_500);
        // 10 KiB payloads: 25 of them, counted with a modern header each,
        // fill 256 KiB (as bulk offers always split).
        let large = items(&[10 * 1024; 300]);
        assert_eq!(chunk_end(&large, 0), 25);
        assert_eq!(chunk_end(&large, 275), 300);
        let huge = items(&[2 << 20, 1]);
        assert_eq!(chunk_end(&huge, 0), 1);
        assert_eq!(chunk_end(&huge, 1), 2);
    }
}
