//! Workers with a batch handler (`Worker::run_batch`): values gathered into
//! batches of at most `max`, each value still acked, retried or
//! dead-lettered on its own.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use delayq::worker::{BatchError, Permanent, RetryPolicy};
use delayq::LongCodec;
use parking_lot::Mutex;

use delayq_test_support::{eventually, redis_test};

redis_test! {
    /// 300 ready values, batches of at most 40 with 80 slots (two batches
    /// at once): every value is handled exactly once, no batch is larger
    /// than 40, and values do share batches (far fewer calls than values).
    async fn values_are_handled_once_in_batches_no_larger_than_max(raw, client) {
        let ready = client.blocking_queue("bulk", LongCodec).unwrap();
        ready.offer_all(0..300i64).await.unwrap();
        let batches: Arc<Mutex<Vec<Vec<i64>>>> = Arc::default();
        let worker = client.worker("bulk", LongCodec).unwrap().concurrency(80).run_batch(40, Duration::from_secs(1), {
            let batches = Arc::clone(&batches);
            move |values: Vec<i64>| {
                batches.lock().push(values);
                async { Ok::<(), std::io::Error>(()) }
            }
        });
        eventually(Duration::from_secs(60), "300 values handled", || async {
            batches.lock().iter().map(Vec::len).sum::<usize>() == 300
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(report.succeeded, 300);
        let batches = batches.lock().clone();
        assert!(batches.iter().all(|b| !b.is_empty() && b.len() <= 40), "{:?}", batches.iter().map(Vec::len).collect::<Vec<_>>());
        assert!(batches.len() < 300, "values shared batches: {} calls", batches.len());
        let mut seen: Vec<i64> = batches.into_iter().flatten().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..300).collect::<Vec<_>>(), "each value once");
        assert_eq!(raw.llen("bulk").await, 0);
    }
}

redis_test! {
    /// One outcome per value: the odd values are refused for good and go to
    /// the dead letters; the even ones are acked; nothing is retried.
    async fn each_value_of_a_batch_gets_its_own_outcome(client) {
        let ready = client.blocking_queue("mixed", LongCodec).unwrap();
        ready.offer_all(0..20i64).await.unwrap();
        let calls: Arc<Mutex<HashMap<i64, u32>>> = Arc::default();
        let worker = client.worker("mixed", LongCodec).unwrap().run_batch(8, Duration::from_millis(300), {
            let calls = Arc::clone(&calls);
            move |values: Vec<i64>| {
                let outcomes: Vec<Result<(), Permanent>> = values
                    .iter()
                    .map(|v| {
                        *calls.lock().entry(*v).or_default() += 1;
                        if v % 2 == 1 { Err(Permanent::new(format!("odd {v}"))) } else { Ok(()) }
                    })
                    .collect();
                async move { outcomes }
            }
        });
        let jobs = client.reliable_queue("mixed", LongCodec).unwrap();
        eventually(Duration::from_secs(60), "10 dead letters", || async {
            jobs.dead_letter_len().await.unwrap() == 10
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!((report.succeeded, report.dead_lettered), (10, 10));
        let mut dead = jobs.dead_letters().await.unwrap();
        dead.sort_unstable();
        assert_eq!(dead, vec![1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
        assert!(calls.lock().values().all(|n| *n == 1), "no value ran twice: {:?}", calls.lock());
    }
}

redis_test! {
    /// A batch's one error fails every value's attempt with a `BatchError`
    /// carrying it; each value is retried on its own and handled the
    /// second time.
    async fn a_batch_error_retries_every_value_of_the_batch(client) {
        let ready = client.blocking_queue("retried", LongCodec).unwrap();
        ready.offer_all(0..12i64).await.unwrap();
        let attempts: Arc<Mutex<HashMap<i64, u32>>> = Arc::default();
        let errors: Arc<Mutex<Vec<String>>> = Arc::default();
        let worker = client
            .worker("retried", LongCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::ZERO).max_attempts(10))
            .on_error({
                let errors = Arc::clone(&errors);
                move |failure| {
                    let error = failure.error();
                    assert!(error.downcast_ref::<BatchError>().is_some(), "{error}");
                    errors.lock().push(error.to_string());
                }
            })
            .run_batch(4, Duration::from_millis(300), {
                let attempts = Arc::clone(&attempts);
                move |values: Vec<i64>| {
                    // A batch with a value on its first attempt fails; one of
                    // values all seen before is handled.
                    let first_time = {
                        let mut attempts = attempts.lock();
                        let mut first = false;
                        for v in &values {
                            let n = attempts.entry(*v).or_default();
                            *n += 1;
                            first |= *n == 1;
                        }
                        first
                    };
                    async move {
                        if first_time {
                            Err(std::io::Error::other("bulk insert failed"))
                        } else {
                            Ok(())
                        }
                    }
                }
            });
        eventually(Duration::from_secs(60), "12 values handled", || async {
            worker.report().succeeded == 12
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(report.dead_lettered, 0);
        assert!(attempts.lock().values().all(|n| *n >= 2), "each value retried: {:?}", attempts.lock());
        let errors = errors.lock();
        assert!(errors.iter().all(|e| e.starts_with("a batch of ")), "{errors:?}");
        assert!(errors.iter().all(|e| e.ends_with("failed: bulk insert failed")), "{errors:?}");
    }
}
