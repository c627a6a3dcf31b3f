//! Integration tests: every test talks to a real `redis-server` that the
//! harness starts on a free loopback port.

mod harness;

mod auth;
mod blocking_queue;
mod cli;
mod codecs;
mod compat_vectors;
mod delayed_queue;
mod formats;
mod metrics;
mod reliability;
mod reliability_bounds;
mod transfer;
mod worker;
