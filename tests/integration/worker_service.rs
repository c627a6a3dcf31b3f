//! `Worker::run_service`: a tower service, in tower layers, as a worker's
//! handler; the worker's own retries, dead letters and timeout around them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use delayq::error::BoxError;
use delayq::worker::{FailureAction, Job, Permanent, RetryPolicy};
use delayq::StringCodec;
use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use tower::{service_fn, Service, ServiceBuilder};

use delayq_test_support::{eventually, redis_test};

type Log<T> = Arc<Mutex<Vec<T>>>;

/// What the worker's `on_error` hook saw: (value's error text, attempt, action).
type Failures = Log<(String, u32, FailureAction)>;

fn record(failures: &Failures) -> impl Fn(&delayq::worker::Failure) + Send + Sync + 'static + use<> {
    let failures = failures.clone();
    move |f| failures.lock().push((f.error().to_string(), f.attempt(), f.action()))
}

async fn offer_all(client: &delayq::Client, queue: &str, values: &[&str]) {
    let dest = client.blocking_queue(queue, StringCodec).unwrap();
    for value in values {
        dest.offer(&(*value).to_owned()).await.unwrap();
    }
}

redis_test! {
    async fn a_service_in_two_layers_handles_each_value_once_and_acks_it(client) {
        let seen: Log<(String, String, u32)> = Arc::default();
        let service = ServiceBuilder::new()
            .concurrency_limit(2)
            .timeout(Duration::from_secs(30))
            .service_fn({
                let seen = seen.clone();
                move |job: Job<String>| {
                    let seen = seen.clone();
                    async move {
                        seen.lock()
                            .push((job.queue().to_owned(), job.value().clone(), job.attempt()));
                        Ok::<_, BoxError>(())
                    }
                }
            });
        let worker = client
            .worker("layered", StringCodec)
            .unwrap()
            .concurrency(4)
            .run_service(service);
        let values: Vec<String> = (0..20).map(|i| format!("v{i}")).collect();
        let delayed = client.delayed_queue("layered", StringCodec).unwrap();
        delayed
            .offer_all(values.iter().map(|v| (v.clone(), Duration::from_millis(20))))
            .await
            .unwrap();
        eventually(Duration::from_secs(20), "all 20 handled", || async {
            worker.report().succeeded == 20
        })
        .await;
        let report = worker.shutdown().await;

        let mut seen = seen.lock().clone();
        seen.sort();
        let mut expected: Vec<(String, String, u32)> =
            values.iter().map(|v| ("layered".to_owned(), v.clone(), 1)).collect();
        expected.sort();
        assert_eq!(seen, expected, "each value once, as a first attempt of its queue");
        assert_eq!((report.handled, report.succeeded, report.retried), (20, 20, 0));
        let reliable = client.reliable_queue("layered", StringCodec).unwrap();
        assert_eq!(reliable.in_flight().await.unwrap(), 0, "every delivery acked");
        assert_eq!(reliable.len().await.unwrap(), 0, "nothing given back");
        assert_eq!(delayed.len().await.unwrap(), 0, "no retry scheduled");
        assert_eq!(reliable.dead_letter_len().await.unwrap(), 0);
    }
}

redis_test! {
    async fn a_tower_timeout_fails_the_attempt_which_the_retry_policy_retries_or_dead_letters(client) {
        let failures = Failures::default();
        let attempts: Log<(String, u32)> = Arc::default();
        let service = ServiceBuilder::new().timeout(Duration::from_millis(200)).service_fn({
            let attempts = attempts.clone();
            move |job: Job<String>| {
                attempts.lock().push((job.value().clone(), job.attempt()));
                async move {
                    let slow = match job.value().as_str() {
                        "slow-once" => job.attempt() == 1,
                        "always-slow" => true,
                        "invalid" => return Err(Permanent::new("no such order").into()),
                        _ => false,
                    };
                    if slow {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                    }
                    Ok::<_, BoxError>(())
                }
            }
        });
        let worker = client
            .worker("slow", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::ZERO).max_attempts(3))
            .on_error(record(&failures))
            .run_service(service);
        offer_all(&client, "slow", &["slow-once", "always-slow", "invalid"]).await;

        let reliable = client.reliable_queue("slow", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "one handled, two dead-lettered", || async {
            worker.report().succeeded == 1 && reliable.dead_letter_len().await.unwrap() == 2
        })
        .await;
        let report = worker.shutdown().await;

        let failures = failures.lock().clone();
        let with = |text: &str| -> Vec<(u32, FailureAction)> {
            let mut found: Vec<_> = failures
                .iter()
                .filter(|(error, ..)| error.contains(text))
                .map(|(_, attempt, action)| (*attempt, *action))
                .collect();
            found.sort_by_key(|(attempt, action)| (*attempt, *action == FailureAction::DeadLettered));
            found
        };
        let retry = FailureAction::Retry { after: Duration::ZERO };
        // slow-once timed out at attempt 1; always-slow at 1, 2 and 3.
        assert_eq!(
            with("request timed out"),
            [(1, retry), (1, retry), (2, retry), (3, FailureAction::DeadLettered)],
            "{failures:#?}"
        );
        assert_eq!(
            with("no such order"),
            [(1, FailureAction::DeadLettered)],
            "{failures:#?}"
        );
        assert_eq!(failures.len(), 5, "{failures:#?}");
        let tried = |value: &str| -> Vec<u32> {
            let mut a: Vec<u32> = attempts
                .lock()
                .iter()
                .filter(|(v, _)| v == value)
                .map(|(_, a)| *a)
                .collect();
            a.sort();
            a
        };
        assert_eq!(tried("slow-once"), [1, 2], "retried once, then handled");
        assert_eq!(tried("always-slow"), [1, 2, 3], "every attempt the policy allows");
        assert_eq!(tried("invalid"), [1], "a permanent error is not retried");
        assert_eq!(report.timed_out, 0, "the tower timeout fired, not the worker's");
        assert_eq!((report.succeeded, report.retried, report.dead_lettered), (1, 3, 2));
        let mut dead = reliable.dead_letters().await.unwrap();
        dead.sort();
        assert_eq!(dead, ["always-slow", "invalid"]);
        assert_eq!(reliable.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    async fn a_value_load_shed_while_the_inner_service_is_busy_is_retried_not_lost(client) {
        let failures = Failures::default();
        let handled: Log<String> = Arc::default();
        // Closed until a value has been shed: the first call holds the one
        // permit of the limit meanwhile, so the other is refused.
        let open = CancellationToken::new();
        let service = ServiceBuilder::new().load_shed().concurrency_limit(1).service_fn({
            let (handled, open) = (handled.clone(), open.clone());
            move |job: Job<String>| {
                let (handled, open) = (handled.clone(), open.clone());
                async move {
                    open.cancelled().await;
                    handled.lock().push(job.into_value());
                    Ok::<_, BoxError>(())
                }
            }
        });
        let worker = client
            .worker("shed", StringCodec)
            .unwrap()
            .concurrency(2)
            .retry(RetryPolicy::fixed(Duration::from_millis(20)).max_attempts(1000))
            .on_error({
                let record = record(&failures);
                let open = open.clone();
                move |failure| {
                    record(failure);
                    open.cancel();
                }
            })
            .run_service(service);
        offer_all(&client, "shed", &["a", "b"]).await;

        eventually(Duration::from_secs(20), "both handled", || async {
            worker.report().succeeded == 2
        })
        .await;
        let report = worker.shutdown().await;

        let mut handled = handled.lock().clone();
        handled.sort();
        assert_eq!(handled, ["a", "b"], "each value handled once");
        let failures = failures.lock().clone();
        assert!(!failures.is_empty(), "a value was shed");
        for (error, _, action) in &failures {
            assert_eq!(error, "service overloaded", "{failures:#?}");
            assert!(matches!(action, FailureAction::Retry { .. }), "{failures:#?}");
        }
        assert_eq!(report.retried, failures.len() as u64);
        assert_eq!(report.dead_lettered, 0);
        let reliable = client.reliable_queue("shed", StringCodec).unwrap();
        assert_eq!(reliable.in_flight().await.unwrap(), 0);
        assert_eq!(reliable.dead_letter_len().await.unwrap(), 0);
        assert_eq!(
            client.delayed_queue("shed", StringCodec).unwrap().len().await.unwrap(),
            0
        );
    }
}

/// A service whose `poll_ready` fails a given number of times (across its
/// clones), then calls `inner`.
#[derive(Clone)]
struct FailingReady<S> {
    failures_left: Arc<AtomicUsize>,
    inner: S,
}

impl<S: Service<Job<String>, Error = BoxError>> Service<Job<String>> for FailingReady<S> {
    type Response = S::Response;
    type Error = BoxError;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        let left = self.failures_left.load(Ordering::SeqCst);
        if left > 0
            && self
                .failures_left
                .compare_exchange(left, left - 1, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            return Poll::Ready(Err("backend unavailable".into()));
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, job: Job<String>) -> S::Future {
        self.inner.call(job)
    }
}

redis_test! {
    async fn a_service_whose_poll_ready_fails_costs_an_attempt_and_the_value_is_retried(client) {
        let failures = Failures::default();
        let calls: Log<(String, u32)> = Arc::default();
        let service = FailingReady {
            failures_left: Arc::new(AtomicUsize::new(2)),
            inner: service_fn({
                let calls = calls.clone();
                move |job: Job<String>| {
                    calls.lock().push((job.value().clone(), job.attempt()));
                    async { Ok::<_, BoxError>(()) }
                }
            }),
        };
        let worker = client
            .worker("unready", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::ZERO).max_attempts(5))
            .on_error(record(&failures))
            .run_service(service);
        offer_all(&client, "unready", &["x"]).await;

        eventually(Duration::from_secs(20), "the value is handled", || async {
            worker.report().succeeded == 1
        })
        .await;
        let report = worker.shutdown().await;

        let retry = FailureAction::Retry { after: Duration::ZERO };
        assert_eq!(
            *failures.lock(),
            [
                ("backend unavailable".to_owned(), 1, retry),
                ("backend unavailable".to_owned(), 2, retry)
            ]
        );
        assert_eq!(
            *calls.lock(),
            [("x".to_owned(), 3)],
            "called once, at the third attempt"
        );
        assert_eq!((report.handled, report.retried, report.succeeded), (3, 2, 1));
        let reliable = client.reliable_queue("unready", StringCodec).unwrap();
        assert_eq!(reliable.in_flight().await.unwrap(), 0);
        assert_eq!(reliable.dead_letter_len().await.unwrap(), 0);
    }
}

redis_test! {
    async fn a_concurrency_limit_layer_bounds_the_calls_running_at_once(client) {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let service = ServiceBuilder::new().concurrency_limit(2).service_fn({
            let (running, most) = (running.clone(), most.clone());
            move |_: Job<String>| {
                let (running, most) = (running.clone(), most.clone());
                async move {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok::<_, BoxError>(())
                }
            }
        });
        let worker = client
            .worker("limited", StringCodec)
            .unwrap()
            .concurrency(8)
            .run_service(service);
        let values: Vec<String> = (0..40).map(|i| format!("v{i}")).collect();
        let values: Vec<&str> = values.iter().map(String::as_str).collect();
        offer_all(&client, "limited", &values).await;

        eventually(Duration::from_secs(30), "all 40 handled", || async {
            worker.report().succeeded == 40
        })
        .await;
        let report = worker.shutdown().await;

        let most = most.load(Ordering::SeqCst);
        assert!((1..=2).contains(&most), "at most 2 calls at once, saw {most}");
        assert_eq!((report.handled, report.succeeded, report.retried), (40, 40, 0));
    }
}

/// A service that is never ready.
#[derive(Clone)]
struct NeverReady;

impl Service<Job<String>> for NeverReady {
    type Response = ();
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<(), BoxError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Pending
    }

    fn call(&mut self, _: Job<String>) -> Self::Future {
        unreachable!("never ready, never called")
    }
}

redis_test! {
    async fn the_worker_handler_timeout_cuts_off_a_layered_call_and_a_wait_for_readiness(client) {
        let failures = Failures::default();
        // A call the layers would let run for a minute.
        let slow = ServiceBuilder::new()
            .concurrency_limit(4)
            .timeout(Duration::from_secs(60))
            .service_fn(|_: Job<String>| async {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok::<_, BoxError>(())
            });
        let policy = RetryPolicy::fixed(Duration::ZERO).max_attempts(2);
        let slow_worker = client
            .worker("slow-calls", StringCodec)
            .unwrap()
            .retry(policy.clone())
            .handler_timeout(Duration::from_millis(300))
            .on_error(record(&failures))
            .run_service(slow);
        let unready_worker = client
            .worker("never-ready", StringCodec)
            .unwrap()
            .retry(policy)
            .handler_timeout(Duration::from_millis(300))
            .on_error(record(&failures))
            .run_service(
                ServiceBuilder::new()
                    .timeout(Duration::from_secs(60))
                    .service(NeverReady),
            );
        offer_all(&client, "slow-calls", &["s"]).await;
        offer_all(&client, "never-ready", &["n"]).await;

        let slow_calls = client.reliable_queue("slow-calls", StringCodec).unwrap();
        let never_ready = client.reliable_queue("never-ready", StringCodec).unwrap();
        eventually(Duration::from_secs(30), "both dead-lettered", || async {
            slow_calls.dead_letter_len().await.unwrap() == 1 && never_ready.dead_letter_len().await.unwrap() == 1
        })
        .await;
        let (slow_report, unready_report) = (slow_worker.shutdown().await, unready_worker.shutdown().await);

        let retry = FailureAction::Retry { after: Duration::ZERO };
        let failures = failures.lock().clone();
        let mut seen: Vec<(u32, FailureAction)> = failures
            .iter()
            .map(|(error, attempt, action)| {
                assert_eq!(error, "the handler did not finish within 300ms", "{failures:#?}");
                (*attempt, *action)
            })
            .collect();
        seen.sort_by_key(|(attempt, action)| (*attempt, *action == FailureAction::DeadLettered));
        assert_eq!(
            seen,
            [
                (1, retry),
                (1, retry),
                (2, FailureAction::DeadLettered),
                (2, FailureAction::DeadLettered)
            ]
        );
        assert_eq!((slow_report.timed_out, slow_report.dead_lettered), (2, 1));
        assert_eq!((unready_report.timed_out, unready_report.dead_lettered), (2, 1));
        assert_eq!(slow_calls.dead_letters().await.unwrap(), ["s"]);
        assert_eq!(never_ready.dead_letters().await.unwrap(), ["n"]);
    }
}

redis_test! {
    async fn a_shutdown_cuts_off_a_service_call_gives_its_value_back_and_frees_the_layers_permit(client) {
        let calls: Log<(String, u32)> = Arc::default();
        // One permit, shared by the clones of both workers below.
        let service = ServiceBuilder::new().concurrency_limit(1).service_fn({
            let calls = calls.clone();
            move |job: Job<String>| {
                calls.lock().push((job.value().clone(), job.attempt()));
                async move {
                    if job.attempt() == 1 {
                        std::future::pending::<()>().await;
                    }
                    Ok::<_, BoxError>(())
                }
            }
        });
        let first = client.worker("cut", StringCodec).unwrap().run_service(service.clone());
        offer_all(&client, "cut", &["a"]).await;
        eventually(Duration::from_secs(20), "the call started", || async {
            calls.lock().len() == 1
        })
        .await;
        let report = first.shutdown_within(Duration::from_millis(200)).await;
        assert_eq!((report.handled, report.succeeded), (1, 0));
        let reliable = client.reliable_queue("cut", StringCodec).unwrap();
        assert_eq!(reliable.in_flight().await.unwrap(), 0, "given back");

        // Ready only if the cut-off call gave its permit back.
        let second = client.worker("cut", StringCodec).unwrap().run_service(service);
        eventually(Duration::from_secs(20), "handled by the second worker", || async {
            second.report().succeeded == 1
        })
        .await;
        second.shutdown().await;
        assert_eq!(*calls.lock(), [("a".to_owned(), 1), ("a".to_owned(), 2)]);
        assert_eq!(reliable.in_flight().await.unwrap(), 0);
        assert_eq!(reliable.len().await.unwrap(), 0);
    }
}
