//! Workers that take and ack in batches: one script pops and
//! claims up to 128 ready values (`claim_batch.lua`), acks of many
//! deliveries go in one script (`ack_batch.lua`). Every guarantee of a
//! single take holds for each value of a batch.

use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::fred::types::Value;
use delayq::{LongCodec, StringCodec};
use parking_lot::Mutex;
use tokio::sync::Semaphore;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{behind_proxy, deadline, eventually, redis_test};

const CLAIM_BATCH: &str = include_str!("../../lua/claim_batch.lua");
const ACK_BATCH: &str = include_str!("../../lua/ack_batch.lua");

/// EVALSHA arguments of `claim_batch.lua` (loaded as `sha`) on `keys`'
/// queue by hand: batch id "batch1", `n` values at most, a visibility
/// timeout of 10 minutes, no delivery limit, `budget` payload bytes.
fn claim_batch_args(sha: &str, keys: &delayq::QueueKeys, n: i64, budget: i64) -> Vec<Value> {
    let mut args: Vec<Value> = vec![sha.into(), 8.into()];
    for key in [
        keys.destination(),
        keys.leases(),
        keys.dead_letter(),
        keys.due(),
        keys.counts(),
        keys.counts_expiry(),
        keys.paused(),
        keys.dead_reasons(),
    ] {
        args.push(key.into());
    }
    args.extend([Value::from("batch1"), n.into(), 600_000.into(), 0.into(), budget.into()]);
    args
}

/// A handler that records each value it runs on.
fn recorder(seen: Arc<Mutex<Vec<i64>>>) -> impl Fn(i64) -> std::future::Ready<Result<(), BoxError>> + Send + Sync {
    move |value| {
        seen.lock().push(value);
        std::future::ready(Ok(()))
    }
}

/// Values 0..n, each once, in any order.
fn each_once(seen: &[i64], n: i64) {
    let mut values = seen.to_vec();
    values.sort();
    assert_eq!(values, (0..n).collect::<Vec<_>>(), "each value handled exactly once");
}

redis_test! {
    /// A batch claim that ran and whose reply was lost is not sent again (a
    /// resend would claim more values): its deliveries are found by the batch
    /// id and go back to the head uncounted, in order, long before their
    /// visibility timeout. Each value is then handled once, as a first attempt
    /// (with `max_attempts(1)` a counted redelivery would be a dead letter).
    async fn a_batch_claim_whose_reply_is_lost_gives_its_values_back_uncounted(proxy, client, raw) {
        const N: i64 = 20;
        let sha = raw.load_script(CLAIM_BATCH).await;
        client
            .blocking_queue("lost-batch", LongCodec)
            .unwrap()
            .offer_all(0..N)
            .await
            .unwrap();
        proxy.arm(Fault::LoseReply, &sha);
        let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
        let worker = client
            .worker("lost-batch", LongCodec)
            .unwrap()
            .concurrency(64)
            .visibility_timeout(Duration::from_secs(600))
            .retry(delayq::worker::RetryPolicy::default().max_attempts(1))
            .run(recorder(seen.clone()));
        eventually(Duration::from_secs(30), "all handled and acked", || async {
            worker.report().succeeded == N as u64
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(proxy.fired(), 1, "a batch claim ran and its reply was lost");
        each_once(&seen.lock(), N);
        assert_eq!((report.handled, report.dead_lettered), (N as u64, 0), "{report:?}");
        let queue = client.reliable_queue("lost-batch", LongCodec).unwrap();
        assert_eq!(queue.dead_letter_len().await.unwrap(), 0, "no lost claim counted");
        assert_eq!(queue.in_flight().await.unwrap(), 0);
        assert_eq!(queue.len().await.unwrap(), 0);
    }
}

/// An ack batch whose reply is lost (or whose request is lost) is resent
/// by fred: the resend answers as the first run did, each delivery is acked
/// once, and none comes back after its visibility timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ack_batch_whose_reply_or_request_is_lost_acks_each_value_once() {
    deadline(async {
        for (round, fault) in [Fault::LoseReply, Fault::LoseRequest].into_iter().enumerate() {
            const N: i64 = 20;
            let (redis, proxy, client) = behind_proxy().await;
            let raw = redis.raw().await;
            let sha = raw.load_script(ACK_BATCH).await;
            let name = format!("lost-ack-{round}");
            client
                .blocking_queue(&name, LongCodec)
                .unwrap()
                .offer_all(0..N)
                .await
                .unwrap();
            proxy.arm(fault, &sha);
            let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
            let worker = client
                .worker(&name, LongCodec)
                .unwrap()
                .concurrency(64)
                .visibility_timeout(Duration::from_secs(2))
                .run(recorder(seen.clone()));
            let queue = client.reliable_queue(&name, LongCodec).unwrap();
            eventually(Duration::from_secs(30), "all handled and acked", || async {
                worker.report().succeeded == N as u64 && queue.in_flight().await.unwrap() == 0
            })
            .await;
            assert_eq!(proxy.fired(), 1, "{fault:?}: an ack batch was hit");
            // Past the visibility timeout: an unacked value would be back.
            tokio::time::sleep(Duration::from_secs(3)).await;
            let report = worker.shutdown().await;
            each_once(&seen.lock(), N);
            assert_eq!(
                (report.handled, report.succeeded),
                (N as u64, N as u64),
                "{fault:?}: {report:?}"
            );
            assert_eq!(queue.len().await.unwrap(), 0, "{fault:?}: nothing given back");
            assert_eq!(queue.in_flight().await.unwrap(), 0);
            if fault == Fault::LoseReply {
                // The first run left its reply for the resend.
                let Value::Array(records) = raw.cmd("KEYS", vec![format!("delayq_runs:{{{name}}}:*").into()]).await
                else {
                    panic!("KEYS answers an array")
                };
                assert!(!records.is_empty(), "the ack's lane record");
            }
        }
    })
    .await;
}

redis_test! {
    /// Equal payloads of different jobs taken in one batch are separate
    /// deliveries: each in flight on its own (its own id), each a first
    /// attempt, each acked once; none comes back.
    async fn identical_payloads_in_one_batch_are_separate_first_deliveries(raw, client) {
        const N: usize = 16;
        let jobs: Vec<String> = (0..N)
            .map(|i| {
                if i % 4 == 0 {
                    format!("other:{i}")
                } else {
                    "same".into()
                }
            })
            .collect();
        client
            .blocking_queue("equal", StringCodec)
            .unwrap()
            .offer_all(jobs.clone())
            .await
            .unwrap();
        let gate = Arc::new(Semaphore::new(0));
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let worker = client
            .worker("equal", StringCodec)
            .unwrap()
            .concurrency(64)
            .visibility_timeout(Duration::from_secs(2))
            .on_error(|f| panic!("no failure expected: {}", f.error()))
            .run({
                let (gate, seen) = (gate.clone(), seen.clone());
                move |value: String| {
                    let (gate, seen) = (gate.clone(), seen.clone());
                    async move {
                        let _ = gate.acquire().await;
                        seen.lock().push(value);
                        Ok::<_, BoxError>(())
                    }
                }
            });
        let queue = client.reliable_queue("equal", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "all in flight", || async {
            queue.in_flight().await.unwrap() == N
        })
        .await;
        // Every lease: a count of 1, ids all different.
        let leases = raw.zrange(queue.keys().leases()).await;
        let ids: std::collections::HashSet<_> = leases.iter().map(|(m, _)| m[..8].to_vec()).collect();
        assert_eq!(ids.len(), N, "one id per delivery");
        assert!(
            leases.iter().all(|(m, _)| &m[8..18] == b"0000000001"),
            "each a first attempt"
        );
        gate.close();
        eventually(Duration::from_secs(20), "all acked", || async {
            worker.report().succeeded == N as u64 && queue.in_flight().await.unwrap() == 0
        })
        .await;
        // Past the visibility timeout: an unacked copy would be back.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let report = worker.shutdown().await;
        assert_eq!((report.handled, report.succeeded), (N as u64, N as u64), "{report:?}");
        let mut handled = seen.lock().clone();
        let mut expected = jobs;
        handled.sort();
        expected.sort();
        assert_eq!(handled, expected);
        assert_eq!(queue.len().await.unwrap(), 0, "nothing given back");
    }
}

redis_test! {
    /// With 100,000 deliveries in flight, batch claims keep taking (another
    /// worker's values are handled), and one script call takes at most 128
    /// values, however many it is asked for, and stops at its byte budget.
    scale async fn batch_claims_stay_bounded_with_100_000_deliveries_in_flight(raw, client) {
        const IN_FLIGHT: usize = 100_000;
        let ready = client.blocking_queue("big", LongCodec).unwrap();
        for chunk in (0..IN_FLIGHT as i64).collect::<Vec<_>>().chunks(10_000) {
            ready.offer_all(chunk.iter().copied()).await.unwrap();
        }
        let gate = Arc::new(Semaphore::new(0));
        let holding = client
            .worker("big", LongCodec)
            .unwrap()
            .concurrency(IN_FLIGHT)
            .visibility_timeout(Duration::from_secs(600))
            .run({
                let gate = gate.clone();
                move |_: i64| {
                    let gate = gate.clone();
                    async move {
                        let _ = gate.acquire().await;
                        Ok::<_, BoxError>(())
                    }
                }
            });
        let queue = client.reliable_queue("big", LongCodec).unwrap();
        eventually(Duration::from_secs(240), "100,000 in flight", || async {
            queue.in_flight().await.unwrap() == IN_FLIGHT
        })
        .await;
        // The script by hand, asked for 1,000 values: it takes 128.
        ready.offer_all(0..1_000i64).await.unwrap();
        let sha = raw.load_script(CLAIM_BATCH).await;
        let keys = queue.keys();
        let claim = |n: i64, budget: i64| claim_batch_args(&sha, keys, n, budget);
        let Value::Array(reply) = raw.cmd("EVALSHA", claim(1_000, 1 << 20)).await else {
            panic!("claim_batch answers an array")
        };
        assert_eq!(reply.len(), 4 + 2 * 128, "128 values taken (two fields each, after four)");
        assert_eq!(reply[3], Value::Null, "no concurrency limit: no room to tell");
        assert_eq!(reply[2], Value::Integer(128));
        assert_eq!(queue.in_flight().await.unwrap(), IN_FLIGHT + 128);
        // Large payloads: the byte budget ends the batch (one value past it).
        let large = vec![b'x'; 100_000];
        let mut push: Vec<Value> = vec![keys.destination().into()];
        push.extend((0..20).map(|_| Value::Bytes(large.clone().into())));
        raw.cmd("LPUSH", push).await;
        let Value::Array(reply) = raw.cmd("EVALSHA", claim(64, 1 << 20)).await else {
            panic!("claim_batch answers an array")
        };
        // Popped 2, 2, 4, then 3 (as many as the sizes so far say fit).
        assert_eq!(reply.len(), 4 + 2 * 11, "a mebibyte and one value past it");
        // A second worker still takes what is ready, in batches.
        let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
        raw.cmd("LPOP", vec![keys.destination().into(), 9.into()]).await;
        let left = queue.len().await.unwrap();
        let second = client
            .worker("big", LongCodec)
            .unwrap()
            .concurrency(64)
            .run(recorder(seen.clone()));
        eventually(Duration::from_secs(30), "the rest handled", || async {
            seen.lock().len() == left
        })
        .await;
        second.shutdown().await;
        gate.close();
        let report = holding.shutdown().await;
        assert_eq!(report.succeeded, IN_FLIGHT as u64, "{report:?}");
    }
}

/// A worker that dies holding a batch (its connection goes silent for good,
/// as a killed process's would; nothing is given back) loses nothing: every
/// value of the batch comes back after the visibility timeout and is
/// handled by another worker, at delivery count 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_holding_a_batch_loses_none_of_it() {
    deadline(async {
        const N: i64 = 30;
        let (redis, proxy, doomed) = behind_proxy().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        client
            .blocking_queue("killed", LongCodec)
            .unwrap()
            .offer_all(0..N)
            .await
            .unwrap();
        let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let dead = doomed
            .worker("killed", LongCodec)
            .unwrap()
            .concurrency(64)
            .visibility_timeout(Duration::from_secs(2))
            .run({
                let started = started.clone();
                move |_: i64| {
                    started.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    std::future::pending::<Result<(), BoxError>>()
                }
            });
        let queue = client.reliable_queue("killed", LongCodec).unwrap();
        eventually(Duration::from_secs(20), "the batch in flight", || async {
            queue.in_flight().await.unwrap() == N as usize
        })
        .await;
        assert_eq!(queue.len().await.unwrap(), 0);
        // The process dies: nothing it sends arrives any more, on the
        // connections it had (silent, as a vanished host's) or on any it
        // would open (its task still runs here, and would reconnect).
        proxy.black_hole();
        proxy.set_outage(true);
        std::mem::forget(dead);
        std::mem::forget(doomed);
        let gate = Arc::new(Semaphore::new(0));
        let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
        let survivor = client
            .worker("killed", LongCodec)
            .unwrap()
            .concurrency(64)
            .retry(delayq::worker::RetryPolicy::default().max_attempts(3))
            .run({
                let (gate, seen) = (gate.clone(), seen.clone());
                move |value: i64| {
                    let (gate, seen) = (gate.clone(), seen.clone());
                    async move {
                        let _ = gate.acquire().await;
                        seen.lock().push(value);
                        Ok::<_, BoxError>(())
                    }
                }
            });
        // Every lease now the survivor's: N second deliveries.
        eventually(Duration::from_secs(40), "every value back and taken again", || async {
            let leases = raw.zrange(queue.keys().leases()).await;
            leases.len() == N as usize && leases.iter().all(|(m, _)| &m[8..18] == b"0000000002")
        })
        .await;
        gate.close();
        eventually(Duration::from_secs(20), "all handled", || async {
            seen.lock().len() >= N as usize && queue.in_flight().await.unwrap() == 0
        })
        .await;
        let report = survivor.shutdown().await;
        assert_eq!(report.succeeded, N as u64, "{report:?}");
        each_once(&seen.lock(), N);
        assert_eq!(started.load(std::sync::atomic::Ordering::SeqCst), N as usize);
        assert_eq!(queue.in_flight().await.unwrap(), 0);
        assert_eq!(queue.len().await.unwrap(), 0);
    })
    .await;
}

redis_test! {
    /// A value delivered `max_deliveries` times without an ack goes to the
    /// dead letters when a batch claims it again: no handler sees it, and the
    /// other values of the batch are handled.
    async fn a_batch_claim_dead_letters_a_value_delivered_too_often(raw, client) {
        let queue = client
            .reliable_queue("too-often", StringCodec)
            .unwrap()
            .with_max_deliveries(3);
        client
            .blocking_queue("too-often", StringCodec)
            .unwrap()
            .offer_all(["poison".to_owned()])
            .await
            .unwrap();
        // Three deliveries, each dropped unsettled (back to the tail, counted).
        for _ in 0..3 {
            let delivery = queue.take().await.unwrap();
            assert_eq!(delivery.value(), "poison");
            drop(delivery);
            eventually(Duration::from_secs(10), "given back", || async {
                queue.len().await.unwrap() == 1
            })
            .await;
        }
        let others: Vec<String> = (0..10).map(|i| format!("ok:{i}")).collect();
        client
            .blocking_queue("too-often", StringCodec)
            .unwrap()
            .offer_all(others.clone())
            .await
            .unwrap();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let worker = client
            .worker("too-often", StringCodec)
            .unwrap()
            .concurrency(64)
            .retry(delayq::worker::RetryPolicy::default().max_attempts(3))
            .run({
                let seen = seen.clone();
                move |value: String| {
                    seen.lock().push(value);
                    std::future::ready(Ok::<_, BoxError>(()))
                }
            });
        eventually(Duration::from_secs(20), "the others handled", || async {
            worker.report().succeeded == 10
        })
        .await;
        worker.shutdown().await;
        let mut handled = seen.lock().clone();
        handled.sort();
        assert_eq!(handled, others, "the poison value reached no handler");
        assert_eq!(
            raw.lrange(queue.keys().dead_letter()).await,
            vec![bytes::Bytes::from("poison")]
        );
        let reasons = raw.lrange(queue.keys().dead_reasons()).await;
        assert_eq!(reasons.len(), 1);
        assert!(
            String::from_utf8_lossy(&reasons[0]).contains("delivered 3 times"),
            "{reasons:?}"
        );
        assert_eq!(queue.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    /// An ack batch run again under the same lane run (fred's resend after a
    /// lost reply) answers what its first run did, and changes nothing more;
    /// a new run on the same deliveries finds them acked already: too late.
    async fn an_ack_batch_sent_again_answers_as_its_first_run_did(raw, client) {
        let queue = client.reliable_queue("resent-ack", LongCodec).unwrap();
        client
            .blocking_queue("resent-ack", LongCodec)
            .unwrap()
            .offer_all(0..3i64)
            .await
            .unwrap();
        let keys = queue.keys();
        let claim_sha = raw.load_script(CLAIM_BATCH).await;
        let args = claim_batch_args(&claim_sha, keys, 64, 1 << 20);
        raw.cmd("EVALSHA", args).await;
        // The lease set's members, as script arguments.
        let lease_members = || async {
            let leases = raw.zrange(keys.leases()).await;
            leases.into_iter().map(|(m, _)| Value::Bytes(m)).collect::<Vec<Value>>()
        };
        let members = lease_members().await;
        assert_eq!(members.len(), 3);
        let ack_sha = raw.load_script(ACK_BATCH).await;
        let record = "delayq_runs:{resent-ack}:lane1";
        let ack = |run: i64| {
            let mut args: Vec<Value> = vec![
                ack_sha.as_str().into(),
                2.into(),
                keys.leases().into(),
                record.into(),
                run.into(),
                86_400_000.into(), // how long a handled job's history is kept
            ];
            args.extend(members.iter().cloned());
            args
        };
        let ints = |reply: Value| match reply {
            Value::Array(values) => values.into_iter().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>(),
            other => panic!("ack_batch answers an array: {other:?}"),
        };
        assert_eq!(ints(raw.cmd("EVALSHA", ack(1)).await), [1, 1, 1]);
        assert_eq!(raw.zcard(keys.leases()).await, 0);
        assert_eq!(
            ints(raw.cmd("EVALSHA", ack(1)).await),
            [1, 1, 1],
            "a resend answers as the first run"
        );
        assert_eq!(
            ints(raw.cmd("EVALSHA", ack(2)).await),
            [0, 0, 0],
            "a new run finds them gone"
        );
        // A delivery named twice in one run is acked once: the second is
        // too late, as it would be in a run of its own.
        client
            .blocking_queue("resent-ack", LongCodec)
            .unwrap()
            .offer_all(3..5i64)
            .await
            .unwrap();
        raw.cmd("EVALSHA", claim_batch_args(&claim_sha, keys, 64, 1 << 20)).await;
        let leased = lease_members().await;
        assert_eq!(leased.len(), 2);
        let mut twice = ack(3);
        twice.truncate(6);
        twice.extend([leased[0].clone(), leased[1].clone(), leased[0].clone()]);
        assert_eq!(ints(raw.cmd("EVALSHA", twice).await), [1, 1, 0]);
        assert_eq!(raw.zcard(keys.leases()).await, 0);
    }
}

redis_test! {
    /// Equal payloads are different deliveries (each its own id): acked in
    /// one batch, every one is acked, none stays in flight or comes back.
    async fn equal_payloads_acked_in_one_batch_each_ack(client) {
        let ready = client.blocking_queue("same", LongCodec).unwrap();
        ready.offer_all(std::iter::repeat_n(7i64, 300)).await.unwrap();
        let handled = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let worker = {
            let handled = handled.clone();
            client.worker("same", LongCodec).unwrap().concurrency(4).run(move |_v: i64| {
                let handled = handled.clone();
                async move {
                    handled.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    Ok::<_, BoxError>(())
                }
            })
        };
        let queue = client.reliable_queue("same", LongCodec).unwrap();
        eventually(Duration::from_secs(60), "all handled", || async {
            handled.load(std::sync::atomic::Ordering::SeqCst) >= 300
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(report.succeeded, 300);
        assert_eq!(handled.load(std::sync::atomic::Ordering::SeqCst), 300);
        assert_eq!(queue.in_flight().await.unwrap(), 0);
        assert!(queue.is_empty().await.unwrap());
    }
}
