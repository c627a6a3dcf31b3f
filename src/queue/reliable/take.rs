//! Taking a delivery: a move to the staging list (`LMOVE` on the shared
//! connections when a value is ready, else `BLMOVE` on a dedicated one to
//! wait for one), then the claim script.

use std::time::Duration;

use bytes::Bytes;

use fred::interfaces::{ClientLike, KeysInterface, ListInterface};
use fred::types::lists::LMoveDirection;
use fred::types::{Key, Value};
use futures_util::stream::Stream;
use tokio::time::Instant;

use crate::connection::detached::{detach, pop_options, undo_move, until, Command};
use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{outcome_unknown, Error, Result};
use crate::queue::reliable::delivery::{Delivery, GiveBack, Handle};
use crate::telemetry::DeadLettered;
use crate::wire::codec;
use crate::wire::format::{ElementId, Format};

use super::ReliableQueue;

/// How far from the staging list's tail a claim looks for its value.
const CLAIM_SCAN: i64 = 1000;

/// How often a consumer of a paused queue looks whether it was resumed.
const PAUSED_RECHECK: Duration = Duration::from_secs(1);

/// What one move and claim came to.
pub(crate) enum Ready<T> {
    /// A delivery.
    Taken(Delivery<T>),
    /// Nothing to deliver: the queue was empty, or the claim lost its value
    /// (the reaper had returned it) or dead-lettered it.
    Nothing,
    /// The queue is paused: the value moved went back to its head.
    Paused,
}

impl<T: 'static> ReliableQueue<T> {
    /// Waits for a value and delivers it. Keeps waiting across reconnects;
    /// fails on [`Error::Shutdown`] or bad data. A value that cannot be
    /// decoded is given straight back to the queue (so it counts towards the
    /// dead-letter limit) and reported as [`Error::Decode`].
    ///
    /// Cancel safe: a value moved for a take dropped before it returns goes
    /// back to the head of the list at once, or, if the take was dropped
    /// while claiming it, after the visibility timeout. The same holds for
    /// [`take_timeout`](Self::take_timeout).
    pub async fn take(&self) -> Result<Delivery<T>> {
        loop {
            if let Some(delivery) = self.next(None).await? {
                return Ok(delivery);
            }
        }
    }

    /// The deliveries as they come: an endless stream of [`take`](Self::take)s,
    /// beside [`BlockingQueue::stream`](crate::BlockingQueue::stream), that
    /// ends after the client shuts down. Each item must be acked (or nacked)
    /// like any delivery. A value that cannot be decoded is yielded as an
    /// error after it went back to the queue. After any error the stream
    /// waits a second before reading on, so that it never spins.
    ///
    /// ```no_run
    /// use futures_util::StreamExt;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.reliable_queue("orders", delayq::StringCodec)?;
    /// let mut deliveries = std::pin::pin!(orders.stream());
    /// while let Some(delivery) = deliveries.next().await {
    ///     let delivery = delivery?;
    ///     println!("{}", delivery.value());
    ///     delivery.ack().await?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn stream(&self) -> impl Stream<Item = Result<Delivery<T>>> + Send + 'static
    where
        T: Send,
    {
        self.handle.stream(self.clone(), |queue: Self| async move {
            let taken = queue.take().await;
            (queue, taken)
        })
    }

    /// Waits up to `timeout` for a value to deliver (a timeout too long for
    /// the clock waits like [`take`](Self::take)).
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<Delivery<T>>> {
        let Some(deadline) = Instant::now().checked_add(timeout) else {
            return self.take().await.map(Some);
        };
        loop {
            match self.next(Some(deadline)).await? {
                Some(delivery) => return Ok(Some(delivery)),
                None if Instant::now() >= deadline => return Ok(None),
                None => continue,
            }
        }
    }

    /// A delivery of a value that is ready now, without waiting for one.
    /// Never leases a dedicated connection (see `move_ready`).
    pub(crate) async fn take_ready(&self) -> Result<Ready<T>> {
        self.move_and_claim(None, false).await
    }

    /// One move and claim; `None` when nothing came, the claim lost its
    /// value, or the queue was paused (then after waiting for the resume,
    /// until `deadline`).
    pub(super) async fn next(&self, deadline: Option<Instant>) -> Result<Option<Delivery<T>>> {
        match self.move_and_claim(deadline, true).await? {
            Ready::Taken(delivery) => Ok(Some(delivery)),
            Ready::Nothing => Ok(None),
            Ready::Paused => {
                // Take nothing more until the pause ends: each move meanwhile
                // would move a value out and back, reordering the list.
                self.wait_while_paused(deadline).await?;
                Ok(None)
            }
        }
    }

    /// One move and claim; with `wait`, waits for a value (until `deadline`)
    /// when none is ready.
    async fn move_and_claim(&self, deadline: Option<Instant>, wait: bool) -> Result<Ready<T>> {
        if self.handle.core.is_shutting_down() {
            return Err(Error::Shutdown);
        }
        // A stalled connection cannot hold a take with a deadline past it.
        let value = match until(deadline, self.move_ready()).await? {
            Some(value) => value,
            None if !wait => return Ok(Ready::Nothing),
            None => {
                let (dest, staging) = (self.handle.keys.destination(), self.handle.keys.staging());
                let args = |secs: f64| {
                    let mut args: Vec<Value> = [dest, staging, "LEFT", "RIGHT"].into_iter().map(Value::from).collect();
                    args.push(Value::from(secs));
                    args
                };
                let Some(moved) = self
                    .handle
                    .core
                    .blocking()
                    .wait("BLMOVE", dest, deadline, args, None)
                    .await?
                else {
                    return Ok(Ready::Nothing);
                };
                reply::bytes(moved)?
            }
        };
        let id = ElementId::random(Format::Modern).to_bytes();
        let keys = vec![
            self.handle.keys.staging().into(),
            self.handle.keys.leases().into(),
            self.handle.keys.dead_letter().into(),
            self.handle.keys.due().into(),
            self.handle.keys.counts().into(),
            self.handle.keys.counts_expiry().into(),
            self.handle.keys.staging_mark().into(),
            self.handle.keys.destination().into(),
            self.handle.keys.paused().into(),
            self.handle.keys.dead_reasons().into(),
        ];
        let args = vec![
            Value::Bytes(value.clone()),
            Value::Bytes(Bytes::copy_from_slice(&id)),
            Value::from(crate::wire::time::saturating_ms(self.settings.visibility)),
            Value::from(i64::from(self.settings.max_deliveries)),
            Value::from(CLAIM_SCAN),
        ];
        // One attempt: a claim applied twice would leave a delivery nobody
        // holds. If the reply is lost, the delivery is found by its id and
        // goes back to the head, uncounted (`lost_claim`); so it does if the
        // caller stops waiting (a worker stopping): the claim ends in the
        // background and gives its delivery back.
        let conn = self.handle.core.conn()?.clone(); // sent once: the script is declared `Resend::Once`
        let command: Command<_> = {
            let conn = conn.clone();
            Box::pin(async move { SCRIPTS.claim.run(&conn, keys, args).await })
        };
        let give_back = {
            let (core, keys, settings, value) = (
                self.handle.core.clone(),
                self.handle.keys.clone(),
                self.settings,
                value.clone(),
            );
            move |reply: std::result::Result<Value, fred::error::Error>| async move {
                let reply = match reply {
                    Ok(reply) => reply,
                    // Its reply lost too: looked for by its id (`lost_claim`).
                    Err(error) if outcome_unknown(&error) => {
                        return super::lost_claim::give_back_later(&core, &keys, settings, id, value);
                    }
                    Err(_) => return,
                };
                let Some(count) = Claim::parse(reply).ok().and_then(|claim| claim.taken()) else {
                    return;
                };
                let member = crate::queue::reliable::delivery::member(id, count, &value);
                let mut handle = Handle::new(core, &keys, settings, member);
                if let Err(error) = handle.give_back(GiveBack::Unhandled).await {
                    tracing::warn!(queue = keys.destination(), %error, "could not give back a value claimed for a take that stopped waiting; its visibility timeout will");
                }
            }
        };
        let claimed_reply = detach(command, give_back, self.handle.core.settling())
            .until_answered()
            .reply()
            .await;
        let claim = match claimed_reply {
            Ok(claim) => claim,
            Err(error) => {
                // No answer from Redis (a connection lost, not an error
                // reply): the claim may have run, and its delivery is looked
                // for and given back uncounted (`lost_claim`). Not run, its
                // value waits in the staging list for the reaper.
                if outcome_unknown(&error) {
                    super::lost_claim::give_back_later(
                        &self.handle.core,
                        &self.handle.keys,
                        self.settings,
                        id,
                        value.clone(),
                    );
                }
                let error = Error::from_script(error, SCRIPTS.claim.name, self.name());
                if error.is_transient() {
                    tracing::warn!(queue = self.name(), %error, "claim failed; its value goes back to the queue");
                    return Ok(Ready::Nothing);
                }
                return Err(error);
            }
        };
        let claim = Claim::parse(claim)?;
        let lateness = match (claim.due.as_deref().and_then(crate::wire::time::parse_score), claim.now) {
            (Some(due), Some(now)) => {
                let ms = (now - due).max(0);
                crate::telemetry::delivered(self.name(), ms);
                Some(Duration::from_millis(ms as u64))
            }
            _ => None,
        };
        match claim.status.as_str() {
            "ok" => {}
            "gone" => return Ok(Ready::Nothing),
            "paused" => return Ok(Ready::Paused),
            "dead" => {
                self.handle.core.count_dead_lettered(1);
                crate::telemetry::dead_lettered(self.name(), DeadLettered::Deliveries);
                tracing::warn!(
                    queue = self.name(),
                    deliveries = claim.count,
                    dead_letter = self.handle.keys.dead_letter(),
                    "value delivered too often without an ack; moved to the dead-letter list"
                );
                return Ok(Ready::Nothing);
            }
            other => return Err(Error::Protocol(format!("claim answered {other:?}"))),
        }
        let count = claim.taken().expect("the status is \"ok\"");
        let member = crate::queue::reliable::delivery::member(id, count, &value);
        match codec::decode(&*self.handle.codec, value) {
            Ok(decoded) => Ok(Ready::Taken(Delivery::new(self, member, count, lateness, decoded))),
            Err(error) => {
                // Given back at once, where it counts towards the dead-letter
                // limit, or dead-lettered now if the consumer asked for that.
                let to = if self.settings.dead_letter_undecodable {
                    crate::telemetry::dead_lettered(self.name(), DeadLettered::Undecodable);
                    GiveBack::DeadLetter(format!("undecodable: {error}"))
                } else {
                    GiveBack::Tail
                };
                let mut handle = Handle::new(self.handle.core.clone(), &self.handle.keys, self.settings, member);
                let restored = handle.give_back(to).await.unwrap_or(false);
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }
}

/// The claim script's reply: `[status, delivery count, due score, now]`.
struct Claim {
    status: String,
    count: i64,
    due: Option<String>,
    now: Option<i64>,
}

impl Claim {
    fn parse(reply: Value) -> Result<Claim> {
        let mut reply = reply::array(reply)?.into_iter();
        Ok(Claim {
            status: reply
                .next()
                .map(reply::opt_text)
                .transpose()?
                .flatten()
                .unwrap_or_default(),
            count: reply.next().map(|v| reply::int(&v)).transpose()?.unwrap_or(0),
            due: reply.next().map(reply::opt_text).transpose()?.flatten(),
            now: reply.next().map(|v| reply::int(&v)).transpose()?,
        })
    }

    /// The delivery count, when the claim took its value (`"ok"`).
    fn taken(&self) -> Option<u32> {
        (self.status == "ok").then(|| u32::try_from(self.count).unwrap_or(u32::MAX))
    }
}

impl<T: 'static> ReliableQueue<T> {
    /// Moves a ready value to the staging list with `LMOVE` on the shared,
    /// pipelined connections: when the queue has values, as good as the
    /// `BLMOVE`, and no dedicated connection is leased. `None` when the queue
    /// is empty. Sent once and safe to cancel: a value moved for a caller
    /// that has stopped waiting goes back to the head of the queue (as for the
    /// `BLMOVE`). A lost reply may leave the value in the staging list, where
    /// the reaper finds it; the take then waits with the `BLMOVE`.
    async fn move_ready(&self) -> Result<Option<Bytes>> {
        let (dest, staging) = (self.handle.keys.destination(), self.handle.keys.staging());
        let conn = self.handle.core.conn_for(dest)?;
        let command: Command<_> = {
            let (conn, from, to) = (conn.clone(), Key::from(dest), Key::from(staging));
            Box::pin(async move {
                conn.with_options(&pop_options())
                    .lmove::<Option<Bytes>, _, _>(from, to, LMoveDirection::Left, LMoveDirection::Right)
                    .await
            })
        };
        let give_back = {
            let (conn, keys) = (conn.clone(), self.handle.keys.clone());
            move |reply: std::result::Result<Option<Bytes>, fred::error::Error>| async move {
                if let Ok(Some(value)) = reply {
                    undo_move(&conn, keys.destination(), keys.staging(), value, "LEFT", "RIGHT").await;
                }
            }
        };
        let moved = detach(command, give_back, self.handle.core.settling())
            .until_answered()
            .reply()
            .await;
        match moved {
            Ok(moved) => Ok(moved),
            Err(error) => {
                let error = Error::from_command(error, dest);
                if !error.is_transient() {
                    return Err(error);
                }
                if !error.never_sent() {
                    tracing::warn!(queue = dest, %error, "the reply of a move was lost; if the value moved, the reaper returns it");
                }
                Ok(None)
            }
        }
    }

    /// Waits until the queue is resumed, looking every [`PAUSED_RECHECK`]
    /// (ends early at shutdown or at `deadline`).
    async fn wait_while_paused(&self, deadline: Option<Instant>) -> Result<()> {
        loop {
            let until = Instant::now() + PAUSED_RECHECK;
            let until = deadline.map_or(until, |deadline| deadline.min(until));
            tokio::select! {
                _ = tokio::time::sleep_until(until) => {}
                _ = self.handle.core.shutdown_begun() => return Ok(()),
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Ok(());
            }
            let paused: i64 = self
                .handle
                .core
                .conn()?
                .exists(self.handle.keys.paused())
                .await
                .map_err(|e| Error::from_command(e, self.handle.keys.paused()))?;
            if paused == 0 {
                return Ok(());
            }
        }
    }
}
