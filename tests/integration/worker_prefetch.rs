//! A `Worker` claims values ahead of its free slots while its handlers are
//! quick (`Worker::prefetch`, src/worker/prefetch.rs): the values it holds
//! go back to the head, uncounted, when they wait too long, when the queue
//! is paused and when the worker stops (also with Redis out of reach), and
//! `prefetch(0)` holds only what its slots run. Each test runs a worker of
//! one slot whose first handlers are quick and the next one stuck.

use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::events::EventKind;
use delayq::fred::interfaces::ClientLike;
use delayq::fred::types::Value;
use delayq::worker::WorkerHandle;
use delayq::{BlockingQueue, Client, LongCodec, ReliableQueue, Worker};
use parking_lot::Mutex;
use tokio::sync::Semaphore;

use delayq_test_support::fault_proxy::Fault;
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
        // The worker's next take moves a value out and, finding the queue
        // paused, back: the count is whole again once that is done.
        eventually(Duration::from_secs(20), "every other value ready", || async {
            stuck.queue.len().await.unwrap() == N as usize - 21
        })
        .await;
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

/// A one-slot worker holding up to 64 values ahead, whose handlers take
/// 15 ms each, on a queue of values `0..n`: it claims again every few
/// handlers, so claims are on their way whenever the queue is paused or
/// the worker stops.
struct Busy {
    seen: Arc<Mutex<Vec<i64>>>,
    worker: WorkerHandle,
    /// The queue, seen from a client straight to Redis.
    queue: ReliableQueue<i64>,
    list: BlockingQueue<i64>,
}

impl Busy {
    async fn start(direct: &Client, client: &Client, name: &str, n: i64) -> Busy {
        direct
            .blocking_queue(name, LongCodec)
            .unwrap()
            .offer_all(0..n)
            .await
            .unwrap();
        let seen: Arc<Mutex<Vec<i64>>> = Arc::default();
        let worker = client
            .worker(name, LongCodec)
            .unwrap()
            .concurrency(1)
            .prefetch(64)
            .visibility_timeout(Duration::from_secs(600))
            .run({
                let seen = seen.clone();
                move |value: i64| {
                    seen.lock().push(value);
                    async {
                        tokio::time::sleep(Duration::from_millis(15)).await;
                        Ok::<_, BoxError>(())
                    }
                }
            });
        let queue = direct.reliable_queue(name, LongCodec).unwrap();
        let list = direct.blocking_queue(name, LongCodec).unwrap();
        Busy {
            seen,
            worker,
            queue,
            list,
        }
    }

    async fn handled_at_least(&self, n: usize) {
        eventually(Duration::from_secs(20), "values handled", || async {
            self.seen.lock().len() >= n
        })
        .await;
    }

    /// Waits until nothing is held (everything handled or given back) and
    /// returns the queue's values, head first, beside what the handlers saw.
    async fn settled(&self, n: i64) -> (Vec<i64>, Vec<i64>) {
        eventually(Duration::from_secs(20), "nothing held", || async {
            self.queue.in_flight().await.unwrap() == 0
                && self.queue.len().await.unwrap() + self.seen.lock().len() == n as usize
        })
        .await;
        let left = self.list.read_all().await.unwrap();
        (left, handled(&self.seen))
    }
}

/// The values `0..n` no handler saw, in their order.
fn not_handled(handled: &[i64], n: i64) -> Vec<i64> {
    (0..n).filter(|v| !handled.contains(v)).collect()
}

redis_test! {
    /// A pause seen while claims are on their way: every value held ahead,
    /// those the late claims bring included, goes back to the head in one
    /// release, so the queue reads in its old order again.
    async fn values_held_ahead_go_back_in_claim_order_when_the_queue_is_paused(client) {
        const N: i64 = 100;
        for round in 0..3 {
            let name = format!("ordered-pause-{round}");
            let busy = Busy::start(&client, &client, &name, N).await;
            busy.handled_at_least(20).await;
            let delayed = client.delayed_queue(&name, LongCodec).unwrap().without_transfer();
            delayed.pause().await.unwrap();
            let (left, handled) = busy.settled(N).await;
            assert_eq!(
                left,
                not_handled(&handled, N),
                "round {round}: the head is in claim order"
            );
            busy.worker.shutdown().await;
        }
    }
}

redis_test! {
    /// As for a pause, a worker that stops while claims are on their way gives
    /// every value it holds ahead back in one release, in claim order.
    async fn values_held_ahead_go_back_in_claim_order_when_the_worker_stops(client) {
        const N: i64 = 100;
        for round in 0..3 {
            let name = format!("ordered-stop-{round}");
            let busy = Busy::start(&client, &client, &name, N).await;
            busy.handled_at_least(20).await;
            busy.worker.stop();
            let (left, handled) = busy.settled(N).await;
            assert_eq!(
                left,
                not_handled(&handled, N),
                "round {round}: the head is in claim order"
            );
            busy.worker.join().await;
        }
    }
}

/// What makes a worker give back the values it holds ahead.
#[derive(Debug, Clone, Copy)]
enum GiveBack {
    Pause,
    Stop,
    /// They wait a quarter of the visibility timeout (here 5 s).
    Stale,
}

redis_test! {
    /// Values held ahead go back in one release, in claim order, so that a
    /// consumer taking at the same time takes them in that order: here a plain
    /// consumer (as a Java one, it takes from a paused queue too) blocked on the
    /// emptied queue gets the first value claimed, not the last, and the rest
    /// read in order behind it.
    async fn a_consumer_taking_meanwhile_gets_values_given_back_in_claim_order(raw, client) {
        const N: i64 = 100;
        const QUICK: usize = 20;
        for why in [GiveBack::Pause, GiveBack::Stop, GiveBack::Stale] {
            let name = format!("taken-meanwhile-{why:?}");
            let visibility = match why {
                GiveBack::Stale => Duration::from_secs(20),
                _ => Duration::from_secs(600),
            };
            let stuck = Stuck::start(&client, &client, &name, N, QUICK, |w| w.visibility_timeout(visibility)).await;
            stuck.holding_more_than(1).await;
            eventually(Duration::from_secs(20), "every value held", || async {
                stuck.queue.len().await.unwrap() == 0
            })
            .await;
            let blocked = || async {
                raw.info_field("clients", "blocked_clients")
                    .await
                    .parse::<i64>()
                    .unwrap()
            };
            let before = blocked().await;
            let consumer = client.blocking_queue(&name, LongCodec).unwrap();
            let taker = tokio::spawn({
                let consumer = consumer.clone();
                async move { consumer.take().await.unwrap() }
            });
            eventually(Duration::from_secs(20), "the consumer waits", || async {
                blocked().await > before
            })
            .await;
            match why {
                GiveBack::Pause => client.delayed_queue(&name, LongCodec).unwrap().pause().await.unwrap(),
                GiveBack::Stop => stuck.worker.stop(),
                GiveBack::Stale => {}
            }
            let first = taker.await.unwrap();
            stuck.holding_only_the_running_one().await;
            let handled = stuck.handled();
            let expected = not_handled(&handled, N);
            assert_eq!(first, expected[0], "{why:?}: the first value claimed is taken first");
            assert_eq!(
                consumer.read_all().await.unwrap(),
                expected[1..],
                "{why:?}: the rest in order"
            );
            stuck.gate.close();
            stuck.worker.shutdown().await;
        }
    }
}

redis_test! {
    /// The release of values held ahead is resent when its reply is lost: the
    /// resend answers as its first run (from its lane's record) and moves
    /// nothing twice, so each value is in the queue once, in claim order,
    /// uncounted (with `max_attempts(1)` a counted one would be a dead letter),
    /// and one `released` event says so.
    async fn a_release_whose_reply_is_lost_gives_each_value_back_once_in_order(redis, proxy, client, raw) {
        const N: i64 = 100;
        let direct = redis.client().await;
        let sha = raw.load_script(include_str!("../../lua/release_unhandled.lua")).await;
        direct
            .enable_events(&delayq::QueueKeys::new("lost-release").unwrap(), 10_000)
            .await
            .unwrap();
        let stuck = Stuck::start(&direct, &client, "lost-release", N, 20, |w| {
            w.visibility_timeout(Duration::from_secs(600))
                .retry(delayq::worker::RetryPolicy::default().max_attempts(1))
        })
        .await;
        stuck.holding_more_than(1).await;
        proxy.arm(Fault::LoseReply, &sha);
        let delayed = direct
            .delayed_queue("lost-release", LongCodec)
            .unwrap()
            .without_transfer();
        delayed.pause().await.unwrap();
        stuck.holding_only_the_running_one().await;
        assert_eq!(proxy.fired(), 1, "a release ran and its reply was lost");
        let expected = not_handled(&stuck.handled(), N);
        let list = direct.blocking_queue("lost-release", LongCodec).unwrap();
        assert_eq!(list.read_all().await.unwrap(), expected, "each once, in claim order");
        let released: Vec<EventKind> = (direct
            .newest_events(&delayq::QueueKeys::new("lost-release").unwrap(), 10_000)
            .await
            .unwrap()
            .into_iter())
        .map(|event| event.kind)
        .filter(|kind| kind.name() == "released")
        .collect();
        assert!(
            matches!(released[..], [EventKind::Released { count, .. }] if count == expected.len() as u64),
            "one release, one event (the resend wrote none): {released:?}"
        );
        stuck.gate.close();
        delayed.resume().await.unwrap();
        eventually(Duration::from_secs(30), "all handled", || async {
            stuck.worker.report().succeeded == N as u64
        })
        .await;
        let report = stuck.worker.shutdown().await;
        each_once(&handled(&stuck.seen), N);
        assert_eq!(report.dead_lettered, 0, "uncounted: {report:?}");
    }
}

redis_test! {
    /// `release_unhandled.lua` run by hand: it gives deliveries back to the head
    /// in the order given; run again under the same lane run (fred's resend
    /// after a lost reply) it answers as its first run and pushes nothing
    /// twice; a new run finds them gone. A call over its bound is refused
    /// before anything changes.
    async fn a_release_run_again_answers_as_its_first_run_and_moves_nothing_twice(raw, client) {
        let list = client.blocking_queue("resent-release", LongCodec).unwrap();
        list.offer_all(0..4i64).await.unwrap();
        let queue = client.reliable_queue("resent-release", LongCodec).unwrap();
        // Held to the end (a delivery dropped gives its value back).
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(queue.take().await.unwrap());
        }
        // Members in the order taken: 0, 1, 2.
        let leases = raw.zrange(queue.keys().leases()).await;
        let members: Vec<Value> = (held.iter())
            .map(|d| {
                let (member, _) = (leases.iter()).find(|(m, _)| m.ends_with(d.raw())).expect("its member");
                Value::Bytes(member.clone())
            })
            .collect();
        let sha = raw.load_script(include_str!("../../lua/release_unhandled.lua")).await;
        let keys = queue.keys();
        let release = |run: i64, members: &[Value]| {
            let mut args: Vec<Value> = vec![sha.as_str().into(), 9.into()];
            for key in [
                keys.leases().to_owned(),
                keys.destination().to_owned(),
                keys.counts().to_owned(),
                keys.counts_expiry().to_owned(),
                keys.traces(),
                keys.traces_expiry(),
                "delayq_runs:{resent-release}:lane1".to_owned(),
                keys.events_config(),
                keys.events(),
            ] {
                args.push(key.into());
            }
            args.extend([run.into(), 3_600_000.into()]);
            for member in members {
                args.extend([member.clone(), "".into()]);
            }
            args
        };
        let ints = |reply: Value| match reply {
            Value::Array(values) => values.into_iter().map(|v| v.as_i64().unwrap()).collect::<Vec<_>>(),
            other => panic!("release_unhandled answers an array: {other:?}"),
        };
        let too_many: Vec<Value> = std::iter::repeat_n(members[0].clone(), 257).collect();
        let refused = raw
            .client
            .custom::<Value, Value>(
                delayq::fred::types::CustomCommand::new_static(
                    "EVALSHA",
                    delayq::fred::types::ClusterHash::Random,
                    false,
                ),
                release(1, &too_many),
            )
            .await;
        assert!(refused.is_err(), "over the bound: {refused:?}");
        assert_eq!(raw.zcard(keys.leases()).await, 3, "nothing changed");
        assert_eq!(ints(raw.cmd("EVALSHA", release(1, &members)).await), [1, 1, 1]);
        assert_eq!(
            list.read_all().await.unwrap(),
            [0, 1, 2, 3],
            "in the order given, at the head"
        );
        assert_eq!(
            ints(raw.cmd("EVALSHA", release(1, &members)).await),
            [1, 1, 1],
            "a resend answers as the first run"
        );
        assert_eq!(
            ints(raw.cmd("EVALSHA", release(2, &members)).await),
            [0, 0, 0],
            "a new run finds them gone"
        );
        assert_eq!(list.read_all().await.unwrap(), [0, 1, 2, 3], "nothing pushed twice");
    }
}
