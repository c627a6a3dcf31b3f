//! Redisson-compatible delayed queues for Rust.
//!
//! `delayq` lets Rust services share delayed queues with Java services that
//! use Redisson's `RDelayedQueue`: the same Redis keys, the same packed bytes,
//! the same script semantics. A Java service calls
//! `delayedQueue.offer(order, 10, MINUTES)`; ten minutes later a Rust worker's
//! [`BlockingQueue::take`] returns it, and the reverse. Both fleets can run side
//! by side during a migration.
//!
//! # Usage
//!
//! ```no_run
//! use std::time::Duration;
//! use delayq::{Client, StringCodec};
//!
//! # async fn demo() -> delayq::Result<()> {
//! let client = Client::connect("redis://127.0.0.1:6379").await?;
//!
//! // Producer side: Java's redisson.getDelayedQueue(redisson.getBlockingQueue("orders", StringCodec.INSTANCE))
//! let delayed = client.delayed_queue("orders", StringCodec)?;
//! delayed.offer(&"order-42".to_string(), Duration::from_secs(600)).await?;
//!
//! // Consumer side: Java's redisson.getBlockingQueue("orders", StringCodec.INSTANCE).take()
//! let orders = client.blocking_queue("orders", StringCodec)?;
//! let order: String = orders.take().await?;
//! # Ok(()) }
//! ```
//!
//! The [`guide`] has a page per topic: guarantees, Java interop and codecs,
//! delayed, reliable and worker consumption, schedules, events and traces,
//! operations, deployments, performance.
//!
//! # Implementation
//!
//! A delayed queue named `N` is three Redis keys and a channel (see
//! [`QueueKeys`]): a ZSET of packed elements scored by due time, a LIST of the
//! same elements in offer order, the destination LIST `N`, and a pub/sub
//! channel on which offers publish new head due times. Elements are packed in
//! Redisson's modern (`Bc0Lc0`) or legacy (`dLc0`) layout ([`format`](mod@format)); every
//! read accepts both. Each operation is one Lua script from `lua/`.
//!
//! Each [`Client`] runs one transfer scheduler: a timing wheel of every
//! registered queue's next due time, woken by the queues' channels through one
//! subscriber connection, that runs the transfer script at each due time and
//! drains backlogs batch by batch. Any number of Rust and Java processes may
//! transfer the same queue at once: the script is atomic.
//!
//! Values are encoded by a [`Codec`] matching the Java side's:
//! [`StringCodec`], [`LongCodec`], [`BytesCodec`], [`JsonCodec`], [`JacksonCodec`],
//! and [`KryoCodec`] for Redisson's default `Kryo5Codec`.
//!
//! # Deployments
//!
//! The URL given to [`Client::connect`] or [`ClientBuilder::url`] picks one
//! server (`redis://`), a Redis Cluster (`redis-cluster://`) or a master found
//! through Sentinel (`redis-sentinel://`, failovers followed as the sentinels
//! announce them); `rediss…://` and `Tls` (feature `tls`, on by default) add
//! TLS. ACL users go in the URL.
//!
//! # Features
//!
//! - `tls` (default): `rediss://` URLs and [`Tls`] through rustls (ring),
//!   no OpenSSL needed.
//! - `metrics`: counters, gauges and histograms through the `metrics`
//!   facade ([`telemetry`]).
//! - `tower`: [`Worker::run_service`], a `tower::Service` as the handler,
//!   so tower layers (timeout, concurrency limit, load shedding) wrap it.
//! - `opentelemetry`: W3C trace contexts carried from an offer made inside
//!   a span to the handler of its value (`telemetry::trace_context`).
//!
//! # The API's shape
//!
//! The root holds what most programs name: [`Client`] and its builder, the
//! three queue handles ([`DelayedQueue`], [`BlockingQueue`],
//! [`ReliableQueue`] with its [`Delivery`]), [`Worker`], the codecs,
//! [`QueueKeys`], [`QueueStatus`], [`Error`] and [`Result`]; `use
//! delayq::prelude::*` brings the common ones. The rest is grouped by what
//! a program is doing: [`worker`], [`schedule`], [`events`],
//! [`dead_letter`], [`pending`] (a delayed queue's elements one at a time),
//! [`attention`] (which queues need an operator first), [`search`] (by id
//! or text across queues),
//! [`report`] (what maintenance calls return), [`error`], [`codec`],
//! [`format`](mod@format), [`telemetry`].
//!
//! Settings follow one rule. A builder, used once and consumed
//! ([`ClientBuilder`], [`Worker`], [`worker::RetryPolicy`],
//! [`schedule::ScheduleSpec`]), takes bare names (`.concurrency(8)`) and
//! ends with `build` or `run`. A queue handle is a value, not a builder:
//! its `with_*` methods return a copy with one setting changed (as
//! `Path::with_extension` does), and the handle it came from keeps its
//! own. Calls that act on a queue as a whole (events, schedules) take any
//! handle of it, or its [`QueueKeys`] for a tool that has only the name.
//!
//! delayq is built on [`fred`], and fred is part of its API: the builder
//! takes fred's configuration, [`Client::redis`] gives fred's pool for
//! commands of your own, and [`Error`] converts from fred's errors. A new
//! major version of fred is a new major version of delayq.
//!
//! # The other crates of the workspace
//!
//! - `delayq-codec`: Redisson's value formats (the codecs, re-exported here
//!   as [`codec`]), with no Redis and no runtime.
//! - `delayq-dashboard`: the web dashboard and Prometheus `/metrics`, on this
//!   crate's public API.
//! - `delayq-cli`: the `delayq` command-line tool.

#![warn(missing_docs, unreachable_pub, missing_debug_implementations)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// Layers, each using only the ones below it (checked by `tests/layers.rs`;
// see ARCHITECTURE.md):
//   client      the facade a user holds
//   worker      handler loops over reliable queues
//   schedule    recurring schedules and their runner (beside worker)
//   queue       delayed, blocking and reliable queues, and their shared core
//   transfer    the scheduler that moves due elements
//   connection  connections, scripts, give-backs
//   wire        element formats, key names, codecs (no I/O)
//   error, telemetry

mod client;
mod connection;
pub mod error;
mod queue;
pub mod schedule;
pub mod telemetry;
mod transfer;
mod wire;
pub mod worker;

pub use wire::{codec, format};

// The names most programs need; the rest are in the modules below, grouped
// by what a user is doing (as fred's and sqlx's roots are).
pub use client::{Client, ClientBuilder};
pub use connection::durable::Durability;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub use connection::tls::Tls;
pub use error::{Error, Result};
pub use queue::blocking::{BlockingQueue, ReadyEntry};
pub use queue::delayed::{DelayedQueue, Expiry, OfferOptions};
pub use queue::headers::Headers;
pub use queue::partitioned::{PartitionedQueue, PartitionedStatus, Retirement, RETIRE_GRACE};
pub use queue::priority::Priority;
pub use queue::reliable::delivery::Delivery;
pub use queue::reliable::ReliableQueue;
pub use queue::status::{QueueStatus, QueueTotals};
pub use transfer::Clock;
pub use wire::codec::{BytesCodec, Codec, JacksonCodec, JsonCodec, KryoCodec, LongCodec, StringCodec};
pub use wire::keys::QueueKeys;
pub use wire::partitions::{PartitionLayout, MAX_PARTITIONS, MAX_RETIRED};
pub use worker::Worker;

/// The pending elements of a delayed queue, one at a time: what a page of
/// them holds ([`DelayedQueue::pending_page`]), what an action on one came
/// to, and the due time of an element offered with an id.
///
/// ```no_run
/// use delayq::pending::ElementOutcome;
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let page = queue.pending_page(0, 50).await?;
/// if let Some(first) = page.first() {
///     match queue.delete_element(&first.raw).await? {
///         ElementOutcome::Done { due } => println!("deleted (it was due {due:?})"),
///         other => println!("not deleted: {other:?}"),
///     }
/// }
/// # Ok(()) }
/// ```
pub mod pending {
    pub use crate::queue::delayed::{ElementOutcome, PendingElement, PendingError, Scheduled};
}

/// What long-running and maintenance operations report: a migration, a
/// recode, a one-off transfer, a purge, a reaper's pass, a client's
/// transfer statistics.
///
/// ```no_run
/// # async fn demo(queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let report: delayq::report::TransferReport = queue.transfer_now().await?;
/// println!("{report:?}");
/// # Ok(()) }
/// ```
pub mod report {
    pub use crate::queue::delayed::{MigrationReport, Purged, RecodeReport, TransferReport};
    pub use crate::queue::reliable::Reaped;
    pub use crate::transfer::ClientStats;
}

/// Lifecycle events: each change of a queue (offered, transferred, claimed,
/// acked, retried, dead-lettered, ...) as an entry of a bounded stream in
/// the queue's slot, written by the script that made the change, while the
/// queue's events are on ([`Client::enable_events`]).
///
/// ```no_run
/// use futures_util::StreamExt;
/// use delayq::events::EventsFrom;
/// # async fn demo(client: delayq::Client, queue: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// client.enable_events(&queue, delayq::events::DEFAULT_EVENTS_MAX_LEN).await?;
/// let mut events = client.events(&queue)?.from(EventsFrom::Now);
/// while let Some(event) = events.next().await {
///     println!("{:?}", event?.kind);
/// }
/// # Ok(()) }
/// ```
pub mod events {
    pub use crate::queue::events::{Event, EventKind, Events, EventsFrom, DEFAULT_EVENTS_MAX_LEN};
}

/// A queue's admission limits: a maximum size, a maximum payload, and
/// switches that turn offers or takes off, for every delayq client of the
/// queue ([`DelayedQueue::set_limits`]).
///
/// ```no_run
/// use delayq::limits::{Limits, WhenFull};
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let queue = client.delayed_queue("emails", delayq::StringCodec)?
///     .when_full(WhenFull::Wait(std::time::Duration::from_secs(10)));
/// queue.set_limits(&Limits::none().max_size(100_000).max_payload(256 * 1024)).await?;
/// println!("{}", queue.limits().await?);
/// # Ok(()) }
/// ```
pub mod limits {
    pub use crate::queue::delayed::{Limits, WhenFull};
}

/// Deduplication windows: an offer whose id or payload was offered within
/// the window is answered [`Offered::Duplicate`](dedup::Offered::Duplicate)
/// and queues nothing ([`DelayedQueue::offer_dedup`]).
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::dedup::{Dedup, Offered};
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let queue = client.delayed_queue("invoices", delayq::StringCodec)?;
/// let window = Dedup::by_payload(Duration::from_secs(300));
/// if queue.offer_dedup(&"invoice 7".into(), Duration::ZERO, &window).await? == Offered::Duplicate {
///     println!("sent within the last five minutes already");
/// }
/// # Ok(()) }
/// ```
pub mod dedup {
    pub use crate::queue::delayed::{Dedup, DedupKey, Offered};
}

/// A reliable queue's dead letters: the values given up on, with why and
/// when, read a page at a time and requeued or deleted exactly.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// for letter in queue.dead_letter_page(0, 20).await? {
///     let letter: delayq::dead_letter::DeadLetter<String> = letter;
///     println!("{:?}: {:?}", letter.reason, letter.value);
/// }
/// # Ok(()) }
/// ```
pub mod dead_letter {
    pub use crate::queue::reliable::{
        reason_shape, BulkOutcome, DeadLetter, DeadLetterKey, DeadLetterReasons, ReasonGroup, ShapeGroup,
    };
}

/// Which queues need an operator first, and the other orders a list of
/// queues is shown in: the one rule the dashboard's overview and `delayq
/// list` both rank by ([`Attention`](attention::Attention),
/// [`QueueOrder`](attention::QueueOrder)).
///
/// ```
/// use std::time::SystemTime;
/// use delayq::attention::{Attention, Signals};
/// use delayq::QueueStatus;
///
/// let mut status = QueueStatus::default();
/// status.dead_letters = 3;
/// let attention = Attention::of(Some(&status), Signals::new(), SystemTime::now());
/// assert_eq!(attention.reasons(), ["3 dead"]);
/// ```
pub mod attention {
    pub use crate::queue::attention::{
        name_matches, untaken, Attention, OrderKey, QueueOrder, Signals, LATE, LONG_PAUSE,
    };
}

/// Search across queues, by id or by text, through pending elements, ready
/// values and dead letters, a bounded number of values per call
/// ([`Client::search`]).
///
/// ```no_run
/// use delayq::search::Search;
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let page = client.search(&Search::new("ord-42").queue("orders"), None).await?;
/// println!("{} found, searched {} of {}", page.matches.len(), page.searched, page.total);
/// # Ok(()) }
/// ```
pub mod search {
    pub use crate::client::search::{
        Search, SearchCursor, SearchMatch, SearchPage, ValueState, DEFAULT_BUDGET, DEFAULT_LIMIT, MAX_BUDGET, MAX_LIMIT,
    };
}

/// Groups: per-key order across every consumer. Values offered with
/// [`OfferOptions::group`](crate::OfferOptions::group) (or
/// [`sequential`](crate::OfferOptions::sequential), Redisson PRO's
/// `SEQUENTIAL` mode) run one at a time per key (or
/// [`GroupLimits::concurrency`](crate::groups::GroupLimits::concurrency) at a time), in offer order, across every
/// process; different keys run side by side.
///
/// Guarantees: a key's values start in order, at most its concurrency at
/// once, wherever its consumers run; a failed value holds its key until its
/// retry is due ([`OnFailure::Hold`](crate::groups::OnFailure::Hold), the default) or lets it go on
/// ([`OnFailure::Skip`](crate::groups::OnFailure::Skip)); a dead letter frees its key; a value whose
/// consumer died goes back to its key's head after its visibility timeout;
/// keys are taken round robin, one value per key a turn, so a key with a
/// long line cannot starve the others; a claim moves at most 100 due values
/// and keys, whatever the number of keys. **What Java sees**: nothing —
/// grouped values live in delayq's keys of the queue's slot
/// (`delayq_group_*`), so a Java consumer neither takes nor reorders them,
/// and its plain values run beside them. Limits: a grouped value has no
/// priority, TTL or headers; a requeued dead letter comes back ungrouped;
/// plain blocking takes ([`BlockingQueue`]) do not
/// take grouped values.
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::groups::{GroupLimits, OnFailure};
/// use delayq::OfferOptions;
///
/// # async fn demo(client: delayq::Client) -> delayq::Result<()> {
/// let orders = client.delayed_queue("orders", delayq::StringCodec)?;
/// orders.offer_with(&"charge".to_owned(), &OfferOptions::default().group("customer-7")).await?;
/// let consumers = client.reliable_queue("orders", delayq::StringCodec)?;
/// consumers.set_group_limits(&GroupLimits::new().on_failure(OnFailure::Skip)).await?;
/// # Ok(()) }
/// ```
pub mod groups {
    pub use crate::queue::groups::{GroupLimits, OnFailure, MAX_GROUP_KEY};
}

/// Batches: jobs offered together
/// ([`DelayedQueue::offer_batch`](crate::DelayedQueue::offer_batch)), with
/// a completion offered to a queue of choice once every one has ended.
///
/// ```no_run
/// use std::time::Duration;
/// use delayq::batch::BatchOptions;
///
/// # async fn demo(rows: delayq::DelayedQueue<String>) -> delayq::Result<()> {
/// let id = rows
///     .offer_batch(
///         [("a".to_owned(), Duration::ZERO)],
///         &BatchOptions::new().on_complete("rows-done", serde_json::json!({})),
///     )
///     .await?;
/// let status = rows.batch(&id).await?;
/// # Ok(()) }
/// ```
pub mod batch {
    pub use crate::queue::delayed::{
        BatchOptions, BatchState, BatchStatus, DEFAULT_BATCH_KEEP, MAX_COMPLETION_BYTES, MAX_EQUAL_MEMBERS,
    };
}

/// Job histories: where a value offered with an id is now (pending, ready,
/// in flight, dead-lettered, handled) and its last attempts, with their
/// consumers, times, outcomes and errors.
///
/// ```no_run
/// # async fn demo(queue: delayq::ReliableQueue<String>) -> delayq::Result<()> {
/// let history: delayq::jobs::JobHistory = queue.job("order-42").await?;
/// println!("{} after {} attempts", history.state.name(), history.attempts_total);
/// # Ok(()) }
/// ```
pub mod jobs {
    pub use crate::queue::jobs::{
        Attempt, CancelOutcome, JobHistory, JobResult, JobState, Progress, DEFAULT_HISTORY_TTL, MAX_ATTEMPTS,
        MAX_ERROR_BYTES, MAX_PROGRESS_BYTES, MAX_RESULT_BYTES,
    };
}

/// The names most programs use, for a glob import.
///
/// ```no_run
/// use delayq::prelude::*;
/// use std::time::Duration;
///
/// # async fn demo() -> Result<()> {
/// let client = Client::connect("redis://127.0.0.1:6379").await?;
/// let orders: DelayedQueue<String> = client.delayed_queue("orders", StringCodec)?;
/// orders.offer(&"order-1".into(), Duration::from_secs(60)).await?;
/// # Ok(()) }
/// ```
pub mod prelude {
    pub use crate::schedule::every;
    pub use crate::worker::{Permanent, RetryPolicy};
    pub use crate::{
        BlockingQueue, BytesCodec, Client, Codec, DelayedQueue, Delivery, Error, JacksonCodec, JsonCodec, KryoCodec,
        LongCodec, ReliableQueue, Result, StringCodec, Worker,
    };
}

/// The guide: one page per topic, the files of the repository's `docs/`
/// folder, so that every example in them is compiled with the crate's
/// doctests. Documentation only: nothing here is code.
#[cfg(any(doc, doctest))]
pub mod guide {
    #![doc = include_str!("../docs/README.md")]

    #[doc = include_str!("../docs/guarantees.md")]
    pub mod guarantees {}
    #[doc = include_str!("../docs/java-interop.md")]
    pub mod java_interop {}
    #[doc = include_str!("../docs/delayed-queue.md")]
    pub mod delayed_queue {}
    #[doc = include_str!("../docs/reliable-queue.md")]
    pub mod reliable_queue {}
    #[doc = include_str!("../docs/worker.md")]
    pub mod worker {}
    #[doc = include_str!("../docs/tower.md")]
    #[cfg(feature = "tower")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub mod tower {}
    #[doc = include_str!("../docs/schedules.md")]
    pub mod schedules {}
    #[doc = include_str!("../docs/events-and-traces.md")]
    pub mod events_and_traces {}
    #[doc = include_str!("../docs/operations.md")]
    pub mod operations {}
    #[doc = include_str!("../docs/deployments.md")]
    // Its TLS example needs `Tls`: without the feature, the page's examples are not compiled.
    #[cfg_attr(doctest, cfg(feature = "tls"))]
    pub mod deployments {}
    #[doc = include_str!("../docs/performance.md")]
    pub mod performance {}
    #[doc = include_str!("../compat/README.md")]
    pub mod compat {}
}

/// The README's examples, compiled with the doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Re-export of the Redis client this crate is built on (fred 10), for its
/// configuration types (`fred::types::config::Config`, `ReconnectPolicy`,
/// ...) and for commands of your own on [`Client::redis`].
///
/// fred is part of delayq's API: [`ClientBuilder::config`],
/// [`ClientBuilder::customize`] and [`Client::redis`] take or give its types,
/// and [`Error`] converts from its errors. A new major version of fred is a
/// new major version of delayq.
pub use fred;
