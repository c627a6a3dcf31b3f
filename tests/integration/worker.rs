//! Workers: handlers run over a queue with a concurrency limit, retries
//! through the delayed queue, dead letters, hooks and graceful shutdown.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::fred::types::Value;
use delayq::worker::{FailureAction, Permanent, RetryPolicy};
use delayq::{LongCodec, StringCodec};
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use delayq_test_support::{deadline, eventually, redis_test, RedisServer};

type Log<T> = Arc<Mutex<Vec<T>>>;

type HandlerFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), BoxError>> + Send>>;

/// Records the values a worker handles and the most handlers that ran at once.
#[derive(Clone, Default)]
struct ConcurrencyProbe {
    seen: Log<i64>,
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl ConcurrencyProbe {
    /// A handler that takes `busy` per value.
    fn handler(&self, busy: Duration) -> impl Fn(i64) -> HandlerFuture + Send + Sync + 'static + use<> {
        let probe = self.clone();
        move |value| {
            let probe = probe.clone();
            Box::pin(async move {
                let running = probe.running.fetch_add(1, Ordering::SeqCst) + 1;
                probe.most.fetch_max(running, Ordering::SeqCst);
                tokio::time::sleep(busy).await;
                probe.seen.lock().push(value);
                probe.running.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            })
        }
    }

    fn most(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }
}

redis_test! {
    async fn a_worker_handles_each_value_once_within_its_concurrency_limit(redis) {
        let producer = redis.client().await;
        let consumer = redis.client().await;
        let queue = producer.delayed_queue("jobs", LongCodec).unwrap();
        queue
            .offer_all((0..60i64).map(|i| (i, Duration::from_millis(50 + (i as u64 % 6) * 50))))
            .await
            .unwrap();

        let probe = ConcurrencyProbe::default();
        let seen = probe.seen.clone();
        let worker = consumer
            .worker("jobs", LongCodec)
            .unwrap()
            .concurrency(4)
            .run(probe.handler(Duration::from_millis(20)));
        eventually(Duration::from_secs(10), "all 60 handled", || async {
            seen.lock().len() >= 60
        })
        .await;
        let report = worker.shutdown().await;

        let mut values = seen.lock().clone();
        values.sort();
        assert_eq!(values, (0..60).collect::<Vec<_>>(), "each value handled exactly once");
        assert!(probe.most() <= 4, "never more than 4 handlers at once");
        assert!(probe.most() > 1, "handlers do run concurrently");
        assert_eq!((report.handled, report.succeeded, report.retried), (60, 60, 0));
        let reliable = consumer.reliable_queue("jobs", LongCodec).unwrap();
        assert_eq!(reliable.in_flight().await.unwrap(), 0, "every delivery acked");
        assert_eq!(reliable.len().await.unwrap(), 0);
        assert_eq!(queue.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// A worker of one slot sends each ack together with the next move (one
    /// round trip less per value): still one handler at a time, the values in
    /// the queue's order, each handled and acked once.
    async fn a_single_slot_handles_ready_values_in_order_acking_each_once(client) {
        const N: i64 = 300;
        let ready = client.blocking_queue("in-order", LongCodec).unwrap();
        ready.offer_all(0..N).await.unwrap();
        let probe = ConcurrencyProbe::default();
        let seen = probe.seen.clone();
        let worker = client
            .worker("in-order", LongCodec)
            .unwrap()
            .concurrency(1)
            .run(probe.handler(Duration::ZERO));
        eventually(Duration::from_secs(20), "all handled", || async {
            seen.lock().len() >= N as usize
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(*seen.lock(), (0..N).collect::<Vec<_>>(), "in order, each once");
        assert_eq!(probe.most(), 1, "one handler at a time");
        assert_eq!((report.handled, report.succeeded), (N as u64, N as u64));
        let reliable = client.reliable_queue("in-order", LongCodec).unwrap();
        assert_eq!(reliable.in_flight().await.unwrap(), 0, "every delivery acked");
    }
}

redis_test! {
    async fn a_value_that_keeps_failing_is_retried_with_backoff_then_dead_lettered(client) {
        let failures: Log<(u32, FailureAction)> = Arc::default();
        let calls: Log<(String, Instant)> = Arc::default();
        let worker = client
            .worker("mail", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::from_millis(300)).max_attempts(3))
            .on_error({
                let failures = failures.clone();
                move |failure| {
                    assert_eq!(failure.queue(), "mail");
                    assert!(failure.error().to_string().contains("smtp down"));
                    failures.lock().push((failure.attempt(), failure.action()));
                }
            })
            .run({
                let calls = calls.clone();
                move |value: String| {
                    calls.lock().push((value.clone(), Instant::now()));
                    async move {
                        if value == "bad" {
                            Err(std::io::Error::other("smtp down"))
                        } else {
                            Ok(())
                        }
                    }
                }
            });
        let queue = client.delayed_queue("mail", StringCodec).unwrap();
        queue.offer(&"bad".to_owned(), Duration::ZERO).await.unwrap();
        queue.offer(&"good".to_owned(), Duration::ZERO).await.unwrap();

        let reliable = client.reliable_queue("mail", StringCodec).unwrap();
        eventually(Duration::from_secs(10), "the bad value is dead-lettered", || async {
            reliable.dead_letter_len().await.unwrap() == 1
        })
        .await;
        let report = worker.shutdown().await;

        let retry = FailureAction::Retry {
            after: Duration::from_millis(300),
        };
        assert_eq!(
            *failures.lock(),
            [(1, retry), (2, retry), (3, FailureAction::DeadLettered)]
        );
        let bad: Vec<Instant> = calls
            .lock()
            .iter()
            .filter(|(v, _)| v == "bad")
            .map(|(_, t)| *t)
            .collect();
        assert_eq!(bad.len(), 3, "three attempts");
        for pair in bad.windows(2) {
            assert!(
                pair[1] - pair[0] >= Duration::from_millis(290),
                "a retry waits for its backoff: {:?}",
                pair[1] - pair[0]
            );
        }
        assert_eq!(calls.lock().iter().filter(|(v, _)| v == "good").count(), 1);
        assert_eq!(reliable.dead_letters().await.unwrap(), ["bad"]);
        assert_eq!((report.succeeded, report.retried, report.dead_lettered), (1, 2, 1));
        assert_eq!(reliable.in_flight().await.unwrap(), 0);
        // Requeued from the dead-letter list, it starts with a fresh count.
        assert_eq!(reliable.requeue_dead_letters(10).await.unwrap(), 1);
        let delivery = reliable.take().await.unwrap();
        assert_eq!((delivery.value().as_str(), delivery.delivery_count()), ("bad", 1));
        delivery.ack().await.unwrap();
    }
}

redis_test! {
    async fn a_value_that_succeeds_on_a_later_attempt_is_acked_once(client) {
        let attempts = Arc::new(AtomicUsize::new(0));
        let worker = client
            .worker("flaky", StringCodec)
            .unwrap()
            .retry(RetryPolicy::exponential(Duration::from_millis(50), Duration::from_secs(1)).jitter(0.5))
            .run({
                let attempts = attempts.clone();
                move |_: String| {
                    let n = attempts.fetch_add(1, Ordering::SeqCst) + 1;
                    async move {
                        if n < 3 {
                            Err(format!("attempt {n} failed"))
                        } else {
                            Ok(())
                        }
                    }
                }
            });
        let queue = client.delayed_queue("flaky", StringCodec).unwrap();
        queue.offer(&"x".to_owned(), Duration::from_millis(10)).await.unwrap();
        eventually(Duration::from_secs(10), "the value succeeds", || async {
            worker.report().succeeded == 1
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(attempts.load(Ordering::SeqCst), 3);
        assert_eq!((report.handled, report.retried, report.dead_lettered), (3, 2, 0));
        let reliable = client.reliable_queue("flaky", StringCodec).unwrap();
        assert_eq!(reliable.dead_letter_len().await.unwrap(), 0);
        assert_eq!(reliable.in_flight().await.unwrap(), 0);
        assert_eq!(queue.len().await.unwrap(), 0, "no retry left behind");
        // The count was cleared by the ack: the same value starts again at 1.
        queue.offer(&"x".to_owned(), Duration::ZERO).await.unwrap();
        let delivery = client
            .reliable_queue("flaky", StringCodec)
            .unwrap()
            .with_transfer()
            .take()
            .await
            .unwrap();
        assert_eq!(delivery.delivery_count(), 1);
        delivery.ack().await.unwrap();
    }
}

redis_test! {
    async fn permanent_errors_panics_and_timeouts_are_failures_of_their_own_kind(client) {
        let failures: Log<(String, u32, FailureAction)> = Arc::default();
        let worker = client
            .worker("kinds", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::ZERO).max_attempts(2))
            // Long enough that a panic (its message and backtrace printed on a
            // loaded machine) is never overtaken by the timeout.
            .handler_timeout(Duration::from_secs(3))
            .on_error({
                let failures = failures.clone();
                move |f| failures.lock().push((f.error().to_string(), f.attempt(), f.action()))
            })
            .run(|value: String| {
                // In the closure, before its future: the handler's panic too.
                if value == "eager panic" {
                    panic!("eager boom");
                }
                async move {
                match value.as_str() {
                    "permanent" => Err(BoxError::from(Permanent::new("invalid order"))),
                    // At its first poll (run in place), and after an
                    // `.await` (in a task of its own).
                    "panic" => panic!("boom"),
                    "late panic" => {
                        tokio::task::yield_now().await;
                        panic!("late boom")
                    }
                    "slow" => {
                        tokio::time::sleep(Duration::from_secs(60)).await;
                        Ok(())
                    }
                    _ => Ok(()),
                }
                }
            });
        let dest = client.blocking_queue("kinds", StringCodec).unwrap();
        for value in ["permanent", "panic", "late panic", "slow", "eager panic"] {
            dest.offer(&value.to_owned()).await.unwrap();
        }
        let reliable = client.reliable_queue("kinds", StringCodec).unwrap();
        eventually(Duration::from_secs(30), "all five dead-lettered", || async {
            reliable.dead_letter_len().await.unwrap() == 5
        })
        .await;
        let report = worker.shutdown().await;
        let failures = failures.lock().clone();
        let of = |value: &str| -> Vec<(u32, FailureAction)> {
            let needle = match value {
                "permanent" => "invalid order (permanent)",
                "panic" => "the handler panicked: boom",
                "late panic" => "the handler panicked: late boom",
                "eager panic" => "the handler panicked: eager boom",
                _ => "did not finish within 3s",
            };
            failures
                .iter()
                .filter(|(e, ..)| e.contains(needle))
                .map(|(_, a, act)| (*a, *act))
                .collect()
        };
        let retry = FailureAction::Retry { after: Duration::ZERO };
        assert_eq!(
            of("permanent"),
            [(1, FailureAction::DeadLettered)],
            "no retry for a permanent error"
        );
        assert_eq!(
            of("panic"),
            [(1, retry), (2, FailureAction::DeadLettered)],
            "{failures:#?}"
        );
        assert_eq!(
            of("slow"),
            [(1, retry), (2, FailureAction::DeadLettered)],
            "{failures:#?}"
        );
        assert_eq!(
            of("late panic"),
            [(1, retry), (2, FailureAction::DeadLettered)],
            "{failures:#?}"
        );
        assert_eq!(
            of("eager panic"),
            [(1, retry), (2, FailureAction::DeadLettered)],
            "{failures:#?}"
        );
        assert_eq!((report.panicked, report.timed_out, report.dead_lettered), (6, 2, 5));
        let mut dead = reliable.dead_letters().await.unwrap();
        dead.sort();
        assert_eq!(dead, ["eager panic", "late panic", "panic", "permanent", "slow"]);
    }
}

redis_test! {
    async fn a_value_the_codec_cannot_decode_goes_to_the_dead_letter_list_at_once(redis, client) {
        let failures: Log<(u32, FailureAction, bool)> = Arc::default();
        let handled: Log<i64> = Arc::default();
        let worker = client
            .worker("numbers", LongCodec)
            .unwrap()
            .on_error({
                let failures = failures.clone();
                move |f| {
                    let is_decode = f.error().downcast_ref::<delayq::error::DecodeError>().is_some();
                    failures.lock().push((f.attempt(), f.action(), is_decode));
                }
            })
            .run({
                let handled = handled.clone();
                move |n: i64| {
                    handled.lock().push(n);
                    async { Ok::<_, BoxError>(()) }
                }
            });
        let raw = redis.raw().await;
        for value in ["1", "not a number", "2"] {
            raw.cmd("RPUSH", vec![Value::from("numbers"), Value::from(value)]).await;
        }
        eventually(Duration::from_secs(10), "both numbers handled", || async {
            handled.lock().len() == 2
        })
        .await;
        eventually(Duration::from_secs(20), "the bad value reported", || async {
            !failures.lock().is_empty()
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(*failures.lock(), [(0, FailureAction::DeadLettered, true)]);
        assert_eq!(raw.lrange("delayq_dead_letter:{numbers}").await, ["not a number"]);
        assert_eq!((report.undecodable, report.dead_lettered, report.succeeded), (1, 1, 2));
    }
}

redis_test! {
    async fn shutdown_lets_handlers_in_flight_finish_and_takes_nothing_new(client) {
        let release = Arc::new(Notify::new());
        let started = Arc::new(AtomicUsize::new(0));
        let token = CancellationToken::new();
        let worker = client
            .worker("batch", StringCodec)
            .unwrap()
            .concurrency(2)
            .shutdown_on(token.clone().cancelled_owned())
            .run({
                let (release, started) = (release.clone(), started.clone());
                move |_: String| {
                    let (release, started) = (release.clone(), started.clone());
                    async move {
                        started.fetch_add(1, Ordering::SeqCst);
                        release.notified().await;
                        Ok::<_, BoxError>(())
                    }
                }
            });
        let dest = client.blocking_queue("batch", StringCodec).unwrap();
        for i in 0..5 {
            dest.offer(&format!("v{i}")).await.unwrap();
        }
        eventually(Duration::from_secs(20), "two handlers running", || async {
            started.load(Ordering::SeqCst) == 2
        })
        .await;

        token.cancel();
        let reliable = client.reliable_queue("batch", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "the worker stops taking", || async {
            dest.len().await.unwrap() == 3
        })
        .await;
        assert!(!worker.is_finished(), "still finishing its two handlers");
        release.notify_waiters();
        let report = worker.join().await;
        assert_eq!((report.handled, report.succeeded), (2, 2));
        assert_eq!(started.load(Ordering::SeqCst), 2, "nothing new taken");
        assert_eq!(dest.len().await.unwrap(), 3, "the rest left for other consumers");
        assert_eq!(reliable.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    async fn a_shutdown_whose_grace_runs_out_gives_the_values_back(client) {
        let started = Arc::new(AtomicUsize::new(0));
        let worker = client.worker("stuck", StringCodec).unwrap().run({
            let started = started.clone();
            move |_: String| {
                started.fetch_add(1, Ordering::SeqCst);
                std::future::pending::<Result<(), BoxError>>()
            }
        });
        let dest = client.blocking_queue("stuck", StringCodec).unwrap();
        dest.offer(&"a".to_owned()).await.unwrap();
        dest.offer(&"b".to_owned()).await.unwrap();
        eventually(Duration::from_secs(20), "the handler started", || async {
            started.load(Ordering::SeqCst) == 1
        })
        .await;
        let report = worker.shutdown_within(Duration::from_millis(200)).await;
        assert_eq!((report.handled, report.succeeded), (1, 0));
        // Given back to the head: first in line again, with its count kept.
        let reliable = client.reliable_queue("stuck", StringCodec).unwrap();
        assert_eq!(reliable.in_flight().await.unwrap(), 0);
        let delivery = reliable.take().await.unwrap();
        assert_eq!((delivery.value().as_str(), delivery.delivery_count()), ("a", 2));
        delivery.ack().await.unwrap();
    }
}

redis_test! {
    async fn one_process_runs_workers_on_several_queues_and_knows_their_lateness(redis, client) {
        let seen: Log<(&'static str, String)> = Arc::default();
        let workers: Vec<_> = ["alpha", "beta", "gamma"]
            .into_iter()
            .map(|name| {
                let seen = seen.clone();
                client.worker(name, StringCodec).unwrap().run(move |v: String| {
                    seen.lock().push((name, v));
                    async { Ok::<_, BoxError>(()) }
                })
            })
            .collect();
        // A reliable consumer tracking lateness, on a fourth queue.
        let tracked = client
            .reliable_queue("delta", StringCodec)
            .unwrap()
            .with_transfer()
            .with_lateness_tracking();
        eventually(Duration::from_secs(20), "the tracking marker is set", || async {
            redis
                .raw()
                .await
                .cmd("EXISTS", vec![Value::from("delayq_due_tracking:{delta}")])
                .await
                == Value::Integer(1)
        })
        .await;
        for name in ["alpha", "beta", "gamma", "delta"] {
            let queue = client.delayed_queue(name, StringCodec).unwrap();
            queue
                .offer(&format!("{name}-1"), Duration::from_millis(100))
                .await
                .unwrap();
        }
        let delivery = tracked.take().await.unwrap();
        assert!(
            delivery.lateness().is_some(),
            "the due time was recorded by the transfer"
        );
        delivery.ack().await.unwrap();
        eventually(Duration::from_secs(20), "each worker handled its value", || async {
            seen.lock().len() == 3
        })
        .await;
        let by_queue: HashMap<_, _> = seen.lock().iter().cloned().collect();
        for name in ["alpha", "beta", "gamma"] {
            assert_eq!(by_queue[name], format!("{name}-1"));
        }
        for worker in workers {
            assert_eq!(worker.shutdown().await.succeeded, 1);
        }
        assert_eq!(
            redis.raw().await.zcard("delayq_due:{delta}").await,
            0,
            "a claim consumes its record"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_a_worker_after_its_handler_finishes() {
    deadline(async {
        // Listening here first makes SIGTERM harmless to the test process
        // before the worker's own listener is in place.
        let mut ours = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let worker = client
            .worker("sig", StringCodec)
            .unwrap()
            .concurrency(2)
            .shutdown_on_signal()
            .run({
                let (started, release) = (started.clone(), release.clone());
                move |_: String| {
                    let (started, release) = (started.clone(), release.clone());
                    async move {
                        started.notify_one();
                        release.notified().await;
                        Ok::<_, BoxError>(())
                    }
                }
            });
        let dest = client.blocking_queue("sig", StringCodec).unwrap();
        dest.offer(&"in flight".to_owned()).await.unwrap();
        started.notified().await;
        // Its free slot waits in a blocking take; a stopped worker ends that wait.
        eventually(Duration::from_secs(20), "the worker waits for more", || async {
            raw.info_field("clients", "blocked_clients").await == "1"
        })
        .await;
        let pid = std::process::id().to_string();
        let stopped_taking = async {
            loop {
                // Again until the worker's listener (started in a task) hears one.
                let sent = std::process::Command::new("kill")
                    .args(["-TERM", &pid])
                    .status()
                    .unwrap();
                assert!(sent.success());
                ours.recv().await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                if raw.info_field("clients", "blocked_clients").await == "0" {
                    return;
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(10), stopped_taking)
            .await
            .expect("the worker heard SIGTERM");
        dest.offer(&"left".to_owned()).await.unwrap();
        assert!(!worker.is_finished(), "it waits for the handler in flight");
        release.notify_one();
        let report = worker.join().await;
        assert_eq!((report.handled, report.succeeded), (1, 1));
        assert_eq!(dest.len().await.unwrap(), 1, "nothing new taken after the signal");
    })
    .await;
}

redis_test! {
    async fn identical_payloads_handled_at_once_are_each_a_first_attempt(client) {
        const N: usize = 24;
        let same: Vec<String> = (0..N).map(|_| "refresh:42".to_owned()).collect();
        client
            .blocking_queue("jobs", StringCodec)
            .unwrap()
            .offer_all(same)
            .await
            .unwrap();
        let failures: Log<u32> = Arc::default();
        let started = Arc::new(AtomicUsize::new(0));
        let worker = client
            .worker("jobs", StringCodec)
            .unwrap()
            .concurrency(N)
            .on_error({
                let failures = failures.clone();
                move |f| failures.lock().push(f.attempt())
            })
            .run({
                let started = started.clone();
                move |_: String| {
                    let started = started.clone();
                    async move {
                        // Every handler waits until all N identical values
                        // are taken: N deliveries of one payload in flight.
                        started.fetch_add(1, Ordering::SeqCst);
                        let until = Instant::now() + Duration::from_secs(30);
                        while started.load(Ordering::SeqCst) < N && Instant::now() < until {
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                        Ok::<_, BoxError>(())
                    }
                }
            });
        let reliable = client.reliable_queue("jobs", StringCodec).unwrap();
        eventually(Duration::from_secs(40), "all handled", || async {
            worker.report().succeeded as usize >= N
        })
        .await;
        let report = worker.shutdown().await;
        assert_eq!(started.load(Ordering::SeqCst), N, "all {N} were handled at once");
        assert_eq!((report.handled, report.succeeded), (N as u64, N as u64));
        assert_eq!((report.retried, report.dead_lettered), (0, 0));
        assert!(failures.lock().is_empty(), "no failure: {:?}", failures.lock());
        assert_eq!(reliable.dead_letter_len().await.unwrap(), 0, "none dead-lettered");
        assert_eq!(reliable.in_flight().await.unwrap(), 0, "each acked");
        assert_eq!(reliable.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// While values are ready, the worker takes as many as it has free slots
    /// with one script (`claim_batch.lua`, on the shared connections), without
    /// waiting; once the queue is empty it waits with one blocking read,
    /// whatever its concurrency. Every value is handled once.
    async fn a_worker_takes_ready_values_without_waiting_and_idles_on_one_connection(redis, raw, client) {
        let monitor = redis.monitor().await;
        let dest = client.blocking_queue("slots", LongCodec).unwrap();
        dest.offer_all(0..300i64).await.unwrap();
        let probe = ConcurrencyProbe::default();
        let seen = probe.seen.clone();
        let worker = client
            .worker("slots", LongCodec)
            .unwrap()
            .concurrency(8)
            .run(probe.handler(Duration::from_millis(2)));
        eventually(Duration::from_secs(20), "all 300 handled", || async {
            seen.lock().len() >= 300
        })
        .await;
        eventually(Duration::from_secs(20), "the idle worker waits", || async {
            raw.info_field("clients", "blocked_clients").await == "1"
        })
        .await;
        // Its other seven slots are free, and take nothing from an empty queue.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(raw.info_field("clients", "blocked_clients").await, "1");
        let entries = monitor.entries().await;
        let sent = |name: &str| entries.iter().filter(|c| !c.from_lua && c.name() == name).count();
        // Every value was ready when the worker started: each was popped by
        // a batch claim (the last pop of a batch may find the queue empty),
        // in fewer scripts than values; only the idle worker waits.
        // Counted by value: a claim pops several at once (LPOP key count).
        let pops: usize = entries
            .iter()
            .filter(|c| c.from_lua && c.name() == "lpop")
            .map(|c| c.args.get(2).and_then(|n| std::str::from_utf8(n).ok()?.parse().ok()).unwrap_or(1))
            .sum();
        let sha = delayq::fred::util::sha1_hash(
            &(delayq_test_support::script_body(include_str!("../../lua/claim_batch.lua"))),
        );
        let claims = entries
            .iter()
            .filter(|c| c.name() == "evalsha" && c.args.get(1).is_some_and(|a| a == sha.as_bytes()))
            .count();
        let blocking_moves = sent("blmove");
        assert!(
            pops >= 300 && claims < 300 && blocking_moves <= 1,
            "ready values are taken in batches without waiting ({pops} pops in {claims} batch claims, {blocking_moves} BLMOVEs)"
        );
        let report = worker.shutdown().await;
        let mut values = seen.lock().clone();
        values.sort();
        assert_eq!(values, (0..300).collect::<Vec<_>>(), "each value handled exactly once");
        let most = probe.most();
        assert!(most <= 8, "never more than 8 handlers at once");
        assert!(most > 1, "slots took and handled values concurrently");
        assert_eq!((report.handled, report.succeeded), (300, 300));
        let reliable = client.reliable_queue("slots", LongCodec).unwrap();
        assert_eq!(reliable.in_flight().await.unwrap(), 0, "every delivery acked");
        assert_eq!(dest.len().await.unwrap(), 0);
    }
}

redis_test! {
    /// A worker stopped while its slots take ready values leaves none of them
    /// leased or staged: a slot's take is not cut short by the stop (one
    /// dropped while claiming would leave its value leased until its 30 s
    /// visibility timeout), and a value taken as the stop came goes straight
    /// back to the queue, not counted as a delivery. Three stops, on a queue
    /// with values to spare each time.
    scale async fn a_worker_stopped_mid_queue_leaves_nothing_leased_or_staged(raw, client) {
        const N: usize = 3_000;
        let dest = client.blocking_queue("stopping", LongCodec).unwrap();
        dest.offer_all(0..N as i64).await.unwrap();
        let reliable = client.reliable_queue("stopping", LongCodec).unwrap();
        let keys = reliable.keys().clone();
        let seen: Log<i64> = Arc::default();
        for round in 1..=3 {
            let worker = client
                .worker("stopping", LongCodec)
                .unwrap()
                .concurrency(8)
                .visibility_timeout(Duration::from_secs(30))
                .run({
                    let seen = seen.clone();
                    move |value: i64| {
                        seen.lock().push(value);
                        async { Ok::<_, BoxError>(()) }
                    }
                });
            eventually(Duration::from_secs(20), "a share of the values handled", || async {
                seen.lock().len() >= round * N / 5
            })
            .await;
            worker.shutdown().await;
            // What a stopped take strands comes back only after 30 s.
            eventually(
                Duration::from_secs(5),
                "every value handled or back in the queue",
                || async {
                    let handled = seen.lock().len();
                    raw.llen("stopping").await + handled == N
                        && raw.zcard(keys.leases()).await == 0
                        && raw.llen(keys.staging()).await == 0
                },
            )
            .await;
        }
        // The values given back at the stops were never delivered to a handler.
        while let Some(delivery) = reliable.take_timeout(Duration::ZERO).await.unwrap() {
            assert_eq!(
                delivery.delivery_count(),
                1,
                "{} counted as delivered",
                delivery.value()
            );
            seen.lock().push(*delivery.value());
            assert!(delivery.ack().await.unwrap());
        }
        let mut values = seen.lock().clone();
        values.sort();
        assert_eq!(
            values,
            (0..N as i64).collect::<Vec<_>>(),
            "each value handled exactly once"
        );
    }
}

redis_test! {
    async fn a_shutdown_ends_while_redis_is_down_and_a_handler_runs(redis, client) {
        let started = Arc::new(AtomicUsize::new(0));
        let worker = client.worker("down", StringCodec).unwrap().run({
            let started = started.clone();
            move |_: String| {
                started.fetch_add(1, Ordering::SeqCst);
                std::future::pending::<Result<(), BoxError>>()
            }
        });
        let dest = client.blocking_queue("down", StringCodec).unwrap();
        dest.offer(&"a".to_owned()).await.unwrap();
        eventually(Duration::from_secs(20), "the handler started", || async {
            started.load(Ordering::SeqCst) == 1
        })
        .await;
        redis.kill();
        tokio::time::sleep(Duration::from_secs(1)).await;
        // The value cannot go back (its visibility timeout returns it): the
        // shutdown still ends.
        let report = tokio::time::timeout(
            Duration::from_secs(30),
            worker.shutdown_within(Duration::from_millis(200)),
        )
        .await
        .expect("the worker stops without Redis");
        assert_eq!(report.handled, 1);
        tokio::time::timeout(
            Duration::from_secs(30),
            client.shutdown_within(Duration::from_millis(200)),
        )
        .await
        .expect("the client stops without Redis");
    }
}

redis_test! {
    /// A slot whose next take hangs (the connection stalls, and the client is
    /// told never to give up on it) does not hold up the worker's stop: once the
    /// grace is over, the take is cut short and what it took goes back.
    async fn a_stop_cuts_short_a_slot_take_that_hangs(redis) {
        let proxy = delayq_test_support::fault_proxy::FaultProxy::start(redis.port()).await;
        let client = delayq::Client::builder()
            .url(proxy.url())
            .blocking_timeout(Duration::from_secs(1))
            .unresponsive_timeout(None)
            .build()
            .await
            .unwrap();
        let dest = client.blocking_queue("hangs", StringCodec).unwrap();
        for value in ["a", "b", "c"] {
            dest.offer(&value.to_owned()).await.unwrap();
        }
        let proxy = Arc::new(proxy);
        let handled = Arc::new(AtomicUsize::new(0));
        // The first handler stalls the connections as it returns: the slot's
        // ack and next take then hang.
        let worker = client.worker("hangs", StringCodec).unwrap().run({
            let (proxy, handled) = (proxy.clone(), handled.clone());
            move |_: String| {
                let (proxy, handled) = (proxy.clone(), handled.clone());
                async move {
                    handled.fetch_add(1, Ordering::SeqCst);
                    proxy.set_stalled(true);
                    Ok::<_, BoxError>(())
                }
            }
        });
        eventually(Duration::from_secs(20), "the first value handled", || async {
            handled.load(Ordering::SeqCst) == 1
        })
        .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let report = tokio::time::timeout(
            Duration::from_secs(30),
            worker.shutdown_within(Duration::from_millis(200)),
        )
        .await
        .expect("the stop does not wait for the stalled take");
        assert_eq!(report.handled, 1);
        // Once the connections flow again nothing is lost: each value is in
        // the queue, or in flight (the first one's ack may have given up).
        proxy.set_stalled(false);
        let reliable = client.reliable_queue("hangs", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "every value accounted for", || async {
            let ready = reliable.len().await.unwrap();
            let in_flight = reliable.in_flight().await.unwrap();
            ready == 2 && in_flight <= 1
        })
        .await;
        client.shutdown_within(Duration::from_millis(200)).await;
    }
}

redis_test! {
    /// A handler's lease is extended beside it, not in its way: an extension
    /// that hangs (the connection stalled) does not hold up the handler's
    /// timeout.
    async fn a_hanging_lease_extension_does_not_hold_up_the_handler_timeout(redis) {
        let proxy = delayq_test_support::fault_proxy::FaultProxy::start(redis.port()).await;
        let client = delayq::Client::builder()
            .url(proxy.url())
            .blocking_timeout(Duration::from_secs(1))
            .build()
            .await
            .unwrap();
        let started = Arc::new(AtomicUsize::new(0));
        let worker = client
            .worker("extended", StringCodec)
            .unwrap()
            .visibility_timeout(Duration::from_millis(900)) // extended every 300 ms
            .handler_timeout(Duration::from_secs(2))
            .run({
                let started = started.clone();
                move |_: String| {
                    started.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<Result<(), BoxError>>()
                }
            });
        let producer = redis.client().await;
        let dest = producer.blocking_queue("extended", StringCodec).unwrap();
        dest.offer(&"a".to_owned()).await.unwrap();
        eventually(Duration::from_secs(20), "the handler started", || async {
            started.load(Ordering::SeqCst) == 1
        })
        .await;
        // From now on the worker's extensions go nowhere until the stall ends.
        proxy.set_stalled(true);
        eventually(Duration::from_secs(6), "the handler timed out on time", || async {
            worker.report().timed_out == 1
        })
        .await;
        proxy.set_stalled(false);
        let report = worker.shutdown_within(Duration::from_secs(1)).await;
        assert_eq!(report.timed_out, 1);
        client.shutdown().await;
        producer.shutdown().await;
    }
}

redis_test! {
    /// A handler that blocks its thread in its first poll (run in place,
    /// before it would get a task and an extension timer of its own) keeps
    /// its lease past the visibility timeout: the worker's lease keeper
    /// extends it, so the reaper does not give the value back meanwhile and
    /// it is handled once. (A thread blocked without `block_in_place` can
    /// stall the runtime's timers, the handler's own ones included.)
    async fn a_handler_blocking_its_thread_in_its_first_poll_keeps_its_lease(client) {
        const VISIBILITY: Duration = Duration::from_secs(2);
        let runs = Arc::new(AtomicUsize::new(0));
        let worker = client
            .worker("blocks-first", StringCodec)
            .unwrap()
            .visibility_timeout(VISIBILITY)
            .run({
                let runs = runs.clone();
                move |_: String| {
                    let runs = runs.clone();
                    async move {
                        runs.fetch_add(1, Ordering::SeqCst);
                        // No `.await` before: all of it in the first poll,
                        // blocking as a tokio handler may (in place: a plain
                        // blocked thread can hold up the runtime's timers).
                        tokio::task::block_in_place(|| std::thread::sleep(Duration::from_secs(6)));
                        Ok::<(), BoxError>(())
                    }
                }
            });
        let dest = client.blocking_queue("blocks-first", StringCodec).unwrap();
        dest.offer(&"a".to_owned()).await.unwrap();
        eventually(Duration::from_secs(20), "the handler started", || async {
            runs.load(Ordering::SeqCst) == 1
        })
        .await;
        // Past the visibility timeout, with the handler still blocked.
        tokio::time::sleep(VISIBILITY + Duration::from_secs(1)).await;
        let reliable = client
            .reliable_queue("blocks-first", StringCodec)
            .unwrap()
            .with_visibility_timeout(VISIBILITY);
        let reaped = reliable.reap_now().await.unwrap();
        assert_eq!(reaped.timed_out, 0, "the lease lapsed while the handler ran: {reaped:?}");
        assert_eq!(reliable.in_flight().await.unwrap(), 1);
        assert_eq!(dest.len().await.unwrap(), 0);
        eventually(Duration::from_secs(30), "handled and acked", || async {
            worker.report().succeeded == 1 && reliable.in_flight().await.unwrap() == 0
        })
        .await;
        assert_eq!(dest.len().await.unwrap(), 0, "nothing given back");
        assert_eq!(runs.load(Ordering::SeqCst), 1, "handled once");
        worker.shutdown().await;
    }
}

redis_test! {
    /// A handler cancelled by its timeout is stopped before its value is
    /// settled: one that blocks its thread (it cannot be stopped at an
    /// `.await`) is waited for, so the value's next attempt never runs beside it.
    async fn a_timed_out_handler_has_stopped_before_its_value_is_tried_again(client) {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let attempts = Arc::new(AtomicUsize::new(0));
        let worker = client
            .worker("blocking", StringCodec)
            .unwrap()
            .concurrency(1)
            .handler_timeout(Duration::from_millis(50))
            .retry(RetryPolicy::fixed(Duration::ZERO).max_attempts(3))
            .run({
                let (running, most, attempts) = (running.clone(), most.clone(), attempts.clone());
                move |_: String| {
                    let (running, most, attempts) = (running.clone(), most.clone(), attempts.clone());
                    async move {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        attempts.fetch_add(1, Ordering::SeqCst);
                        // Blocks its thread: no `.await` to stop it at (in
                        // place, so the runtime's other tasks move on).
                        tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(300)));
                        running.fetch_sub(1, Ordering::SeqCst);
                        Ok::<(), BoxError>(())
                    }
                }
            });
        let dest = client.blocking_queue("blocking", StringCodec).unwrap();
        dest.offer(&"a".to_owned()).await.unwrap();
        // Timed out at least once (the timer may also lose to a handler
        // that blocks), then done: handled in time, or dead-lettered.
        eventually(Duration::from_secs(30), "a timeout, then the value settled", || async {
            let report = worker.report();
            report.timed_out >= 1 && report.succeeded + report.dead_lettered == 1
        })
        .await;
        eventually(Duration::from_secs(20), "the last attempt stopped", || async {
            running.load(Ordering::SeqCst) == 0
        })
        .await;
        assert!(attempts.load(Ordering::SeqCst) >= 2);
        assert_eq!(most.load(Ordering::SeqCst), 1, "attempts of one value ran side by side");
        worker.shutdown_within(Duration::from_secs(1)).await;
    }
}

redis_test! {
    /// While handlers are quick, an answer wakes a few idle slots, not
    /// every one (src/worker/prefetch.rs, `filled`). Handlers that turn
    /// slow then must still reach the worker's concurrency: each one that
    /// waits wakes another idle slot while values wait. Here the last 16
    /// values each wait until 16 handlers run at once.
    async fn slow_handlers_after_quick_ones_still_run_at_full_concurrency(client) {
        const QUICK: i64 = 2_000;
        const SLOW: usize = 16;
        let dest = client.blocking_queue("quick-then-slow", LongCodec).unwrap();
        dest.offer_all(0..QUICK + SLOW as i64).await.unwrap();
        let (running, all_in, most) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(tokio::sync::Barrier::new(SLOW)),
            Arc::new(AtomicUsize::new(0)),
        );
        let handled = Arc::new(AtomicUsize::new(0));
        let worker = client.worker("quick-then-slow", LongCodec).unwrap().concurrency(SLOW).run({
            let (running, all_in, most, handled) = (running.clone(), all_in.clone(), most.clone(), handled.clone());
            move |value: i64| {
                let (running, all_in, most, handled) = (running.clone(), all_in.clone(), most.clone(), handled.clone());
                async move {
                    if value >= QUICK {
                        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        // Until all are in, or long enough to say they never were.
                        let _ = tokio::time::timeout(Duration::from_secs(30), all_in.wait()).await;
                        running.fetch_sub(1, Ordering::SeqCst);
                    }
                    handled.fetch_add(1, Ordering::SeqCst);
                    Ok::<(), BoxError>(())
                }
            }
        });
        eventually(Duration::from_secs(90), "every value handled", || async {
            handled.load(Ordering::SeqCst) == QUICK as usize + SLOW
        })
        .await;
        worker.shutdown().await;
        assert_eq!(most.load(Ordering::SeqCst), SLOW, "the slow handlers ran all at once");
    }
}
