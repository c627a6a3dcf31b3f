//! Durable offers on a real Sentinel deployment (a master, one replica,
//! three sentinels, all started here): the master is killed with SIGKILL
//! while about 2,000 offers a second run, the sentinels promote the
//! replica, and every offer that was acknowledged is looked for on the new
//! master. With a durability of one replica none is missing, run after
//! run; without one, the number missing is printed (it may be 0: a loss
//! needs the kill to land while writes are on their way).
//!
//! And on a Redis Cluster, each wait goes to the master of its queue's slot.
//!
//! The lost window is made real, not hoped for: the replica follows its
//! master through a `DelayLink`, which hands it the replication stream
//! 100 ms late and drops what it still holds when the master dies. It
//! stands for a replica 100 ms behind (a slow or distant link, a busy
//! replica); on loopback a replica is microseconds behind and a kill
//! would rarely catch a write on its way. The acknowledgements the replica
//! sends back are not delayed, so a `WAIT` returns as soon as the replica
//! really has the write (about 100 ms after it, at least).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::{Client, Durability, StringCodec};
use parking_lot::Mutex;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::redis_cluster::RedisCluster;
use crate::redis_sentinel::RedisSentinel;
use crate::redis_server::{eventually, node_command, wait_for};
use crate::DEADLINE;

/// How late the replica gets the master's writes.
const LINK_DELAY: Duration = Duration::from_millis(100);
/// Offers made every 10 ms: about 2,000 a second.
const PER_TICK: usize = 20;
/// Acknowledged offers before the master is killed: well into the run.
const BEFORE_KILL: usize = 1_000;
/// Runs with a durability, each on a deployment of its own.
const DURABLE_RUNS: usize = 3;

/// What one run found.
#[derive(Debug)]
struct Outcome {
    /// Offers acknowledged (`Ok`).
    acknowledged: usize,
    /// Offers that failed (the master gone, `NotReplicated`...): never counted as lost.
    failed: usize,
    /// Acknowledged offers the new master does not have.
    lost: usize,
}

/// One run: offers at about 2,000 a second through the sentinels, the
/// master killed once `BEFORE_KILL` are acknowledged, offers stopped once
/// the replica is promoted, and the acknowledged ones looked for there.
async fn kill_the_master_under_offers(run: usize, durability: Option<Durability>) -> Outcome {
    let mut sentinel = RedisSentinel::start_with_slow_replica(LINK_DELAY).await;
    let old = sentinel.master_port().await;
    let mut builder = Client::builder()
        .url(sentinel.url())
        .blocking_timeout(Duration::from_secs(1));
    if let Some(durability) = durability {
        builder = builder.durability(durability);
    }
    let client = builder.build().await.expect("connect through the sentinels");
    let name = format!("durable-{run}");
    let queue = client.delayed_queue(&name, StringCodec).unwrap().without_transfer();

    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let offering = {
        let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
        tokio::spawn(async move {
            let mut failed = 0;
            let mut offers = JoinSet::new();
            let mut tick = tokio::time::interval(Duration::from_millis(10));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut next = 0usize;
            let mut record = |done: Result<Result<String, delayq::Error>, tokio::task::JoinError>| match done {
                Ok(Ok(value)) => acknowledged.lock().push(value),
                _ => failed += 1,
            };
            while !stop.load(Ordering::SeqCst) {
                tick.tick().await;
                for _ in 0..PER_TICK {
                    let (queue, value) = (queue.clone(), format!("{run}-{next}"));
                    next += 1;
                    offers.spawn(async move { queue.offer(&value, Duration::from_secs(3600)).await.map(|()| value) });
                }
                while let Some(done) = offers.try_join_next() {
                    record(done);
                }
            }
            while let Some(done) = offers.join_next().await {
                record(done);
            }
            (next, failed)
        })
    };

    eventually(Duration::from_secs(60), "offers to be acknowledged", || async {
        acknowledged.lock().len() >= BEFORE_KILL
    })
    .await;
    assert!(
        sentinel.replica_follows_the_link().await,
        "the replica must still follow the master through the slow link"
    );
    sentinel.server(old).kill();
    let killed = Instant::now();
    let new = sentinel.wait_for_new_master(old, Duration::from_secs(60)).await;
    eprintln!(
        "run {run}: master {old} killed, {new} promoted after {:?}",
        killed.elapsed()
    );
    stop.store(true, Ordering::SeqCst);
    let (offered, failed) = offering.await.expect("the offering task");
    client.shutdown().await;

    // Every acknowledged value, looked for on the new master itself.
    let reader = Client::connect(&format!("redis://127.0.0.1:{new}")).await.unwrap();
    let queue = reader.delayed_queue(&name, StringCodec).unwrap().without_transfer();
    let present: std::collections::HashSet<String> =
        wait_for(Duration::from_secs(30), "the new master's values", || {
            let queue = queue.clone();
            async move { queue.read_all().await.ok() }
        })
        .await
        .into_iter()
        .collect();
    reader.shutdown().await;
    let acknowledged = acknowledged.lock().clone();
    let lost = acknowledged.iter().filter(|v| !present.contains(*v)).count();
    let outcome = Outcome {
        acknowledged: acknowledged.len(),
        failed,
        lost,
    };
    eprintln!(
        "run {run} ({}): {offered} offered, {outcome:?}",
        if durability.is_some() { "durable" } else { "plain" }
    );
    outcome
}

/// With `Durability::replicas(1)`, no acknowledged offer is lost when the
/// master is killed and its replica promoted, over repeated runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_offers_survive_a_killed_master_and_its_replica_promotion() {
    tokio::time::timeout(DEADLINE * 2, async {
        let durability = Durability::replicas(1).within(Duration::from_secs(2));
        for run in 0..DURABLE_RUNS {
            let outcome = kill_the_master_under_offers(run, Some(durability)).await;
            assert!(outcome.acknowledged >= BEFORE_KILL, "{outcome:?}");
            assert_eq!(
                outcome.lost, 0,
                "run {run}: acknowledged durable offers lost: {outcome:?}"
            );
        }
    })
    .await
    .expect("test exceeded its deadline");
}

/// The same without a durability: acknowledged offers the new master lacks
/// are counted and printed (not asserted: a kill may land between writes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_durable_offers_lost_to_a_killed_master_are_counted() {
    tokio::time::timeout(DEADLINE, async {
        let outcome = kill_the_master_under_offers(100, None).await;
        assert!(outcome.acknowledged >= BEFORE_KILL, "{outcome:?}");
        eprintln!(
            "without a durability: {} of {} acknowledged offers lost in the failover ({} failed)",
            outcome.lost, outcome.acknowledged, outcome.failed
        );
    })
    .await
    .expect("test exceeded its deadline");
}

/// On a Redis Cluster each durable offer's wait goes to the master that
/// owns its queue's slot, the one that took the write (fred routes the
/// keyless `WAIT` by the slot delayq gives it), and no other master sees
/// one: a wait on another node would count nothing of the write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn durable_offers_on_a_cluster_wait_on_the_master_of_their_slot() {
    tokio::time::timeout(DEADLINE, async {
        let cluster = RedisCluster::start().await;
        let client = Client::builder()
            .url(cluster.url())
            .blocking_timeout(Duration::from_secs(1))
            .durability(Durability::replicas(1).within(Duration::from_secs(10)))
            .build()
            .await
            .expect("connect to the cluster");
        let masters = cluster.masters().await;
        let nodes: Vec<&crate::redis_server::RedisServer> =
            cluster.nodes.iter().filter(|n| masters.contains(&n.port())).collect();
        for i in 0..12 {
            let name = format!("dc-{i}");
            let queue = client.delayed_queue(&name, StringCodec).unwrap().without_transfer();
            let mut monitors = Vec::new();
            for node in &nodes {
                monitors.push((node.port(), node.monitor().await));
            }
            queue.offer(&format!("v-{i}"), Duration::from_secs(3600)).await.unwrap();
            queue
                .offer_all((0..10).map(|j| (format!("b-{i}-{j}"), Duration::from_secs(3600))))
                .await
                .unwrap();
            let key = format!("redisson_delay_queue_timeout:{{{name}}}");
            for (port, monitor) in monitors {
                let owner = node_command(port, "EXISTS", vec![key.clone().into()]).await == "1";
                let waits = monitor.entries().await.iter().filter(|e| e.name() == "wait").count();
                if owner {
                    assert_eq!(waits, 2, "{name}: one wait per call on its master {port}");
                } else {
                    assert_eq!(waits, 0, "{name}: a wait on {port}, which does not own the slot");
                }
            }
        }
        client.shutdown().await;
    })
    .await
    .expect("test exceeded its deadline");
}
