//! A consumer's two ways to say no: failed (retry, after a delay it may
//! choose) and rejected (straight to the dead letters, with its reason).

use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::worker::{FailureAction, RetryAfter, RetryPolicy};
use delayq::StringCodec;
use parking_lot::Mutex;

use delayq_test_support::{eventually, redis_test};

redis_test! {
    /// `Delivery::reject` dead-letters the value at once with the consumer's
    /// reason, as the dead-letter list, the CLI and the dashboard show it.
    async fn a_consumer_rejects_a_value_with_its_reason(client) {
        let ready = client.blocking_queue("rejects", StringCodec).unwrap();
        let jobs = client.reliable_queue("rejects", StringCodec).unwrap();
        ready.offer(&"order-7".to_owned()).await.unwrap();
        let delivery = jobs.take().await.unwrap();
        assert!(delivery.reject("amount is negative").await.unwrap());
        assert_eq!(jobs.in_flight().await.unwrap(), 0);
        let page = jobs.dead_letter_page(0, 10).await.unwrap();
        assert_eq!(page.len(), 1);
        assert_eq!(page[0].value.as_ref().unwrap(), "order-7");
        assert_eq!(page[0].reason.as_deref(), Some("rejected: amount is negative"));
    }
}

redis_test! {
    /// A handler's `RetryAfter` sets the delay of its retry (the policy's
    /// would be an hour); the attempts still count, and the last one
    /// dead-letters the value.
    async fn a_handler_chooses_its_retry_delay_and_attempts_still_count(client) {
        let ready = client.blocking_queue("retry-after", StringCodec).unwrap();
        let jobs = client.reliable_queue("retry-after", StringCodec).unwrap();
        let actions = Arc::new(Mutex::new(Vec::new()));
        let worker = client
            .worker("retry-after", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::from_secs(3600)).max_attempts(3))
            .on_error({
                let actions = actions.clone();
                move |failure| actions.lock().push((failure.attempt(), failure.action()))
            })
            .run(|_: String| async move {
                Err::<(), BoxError>(RetryAfter::new(Duration::from_millis(100), "rate limited upstream").into())
            });
        ready.offer(&"call-api".to_owned()).await.unwrap();
        eventually(Duration::from_secs(30), "three attempts, then a dead letter", || async {
            jobs.dead_letter_len().await.unwrap() == 1
        })
        .await;
        worker.shutdown().await;
        let retry = FailureAction::Retry { after: Duration::from_millis(100) };
        assert_eq!(
            *actions.lock(),
            [(1, retry), (2, retry), (3, FailureAction::DeadLettered)]
        );
        let page = jobs.dead_letter_page(0, 1).await.unwrap();
        let reason = page[0].reason.clone().unwrap();
        assert!(reason.contains("failed 3 attempt(s)") && reason.contains("rate limited upstream"), "{reason}");
    }
}
