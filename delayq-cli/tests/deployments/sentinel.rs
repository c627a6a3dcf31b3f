//! Sentinel: a master, a replica and three sentinels on loopback; delayq
//! finds the master through the sentinels and follows it across failovers.

use std::time::Duration;

use delayq::{Client, StringCodec};
use tokio::time::Instant;

use crate::load::{Load, VALUES};
use crate::redis_sentinel::{RedisSentinel, SERVICE};
use crate::redis_server::node_command;
use crate::{assert_transferred, cli, DEADLINE};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queues_work_through_sentinels_in_the_library_and_the_cli() {
    tokio::time::timeout(DEADLINE, async {
        let sentinel = RedisSentinel::start().await;
        let master = sentinel.master_port().await;
        let client = Client::builder()
            .url(sentinel.url())
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .expect("connect through the sentinels");
        // The element lives on the master the sentinels name (checked before
        // any transfer runs for the queue).
        let unscheduled = client.delayed_queue("s-q", StringCodec).unwrap().without_transfer();
        unscheduled
            .offer(&"a".to_owned(), Duration::from_millis(300))
            .await
            .unwrap();
        assert_eq!(
            node_command(master, "ZCARD", vec!["redisson_delay_queue_timeout:{s-q}".into()]).await,
            "1"
        );
        let queue = client.delayed_queue("s-q", StringCodec).unwrap();
        let got = queue.destination().take_timeout(Duration::from_secs(10)).await.unwrap();
        assert_eq!(got.as_deref(), Some("a"));
        assert_transferred(&client, 1).await;

        // The CLI takes the same URL.
        queue.offer(&"b".to_owned(), Duration::from_secs(600)).await.unwrap();
        let cli = cli(&sentinel.url(), ["inspect", "s-q", "--format", "json"]).await;
        let stdout = String::from_utf8_lossy(&cli.stdout);
        let stderr = String::from_utf8_lossy(&cli.stderr);
        assert!(cli.status.success(), "{}: {stderr}", cli.status);
        assert!(stdout.contains("\"b\""), "{stdout}");

        // A service name the sentinels do not know is an error, not a hang.
        let wrong = Client::builder()
            .url(sentinel.url().replace(SERVICE, "nosuchmaster"))
            .connect_timeout(Duration::from_secs(3))
            .build()
            .await;
        assert!(wrong.is_err(), "unknown service name");
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sentinel_failover_under_load_loses_nothing_with_a_reliable_worker() {
    tokio::time::timeout(DEADLINE, async {
        let sentinel = RedisSentinel::start().await;
        let old = sentinel.master_port().await;
        let load = Load::start(&sentinel.url(), "s-fo").await;
        sentinel.wait_replicated(Duration::from_secs(10)).await;
        load.wait_handled(VALUES / 5).await;
        let port = sentinel.sentinel_ports()[0];
        let reply = sentinel
            .sentinel_command(port, "SENTINEL", vec!["FAILOVER".into(), SERVICE.into()])
            .await;
        assert_eq!(reply, "OK");
        let failed_over = Instant::now();
        let new = sentinel.wait_for_new_master(old, Duration::from_secs(30)).await;
        eprintln!("sentinel failover: {old} -> {new} in {:?}", failed_over.elapsed());
        // The old master lives on until the sentinels make it a replica of
        // the new one (~8 s): what was done there after the promotion is
        // undone then, and the worker handles those values again.
        sentinel.wait_for_role(old, "role:slave", Duration::from_secs(60)).await;
        let outcome = load.finish(failed_over, Duration::from_secs(60)).await;
        outcome.assert_nothing_lost();
        assert_drained(new, "s-fo").await;
    })
    .await
    .expect("test exceeded its deadline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_master_under_load_loses_nothing_with_a_reliable_worker() {
    tokio::time::timeout(DEADLINE, async {
        let mut sentinel = RedisSentinel::start().await;
        let old = sentinel.master_port().await;
        let load = Load::start(&sentinel.url(), "s-kill").await;
        sentinel.wait_replicated(Duration::from_secs(10)).await;
        load.wait_handled(VALUES / 5).await;
        sentinel.server(old).kill();
        let killed = Instant::now();
        let new = sentinel.wait_for_new_master(old, Duration::from_secs(30)).await;
        eprintln!("master killed: sentinels promoted {new} after {:?}", killed.elapsed());
        let outcome = load.finish(killed, Duration::from_secs(60)).await;
        outcome.assert_nothing_lost();
        assert_drained(new, "s-kill").await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// Sentinels with a password of their own (`sentinelPassword` in the URL):
/// the client finds the master through them, and, listening to them with the
/// same credentials, follows a failover within a few seconds: long before
/// the sentinels demote the old master (~8 s), which would also move it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_follows_a_failover_announced_by_sentinels_with_a_password() {
    tokio::time::timeout(DEADLINE, async {
        let sentinel = RedisSentinel::start_with_password(Some("sentinel-s3cret")).await;
        let old = sentinel.master_port().await;
        let wrong = Client::builder()
            .url(sentinel.url().replace("sentinel-s3cret", "wrong"))
            .connect_timeout(Duration::from_secs(3))
            .build()
            .await;
        assert!(wrong.is_err(), "a wrong sentinel password does not connect");
        let client = Client::connect(&sentinel.url())
            .await
            .expect("connect through the sentinels");
        let queue = client.delayed_queue("s-auth", StringCodec).unwrap().without_transfer();
        let pending = |port: u16| async move {
            node_command(port, "ZCARD", vec!["redisson_delay_queue_timeout:{s-auth}".into()]).await
        };
        queue
            .offer(&"before".to_owned(), Duration::from_secs(600))
            .await
            .unwrap();
        assert_eq!(pending(old).await, "1");
        sentinel.wait_replicated(Duration::from_secs(10)).await;

        let port = sentinel.sentinel_ports()[0];
        let reply = sentinel
            .sentinel_command(port, "SENTINEL", vec!["FAILOVER".into(), SERVICE.into()])
            .await;
        assert_eq!(reply, "OK");
        let new = sentinel.wait_for_new_master(old, Duration::from_secs(30)).await;
        let switched = Instant::now();
        let mut offered = 0;
        loop {
            offered += 1;
            let _ = queue.offer(&format!("after-{offered}"), Duration::from_secs(600)).await;
            if pending(new).await.parse::<usize>().unwrap_or(0) >= 2 {
                break;
            }
            assert!(
                switched.elapsed() < Duration::from_secs(5),
                "offers still do not reach the new master {:?} after the switch",
                switched.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        eprintln!(
            "offers reached the new master {:?} after the sentinels named it",
            switched.elapsed()
        );
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// Asks the node on `port` itself (not through the sentinels) that `queue`
/// holds nothing: no pending, ready, in-flight or dead-lettered values.
async fn assert_drained(port: u16, queue: &str) {
    let direct = Client::connect(&format!("redis://127.0.0.1:{port}")).await.unwrap();
    let status = direct
        .delayed_queue(queue, StringCodec)
        .unwrap()
        .without_transfer()
        .status()
        .await
        .unwrap();
    assert_eq!(
        (status.pending, status.ready, status.in_flight, status.dead_letters),
        (0, 0, 0, 0),
        "{queue} on {port}: {status:?}"
    );
    direct.shutdown().await;
}
