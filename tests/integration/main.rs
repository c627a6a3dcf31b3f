//! Integration tests: every test talks to a real `redis-server` that the
//! harness starts on a free loopback port.
//!
//! The harness is the `delayq-test-support` package; `harness`,
//! `fault_proxy` and `schedule_helpers` keep the paths tests used when it
//! was included here file by file.

mod harness;
#[allow(unused_imports)]
use delayq_test_support::{fault_proxy, schedules as schedule_helpers};

mod auth;
mod batch_handlers;
mod batches;
mod blocking_queue;
mod bulk_offers;
mod cancel_jobs;
mod codecs;
mod compat_vectors;
mod concurrency_limit;
mod dead_letters;
mod dedup;
mod delayed_queue;
mod durable;
mod elements;
mod events;
mod formats;
mod groups;
mod groups_review;
mod handles;
mod headers;
mod headers_faults;
mod ids;
mod job_history;
mod jobs_review;
mod joined_offers;
mod joined_waits;
mod kryo;
mod lifecycle;
mod limits;
mod lost_replies;
mod metrics;
mod nack_kinds;
mod partitioned;
mod partitioned_review;
mod pause;
mod priorities;
mod publishes;
mod rate_limit;
mod recode;
mod reliability;
mod reliability_bounds;
mod repartition;
mod repartition_review;
mod schedule;
mod schedule_actions;
mod search;
mod subscriber;
mod sweep;
mod take_faults;
mod take_many;
#[cfg(feature = "opentelemetry")]
mod traces;
mod transfer;
mod ttl;
mod worker;
mod worker_batches;
mod worker_prefetch;
mod worker_presence;
#[cfg(feature = "tower")]
mod worker_service;
