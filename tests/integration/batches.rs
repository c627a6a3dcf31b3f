//! Batches (issue 46, item 5): members offered once under lost replies,
//! each counted once at its first end (handled, dead-lettered, cancelled),
//! a killed worker's member counted once, and the completion offered to its
//! target exactly once, also when the mover's reply is lost.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::batch::{BatchOptions, BatchState};
use delayq::error::BoxError;
use delayq::fred::types::Value;
use delayq::limits::Limits;
use delayq::worker::{JobContext, Permanent, RetryPolicy};
use delayq::{Error, StringCodec};
use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{eventually, redis_test, settled};

const DAY: Duration = Duration::from_secs(24 * 3600);
const WAIT: Duration = Duration::from_secs(30);

fn rows(n: usize) -> Vec<(String, Duration)> {
    (1..=n).map(|i| (format!("row-{i}"), Duration::ZERO)).collect()
}

redis_test! {
    /// 100 members: 10 fail for good, 5 are cancelled before they run, the
    /// rest are handled; the completion arrives once, with those counts and
    /// the caller's data, and the batch reads delivered.
    async fn a_batch_completes_once_with_its_counts(client) {
        let dq = client.delayed_queue("batch-rows", StringCodec).unwrap();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("batch-rows", StringCodec).unwrap();
        let mut items = rows(100);
        for (i, item) in items.iter_mut().enumerate() {
            if i % 10 == 0 {
                item.0 = format!("fail-{i}");
            }
        }
        let options = BatchOptions::new().on_complete("batch-rows-done", serde_json::json!({ "file": "nov.csv" }));
        let id = dq.offer_batch(items, &options).await.unwrap();
        let status = dq.batch(&id).await.unwrap().expect("its record");
        assert_eq!((status.state, status.total, status.offered), (BatchState::Open, 100, 100));
        dq.transfer_now().await.unwrap();
        for n in [2, 3, 4, 5, 6] {
            let outcome = rq.cancel_job(&format!("{id}/{n}")).await.unwrap();
            assert!(matches!(outcome, delayq::jobs::CancelOutcome::Queued { .. }), "{outcome:?}");
        }
        let worker = client
            .worker("batch-rows", StringCodec)
            .unwrap()
            .concurrency(8)
            .retry(RetryPolicy::none())
            .run_job(|row: String, _: JobContext| async move {
                if row.starts_with("fail") {
                    return Err::<(), BoxError>(Permanent::new(std::io::Error::other("bad row")).into());
                }
                Ok(())
            });
        // The target's consumers transfer it, as a worker of it would.
        let done = client.reliable_queue("batch-rows-done", StringCodec).unwrap().with_transfer();
        eventually(WAIT, "the completion arrives", || async { done.len().await.unwrap() == 1 }).await;
        // Offered, then marked delivered by the same mover: the mark may
        // land a moment after the completion is seen.
        eventually(WAIT, "marked delivered", || async {
            dq.batch(&id).await.unwrap().is_some_and(|b| b.state == BatchState::Delivered)
        })
        .await;
        let batch = dq.batch(&id).await.unwrap().unwrap();
        assert_eq!((batch.handled, batch.dead_lettered, batch.cancelled), (85, 10, 5));
        assert!(batch.completed.is_some());
        // Several reaper passes later, still one.
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert_eq!(done.len().await.unwrap(), 1);
        worker.shutdown().await;
        let completion = done.take().await.unwrap();
        let value: serde_json::Value = serde_json::from_str(completion.value()).unwrap();
        assert_eq!(
            value,
            serde_json::json!({
                "batch": id, "queue": "batch-rows", "total": 100, "handled": 85,
                "dead_lettered": 10, "cancelled": 5, "data": { "file": "nov.csv" }
            })
        );
        completion.ack().await.unwrap();
        // 10 failed, 5 cancelled (kept there, never dropped).
        assert_eq!(rq.dead_letter_len().await.unwrap(), 15);
    }
}

redis_test! {
    /// A chunk whose reply is lost, and one whose request is lost: fred
    /// sends again, and each member is offered once (the record counts what
    /// the chunks added).
    async fn lost_replies_and_requests_offer_each_member_once(proxy, client, raw) {
        let dq = client.delayed_queue("batch-lost", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        settled(&raw, "batch-lost").await;
        proxy.arm(Fault::LoseReply, "lost-chunk-marker");
        let id = dq
            .offer_batch(rows(450), &BatchOptions::new().id("lost-chunk-marker"))
            .await
            .unwrap();
        assert_eq!(proxy.fired(), 1);
        assert_eq!(dq.len().await.unwrap(), 450);
        let status = dq.batch(&id).await.unwrap().unwrap();
        assert_eq!((status.state, status.offered), (BatchState::Open, 450));
        proxy.arm(Fault::LoseRequest, "lost-request-marker");
        dq.offer_batch(rows(300), &BatchOptions::new().id("lost-request-marker")).await.unwrap();
        assert_eq!(proxy.fired(), 2);
        assert_eq!(dq.len().await.unwrap(), 750);
        // Offered again under its id: nothing added twice.
        dq.offer_batch(rows(300), &BatchOptions::new().id("lost-request-marker")).await.unwrap();
        assert_eq!(dq.len().await.unwrap(), 750);
        // Another batch under a taken id is refused.
        let taken = dq.offer_batch(rows(3), &BatchOptions::new().id("lost-request-marker")).await;
        assert!(matches!(taken, Err(Error::InvalidArgument(_))), "{taken:?}");
        assert!(matches!(dq.batch("never").await, Ok(None)));
    }
}

redis_test! {
    /// The mover's offer of the completion loses its reply: the completion
    /// is on the target once, and the batch delivered.
    async fn a_completion_whose_offer_reply_is_lost_arrives_once(proxy, client, raw) {
        let dq = client.delayed_queue("batch-mover", StringCodec).unwrap();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let options = BatchOptions::new().id("mover-marker").on_complete("batch-mover-done", serde_json::Value::Null);
        let id = dq.offer_batch(rows(5), &options).await.unwrap();
        settled(&raw, "batch-mover").await;
        // Only the completion's payload holds this.
        proxy.arm(Fault::LoseReply, "\"batch\":\"mover-marker\"");
        let worker = client.worker("batch-mover", StringCodec).unwrap().run(|_: String| async { Ok::<(), BoxError>(()) });
        let done = client.reliable_queue("batch-mover-done", StringCodec).unwrap().with_transfer();
        eventually(WAIT, "delivered", || async {
            dq.batch(&id).await.unwrap().is_some_and(|b| b.state == BatchState::Delivered)
        })
        .await;
        assert_eq!(proxy.fired(), 1);
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert_eq!(done.len().await.unwrap(), 1);
        worker.shutdown().await;
    }
}

redis_test! {
    /// A worker cut off while it holds a member: the member comes back after
    /// its visibility timeout, is handled by another worker, and is counted
    /// once; the batch completes with every member handled.
    async fn a_cut_off_workers_member_is_counted_once(redis, raw) {
        let producer = redis.client().await;
        let dq = producer.delayed_queue("batch-cut", StringCodec).unwrap();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let id = dq.offer_batch(rows(6), &BatchOptions::new()).await.unwrap();
        dq.transfer_now().await.unwrap();
        let proxy = FaultProxy::start(redis.port()).await;
        let doomed = redis.client_builder().url(proxy.url()).build().await.unwrap();
        let stuck = Arc::new(AtomicUsize::new(0));
        let _first = doomed
            .worker("batch-cut", StringCodec)
            .unwrap()
            .prefetch(0)
            .visibility_timeout(Duration::from_secs(1))
            .run({
                let stuck = stuck.clone();
                move |_: String| {
                    stuck.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<Result<(), std::io::Error>>()
                }
            });
        eventually(WAIT, "one is held", || async { stuck.load(Ordering::SeqCst) == 1 }).await;
        proxy.black_hole();
        let second = producer.worker("batch-cut", StringCodec).unwrap().concurrency(2).run(|_: String| async {
            Ok::<(), BoxError>(())
        });
        eventually(WAIT, "complete", || async {
            dq.batch(&id).await.unwrap().is_some_and(|b| b.state == BatchState::Delivered)
        })
        .await;
        let batch = dq.batch(&id).await.unwrap().unwrap();
        assert_eq!((batch.handled, batch.dead_lettered, batch.cancelled), (6, 0, 0));
        second.shutdown().await;
        assert_eq!(raw.zcard("delayq_leases:{batch-cut}").await, 0);
    }
}

redis_test! {
    /// A batch needs job history; the queue's limits stop a batch half way
    /// (the call fails, the batch stays offering and never completes), and
    /// the same offer under its id resumes it.
    async fn a_refused_batch_resumes_under_its_id(client) {
        let dq = client.delayed_queue("batch-limits", StringCodec).unwrap().without_transfer();
        let none = dq.offer_batch(rows(3), &BatchOptions::new()).await;
        assert!(matches!(none, Err(Error::InvalidArgument(_))), "{none:?}");
        dq.set_job_history(Some(DAY)).await.unwrap();
        dq.set_limits(&Limits::none().max_size(250)).await.unwrap();
        let options = BatchOptions::new().id("resumed");
        let refused = dq.offer_batch(rows(300), &options).await;
        assert!(matches!(refused, Err(Error::OfferRefused { .. })), "{refused:?}");
        let half = dq.batch("resumed").await.unwrap().unwrap();
        assert_eq!((half.state, half.offered), (BatchState::Offering, 250));
        dq.set_limits(&Limits::none()).await.unwrap();
        assert_eq!(dq.offer_batch(rows(300), &options).await.unwrap(), "resumed");
        let whole = dq.batch("resumed").await.unwrap().unwrap();
        assert_eq!((whole.state, whole.offered), (BatchState::Open, 300));
        assert_eq!(dq.len().await.unwrap(), 300);
    }
}

redis_test! {
    /// The ack run that counts a batch's last member says so (its first ack
    /// answers 2, where the others answer 1), so that the acking client
    /// offers the completion at once rather than at its next look at the
    /// outbox; a resend of that run answers the same, and the batch is in
    /// the outbox once.
    async fn the_ack_run_that_completes_a_batch_says_so(client, raw) {
        let dq = client.delayed_queue("batch-wake", StringCodec).unwrap();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("batch-wake", StringCodec).unwrap();
        let options = BatchOptions::new().on_complete("batch-wake-done", serde_json::json!({}));
        let id = dq.offer_batch(rows(3), &options).await.unwrap();
        // Taken and held (not acked) so that the raw runs below settle them.
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(rq.take_timeout(WAIT).await.unwrap().expect("a member"));
        }
        let keys = rq.keys();
        let members: Vec<Value> = raw.zrange(keys.leases()).await.into_iter().map(|(m, _)| Value::Bytes(m)).collect();
        assert_eq!(members.len(), 3);
        let sha = raw.load_script(include_str!("../../lua/ack_batch.lua")).await;
        let record = "delayq_runs:{batch-wake}:lane-test";
        let ack = |run: i64, of: &[Value]| {
            let mut args: Vec<Value> = vec![sha.as_str().into(), 11.into()];
            for key in [
                keys.leases().to_owned(),
                record.to_owned(),
                keys.events_config(),
                keys.events(),
                keys.stats(),
                keys.jobs(),
                keys.jobs_expiry(),
                keys.ttl_store(),
                keys.batches(),
                keys.batch_outbox(),
                keys.batches_expiry(),
            ] {
                args.push(key.into());
            }
            args.extend([Value::from(run), Value::from(86_400_000)]);
            args.extend(of.iter().cloned());
            args
        };
        let ints = |reply: Value| match reply {
            Value::Array(values) => values.into_iter().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>(),
            other => panic!("ack_batch answers an array: {other:?}"),
        };
        assert_eq!(ints(raw.cmd("EVALSHA", ack(1, &members[..2])).await), [1, 1], "the batch is not complete yet");
        assert_eq!(raw.zcard(&keys.batch_outbox()).await, 0);
        assert_eq!(ints(raw.cmd("EVALSHA", ack(2, &members[2..])).await), [2], "the last member completes it");
        assert_eq!(ints(raw.cmd("EVALSHA", ack(2, &members[2..])).await), [2], "a resend answers as the first run");
        // Complete (its completion may be on its way already).
        let status = dq.batch(&id).await.unwrap().expect("the batch");
        assert!(matches!(status.state, BatchState::Complete | BatchState::Delivered), "{status:?}");
        assert_eq!(status.handled, 3);
        drop(held);
    }
}
