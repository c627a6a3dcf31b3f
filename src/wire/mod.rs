//! The wire format: what delayq and Redisson agree on, byte for byte.
//!
//! Owns the packed element layouts ([`format`](mod@format)), every Redis key name of a
//! queue ([`keys`]), a partitioned queue's layout ([`partitions`]), due times as scores ([`time`]) and the codecs that turn a
//! value into the payload bytes a Java codec reads ([`codec`]).
//!
//! May use: `error`. No I/O here: nothing in this folder talks to Redis or
//! spawns a task, so every rule of the format is testable without a server
//! (the layering test in `tests/layers.rs` refuses `fred` and `tokio` here).

pub mod codec;
pub mod format;
pub(crate) mod keys;
pub(crate) mod partitions;
pub(crate) mod time;
