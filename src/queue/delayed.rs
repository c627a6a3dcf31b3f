//! `DelayedQueue<T>`: Redisson's `RDelayedQueue`, on the same keys and bytes.

use std::borrow::Borrow;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use fred::interfaces::{ClientLike, KeysInterface, ListInterface};
use fred::types::{Key, Value};

use crate::connection::detached::{detach, give_back_with};
use crate::connection::reply;
use crate::connection::request::{self, Request};
use crate::connection::script::{Resend, Script, SCRIPTS};
use crate::error::{Error, Result};
use crate::queue::status::QueueStatus;
use crate::queue::Core;
use crate::transfer::Clock;
use crate::transfer::{run_transfer, Registration};
use crate::wire::codec::{self, Codec};
use crate::wire::format::{self, ElementId, Format};
use crate::wire::keys::QueueKeys;
use crate::wire::time;
use crate::BlockingQueue;

/// Offers within one `offer_all` call sent per script run.
const OFFER_CHUNK: usize = 1_000;

/// Most values one `poll_many`, `remove_pending` or `drain` call removes: one
/// script run, whose cost must stay bounded (Redis is shared). The scripts
/// also stop near 1 MiB of payload (`DELAYQ_BATCH_BYTES` in
/// `lua/lib/element.lua`).
pub(crate) const MAX_BATCH: usize = 10_000;

/// When an offered element is due.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Due {
    /// At this time (ms since the epoch, the producer's clock, as Java).
    At(i64),
    /// This many ms after "now" on the Redis server's clock ([`Clock::Server`]).
    After(i64),
}

/// A queue of values that each become available at their due time, shared with
/// Java services using Redisson's `RDelayedQueue` on the same name.
///
/// Offers go into Redisson's timeout set and pending list; at each value's due
/// time, a transfer (run by this client's scheduler, by other delayq clients,
/// and by every Java process holding the queue) moves it to the destination
/// list, where a [`BlockingQueue`] takes it.
///
/// # Guarantees
///
/// - Every operation is one atomic script or command, like its Java
///   counterpart, and reads both element formats, mixed.
/// - A value is moved to the destination exactly once, never before its due
///   time (as the transferring host's clock sees it). Values that fall due
///   while transfers keep up move in due-time order (ties in Redis's order
///   of their packed bytes, as with Redisson). A backlog — 64 or more overdue
///   elements scattered deep inside a long pending list, after an outage —
///   is swept in offer order instead: every one of them is late already, and
///   reading the list once beats one scan of it per element.
/// - An offer is sent with a single attempt: if the connection fails while it
///   is in flight the call fails and the value may or may not be queued, but
///   it is never queued twice. Operations that remove values (`poll`,
///   `poll_many`, `remove`, ...) may be resent safely: a resend returns the
///   first run's reply, and if the reply is lost for good the call fails and
///   what it removed goes back.
/// - Elements that no format can unpack are moved to a quarantine list
///   (`delayq_quarantine:{name}`) by operations that remove elements, so they
///   never stall the queue; read-only operations skip them and log a warning.
///
/// While any handle of a queue is alive, the [`Client`] it came from runs the
/// transfer for it; drop every handle to stop. A handle made with
/// [`Client::delayed_queue_without_transfer`] never transfers (for tools that
/// only look).
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::{Client, JsonCodec};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Order { id: String, amount: i64 }
///
/// # async fn demo() -> delayq::Result<()> {
/// let client = Client::connect("redis://127.0.0.1:6379").await?;
/// let queue = client.delayed_queue("orders", JsonCodec::<Order>::new())?;
/// queue.offer(&Order { id: "o-1".into(), amount: 1234 }, Duration::from_secs(600)).await?;
/// assert_eq!(queue.len().await?, 1);
/// # Ok(()) }
/// ```
pub struct DelayedQueue<T> {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
    codec: Arc<dyn Codec<T>>,
    format: Format,
    _registration: Option<Arc<Registration>>,
}

impl<T> Clone for DelayedQueue<T> {
    fn clone(&self) -> Self {
        DelayedQueue {
            core: self.core.clone(),
            keys: self.keys.clone(),
            codec: self.codec.clone(),
            format: self.format,
            _registration: self._registration.clone(),
        }
    }
}

impl<T: 'static> std::fmt::Debug for DelayedQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelayedQueue")
            .field("name", &self.keys.destination())
            .field("codec", &self.codec.name())
            .field("format", &self.format)
            .finish()
    }
}

/// What [`DelayedQueue::migrate`] did.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let report = queue.migrate(delayq::Format::Modern, 500).await?;
/// println!("{} rewritten, {} were modern already", report.converted, report.already);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MigrationReport {
    /// Elements rewritten in the target format, over all passes.
    pub converted: u64,
    /// Elements that were already in the target format (first pass).
    pub already: u64,
    /// Elements neither format can unpack, left as they are (last pass).
    pub malformed: u64,
    /// Elements of the pending list missing from the timeout set, left as they
    /// are (last pass): no transfer would ever deliver them.
    pub not_scheduled: u64,
    /// Passes over the pending list.
    pub passes: u32,
}

/// What one [`DelayedQueue::transfer_now`] did.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let report = queue.transfer_now().await?;
/// println!("moved {}, next due {:?}", report.moved, report.next_due);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransferReport {
    /// Elements moved to the destination list.
    pub moved: u64,
    /// Malformed elements moved to the quarantine list.
    pub quarantined: u64,
    /// Due time of the earliest element still pending.
    pub next_due: Option<SystemTime>,
}

impl<T: 'static> DelayedQueue<T> {
    pub(crate) fn new(core: Arc<Core>, name: &str, codec: Arc<dyn Codec<T>>, transfer: bool) -> Result<Self> {
        let keys = Arc::new(QueueKeys::new(name)?);
        let registration = transfer.then(|| core.scheduler.register(keys.clone()));
        Ok(DelayedQueue {
            core,
            keys,
            codec,
            format: Format::default(),
            _registration: registration,
        })
    }

    /// The same queue, writing new elements in `format` (default [`Format::Modern`]).
    /// Reads accept both formats whatever this is set to.
    pub fn with_format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// The format new elements are written in.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The destination queue's name.
    pub fn name(&self) -> &str {
        self.keys.destination()
    }

    /// The Redis key names of this queue.
    pub fn keys(&self) -> &QueueKeys {
        &self.keys
    }

    /// The destination list, as a [`BlockingQueue`] with this queue's codec.
    pub fn destination(&self) -> BlockingQueue<T> {
        BlockingQueue::from_parts(self.core.clone(), self.keys.clone(), self.codec.clone())
    }

    /// Offers `value`, due `delay` from now (as Java's `offer(value, delay,
    /// unit)`: on this host's clock, or the Redis server's under
    /// [`Clock::Server`]).
    ///
    /// Fails with [`Error::InvalidDelay`] when the due time would pass the
    /// largest exact score (2^53 - 1 ms since the epoch), and with
    /// [`Error::PayloadTooLarge`] over the client's payload limit.
    pub async fn offer(&self, value: &T, delay: Duration) -> Result<()> {
        let due = self.due_after(delay)?;
        self.offer_encoded(vec![(due, self.encode(value)?)]).await
    }

    /// Offers `value`, due at `at`. A time in the past is a negative delay and
    /// fails with [`Error::InvalidDelay`], as a negative delay does in Java.
    pub async fn offer_at(&self, value: &T, at: SystemTime) -> Result<()> {
        let due = Due::At(time::due_at(time::now_ms(), at)?);
        self.offer_encoded(vec![(due, self.encode(value)?)]).await
    }

    /// Offers many values, each with its own delay, in one round trip per
    /// 1,000 values. Each value is added atomically with the others of its
    /// round trip; all delays and payloads are checked before anything is sent.
    pub async fn offer_all<I, B>(&self, items: I) -> Result<()>
    where
        I: IntoIterator<Item = (B, Duration)>,
        B: Borrow<T>,
    {
        let mut encoded = Vec::new();
        for (value, delay) in items {
            encoded.push((self.due_after(delay)?, self.encode(value.borrow())?));
        }
        self.offer_encoded(encoded).await
    }

    /// The due time `delay` from now, on the clock the client is set to.
    fn due_after(&self, delay: Duration) -> Result<Due> {
        // Checked on this host's clock whatever the setting: it only guards the range.
        let local = time::due_after(time::now_ms(), delay)?;
        Ok(match self.core.transfer.clock {
            Clock::Local => Due::At(local),
            Clock::Server => Due::After(delay.as_millis() as i64),
        })
    }

    fn encode(&self, value: &T) -> Result<Bytes> {
        let payload = codec::encode(&*self.codec, value)?;
        self.core.check_payload(&payload)?;
        Ok(payload)
    }

    /// Offers encoded payloads.
    pub(crate) async fn offer_encoded(&self, items: Vec<(Due, Bytes)>) -> Result<()> {
        for chunk in items.chunks(OFFER_CHUNK) {
            let mut pending: Vec<(Due, &Bytes)> = chunk.iter().map(|(due, payload)| (*due, payload)).collect();
            // A collision of random ids is astronomically rare; re-pack and resend just those.
            for _ in 0..3 {
                if pending.is_empty() {
                    break;
                }
                let mut args = Vec::with_capacity(pending.len() * 2);
                for (due, payload) in &pending {
                    args.push(match due {
                        Due::At(ms) => Value::from(*ms),
                        Due::After(ms) => Value::from(format!("+{ms}")),
                    });
                    args.push(Value::Bytes(format::pack(self.format, payload)));
                }
                let collided = self.run_offer(args).await?;
                pending = collided
                    .into_iter()
                    .filter_map(|i| pending.get(i.wrapping_sub(1)).copied())
                    .collect();
            }
            if !pending.is_empty() {
                return Err(Error::Protocol("offer kept colliding with pending elements".into()));
            }
        }
        Ok(())
    }

    async fn run_offer(&self, args: Vec<Value>) -> Result<Vec<usize>> {
        let script = &SCRIPTS.offer;
        // One attempt: a retried offer could be applied twice.
        let conn = self.core.conn()?; // sent once: the script is declared `Resend::Once`
        let keys = vec![
            self.keys.timeout().into(),
            self.keys.pending().into(),
            self.keys.channel().into(),
        ];
        let value = script
            .run(conn, keys, args)
            .await
            .map_err(|e| self.script_error(script, e))?;
        reply::array(value)?
            .iter()
            .map(|v| reply::int(v).map(|i| i as usize))
            .collect()
    }

    /// Number of pending elements (`LLEN` of the pending list, as Java's `size()`).
    pub async fn len(&self) -> Result<usize> {
        let n: i64 = self
            .core
            .conn()?
            .llen(self.keys.pending())
            .await
            .map_err(|e| self.command_error(e))?;
        Ok(n as usize)
    }

    /// Whether nothing is pending.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// Whether a pending element's payload equals `value` encoded.
    pub async fn contains(&self, value: &T) -> Result<bool> {
        let payload = codec::encode(&*self.codec, value)?;
        Ok(self.count_found(vec![payload]).await? == 1)
    }

    /// Whether every value is pending. An empty iterator is trivially contained.
    pub async fn contains_all<I, B>(&self, values: I) -> Result<bool>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let mut payloads = self.encode_all(values)?;
        payloads.sort();
        payloads.dedup();
        if payloads.is_empty() {
            return Ok(true);
        }
        let wanted = payloads.len();
        Ok(self.count_found(payloads).await? == wanted)
    }

    async fn count_found(&self, payloads: Vec<Bytes>) -> Result<usize> {
        let value = self
            .run(
                &SCRIPTS.contains,
                vec![self.keys.pending().into()],
                payloads.into_iter().map(Value::Bytes).collect(),
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Removes the first pending element (in offer order) whose payload equals
    /// `value`; returns whether one was removed. It will not be delivered.
    pub async fn remove(&self, value: &T) -> Result<bool> {
        let payload = codec::encode(&*self.codec, value)?;
        Ok(self.remove_by("first", vec![payload]).await? == 1)
    }

    /// Removes every pending element whose payload equals one of `values`;
    /// returns how many were removed.
    pub async fn remove_all<I, B>(&self, values: I) -> Result<usize>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let payloads = self.encode_all(values)?;
        if payloads.is_empty() {
            return Ok(0);
        }
        self.remove_by("all", payloads).await
    }

    /// Removes every pending element whose payload is not one of `values`
    /// (malformed elements are kept); returns how many were removed.
    pub async fn retain_all<I, B>(&self, values: I) -> Result<usize>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let payloads = self.encode_all(values)?;
        self.remove_by("retain", payloads).await
    }

    async fn remove_by(&self, mode: &'static str, payloads: Vec<Bytes>) -> Result<usize> {
        let mut args = Vec::with_capacity(payloads.len() + 1);
        args.push(Value::from(mode));
        args.extend(payloads.into_iter().map(Value::Bytes));
        let value = self
            .request(
                &SCRIPTS.remove,
                vec![self.keys.pending().into(), self.keys.timeout().into()],
                args,
            )
            .await?;
        Ok(reply::int(&value)? as usize)
    }

    /// Every pending value, in offer order (Java's `readAll()`).
    pub async fn read_all(&self) -> Result<Vec<T>> {
        let value = self
            .run(&SCRIPTS.read_all, vec![self.keys.pending().into()], vec![])
            .await?;
        let [payloads, malformed] = reply::tuple::<2>(value)?;
        self.warn_malformed(reply::int(&malformed)?, "read_all");
        Ok(codec::decode_all(&*self.codec, reply::bytes_array(payloads)?)?)
    }

    /// The first pending value in offer order, without removing it (Java's `peek()`).
    pub async fn peek(&self) -> Result<Option<T>> {
        let value = self
            .run(&SCRIPTS.peek, vec![self.keys.pending().into()], vec![])
            .await?;
        let [payload, malformed] = reply::tuple::<2>(value)?;
        self.warn_malformed(reply::int(&malformed)?, "peek");
        match reply::opt_bytes(payload)? {
            Some(raw) => Ok(Some(codec::decode(&*self.codec, raw)?)),
            None => Ok(None),
        }
    }

    /// Removes and returns the first pending value in offer order, before it
    /// is due; it will not be delivered (Java's `poll()`).
    pub async fn poll(&self) -> Result<Option<T>> {
        Ok(self.poll_many(1).await?.pop())
    }

    /// Removes and returns up to `limit` pending values in offer order (Java's
    /// `poll(limit)`). If one cannot be decoded, all of them go back where
    /// they were, scores included, and the error holds their raw bytes.
    ///
    /// Cancel safe (and so is [`poll`](Self::poll)): values removed for a
    /// call dropped before it returns go back where they were, scores included.
    pub async fn poll_many(&self, limit: usize) -> Result<Vec<T>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        // Bounded: one script moves at most this many (Redis is shared).
        let limit = limit.min(MAX_BATCH);
        let keys = vec![
            self.keys.pending().into(),
            self.keys.timeout().into(),
            self.keys.quarantine().into(),
            self.keys.channel().into(),
        ];
        // Removed values go back, scores included, if the call is dropped
        // before it returns (and, through the request, if its reply is lost).
        let conn = self.core.conn()?.clone();
        let restore_keys = self.restore_keys();
        let give_back = give_back_with(
            (
                conn.clone(),
                restore_keys.clone(),
                self.name().to_owned(),
                self.core.settling().clone(),
            ),
            |(conn, keys, name, settling), reply: std::result::Result<Value, fred::error::Error>| async move {
                let Ok(Ok([elements, scores, _])) = reply.map(reply::tuple::<3>) else {
                    return;
                };
                let args = reply::bytes_array(elements).and_then(|elements| restore_args(elements, scores));
                if let Ok(args) = args {
                    if !args.is_empty() {
                        let restored = Request::new(&name)
                            .give_back(&conn, &settling, &SCRIPTS.restore, keys, args)
                            .await;
                        if let Err(error) = restored {
                            tracing::error!(%error, "could not give back values polled for a dropped call");
                        }
                    }
                }
            },
        );
        let args = vec![Value::from(limit as i64)];
        let (name, settling) = (self.name().to_owned(), self.core.settling().clone());
        let poll = async move {
            Request::new(&name)
                .remove(&conn, &settling, &SCRIPTS.poll, keys, args)
                .await
        };
        let value = detach(poll, give_back, self.core.settling())
            .reply()
            .await
            .map_err(|e| self.script_error(&SCRIPTS.poll, e))?;
        let [elements, scores, quarantined] = reply::tuple::<3>(value)?;
        self.note_quarantined(reply::int(&quarantined)?, "poll");
        let elements = reply::bytes_array(elements)?;
        let payloads = elements
            .iter()
            .map(|e| format::unpack(e).map(|element| Bytes::copy_from_slice(element.payload)))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|_| Error::Protocol("poll returned an element it could not unpack".into()))?;
        match codec::decode_batch(&*self.codec, payloads) {
            Ok(values) => Ok(values),
            Err(error) => {
                let args = restore_args(elements, scores)?;
                let restored = Request::new(self.name())
                    .give_back(
                        self.core.conn()?,
                        self.core.settling(),
                        &SCRIPTS.restore,
                        self.restore_keys(),
                        args,
                    )
                    .await
                    .is_ok();
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// Keys of `lua/restore.lua` (without its request key).
    fn restore_keys(&self) -> Vec<Key> {
        vec![
            self.keys.pending().into(),
            self.keys.timeout().into(),
            self.keys.channel().into(),
        ]
    }

    /// Removes the last pending value (in offer order) and pushes it to the
    /// head of the list `target`, atomically (Java's `pollLastAndOfferFirstTo`).
    /// On Redis Cluster `target` must hash to the same slot as this queue.
    pub async fn poll_last_and_offer_first_to(&self, target: &str) -> Result<Option<T>> {
        let keys = vec![
            self.keys.pending().into(),
            self.keys.timeout().into(),
            self.keys.quarantine().into(),
            target.into(),
        ];
        let value = self
            .request(&SCRIPTS.poll_last_and_offer_first_to, keys, vec![])
            .await?;
        let [payload, quarantined] = reply::tuple::<2>(value)?;
        self.note_quarantined(reply::int(&quarantined)?, "poll_last_and_offer_first_to");
        match reply::opt_bytes(payload)? {
            Some(raw) => Ok(Some(codec::decode(&*self.codec, raw)?)),
            None => Ok(None),
        }
    }

    /// Deletes every pending element (the timeout set and the pending list, as
    /// Java's `clear()`/`delete()`); returns whether there was anything. The
    /// destination list is not touched.
    pub async fn clear(&self) -> Result<bool> {
        let n = self
            .core
            .conn()?
            .with_options(&Resend::Once.options())
            .del::<i64, _>(vec![self.keys.timeout(), self.keys.pending()])
            .await
            .map_err(|e| self.command_error(e))?;
        Ok(n > 0)
    }

    /// Makes the pending elements expire after `ttl` (both keys, as Java's
    /// `expire`); returns whether there was anything to expire.
    pub async fn expire(&self, ttl: Duration) -> Result<bool> {
        let at = time::due_after(time::now_ms(), ttl)?;
        self.run_expire(vec![Value::from("at"), Value::from(at)]).await
    }

    /// Makes the pending elements expire at `at`.
    pub async fn expire_at(&self, at: SystemTime) -> Result<bool> {
        self.run_expire(vec![Value::from("at"), Value::from(time::to_ms(at))])
            .await
    }

    /// Removes any expiry set by [`expire`](Self::expire); returns whether one was removed.
    pub async fn clear_expire(&self) -> Result<bool> {
        self.run_expire(vec![Value::from("persist")]).await
    }

    async fn run_expire(&self, args: Vec<Value>) -> Result<bool> {
        let value = self
            .run(
                &SCRIPTS.expire,
                vec![self.keys.pending().into(), self.keys.timeout().into()],
                args,
            )
            .await?;
        Ok(reply::int(&value)? == 1)
    }

    /// Rewrites every pending element in `format`, keeping its score and its
    /// place in the pending list, `batch` elements per atomic script.
    ///
    /// For a fleet moving across Redisson 3.21.1 (which changed the element
    /// layout and stalls older or newer Java transfers on the other layout):
    /// after the Java side is upgraded, migrate the queue to the format it
    /// reads. Elements offered meanwhile in the old format are picked up by
    /// further passes; it returns when a whole pass found nothing to convert.
    pub async fn migrate(&self, format: Format, batch: usize) -> Result<MigrationReport> {
        let batch = batch.clamp(1, 10_000);
        let mut report = MigrationReport::default();
        loop {
            let mut pass = MigrationReport {
                passes: 1,
                ..MigrationReport::default()
            };
            let mut start = 0i64;
            loop {
                let mut args = vec![
                    Value::from(format.as_str()),
                    Value::from(start),
                    Value::from(batch as i64),
                ];
                args.extend(
                    (0..batch).map(|_| Value::Bytes(Bytes::copy_from_slice(&ElementId::random(format).to_bytes()))),
                );
                let keys = vec![self.keys.pending().into(), self.keys.timeout().into()];
                let value = self.run(&SCRIPTS.migrate, keys, args).await?;
                let [next, converted, already, malformed, orphans] = reply::tuple::<5>(value)?;
                pass.converted += reply::int(&converted)? as u64;
                pass.already += reply::int(&already)? as u64;
                pass.malformed += reply::int(&malformed)? as u64;
                pass.not_scheduled += reply::int(&orphans)? as u64;
                let next = reply::int(&next)?;
                if next == start {
                    break;
                }
                start = next;
            }
            report = MigrationReport {
                converted: report.converted + pass.converted,
                already: if report.passes == 0 {
                    pass.already
                } else {
                    report.already
                },
                passes: report.passes + 1,
                ..pass
            };
            // Done when a pass converted nothing; elements offered in the old
            // format meanwhile make more passes, but never more than ten.
            if pass.converted == 0 || report.passes >= 10 {
                return Ok(report);
            }
        }
    }

    /// Runs the transfer once, now, without waiting for the scheduler: moves
    /// up to one batch of due elements to the destination.
    pub async fn transfer_now(&self) -> Result<TransferReport> {
        let settings = &self.core.transfer;
        let outcome = run_transfer(self.core.conn()?, &self.keys, settings.clock, settings.batch, 0).await?;
        if outcome.quarantined > 0 {
            self.note_quarantined(outcome.quarantined as i64, "transfer");
        }
        Ok(TransferReport {
            moved: outcome.moved,
            quarantined: outcome.quarantined,
            next_due: outcome.head_due_ms.map(time::from_ms),
        })
    }

    /// How many elements the queue holds where (pending, ready, in flight,
    /// dead letters, quarantined) and when the next one is due, in one
    /// atomic read. Fails with [`Error::WrongType`] when a key of the name
    /// holds something else than a queue's.
    pub async fn status(&self) -> Result<QueueStatus> {
        let keys = vec![
            self.keys.timeout().into(),
            self.keys.pending().into(),
            self.keys.destination().into(),
            self.keys.inflight().into(),
            self.keys.dead_letter().into(),
            self.keys.quarantine().into(),
        ];
        let value = self.run(&SCRIPTS.status, keys, vec![]).await?;
        let [pending, ready, in_flight, dead, quarantined, head, exists] = reply::tuple::<7>(value)?;
        let next_due = reply::opt_score(head)?.map(time::from_ms);
        Ok(QueueStatus {
            pending: reply::int(&pending)? as u64,
            ready: reply::int(&ready)? as u64,
            in_flight: reply::int(&in_flight)? as u64,
            dead_letters: reply::int(&dead)? as u64,
            quarantined: reply::int(&quarantined)? as u64,
            next_due,
            exists: reply::int(&exists)? > 0,
        })
    }

    /// Removes up to `max` pending elements, first offered first, in one
    /// atomic script, and returns how many it removed and how many are still
    /// pending. Empties a large queue in steps that never block Redis for
    /// long, where [`clear`](Self::clear) deletes everything at once. At most
    /// 10,000 per call; `0` removes nothing.
    pub async fn remove_pending(&self, max: usize) -> Result<(u64, u64)> {
        if max == 0 {
            return Ok((0, self.len().await? as u64));
        }
        let keys = vec![
            self.keys.timeout().into(),
            self.keys.pending().into(),
            self.keys.channel().into(),
        ];
        let args = vec![Value::from(max.min(MAX_BATCH) as i64)];
        let script = &SCRIPTS.remove_pending;
        let value = Request::new(self.name())
            .remove(self.core.conn()?, self.core.settling(), script, keys, args)
            .await
            .map_err(|e| self.script_error(script, e))?;
        let [removed, left] = reply::tuple::<2>(value)?;
        Ok((reply::int(&removed)? as u64, reply::int(&left)? as u64))
    }

    fn encode_all<I, B>(&self, values: I) -> Result<Vec<Bytes>>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        values
            .into_iter()
            .map(|v| codec::encode(&*self.codec, v.borrow()))
            .collect()
    }

    async fn run(&self, script: &'static Script, keys: Vec<fred::types::Key>, args: Vec<Value>) -> Result<Value> {
        script
            .run(self.core.conn()?, keys, args)
            .await
            .map_err(|e| self.script_error(script, e))
    }

    /// Runs a script that removes values by value or moves them as a
    /// [`Request`]: fred's resend of it changes nothing, and a call whose
    /// reply is lost for good fails with [`Error::OutcomeUnknown`].
    async fn request(&self, script: &'static Script, keys: Vec<Key>, args: Vec<Value>) -> Result<Value> {
        Request::new(self.name())
            .apply(self.core.conn()?, self.core.settling(), script, keys, args, self.name())
            .await
    }

    fn script_error(&self, script: &'static Script, error: fred::error::Error) -> Error {
        match script.resend {
            Resend::Once => request::script_error(script, self.keys.destination(), error),
            Resend::Safe => Error::from_script(error, script.name, self.keys.destination()),
        }
    }

    fn command_error(&self, error: fred::error::Error) -> Error {
        Error::from_command(error, self.keys.destination())
    }

    fn warn_malformed(&self, count: i64, operation: &str) {
        if count > 0 {
            tracing::warn!(
                queue = self.name(),
                count,
                operation,
                "skipped malformed pending elements (neither Bc0Lc0 nor dLc0)"
            );
        }
    }

    fn note_quarantined(&self, count: i64, operation: &str) {
        if count > 0 {
            crate::transfer::stats::Stats::add(&self.core.scheduler.stats.quarantined, count as u64);
            tracing::warn!(
                queue = self.name(),
                count,
                operation,
                quarantine = self.keys.quarantine(),
                "moved malformed elements (neither Bc0Lc0 nor dLc0) to quarantine"
            );
        }
    }
}

/// Arguments of `lua/restore.lua` for elements a poll removed: score and
/// element, pair by pair (an empty score for an element the set lacked).
fn restore_args(elements: Vec<Bytes>, scores: Value) -> Result<Vec<Value>> {
    let scores = reply::array(scores)?;
    let mut args = Vec::with_capacity(elements.len() * 2);
    for (element, score) in elements.into_iter().zip(scores) {
        args.push(match reply::opt_bytes(score)? {
            Some(score) => Value::Bytes(score),
            None => Value::from(""),
        });
        args.push(Value::Bytes(element));
    }
    Ok(args)
}
