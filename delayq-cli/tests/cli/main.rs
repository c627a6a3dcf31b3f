//! Tests that run the `delayq` binary: every command against a real
//! `redis-server` the harness starts on a free loopback port, the CLI beside
//! library clients (ACL users, several processes on one queue, lost replies)
//! and `--codec kryo` on Java's bytes.

#[path = "../../../tests/support/codec_vectors.rs"]
mod codec_vectors;
#[path = "../../../tests/support/fault_proxy.rs"]
#[allow(clippy::enum_variant_names)] // Fault::Lose*: each name says what is lost
mod fault_proxy;
#[path = "../../../tests/integration/harness.rs"]
#[allow(dead_code)] // shared with the library's tests, which use all of it
mod harness;
#[path = "../../../tests/support/kryo_vectors.rs"]
mod kryo_vectors;
#[path = "../../../tests/support/schedules.rs"]
mod schedule_helpers;

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
