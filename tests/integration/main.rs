//! Integration tests: every test talks to a real `redis-server` that the
//! harness starts on a free loopback port.

#[path = "../support/fault_proxy.rs"]
#[allow(clippy::enum_variant_names)] // Fault::Lose*: each name says what is lost
mod fault_proxy;
mod harness;
mod harness_own;
#[path = "../support/kryo_vectors.rs"]
mod kryo_vectors;
#[path = "../support/schedules.rs"]
mod schedule_helpers;

mod auth;
mod blocking_queue;
mod bulk_offers;
mod codecs;
mod compat_vectors;
mod dead_letters;
mod delayed_queue;
mod elements;
mod events;
mod formats;
mod handles;
mod ids;
mod joined_offers;
mod joined_waits;
mod kryo;
mod lifecycle;
mod lost_replies;
mod metrics;
mod pause;
mod publishes;
mod rate_limit;
mod recode;
mod reliability;
mod reliability_bounds;
mod schedule;
mod subscriber;
mod sweep;
mod take_faults;
#[cfg(feature = "opentelemetry")]
mod traces;
mod transfer;
mod worker;
mod worker_batches;
mod worker_prefetch;
#[cfg(feature = "tower")]
mod worker_service;
