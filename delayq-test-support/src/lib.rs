//! What delayq's tests and benchmarks share, in one package instead of
//! files each test target included by path: real `redis-server` processes on
//! free loopback ports (one server, a Cluster, a Sentinel deployment), a TCP
//! proxy that injects network faults, the fixture a test runs in, a plain
//! client for seeding and inspecting Redis, scripts built as the library
//! sends them, and the values real Redisson clients wrote.
//!
//! Used by the library's integration and unit tests, the CLI's and the
//! dashboard's tests, the codec crate's tests (without the `redis` feature:
//! only [`vectors`]) and the benchmark. Not published.

#[cfg(feature = "redis")]
mod checks;
#[cfg(feature = "redis")]
pub mod delay_link;
#[cfg(feature = "redis")]
pub mod fault_proxy;
#[cfg(feature = "redis")]
mod fixture;
#[cfg(feature = "redis")]
mod monitor;
#[cfg(feature = "redis")]
mod raw;
#[cfg(feature = "redis")]
pub mod redis_cluster;
#[cfg(feature = "redis")]
pub mod redis_sentinel;
#[cfg(feature = "redis")]
pub mod redis_server;
#[cfg(feature = "redis")]
pub mod schedules;
#[cfg(feature = "redis")]
mod scripts;
#[cfg(feature = "redis")]
mod values;
pub mod vectors;

#[cfg(feature = "redis")]
pub use checks::{assert_each_taken_once_or_left, drop_in_flight, settled};
#[cfg(feature = "redis")]
pub use fault_proxy::{behind_proxy, without_resends};
#[cfg(feature = "redis")]
pub use fixture::{deadline, deadline_of, Fixture, SCALE_DEADLINE, TEST_DEADLINE};
#[cfg(feature = "redis")]
pub use monitor::{Monitor, Monitored};
#[cfg(feature = "redis")]
pub use raw::RawRedis;
#[cfg(feature = "redis")]
pub use redis_server::{eventually, wait_for, RedisServer};
#[cfg(feature = "redis")]
pub use scripts::{script_body, script_sha1};
#[cfg(feature = "redis")]
pub use values::{bytes, now_ms};
pub use vectors::unhex;
