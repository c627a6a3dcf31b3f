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
//! - `tls` (default): TLS through rustls (ring), no OpenSSL needed.
//! - `metrics`: counters, gauges and histograms through the `metrics` facade.
//!
//! # The other crates of the workspace
//!
//! - `delayq-codec`: Redisson's value formats (the codecs, re-exported here
//!   as [`codec`]), with no Redis and no runtime.
//! - `delayq-dashboard`: the web dashboard and Prometheus `/metrics`, on this
//!   crate's public API.
//! - `delayq-cli`: the `delayq` command-line tool.

#![warn(missing_docs, unreachable_pub, missing_debug_implementations)]

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
mod error;
mod queue;
mod schedule;
pub mod telemetry;
mod transfer;
mod wire;
mod worker;

#[doc(hidden)]
pub use connection::script::LIBS as __SCRIPT_LIBS;
pub use wire::{codec, format};

pub use client::{Client, ClientBuilder};
#[cfg(feature = "tls")]
pub use connection::tls::Tls;
pub use error::{BoxError, DecodeError, Error, RedisError, RedisErrorKind, Result};
pub use queue::blocking::BlockingQueue;
pub use queue::delayed::{
    DelayedQueue, ElementOutcome, MigrationReport, PendingElement, PendingError, Purged, RecodeReport, Scheduled,
    TransferReport,
};
pub use queue::events::{Event, EventKind, Events, EventsFrom, DEFAULT_EVENTS_MAX_LEN};
pub use queue::reliable::delivery::Delivery;
pub use queue::reliable::{DeadLetter, DeadLetterKey, DeadLetterReasons, Reaped, ReasonGroup, ReliableQueue};
pub use queue::status::QueueStatus;
pub use schedule::{
    every, IntoScheduleSpec, Misfire, ScheduleInfo, ScheduleRunner, ScheduleSpec, Schedules, DEFAULT_MISFIRE_AFTER,
};
pub use transfer::{ClientStats, Clock};
pub use wire::codec::{BytesCodec, Codec, JacksonCodec, JsonCodec, KryoCodec, LongCodec, StringCodec};
pub use wire::format::Format;
pub use wire::keys::QueueKeys;
#[cfg(feature = "tower")]
pub use worker::Job;
pub use worker::{Failure, FailureAction, Permanent, RetryPolicy, Worker, WorkerHandle, WorkerReport};

/// Re-export of the Redis client this crate is built on, for its
/// configuration types (`fred::types::config::Config`, `ReconnectPolicy`, ...).
pub use fred;
