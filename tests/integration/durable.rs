//! Durable offers and acks (`Durability`): with a replica up, every durable
//! write returns once the replica has it (read back from the replica
//! itself); with the replica gone, it fails with `Error::NotReplicated`
//! within its timeout, and what the error says is true: the write is on the
//! primary. Without a durability nothing more is sent than before.

use std::time::Duration;

use delayq::dedup::Dedup;
use delayq::{Client, Durability, Error, OfferOptions, Priority, StringCodec};
use futures_util::future::join_all;

use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::redis_server::{node_command, wait_replicated};
use delayq_test_support::script_sha1;
use delayq_test_support::{deadline, RedisServer};

/// A primary and one replica of it, in sync.
async fn primary_and_replica() -> (RedisServer, RedisServer) {
    replicated(&[]).await
}

/// A primary and one replica of it started with `extra` arguments, once
/// the replica's link is up (its first sync done: it waits for a
/// diskless sync's delay, 5 s by default) and it has every write.
async fn replicated(extra: &[&str]) -> (RedisServer, RedisServer) {
    let primary = RedisServer::start().await;
    let port = primary.port().to_string();
    let mut args = vec!["--replicaof", "127.0.0.1", &port];
    args.extend_from_slice(extra);
    let replica = RedisServer::start_with(&args).await;
    delayq_test_support::eventually(Duration::from_secs(60), "the replica's first sync", || async {
        node_command(replica.port(), "INFO", vec!["replication".into()])
            .await
            .contains("master_link_status:up")
    })
    .await;
    wait_replicated(primary.port(), Duration::from_secs(30)).await;
    (primary, replica)
}

/// A client of `server` whose writes wait for one replica, long enough for
/// a loaded machine (a replica on loopback answers in far less).
async fn durable_client(server: &RedisServer) -> Client {
    server
        .client_builder()
        .durability(Durability::replicas(1).within(Duration::from_secs(10)))
        .build()
        .await
        .unwrap()
}

fn not_replicated(error: &Error) -> Option<(u32, u32)> {
    match error {
        Error::NotReplicated {
            replicas_acked,
            replicas_wanted,
            ..
        } => Some((*replicas_acked, *replicas_wanted)),
        _ => None,
    }
}

async fn zcard(port: u16, queue: &str) -> String {
    node_command(
        port,
        "ZCARD",
        vec![format!("redisson_delay_queue_timeout:{{{queue}}}").into()],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_offers_and_acks_are_on_the_replica_when_they_return() {
    deadline(async {
        let (primary, replica) = primary_and_replica().await;
        let client = durable_client(&primary).await;
        let q = client.delayed_queue("dur", StringCodec).unwrap().without_transfer();
        let hour = Duration::from_secs(3600);

        // One offer, then concurrent ones (joined runs: one wait each), a
        // bulk offer (one wait for the call), and one with a priority.
        q.offer(&"one".to_owned(), hour).await.unwrap();
        assert_eq!(
            zcard(replica.port(), "dur").await,
            "1",
            "on the replica when offer returned"
        );
        let offers = (0..200).map(|i| {
            let q = q.clone();
            async move { q.offer(&format!("j{i}"), hour).await }
        });
        for result in join_all(offers).await {
            result.unwrap();
        }
        assert_eq!(zcard(replica.port(), "dur").await, "201");
        q.offer_all((0..600).map(|i| (format!("b{i}"), hour))).await.unwrap();
        assert_eq!(zcard(replica.port(), "dur").await, "801");
        q.offer_with_priority(&"urgent".to_owned(), hour, Priority::new(5).unwrap())
            .await
            .unwrap();
        let delayed = node_command(replica.port(), "ZCARD", vec!["delayq_priority_delayed:{dur}".into()]).await;
        assert_eq!(delayed, "1");
        // By id, and deduplicated.
        assert!(q.offer_with_id("id-1", &"by id".to_owned(), hour).await.unwrap());
        assert_eq!(zcard(replica.port(), "dur").await, "802");
        let dedup = Dedup::by_id("d-1", hour);
        assert!(q
            .offer_dedup(&"dedup".to_owned(), hour, &dedup)
            .await
            .unwrap()
            .is_queued());
        assert_eq!(zcard(replica.port(), "dur").await, "803");

        // Ack, nack and dead letter of a reliable queue, each on the replica when it returns.
        let r = client.reliable_queue("dur-r", StringCodec).unwrap();
        let ready = client.blocking_queue("dur-r", StringCodec).unwrap();
        for i in 0..3 {
            ready.offer(&format!("r{i}")).await.unwrap();
        }
        let leases = || node_command(replica.port(), "ZCARD", vec!["delayq_leases:{dur-r}".into()]);
        let mut taken = Vec::new();
        while taken.len() < 3 {
            if let Some(delivery) = r.take_timeout(Duration::from_secs(5)).await.unwrap() {
                taken.push(delivery);
            }
        }
        wait_replicated(primary.port(), Duration::from_secs(30)).await;
        assert_eq!(leases().await, "3");
        let mut taken = taken.into_iter();
        assert!(taken.next().unwrap().ack().await.unwrap());
        assert_eq!(leases().await, "2", "the ack is on the replica when it returns");
        assert!(taken.next().unwrap().nack(hour).await.unwrap());
        assert_eq!(leases().await, "1", "the nack too");
        assert!(taken.next().unwrap().dead_letter().await.unwrap());
        assert_eq!(leases().await, "0", "and the dead letter");
        let dead = node_command(replica.port(), "LLEN", vec!["delayq_dead_letter:{dur-r}".into()]).await;
        assert_eq!(dead, "1");
        client.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_workers_acks_wait_once_per_batch_and_are_on_the_replica() {
    deadline(async {
        let (primary, replica) = primary_and_replica().await;
        let client = durable_client(&primary).await;
        let ready = client.blocking_queue("dur-w", StringCodec).unwrap();
        for i in 0..300 {
            ready.offer(&format!("w{i}")).await.unwrap();
        }
        let monitor = primary.monitor().await;
        let handled = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = handled.clone();
        let worker = client
            .worker("dur-w", StringCodec)
            .unwrap()
            .concurrency(16)
            .run(move |_v: String| {
                let counted = counted.clone();
                async move {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    Ok::<(), std::convert::Infallible>(())
                }
            });
        delayq_test_support::eventually(Duration::from_secs(60), "300 values handled", || async {
            handled.load(std::sync::atomic::Ordering::SeqCst) == 300
        })
        .await;
        let report = worker.shutdown().await;
        // Every ack is on the replica once the worker's acks have returned.
        let leases = node_command(replica.port(), "ZCARD", vec!["delayq_leases:{dur-w}".into()]).await;
        assert_eq!(leases, "0", "{report:?}");
        let entries = monitor.entries().await;
        let sha = script_sha1(include_str!("../../lua/ack_batch.lua"));
        let body = delayq_test_support::script_body(include_str!("../../lua/ack_batch.lua"));
        // A batch by its keys and arguments (its lane run's record and id):
        // its first run may show twice (EVALSHA answered NOSCRIPT, then EVAL).
        let batches = entries
            .iter()
            .filter(|e| {
                (e.name() == "evalsha" && e.args.get(1).is_some_and(|a| a == sha.as_bytes()))
                    || (e.name() == "eval" && e.args.get(1).is_some_and(|a| a == body.as_bytes()))
            })
            .map(|e| e.args[2..].to_vec())
            .collect::<std::collections::HashSet<_>>()
            .len();
        let waits = entries.iter().filter(|e| e.name() == "wait").count();
        assert!((1..300).contains(&batches), "{batches} ack batches for 300 values");
        assert_eq!(waits, batches, "one wait per ack batch");
        client.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_write_without_its_replica_fails_as_not_replicated_and_is_on_the_primary() {
    deadline(async {
        let (primary, mut replica) = primary_and_replica().await;
        let client = durable_client(&primary).await;
        let hour = Duration::from_secs(3600);
        // Long enough for a loaded machine's replica to answer before it is
        // killed (no time is asserted after).
        let short = Durability::replicas(1).within(Duration::from_secs(2));
        let q = client
            .delayed_queue("gone", StringCodec)
            .unwrap()
            .without_transfer()
            .with_durability(Some(short));
        q.offer(&"before".to_owned(), hour).await.unwrap();

        // A reliable queue with one delivery taken, before the replica goes.
        let r = client
            .reliable_queue("gone-r", StringCodec)
            .unwrap()
            .with_durability(Some(short));
        let ready = client.blocking_queue("gone-r", StringCodec).unwrap();
        for i in 0..2 {
            ready.offer(&format!("r{i}")).await.unwrap();
        }
        let mut taken = Vec::new();
        while taken.len() < 2 {
            if let Some(delivery) = r.take_timeout(Duration::from_secs(5)).await.unwrap() {
                taken.push(delivery);
            }
        }

        replica.kill();
        // The primary sees its replica's socket close; until it does, a wait
        // may still count it (and then the offer succeeds: no claim on when).
        delayq_test_support::eventually(Duration::from_secs(30), "the primary to lose its replica", || async {
            node_command(primary.port(), "INFO", vec!["replication".into()])
                .await
                .contains("connected_slaves:0")
        })
        .await;

        let error = q.offer(&"after".to_owned(), hour).await.unwrap_err();
        assert_eq!(not_replicated(&error), Some((0, 1)), "{error}");
        assert!(
            error
                .to_string()
                .contains("written on the primary, confirmed by 0 of 1 replicas"),
            "{error}"
        );
        assert!(!error.is_transient(), "a retry would offer it twice");
        // What it says is true: the value is queued.
        let all = q.read_all().await.unwrap();
        assert!(all.contains(&"after".to_owned()), "{all:?}");

        // A bulk offer: every value queued, one error for the call.
        let error = q
            .offer_all((0..300).map(|i| (format!("b{i}"), hour)))
            .await
            .unwrap_err();
        assert_eq!(not_replicated(&error), Some((0, 1)), "{error}");
        assert_eq!(q.len().await.unwrap(), 302);

        // By id and deduplicated: the same.
        let error = q.offer_with_id("id-1", &"by id".to_owned(), hour).await.unwrap_err();
        assert_eq!(not_replicated(&error), Some((0, 1)), "{error}");
        let dedup = Dedup::by_id("d-1", hour);
        let error = q.offer_dedup(&"dedup".to_owned(), hour, &dedup).await.unwrap_err();
        assert_eq!(not_replicated(&error), Some((0, 1)), "{error}");
        assert_eq!(q.len().await.unwrap(), 304);

        // Per call: this offer waits for nobody, whatever the handle says.
        let none = OfferOptions::after(hour).durability(Durability::replicas(0));
        q.offer_with(&"per call".to_owned(), &none).await.unwrap();
        // And per handle: a handle without durability sends no wait.
        let plain = q.clone().with_durability(None);
        plain.offer(&"plain".to_owned(), hour).await.unwrap();
        assert_eq!(q.len().await.unwrap(), 306);

        // An ack and a dead letter: done on the primary, not confirmed.
        let mut taken = taken.into_iter();
        let error = taken.next().unwrap().ack().await.unwrap_err();
        assert_eq!(not_replicated(&error), Some((0, 1)), "{error}");
        let error = taken.next().unwrap().dead_letter().await.unwrap_err();
        assert_eq!(not_replicated(&error), Some((0, 1)), "{error}");
        assert_eq!(r.in_flight().await.unwrap(), 0, "both settled on the primary");
        assert_eq!(r.dead_letters().await.unwrap().len(), 1);
        client.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_durability_no_wait_is_sent_and_fsynced_falls_back_to_wait_where_needed() {
    deadline(async {
        // With an append-only file, so that WAITAOF (Redis 7.2+) can count it.
        let (primary, replica) = replicated(&["--appendonly", "yes"]).await;
        let plain = primary.client().await;
        let q = plain.delayed_queue("plain", StringCodec).unwrap().without_transfer();
        q.offer(&"warm".to_owned(), Duration::from_secs(60)).await.unwrap();
        let monitor = primary.monitor().await;
        q.offer(&"a".to_owned(), Duration::from_secs(60)).await.unwrap();
        q.offer_all((0..10).map(|i| (format!("b{i}"), Duration::from_secs(60))))
            .await
            .unwrap();
        let entries = monitor.entries().await;
        let waits = entries
            .iter()
            .filter(|e| matches!(e.name().as_str(), "wait" | "waitaof"))
            .count();
        assert_eq!(waits, 0, "a client without a durability sends no wait");
        plain.shutdown().await;

        let durable = primary
            .client_builder()
            .durability(Durability::replicas(1).within(Duration::from_secs(10)).fsynced())
            .build()
            .await
            .unwrap();
        let q = durable
            .delayed_queue("fsynced", StringCodec)
            .unwrap()
            .without_transfer();
        let monitor = primary.monitor().await;
        for i in 0..3 {
            q.offer(&format!("f{i}"), Duration::from_secs(60)).await.unwrap();
        }
        assert_eq!(zcard(replica.port(), "fsynced").await, "3");
        let entries = monitor.entries().await;
        let names: Vec<String> = entries
            .iter()
            .map(|e| e.name())
            .filter(|n| n == "wait" || n == "waitaof")
            .collect();
        let version = node_command(primary.port(), "INFO", vec!["server".into()]).await;
        let has_waitaof = version
            .lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .and_then(|v| {
                let mut parts = v.trim().split('.').map(|p| p.parse::<u32>().unwrap_or(0));
                Some((parts.next()?, parts.next()?))
            })
            .is_some_and(|v| v >= (7, 2));
        if has_waitaof {
            assert_eq!(names, ["waitaof"; 3], "{names:?}");
        } else {
            // Asked once (unknown command), then WAIT for every offer.
            assert_eq!(names, ["wait"; 3], "{names:?}");
        }
        durable.shutdown().await;
    })
    .await;
}

/// A durable write whose reply is lost: fred resends a script that may be
/// resent (a bulk offer's chunk, an ack) on a new connection, where it
/// answers as its first run and writes nothing again; a wait there could
/// not count the first run's write, so the call says `NotReplicated`
/// (written on the primary, 0 confirmed), never `Ok`, and nothing is
/// written twice. An offer, sent once, stays `OutcomeUnknown`, with no wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_durable_write_whose_reply_was_lost_is_never_counted_by_a_wait_that_missed_it() {
    deadline(async {
        let (primary, _replica) = primary_and_replica().await;
        let proxy = FaultProxy::start(primary.port()).await;
        let client = Client::builder()
            .url(proxy.url())
            .blocking_timeout(Duration::from_secs(1))
            .durability(Durability::replicas(1).within(Duration::from_secs(10)))
            .build()
            .await
            .unwrap();
        let hour = Duration::from_secs(3600);
        let q = client.delayed_queue("lost", StringCodec).unwrap().without_transfer();
        q.offer(&"warm".to_owned(), hour).await.unwrap();
        q.offer_all([("warm-all".to_owned(), hour)]).await.unwrap();

        // A bulk offer's chunk: resent, answered from its request key.
        proxy.arm(Fault::LoseReply, script_sha1(include_str!("../../lua/offer_all.lua")));
        let error = q
            .offer_all((0..100).map(|i| (format!("b{i}"), hour)))
            .await
            .unwrap_err();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(not_replicated(&error), Some((0, 1)), "{error}");
        assert!(error.to_string().contains("replaced"), "{error}");
        assert_eq!(q.len().await.unwrap(), 102, "every value once");

        // An offer, sent once: its outcome is unknown, and no wait says otherwise.
        proxy.arm(Fault::LoseReply, script_sha1(include_str!("../../lua/offer.lua")));
        let error = q.offer(&"once".to_owned(), hour).await.unwrap_err();
        assert_eq!(proxy.fired(), 2);
        assert!(matches!(error, Error::OutcomeUnknown { .. }), "{error}");
        assert_eq!(q.len().await.unwrap(), 103, "it ran, once");

        // An ack: resent, found acked; not confirmed, and acked once.
        let ready = client.blocking_queue("lost-r", StringCodec).unwrap();
        ready.offer(&"r".to_owned()).await.unwrap();
        let r = client.reliable_queue("lost-r", StringCodec).unwrap();
        let delivery = loop {
            if let Some(delivery) = r.take_timeout(Duration::from_secs(5)).await.unwrap() {
                break delivery;
            }
        };
        proxy.arm(Fault::LoseReply, script_sha1(include_str!("../../lua/ack.lua")));
        let error = delivery.ack().await.unwrap_err();
        assert_eq!(proxy.fired(), 3);
        assert_eq!(not_replicated(&error), Some((0, 1)), "{error}");
        assert_eq!(r.in_flight().await.unwrap(), 0, "acked on the primary");
        assert_eq!(r.len().await.unwrap(), 0, "and not given back");
        client.shutdown().await;
    })
    .await;
}
