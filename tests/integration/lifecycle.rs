//! A client's life: what dropping it without `shutdown()` releases, settings
//! at their extremes, a clear error when Redis is not there, and the README's
//! quickstart compiling as `examples/quickstart.rs`.

use std::time::Duration;

use delayq::fred::prelude::*;
use delayq::{Client, ClientBuilder, Error, StringCodec};

use delayq_test_support::{deadline, eventually, redis_test, wait_for, RawRedis};

use delayq_test_support::redis_sentinel;

/// Connections the server has open right now (`INFO clients`), the inspector's own included.
async fn connected(raw: &RawRedis) -> usize {
    raw.info_field("clients", "connected_clients").await.parse().unwrap()
}

/// Waits up to `within` for the server's connection count to come back to
/// `baseline`; the count last seen if it does not.
async fn settles_to(raw: &RawRedis, baseline: usize, within: Duration) -> Result<(), usize> {
    let started = tokio::time::Instant::now();
    loop {
        let now = connected(raw).await;
        if now == baseline {
            return Ok(());
        }
        if started.elapsed() > within {
            return Err(now);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

redis_test! {
    /// Dropping every clone of a client and everything made from it, without
    /// `shutdown()`, closes every connection it opened: the command pool, the
    /// scheduler's subscriber, the blocking reads' connections; the reaper stops.
    /// Without the fix: 1 connection before, 6 with the client, still 5 after
    /// 30 s (the pool and the idle blocking connection stayed open forever).
    /// A reliable delivery dropped unsettled with it is not lost.
    async fn lifecycle_dropping_a_client_without_shutdown_closes_its_connections(redis, raw) {
        let before = connected(&raw).await;

        let client = redis.client_builder().pool_size(3).build().await.unwrap();
        let delayed = client.delayed_queue("life-q", StringCodec).unwrap();
        delayed.offer(&"a".to_owned(), Duration::from_millis(50)).await.unwrap();
        delayed.offer(&"b".to_owned(), Duration::from_millis(50)).await.unwrap();
        let destination = delayed.destination();
        let first = destination.take_timeout(Duration::from_secs(10)).await.unwrap();
        assert_eq!(first.as_deref(), Some("a"));
        // A blocking read leaves its connection idle in the blocking pool (a
        // wait on an empty queue: a value already there is popped without
        // one, as a loaded machine's late take found "a").
        let empty = client.blocking_queue("life-empty", StringCodec).unwrap();
        assert_eq!(empty.take_timeout(Duration::from_secs(2)).await.unwrap(), None);
        // A reliable queue (with its reaper), and a delivery never settled.
        let reliable = client
            .reliable_queue("life-q", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_secs(1));
        let delivery = tokio::time::timeout(Duration::from_secs(10), reliable.take())
            .await
            .expect("delivered")
            .unwrap();
        assert_eq!(delivery.value(), "b");
        let clone = client.clone();
        // pool (3) + subscriber + at least one blocking connection (the
        // subscriber may still be connecting on a loaded machine: wait for it)
        let wanted = format!("at least {} connections ({before} before the client)", before + 5);
        let with_client = wait_for(Duration::from_secs(30), &wanted, || async {
            let now = connected(&raw).await;
            (now >= before + 5).then_some(now)
        })
        .await;
        eprintln!("connections: {before} before the client, {with_client} with it");

        drop((client, clone, delayed, destination, empty, reliable, delivery));
        let closed = settles_to(&raw, before, Duration::from_secs(30)).await;
        let after = closed.map_or_else(|left| left, |()| before);
        eprintln!("connections after dropping it: {after}");
        assert!(
            closed.is_ok(),
            "{after} connections 30 s after dropping the client ({before} before it, {with_client} with it)"
        );

        // Nothing lost: the dropped delivery was given back (had that failed,
        // its visibility timeout would have returned it) to the next consumer.
        let next = redis.client().await;
        let reliable = next
            .reliable_queue("life-q", StringCodec)
            .unwrap()
            .with_visibility_timeout(Duration::from_secs(1));
        let again = tokio::time::timeout(Duration::from_secs(30), reliable.take())
            .await
            .expect("the unsettled delivery comes back")
            .unwrap();
        assert_eq!(again.value(), "b");
        again.ack().await.unwrap();
        next.shutdown().await;
        eventually(Duration::from_secs(30), "shutdown closes every connection", || async {
            connected(&raw).await == before
        })
        .await;
    }
}

redis_test! {
    /// A client dropped after `shutdown()` does not try to close anything again,
    /// and one dropped with a read blocked in a task ends that read.
    async fn lifecycle_a_blocked_take_holds_the_client_until_it_ends(redis, raw) {
        let before = connected(&raw).await;

        let client = redis.client().await;
        let queue = client.blocking_queue("life-blocked", StringCodec).unwrap();
        let waiting = tokio::spawn(async move { queue.take().await });
        // The blocked take keeps the client (its queue handle holds it):
        // dropping our clone closes nothing; the value still arrives.
        drop(client);
        raw.cmd("RPUSH", vec!["life-blocked".into(), "x".into()]).await;
        let taken = tokio::time::timeout(Duration::from_secs(20), waiting)
            .await
            .expect("the take ends")
            .unwrap()
            .unwrap();
        assert_eq!(taken, "x");
        // The task ended and dropped the last handle: everything closes.
        eventually(Duration::from_secs(30), "the client's connections close", || async {
            connected(&raw).await == before
        })
        .await;

        let client = redis.client().await;
        client.shutdown().await;
        drop(client);
        eventually(Duration::from_secs(30), "nothing stays open", || async {
            connected(&raw).await == before
        })
        .await;
    }
}

/// Subscribed connections on the sentinels: only delayq's `+switch-master`
/// listeners subscribe there (sentinels subscribe on the data nodes).
async fn sentinel_subscribers(sentinel: &redis_sentinel::RedisSentinel) -> usize {
    let mut subscribers = 0;
    for port in sentinel.sentinel_ports() {
        let clients = sentinel.sentinel_command(port, "CLIENT", vec!["LIST".into()]).await;
        subscribers += clients.lines().filter(|line| line.contains(" sub=1 ")).count();
    }
    subscribers
}

/// A client through sentinels listens to every sentinel for failovers; those
/// listeners stop when the client is dropped without `shutdown()`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_dropping_a_sentinel_client_stops_its_sentinel_listeners() {
    deadline(async {
        let sentinel = redis_sentinel::RedisSentinel::start().await;
        assert_eq!(sentinel_subscribers(&sentinel).await, 0);
        let client = Client::builder().url(sentinel.url()).build().await.unwrap();
        let queue = client.delayed_queue("life-s", StringCodec).unwrap();
        queue.offer(&"s".to_owned(), Duration::from_millis(10)).await.unwrap();
        eventually(Duration::from_secs(30), "a listener on every sentinel", || async {
            sentinel_subscribers(&sentinel).await == 3
        })
        .await;
        drop((client, queue));
        eventually(Duration::from_secs(30), "the sentinel listeners stop", || async {
            sentinel_subscribers(&sentinel).await == 0
        })
        .await;
    })
    .await;
}

redis_test! {
    /// `Duration::MAX` in every duration setting is clamped, never an overflow
    /// panic, and the client works.
    async fn lifecycle_duration_max_settings_do_not_panic(redis) {
        let client = Client::builder()
            .url(redis.url())
            .blocking_timeout(Duration::MAX)
            .connect_timeout(Duration::MAX)
            .shutdown_grace(Duration::MAX)
            .resync_interval(Some(Duration::MAX))
            .transfer_backoff(Duration::MAX, Duration::MAX)
            .build()
            .await
            .unwrap();
        let delayed = client.delayed_queue("life-max", StringCodec).unwrap();
        delayed.offer(&"1".to_owned(), Duration::from_millis(50)).await.unwrap();
        delayed.offer(&"2".to_owned(), Duration::from_millis(50)).await.unwrap();
        let destination = delayed.destination();
        let polled = destination.take_timeout(Duration::from_secs(20)).await.unwrap();
        assert_eq!(polled.as_deref(), Some("1"));
        let taken = tokio::time::timeout(Duration::from_secs(20), destination.take())
            .await
            .expect("take returns")
            .unwrap();
        assert_eq!(taken, "2");
        // Nothing there: a poll with a short timeout still ends empty.
        assert_eq!(
            destination.take_timeout(Duration::from_millis(200)).await.unwrap(),
            None
        );
        tokio::time::timeout(Duration::from_secs(30), client.shutdown())
            .await
            .expect("shutdown ends");
    }
}

/// Connecting where no Redis listens fails within the connect timeout with
/// [`Error::Connect`], whose message names the address and what to check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_connecting_to_no_server_is_a_clear_error() {
    deadline(async {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let build = Client::builder()
            .url(format!("redis://127.0.0.1:{port}"))
            .connect_timeout(Duration::from_secs(2))
            .build();
        let error = tokio::time::timeout(Duration::from_secs(30), build)
            .await
            .expect("fails quickly")
            .expect_err("nothing listens there");
        let message = error.to_string();
        eprintln!("{message}");
        assert!(
            matches!(&error, Error::Connect { address, .. } if address == &format!("127.0.0.1:{port}")),
            "{error:?}"
        );
        assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
        assert!(message.contains(Error::CONNECT_HINT), "{message}");
        assert!(
            std::error::Error::source(&error).is_some(),
            "fred's error is the source"
        );
        assert!(error.is_transient());
    })
    .await;
}

/// The README's Quickstart code is `examples/quickstart.rs`, which
/// `cargo build --examples` (and clippy --all-targets) compiles; the block
/// is `no_run` because the README's blocks are doctests too (`lib.rs`).
#[test]
fn lifecycle_readme_quickstart_is_the_compiled_example() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let example = std::fs::read_to_string(format!("{root}/examples/quickstart.rs")).unwrap();
    let section = &readme[readme.find("## Quickstart\n").expect("a Quickstart section")..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |end| end + 3)];
    let code = section
        .split("```rust,no_run\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a rust block in the Quickstart");
    assert_eq!(code, example, "README Quickstart and examples/quickstart.rs differ");
    let toml = section
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a toml block in the Quickstart");
    for dependency in ["delayq = {", "serde = {", "tokio = {"] {
        assert!(
            toml.lines().any(|line| line.starts_with(dependency)),
            "{dependency} in the Quickstart's [dependencies]"
        );
    }
    assert!(!toml.contains('…'), "no placeholder in the dependency block");
    let _: fn() -> ClientBuilder = Client::builder;
}

redis_test! {
    /// Shutdown must not wait for a Redis that is gone: the subscriber may be
    /// retrying its subscriptions, every command failing.
    async fn lifecycle_shutdown_ends_while_redis_is_down(redis, client) {
        let q = client.delayed_queue::<String, _>("q", delayq::StringCodec).unwrap();
        q.offer(&"x".to_owned(), Duration::from_secs(60)).await.unwrap();
        redis.kill();
        // The connections notice, and start reconnecting and resubscribing.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let started = std::time::Instant::now();
        tokio::time::timeout(Duration::from_secs(60), client.shutdown_within(Duration::from_secs(1)))
            .await
            .expect("shutdown ends without Redis");
        eprintln!("shutdown took {:.1} s", started.elapsed().as_secs_f64());
    }
}

redis_test! {
    async fn shutdown_with_a_delivery_in_flight_ends_while_redis_is_down(redis, raw) {
        let _: i64 = raw.client.rpush("held", vec!["x"]).await.unwrap();
        let client = redis.client().await;
        let q = client.reliable_queue("held", delayq::StringCodec).unwrap();
        let held = q.take().await.unwrap();
        redis.kill();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let started = std::time::Instant::now();
        // Giving the delivery back cannot reach Redis; its visibility timeout will.
        tokio::time::timeout(Duration::from_secs(30), client.shutdown_within(Duration::from_secs(1)))
            .await
            .expect("shutdown ends without Redis, a delivery in flight or not");
        eprintln!("shutdown took {:.1} s", started.elapsed().as_secs_f64());
        drop(held);
    }
}
