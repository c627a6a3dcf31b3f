//! Live resharding on a real 3-master cluster: the slot of a busy queue is
//! moved from master to master (`CLUSTER SETSLOT … IMPORTING/MIGRATING`,
//! `MIGRATE` a few keys at a time with pauses, `SETSLOT … NODE`, as
//! `redis-cli --cluster reshard` does) while a producer offers (single
//! offers, joined ones, bulk ones, deduplicated ones, offers with
//! headers), the transfer moves values as they come due and a reliable
//! Worker claims, acks and retries them on another client; and the primary
//! that owns the slot is failed over under the same load.
//!
//! What is proven for slot moves: every acknowledged offer is handled
//! exactly once (by unique value), nothing is left, no call returns an
//! error, and the library logs no failure of its own (a caller-visible
//! `ASK`, `TRYAGAIN` or `MOVED` would be a bug: a retry cures each). With a
//! `CLUSTER FAILOVER` the same but for a value that may come twice; with a
//! killed primary, what [`Expect::Crash`] says.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use delayq::dedup::Dedup;
use delayq::worker::RetryPolicy;
use delayq::{Client, Durability, OfferOptions, StringCodec};
use parking_lot::Mutex;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::redis_cluster::{Migration, RedisCluster};
use crate::DEADLINE;

/// A test's failures: offers that returned an error, and warnings the
/// library logged about this queue (a worker's failed claim or ack is
/// retried inside, and logged, never returned).
#[derive(Default)]
struct Errors {
    offers: Mutex<Vec<String>>,
}

/// Warnings and errors the library logs, by message, for the queues named
/// `reshard…` (all tests of the binary share the subscriber).
fn logged() -> &'static Mutex<Vec<String>> {
    static LOGGED: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        use tracing_subscriber::layer::SubscriberExt;
        let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Warnings));
    });
    LOGGED.get_or_init(Default::default)
}

/// A tracing layer keeping every WARN or ERROR event that names a
/// `reshard…` queue, or names none.
struct Warnings;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if *event.metadata().level() > tracing::Level::WARN {
            return;
        }
        let mut text = Text(String::new());
        event.record(&mut text);
        if text.0.contains("queue=") && !text.0.contains("reshard") {
            return; // another test's queue
        }
        if text.0.contains("on purpose") {
            return; // the handler's own failures
        }
        logged()
            .lock()
            .push(format!("{} {}", event.metadata().target(), text.0));
    }
}

struct Text(String);

impl tracing::field::Visit for Text {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

/// Each distinct line of `lines`, with how many times it came.
fn distinct(lines: &[String]) -> Vec<(String, usize)> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for line in lines {
        match counts.iter_mut().find(|(l, _)| l == line) {
            Some((_, n)) => *n += 1,
            None => counts.push((line.clone(), 1)),
        }
    }
    counts
}

/// What a test's disruption may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Slot moves only: every acknowledged value handled exactly once, no
    /// error returned, nothing logged.
    ExactlyOnce,
    /// With `CLUSTER FAILOVER`: the same, except that a value may be handled
    /// twice (an ack lost in the switch: 0–1 a run, as without a move,
    /// docs/deployments.md).
    AtLeastOnce,
    /// A primary killed: offers may fail (their outcome unknown) and values
    /// come twice; every acknowledged value is still handled, nothing left.
    Crash,
}

/// The producer, the worker and what they saw.
struct Load {
    queue: &'static str,
    producer: Client,
    consumer: Client,
    stop: Arc<AtomicBool>,
    offering: tokio::task::JoinHandle<()>,
    acknowledged: Arc<Mutex<Vec<String>>>,
    errors: Arc<Errors>,
    /// Successful handler runs by value.
    handled: Arc<Mutex<HashMap<String, usize>>>,
    /// Handler runs that failed on purpose (the value is retried).
    failed: Arc<AtomicUsize>,
    worker: delayq::worker::WorkerHandle,
}

impl Load {
    /// A queue with values pending and ready, side keys the scripts touch
    /// (dedup ids, headers, job history, the lifecycle events stream), a
    /// producer offering about 300 values a second due 0 to 2 s later, and a
    /// reliable Worker (4 handlers) that fails every tenth value once.
    ///
    /// With a `durability`, both clients' writes wait for it.
    async fn start(url: &str, queue: &'static str, durability: Option<Durability>) -> Load {
        logged();
        let builder = || {
            let builder = Client::builder().url(url).blocking_timeout(Duration::from_secs(1));
            match durability {
                Some(durability) => builder.durability(durability),
                None => builder,
            }
        };
        let producer = builder().build().await.expect("producer connects");
        let consumer = builder().build().await.expect("consumer connects");
        let delayed = producer.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        delayed.set_job_history(Some(Duration::from_secs(600))).await.unwrap();
        producer.enable_events(&delayed, 10_000).await.unwrap();
        let acknowledged = Arc::new(Mutex::new(Vec::new()));
        // Pending and ready before anything moves: due now and in 5 s.
        let first: Vec<(String, Duration)> = (0..200)
            .map(|i| {
                (
                    format!("pre-{i}"),
                    Duration::from_millis(if i % 2 == 0 { 0 } else { 5_000 }),
                )
            })
            .collect();
        delayed.offer_all(first.clone()).await.unwrap();
        acknowledged.lock().extend(first.into_iter().map(|(v, _)| v));

        let handled = Arc::new(Mutex::new(HashMap::<String, usize>::new()));
        let failed = Arc::new(AtomicUsize::new(0));
        let worker = consumer
            .worker(queue, StringCodec)
            .unwrap()
            .concurrency(4)
            .visibility_timeout(Duration::from_secs(30))
            .retry(RetryPolicy::fixed(Duration::from_millis(300)).max_attempts(10))
            .run({
                let (handled, failed) = (handled.clone(), failed.clone());
                let failing = Arc::new(Mutex::new(std::collections::HashSet::<String>::new()));
                move |value: String| {
                    let fail = value.ends_with('3') && failing.lock().insert(value.clone());
                    if fail {
                        failed.fetch_add(1, Ordering::Relaxed);
                    } else {
                        *handled.lock().entry(value).or_default() += 1;
                    }
                    async move {
                        if fail {
                            Err::<(), delayq::error::BoxError>("fails once, on purpose".into())
                        } else {
                            Ok(())
                        }
                    }
                }
            });

        let stop = Arc::new(AtomicBool::new(false));
        let errors = Arc::new(Errors::default());
        let offering = tokio::spawn(offer_until(delayed, stop.clone(), acknowledged.clone(), errors.clone()));
        Load {
            queue,
            producer,
            consumer,
            stop,
            offering,
            acknowledged,
            errors,
            handled,
            failed,
            worker,
        }
    }

    /// What the library logged about this test's queue (or about none).
    fn logged(queue: &str) -> Vec<String> {
        let named = [format!("queue={queue}"), format!("queue=\"{queue}\"")];
        // A line names its queue in a field or in its error's text (`ack_batch
        // on `Q``); the tests run side by side, so another test's lines are
        // left out.
        logged()
            .lock()
            .iter()
            .filter(|line| {
                let this =
                    named.iter().any(|n| line.contains(&format!("{n} "))) || line.contains(&format!("`{queue}`"));
                // Lines that name no queue are left out too: the tests run
                // side by side, and such a line may be another test's (the
                // killed primary's acks); what a test proves is asserted by
                // its counts (missing, twice, offer errors) above.
                this
            })
            .cloned()
            .collect()
    }

    /// Stops the offers, waits (≤ 90 s) until every acknowledged value was
    /// handled and nothing is left, and checks what `expected`.
    async fn finish(self, expected: Expect) {
        let queue = self.queue;
        self.stop.store(true, Ordering::Relaxed);
        let mut offering = self.offering;
        loop {
            match tokio::time::timeout(Duration::from_secs(10), &mut offering).await {
                Ok(done) => break done.expect("the producer task"),
                Err(_) => eprintln!(
                    "{queue}: the producer has not stopped; {} acknowledged, logged: {:?}",
                    self.acknowledged.lock().len(),
                    distinct(&Self::logged(queue))
                ),
            }
        }
        eprintln!("{queue}: the producer stopped");
        let acknowledged = self.acknowledged.lock().clone();
        let delayed = self
            .consumer
            .delayed_queue(queue, StringCodec)
            .unwrap()
            .without_transfer();
        let reliable = self.consumer.reliable_queue(queue, StringCodec).unwrap();
        let started = Instant::now();
        loop {
            let all = {
                let handled = self.handled.lock();
                acknowledged.iter().all(|v| handled.contains_key(v))
            };
            if all
                && let Ok(status) = delayed.status().await
                && status.pending + status.ready + status.in_flight == 0
            {
                break;
            }
            if started.elapsed() > Duration::from_secs(90) {
                break;
            }
            if started.elapsed().as_millis() % 10_000 < 50 {
                let handled = self.handled.lock().len();
                eprintln!(
                    "{queue}: {handled} of {} handled; {:?}",
                    acknowledged.len(),
                    delayed.status().await
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let report = self.worker.shutdown().await;
        let handled = self.handled.lock().clone();
        let missing: Vec<&String> = acknowledged.iter().filter(|v| !handled.contains_key(*v)).collect();
        let twice: Vec<(&String, &usize)> = handled.iter().filter(|(_, n)| **n > 1).collect();
        let unknown: Vec<&String> = handled.keys().filter(|v| !acknowledged.contains(v)).collect();
        let offer_errors = self.errors.offers.lock().clone();
        let status = delayed.status().await.unwrap();
        let dead = reliable.dead_letter_len().await.unwrap();
        eprintln!(
            "{queue}: {} acknowledged, {} handled, {} failed on purpose, {} missing, {} twice, {} never acknowledged, \
             {} offer errors, left {status:?}, {dead} dead letters; {report:?}",
            acknowledged.len(),
            handled.len(),
            self.failed.load(Ordering::Relaxed),
            missing.len(),
            twice.len(),
            unknown.len(),
            offer_errors.len(),
        );
        let logged = Self::logged(queue);
        for (line, count) in distinct(&logged) {
            eprintln!("logged {count}×: {line}");
        }
        for (line, count) in distinct(&offer_errors.iter().map(|e| error_kind(e)).collect::<Vec<_>>()) {
            eprintln!("offer errors {count}×: {line}");
        }
        assert!(
            missing.is_empty(),
            "never handled: {:?}",
            &missing[..missing.len().min(20)]
        );
        assert_eq!(status.pending + status.ready + status.in_flight, 0, "left: {status:?}");
        assert_eq!(dead, 0, "dead letters");
        if expected == Expect::Crash {
            self.consumer.shutdown().await;
            self.producer.shutdown().await;
            return;
        }
        assert!(
            offer_errors.is_empty(),
            "offers failed: {:?}",
            &offer_errors[..offer_errors.len().min(20)]
        );
        if expected == Expect::ExactlyOnce {
            assert!(twice.is_empty(), "handled twice: {:?}", &twice[..twice.len().min(20)]);
        }
        assert!(unknown.is_empty(), "handled, never offered: {unknown:?}");
        assert_eq!(report.dead_lettered, 0, "{report:?}");
        assert_eq!(
            report.retried as usize,
            self.failed.load(Ordering::Relaxed),
            "{report:?}"
        );
        // A coordinated failover may outlast an ack's retries (5 s) on a
        // loaded machine: the value comes again after its visibility
        // timeout, which is the duplicate `AtLeastOnce` allows.
        let logged: Vec<String> = match expected {
            Expect::AtLeastOnce => logged
                .into_iter()
                .filter(|l| !l.contains("the ack failed; the value may be delivered again"))
                .collect(),
            _ => logged,
        };
        assert!(logged.is_empty(), "the library logged failures: {logged:?}");
        self.consumer.shutdown().await;
        self.producer.shutdown().await;
    }
}

/// An offer's error without the value it was for: `one-3-2: redis: …` → `redis: …`.
fn error_kind(error: &str) -> String {
    error.split_once(": ").map_or(error, |(_, e)| e).to_owned()
}

/// Offers until `stop`, about 300 values a second in rounds: single offers
/// several at a time (so they join), a bulk offer, deduplicated offers and
/// offers with headers, each due 0 to 2 s later. Records the values whose
/// offer was acknowledged and the errors any returned.
async fn offer_until(
    delayed: delayq::DelayedQueue<String>,
    stop: Arc<AtomicBool>,
    acknowledged: Arc<Mutex<Vec<String>>>,
    errors: Arc<Errors>,
) {
    let delayed = Arc::new(delayed);
    let mut round = 0usize;
    let due = |i: usize| Duration::from_millis((i * 37 % 2_000) as u64);
    while !stop.load(Ordering::Relaxed) {
        let mut offers = JoinSet::new();
        for k in 0..8 {
            let (delayed, value) = (delayed.clone(), format!("one-{round}-{k}"));
            offers.spawn(async move {
                let done = tokio::time::timeout(Duration::from_secs(20), delayed.offer(&value, due(round + k)))
                    .await
                    .unwrap_or_else(|_| panic!("offer of {value} stuck"));
                (value, done.map(|_| ()))
            });
        }
        {
            let (delayed, value) = (delayed.clone(), format!("dedup-{round}"));
            offers.spawn(async move {
                let dedup = Dedup::by_id(value.clone(), Duration::from_secs(600));
                let done = tokio::time::timeout(
                    Duration::from_secs(20),
                    delayed.offer_dedup(&value, due(round + 3), &dedup),
                )
                .await
                .unwrap_or_else(|_| panic!("dedup offer of {value} stuck"));
                (value, done.map(|_| ()))
            });
        }
        {
            let (delayed, value) = (delayed.clone(), format!("header-{round}"));
            offers.spawn(async move {
                let options = OfferOptions::after(due(round + 5)).header("origin", "reshard");
                let done = tokio::time::timeout(Duration::from_secs(20), delayed.offer_with(&value, &options))
                    .await
                    .unwrap_or_else(|_| panic!("header offer of {value} stuck"));
                (value, done)
            });
        }
        let bulk: Vec<(String, Duration)> = (0..20).map(|k| (format!("bulk-{round}-{k}"), due(round + k))).collect();
        let bulk_done = tokio::time::timeout(Duration::from_secs(20), delayed.offer_all(bulk.clone()))
            .await
            .unwrap_or_else(|_| panic!("bulk offer {round} stuck"));
        match bulk_done {
            Ok(()) => acknowledged.lock().extend(bulk.into_iter().map(|(v, _)| v)),
            Err(error) => errors.offers.lock().push(format!("bulk-{round}: {error}")),
        }
        while let Some(done) = offers.join_next().await {
            match done.expect("an offer task") {
                (value, Ok(())) => acknowledged.lock().push(value),
                (value, Err(error)) => errors.offers.lock().push(format!("{value}: {error}")),
            }
        }
        round += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The hash slot of `queue`'s keys.
fn queue_slot(queue: &str) -> u16 {
    delayq::fred::util::redis_keyslot(queue.as_bytes())
}

/// Moves the queue's slot to the next master and back, `rounds` times,
/// a few keys per `MIGRATE` with a pause after each, so the slot stays
/// half-moved for a second or more each time.
async fn move_back_and_forth(cluster: &RedisCluster, queue: &str, rounds: usize) {
    let slot = queue_slot(queue);
    for round in 0..rounds {
        let masters = cluster.masters().await;
        let from = cluster.slot_owner(slot).await;
        let to = masters[(masters.iter().position(|m| *m == from).unwrap() + 1) % masters.len()];
        let how = Migration {
            batch: 3,
            pause: Duration::from_millis(150),
        };
        let started = Instant::now();
        let moved = cluster.migrate_slot(slot, from, to, how).await;
        eprintln!(
            "{queue}: round {round}: slot {slot} {from} → {to}: {} keys in {} MIGRATEs, {:?}",
            moved.keys,
            moved.batches,
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_a_busy_queues_slot_back_and_forth_loses_duplicates_and_fails_nothing() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let queue = "reshard-moves";
        let load = Load::start(&cluster.url(), queue, None).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        move_back_and_forth(&cluster, queue, 4).await;
        load.finish(Expect::ExactlyOnce).await;
    })
    .await
    .expect("test exceeded its deadline");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_then_a_coordinated_failover_of_the_slots_primary_loses_and_fails_nothing() {
    // Duplicates are counted, not forbidden: see `Expect::AtLeastOnce`.
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let queue = "reshard-failover";
        let load = Load::start(&cluster.url(), queue, None).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        move_back_and_forth(&cluster, queue, 1).await;
        let owner = cluster.slot_owner(queue_slot(queue)).await;
        let promoted = cluster.failover(owner).await;
        eprintln!("{queue}: failed over {owner} → {promoted}");
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        move_back_and_forth(&cluster, queue, 1).await;
        load.finish(Expect::AtLeastOnce).await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// fred (patched, `vendor/README.md`) follows `ASK` to the importing node:
/// with a slot left `MIGRATING`, reads of a key the source does not have
/// answer from the target, interleaved with reads of another key the target
/// serves on the same connection, and each gets its own reply. (fred 10.1.0
/// as published failed them, ended its router and gave `ASKING`'s `OK` to
/// another command.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_ask_redirections_reach_the_importing_node_and_every_reply_its_command() {
    use delayq::fred::prelude::*;
    use delayq::fred::types::{ClusterHash, CustomCommand, Value};

    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let moving = "reshard-ask";
        let slot = delayq::fred::util::redis_keyslot(moving.as_bytes());
        let from = cluster.slot_owner(slot).await;
        let to = *cluster.masters().await.iter().find(|m| **m != from).unwrap();
        let mut other = String::new();
        for i in 0.. {
            other = format!("reshard-other-{i}");
            if cluster
                .slot_owner(delayq::fred::util::redis_keyslot(other.as_bytes()))
                .await
                == to
            {
                break;
            }
        }
        let client = delayq::fred::clients::Client::new(Config::from_url(&cluster.url()).unwrap(), None, None, None);
        client.init().await.unwrap();
        let get = |key: String, attempts: u32| {
            let client = client.clone();
            async move {
                let options = Options {
                    max_attempts: Some(attempts),
                    ..Default::default()
                };
                let get = CustomCommand::new_static("GET", ClusterHash::FirstKey, false);
                client
                    .with_options(&options)
                    .custom::<Value, Value>(get, vec![key.into()])
                    .await
            }
        };
        client
            .custom::<(), _>(
                CustomCommand::new_static("SET", ClusterHash::FirstKey, false),
                vec![other.as_str(), "there"],
            )
            .await
            .unwrap();
        // Half a reshard: the slot open on both sides, its (no) keys still on the source.
        cluster.open_slot(slot, from, to).await;
        // Sent once (delayq's scripts that must not run twice are): still answered.
        assert_eq!(get(moving.into(), 1).await.unwrap(), Value::Null);
        assert_eq!(get(moving.into(), 3).await.unwrap(), Value::Null);
        let mut reads = JoinSet::new();
        for i in 0..400 {
            let asked = i % 4 == 0;
            let read = get(if asked { moving.into() } else { other.clone() }, 1);
            reads.spawn(async move { (asked, read.await) });
        }
        while let Some(done) = reads.join_next().await {
            match done.unwrap() {
                (true, reply) => assert_eq!(reply.unwrap(), Value::Null),
                (false, reply) => assert_eq!(reply.unwrap(), Value::from("there")),
            }
        }
        let _ = client.quit().await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// The primary that owns the queue's slot is killed (SIGKILL) under the same
/// load, after a move: its replica is elected, and the killed node comes
/// back as the new primary's replica. Replication is asynchronous,
/// so the clients wait for one replica on every offer and ack
/// (`Durability::replicas(1)`): then no acknowledged offer is lost. Offers on
/// their way at the kill may fail (their outcome unknown), and a value whose
/// ack had not reached the replica comes again: both are counted, not
/// forbidden.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_then_a_killed_primary_loses_no_durably_acknowledged_offer() {
    tokio::time::timeout(DEADLINE, async {
        let mut cluster = RedisCluster::start().await;
        let queue = "reshard-kill";
        let durability = Durability::replicas(1).within(Duration::from_secs(5));
        let load = Load::start(&cluster.url(), queue, Some(durability)).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        move_back_and_forth(&cluster, queue, 1).await;
        let owner = cluster.slot_owner(queue_slot(queue)).await;
        let promoted = cluster.kill_master(owner).await;
        eprintln!("{queue}: killed {owner}; {promoted} elected");
        // Back as the new primary's replica, for the waits of later writes.
        cluster.restart(owner).await;
        eprintln!("{queue}: {owner} is back, a replica");
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        load.finish(Expect::Crash).await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// Commands of several keys outside scripts (a queue's `clear`, the job
/// history switch) wait out a half-moved slot too: Redis answers them
/// `TRYAGAIN` while the node has only some of their keys, and they go again
/// until the move is done, rather than failing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_multi_key_commands_wait_out_a_half_moved_slot() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let queue = "reshard-clear";
        let client = Client::builder()
            .url(cluster.url())
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .expect("connect to the cluster");
        let delayed = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
        delayed.set_job_history(Some(Duration::from_secs(60))).await.unwrap();
        delayed
            .offer_all((0..20).map(|i| (format!("v-{i}"), Duration::from_secs(60))))
            .await
            .unwrap();
        let slot = queue_slot(queue);
        let from = cluster.slot_owner(slot).await;
        let to = *cluster.masters().await.iter().find(|m| **m != from).unwrap();
        // Half-moved: open on both sides, the timeout set and the job
        // history moved, the pending list not.
        cluster.open_slot(slot, from, to).await;
        let moved = format!("redisson_delay_queue_timeout:{{{queue}}}");
        let history = format!("delayq_jobs:{{{queue}}}");
        for key in [moved.as_str(), history.as_str()] {
            let migrate = vec![
                "127.0.0.1".into(),
                i64::from(to).into(),
                key.into(),
                0.into(),
                10_000.into(),
            ];
            crate::redis_server::node_command(from, "MIGRATE", migrate).await;
        }
        let count = vec!["COUNTKEYSINSLOT".into(), i64::from(slot).into()];
        assert_eq!(
            crate::redis_server::node_command(to, "CLUSTER", count).await,
            "2",
            "the two keys are on the target"
        );
        let cleared = tokio::spawn({
            let delayed = delayed.clone();
            async move { delayed.clear().await }
        });
        let switched = tokio::spawn({
            let delayed = delayed.clone();
            async move { delayed.set_job_history(None).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        cluster.migrate_slot(slot, from, to, Migration::default()).await;
        assert!(cleared.await.unwrap().expect("clear waits the move out"));
        switched.await.unwrap().expect("the switch waits the move out");
        assert_eq!(delayed.len().await.unwrap(), 0);
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}

/// The classic reshard when a cluster grows: a new master that serves no
/// slot yet joins (`CLUSTER MEET`, as `redis-cli --cluster add-node`), and the
/// busy queue's slot moves to it and back. The clients had no connection to
/// the new node: the first `ASK` to it opens one (fred, patched).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reshard_to_a_new_master_and_back_loses_duplicates_and_fails_nothing() {
    tokio::time::timeout(DEADLINE, async {
        let mut cluster = RedisCluster::start().await;
        let queue = "reshard-grow";
        let load = Load::start(&cluster.url(), queue, None).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let added = cluster.add_master().await;
        let slot = queue_slot(queue);
        let owner = cluster.slot_owner(slot).await;
        let how = Migration {
            batch: 3,
            pause: Duration::from_millis(150),
        };
        for (from, to) in [(owner, added), (added, owner)] {
            let moved = cluster.migrate_slot(slot, from, to, how).await;
            eprintln!(
                "{queue}: slot {slot} {from} → {to}: {} keys in {} MIGRATEs",
                moved.keys, moved.batches
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        load.finish(Expect::ExactlyOnce).await;
    })
    .await
    .expect("test exceeded its deadline");
}
