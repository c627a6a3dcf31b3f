//! A partitioned queue: one logical queue over N ordinary Redisson queues
//! whose keys sit in different Redis Cluster slots.
//!
//! Owns [`PartitionedQueue`] (offers routed by key or round robin, takes
//! across partitions, summed counts), the stored layout's I/O (`layout.rs`;
//! the layout itself, names and hashes, is `wire/partitions.rs`), offers
//! (`offer.rs`) and takes (`take.rs`). Built on each partition's
//! [`DelayedQueue`] and [`BlockingQueue`] handles: no script of its own but
//! the layout's create.

mod layout;
mod offer;
mod take;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::queue::blocking::BlockingQueue;
use crate::queue::delayed::DelayedQueue;
use crate::queue::reliable::ReliableQueue;
use crate::queue::status::QueueStatus;
use crate::queue::Core;
use crate::wire::codec::Codec;
use crate::wire::partitions::PartitionLayout;

/// One logical queue over N ordinary Redisson-compatible queues (its
/// partitions), whose names hash to different Redis Cluster slots, so that
/// a Cluster spreads them, and their load, over its primaries.
///
/// # Usage
///
/// Create it once with a partition count
/// ([`Client::create_partitioned_queue`](crate::Client::create_partitioned_queue),
/// or `delayq partition create Q N`); open it anywhere by name
/// ([`Client::partitioned_queue`](crate::Client::partitioned_queue)), which
/// reads the stored layout. Offers go round robin
/// ([`offer`](Self::offer)) or by a partition key
/// ([`offer_keyed`](Self::offer_keyed),
/// [`OfferOptions::partition_key`](crate::OfferOptions::partition_key)):
/// every value of one key goes to one partition. [`take`](Self::take)
/// takes from any partition; a
/// [`PartitionedWorker`](crate::worker::PartitionedWorker)
/// ([`Client::partitioned_worker`](crate::Client::partitioned_worker)) runs
/// a handler over all of them with one concurrency budget.
///
/// # Guarantees and limits
///
/// - **Per-key order**: values offered with the same partition key, by one
///   producer one after another, are taken in offer order (they share one
///   partition, an ordinary FIFO delayed queue; equal due times keep offer
///   order as in any delayq queue). Across keys, and for round-robin
///   values, there is no order. A worker with a concurrency above 1 runs
///   a partition's values side by side: per-key order is the order values
///   are *taken* (handled one at a time only with a concurrency of 1, or
///   with [`OfferOptions::group`](crate::OfferOptions::group) keys).
/// - **Java**: each partition is a plain Redisson queue; a Java client
///   offers to and takes from a partition by its stored name
///   ([`names`](Self::names), `delayq partition show Q`, or the `names`
///   field of the hash `delayq_partitions:{Q}`); a Java producer routes a
///   key as delayq does with `CRC32(key bytes) mod N`
///   ([`PartitionLayout::partition_for_key`]). What Java writes to a
///   partition, a partitioned take gets.
/// - **Count**: fixed at creation and stored; a create with another count
///   fails with [`Error::PartitionCountMismatch`] and changes nothing.
/// - **Cost**: an offer costs what an offer to one queue costs; a take
///   tries each partition in turn (one `LPOP` each while all are empty)
///   and then waits on up to four at once, sweeping all of them again
///   every quarter of a second (see [`take_timeout`](Self::take_timeout));
///   each handle transfers every partition (one channel subscription per
///   partition on the client's one subscriber connection).
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::{Client, StringCodec};
///
/// # async fn demo() -> delayq::Result<()> {
/// let client = Client::connect("redis-cluster://127.0.0.1:7000").await?;
/// let orders = client.create_partitioned_queue("orders", 3, StringCodec).await?;
/// orders.offer_keyed("customer-42", &"o-1".to_string(), Duration::from_secs(5)).await?;
/// orders.offer_keyed("customer-42", &"o-2".to_string(), Duration::from_secs(5)).await?; // after o-1
/// orders.offer(&"o-3".to_string(), Duration::ZERO).await?; // round robin
/// let next = orders.take_timeout(Duration::from_secs(10)).await?;
/// println!("{next:?} of {} partitions: {:?}", orders.count(), orders.names());
/// # Ok(()) }
/// ```
pub struct PartitionedQueue<T> {
    layout: Arc<PartitionLayout>,
    core: Arc<Core>,
    codec: Arc<dyn Codec<T>>,
    /// Each partition's delayed queue (offers, and the transfer), partition 0 first.
    delayed: Arc<[DelayedQueue<T>]>,
    /// Each partition's destination list (takes).
    ready: Arc<[BlockingQueue<T>]>,
    /// The next round-robin partition of this handle and its clones.
    next_offer: Arc<AtomicUsize>,
    /// The partition the next take starts from.
    next_take: Arc<AtomicUsize>,
}

impl<T> Clone for PartitionedQueue<T> {
    fn clone(&self) -> Self {
        PartitionedQueue {
            layout: self.layout.clone(),
            core: self.core.clone(),
            codec: self.codec.clone(),
            delayed: self.delayed.clone(),
            ready: self.ready.clone(),
            next_offer: self.next_offer.clone(),
            next_take: self.next_take.clone(),
        }
    }
}

impl<T: 'static> std::fmt::Debug for PartitionedQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartitionedQueue")
            .field("name", &self.layout.queue())
            .field("partitions", &self.layout.names())
            .field("codec", &self.codec.name())
            .finish()
    }
}

/// Creates the layout of `name` with `count` partitions, or opens the one
/// stored with that count.
pub(crate) async fn create<T: 'static>(
    core: Arc<Core>,
    name: &str,
    count: usize,
    codec: Arc<dyn Codec<T>>,
) -> Result<PartitionedQueue<T>> {
    let layout = layout::create(&core, name, count).await?;
    PartitionedQueue::from_layout(core, layout, codec)
}

/// Opens the partitioned queue `name` from its stored layout.
pub(crate) async fn open<T: 'static>(
    core: Arc<Core>,
    name: &str,
    codec: Arc<dyn Codec<T>>,
) -> Result<PartitionedQueue<T>> {
    match layout::read(&core, name).await? {
        Some(layout) => PartitionedQueue::from_layout(core, layout, codec),
        None => Err(Error::NotPartitioned { queue: name.to_owned() }),
    }
}

/// The stored layout of `name`, if it is a partitioned queue.
pub(crate) async fn stored_layout(core: &Core, name: &str) -> Result<Option<PartitionLayout>> {
    layout::read(core, name).await
}

/// The primary serving each of `layout`'s partitions, on a Cluster.
pub(crate) async fn partition_nodes(core: &Core, layout: &PartitionLayout) -> Result<Vec<Option<String>>> {
    layout::nodes(core, layout).await
}

impl<T: 'static> PartitionedQueue<T> {
    fn from_layout(core: Arc<Core>, layout: PartitionLayout, codec: Arc<dyn Codec<T>>) -> Result<Self> {
        let delayed = (layout.names().iter())
            .map(|name| Ok(DelayedQueue::new(core.clone(), name, codec.clone())?.transferring_once_used()))
            .collect::<Result<Vec<_>>>()?;
        let ready = (layout.names().iter())
            .map(|name| BlockingQueue::new(core.clone(), name, codec.clone()))
            .collect::<Result<Vec<_>>>()?;
        Ok(PartitionedQueue {
            layout: Arc::new(layout),
            core,
            codec,
            delayed: delayed.into(),
            ready: ready.into(),
            next_offer: Arc::default(),
            next_take: Arc::default(),
        })
    }

    /// The logical queue's name.
    pub fn name(&self) -> &str {
        self.layout.queue()
    }

    /// How many partitions it has (fixed at creation).
    pub fn count(&self) -> usize {
        self.layout.count()
    }

    /// The partitions' names, partition 0 first: ordinary Redisson queues.
    pub fn names(&self) -> &[String] {
        self.layout.names()
    }

    /// The stored layout: names, slots, the key hash.
    pub fn layout(&self) -> &PartitionLayout {
        &self.layout
    }

    /// Partition `i`'s delayed queue, for what this type does not offer
    /// (pause, limits, dead letters, ids...), or `None` past the count.
    pub fn partition(&self, i: usize) -> Option<&DelayedQueue<T>> {
        self.delayed.get(i)
    }

    /// The partition a value with partition key `key` goes to.
    pub fn partition_for_key(&self, key: impl AsRef<[u8]>) -> usize {
        self.layout.partition_for_key(key.as_ref())
    }

    /// The same queue, running every partition's transfer from now (see
    /// [`DelayedQueue::with_transfer`]). Handles from the client transfer
    /// from their first operation.
    pub fn with_transfer(self) -> Self {
        self.map_delayed(DelayedQueue::with_transfer)
    }

    /// The same queue, running no transfer from this handle (for tools that
    /// only look; see [`DelayedQueue::without_transfer`]).
    pub fn without_transfer(self) -> Self {
        self.map_delayed(DelayedQueue::without_transfer)
    }

    fn map_delayed(mut self, f: impl Fn(DelayedQueue<T>) -> DelayedQueue<T>) -> Self {
        self.delayed = self.delayed.iter().cloned().map(f).collect::<Vec<_>>().into();
        self
    }

    /// A reliable queue per partition, partition 0 first: what a
    /// partitioned worker claims from.
    pub(crate) fn reliable_partitions(&self) -> Result<Vec<ReliableQueue<T>>> {
        (self.layout.names().iter())
            .map(|name| ReliableQueue::new(self.core.clone(), name, self.codec.clone()))
            .collect()
    }

    /// Ready values summed over the partitions (each partition's
    /// destination list, as [`BlockingQueue::len`]); one command per
    /// partition, not one atomic read.
    pub async fn ready_len(&self) -> Result<usize> {
        let lens = futures_util::future::try_join_all(self.ready.iter().map(BlockingQueue::len)).await?;
        Ok(lens.into_iter().sum())
    }

    /// Pending (delayed, not yet due or not yet moved) values summed over
    /// the partitions (as [`DelayedQueue::len`]).
    pub async fn pending_len(&self) -> Result<usize> {
        let lens = futures_util::future::try_join_all(self.delayed.iter().map(DelayedQueue::len)).await?;
        Ok(lens.into_iter().sum())
    }

    /// Each partition's [`QueueStatus`] (partition 0 first) and their sum
    /// (counts added, the earliest `next_due`, `paused` if any partition
    /// is). Each partition is read atomically, the whole is not.
    pub async fn status(&self) -> Result<PartitionedStatus> {
        let partitions = futures_util::future::try_join_all(self.delayed.iter().map(DelayedQueue::status)).await?;
        Ok(PartitionedStatus {
            total: QueueStatus::sum(&partitions),
            partitions,
        })
    }
}

/// A partitioned queue's status: each partition's and the sum
/// ([`PartitionedQueue::status`]).
///
/// ```no_run
/// # async fn demo(queue: delayq::PartitionedQueue<String>) -> delayq::Result<()> {
/// let status = queue.status().await?;
/// println!("{} ready in all", status.total.ready);
/// for (name, partition) in queue.names().iter().zip(&status.partitions) {
///     println!("{name}: {} ready, {} pending", partition.ready, partition.pending);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PartitionedStatus {
    /// The partitions' statuses added up.
    pub total: QueueStatus,
    /// Each partition's, partition 0 first.
    pub partitions: Vec<QueueStatus>,
}
