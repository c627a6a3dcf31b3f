//! delayq on real deployments beyond one plain Redis: Redis Cluster,
//! Sentinel, TLS. Every server is started by the harness on free loopback
//! ports. A separate test target so the fast suite stays fast;
//! `./scripts/test.sh` (and so CI) runs it too.

#[path = "../support/redis_cluster.rs"]
mod redis_cluster;
#[path = "../support/redis_sentinel.rs"]
mod redis_sentinel;
#[path = "../support/redis_server.rs"]
mod redis_server;

mod cluster;
mod load;
mod sentinel;
mod tls;

use std::time::Duration;

/// No test here may hang CI: each one ends within this.
const DEADLINE: Duration = Duration::from_secs(120);
