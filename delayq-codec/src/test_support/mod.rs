//! What the crate's tests share: the Java classes of the captured vectors
//! (read by `delayq_test_support::vectors`) as Rust types, and the property
//! tests' strategies.

pub(crate) mod pojos;
pub(crate) mod strategies;
pub(crate) mod sweeps;
