//! Cancelling jobs, progress and results (issue 46, items 3 and 4): a
//! cancel reaches a job wherever it is (pending, ready, running), a running
//! handler is told and its value is neither retried nor dead-lettered, a
//! killed worker's cancelled value is dropped by the next take; a handler's
//! progress and result are kept with the job's history and waited for;
//! each resend-safe, equal payloads of different jobs kept apart.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::jobs::{CancelOutcome, JobState};
use delayq::worker::JobContext;
use delayq::{Error, StringCodec};
use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{eventually, redis_test, settled};
use parking_lot::Mutex;

const DAY: Duration = Duration::from_secs(24 * 3600);
const WAIT: Duration = Duration::from_secs(20);

fn s(v: &str) -> String {
    v.to_owned()
}

fn cancelled_how(state: &JobState) -> Option<&str> {
    match state {
        JobState::Cancelled { how, .. } => Some(how),
        _ => None,
    }
}

redis_test! {
    /// A ready job cancelled is dropped by the take that reaches it (the
    /// staging take, claim.lua), the others are delivered in order; a
    /// pending one is removed; asking again says it ended; an unknown id
    /// says so; the total counts both.
    async fn a_queued_or_pending_job_cancelled_never_runs(client) {
        let dq = client.delayed_queue("cancel-queued", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("cancel-queued", StringCodec).unwrap().without_transfer();
        for id in ["a", "b", "c"] {
            dq.offer_with_id(id, &format!("v-{id}"), Duration::ZERO).await.unwrap();
        }
        dq.offer_with_id("later", &s("v-later"), Duration::from_secs(3600)).await.unwrap();
        dq.transfer_now().await.unwrap();

        assert_eq!(rq.cancel_job("b").await.unwrap(), CancelOutcome::Queued { state: s("ready") });
        assert!(rq.job("b").await.unwrap().cancel_requested.is_some());
        // Asked twice: asked once, the same answer.
        assert_eq!(rq.cancel_job("b").await.unwrap(), CancelOutcome::Queued { state: s("ready") });
        assert_eq!(rq.cancel_job("later").await.unwrap(), CancelOutcome::Pending);
        assert!(dq.get("later").await.unwrap().is_none());
        assert_eq!(rq.cancel_job("nobody").await.unwrap(), CancelOutcome::Unknown);

        // Offered in one millisecond, the three may be listed in any order
        // (the transfer orders equal due times by element).
        let mut delivered = Vec::new();
        while let Some(delivery) = rq.take_timeout(Duration::from_millis(200)).await.unwrap() {
            delivered.push(delivery.job_id().unwrap().to_owned());
            delivery.ack().await.unwrap();
        }
        delivered.sort();
        assert_eq!(delivered, ["a", "c"], "b was dropped, not delivered");

        let b = rq.job("b").await.unwrap();
        assert_eq!(cancelled_how(&b.state), Some("cancelled before it ran"), "{b:?}");
        assert!(b.is_finished());
        assert_eq!(b.cancel_requested, None, "the flag goes with the job");
        assert_eq!(rq.cancel_job("b").await.unwrap(), CancelOutcome::Finished { state: s("cancelled") });
        assert_eq!(rq.cancel_job("a").await.unwrap(), CancelOutcome::Finished { state: s("handled") });
        assert_eq!(dq.status().await.unwrap().totals.cancelled, 2);
        // b's value is kept in the dead letters (a cancel is undone by a
        // requeue), with its job's id and why; the pending one is gone.
        let dead = rq.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(dead.len(), 1);
        assert_eq!((dead[0].job.as_deref(), dead[0].reason.as_deref()), (Some("b"), Some("cancelled before it ran")));
        assert_eq!(dq.status().await.unwrap().totals.dead_lettered, 0, "counted as cancelled");
    }
}

redis_test! {
    /// A Worker's handler that waits on its cancel is told, returns an
    /// error, and the value is settled as cancelled: not retried, not
    /// dead-lettered, the lease gone; the other job runs on and is acked.
    async fn a_running_handler_is_told_and_its_value_is_not_retried(client, raw) {
        let dq = client.delayed_queue("cancel-running", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("cancel-running", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("stop-me", &s("long"), Duration::ZERO).await.unwrap();
        dq.offer_with_id("let-me", &s("short"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let started = Arc::new(AtomicUsize::new(0));
        let seen_cancel = Arc::new(AtomicUsize::new(0));
        let worker = client
            .worker("cancel-running", StringCodec)
            .unwrap()
            .concurrency(2)
            .cancel_poll(Duration::from_millis(50))
            .run_job({
                let (started, seen_cancel) = (started.clone(), seen_cancel.clone());
                move |value: String, job: JobContext| {
                    let (started, seen_cancel) = (started.clone(), seen_cancel.clone());
                    async move {
                        started.fetch_add(1, Ordering::SeqCst);
                        if value == "long" {
                            job.cancelled().await;
                            seen_cancel.fetch_add(1, Ordering::SeqCst);
                            return Err::<u32, BoxError>("stopped on the cancel".into());
                        }
                        Ok(7)
                    }
                }
            });
        eventually(WAIT, "both started", || async { started.load(Ordering::SeqCst) == 2 }).await;
        match rq.cancel_job("stop-me").await.unwrap() {
            CancelOutcome::Running { delivery } => assert_eq!(delivery.len(), 16),
            other => panic!("{other:?}"),
        }
        let done = rq.wait_job("stop-me", WAIT).await.unwrap().expect("it ended");
        assert_eq!(cancelled_how(&done.state), Some("cancelled while it ran"), "{done:?}");
        assert_eq!(done.attempts.last().and_then(|a| a.outcome.as_deref()), Some("job_cancelled"));
        assert_eq!(seen_cancel.load(Ordering::SeqCst), 1);
        let other = rq.wait_job("let-me", WAIT).await.unwrap().expect("it ended");
        assert!(matches!(other.state, JobState::Handled { .. }), "{other:?}");
        assert_eq!(other.result.expect("its result").value::<u32>().unwrap(), 7);
        let report = worker.shutdown().await;
        assert_eq!(report.cancelled, 1);
        assert_eq!(report.retried, 0);
        assert_eq!(raw.zcard("delayq_leases:{cancel-running}").await, 0);
        assert_eq!(rq.len().await.unwrap(), 0, "not given back");
        assert_eq!(dq.len().await.unwrap(), 0, "not retried through the delayed queue");
        let dead = rq.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(dead.len(), 1, "kept in the dead letters, not retried");
        assert_eq!(dead[0].reason.as_deref(), Some("cancelled while it ran"));
        assert_eq!(started.load(Ordering::SeqCst), 2, "run once");
        assert_eq!(dq.status().await.unwrap().totals.cancelled, 1);
    }
}

redis_test! {
    /// A handler that ignores the cancel and finishes is acked, with its
    /// result: the job is handled, not cancelled.
    async fn a_handler_that_finishes_anyway_is_acked_with_its_result(client) {
        let dq = client.delayed_queue("cancel-ignored", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("cancel-ignored", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("stubborn", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let (running, release) = (Arc::new(tokio::sync::Notify::new()), Arc::new(tokio::sync::Notify::new()));
        let worker = client
            .worker("cancel-ignored", StringCodec)
            .unwrap()
            .cancel_poll(Duration::from_millis(20))
            .run_job({
                let (running, release) = (running.clone(), release.clone());
                move |_: String, job: JobContext| {
                    let (running, release) = (running.clone(), release.clone());
                    async move {
                        running.notify_one();
                        release.notified().await;
                        Ok::<_, BoxError>(serde_json::json!({ "saw_cancel": job.is_cancelled() }))
                    }
                }
            });
        running.notified().await;
        assert!(matches!(rq.cancel_job("stubborn").await.unwrap(), CancelOutcome::Running { .. }));
        eventually(WAIT, "the cancel is asked", || async {
            rq.job("stubborn").await.unwrap().cancel_requested.is_some()
        })
        .await;
        tokio::time::sleep(Duration::from_millis(200)).await; // several polls
        release.notify_one();
        let done = rq.wait_job("stubborn", WAIT).await.unwrap().expect("it ended");
        assert!(matches!(done.state, JobState::Handled { .. }), "{done:?}");
        let result: serde_json::Value = done.result.expect("kept").value().unwrap();
        assert_eq!(result, serde_json::json!({ "saw_cancel": true }));
        assert_eq!(done.cancel_requested, None);
        worker.shutdown().await;
    }
}

redis_test! {
    /// Progress and result: kept with the history, read from another
    /// client; `wait_job` waits for the end, and times out with `None` for
    /// a job that does not end; a report after the lease ended is not kept;
    /// too large a progress is refused before anything is sent.
    async fn progress_and_result_are_kept_and_waited_for(redis, raw) {
        let client = redis.client().await;
        let reader = redis.client().await;
        let dq = client.delayed_queue("results", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        dq.offer_with_id("report-1", &s("march"), Duration::ZERO).await.unwrap();
        dq.offer_with_id("never", &s("later"), Duration::from_secs(3600)).await.unwrap();
        dq.transfer_now().await.unwrap();
        let waiter = reader.reliable_queue("results", StringCodec).unwrap().without_transfer();
        let waiting = tokio::spawn(async move { waiter.wait_job("report-1", WAIT).await });
        let worker = client.worker("results", StringCodec).unwrap().run_job(|month: String, job: JobContext| async move {
            assert_eq!(job.id(), Some("report-1"));
            assert!(job.progress(&0.5).await?);
            assert!(job.progress(&serde_json::json!({ "done": 9, "of": 10 })).await?);
            let too_big = "x".repeat(delayq::jobs::MAX_PROGRESS_BYTES);
            assert!(matches!(job.progress(&too_big).await, Err(Error::InvalidArgument(_))));
            Ok::<_, BoxError>(serde_json::json!({ "month": month, "rows": 120 }))
        });
        let done = waiting.await.unwrap().unwrap().expect("it ended within the wait");
        assert!(matches!(done.state, JobState::Handled { .. }), "{done:?}");
        let result: serde_json::Value = done.result.clone().expect("kept").value().unwrap();
        assert_eq!(result, serde_json::json!({ "month": "march", "rows": 120 }));
        let progress = done.progress.expect("kept");
        assert_eq!(progress.value, serde_json::json!({ "done": 9, "of": 10 }));
        assert_eq!(progress.delivery.len(), 16);
        worker.shutdown().await;

        let rq = reader.reliable_queue("results", StringCodec).unwrap().without_transfer();
        let started = tokio::time::Instant::now();
        assert!(rq.wait_job("never", Duration::from_millis(300)).await.unwrap().is_none());
        assert!(started.elapsed() >= Duration::from_millis(300));

        // A report after the lease ended, and one of a value without a job.
        dq.offer_with_id("lapsing", &s("slow"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let short = rq.clone().with_visibility_timeout(Duration::from_millis(100));
        let delivery = short.take().await.unwrap();
        assert!(delivery.progress(&0.1).await.unwrap());
        // Given back by a reaper (this one, or the handle's own).
        eventually(WAIT, "the lease ended", || async {
            short.reap_now().await.unwrap();
            raw.zcard("delayq_leases:{results}").await == 0
        })
        .await;
        assert!(!delivery.progress(&0.2).await.unwrap(), "its lease ended");
        assert_eq!(rq.job("lapsing").await.unwrap().progress.unwrap().value, serde_json::json!(0.1));
        drop(delivery);
        let plain = client.blocking_queue("results", StringCodec).unwrap();
        plain.offer(&s("no id")).await.unwrap();
        let anon = loop {
            let d = rq.take().await.unwrap();
            if d.job_id().is_none() {
                break d;
            }
            d.ack().await.unwrap();
        };
        assert!(!anon.progress(&1).await.unwrap(), "no job to keep it for");
        assert!(anon.ack_with_result(&"ignored").await.unwrap());
    }
}

redis_test! {
    /// Equal payloads of different jobs: the one cancelled is the one
    /// dropped, the other runs, each job's history its own (Worker claims:
    /// claim_batch.lua).
    async fn equal_payloads_of_different_jobs_are_cancelled_apart(client) {
        let dq = client.delayed_queue("cancel-twins", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("cancel-twins", StringCodec).unwrap().without_transfer();
        for id in ["twin-1", "twin-2", "twin-3"] {
            dq.offer_with_id(id, &s("same"), Duration::ZERO).await.unwrap();
        }
        dq.transfer_now().await.unwrap();
        assert_eq!(rq.cancel_job("twin-2").await.unwrap(), CancelOutcome::Queued { state: s("ready") });
        let ran: Arc<Mutex<Vec<String>>> = Arc::default();
        let worker = client.worker("cancel-twins", StringCodec).unwrap().concurrency(3).run_job({
            let ran = ran.clone();
            move |_: String, job: JobContext| {
                ran.lock().push(job.id().unwrap_or("none").to_owned());
                async { Ok::<_, BoxError>(()) }
            }
        });
        for id in ["twin-1", "twin-2", "twin-3"] {
            rq.wait_job(id, WAIT).await.unwrap().expect("ended");
        }
        worker.shutdown().await;
        let mut ran = ran.lock().clone();
        ran.sort();
        assert_eq!(ran, ["twin-1", "twin-3"]);
        assert_eq!(cancelled_how(&rq.job("twin-2").await.unwrap().state), Some("cancelled before it ran"));
        for id in ["twin-1", "twin-3"] {
            assert!(matches!(rq.job(id).await.unwrap().state, JobState::Handled { .. }));
        }
        assert_eq!(rq.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// A cancel whose reply is lost: fred resends it, the resend answers as
    /// the first run, and the cancel is asked once (one event).
    async fn a_cancel_whose_reply_is_lost_answers_as_the_first_run(proxy, client, raw) {
        let dq = client.delayed_queue("lost-cancel", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        client.enable_events(&dq, 1000).await.unwrap();
        let rq = client.reliable_queue("lost-cancel", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("lost-cancel-marker", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        settled(&raw, "lost-cancel").await;
        proxy.arm(Fault::LoseReply, "lost-cancel-marker");
        assert_eq!(rq.cancel_job("lost-cancel-marker").await.unwrap(), CancelOutcome::Queued { state: s("ready") });
        assert_eq!(proxy.fired(), 1);
        let events = raw.cmd("XRANGE", vec!["delayq_events:{lost-cancel}".into(), "-".into(), "+".into()]).await;
        let asked = format!("{events:?}").matches("cancel_requested").count();
        assert_eq!(asked, 1, "{events:?}");
        assert!(rq.take_timeout(Duration::from_millis(200)).await.unwrap().is_none());
        assert_eq!(cancelled_how(&rq.job("lost-cancel-marker").await.unwrap().state), Some("cancelled before it ran"));
    }
}

redis_test! {
    /// The drop of a cancelled running job whose reply is lost is settled
    /// once: one cancelled total, no retry, no dead letter.
    async fn a_cancelled_settle_whose_reply_is_lost_settles_once(proxy, client, raw) {
        let dq = client.delayed_queue("lost-drop", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("lost-drop", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("dropped", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let delivery = rq.take().await.unwrap();
        assert!(matches!(rq.cancel_job("dropped").await.unwrap(), CancelOutcome::Running { .. }));
        settled(&raw, "lost-drop").await;
        proxy.arm(Fault::LoseReply, "job_cancelled");
        assert!(delivery.settle_cancelled().await.unwrap());
        assert_eq!(proxy.fired(), 1);
        assert_eq!(dq.status().await.unwrap().totals.cancelled, 1);
        assert_eq!(raw.zcard("delayq_leases:{lost-drop}").await, 0);
        assert_eq!(rq.len().await.unwrap() + dq.len().await.unwrap(), 0);
        assert_eq!(rq.dead_letter_len().await.unwrap(), 1, "kept once in the dead letters");
        assert_eq!(cancelled_how(&rq.job("dropped").await.unwrap().state), Some("cancelled while it ran"));
    }
}

redis_test! {
    /// `settle_cancelled` on a delivery whose job has no cancel asked (or
    /// no job) drops nothing: the value goes back to the queue.
    async fn settling_as_cancelled_without_a_cancel_gives_the_value_back(client) {
        let dq = client.delayed_queue("no-cancel", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("no-cancel", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("kept", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let delivery = rq.take().await.unwrap();
        assert!(!delivery.settle_cancelled().await.unwrap());
        assert_eq!(rq.len().await.unwrap(), 1, "given back, not dropped");
        assert!(matches!(rq.job("kept").await.unwrap().state, JobState::Ready { .. }));
        assert_eq!(dq.status().await.unwrap().totals.cancelled, 0);
    }
}

redis_test! {
    /// A worker cut off while it runs a job whose cancel is then asked: its
    /// visibility timeout gives the value back, and the next take drops it
    /// instead of running it again.
    async fn a_cut_off_workers_cancelled_job_is_dropped_not_retried(redis, raw) {
        let producer = redis.client().await;
        let dq = producer.delayed_queue("cut-cancel", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        dq.offer_with_id("orphan", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let proxy = FaultProxy::start(redis.port()).await;
        let doomed = redis.client_builder().url(proxy.url()).build().await.unwrap();
        let started = Arc::new(AtomicUsize::new(0));
        let _first = doomed
            .worker("cut-cancel", StringCodec)
            .unwrap()
            .visibility_timeout(Duration::from_secs(1))
            .run({
                let started = started.clone();
                move |_: String| {
                    started.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<Result<(), std::io::Error>>()
                }
            });
        eventually(WAIT, "it runs", || async { started.load(Ordering::SeqCst) == 1 }).await;
        proxy.black_hole();
        let rq = producer.reliable_queue("cut-cancel", StringCodec).unwrap().without_transfer();
        assert!(matches!(rq.cancel_job("orphan").await.unwrap(), CancelOutcome::Running { .. }));
        let rescued = Arc::new(AtomicUsize::new(0));
        let second = producer.worker("cut-cancel", StringCodec).unwrap().run({
            let rescued = rescued.clone();
            move |_: String| {
                rescued.fetch_add(1, Ordering::SeqCst);
                async { Ok::<(), std::io::Error>(()) }
            }
        });
        let done = rq.wait_job("orphan", WAIT).await.unwrap().expect("it ended");
        assert_eq!(cancelled_how(&done.state), Some("cancelled before it ran"), "{done:?}");
        second.shutdown().await;
        assert_eq!(rescued.load(Ordering::SeqCst), 0, "never run again");
        assert_eq!(raw.zcard("delayq_leases:{cut-cancel}").await, 0);
        assert_eq!(rq.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// Two of three ready jobs cancelled: the takes drop both, count both,
    /// and deliver the third, whatever the order the three were listed in
    /// (equal due times are listed by element; repeated to see several).
    async fn the_first_ready_jobs_cancelled_are_each_counted(client) {
        for round in 0..10 {
            let name = format!("cancel-first-{round}");
            let dq = client.delayed_queue(&name, StringCodec).unwrap().without_transfer();
            let rq = client.reliable_queue(&name, StringCodec).unwrap().without_transfer();
            dq.set_job_history(Some(DAY)).await.unwrap();
            for id in ["a", "b", "c"] {
                dq.offer_with_id(id, &format!("v-{id}"), Duration::ZERO).await.unwrap();
            }
            dq.transfer_now().await.unwrap();
            for id in ["a", "b"] {
                assert_eq!(rq.cancel_job(id).await.unwrap(), CancelOutcome::Queued { state: s("ready") });
            }
            let mut delivered = Vec::new();
            while let Some(delivery) = rq.take_timeout(Duration::from_millis(100)).await.unwrap() {
                delivered.push(delivery.job_id().unwrap().to_owned());
                delivery.ack().await.unwrap();
            }
            assert_eq!(delivered, ["c"], "round {round}");
            let status = dq.status().await.unwrap();
            assert_eq!((status.totals.cancelled, status.ready), (2, 0), "round {round}: {status:?}");
        }
    }
}
