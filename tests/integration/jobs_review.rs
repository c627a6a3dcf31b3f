//! Faults a review of cancels, progress, results and batches tried: stale
//! cancels, equal payloads with and without headers, reused ids and batch
//! ids, lost replies of acks with results and of completions, stuck
//! completions, two reapers at once, the cancel poll's cost.

use std::time::Duration;

use delayq::batch::{BatchOptions, BatchState};
use delayq::error::BoxError;
use delayq::jobs::{CancelOutcome, JobState};
use delayq::StringCodec;
use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test, settled};

const DAY: Duration = Duration::from_secs(24 * 3600);
const WAIT: Duration = Duration::from_secs(20);

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    /// Was a bug (review): a batch whose members have equal payloads (20 x "same row")
    /// never completes. lib/jobs.lua files at most DELAYQ_JOBS_PER_VALUE (16)
    /// ids per payload; the 17th member's transfer is 'skipped', so its
    /// claim finds no job, its ack no l: link, and lib/batches.lua never
    /// counts it: handled stays 16 of 20, the batch open forever.
    async fn a_batch_with_more_than_16_equal_members_is_refused_and_16_complete(client, raw) {
        let dq = client.delayed_queue("rv-equal", StringCodec).unwrap();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let items: Vec<(String, Duration)> = (0..20).map(|_| (s("same row"), Duration::ZERO)).collect();
        let refused = dq.offer_batch(items, &BatchOptions::new()).await;
        assert!(matches!(refused, Err(delayq::Error::InvalidArgument(_))), "{refused:?}");
        assert_eq!(dq.len().await.unwrap(), 0, "nothing written");
        let items: Vec<(String, Duration)> = (0..16).map(|_| (s("same row"), Duration::ZERO)).collect();
        let id = dq.offer_batch(items, &BatchOptions::new()).await.unwrap();
        dq.transfer_now().await.unwrap();
        let rq = client.reliable_queue("rv-equal", StringCodec).unwrap().without_transfer();
        let worker = client.worker("rv-equal", StringCodec).unwrap().concurrency(4)
            .run(|_: String| async { Ok::<(), BoxError>(()) });
        eventually(WAIT, "every member handled", || async {
            rq.len().await.unwrap() == 0 && raw.zcard("delayq_leases:{rv-equal}").await == 0
        }).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        worker.shutdown().await;
        let batch = dq.batch(&id).await.unwrap().unwrap();
        assert_eq!((batch.state, batch.handled), (BatchState::Delivered, 16), "{batch:?}");
    }
}

redis_test! {
    /// Was a bug (review): a cancel asked for a ready job whose value a plain take (or a
    /// Java consumer) then takes stays as x:<id> for 7 days; the id offered
    /// again later is a new job, which the first claim drops as cancelled
    /// ('cancelled before it ran') without anyone asking.
    async fn a_cancel_does_not_reach_a_new_job_under_the_same_id(client) {
        let dq = client.delayed_queue("rv-stale", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("rv-stale", StringCodec).unwrap().without_transfer();
        let plain = client.blocking_queue("rv-stale", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("j", &s("first"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert_eq!(rq.cancel_job("j").await.unwrap(), CancelOutcome::Queued { state: s("ready") });
        // A Java consumer (RBlockingQueue.poll) or a plain take takes it.
        assert_eq!(plain.take().await.unwrap(), "first");
        // Days later, a new job under the same id.
        dq.offer_with_id("j", &s("second"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let got = rq.take_timeout(Duration::from_millis(500)).await.unwrap();
        let job = rq.job("j").await.unwrap();
        assert!(got.is_some(), "the new job j was dropped by the old cancel: {job:?}");
    }
}

redis_test! {
    /// Was a bug (review): the same stale cancel drops a plain value a Java producer
    /// (RBlockingQueue.offer) pushed later with an equal payload: the claim
    /// maps the payload to the stale ready id (r:<sha1>) and drops the value
    /// as the cancelled job. A value lost because a cancel exists.
    async fn a_stale_cancel_keeps_an_equal_java_value_in_the_dead_letters(client) {
        let dq = client.delayed_queue("rv-java", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("rv-java", StringCodec).unwrap().without_transfer();
        let plain = client.blocking_queue("rv-java", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("order-7", &s("recalc"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert_eq!(rq.cancel_job("order-7").await.unwrap(), CancelOutcome::Queued { state: s("ready") });
        assert_eq!(plain.take().await.unwrap(), "recalc");
        // A Java producer's own value, no id, equal bytes.
        plain.offer(&s("recalc")).await.unwrap();
        // Job history maps values to jobs by payload: the stale ready id
        // takes the Java value for the cancelled job. It is kept in the dead
        // letters, never lost, and a requeue delivers it.
        assert!(rq.take_timeout(Duration::from_millis(300)).await.unwrap().is_none());
        let dead = rq.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(dead.len(), 1);
        assert_eq!(dead[0].value.as_deref().ok(), Some("recalc"));
        assert_eq!(rq.requeue_dead_letters(10).await.unwrap(), 1);
        let got = rq.take_timeout(Duration::from_millis(500)).await.unwrap().expect("requeued");
        assert_eq!(got.value(), "recalc");
    }
}

redis_test! {
    /// Was a bug (review): a batch id used again once its record expired (keep 1 s): the
    /// members run and the batch reads delivered, but its completion is
    /// answered as a duplicate by the dedup id delayq-batch:<queue>:<batch>
    /// (kept 30 days, longer than the default keep of 7 days): the target
    /// never gets the second completion.
    async fn a_batch_id_used_again_after_its_record_expired_gets_its_own_completion(client) {
        let dq = client.delayed_queue("rv-reuse", StringCodec).unwrap();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let options = BatchOptions::new().id("nightly").keep(Duration::from_secs(1))
            .on_complete("rv-reuse-done", serde_json::json!({ "run": 1 }));
        let worker = client.worker("rv-reuse", StringCodec).unwrap()
            .run(|_: String| async { Ok::<(), BoxError>(()) });
        let done = client.reliable_queue("rv-reuse-done", StringCodec).unwrap().with_transfer();
        dq.offer_batch(vec![(s("a"), Duration::ZERO)], &options).await.unwrap();
        eventually(WAIT, "first completion", || async { done.len().await.unwrap() == 1 }).await;
        done.take().await.unwrap().ack().await.unwrap();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        // Any batch script reaps expired records: another batch's offer.
        dq.offer_batch(vec![(s("b"), Duration::ZERO)], &BatchOptions::new()).await.unwrap();
        assert!(dq.batch("nightly").await.unwrap().is_none(), "its record expired");
        // The next night, the same id.
        let options = BatchOptions::new().id("nightly").keep(Duration::from_secs(1))
            .on_complete("rv-reuse-done", serde_json::json!({ "run": 2 }));
        dq.offer_batch(vec![(s("c"), Duration::ZERO)], &options).await.unwrap();
        eventually(WAIT, "second batch delivered", || async {
            dq.batch("nightly").await.unwrap().is_some_and(|b| b.state == BatchState::Delivered)
        }).await;
        tokio::time::sleep(Duration::from_millis(2500)).await;
        worker.shutdown().await;
        assert_eq!(done.len().await.unwrap(), 1, "the second completion never arrived");
    }
}

redis_test! {
    /// claim_batch with a cancelled job in the middle: the answered
    /// values, their delivery ids and the 'j'/'d' extras stay aligned (each
    /// delivery's job id is its own value's, and each ack settles it).
    async fn claim_batch_aligns_jobs_around_a_dropped_cancel(client, raw) {
        let dq = client.delayed_queue("rv-align", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("rv-align", StringCodec).unwrap().without_transfer();
        for id in ["a", "b", "c", "d", "e"] {
            dq.offer_with_id(id, &format!("v-{id}"), Duration::ZERO).await.unwrap();
        }
        dq.transfer_now().await.unwrap();
        for id in ["b", "d"] {
            rq.cancel_job(id).await.unwrap();
        }
        let taken = rq.take_many(10, Duration::ZERO).await.unwrap();
        let mut pairs: Vec<(String, Option<String>)> = taken.iter()
            .map(|d| { let d = d.as_ref().unwrap(); (d.value().clone(), d.job_id().map(str::to_owned)) })
            .collect();
        // Offers in one millisecond are due together, and the timeout set
        // orders ties by their (random-looking) id bytes: alignment, not order.
        pairs.sort();
        assert_eq!(pairs, vec![(s("v-a"), Some(s("a"))), (s("v-c"), Some(s("c"))), (s("v-e"), Some(s("e")))]);
        for d in taken {
            d.unwrap().ack().await.unwrap();
        }
        assert_eq!(raw.zcard("delayq_leases:{rv-align}").await, 0);
        for id in ["a", "c", "e"] {
            assert!(matches!(rq.job(id).await.unwrap().state, JobState::Handled { .. }), "{id}");
        }
    }
}

redis_test! {
    /// a member's ack whose reply is lost is resent and counted once;
    /// a member dead-lettered, requeued and then handled counts once, as
    /// dead-lettered.
    async fn lost_ack_and_requeue_count_a_member_once(proxy, client, raw) {
        let dq = client.delayed_queue("rv-once", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let id = dq.offer_batch(vec![(s("ack-lost-marker"), Duration::ZERO), (s("dead"), Duration::ZERO)], &BatchOptions::new()).await.unwrap();
        dq.transfer_now().await.unwrap();
        settled(&raw, "rv-once").await;
        let rq = client.reliable_queue("rv-once", StringCodec).unwrap().without_transfer();
        let first = rq.take().await.unwrap();
        let second = rq.take().await.unwrap();
        let (lost, dead) = if first.value() == "dead" { (second, first) } else { (first, second) };
        dead.dead_letter().await.unwrap();
        proxy.arm(Fault::LoseReply, "ack-lost-marker");
        lost.ack().await.unwrap();
        assert_eq!(proxy.fired(), 1);
        let batch = dq.batch(&id).await.unwrap().unwrap();
        assert_eq!((batch.handled, batch.dead_lettered, batch.state), (1, 1, BatchState::Delivered), "{batch:?}");
        rq.requeue_dead_letters(10).await.unwrap();
        rq.take().await.unwrap().ack().await.unwrap();
        let batch = dq.batch(&id).await.unwrap().unwrap();
        assert_eq!((batch.handled, batch.dead_lettered), (1, 1), "{batch:?}");
    }
}

redis_test! {
    /// Was a bug (review): DelayedQueue::cancel (lua/cancel_id.lua) of a pending member
    /// removes it but never counts it (only cancel_job has the batch hook):
    /// the batch stays open with 2 of 3 ended.
    async fn a_delayed_queue_cancel_of_a_member_is_counted(client, raw) {
        let dq = client.delayed_queue("rv-cancel-id", StringCodec).unwrap();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let items = vec![(s("a"), Duration::ZERO), (s("later"), Duration::from_secs(3600)), (s("c"), Duration::ZERO)];
        let id = dq.offer_batch(items, &BatchOptions::new()).await.unwrap();
        assert!(dq.cancel(&format!("{id}/2")).await.unwrap(), "removed");
        let rq = client.reliable_queue("rv-cancel-id", StringCodec).unwrap();
        let worker = client.worker("rv-cancel-id", StringCodec).unwrap().run(|_: String| async { Ok::<(), BoxError>(()) });
        eventually(WAIT, "a and c handled", || async {
            dq.batch(&id).await.unwrap().is_some_and(|b| b.handled == 2)
                && raw.zcard("delayq_leases:{rv-cancel-id}").await == 0
        }).await;
        worker.shutdown().await;
        let _ = rq;
        let batch = dq.batch(&id).await.unwrap().unwrap();
        assert_eq!((batch.state, batch.cancelled), (BatchState::Delivered, 1), "{batch:?}");
    }
}

/// `stuck` complete batches to a target that refuses, then one to a
/// healthy target: whether its completion arrives within 12 s.
async fn healthy_completion_arrives(client: &delayq::Client, queue: &str, stuck_n: usize) -> bool {
    let full_name = format!("{queue}-full");
    let ok_name = format!("{queue}-ok");
    let full = client
        .delayed_queue(&full_name, StringCodec)
        .unwrap()
        .without_transfer();
    full.set_limits(&delayq::limits::Limits::none().max_size(1))
        .await
        .unwrap();
    full.offer(&s("occupant"), Duration::from_secs(3600)).await.unwrap();
    let dq = client.delayed_queue(queue, StringCodec).unwrap();
    dq.set_job_history(Some(DAY)).await.unwrap();
    let worker = client
        .worker(queue, StringCodec)
        .unwrap()
        .concurrency(4)
        .run(|_: String| async { Ok::<(), BoxError>(()) });
    let mut stuck = Vec::new();
    for i in 0..stuck_n {
        let options = BatchOptions::new().on_complete(full_name.as_str(), serde_json::json!(i));
        stuck.push(
            dq.offer_batch(vec![(format!("s{i}"), Duration::ZERO)], &options)
                .await
                .unwrap(),
        );
    }
    eventually(WAIT, "the stuck ones complete", || async {
        let mut n = 0;
        for id in &stuck {
            if dq
                .batch(id)
                .await
                .unwrap()
                .is_some_and(|b| b.state == BatchState::Complete)
            {
                n += 1;
            }
        }
        n == stuck_n
    })
    .await;
    let options = BatchOptions::new().on_complete(ok_name.as_str(), serde_json::json!("healthy"));
    let healthy = dq.offer_batch(vec![(s("h"), Duration::ZERO)], &options).await.unwrap();
    let ok = client.reliable_queue(&ok_name, StringCodec).unwrap().with_transfer();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(12);
    let mut arrived = false;
    while tokio::time::Instant::now() < deadline {
        if ok.len().await.unwrap() == 1 {
            arrived = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let batch = dq.batch(&healthy).await.unwrap().unwrap();
    worker.shutdown().await;
    eprintln!("{stuck_n} stuck: healthy batch {batch:?}, arrived {arrived}");
    arrived
}

redis_test! {
    /// Was a bug (review): the outbox is read 16 at a time from its oldest: 16 complete
    /// batches whose target refuses (its limits: max_size) are retried
    /// first on every pass, forever, and a later batch to another, healthy
    /// target never gets its completion.
    async fn sixteen_stuck_completions_do_not_block_a_later_one(client) {
        assert!(healthy_completion_arrives(&client, "rv-hol16", 16).await, "blocked behind 16 stuck completions");
    }
}

redis_test! {
    /// The control: with 15 stuck, the healthy completion arrives.
    async fn fifteen_stuck_completions_do_not_block(client) {
        assert!(healthy_completion_arrives(&client, "rv-hol15", 15).await);
    }
}

redis_test! {
    /// a Worker's cancel poll sends HMGETs only while it runs jobs
    /// (none idle, none for a value without an id, none after it stops),
    /// one per poll period.
    async fn cancel_poll_reads_only_while_jobs_run(client, raw) {
        let dq = client.delayed_queue("rv-poll", StringCodec).unwrap();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let worker = client.worker("rv-poll", StringCodec).unwrap().cancel_poll(Duration::from_millis(50))
            .run_job(|_: String, _: delayq::worker::JobContext| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok::<(), BoxError>(())
            });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let idle0 = raw.command_calls("hmget").await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let idle = raw.command_calls("hmget").await - idle0;
        dq.offer(&s("no id"), Duration::ZERO).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let plain0 = raw.command_calls("hmget").await;
        tokio::time::sleep(Duration::from_millis(700)).await;
        let plain = raw.command_calls("hmget").await - plain0;
        tokio::time::sleep(Duration::from_millis(500)).await;
        dq.offer_with_id("j", &s("with id"), Duration::ZERO).await.unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let job0 = raw.command_calls("hmget").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let job = raw.command_calls("hmget").await - job0;
        worker.shutdown().await;
        let stop0 = raw.command_calls("hmget").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let stopped = raw.command_calls("hmget").await - stop0;
        eprintln!("hmget: idle {idle}, plain value {plain}, job {job}, stopped {stopped}");
        // Counts, not times: none while idle or stopped, some while a job
        // runs (a value without an id polls nothing of its own; a script's
        // HMGETs count too, so that window is only printed).
        let _ = plain;
        assert_eq!((idle, stopped), (0, 0));
        assert!(job >= 1, "{job} HMGETs while a job ran at a 50 ms poll");
    }
}

redis_test! {
    /// a Worker's ack_batch carrying results ('R') loses its reply:
    /// the resend answers the lane's record; every member is counted once,
    /// each result kept, the completion offered once.
    async fn ack_batch_with_results_lost_reply(proxy, client, raw) {
        let dq = client.delayed_queue("rv-ackr", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let options = BatchOptions::new().on_complete("rv-ackr-done", serde_json::Value::Null);
        let id = dq.offer_batch((1..=3).map(|i| (format!("m{i}"), Duration::ZERO)), &options).await.unwrap();
        dq.transfer_now().await.unwrap();
        settled(&raw, "rv-ackr").await;
        proxy.arm(Fault::LoseReply, "res-marker");
        let worker = client.worker("rv-ackr", StringCodec).unwrap().concurrency(3)
            .run_job(|v: String, _: delayq::worker::JobContext| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok::<_, BoxError>(serde_json::json!({ "res-marker": v }))
            });
        let done = client.reliable_queue("rv-ackr-done", StringCodec).unwrap().with_transfer();
        eventually(WAIT, "the completion", || async { done.len().await.unwrap() == 1 }).await;
        assert!(proxy.fired() >= 1);
        tokio::time::sleep(Duration::from_millis(2500)).await;
        worker.shutdown().await;
        assert_eq!(done.len().await.unwrap(), 1);
        let batch = dq.batch(&id).await.unwrap().unwrap();
        assert_eq!((batch.handled, batch.state), (3, BatchState::Delivered), "{batch:?}");
        let rq = client.reliable_queue("rv-ackr", StringCodec).unwrap();
        for i in 1..=3 {
            let job = rq.job(&format!("{id}/{i}")).await.unwrap();
            let result: serde_json::Value = job.result.expect("kept").value().unwrap();
            assert_eq!(result, serde_json::json!({ "res-marker": format!("m{i}") }));
        }
    }
}

redis_test! {
    /// two clients' reapers deliver 20 completions at once, and the
    /// mark (batch_delivered) loses a reply: each completion arrives once.
    async fn two_reapers_and_a_lost_mark_deliver_each_completion_once(proxy, client, raw) {
        let other = delayq::Client::builder().url(proxy.url()).build().await.unwrap();
        let dq = client.delayed_queue("rv-two", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        settled(&raw, "rv-two").await;
        let sha = delayq_test_support::script_sha1(include_str!("../../lua/batch_delivered.lua"));
        proxy.arm(Fault::LoseReply, sha.as_bytes());
        let mut ids = Vec::new();
        for i in 0..20 {
            let options = BatchOptions::new().on_complete("rv-two-done", serde_json::json!(i));
            ids.push(dq.offer_batch(vec![(format!("v{i}"), Duration::ZERO)], &options).await.unwrap());
        }
        dq.transfer_now().await.unwrap();
        let a = client.worker("rv-two", StringCodec).unwrap().run(|_: String| async { Ok::<(), BoxError>(()) });
        let b = other.worker("rv-two", StringCodec).unwrap().run(|_: String| async { Ok::<(), BoxError>(()) });
        let done = client.reliable_queue("rv-two-done", StringCodec).unwrap().with_transfer();
        eventually(WAIT, "all delivered", || async {
            let mut n = 0;
            for id in &ids {
                if dq.batch(id).await.unwrap().is_some_and(|b| b.state == BatchState::Delivered) { n += 1; }
            }
            n == 20
        }).await;
        tokio::time::sleep(Duration::from_millis(3000)).await;
        a.shutdown().await;
        b.shutdown().await;
        eprintln!("lost marks: {}", proxy.fired());
        assert_eq!(done.len().await.unwrap(), 20);
    }
}

redis_test! {
    /// a running member cancelled (its handler stops, the settle's
    /// reply lost) and a pending member cancelled (the cancel's reply lost):
    /// each counted once as cancelled, the batch completes 1/0/2.
    async fn cancelled_running_and_pending_members_count_once(proxy, client, raw) {
        let dq = client.delayed_queue("rv-cnl", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let items = vec![(s("quick"), Duration::ZERO), (s("long"), Duration::ZERO), (s("pending"), Duration::from_secs(3600))];
        let id = dq.offer_batch(items, &BatchOptions::new()).await.unwrap();
        dq.transfer_now().await.unwrap();
        settled(&raw, "rv-cnl").await;
        let rq = client.reliable_queue("rv-cnl", StringCodec).unwrap();
        let worker = client.worker("rv-cnl", StringCodec).unwrap().concurrency(2).cancel_poll(Duration::from_millis(50))
            .run_job(|v: String, job: delayq::worker::JobContext| async move {
                if v == "long" {
                    job.cancelled().await;
                    return Err::<(), BoxError>("stopped".into());
                }
                Ok(())
            });
        eventually(WAIT, "long runs", || async {
            matches!(rq.job(&format!("{id}/2")).await.unwrap().state, JobState::InFlight { .. })
        }).await;
        // The nack -4 carries the delivery; its reply is lost once.
        proxy.arm(Fault::LoseReply, "long");
        assert!(matches!(rq.cancel_job(&format!("{id}/2")).await.unwrap(), CancelOutcome::Running { .. }));
        eventually(WAIT, "cancelled", || async {
            dq.batch(&id).await.unwrap().is_some_and(|b| b.cancelled == 1 && b.handled == 1)
        }).await;
        proxy.arm(Fault::LoseReply, format!("{id}/3"));
        assert_eq!(rq.cancel_job(&format!("{id}/3")).await.unwrap(), CancelOutcome::Pending);
        let batch = dq.batch(&id).await.unwrap().unwrap();
        worker.shutdown().await;
        assert_eq!((batch.handled, batch.dead_lettered, batch.cancelled, batch.state), (1, 0, 2, BatchState::Delivered), "{batch:?}");
        assert_eq!(rq.len().await.unwrap(), 0);
        // The running one's value is kept in the dead letters.
        assert_eq!(rq.dead_letter_len().await.unwrap(), 1);
    }
}

redis_test! {
    /// Was a bug (review): a job id offered again after it ended: while the new job
    /// is ready (and while it runs), its history shows the previous run's
    /// result and progress as its own (o:/p: are cleared only by the next
    /// end). The dashboard and `delayq job` show them.
    async fn a_reused_ids_new_run_shows_no_old_result_or_progress(client) {
        let dq = client.delayed_queue("rv-reused", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("rv-reused", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("nightly", &s("run 1"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let first = rq.take().await.unwrap();
        assert!(first.progress(&serde_json::json!({ "pct": 100 })).await.unwrap());
        first.ack_with_result(&serde_json::json!({ "rows": 1 })).await.unwrap();
        dq.offer_with_id("nightly", &s("run 2"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let job = rq.job("nightly").await.unwrap();
        assert!(matches!(job.state, JobState::Ready { .. }), "{job:?}");
        assert!(job.result.is_none() && job.progress.is_none(), "a ready job shows a result and progress: {job:?}");
    }
}

redis_test! {
    /// Was a bug (review): lib/batches.lua writes a 'batch_completed' event, but
    /// EventKind has no such kind (12fa25a typed the job events only): the
    /// CLI's events and the dashboard's live view read it as Unknown.
    async fn batch_completed_events_are_typed(client) {
        use delayq::events::{EventKind, EventsFrom};
        use futures_util::StreamExt;
        let keys = delayq::QueueKeys::new("rv-ev").unwrap();
        client.enable_events(&keys, 1000).await.unwrap();
        let dq = client.delayed_queue("rv-ev", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let id = dq.offer_batch(vec![(s("later"), Duration::from_secs(3600))], &BatchOptions::new()).await.unwrap();
        let rq = client.reliable_queue("rv-ev", StringCodec).unwrap();
        rq.cancel_job(&format!("{id}/1")).await.unwrap();
        let mut events = client.events(&keys).unwrap().from(EventsFrom::Oldest);
        let found = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let event = events.next().await.unwrap().unwrap();
                if event.kind.name() == "batch_completed" {
                    return event;
                }
            }
        }).await.expect("a batch_completed event");
        assert!(!matches!(found.kind, EventKind::Unknown { .. }), "{:?}", found.kind);
    }
}

redis_test! {
    /// Was a bug (review): claim_batch maps every popped value to a job by its payload
    /// alone, priority-set values too: a cancelled ready job "P" and a
    /// different value offered with headers (offer_with) and the same
    /// payload bytes: the take reaches the headers value first (the
    /// priority set goes before the list), maps it to the cancelled job and
    /// drops it; the cancelled job's own value is then delivered, with no
    /// job. The value with its headers is lost; the cancelled one runs.
    async fn a_cancel_never_takes_a_value_with_headers_and_an_equal_payload(client) {
        let dq = client.delayed_queue("rv-hdr", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("rv-hdr", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("j", &s("P"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert_eq!(rq.cancel_job("j").await.unwrap(), CancelOutcome::Queued { state: s("ready") });
        let options = delayq::OfferOptions::after(Duration::ZERO).header("tenant", "acme");
        dq.offer_with(&s("P"), &options).await.unwrap();
        let taken = rq.take_many(10, Duration::from_millis(300)).await.unwrap();
        let got: Vec<(String, Option<String>, usize)> = taken.iter().map(|d| {
            let d = d.as_ref().unwrap();
            (d.value().clone(), d.job_id().map(str::to_owned), d.headers().len())
        }).collect();
        assert_eq!(got, vec![(s("P"), None, 1)], "the value with headers should be the one delivered");
    }
}
