//! `DelayedQueue<T>`: Redisson's `RDelayedQueue`, on the same keys and bytes.

use std::sync::Arc;

use bytes::Bytes;
use fred::types::Value;

use crate::connection::script::Script;
use crate::error::Result;
use crate::queue::handle::QueueHandle;
use crate::queue::Core;
use crate::wire::codec::{self, Codec};
use crate::wire::format::Format;
use crate::wire::keys::QueueKeys;
use crate::BlockingQueue;

mod batches;
mod dedup;
mod element;
mod groups;
mod ids;

mod joined_offers;
mod limits;
mod maintenance;
mod offer;
mod page;
mod pause;
mod priority;
mod read;
mod recode;
mod remove;
mod traced;
mod ttl;

pub(crate) use batches::status as batch_status;
pub use batches::{BatchOptions, BatchState, BatchStatus, DEFAULT_BATCH_KEEP, MAX_COMPLETION_BYTES, MAX_EQUAL_MEMBERS};
pub use dedup::{Dedup, DedupKey, Offered};
pub use element::ElementOutcome;
pub use groups::MAX_GROUP_KEY;
pub(crate) use ids::check_id;
pub use ids::Scheduled;
pub use limits::{Limits, WhenFull};
pub use maintenance::{MigrationReport, TransferReport};
pub use page::{PendingElement, PendingError};
pub use recode::RecodeReport;
pub use remove::Purged;
pub use ttl::{Expiry, OfferOptions};

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
///   it is never queued twice. [`offer_all`](Self::offer_all)'s chunks may be
///   sent again (each carries the call's request key, which counts the values
///   added): none is queued twice, and a failure part way says how many are
///   queued ([`Error::PartlyOffered`](crate::Error::PartlyOffered)). Operations that remove values
///   (`remove_first`, `remove_first_n`, `remove`, ...) may be resent safely: a
///   resend returns the first run's reply, and if the reply is lost for good
///   the call fails and what it removed goes back.
/// - Elements that no format can unpack are moved to a quarantine list
///   (`delayq_quarantine:{name}`) by operations that remove elements, so they
///   never stall the queue; read-only operations skip them and log a warning.
///
/// While a handle (or a clone) lives, the [`Client`](crate::Client) it came
/// from runs the transfer for its queue: from its first operation (or
/// [`destination`](Self::destination), or
/// [`with_transfer`](Self::with_transfer)), and at the latest 250 ms after
/// it was made. A handle turned [`without_transfer`](Self::without_transfer)
/// before any of that never transfers, not even for a moment (for tools that
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
    handle: QueueHandle<T>,
    format: Format,
    /// Concurrent offers of this handle and its clones, sent together.
    joined: Arc<joined_offers::JoinedOffers>,
    /// Concurrent deduplicated offers of this handle and its clones, sent together.
    joined_dedup: Arc<crate::queue::joined::Joined<dedup::DedupTarget>>,
    /// Concurrent priority offers (and offers with a TTL or headers) of
    /// this handle and its clones, sent together.
    joined_priority: Arc<priority::JoinedPriorityOffers>,
    /// What its offers do when the queue is full.
    when_full: WhenFull,
}

impl<T> Clone for DelayedQueue<T> {
    fn clone(&self) -> Self {
        DelayedQueue {
            handle: self.handle.clone(),
            format: self.format,
            joined: self.joined.clone(),
            joined_dedup: self.joined_dedup.clone(),
            joined_priority: self.joined_priority.clone(),
            when_full: self.when_full,
        }
    }
}

impl<T: 'static> std::fmt::Debug for DelayedQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelayedQueue")
            .field("name", &self.handle.keys.destination())
            .field("codec", &self.handle.codec.name())
            .field("format", &self.format)
            .finish()
    }
}

impl<T: 'static> DelayedQueue<T> {
    pub(crate) fn new(core: Arc<Core>, name: &str, codec: Arc<dyn Codec<T>>) -> Result<Self> {
        Ok(DelayedQueue {
            handle: QueueHandle::new(core, Arc::new(QueueKeys::new(name)?), codec),
            format: Format::default(),
            joined: Arc::default(),
            joined_dedup: Arc::default(),
            joined_priority: Arc::default(),
            when_full: WhenFull::default(),
        })
    }

    /// The same queue, running the transfer while this handle (or a clone)
    /// lives, from now. Handles from
    /// [`Client::delayed_queue`](crate::Client::delayed_queue) transfer from
    /// their first operation (an offer, a read...); call this on one that
    /// should transfer before it does anything, or that only keeps the queue
    /// moving.
    pub fn with_transfer(mut self) -> Self {
        self.handle.with_transfer();
        self
    }

    /// The same queue, not running the transfer from this handle: every
    /// operation works, but due elements move only when another handle or
    /// process transfers them. For tools that look at a queue without
    /// changing when anything is delivered.
    ///
    /// ```no_run
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let queue = client.delayed_queue("orders", delayq::StringCodec)?.without_transfer();
    /// assert!(!queue.transfers());
    /// println!("{} pending", queue.len().await?);
    /// # Ok(()) }
    /// ```
    pub fn without_transfer(mut self) -> Self {
        self.handle.without_transfer();
        self
    }

    /// Whether this handle runs the transfer.
    pub fn transfers(&self) -> bool {
        self.handle.transfers()
    }

    /// Transferring from the handle's first operation, or 250 ms after it
    /// was made (`Client::delayed_queue`; see `queue/transferring.rs`).
    pub(crate) fn transferring_once_used(mut self) -> Self {
        self.handle.transfer_once_used();
        self
    }

    /// A connection for one command; the first one of a handle that
    /// transfers registers its queue with the scheduler.
    fn conn(&self) -> Result<&fred::clients::Client> {
        self.handle.conn()
    }

    /// Where this queue's offers go, for offers joined with others.
    fn offer_target(&self) -> joined_offers::Target {
        joined_offers::Target {
            core: self.handle.core.clone(),
            keys: self.handle.keys.clone(),
        }
    }

    /// The same queue, its offers acknowledged only once `durability`'s
    /// replicas have them (`None`: as soon as the primary has them), in
    /// place of the client's
    /// ([`ClientBuilder::durability`](crate::ClientBuilder::durability)).
    /// Covers [`offer`](Self::offer), [`offer_at`](Self::offer_at),
    /// [`offer_all`](Self::offer_all) (one wait per call), offers with a
    /// priority, a TTL or headers, deduplicated offers, offers by id
    /// ([`offer_with_id`](Self::offer_with_id), `replace_with_id`), and
    /// concurrent offers joined into one run (one wait per run). A write the replicas did not confirm in
    /// time fails with [`Error::NotReplicated`](crate::Error::NotReplicated):
    /// it is on the primary. See [`Durability`](crate::Durability).
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use delayq::Durability;
    /// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
    /// let payments = client
    ///     .delayed_queue("payments", delayq::StringCodec)?
    ///     .with_durability(Some(Durability::replicas(1)));
    /// assert_eq!(payments.durability(), Some(Durability::replicas(1)));
    /// payments.offer(&"p-7".to_owned(), Duration::from_secs(30)).await?;
    /// # Ok(()) }
    /// ```
    pub fn with_durability(mut self, durability: Option<crate::Durability>) -> Self {
        self.handle.durability = durability;
        self
    }

    /// How many replicas this handle's offers wait for (`None`: none).
    pub fn durability(&self) -> Option<crate::Durability> {
        self.handle.durability
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
        self.handle.keys.destination()
    }

    /// The Redis key names of this queue.
    pub fn keys(&self) -> &QueueKeys {
        &self.handle.keys
    }

    /// The destination list, as a [`BlockingQueue`] with this queue's codec.
    pub fn destination(&self) -> BlockingQueue<T> {
        self.handle.arm();
        let handle = &self.handle;
        BlockingQueue::from_parts(handle.core.clone(), handle.keys.clone(), handle.codec.clone())
    }

    pub(crate) fn encode(&self, value: &T) -> Result<Bytes> {
        let payload = codec::encode(&*self.handle.codec, value)?;
        self.handle.core.check_payload(&payload)?;
        Ok(payload)
    }

    async fn run(&self, script: &'static Script, keys: Vec<fred::types::Key>, args: Vec<Value>) -> Result<Value> {
        Ok(script.run(self.conn()?, self.name(), keys, args).await?)
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
            self.handle.core.count_quarantined(count as u64);
            tracing::warn!(
                queue = self.name(),
                count,
                operation,
                quarantine = self.handle.keys.quarantine(),
                "moved malformed elements (neither Bc0Lc0 nor dLc0) to quarantine"
            );
        }
    }
}

/// What the client's per-queue calls take ([`Client::events`](crate::Client::events),
/// [`Client::schedules`](crate::Client::schedules), ...): the handle stands for its queue.
impl<T> AsRef<QueueKeys> for DelayedQueue<T> {
    fn as_ref(&self) -> &QueueKeys {
        &self.handle.keys
    }
}
