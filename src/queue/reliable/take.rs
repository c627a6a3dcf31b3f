//! Taking a delivery: a move to the staging list (`LMOVE` on the shared
//! connections when a value is ready, else `BLMOVE` on a dedicated one to
//! wait for one), then the claim script.

use std::time::Duration;

use bytes::Bytes;

use fred::interfaces::{ClientLike, ListInterface};
use fred::types::lists::LMoveDirection;
use fred::types::{Key, Value};
use futures_util::stream::Stream;
use tokio::time::Instant;

use crate::connection::detached::{detach, pop_options, undo_move, until, Command};
use crate::connection::reply;
use crate::connection::script::SCRIPTS;
use crate::error::{CommandResult, DecodeError, Error, Result};
use crate::queue::priority::PRIORITY_ROUND;
use crate::queue::reliable::delivery::{Delivery, DeliveryLease, Release};
use crate::telemetry::DeadLettered;
use crate::wire::codec;
use crate::wire::format::{ElementId, Format};

use super::claim_batch::Batch;
use super::ReliableQueue;

/// How far from the staging list's tail a claim looks for its value.
const CLAIM_SCAN: i64 = 1000;

/// First wait of a take at the concurrency limit before it asks again
/// (doubling, to at most [`FULL_WAIT_MOST`]). Room made by another
/// process is seen by asking: no message tells of it.
pub(crate) const FULL_WAIT: Duration = Duration::from_millis(5);

/// Longest wait of a take at the concurrency limit between two asks.
pub(crate) const FULL_WAIT_MOST: Duration = Duration::from_millis(100);

/// How often a consumer of a paused queue looks whether it was resumed.
const PAUSED_RECHECK: Duration = Duration::from_secs(1);

/// What one move and claim came to.
pub(crate) enum Ready<T> {
    /// A delivery.
    Taken(Delivery<T>),
    /// Nothing to deliver: the queue was empty, or the claim lost its value
    /// (the reaper had returned it), dead-lettered it, or failed through the
    /// connection.
    Nothing,
    /// The queue is paused: the value moved went back to its head.
    Paused,
    /// The queue's concurrency limit had no room: nothing was taken.
    Full,
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
    pub fn stream(&self) -> impl Stream<Item = Result<Delivery<T>>> + Send + 'static + use<T>
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

    /// Whether the queue has priority values to look at (see `priority::Marker`).
    pub(crate) async fn has_priorities(&self) -> bool {
        self.handle.marked(None).await
    }

    /// The room the queue's concurrency limit had left at this client's
    /// last claim, if this client knows of a limit (never waits; a look
    /// starts when one is due).
    pub(crate) fn limit_room(&self) -> Option<i64> {
        self.handle.room_now()
    }

    /// Whether this client knows the queue has priority values or groups
    /// (never waits).
    pub(crate) fn marked_now(&self) -> bool {
        self.handle.marked_now()
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
            Ready::Nothing | Ready::Full => Ok(None),
            Ready::Paused => {
                // Take nothing more until the pause ends: each move meanwhile
                // would move a value out and back, reordering the list.
                self.wait_while_paused(deadline).await?;
                Ok(None)
            }
        }
    }

    /// One move and claim; with `wait`, waits for a value (until `deadline`)
    /// when none is ready. In three steps: `move_to_staging`, `claim` (what
    /// its reply says is [`Claimed`]), and `deliver` when the claim took the
    /// value.
    async fn move_and_claim(&self, deadline: Option<Instant>, wait: bool) -> Result<Ready<T>> {
        if self.handle.core.is_shutting_down() {
            return Err(Error::Shutdown);
        }
        self.handle.core.seen(&self.handle.keys);
        if self.handle.limited(deadline).await {
            return self.claim_limited(deadline, wait).await;
        }
        if self.handle.marked(deadline).await {
            return self.claim_with_priorities(deadline, wait).await;
        }
        let Some(value) = self.move_to_staging(deadline, wait).await? else {
            return Ok(Ready::Nothing);
        };
        self.claim_moved(value).await
    }

    /// [`move_and_claim`](Self::move_and_claim) on a queue with priority
    /// values: a batch claim of one (`lua/claim_batch.lua` takes the
    /// highest level first); when none is ready, with `wait`, a move and
    /// claim from the list that waits a round of at most
    /// [`PRIORITY_ROUND`], so that a priority value offered meanwhile (in a
    /// set no blocking read can watch beside the list) is seen soon.
    async fn claim_with_priorities(&self, deadline: Option<Instant>, wait: bool) -> Result<Ready<T>> {
        loop {
            match self.take_ready_batch(1).await? {
                Batch::Paused => return Ok(Ready::Paused),
                // A limit set since the last look: the next take sees it.
                Batch::Full => return Ok(Ready::Full),
                Batch::Taken(mut taken) => match taken.pop() {
                    Some(Ok(delivery)) => return Ok(Ready::Taken(delivery)),
                    Some(Err(error)) => return Err(Error::Decode(error)),
                    // What it popped went to the dead letters (too many
                    // deliveries, or expired): the next value may be ready.
                    None if deadline.is_none_or(|at| Instant::now() < at) => continue,
                    None => return Ok(Ready::Nothing),
                },
                Batch::Nothing => break,
            }
        }
        if !wait {
            return Ok(Ready::Nothing);
        }
        let round_end = Instant::now() + PRIORITY_ROUND;
        let until = deadline.map_or(round_end, |at| at.min(round_end));
        let Some(value) = self.move_to_staging(Some(until), true).await? else {
            return Ok(Ready::Nothing);
        };
        self.claim_moved(value).await
    }

    /// [`move_and_claim`](Self::move_and_claim) on a queue with a
    /// concurrency limit: a batch claim of one, which looks for room before
    /// it pops anything, so that no value leaves the list for a claim that
    /// would refuse it. With `wait`, it waits for room (asking again after
    /// [`FULL_WAIT`], doubling, at most [`FULL_WAIT_MOST`]) or for a value
    /// (without moving one, in rounds of at most [`PRIORITY_ROUND`]: the
    /// limit may go meanwhile, and priority values arrive in sets the
    /// list's wait does not see).
    async fn claim_limited(&self, deadline: Option<Instant>, wait: bool) -> Result<Ready<T>> {
        let mut full_wait = FULL_WAIT;
        let past = |deadline: Option<Instant>| deadline.is_some_and(|at| Instant::now() >= at);
        loop {
            match self.take_ready_batch(1).await? {
                Batch::Paused => return Ok(Ready::Paused),
                Batch::Taken(mut taken) => match taken.pop() {
                    Some(Ok(delivery)) => return Ok(Ready::Taken(delivery)),
                    Some(Err(error)) => return Err(Error::Decode(error)),
                    // What it popped went to the dead letters: read on.
                    None if !past(deadline) => continue,
                    None => return Ok(Ready::Nothing),
                },
                Batch::Full if wait && !past(deadline) => {
                    let until = Instant::now() + full_wait;
                    tokio::select! {
                        _ = tokio::time::sleep_until(deadline.map_or(until, |at| at.min(until))) => {}
                        _ = self.handle.core.shutdown_begun() => return Err(Error::Shutdown),
                    }
                    full_wait = (full_wait * 2).min(FULL_WAIT_MOST);
                }
                Batch::Nothing if wait && !past(deadline) => {
                    let round_end = Instant::now() + PRIORITY_ROUND;
                    self.wait_ready(Some(deadline.map_or(round_end, |at| at.min(round_end))))
                        .await?;
                }
                Batch::Full => return Ok(Ready::Full),
                Batch::Nothing => return Ok(Ready::Nothing),
            }
            if !self.handle.limited(deadline).await {
                return Ok(Ready::Nothing);
            }
        }
    }

    /// Waits until the queue holds a value or `until`, taking none:
    /// `BLMOVE N N LEFT LEFT` moves the head to the head (the list as it
    /// was, for every consumer, Java included; a blocked consumer is still
    /// served). On a queue with priority values, at most a round of
    /// [`PRIORITY_ROUND`]: those arrive in a set the list's wait does not
    /// see.
    pub(crate) async fn wait_ready(&self, until: Option<Instant>) -> Result<()> {
        let dest = self.handle.keys.destination();
        let args = |secs: f64| {
            let mut args: Vec<Value> = [dest, dest, "LEFT", "LEFT"].into_iter().map(Value::from).collect();
            args.push(Value::from(secs));
            args
        };
        let round_end = Instant::now() + PRIORITY_ROUND;
        let until = match (until, self.has_priorities().await) {
            (until, false) => until,
            (Some(at), true) => Some(at.min(round_end)),
            (None, true) => Some(round_end),
        };
        let keep_waiting = || async { !self.has_priorities().await };
        (self.handle.core.blocking())
            .wait_while("BLMOVE", dest, until, args, None, keep_waiting)
            .await?;
        Ok(())
    }

    /// Steps 2 and 3 for a value moved to the staging list.
    async fn claim_moved(&self, value: Bytes) -> Result<Ready<T>> {
        let id = ElementId::random(Format::Modern).to_bytes();
        match self.claim(id, &value).await? {
            Claimed::Taken { count, lateness, job } => self.deliver(id, count, lateness, job, value).await,
            Claimed::Paused => Ok(Ready::Paused),
            Claimed::Full => Ok(Ready::Full),
            Claimed::Gone | Claimed::DeadLettered | Claimed::Failed => Ok(Ready::Nothing),
        }
    }

    /// Step 1: a value moved to the staging list: one ready now (`LMOVE`),
    /// else, with `wait`, the next one to come (`BLMOVE` on a dedicated
    /// connection, until `deadline`). `None` when none came.
    async fn move_to_staging(&self, deadline: Option<Instant>, wait: bool) -> Result<Option<Bytes>> {
        // A stalled connection cannot hold a take with a deadline past it.
        if let Some(value) = until(deadline, self.move_ready()).await? {
            return Ok(Some(value));
        }
        if !wait {
            return Ok(None);
        }
        let (dest, staging) = (self.handle.keys.destination(), self.handle.keys.staging());
        let args = |secs: f64| {
            let mut args: Vec<Value> = [dest, staging, "LEFT", "RIGHT"].into_iter().map(Value::from).collect();
            args.push(Value::from(secs));
            args
        };
        // Ends after a round once the queue has priority values: the take
        // then looks at them (`claim_with_priorities`).
        let moved = self
            .handle
            .core
            .blocking()
            .wait_while("BLMOVE", dest, deadline, args, None, || async {
                !self.handle.marked(deadline).await
            })
            .await?;
        moved.map(reply::bytes).transpose()
    }

    /// Step 2: claims `value` as delivery `id` (`lua/claim.lua`).
    ///
    /// One attempt: a claim applied twice would leave a delivery nobody
    /// holds. If the reply is lost, the delivery is found by its id and goes
    /// back to the head, uncounted (`lost_claim`); so it does if the caller
    /// stops waiting (a worker stopping): the claim ends in the background
    /// and releases its delivery.
    async fn claim(&self, id: [u8; 8], value: &Bytes) -> Result<Claimed> {
        let keys = SCRIPTS.claim.keys(&self.handle.keys).build();
        let args = vec![
            Value::Bytes(value.clone()),
            Value::Bytes(Bytes::copy_from_slice(&id)),
            Value::from(crate::wire::time::saturating_ms(self.settings.visibility)),
            Value::from(i64::from(self.settings.max_deliveries)),
            Value::from(CLAIM_SCAN),
            Value::from(&*self.consumer),
        ];
        let conn = self.handle.core.conn()?.clone();
        let command: Command<Result<Value>> = {
            let (core, queue, settings, value) = (
                self.handle.core.clone(),
                self.handle.keys.clone(),
                self.settings,
                value.clone(),
            );
            Box::pin(async move {
                // Sent once (`Resend::Once`): a lost reply is an unknown outcome.
                let reply = SCRIPTS.claim.run(&conn, queue.destination(), keys, args).await;
                let reply = reply.map_err(Error::from);
                if let Err(Error::OutcomeUnknown { .. }) = reply {
                    // The one hand-off of a lost claim, whether its caller
                    // still waits or not: looked for by its id. (Not run,
                    // its value waits in the staging list for the reaper.)
                    super::lost_claim::recover_later(&core, &queue, settings, id, value);
                }
                reply
            })
        };
        let undo = {
            let (core, keys, settings, value) = (
                self.handle.core.clone(),
                self.handle.keys.clone(),
                self.settings,
                value.clone(),
            );
            move |reply: Result<Value>| async move {
                let Some(count) = reply.and_then(Claim::parse).ok().and_then(|claim| claim.taken()) else {
                    return;
                };
                let member = crate::queue::reliable::delivery::member(id, count, 0, &value);
                let mut lease = DeliveryLease::new(core, &keys, settings, member);
                if let Err(error) = lease.release(Release::Unhandled).await {
                    tracing::warn!(queue = keys.destination(), %error, "could not give back a value claimed for a take that stopped waiting; its visibility timeout will");
                }
            }
        };
        match detach(command, undo, self.handle.core.settling())
            .until_answered()
            .reply()
            .await
        {
            Ok(reply) => self.claimed(Claim::parse(reply)?),
            // No answer from Redis, or not now: the value is not lost
            // (see above), and the take goes on.
            Err(error) if error.is_transient() => {
                tracing::warn!(queue = self.name(), %error, "claim failed; its value goes back to the queue");
                Ok(Claimed::Failed)
            }
            Err(error) => {
                // Refused (a key of the wrong type, a broken events switch):
                // the script checks all that before its first write, so the
                // value is still in the staging list. It goes back to the
                // head before the error is told, or every failed take
                // (a worker retrying) would move one more value out of the
                // queue, out of every consumer's sight, Java's too.
                self.give_back_moved(value).await;
                Err(error)
            }
        }
    }

    /// Puts a value moved to the staging list back at the head of the
    /// queue (`undo_move.lua`: the list as it was). If that fails too, the
    /// value waits in the staging list, where the reaper finds it.
    async fn give_back_moved(&self, value: &Bytes) {
        let (dest, staging) = (self.handle.keys.destination(), self.handle.keys.staging());
        let Ok(conn) = self.handle.core.conn_for(dest) else {
            return;
        };
        undo_move(conn, dest, staging, value.clone(), "LEFT", "RIGHT").await;
    }

    /// What the claim's reply says; counts how late a delivered value was
    /// taken, and a value dead-lettered.
    fn claimed(&self, claim: Claim) -> Result<Claimed> {
        let lateness = match (claim.due.as_deref().and_then(crate::wire::time::parse_score), claim.now) {
            (Some(due), Some(now)) => {
                let ms = (now - due).max(0);
                crate::telemetry::delivered(self.name(), ms);
                Some(Duration::from_millis(ms as u64))
            }
            _ => None,
        };
        match claim.status.as_str() {
            "ok" => {
                let count = claim.taken().expect("the status is \"ok\"");
                Ok(Claimed::Taken {
                    count,
                    lateness,
                    job: claim.job,
                })
            }
            // A cancelled job's value, dropped: the caller takes again.
            "gone" | "cancelled" => Ok(Claimed::Gone),
            "paused" => Ok(Claimed::Paused),
            "full" => {
                self.handle.limit_room(Some(0));
                Ok(Claimed::Full)
            }
            "dead" => {
                self.handle.core.count_dead_lettered(1);
                crate::telemetry::dead_lettered(self.name(), DeadLettered::Deliveries);
                tracing::warn!(
                    queue = self.name(),
                    deliveries = claim.count,
                    dead_letter = self.handle.keys.dead_letter(),
                    "value delivered too often without an ack; moved to the dead-letter list"
                );
                Ok(Claimed::DeadLettered)
            }
            other => Err(Error::Protocol(format!("claim answered {other:?}"))),
        }
    }

    /// Step 3: the claimed delivery, its value decoded. A value that cannot
    /// be decoded is released at once, where it counts towards the
    /// dead-letter limit (or dead-lettered now if the consumer asked for
    /// that), and reported as [`Error::Decode`].
    async fn deliver(
        &self,
        id: [u8; 8],
        count: u32,
        lateness: Option<Duration>,
        job: Option<String>,
        value: Bytes,
    ) -> Result<Ready<T>> {
        let member = crate::queue::reliable::delivery::member(id, count, 0, &value);
        match codec::decode(&*self.handle.codec, value) {
            Ok(decoded) => {
                let delivery =
                    Delivery::new(self, member, count, lateness, decoded, tokio::time::Instant::now()).with_job(job);
                // Feature `opentelemetry`: the context offered with the value.
                #[cfg(feature = "opentelemetry")]
                let delivery = self.adopt_trace(delivery).await;
                Ok(Ready::Taken(delivery))
            }
            Err(error) => Err(Error::Decode(self.give_back_undecodable(member, error).await)),
        }
    }

    /// Releases the delivery `member` whose value could not be decoded: to
    /// the dead letters if the consumer asked for that, else to the tail.
    pub(super) async fn give_back_undecodable(&self, member: Bytes, error: DecodeError) -> DecodeError {
        let to = if self.settings.dead_letter_undecodable {
            crate::telemetry::dead_lettered(self.name(), DeadLettered::Undecodable);
            Release::DeadLetter(format!("undecodable: {error}"))
        } else {
            Release::Tail
        };
        let mut lease = DeliveryLease::new(self.handle.core.clone(), &self.handle.keys, self.settings, member);
        let restored = lease.release(to).await.unwrap_or(false);
        error.with_restored(restored)
    }
}

/// What a claim came to.
enum Claimed {
    /// A delivery: its count, how late its value was taken when known, and
    /// its job's id when it has one.
    Taken {
        count: u32,
        lateness: Option<Duration>,
        job: Option<String>,
    },
    /// No copy of the value left in the staging list: the reaper had
    /// returned it to the queue.
    Gone,
    /// The queue is paused: the value went back to its head.
    Paused,
    /// The concurrency limit had no room (set since this client last
    /// looked): the value went back to its head.
    Full,
    /// Delivered too often without an ack: moved to the dead-letter list.
    DeadLettered,
    /// The claim failed through the connection (logged): if it ran, its
    /// delivery goes back to the head (`lost_claim`), else its value waits
    /// in the staging list for the reaper.
    Failed,
}

/// The claim script's reply: `[status, delivery count, due score, now, job id]`.
struct Claim {
    status: String,
    count: i64,
    due: Option<String>,
    now: Option<i64>,
    job: Option<String>,
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
            job: reply.next().map(reply::opt_text).transpose()?.flatten(),
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
        let undo = {
            let (conn, keys) = (conn.clone(), self.handle.keys.clone());
            move |reply: std::result::Result<Option<Bytes>, fred::error::Error>| async move {
                if let Ok(Some(value)) = reply {
                    undo_move(&conn, keys.destination(), keys.staging(), value, "LEFT", "RIGHT").await;
                }
            }
        };
        let moved = detach(command, undo, self.handle.core.settling())
            .until_answered()
            .reply()
            .await;
        match moved.on_key(dest) {
            Ok(moved) => Ok(moved),
            Err(error) => {
                if !error.is_transient() {
                    return Err(error);
                }
                // TRYAGAIN (a Cluster slot moving) is an answer: nothing moved.
                if !error.never_sent() && !error.slot_moving() {
                    tracing::warn!(queue = dest, %error, "the reply of a move was lost; if the value moved, the reaper returns it");
                }
                Ok(None)
            }
        }
    }

    /// Waits until the queue is resumed, looking every [`PAUSED_RECHECK`]
    /// (ends early at shutdown or at `deadline`).
    pub(crate) async fn wait_while_paused(&self, deadline: Option<Instant>) -> Result<()> {
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
            if !self.handle.takes_held().await? {
                return Ok(());
            }
        }
    }
}
