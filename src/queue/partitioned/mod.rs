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
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio::time::Instant;

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
///   partition, an ordinary FIFO delayed queue) when their due times differ:
///   elements due in the same millisecond are moved in the order of their
///   bytes, as Redisson's transfer does (groups keep a strict order). Across
///   a [re-partition](crate::Client::repartition), a key's values in the
///   retired partition are taken before its values in the new one. Across keys, and for round-robin
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
/// - **Count**: stored at creation; a create with another count fails with
///   [`Error::PartitionCountMismatch`] and changes nothing. Only
///   [`Client::repartition`](crate::Client::repartition) changes it (a new
///   generation; the old partitions are drained in place). A handle reads
///   the stored layout again every second it is used, so
///   [`names`](Self::names), [`count`](Self::count) and
///   [`layout`](Self::layout) give the layout as last read.
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
    name: Arc<str>,
    core: Arc<Core>,
    codec: Arc<dyn Codec<T>>,
    /// The partitions of the layout last read; replaced when a re-partition
    /// is seen (shared by clones).
    parts: Arc<RwLock<Arc<Parts<T>>>>,
    /// When the stored layout is read again next (see [`REFRESH`]).
    next_read: Arc<Mutex<Instant>>,
    /// How its delayed queues transfer.
    transfer: Transfer,
    /// The next round-robin partition of this handle and its clones.
    next_offer: Arc<AtomicUsize>,
    /// The partition the next take starts from.
    next_take: Arc<AtomicUsize>,
}

/// How often a handle in use reads the stored layout again, to follow a
/// re-partition: an offer made after a re-partition goes to the new
/// partitions once every handle has read it, within about this long.
pub(crate) const REFRESH: Duration = Duration::from_secs(1);

/// The partitions of one reading of the layout.
pub(crate) struct Parts<T> {
    layout: Arc<PartitionLayout>,
    /// Each partition's delayed queue (offers, and the transfer), partition 0 first.
    delayed: Vec<DelayedQueue<T>>,
    /// Each partition's destination list (takes).
    ready: Vec<BlockingQueue<T>>,
    /// The retired partitions' (still transferred, counted and taken from).
    retired_delayed: Vec<DelayedQueue<T>>,
    retired_ready: Vec<BlockingQueue<T>>,
}

/// How a handle's delayed queues transfer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Transfer {
    /// From their first operation (the client's handles).
    OnceUsed,
    /// From now ([`PartitionedQueue::with_transfer`]).
    Now,
    /// Never ([`PartitionedQueue::without_transfer`]).
    Never,
}

impl<T> Clone for PartitionedQueue<T> {
    fn clone(&self) -> Self {
        PartitionedQueue {
            name: self.name.clone(),
            core: self.core.clone(),
            codec: self.codec.clone(),
            parts: self.parts.clone(),
            next_read: self.next_read.clone(),
            transfer: self.transfer,
            next_offer: self.next_offer.clone(),
            next_take: self.next_take.clone(),
        }
    }
}

impl<T: 'static> std::fmt::Debug for PartitionedQueue<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let layout = self.layout();
        f.debug_struct("PartitionedQueue")
            .field("name", &layout.queue())
            .field("partitions", &layout.names())
            .field("retired", &layout.retired())
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

/// Stores the next generation of `name`'s layout with `count` partitions:
/// first the queue's settings (partition 0's pause, limits and group
/// limits) on each new partition, then the layout, then every retired
/// partition sealed (offers off). Each step can be run again: a run after a
/// crash, or with the count the queue has, finishes what is left.
pub(crate) async fn repartition(core: &Arc<Core>, name: &str, count: usize) -> Result<PartitionLayout> {
    let Some(current) = layout::read(core, name).await? else {
        return Err(Error::NotPartitioned { queue: name.to_owned() });
    };
    if current.count() != count {
        let next = current.next(count)?;
        copy_settings(core, &current.names()[0], next.names()).await?;
    }
    let layout = layout::change(core, name, count).await?;
    seal(core, layout.retired()).await?;
    Ok(layout)
}

/// A raw handle on partition `name` (settings and counts only).
fn raw(core: &Arc<Core>, name: &str) -> Result<DelayedQueue<Vec<u8>>> {
    Ok(DelayedQueue::<Vec<u8>>::new(core.clone(), name, Arc::new(crate::BytesCodec))?.without_transfer())
}

/// Puts `from`'s pause, limits and group limits on each of `to`: a new
/// generation's partitions keep the queue's settings. Events settings and
/// schedules are not copied (README).
async fn copy_settings(core: &Arc<Core>, from: &str, to: &[String]) -> Result<()> {
    let source = raw(core, from)?;
    let limits = source.limits().await?;
    let paused = source.is_paused().await?;
    let reliable = ReliableQueue::<Vec<u8>>::new(core.clone(), from, Arc::new(crate::BytesCodec))?;
    let groups = reliable.group_limits().await?;
    for name in to {
        let target = raw(core, name)?;
        if !limits.is_none() {
            target.set_limits(&limits).await?;
        }
        if paused {
            target.pause().await?;
        }
        if groups != crate::queue::groups::GroupLimits::new() {
            ReliableQueue::<Vec<u8>>::new(core.clone(), name, Arc::new(crate::BytesCodec))?
                .set_group_limits(&groups)
                .await?;
        }
    }
    Ok(())
}

/// Switches delayq's offers off on each of `names` (their other limits
/// kept): an offer from a handle still on the old layout is refused
/// ([`Refusal::OffersOff`](crate::error::Refusal::OffersOff)) instead of
/// landing in a partition that may be retired for good, and the handle
/// reads the layout again and offers to the new partitions. Java's offers
/// do not read it.
async fn seal(core: &Arc<Core>, names: &[String]) -> Result<()> {
    for name in names {
        let queue = raw(core, name)?;
        let limits = queue.limits().await?;
        if limits.offers_on() {
            queue.set_limits(&limits.offers(false)).await?;
        }
    }
    Ok(())
}

/// How long [`Client::retire_partitions`](crate::Client::retire_partitions)
/// waits between its two looks at a retired partition: twice the second
/// after which a handle in use reads the layout again, and a second, so that every
/// handle in use has read the new layout and offers made before have
/// landed.
pub const RETIRE_GRACE: Duration = Duration::from_secs(3);

/// What [`Client::retire_partitions`](crate::Client::retire_partitions)
/// did: the retired partitions it dropped from the layout, and those that
/// still hold values (with how many).
///
/// ```no_run
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let retirement = client.retire_partitions("orders").await?;
/// if retirement.holding.is_empty() {
///     println!("every old partition retired; layout now {:?}", retirement.layout.names());
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retirement {
    /// The retired partitions dropped now (no longer read).
    pub retired: Vec<String>,
    /// Those kept: still holding values (ready, delayed, in flight, dead
    /// letters, counted together), or one that got a value during the wait.
    pub holding: Vec<(String, u64)>,
    /// The layout after.
    pub layout: PartitionLayout,
}

/// Drops the drained retired partitions of `name` from its layout.
pub(crate) async fn retire_drained(core: &Arc<Core>, name: &str) -> Result<Retirement> {
    let Some(layout) = layout::read(core, name).await? else {
        return Err(Error::NotPartitioned { queue: name.to_owned() });
    };
    if layout.retired().is_empty() {
        return Ok(Retirement {
            retired: Vec::new(),
            holding: Vec::new(),
            layout,
        });
    }
    // Sealed first (offers off; a re-partition did it already unless it
    // stopped half way): what a look after the seal finds empty gets
    // nothing more from delayq's offers.
    seal(core, layout.retired()).await?;
    let first = holdings(core, layout.retired()).await?;
    let empty: Vec<String> = (first.iter())
        .filter(|(_, n)| *n == 0)
        .map(|(name, _)| name.clone())
        .collect();
    let mut holding: Vec<(String, u64)> = first.into_iter().filter(|(_, n)| *n > 0).collect();
    let mut retired = Vec::new();
    if !empty.is_empty() {
        tokio::time::sleep(RETIRE_GRACE).await;
        for (name, n) in holdings(core, &empty).await? {
            if n == 0 {
                retired.push(name);
            } else {
                holding.push((name, n));
            }
        }
    }
    let layout = if retired.is_empty() {
        layout
    } else {
        layout::retire(core, &layout, &retired).await?
    };
    // Only what the stored layout no longer names was retired.
    retired.retain(|name| !layout.retired().contains(name));
    // Retired partitions it did not look at (a re-partition in between
    // added them) are still read: listed as holding, unknown count, so
    // that nobody takes "nothing held" for "all retired".
    for name in layout.retired() {
        if !holding.iter().any(|(n, _)| n == name) {
            let held = holdings(core, std::slice::from_ref(name)).await?;
            holding.extend(held);
        }
    }
    Ok(Retirement {
        retired,
        holding,
        layout,
    })
}

/// What each of `names` holds: values ready, delayed, in flight, dead or
/// quarantined, counted together.
async fn holdings(core: &Arc<Core>, names: &[String]) -> Result<Vec<(String, u64)>> {
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let s = raw(core, name)?.status().await?;
        // Sets some counts may share are added all the same: a partition
        // is retired only when every one is 0.
        let held = s.pending
            + s.ready
            + s.in_flight
            + s.dead_letters
            + s.quarantined
            + s.priority_pending
            + s.priority_ready
            + s.grouped_pending
            + s.grouped_ready;
        out.push((name.clone(), held));
    }
    Ok(out)
}

/// The primary serving each of `layout`'s partitions, on a Cluster.
pub(crate) async fn partition_nodes(core: &Core, layout: &PartitionLayout) -> Result<Vec<Option<String>>> {
    layout::nodes(core, layout).await
}

impl<T: 'static> PartitionedQueue<T> {
    fn from_layout(core: Arc<Core>, layout: PartitionLayout, codec: Arc<dyn Codec<T>>) -> Result<Self> {
        let transfer = Transfer::OnceUsed;
        let name = layout.queue().to_owned();
        let parts = Parts::new(&core, &codec, layout, transfer, None)?;
        Ok(PartitionedQueue {
            name: name.into(),
            core,
            codec,
            parts: Arc::new(RwLock::new(Arc::new(parts))),
            next_read: Arc::new(Mutex::new(Instant::now() + REFRESH)),
            transfer,
            next_offer: Arc::default(),
            next_take: Arc::default(),
        })
    }

    /// The partitions as last read, without reading the layout again.
    pub(crate) fn parts_now(&self) -> Arc<Parts<T>> {
        self.parts.read().clone()
    }

    /// The partitions to use now: the layout is read again if
    /// [`REFRESH`] has passed since its last reading, and the partitions
    /// are replaced if a re-partition changed it. A failed reading keeps
    /// the partitions known (the operation then meets Redis's error itself).
    pub(crate) async fn parts(&self) -> Arc<Parts<T>> {
        let due = {
            let mut next = self.next_read.lock();
            let now = Instant::now();
            let due = now >= *next;
            if due {
                *next = now + REFRESH;
            }
            due
        };
        if due && let Err(error) = self.refresh().await {
            tracing::debug!(queue = self.name(), %error, "could not read the partitioned queue's layout again");
        }
        self.parts_now()
    }

    /// Reads the stored layout and takes it if it changed.
    pub(crate) async fn refresh(&self) -> Result<()> {
        let known = self.parts_now();
        let Some(stored) = layout::read(&self.core, known.layout.queue()).await? else {
            return Ok(());
        };
        if stored == *known.layout {
            return Ok(());
        }
        let parts = Parts::new(&self.core, &self.codec, stored, self.transfer, Some(&known))?;
        *self.parts.write() = Arc::new(parts);
        Ok(())
    }

    /// The logical queue's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many partitions it has (as last read: a re-partition changes it).
    pub fn count(&self) -> usize {
        self.parts_now().layout.count()
    }

    /// The partitions' names as last read, partition 0 first: ordinary
    /// Redisson queues.
    pub fn names(&self) -> Vec<String> {
        self.parts_now().layout.names().to_vec()
    }

    /// The layout as last read: names, slots, the key hash, the generation
    /// and the retired partitions still read.
    pub fn layout(&self) -> Arc<PartitionLayout> {
        self.parts_now().layout.clone()
    }

    /// Partition `i`'s delayed queue (as last read), for what this type
    /// does not offer (pause, limits, dead letters, ids...), or `None` past
    /// the count.
    pub fn partition(&self, i: usize) -> Option<DelayedQueue<T>> {
        self.parts_now().delayed.get(i).cloned()
    }

    /// The partition a value with partition key `key` goes to (in the
    /// layout as last read).
    pub fn partition_for_key(&self, key: impl AsRef<[u8]>) -> usize {
        self.parts_now().layout.partition_for_key(key.as_ref())
    }

    /// The same queue, running every partition's transfer from now (see
    /// [`DelayedQueue::with_transfer`]). Handles from the client transfer
    /// from their first operation.
    pub fn with_transfer(self) -> Self {
        self.transferring(Transfer::Now)
    }

    /// The same queue, running no transfer from this handle (for tools that
    /// only look; see [`DelayedQueue::without_transfer`]).
    pub fn without_transfer(self) -> Self {
        self.transferring(Transfer::Never)
    }

    fn transferring(mut self, transfer: Transfer) -> Self {
        let known = self.parts_now();
        let parts = (known.delayed.iter().chain(&known.retired_delayed))
            .map(|q| transfer.apply(q.clone()))
            .collect::<Vec<_>>();
        let (current, retired) = parts.split_at(known.delayed.len());
        let parts = Parts {
            layout: known.layout.clone(),
            delayed: current.to_vec(),
            ready: known.ready.clone(),
            retired_delayed: retired.to_vec(),
            retired_ready: known.retired_ready.clone(),
        };
        self.parts = Arc::new(RwLock::new(Arc::new(parts)));
        self.transfer = transfer;
        self
    }

    /// A reliable queue for partition `name`: what a partitioned worker
    /// claims from.
    pub(crate) fn reliable_partition(&self, name: &str) -> Result<ReliableQueue<T>> {
        ReliableQueue::new(self.core.clone(), name, self.codec.clone())
    }

    /// Ready values summed over the partitions, retired ones included (each
    /// partition's destination list, as [`BlockingQueue::len`]); one
    /// command per partition, not one atomic read.
    pub async fn ready_len(&self) -> Result<usize> {
        let parts = self.parts().await;
        let lists = parts.ready.iter().chain(&parts.retired_ready);
        let lens = futures_util::future::try_join_all(lists.map(BlockingQueue::len)).await?;
        Ok(lens.into_iter().sum())
    }

    /// Pending (delayed, not yet due or not yet moved) values summed over
    /// the partitions, retired ones included (as [`DelayedQueue::len`]).
    pub async fn pending_len(&self) -> Result<usize> {
        let parts = self.parts().await;
        let queues = parts.delayed.iter().chain(&parts.retired_delayed);
        let lens = futures_util::future::try_join_all(queues.map(DelayedQueue::len)).await?;
        Ok(lens.into_iter().sum())
    }

    /// Each partition's [`QueueStatus`] (partition 0 first), each retired
    /// partition's, and their sum (counts added, the earliest `next_due`,
    /// `paused` if any partition is). Each partition is read atomically,
    /// the whole is not.
    pub async fn status(&self) -> Result<PartitionedStatus> {
        let parts = self.parts().await;
        let partitions = futures_util::future::try_join_all(parts.delayed.iter().map(DelayedQueue::status)).await?;
        let retired =
            futures_util::future::try_join_all(parts.retired_delayed.iter().map(DelayedQueue::status)).await?;
        let all: Vec<QueueStatus> = partitions.iter().chain(&retired).copied().collect();
        Ok(PartitionedStatus {
            total: QueueStatus::sum(&all),
            partitions,
            retired,
        })
    }
}

impl<T: 'static> Parts<T> {
    /// The handles of `layout`'s partitions; those `known` already has are
    /// reused (their transfers go on).
    fn new(
        core: &Arc<Core>,
        codec: &Arc<dyn Codec<T>>,
        layout: PartitionLayout,
        transfer: Transfer,
        known: Option<&Parts<T>>,
    ) -> Result<Self> {
        let delayed_of = |name: &String| -> Result<DelayedQueue<T>> {
            if let Some(known) = known
                && let Some(queue) = (known.delayed.iter().chain(&known.retired_delayed)).find(|q| q.name() == name)
            {
                return Ok(queue.clone());
            }
            Ok(transfer.apply(DelayedQueue::new(core.clone(), name, codec.clone())?))
        };
        let ready_of = |name: &String| BlockingQueue::new(core.clone(), name, codec.clone());
        Ok(Parts {
            delayed: layout.names().iter().map(delayed_of).collect::<Result<_>>()?,
            ready: layout.names().iter().map(ready_of).collect::<Result<_>>()?,
            retired_delayed: layout.retired().iter().map(delayed_of).collect::<Result<_>>()?,
            retired_ready: layout.retired().iter().map(ready_of).collect::<Result<_>>()?,
            layout: Arc::new(layout),
        })
    }

    /// The layout these partitions are of.
    pub(crate) fn layout(&self) -> &Arc<PartitionLayout> {
        &self.layout
    }

    /// Values of the retired partitions that are ready or in flight, and
    /// grouped values waiting (a held retry keeps its group's later values
    /// waiting): one status read each.
    pub(crate) async fn retired_unfinished(&self) -> Result<u64> {
        let statuses =
            futures_util::future::try_join_all(self.retired_delayed.iter().map(DelayedQueue::status)).await?;
        Ok((statuses.iter())
            .map(|s| s.ready + s.priority_ready + s.grouped_ready + s.grouped_pending + s.in_flight)
            .sum())
    }
}

impl Transfer {
    fn apply<T: 'static>(self, queue: DelayedQueue<T>) -> DelayedQueue<T> {
        match self {
            Transfer::OnceUsed => queue.transferring_once_used(),
            Transfer::Now => queue.with_transfer(),
            Transfer::Never => queue.without_transfer(),
        }
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
    /// Each retired partition's (a re-partition's old ones, still read
    /// until they are retired for good), as [`PartitionLayout::retired`]
    /// names them.
    pub retired: Vec<QueueStatus>,
}
