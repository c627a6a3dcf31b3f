//! The queues a user holds: delayed, blocking and reliable, on Redisson's keys.
//!
//! Owns [`DelayedQueue`](delayed::DelayedQueue) (Redisson's `RDelayedQueue`),
//! [`BlockingQueue`](blocking::BlockingQueue) (the destination list, Java's
//! `RBlockingQueue`), [`ReliableQueue`](reliable::ReliableQueue) with its
//! deliveries and reapers, [`PartitionedQueue`](partitioned::PartitionedQueue)
//! (one logical queue over N of them), [`QueueStatus`](status::QueueStatus), and the
//! [`Core`] they all share: the connections and the scheduler behind narrow
//! methods, and each queue kind's per-client registries (`core.rs` says
//! who reaches what).
//!
//! May use: `transfer`, `connection`, `wire`, `telemetry`, `error`. Never
//! `Client`: a queue handle holds the [`Core`], and `Client` hands it out.
//! Inside the folder, files may use each other (a delayed queue hands out
//! its destination as a blocking queue; the core stores the reliable
//! and blocking queues' registries): the layering rule is between folders.

pub(crate) mod attention;
mod batch;
pub(crate) mod blocking;
mod by_value;
mod core;
pub(crate) mod delayed;
pub(crate) mod events;
pub(crate) mod groups;
mod handle;
pub(crate) mod headers;
pub(crate) mod jobs;
pub(crate) mod joined;
pub(crate) mod partitioned;
pub(crate) mod per_queue;
pub(crate) mod priority;
pub(crate) mod registry;
pub(crate) mod reliable;
pub(crate) mod status;
pub(crate) mod tokens;
pub(crate) mod traces;
mod transferring;

pub(crate) use self::core::Core;

/// Most values one `remove_first_n`, `remove_pending` or `drain` call removes: one
/// script run, whose cost must stay bounded (Redis is shared). The scripts
/// also stop near 1 MiB of payload (`DELAYQ_BATCH_BYTES` in
/// `lua/lib/element.lua`).
pub(crate) const MAX_BATCH: usize = 10_000;
