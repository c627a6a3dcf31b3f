//! A `Worker` claims values ahead of its free slots while its handlers are
//! quick (`Worker::prefetch`, src/worker/prefetch.rs): the values it holds
//! go back to the head, uncounted, when they wait too long, when the queue
//! is paused and when the worker stops (also with Redis out of reach), and
//! `prefetch(0)` holds only what its slots run. Each test runs a worker of
//! one slot whose first handlers are quick and the next one stuck.

use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::worker::WorkerHandle;
use delayq::{Client, LongCodec, ReliableQueue, Worker};
use parking_lot::Mutex;
use tokio::sync::Semaphore;

use delayq_test_support::{eventually, redis_test};

/// A one-slot worker on a queue of values `0..n`: its first `quick`
/// handlers return at once, the next waits until `gate` opens (or closes).
struct Stuck {
    quick: usize,
    gate: Arc<Semaphore>,
    seen: Arc<Mutex<Vec<i64>>>,
    worker: WorkerHandle,
    /// The queue, seen from a client straight to Redis.
    queue: ReliableQueue<i64>,
}

impl Stuck {
    /// Offers `0..n` on `name` through `direct`, then starts the worker on
    /// `client` with `configure` applied.
    async fn start(
        direct: &Client,
        client: &Client,
        name: &str,
        n: i64,
        quick: usize,
        configure: impl FnOnce(Worker<i64>) -> Worker<i64>,
    ) -> Stuck {
        direct
            .blocking_queue(name, LongCodec)
            .unwrap()
            .offer_all(0..n)
            .await
            .unwrap();
        let gate = Arc::new(Semaphore::new(0));
        let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
        let handler = {
            let (gate, seen) = (gate.clone(), seen.clone());
            move |value: i64| {
                let (gate, seen) = (gate.clone(), seen.clone());
                async move {
                    let stuck = {
                        let mut seen = seen.lock();
                        seen.push(value);
                        seen.len() == quick + 1
                    };
                    if stuck {
                        let _ = gate.acquire().await;
                    }
                    Ok::<_, BoxError>(())
                }
            }
        };
        let worker = configure(client.worker(name, LongCodec).unwrap().concurrency(1)).run(handler);
        let queue = direct.reliable_queue(name, LongCodec).unwrap();
        Stuck {
            quick,
            gate,
            seen,
            worker,
            queue,
        }
    }

    /// Waits until the stuck handler runs and the worker holds more than
    /// `held` values.
    async fn holding_more_than(&self, held: usize) {
        eventually(
            Duration::from_secs(20),
            "values held ahead of the stuck handler",
            || async { self.seen.lock().len() == self.quick + 1 && self.queue.in_flight().await.unwrap() > held },
        )
        .await;
    }

    /// Waits until the worker holds only the value its stuck handler runs.
    async fn holding_only_the_running_one(&self) {
        eventually(
            Duration::from_secs(20),
            "all but the running one given back",
            || async { self.queue.in_flight().await.unwrap() == 1 },
        )
        .await;
    }

    fn handled(&self) -> Vec<i64> {
        handled(&self.seen)
    }
}

/// What the handler ran on, in order.
fn handled(seen: &Mutex<Vec<i64>>) -> Vec<i64> {
    seen.lock().clone()
}

/// Values 0..n, each once, in any order.
fn each_once(seen: &[i64], n: i64) {
    let mut values = seen.to_vec();
    values.sort();
    assert_eq!(values, (0..n).collect::<Vec<_>>(), "each value handled exactly once");
}

redis_test! {
    /// Values claimed ahead that then wait a quarter of the visibility timeout
    /// (the one handler is stuck) go back to the head, uncounted, and are
    /// handled later as first attempts (with `max_attempts(1)` a counted one
    /// would be a dead letter).
    async fn values_claimed_ahead_go_back_uncounted_when_they_wait_too_long(client) {
        const N: i64 = 300;
        let stuck = Stuck::start(&client, &client, "ahead", N, 20, |w| {
            w.visibility_timeout(Duration::from_secs(4))
                .retry(delayq::worker::RetryPolicy::default().max_attempts(1))
        })
        .await;
        stuck.holding_more_than(1).await;
        stuck.holding_only_the_running_one().await;
        assert_eq!(stuck.queue.len().await.unwrap(), N as usize - 21);
        stuck.gate.close();
        eventually(Duration::from_secs(30), "all handled", || async {
            stuck.worker.report().succeeded == N as u64
        })
        .await;
        let report = stuck.worker.shutdown().await;
        each_once(&stuck.seen.lock(), N);
        assert_eq!(report.dead_lettered, 0, "{report:?}");
        assert_eq!(stuck.queue.dead_letter_len().await.unwrap(), 0);
        assert_eq!(stuck.queue.in_flight().await.unwrap(), 0);
    }
}

redis_test! {
    /// A stopping worker gives the values it claimed ahead back to the head,
    /// uncounted, while its running handler finishes.
    async fn a_stopping_worker_gives_back_values_claimed_ahead(client) {
        const N: i64 = 300;
        let stuck = Stuck::start(&client, &client, "ahead-stop", N, 10, |w| {
            w.visibility_timeout(Duration::from_secs(600))
        })
        .await;
        stuck.holding_more_than(1).await;
        stuck.worker.stop();
        stuck.holding_only_the_running_one().await;
        stuck.gate.close();
        let report = stuck.worker.join().await;
        assert_eq!(report.succeeded, 11, "{report:?}");
        let handled = stuck.seen.lock().clone();
        let mut left = client
            .blocking_queue("ahead-stop", LongCodec)
            .unwrap()
            .read_all()
            .await
            .unwrap();
        let expected: Vec<i64> = (0..N).filter(|v| !handled.contains(v)).collect();
        left.sort();
        assert_eq!(left, expected, "every value not handled is ready again");
        // Uncounted: a worker allowing one delivery handles them all.
        let rest: Arc<Mutex<Vec<i64>>> = Arc::default();
        let second = client
            .worker("ahead-stop", LongCodec)
            .unwrap()
            .concurrency(8)
            .retry(delayq::worker::RetryPolicy::default().max_attempts(1))
            .run({
                let rest = rest.clone();
                move |value: i64| {
                    rest.lock().push(value);
                    std::future::ready(Ok::<_, BoxError>(()))
                }
            });
        eventually(Duration::from_secs(30), "the rest handled", || async {
            second.report().succeeded == left.len() as u64
        })
        .await;
        let report = second.shutdown().await;
        assert_eq!(report.dead_lettered, 0, "{report:?}");
        let mut rest = rest.lock().clone();
        rest.sort();
        assert_eq!(rest, expected);
    }
}

redis_test! {
    /// `prefetch(0)`: a worker claims only for free slots, so with its one
    /// slot busy it holds one value, and the rest stay ready for others.
    async fn a_worker_without_prefetch_holds_only_what_its_slots_run(client) {
        const N: i64 = 100;
        let stuck = Stuck::start(&client, &client, "no-ahead", N, 20, |w| w.prefetch(0)).await;
        eventually(Duration::from_secs(20), "the handler stuck", || async {
            stuck.handled().len() == 21
        })
        .await;
        assert_eq!(stuck.queue.in_flight().await.unwrap(), 1, "only the running value held");
        assert_eq!(stuck.queue.len().await.unwrap(), N as usize - 21);
        stuck.gate.close();
        eventually(Duration::from_secs(30), "all handled", || async {
            stuck.worker.report().succeeded == N as u64
        })
        .await;
        stuck.worker.shutdown().await;
        each_once(&handled(&stuck.seen), N);
    }
}

redis_test! {
    /// A worker holding values ahead when its queue is paused gives them back
    /// (its pause probe finds the flag while no claim is on its way) and starts
    /// no handler on them: only the one running at the pause finishes.
    async fn values_held_ahead_go_back_when_the_queue_is_paused(client) {
        const N: i64 = 400;
        let stuck = Stuck::start(&client, &client, "ahead-pause", N, 20, |w| {
            w.visibility_timeout(Duration::from_secs(600))
        })
        .await;
        stuck.holding_more_than(1).await;
        let delayed = client
            .delayed_queue("ahead-pause", LongCodec)
            .unwrap()
            .without_transfer();
        delayed.pause().await.unwrap();
        stuck.holding_only_the_running_one().await;
        stuck.gate.close();
        eventually(Duration::from_secs(20), "the running one acked", || async {
            stuck.worker.report().succeeded == 21
        })
        .await;
        assert_eq!(stuck.queue.len().await.unwrap(), N as usize - 21);
        let report = stuck.worker.shutdown().await;
        assert_eq!(handled(&stuck.seen).len(), 21, "no handler after the pause: {report:?}");
    }
}

redis_test! {
    /// A stopping worker holding values ahead while Redis is out of reach
    /// ends after its grace and one settle timeout, as one without prefetch
    /// does: its give-backs share one deadline (each alone would wait 5 s,
    /// one after the other), then the visibility timeout takes over.
    async fn a_stop_with_redis_down_does_not_wait_for_each_value_held_ahead(redis, proxy, client) {
        let direct = redis.client().await;
        let stuck = Stuck::start(&direct, &client, "ahead-down", 200, 10, |w| {
            w.prefetch(64).visibility_timeout(Duration::from_secs(600))
        })
        .await;
        stuck.holding_more_than(32).await;
        proxy.set_outage(true);
        // Over 32 held × 5 s each before; a grace of 1 s plus 5 s now.
        tokio::time::timeout(
            Duration::from_secs(60),
            stuck.worker.shutdown_within(Duration::from_secs(1)),
        )
        .await
        .expect("the stop ends while Redis is down");
        stuck.gate.close();
    }
}
