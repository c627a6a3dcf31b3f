//! `BlockingQueue<T>`: the destination list, Redisson's `RBlockingQueue`.

use std::sync::Arc;

use bytes::Bytes;
use fred::interfaces::{ListInterface, SortedSetsInterface};

use crate::error::{CommandResult, Error, Result};
use crate::queue::handle::QueueHandle;
use crate::queue::per_queue::PerQueue;
use crate::queue::priority::Priority;
use crate::queue::Core;
use crate::wire::codec::{self, Codec};
use crate::wire::keys::QueueKeys;

mod joined_pops;
mod joined_waits;
mod priorities;
mod ready_hint;
mod take;
mod write;

type FredResult<T> = std::result::Result<T, fred::error::Error>;

/// The destination list of a delayed queue: where due values arrive, as
/// plain codec-encoded payloads, exactly as Java's `RBlockingQueue` sees them.
///
/// Takes (`take`, `take_timeout`, ...) pop a ready value with `LPOP` on the
/// shared connections (always the same one for a queue, so concurrent takes
/// pipeline). The takes of a queue in one client (through any of its
/// handles) share their round trips: up to eight pops are in flight at a
/// time, and takes that come while all are busy are served together by the
/// next one (`LPOP key n`), each getting a value of its own: nothing is popped ahead
/// of a take, and a value whose take stopped waiting goes back to the head
/// of the list. While pops find the list empty, only one take in eight (and
/// every wait shorter than 50 ms) looks first, the others go straight to
/// waiting. Waits are joined the same way: two block at a time, each on a
/// connection of its own (never one other commands share), and the takes
/// that come meanwhile are served together by the next one
/// (`BLMPOP ... COUNT n`; one `BLPOP` per take on Redis before 7.0). Each
/// wait is a loop of finite server-side timeouts
/// ([`ClientBuilder::blocking_timeout`](crate::ClientBuilder::blocking_timeout)),
/// so a dead connection is noticed and replaced, and takes keep waiting
/// across reconnects.
///
/// # Delivery
///
/// `take` and `take_timeout` pop with `LPOP`, `BLMPOP` or `BLPOP`, as Java's
/// `take` pops: if the connection dies after Redis popped values but before
/// the reply arrived, those values are lost (at most once). A value that
/// does not decode is returned inside [`Error::Decode`] with its raw bytes,
/// never dropped.
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
    handle: QueueHandle<T>,
    /// What the takes of this queue in this client share.
    takes: Arc<Takes>,
}

/// What the blocking queues of one client share, across their handles: kept
/// in the client's [`Core`] ([`Core::blocking_queues`]), reached inside only
/// from here.
#[derive(Default)]
pub(crate) struct Registries {
    /// What the takes of each queue share.
    takes: PerQueue<Takes>,
}

/// What the takes of one queue share across every handle of one client
/// (see [`Registries`]): takes through `client.blocking_queue(..)` twice, or
/// through a `destination()` each, join the same pops and waits.
struct Takes {
    ready: ready_hint::ReadyHint,
    /// Concurrent `LPOP`s, joined into `LPOP key n`.
    pops: Arc<joined_pops::JoinedPops>,
    /// Concurrent waits, joined into `BLMPOP ... COUNT n`.
    waits: Arc<joined_pops::JoinedPops>,
    /// The server refused `BLMPOP` (Redis before 7.0): waits use `BLPOP`.
    no_blmpop: std::sync::atomic::AtomicBool,
    /// How the waits of this queue fail, while they do.
    failing: crate::connection::blocking_pool::Failing,
    /// Concurrent pops of a queue with priorities, joined into one run of
    /// `lua/pop_priority.lua`.
    priority_pops: Arc<crate::queue::joined::Joined<priorities::PopTarget>>,
}

impl Default for Takes {
    fn default() -> Self {
        Takes {
            ready: Default::default(),
            pops: joined_pops::JoinedPops::new(joined_pops::POPS),
            waits: joined_pops::JoinedPops::new(joined_waits::WAITS),
            no_blmpop: Default::default(),
            failing: Default::default(),
            priority_pops: Default::default(),
        }
    }
}

/// A ready value of delayq's priority set, with what it was offered with
/// ([`BlockingQueue::read_ready_entries`]).
///
/// ```no_run
/// # async fn demo(queue: delayq::BlockingQueue<String>) -> delayq::Result<()> {
/// let next: Vec<delayq::ReadyEntry<String>> = queue.read_ready_entries(0, 1).await?;
/// if let Some(entry) = next.first() {
///     println!("next: {} (priority {}, expires {:?})", entry.value, entry.priority, entry.expires_at);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReadyEntry<T> {
    /// Its priority.
    pub priority: Priority,
    /// Its headers (empty: none).
    pub headers: crate::Headers,
    /// When its TTL runs out (the Redis server's clock), if it has one.
    pub expires_at: Option<std::time::SystemTime>,
    /// The value.
    pub value: T,
}

impl<T> Clone for BlockingQueue<T> {
    fn clone(&self) -> Self {
        BlockingQueue {
            handle: self.handle.clone(),
            takes: self.takes.clone(),
        }
    }
}

impl<T: 'static> std::fmt::Debug for BlockingQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingQueue")
            .field("name", &self.handle.keys.destination())
            .field("codec", &self.handle.codec.name())
            .field("transfers", &self.handle.transfers())
            .finish()
    }
}

impl<T: 'static> BlockingQueue<T> {
    pub(crate) fn new(core: Arc<Core>, name: &str, codec: Arc<dyn Codec<T>>) -> Result<Self> {
        Ok(Self::from_parts(core, Arc::new(QueueKeys::new(name)?), codec))
    }

    pub(crate) fn from_parts(core: Arc<Core>, keys: Arc<QueueKeys>, codec: Arc<dyn Codec<T>>) -> Self {
        let takes = core
            .blocking_queues()
            .takes
            .get_or_start(keys.destination(), Arc::default);
        BlockingQueue {
            handle: QueueHandle::new(core, keys, codec),
            takes,
        }
    }

    /// The same queue, also running the transfer for its delayed queue while
    /// this handle (or a clone) lives, so due elements keep moving even when
    /// no producer is alive. Redisson only transfers in processes that hold an
    /// `RDelayedQueue`.
    pub fn with_transfer(mut self) -> Self {
        self.handle.with_transfer();
        self
    }

    /// The same queue, not running the transfer from this handle (the
    /// default for handles from [`Client::blocking_queue`](crate::Client::blocking_queue)).
    pub fn without_transfer(mut self) -> Self {
        self.handle.without_transfer();
        self
    }

    /// Waits until the list holds a value or `until`, taking none:
    /// `BLMOVE N N LEFT LEFT` moves the head to the head (the list as it
    /// was, for every reader). A wait dropped half way gives nothing back,
    /// so waits on several queues at once can race without reordering any.
    pub(crate) async fn wait_nonempty(&self, until: tokio::time::Instant) -> Result<()> {
        let name = self.name();
        let args = |secs: f64| {
            let mut args: Vec<fred::types::Value> = [name, name, "LEFT", "LEFT"]
                .into_iter()
                .map(fred::types::Value::from)
                .collect();
            args.push(fred::types::Value::from(secs));
            args
        };
        self.handle
            .core
            .blocking()
            .wait("BLMOVE", name, Some(until), args, None)
            .await?;
        Ok(())
    }

    /// Whether this handle runs the transfer.
    pub fn transfers(&self) -> bool {
        self.handle.transfers()
    }

    /// The queue's name (the destination list's key).
    pub fn name(&self) -> &str {
        self.handle.keys.destination()
    }

    /// Every ready value, head first, without removing any (Java's
    /// `readAll()`). Reads the whole list in one command, as Java does; for
    /// a long list page with [`read_range`](Self::read_range).
    pub async fn read_all(&self) -> Result<Vec<T>> {
        self.read_range(0, usize::MAX).await
    }

    /// Up to `count` ready values with a priority above the default (see
    /// [`DelayedQueue::offer_with_priority`](crate::DelayedQueue::offer_with_priority)),
    /// from index `start` in take order (0 is the next taken), without
    /// removing any, each with its priority. Takes take all of them before
    /// the plain list's values ([`read_range`](Self::read_range)).
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.blocking_queue("orders", delayq::StringCodec)?;
    /// for (priority, value) in orders.read_priority_range(0, 10).await? {
    ///     println!("{priority}: {value}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn read_priority_range(&self, start: usize, count: usize) -> Result<Vec<(Priority, T)>> {
        let entries = self.read_ready_entries(start, count).await?;
        Ok(entries.into_iter().map(|entry| (entry.priority, entry.value)).collect())
    }

    /// [`read_priority_range`](Self::read_priority_range) with all that
    /// each value was offered with: its priority, its headers and its
    /// expiry (message TTL). These are the values of delayq's ready set
    /// (priorities above the default, and values with a TTL or headers at
    /// any level), in take order.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let orders = client.blocking_queue("orders", delayq::StringCodec)?;
    /// for entry in orders.read_ready_entries(0, 10).await? {
    ///     println!("P{} {} {:?}", entry.priority, entry.value, entry.headers.get("tenant"));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn read_ready_entries(&self, start: usize, count: usize) -> Result<Vec<ReadyEntry<T>>> {
        if count == 0 {
            return Ok(Vec::new());
        }
        let key = self.handle.keys.priority_ready();
        let first = i64::try_from(start).unwrap_or(i64::MAX);
        let last = i64::try_from(start.saturating_add(count - 1)).unwrap_or(-1);
        let members: Vec<Bytes> = self
            .handle
            .core
            .conn()?
            .zrange(&key, first, last, None, false, None, false)
            .await
            .on_key(&key)?;
        let mut values = Vec::with_capacity(members.len());
        for member in &members {
            let (priority, section, payload) = crate::queue::priority::split_member(member)
                .ok_or_else(|| Error::Protocol(format!("{key} holds a member that is not a priority entry")))?;
            let headers = match crate::queue::headers::section_headers(section) {
                Some(json) => crate::Headers::decode(json)
                    .map_err(|why| Error::Protocol(format!("{key} holds a member whose {why}")))?,
                None => crate::Headers::new(),
            };
            let value = codec::decode(&*self.handle.codec, member.slice_ref(payload))?;
            values.push(ReadyEntry {
                priority,
                headers,
                expires_at: crate::queue::priority::section_expiry(section).map(crate::wire::time::from_ms),
                value,
            });
        }
        Ok(values)
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
            .handle
            .core
            .conn()?
            .lrange(self.name(), first, last)
            .await
            .on_key(self.name())?;
        Ok(codec::decode_all(&*self.handle.codec, raw)?)
    }

    /// The value at the head, without removing it (Java's `peek()`).
    pub async fn peek(&self) -> Result<Option<T>> {
        let raw: Option<Bytes> = self
            .handle
            .core
            .conn()?
            .lindex(self.name(), 0)
            .await
            .on_key(self.name())?;
        raw.map(|raw| codec::decode(&*self.handle.codec, raw).map_err(Error::from))
            .transpose()
    }

    /// Whether a ready value equals `value` (compared as encoded payloads;
    /// Java's `contains(o)`). Scans the list, as Java does.
    pub async fn contains(&self, value: &T) -> Result<bool> {
        let payload = codec::encode(&*self.handle.codec, value)?;
        let position: Option<i64> = self
            .handle
            .core
            .conn()?
            .lpos(self.name(), payload, None, None, None)
            .await
            .on_key(self.name())?;
        Ok(position.is_some())
    }

    /// Number of values ready in the list.
    pub async fn len(&self) -> Result<usize> {
        let n: i64 = self.handle.core.conn()?.llen(self.name()).await.on_key(self.name())?;
        Ok(n as usize)
    }

    /// Whether no value is ready.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }
}

/// What the client's per-queue calls take ([`Client::events`](crate::Client::events),
/// [`Client::schedules`](crate::Client::schedules), ...): the handle stands for its queue.
impl<T> AsRef<QueueKeys> for BlockingQueue<T> {
    fn as_ref(&self) -> &QueueKeys {
        &self.handle.keys
    }
}
