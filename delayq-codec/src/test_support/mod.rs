//! What the crate's tests share: the captured Java vectors, the Java
//! classes they hold as Rust types, and the property tests' strategies.

pub(crate) mod fixtures;
pub(crate) mod pojos;
pub(crate) mod strategies;
pub(crate) mod sweeps;
