//! The queues a user holds: delayed, blocking and reliable, on Redisson's keys.
//!
//! Owns [`DelayedQueue`](delayed::DelayedQueue) (Redisson's `RDelayedQueue`),
//! [`BlockingQueue`](blocking::BlockingQueue) (the destination list, Java's
//! `RBlockingQueue`), [`ReliableQueue`](reliable::ReliableQueue) with its
//! deliveries and reapers, [`QueueStatus`](status::QueueStatus), and the
//! [`Core`] they all share: the connections, the scheduler and the per-client
//! registries of deliveries in flight and reapers.
//!
//! May use: `transfer`, `connection`, `wire`, `telemetry`, `error`. Never
//! `Client`: a queue handle holds the [`Core`], and `Client` hands it out.

pub(crate) mod blocking;
mod by_value;
mod core;
pub(crate) mod delayed;
pub(crate) mod reliable;
pub(crate) mod status;
mod transferring;

pub(crate) use self::core::Core;
