//! The test harness, now the `delayq-test-support` package, under the path
//! tests used before (`crate::harness::RedisServer`, ...): new tests use
//! `delayq_test_support` itself.

#[allow(unused_imports)]
pub use delayq_test_support::{unhex as hex, *};
