//! Tests that run the `delayq` binary: every command against a real
//! `redis-server` the harness starts on a free loopback port, the CLI beside
//! library clients (ACL users, several processes on one queue, lost replies)
//! and `--codec kryo` on Java's bytes.

// The harness is the `delayq-test-support` package; `harness`,
// `fault_proxy` and `schedule_helpers` keep the paths these tests used when
// they included its files one by one.
#[allow(unused_imports)]
use delayq_test_support::{fault_proxy, schedules as schedule_helpers};
mod harness {
    #[allow(unused_imports)]
    pub use delayq_test_support::{unhex as hex, *};
}

mod acl;
mod batches;
mod cli;
mod codecs;
mod dashboard;
mod dead_letters;
mod events;
mod groups;
mod headers;
mod job;
mod jobs_cancel;
mod kryo;
mod list;
mod lost_replies;
mod operator_review;
mod partitions;
mod priorities;
mod processes;
mod rough_edges;
mod run;
mod schedules;
mod search;
mod ttl;
mod workers;
