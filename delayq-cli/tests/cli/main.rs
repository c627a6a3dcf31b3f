//! Tests that run the `delayq` binary: every command against a real
//! `redis-server` the harness starts on a free loopback port, the CLI beside
//! library clients (ACL users, several processes on one queue, lost replies)
//! and `--codec kryo` on Java's bytes.

// The harness (the `delayq-test-support` package) under the paths these
// tests used when they included its files one by one.
#[allow(unused_imports)]
use delayq_test_support::{self as harness, fault_proxy, schedules as schedule_helpers};

mod acl;
mod cli;
mod codecs;
mod dashboard;
mod dead_letters;
mod events;
mod kryo;
mod lost_replies;
mod operator_review;
mod processes;
mod rough_edges;
mod schedules;
