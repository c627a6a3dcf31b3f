//! delayq on real deployments beyond one plain Redis: Redis Cluster,
//! Sentinel, TLS. Every server is started by the harness on free loopback
//! ports. A separate test target so the fast suite stays fast;
//! `./scripts/test.sh` (and so CI) runs it too.

use delayq_test_support::{redis_cluster, redis_sentinel, redis_server};

mod cluster;
mod durable;
mod load;
mod partition;
mod reshard;
mod reshard_review;
mod sentinel;
mod tls;

use std::time::Duration;

/// No test here may hang CI: each one ends within this. A guard against a
/// hang, not a claim about speed: every wait inside is bounded on its own
/// (a failover's demotion ≤ 60 s, the drain after it ≤ 60 s), and on a
/// 2-core machine under full load five Redis processes and a loaded worker
/// can add up to more than two minutes (seen once at 120 s).
const DEADLINE: Duration = Duration::from_secs(240);

/// Asserts the client's transfer moved exactly `expected` elements. The count
/// is taken when a script's reply reaches the scheduler, which may be just
/// after a consumer took the value: wait a little for it.
async fn assert_transferred(client: &delayq::Client, expected: u64) {
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        while client.stats().transferred < expected {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert_eq!(client.stats().transferred, expected, "{:?}", client.stats());
}

/// Runs the `delayq` CLI with `REDIS_URL=url` and `args`.
async fn cli<I, S>(url: &str, args: I) -> std::process::Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    tokio::process::Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", url)
        .output()
        .await
        .expect("run the delayq binary")
}
