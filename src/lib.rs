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
//! [`StringCodec`], [`LongCodec`], [`BytesCodec`], [`JsonCodec`], [`JacksonCodec`].
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
//! - `cli` (default): the `delayq` command-line tool.
//! - `tls` (default): TLS through rustls (ring), no OpenSSL needed.
//! - `metrics`: counters, gauges and histograms through the `metrics` facade.

#![warn(missing_docs)]

mod blocking_pool;
mod blocking_queue;
mod client;
pub mod codec;
mod delayed_queue;
mod delivery;
mod detached;
mod error;
pub mod format;
mod keys;
mod outstanding;
mod reapers;
mod reliable_queue;
mod reply;
mod request;
mod scheduler;
mod script;
#[doc(hidden)]
pub use script::LIBS as __SCRIPT_LIBS;
mod sentinel_watch;
mod settling;
mod stats;
mod status;
pub mod telemetry;
mod time;
#[cfg(feature = "tls")]
mod tls;
mod worker;

pub use blocking_queue::BlockingQueue;
pub use client::{Client, ClientBuilder, Clock};
pub use codec::KryoCodec;
pub use codec::{BytesCodec, Codec, JacksonCodec, JsonCodec, LongCodec, StringCodec};
pub use delayed_queue::{DelayedQueue, MigrationReport, TransferReport};
pub use delivery::Delivery;
pub use error::{BoxError, DecodeError, Error, Result};
pub use format::Format;
pub use keys::QueueKeys;
pub use reliable_queue::{Reaped, ReliableQueue};
pub use stats::ClientStats;
pub use status::QueueStatus;
#[cfg(feature = "tls")]
pub use tls::Tls;
pub use worker::{Failure, FailureAction, Permanent, RetryPolicy, Worker, WorkerHandle, WorkerReport};

/// Re-export of the Redis client this crate is built on, for its
/// configuration types (`fred::types::config::Config`, `ReconnectPolicy`, ...).
pub use fred;
