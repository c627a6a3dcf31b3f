//! Job histories: a value offered with an id keeps its id and its attempts
//! through every state (pending, ready, in flight, dead-lettered, requeued,
//! handled), equal payloads of different jobs apart, bounded, resend-safe.

use std::time::Duration;

use delayq::error::BoxError;
use delayq::jobs::JobState;
use delayq::worker::{Backtraced, RetryPolicy};
use delayq::StringCodec;

use delayq_test_support::fault_proxy::Fault;
use delayq_test_support::{eventually, redis_test, settled};

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(24 * 3600);

fn s(v: &str) -> String {
    v.to_owned()
}

redis_test! {
    async fn a_job_keeps_its_id_and_attempts_through_retry_dead_letter_requeue_and_ack(client) {
        let dq = client.delayed_queue("history", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("history", StringCodec).unwrap().without_transfer();
        // Two jobs with equal payloads, and a third.
        assert!(dq.offer_with_id("job-1", &s("same"), Duration::ZERO).await.unwrap());
        assert!(dq.offer_with_id("job-2", &s("same"), Duration::ZERO).await.unwrap());
        assert!(matches!(rq.job("job-1").await.unwrap().state, JobState::Pending { .. }));
        assert_eq!(rq.job("nobody").await.unwrap().state, JobState::Unknown);
        dq.transfer_now().await.unwrap();
        assert!(dq.get("job-1").await.unwrap().is_none());
        assert!(matches!(dq.job("job-1").await.unwrap().state, JobState::Ready { .. }));
        assert!(matches!(dq.job("job-2").await.unwrap().state, JobState::Ready { .. }));

        // job-1 first (offer order), nacked to the tail: job-2 is next.
        let first = rq.take().await.unwrap();
        let history = rq.job("job-1").await.unwrap();
        assert!(matches!(history.state, JobState::InFlight { .. }), "{history:?}");
        assert_eq!(history.attempts.len(), 1);
        assert_eq!(history.attempts[0].ended, None);
        assert!(history.attempts[0].worker.starts_with("pid "), "{:?}", history.attempts[0].worker);
        assert!(first.nack(Duration::ZERO).await.unwrap());
        let second = rq.take().await.unwrap();
        assert!(matches!(rq.job("job-2").await.unwrap().state, JobState::InFlight { .. }));
        assert!(second.ack().await.unwrap());
        let done = rq.job("job-2").await.unwrap();
        assert!(matches!(done.state, JobState::Handled { .. }), "{done:?}");
        assert_eq!(done.attempts_total, 1);
        assert_eq!(done.attempts[0].outcome.as_deref(), Some("ok"));
        assert!(done.attempts[0].ended.is_some());

        // job-1 again: rejected to the dead-letter list, its id with it.
        let third = rq.take().await.unwrap();
        assert!(third.reject("bad card").await.unwrap());
        let dead = rq.job("job-1").await.unwrap();
        match &dead.state {
            JobState::DeadLettered { reason, .. } => assert_eq!(reason, "rejected: bad card"),
            other => panic!("{other:?}"),
        }
        let outcomes: Vec<_> = dead.attempts.iter().map(|a| a.outcome.as_deref()).collect();
        assert_eq!(outcomes, [Some("nacked"), Some("rejected")]);
        let page = rq.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].job.as_deref(), Some("job-1"));
        assert_eq!(page[0].reason.as_deref(), Some("rejected: bad card"));

        // Requeued: ready, then handled on its third attempt.
        assert_eq!(rq.requeue_dead_letters(10).await.unwrap(), 1);
        assert!(matches!(rq.job("job-1").await.unwrap().state, JobState::Ready { .. }));
        let fourth = rq.take().await.unwrap();
        assert!(fourth.ack().await.unwrap());
        let handled = rq.job("job-1").await.unwrap();
        assert!(matches!(handled.state, JobState::Handled { .. }), "{handled:?}");
        assert_eq!(handled.attempts_total, 3);
        // job-2's history is its own.
        assert_eq!(rq.job("job-2").await.unwrap().attempts_total, 1);
    }
}

redis_test! {
    async fn a_retry_through_the_delayed_queue_is_pending_under_its_id_again(client) {
        let dq = client.delayed_queue("retrying", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("retrying", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("order-7", &s("charge"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let delivery = rq.take().await.unwrap();
        assert!(delivery.nack(HOUR).await.unwrap());
        let history = rq.job("order-7").await.unwrap();
        assert!(matches!(history.state, JobState::Pending { .. }), "{history:?}");
        assert_eq!(dq.get("order-7").await.unwrap().unwrap().value, "charge");
        // Brought forward and taken again: attempt 2 of the same job.
        dq.reschedule("order-7", Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let again = rq.take().await.unwrap();
        assert!(again.ack().await.unwrap());
        let history = rq.job("order-7").await.unwrap();
        assert_eq!(history.attempts_total, 2);
        assert!(matches!(history.state, JobState::Handled { .. }));
    }
}

#[derive(Debug)]
struct Charging(std::io::Error);

impl std::fmt::Display for Charging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "charging failed")
    }
}

impl std::error::Error for Charging {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

redis_test! {
    async fn a_workers_failure_keeps_its_chain_and_backtrace_and_a_long_error_is_capped(client) {
        let dq = client.delayed_queue("failing", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        dq.offer_with_id("big", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let worker = client
            .worker("failing", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::ZERO).max_attempts(1))
            .run(|_: String| async move {
                let error: BoxError = Backtraced::new(Charging(std::io::Error::other("x".repeat(10_000)))).into();
                Err::<(), _>(error)
            });
        let rq = client.reliable_queue("failing", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "dead-lettered", || async {
            matches!(rq.job("big").await.unwrap().state, JobState::DeadLettered { .. })
        })
        .await;
        worker.shutdown().await;
        let history = rq.job("big").await.unwrap();
        let attempt = &history.attempts[0];
        assert_eq!(attempt.outcome.as_deref(), Some("failed"));
        assert_eq!(attempt.error.as_deref(), Some("charging failed"));
        assert!(attempt.worker.contains('@'), "{:?}", attempt.worker);
        // The source chain (the wrapper's repeat skipped), cut so that
        // error, chain and backtrace stay within the cap together.
        assert_eq!(attempt.chain.len(), 1, "{:?}", attempt.chain.len());
        assert!(attempt.chain[0].starts_with("xxxx"));
        let kept = attempt.error.as_ref().unwrap().len()
            + attempt.chain.iter().map(String::len).sum::<usize>()
            + attempt.backtrace.as_ref().map_or(0, String::len);
        assert!(kept <= delayq::jobs::MAX_ERROR_BYTES, "{kept}");
        assert!(kept >= delayq::jobs::MAX_ERROR_BYTES - 2, "{kept}");
    }
}

redis_test! {
    async fn a_backtrace_is_kept_when_the_error_leaves_room(client) {
        let dq = client.delayed_queue("traced", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        dq.offer_with_id("t", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let worker = client
            .worker("traced", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::ZERO).max_attempts(1))
            .run(|_: String| async move {
                let error: BoxError = Backtraced::new(Charging(std::io::Error::other("card declined"))).into();
                Err::<(), _>(error)
            });
        let rq = client.reliable_queue("traced", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "dead-lettered", || async {
            matches!(rq.job("t").await.unwrap().state, JobState::DeadLettered { .. })
        })
        .await;
        worker.shutdown().await;
        let attempt = rq.job("t").await.unwrap().attempts.remove(0);
        assert_eq!(attempt.chain, ["card declined"]);
        assert!(attempt.backtrace.as_deref().is_some_and(|b| !b.is_empty()), "{attempt:?}");
    }
}

redis_test! {
    async fn a_history_keeps_the_last_attempts_only(client) {
        let dq = client.delayed_queue("bounded", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("bounded", StringCodec).unwrap().with_max_deliveries(0);
        dq.offer_with_id("many", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        for _ in 0..15 {
            let delivery = rq.take().await.unwrap();
            assert!(delivery.nack(Duration::ZERO).await.unwrap());
        }
        let history = rq.job("many").await.unwrap();
        assert_eq!(history.attempts_total, 15);
        assert_eq!(history.attempts.len(), delayq::jobs::MAX_ATTEMPTS);
        assert!(matches!(history.state, JobState::Ready { .. }));
    }
}

redis_test! {
    async fn a_handled_jobs_history_expires_after_its_time(client) {
        let dq = client.delayed_queue("expiring", StringCodec).unwrap().without_transfer();
        // The queue's switch says how long handled histories are kept.
        dq.set_job_history(Some(Duration::from_millis(1))).await.unwrap();
        let rq = client.reliable_queue("expiring", StringCodec).unwrap();
        assert_eq!(rq.job_history().await.unwrap(), Some(Duration::from_millis(1)));
        dq.offer_with_id("short", &s("a"), Duration::ZERO).await.unwrap();
        dq.offer_with_id("next", &s("b"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(rq.take().await.unwrap().ack().await.unwrap());
        assert!(matches!(rq.job("short").await.unwrap().state, JobState::Handled { .. }));
        tokio::time::sleep(Duration::from_millis(20)).await;
        // A later ack drops expired histories on its way.
        assert!(rq.take().await.unwrap().ack().await.unwrap());
        assert_eq!(rq.job("short").await.unwrap().state, JobState::Unknown);
        // A day, set again: the histories stay on.
        dq.set_job_history(Some(DAY)).await.unwrap();
        let kept = client.reliable_queue("expiring", StringCodec).unwrap();
        dq.offer_with_id("long", &s("c"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(kept.take().await.unwrap().ack().await.unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
        dq.offer_with_id("after", &s("d"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(kept.take().await.unwrap().ack().await.unwrap());
        assert!(matches!(kept.job("long").await.unwrap().state, JobState::Handled { .. }));
    }
}

redis_test! {
    async fn a_nack_whose_reply_is_lost_records_one_attempt(proxy, client, raw) {
        let dq = client.delayed_queue("lost-nack", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("lost-nack", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("once", &s("v"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let delivery = rq.take().await.unwrap();
        settled(&raw, "lost-nack").await;
        proxy.arm(Fault::LoseReply, "lost-nack-marker");
        assert!(delivery.reject("lost-nack-marker").await.unwrap());
        assert_eq!(proxy.fired(), 1);
        let history = rq.job("once").await.unwrap();
        assert_eq!(history.attempts_total, 1);
        assert_eq!(history.attempts.len(), 1);
        assert!(matches!(history.state, JobState::DeadLettered { .. }));
        assert_eq!(rq.dead_letter_len().await.unwrap(), 1);
    }
}

redis_test! {
    async fn claims_acks_and_dead_letters_of_a_job_name_it_in_their_events(client) {
        use delayq::events::{EventKind, EventsFrom};
        use futures_util::StreamExt;
        let keys = delayq::QueueKeys::new("job-events").unwrap();
        client.enable_events(&keys, 1000).await.unwrap();
        let dq = client.delayed_queue("job-events", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("job-events", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("e-1", &s("a"), Duration::ZERO).await.unwrap();
        dq.offer_with_id("e-2", &s("b"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(rq.take().await.unwrap().ack().await.unwrap());
        assert!(rq.take().await.unwrap().reject("no").await.unwrap());
        let mut events = client.events(&keys).unwrap().from(EventsFrom::Oldest);
        let mut seen = Vec::new();
        while seen.len() < 4 {
            let event = tokio::time::timeout(Duration::from_secs(20), events.next())
                .await
                .expect("events come")
                .unwrap()
                .unwrap();
            match event.kind {
                EventKind::Claimed { jobs, .. } => seen.push(("claimed", jobs)),
                EventKind::Acked { jobs, .. } => seen.push(("acked", jobs)),
                EventKind::DeadLettered { jobs, .. } => seen.push(("dead_lettered", jobs)),
                _ => {}
            }
        }
        let ids = |id: &str| vec![id.to_owned()];
        assert_eq!(
            seen,
            [
                ("claimed", ids("e-1")),
                ("acked", ids("e-1")),
                ("claimed", ids("e-2")),
                ("dead_lettered", ids("e-2"))
            ]
        );
    }
}

redis_test! {
    async fn a_deleted_dead_letters_job_says_so(client) {
        let dq = client.delayed_queue("deleting", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("deleting", StringCodec).unwrap().without_transfer();
        for id in ["d-1", "d-2"] {
            dq.offer_with_id(id, &s("same"), Duration::ZERO).await.unwrap();
        }
        dq.transfer_now().await.unwrap();
        for _ in 0..2 {
            assert!(rq.take().await.unwrap().reject("no").await.unwrap());
        }
        // The oldest by count, the other exactly by its key.
        assert_eq!(rq.remove_dead_letters(1).await.unwrap(), 1);
        assert!(matches!(rq.job("d-1").await.unwrap().state, JobState::Deleted { .. }));
        assert!(matches!(rq.job("d-2").await.unwrap().state, JobState::DeadLettered { .. }));
        let keys: Vec<_> = rq.dead_letter_page(0, 10).await.unwrap().into_iter().map(|d| d.key).collect();
        rq.delete_dead_letters_exact(&keys).await.unwrap();
        assert!(matches!(rq.job("d-2").await.unwrap().state, JobState::Deleted { .. }));
    }
}

redis_test! {
    /// A retry through the delayed queue refused by an id collision (the
    /// index says another id owns the job's id bytes) changes nothing: the
    /// refusal comes before the first write, so the delivery stays in
    /// flight, its attempt open, and no failure is counted.
    async fn a_retry_refused_by_an_id_collision_leaves_the_delivery_in_flight(client, raw) {
        let dq = client.delayed_queue("clashing", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("clashing", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("order-7", &s("charge"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        let delivery = rq.take().await.unwrap();
        // Another id's pending element, filed under order-7's id bytes (as a
        // SHA-1 prefix collision would file it: u16 length, id, element).
        dq.offer_with_id("other", &s("refund"), HOUR).await.unwrap();
        let keys = dq.keys();
        let element = raw.lrange(keys.pending()).await[0].clone();
        let hex = delayq::fred::util::sha1_hash("order-7");
        let field: Vec<u8> = (0..8).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect();
        let mut entry = vec![0, 5];
        entry.extend_from_slice(b"other");
        entry.extend_from_slice(&element);
        raw.cmd(
            "HSET",
            vec![
                keys.ids().into(),
                bytes::Bytes::from(field.clone()).into(),
                bytes::Bytes::from(entry).into(),
            ],
        )
        .await;
        let error = delivery.nack(HOUR).await.map(|_| ()).unwrap_err();
        assert!(error.to_string().contains("DELAYQ_ID_COLLISION"), "{error}");
        assert_eq!(rq.in_flight().await.unwrap(), 1, "the delivery is still in flight");
        // The history's own id lookup refuses the collision too: gone, it
        // reads the job.
        raw.cmd("HDEL", vec![keys.ids().into(), bytes::Bytes::from(field).into()]).await;
        let history = rq.job("order-7").await.unwrap();
        assert!(matches!(history.state, JobState::InFlight { .. }), "{history:?}");
        assert_eq!(history.attempts.len(), 1, "{history:?}");
        assert!(history.attempts[0].ended.is_none(), "its attempt is still open: {history:?}");
        let failed = raw.cmd("HGET", vec![keys.stats().into(), "failed".into()]).await;
        assert_eq!(failed.as_string(), None, "no failure counted: {failed:?}");
    }
}

redis_test! {
    /// A rejected delivery's attempt carries its why as its error, as its
    /// dead letter does.
    async fn a_rejected_attempt_carries_its_why(client) {
        let dq = client.delayed_queue("declining", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(DAY)).await.unwrap();
        let rq = client.reliable_queue("declining", StringCodec).unwrap().without_transfer();
        dq.offer_with_id("order-9", &s("charge"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(rq.take().await.unwrap().reject("card declined").await.unwrap());
        let history = rq.job("order-9").await.unwrap();
        assert_eq!(history.attempts.len(), 1, "{history:?}");
        assert_eq!(history.attempts[0].outcome.as_deref(), Some("rejected"));
        assert_eq!(history.attempts[0].error.as_deref(), Some("card declined"), "{history:?}");
    }
}

redis_test! {
    /// History is off by default: values offered with ids, transferred, run
    /// by a Worker and acked (one by one and in batches) leave no job
    /// records; a job is still found while pending, and its history says
    /// the queue keeps none.
    async fn a_queue_without_history_keeps_no_job_records(client, raw) {
        let dq = client.delayed_queue("plain-ids", StringCodec).unwrap().without_transfer();
        let rq = client.reliable_queue("plain-ids", StringCodec).unwrap().without_transfer();
        assert_eq!(rq.job_history().await.unwrap(), None);
        for i in 0..6 {
            dq.offer_with_id(&format!("job-{i}"), &format!("v{i}"), Duration::ZERO).await.unwrap();
        }
        dq.offer_with_id("later", &s("later"), HOUR).await.unwrap();
        dq.transfer_now().await.unwrap();
        // A single take, nacked back and acked; then a Worker for the rest.
        let first = rq.take().await.unwrap();
        assert_eq!(first.job_id(), None);
        first.nack(Duration::ZERO).await.unwrap();
        assert!(rq.take().await.unwrap().ack().await.unwrap());
        let worker = client
            .worker("plain-ids", StringCodec)
            .unwrap()
            .concurrency(2)
            .run(|_: String| async move { Ok::<(), BoxError>(()) });
        eventually(Duration::from_secs(20), "all handled", || async {
            rq.len().await.unwrap() == 0 && rq.in_flight().await.unwrap() == 0
        })
        .await;
        worker.shutdown().await;
        let jobs = format!("delayq_jobs:{{{}}}", "plain-ids");
        let expiry = format!("delayq_jobs_expiry:{{{}}}", "plain-ids");
        let exists = raw.cmd("EXISTS", vec![jobs.as_str().into(), expiry.as_str().into()]).await;
        assert_eq!(exists.as_i64(), Some(0), "no job records without history");
        let pending = rq.job("later").await.unwrap();
        assert!(matches!(pending.state, JobState::Pending { .. }), "{pending:?}");
        assert_eq!(pending.history, None);
        assert_eq!(rq.job("job-0").await.unwrap().state, JobState::Unknown);
    }
}

redis_test! {
    /// Turning history off drops the records and their expiry set; a job
    /// handled after that has none.
    async fn turning_history_off_removes_its_keys(client, raw) {
        let dq = client.delayed_queue("switched", StringCodec).unwrap().without_transfer();
        let rq = client.reliable_queue("switched", StringCodec).unwrap().without_transfer();
        dq.set_job_history(Some(HOUR)).await.unwrap();
        dq.offer_with_id("kept", &s("a"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(rq.take().await.unwrap().ack().await.unwrap());
        let handled = rq.job("kept").await.unwrap();
        assert!(matches!(handled.state, JobState::Handled { .. }), "{handled:?}");
        assert_eq!(handled.history, Some(HOUR));
        let jobs = "delayq_jobs:{switched}";
        let expiry = "delayq_jobs_expiry:{switched}";
        let exists = raw.cmd("EXISTS", vec![jobs.into(), expiry.into()]).await;
        assert_eq!(exists.as_i64(), Some(2));

        rq.set_job_history(None).await.unwrap();
        assert_eq!(rq.job_history().await.unwrap(), None);
        let exists = raw.cmd("EXISTS", vec![jobs.into(), expiry.into()]).await;
        assert_eq!(exists.as_i64(), Some(0));
        assert_eq!(rq.job("kept").await.unwrap().state, JobState::Unknown);
        dq.offer_with_id("after", &s("b"), Duration::ZERO).await.unwrap();
        dq.transfer_now().await.unwrap();
        assert!(rq.take().await.unwrap().ack().await.unwrap());
        assert_eq!(rq.job("after").await.unwrap().state, JobState::Unknown);
        let exists = raw.cmd("EXISTS", vec![jobs.into()]).await;
        assert_eq!(exists.as_i64(), Some(0));
    }
}
