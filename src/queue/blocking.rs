//! `BlockingQueue<T>`: the destination list, Redisson's `RBlockingQueue`.

use std::borrow::Borrow;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fred::interfaces::{ClientLike, KeysInterface, ListInterface};
use fred::types::{Key, Value};
use futures_util::stream::{self, Stream};
use tokio::time::Instant;

use crate::connection::detached::{detach, give_back_with, push_back};
use crate::connection::reply;
use crate::connection::request::Request;
use crate::connection::script::{Resend, SCRIPTS};
use crate::error::{Error, Result};
use crate::queue::by_value::ByValue;
use crate::queue::delayed::MAX_BATCH;
use crate::queue::transferring::Transferring;
use crate::queue::Core;
use crate::wire::codec::{self, Codec};
use crate::wire::keys::QueueKeys;

type FredResult<T> = std::result::Result<T, fred::error::Error>;

/// Values one `remove_all` script looks for (each costs a scan of the list).
const REMOVE_CHUNK: usize = 16;

/// Pause of [`BlockingQueue::stream`] after a value it could not decode.
const DECODE_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// The destination list of a delayed queue: where due values arrive, as
/// plain codec-encoded payloads, exactly as Java's `RBlockingQueue` sees them.
///
/// Blocking reads (`take`, `poll` with a timeout, ...) each run on a
/// connection of their own, never on the one other commands share. They wait
/// in a loop of finite server-side timeouts
/// ([`ClientBuilder::blocking_timeout`](crate::ClientBuilder::blocking_timeout)),
/// so a dead connection is noticed and replaced, and they keep waiting across
/// reconnects.
///
/// # Delivery
///
/// `take` and `poll` pop with `BLPOP`, as Java does: if the connection dies
/// after Redis popped a value but before the reply arrived, that value is
/// lost (at most once). A value that does not decode is returned inside
/// [`Error::Decode`] with its raw bytes, never dropped.
///
/// By default a `BlockingQueue` only consumes; a process that holds no
/// [`DelayedQueue`](crate::DelayedQueue) of the queue can still move due
/// elements by calling [`with_transfer`](Self::with_transfer).
///
/// ```no_run
/// use delayq::{Client, StringCodec};
///
/// # async fn demo() -> delayq::Result<()> {
/// let client = Client::connect("redis://127.0.0.1:6379").await?;
/// let orders = client.blocking_queue("orders", StringCodec)?.with_transfer();
/// loop {
///     let order = orders.take().await?;
///     println!("due: {order}");
/// }
/// # }
/// ```
pub struct BlockingQueue<T> {
    core: Arc<Core>,
    keys: Arc<QueueKeys>,
    codec: Arc<dyn Codec<T>>,
    transferring: Transferring,
}

impl<T> Clone for BlockingQueue<T> {
    fn clone(&self) -> Self {
        BlockingQueue {
            core: self.core.clone(),
            keys: self.keys.clone(),
            codec: self.codec.clone(),
            transferring: self.transferring.clone(),
        }
    }
}

impl<T: 'static> std::fmt::Debug for BlockingQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingQueue")
            .field("name", &self.keys.destination())
            .field("codec", &self.codec.name())
            .field("transfers", &self.transferring.is_on())
            .finish()
    }
}

impl<T: 'static> BlockingQueue<T> {
    pub(crate) fn new(core: Arc<Core>, name: &str, codec: Arc<dyn Codec<T>>) -> Result<Self> {
        Ok(Self::from_parts(core, Arc::new(QueueKeys::new(name)?), codec))
    }

    pub(crate) fn from_parts(core: Arc<Core>, keys: Arc<QueueKeys>, codec: Arc<dyn Codec<T>>) -> Self {
        BlockingQueue {
            core,
            keys,
            codec,
            transferring: Transferring::default(),
        }
    }

    /// The same queue, also running the transfer for its delayed queue while
    /// this handle (or a clone) lives, so due elements keep moving even when
    /// no producer is alive. Redisson only transfers in processes that hold an
    /// `RDelayedQueue`.
    pub fn with_transfer(mut self) -> Self {
        self.transferring.on(&self.core, &self.keys);
        self
    }

    /// The same queue, not running the transfer from this handle (the
    /// default for handles from [`Client::blocking_queue`](crate::Client::blocking_queue)).
    pub fn without_transfer(mut self) -> Self {
        self.transferring.off();
        self
    }

    /// Whether this handle runs the transfer.
    pub fn transfers(&self) -> bool {
        self.transferring.is_on()
    }

    /// The queue's name (the destination list's key).
    pub fn name(&self) -> &str {
        self.keys.destination()
    }

    /// Appends a value now, with no delay (Java's `offer(e)`/`add(e)` on the
    /// blocking queue: `RPUSH`). Sent once: a connection failure before the
    /// reply is an error, never a duplicate.
    pub async fn offer(&self, value: &T) -> Result<()> {
        let payload = codec::encode(&*self.codec, value)?;
        self.core.check_payload(&payload)?;
        let _: i64 = self
            .core
            .conn()?
            .with_options(&Resend::Once.options())
            .rpush(self.name(), payload)
            .await
            .map_err(|e| self.sent_once_error("offer", e))?;
        Ok(())
    }

    /// Every ready value, head first, without removing any (Java's
    /// `readAll()`). Reads the whole list in one command, as Java does; for
    /// a long list page with [`read_range`](Self::read_range).
    pub async fn read_all(&self) -> Result<Vec<T>> {
        self.read_range(0, usize::MAX).await
    }

    /// Up to `count` ready values from index `start` (0 is the head), without
    /// removing any (Java's `range(from, to)`).
    pub async fn read_range(&self, start: usize, count: usize) -> Result<Vec<T>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let first = i64::try_from(start).unwrap_or(i64::MAX);
        let last = i64::try_from(start.saturating_add(count - 1)).unwrap_or(-1);
        let raw: Vec<Bytes> = self
            .core
            .conn()?
            .lrange(self.name(), first, last)
            .await
            .map_err(|e| self.command_error(e))?;
        Ok(codec::decode_all(&*self.codec, raw)?)
    }

    /// The value at the head, without removing it (Java's `peek()`).
    pub async fn peek(&self) -> Result<Option<T>> {
        let raw: Option<Bytes> = self
            .core
            .conn()?
            .lindex(self.name(), 0)
            .await
            .map_err(|e| self.command_error(e))?;
        raw.map(|raw| codec::decode(&*self.codec, raw).map_err(Error::from))
            .transpose()
    }

    /// Whether a ready value equals `value` (compared as encoded payloads;
    /// Java's `contains(o)`). Scans the list, as Java does.
    pub async fn contains(&self, value: &T) -> Result<bool> {
        let payload = codec::encode(&*self.codec, value)?;
        let position: Option<i64> = self
            .core
            .conn()?
            .lpos(self.name(), payload, None, None, None)
            .await
            .map_err(|e| self.command_error(e))?;
        Ok(position.is_some())
    }

    /// Removes the first ready value equal to `value` (Java's `remove(o)`);
    /// returns whether there was one. Equal values from different producers
    /// are separate values: one call removes one, even if its reply is lost
    /// and the call resent.
    pub async fn remove(&self, value: &T) -> Result<bool> {
        let payload = codec::encode(&*self.codec, value)?;
        Ok(self.remove_by(ByValue::First, vec![payload]).await? == 1)
    }

    /// Removes every ready value equal to one of `values` (Java's
    /// `removeAll(c)`); returns how many were removed.
    pub async fn remove_all<I, B>(&self, values: I) -> Result<usize>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let payloads = values
            .into_iter()
            .map(|v| codec::encode(&*self.codec, v.borrow()))
            .collect::<Result<Vec<_>>>()?;
        if payloads.is_empty() {
            return Ok(0);
        }
        self.remove_by(ByValue::All, payloads).await
    }

    async fn remove_by(&self, mode: ByValue, payloads: Vec<Bytes>) -> Result<usize> {
        // Each value costs a scan of the list: a bounded number per script.
        let mut removed = 0;
        for chunk in payloads.chunks(REMOVE_CHUNK) {
            let mut args = Vec::with_capacity(chunk.len() + 1);
            args.push(mode.arg());
            args.extend(chunk.iter().cloned().map(Value::Bytes));
            let value = Request::new(self.name())
                .apply(
                    self.core.conn()?,
                    self.core.settling(),
                    &SCRIPTS.list_remove,
                    vec![Key::from(self.name())],
                    args,
                    self.name(),
                )
                .await?;
            removed += reply::int(&value)? as usize;
        }
        Ok(removed)
    }

    /// Deletes every ready value (Java's `clear()`); returns whether there
    /// was any. Pending values of the delayed queue are not touched. Sent
    /// once: a resend could delete values offered after the first run.
    pub async fn clear(&self) -> Result<bool> {
        let n: i64 = self
            .core
            .conn()?
            .with_options(&Resend::Once.options())
            .del(self.name())
            .await
            .map_err(|e| self.command_error(e))?;
        Ok(n > 0)
    }

    /// Number of values ready in the list.
    pub async fn len(&self) -> Result<usize> {
        let n: i64 = self
            .core
            .conn()?
            .llen(self.name())
            .await
            .map_err(|e| self.command_error(e))?;
        Ok(n as usize)
    }

    /// Whether no value is ready.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// Waits for a value and removes it (Java's `take()`). Keeps waiting
    /// across reconnects; fails only on bad data, a wrong key type, or
    /// [`Error::Shutdown`].
    ///
    /// Cancel safe: dropping the future (`tokio::time::timeout`, a `select!`
    /// branch that lost) loses nothing. A value the server popped for it
    /// anyway goes back to the head of the list. The same holds for
    /// [`take_timeout`](Self::take_timeout), [`try_take`](Self::try_take) and
    /// [`take_from_any`](Self::take_from_any).
    pub async fn take(&self) -> Result<T> {
        loop {
            if let Some((key, raw)) = self.pop_from(&[self.name()], None).await? {
                return self.decode_or_restore(&key, raw).await;
            }
        }
    }

    /// Waits up to `timeout` for a value (Java's `poll(timeout, unit)`).
    /// Returns `None` when the time is up; if the connection was failing at
    /// that moment, returns that error instead, so "empty" and "unreachable"
    /// are told apart.
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<T>> {
        match self
            .pop_from(&[self.name()], Instant::now().checked_add(timeout))
            .await?
        {
            Some((key, raw)) => Ok(Some(self.decode_or_restore(&key, raw).await?)),
            None => Ok(None),
        }
    }

    /// Removes a value if one is ready, without waiting (Java's `poll()`).
    pub async fn try_take(&self) -> Result<Option<T>> {
        let raw = self.lpop(self.name()).await?;
        match raw {
            Some(raw) => Ok(Some(self.decode_or_restore(self.name(), raw).await?)),
            None => Ok(None),
        }
    }

    /// Waits up to `timeout` for a value from this queue or any of `others`,
    /// whichever has one first, and returns the name of the queue it came from
    /// (Java's `pollFromAny`). On Redis Cluster all queues must share a slot.
    pub async fn take_from_any(&self, timeout: Duration, others: &[&BlockingQueue<T>]) -> Result<Option<(String, T)>> {
        let mut names = vec![self.name()];
        names.extend(others.iter().map(|q| q.name()));
        match self.pop_from(&names, Instant::now().checked_add(timeout)).await? {
            Some((name, raw)) => {
                let value = self.decode_or_restore(&name, raw).await?;
                Ok(Some((name, value)))
            }
            None => Ok(None),
        }
    }

    /// Waits for a value, and atomically moves it from the tail of this list
    /// to the head of `target`, returning it (Java's `takeLastAndOfferFirstTo`).
    /// On Redis Cluster `target` must share this queue's slot.
    ///
    /// Cancel safe: a call dropped before it returns moves nothing (a value
    /// moved for it anyway is moved back to this list's tail).
    pub async fn take_last_and_offer_first_to(&self, target: &str) -> Result<T> {
        let args = |secs: f64| {
            let args = [self.name(), target, "RIGHT", "LEFT"];
            let mut args: Vec<Value> = args.into_iter().map(Value::from).collect();
            args.push(Value::from(secs));
            args
        };
        let moved = self
            .core
            .connections
            .blocking
            .wait("BLMOVE", self.name(), None, args)
            .await?;
        // Without a deadline the wait only ends with a value or an error.
        let raw = moved
            .map(reply::bytes)
            .transpose()?
            .ok_or_else(|| Error::Protocol("BLMOVE wait ended empty".into()))?;
        Ok(codec::decode(&*self.codec, raw)?)
    }

    /// Removes and returns up to `max` ready values at once, atomically (Java's
    /// `drainTo`), at most 10,000 per call (one script run, so that Redis is
    /// never held for long); `0` removes nothing. If one cannot be decoded,
    /// the error holds the raw bytes of all of them, and all go back.
    ///
    /// Cancel safe: values removed for a call dropped before it returns go
    /// back to the head of the list, in order. A lost reply loses nothing
    /// either: fred's resend of the call returns the same values, and if the
    /// connection stays down the call fails and its values go back.
    pub async fn drain(&self, max: usize) -> Result<Vec<T>> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let max = max.min(MAX_BATCH) as i64;
        let conn = self.core.conn()?.clone();
        let key = self.name().to_owned();
        let give_back = give_back_with(
            (conn.clone(), key.clone(), self.core.settling().clone()),
            |(conn, key, settling), reply: FredResult<Value>| async move {
                match reply.map(reply::bytes_array) {
                    Ok(Ok(raw)) if !raw.is_empty() => drop(push_back(&conn, &settling, &key, raw).await),
                    _ => {}
                }
            },
        );
        let settling = self.core.settling().clone();
        let drain = async move {
            Request::new(&key)
                .remove(
                    &conn,
                    &settling,
                    &SCRIPTS.drain,
                    vec![Key::from(key.as_str())],
                    vec![Value::from(max)],
                )
                .await
        };
        let value = detach(drain, give_back, self.core.settling())
            .reply()
            .await
            .map_err(|e| Error::from_script(e, SCRIPTS.drain.name, self.name()))?;
        let raw = reply::bytes_array(value)?;
        match codec::decode_batch(&*self.codec, raw.clone()) {
            Ok(values) => Ok(values),
            Err(error) => {
                let restored = self.restore(self.name(), raw).await;
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// The values as they arrive: an endless stream of [`take`](Self::take)s
    /// that ends after the client shuts down. A value that cannot be decoded
    /// is yielded as an error and stays at the head of the list (see
    /// [`DecodeError`](crate::DecodeError)); the stream then waits a second
    /// before reading on, so that a value no one here can read does not make
    /// it spin.
    pub fn stream(&self) -> impl Stream<Item = Result<T>> + Send + 'static
    where
        T: Send,
    {
        stream::unfold((self.clone(), false), |(queue, backoff)| async move {
            if backoff {
                tokio::select! {
                    _ = tokio::time::sleep(DECODE_ERROR_PAUSE) => {}
                    _ = queue.core.connections.shutdown.cancelled() => return None,
                }
            }
            match queue.take().await {
                Err(Error::Shutdown) => None,
                Err(error @ Error::Decode(_)) => Some((Err(error), (queue, true))),
                item => Some((item, (queue, false))),
            }
        })
    }

    /// Appends several values now, in one command, sent once (see [`offer`](Self::offer)).
    pub async fn offer_all<I, B>(&self, values: I) -> Result<()>
    where
        I: IntoIterator<Item = B>,
        B: Borrow<T>,
    {
        let payloads: Vec<Value> = values
            .into_iter()
            .map(|v| {
                let payload = codec::encode(&*self.codec, v.borrow())?;
                self.core.check_payload(&payload)?;
                Ok(Value::Bytes(payload))
            })
            .collect::<Result<_>>()?;
        if payloads.is_empty() {
            return Ok(());
        }
        let _: i64 = self
            .core
            .conn()?
            .with_options(&Resend::Once.options())
            .rpush(self.name(), payloads)
            .await
            .map_err(|e| self.sent_once_error("offer_all", e))?;
        Ok(())
    }

    /// Blocking pop from the first of `names` that has a value, until
    /// `deadline` (or forever), across reconnects.
    async fn pop_from(&self, names: &[&str], deadline: Option<Instant>) -> Result<Option<(String, Bytes)>> {
        // When a value is ready, an LPOP on the shared, pipelined connections
        // is as good as a BLPOP and costs no dedicated connection. Sent once:
        // a retried pop could pop twice.
        if let [name] = names {
            match self.lpop(name).await {
                Ok(Some(raw)) => return Ok(Some(((*name).to_owned(), raw))),
                Ok(None) => {}
                Err(error) if !error.is_transient() => return Err(error),
                Err(error) => {
                    // As with a BLPOP whose reply is lost, a value the LPOP
                    // took may be gone (plain takes are at most once); say so.
                    tracing::warn!(queue = *name, %error, "the reply of a pop was lost: a value may have been taken and lost (use a ReliableQueue for at-least-once)");
                }
            }
        }
        let args = |secs: f64| {
            let mut args: Vec<Value> = names.iter().map(|n| Value::from(*n)).collect();
            args.push(Value::from(secs));
            args
        };
        match self
            .core
            .connections
            .blocking
            .wait("BLPOP", self.name(), deadline, args)
            .await?
        {
            Some(value) => reply::blpop(value).map(Some),
            None => Ok(None),
        }
    }

    /// `LPOP`, sent once (a retried pop could pop twice) and safe to cancel:
    /// a value popped for a caller that has stopped waiting goes back to the
    /// head of the list (see `detached`).
    async fn lpop(&self, name: &str) -> Result<Option<Bytes>> {
        let conn = self.core.conn()?.clone();
        let key = name.to_owned();
        let context = (conn.clone(), key.clone(), self.core.settling().clone());
        let give_back = give_back_with(context, |(conn, key, settling), reply| async move {
            if let Ok(Some(raw)) = reply {
                push_back(&conn, &settling, &key, vec![raw]).await;
            }
        });
        let once = Resend::Once.options();
        let pop = async move { conn.with_options(&once).lpop::<Option<Bytes>, _>(key, None).await };
        detach(pop, give_back, self.core.settling())
            .reply()
            .await
            .map_err(|e| self.command_error(e))
    }

    /// Decodes a value popped from `key`; if it cannot be decoded, puts it
    /// back at the head of `key` (decoding never consumes) and fails.
    async fn decode_or_restore(&self, key: &str, raw: Bytes) -> Result<T> {
        match codec::decode(&*self.codec, raw.clone()) {
            Ok(value) => Ok(value),
            Err(error) => {
                let restored = self.restore(key, vec![raw]).await;
                Err(Error::Decode(error.with_restored(restored)))
            }
        }
    }

    /// Pushes values back at the head of `key`, in their original order.
    async fn restore(&self, key: &str, raw: Vec<Bytes>) -> bool {
        let Ok(conn) = self.core.conn() else { return false };
        push_back(conn, self.core.settling(), key, raw).await
    }

    fn command_error(&self, error: fred::error::Error) -> Error {
        Error::from_command(error, self.name())
    }

    /// The error of a command sent once: its outcome is unknown when the
    /// connection, not Redis, failed.
    fn sent_once_error(&self, operation: &'static str, error: fred::error::Error) -> Error {
        Error::from_unrepeatable(error, operation, self.name(), |e| self.command_error(e))
    }
}

/// The names of 0.1, kept for one release: `poll` meant three things across
/// the queue types (remove before due, wait up to a timeout, do not wait).
impl<T: 'static> BlockingQueue<T> {
    /// Renamed [`take_timeout`](Self::take_timeout).
    #[deprecated(since = "0.2.0", note = "renamed `take_timeout`")]
    pub async fn poll(&self, timeout: Duration) -> Result<Option<T>> {
        self.take_timeout(timeout).await
    }

    /// Renamed [`try_take`](Self::try_take).
    #[deprecated(since = "0.2.0", note = "renamed `try_take`")]
    pub async fn poll_now(&self) -> Result<Option<T>> {
        self.try_take().await
    }

    /// Renamed [`take_from_any`](Self::take_from_any).
    #[deprecated(since = "0.2.0", note = "renamed `take_from_any`")]
    pub async fn poll_from_any(&self, timeout: Duration, others: &[&BlockingQueue<T>]) -> Result<Option<(String, T)>> {
        self.take_from_any(timeout, others).await
    }
}
