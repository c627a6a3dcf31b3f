//! Groups (issue 46, item 1): per-key order across every consumer, keys
//! side by side and round robin, hold or skip on failure, a dead consumer's
//! value back at its key's head, lost replies, the sequential mode, a
//! per-key concurrency and rate; Java never sees a grouped value.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::error::BoxError;
use delayq::groups::{GroupLimits, OnFailure};
use delayq::worker::{Permanent, RetryAfter, RetryPolicy};
use delayq::{Error, OfferOptions, StringCodec};
use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{eventually, redis_test, settled};
use parking_lot::Mutex;

const WAIT: Duration = Duration::from_secs(40);

/// What handlers saw: per key, the values in the order they started, how
/// many ran at once at most, per key and in all.
#[derive(Default)]
struct Seen {
    order: Mutex<HashMap<String, Vec<String>>>,
    running: Mutex<HashMap<String, usize>>,
    most_per_key: AtomicUsize,
    now: AtomicUsize,
    most: AtomicUsize,
    done: AtomicUsize,
}

impl Seen {
    fn key(value: &str) -> String {
        value.split('#').next().unwrap_or_default().to_owned()
    }

    fn start(&self, value: &str) {
        let key = Seen::key(value);
        self.order.lock().entry(key.clone()).or_default().push(value.to_owned());
        let mut running = self.running.lock();
        let n = running.entry(key).or_default();
        *n += 1;
        self.most_per_key.fetch_max(*n, Ordering::SeqCst);
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
    }

    fn end(&self, value: &str) {
        *self.running.lock().get_mut(&Seen::key(value)).unwrap() -= 1;
        self.now.fetch_sub(1, Ordering::SeqCst);
        self.done.fetch_add(1, Ordering::SeqCst);
    }

    fn handler(
        self: &Arc<Self>,
    ) -> impl Fn(String) -> futures_util::future::BoxFuture<'static, Result<(), BoxError>> + Send + Sync + 'static {
        let seen = self.clone();
        move |value: String| {
            let seen = seen.clone();
            Box::pin(async move {
                seen.start(&value);
                tokio::time::sleep(Duration::from_millis(fastrand::u64(1..4))).await;
                seen.end(&value);
                Ok(())
            })
        }
    }
}

async fn offer_grouped(queue: &delayq::DelayedQueue<String>, key: &str, values: impl IntoIterator<Item = String>) {
    for value in values {
        queue
            .offer_with(&value, &OfferOptions::default().group(key))
            .await
            .unwrap();
    }
}

redis_test! {
    /// 20 keys of 30 values, three clients with workers of 8 slots: each
    /// key's values start one at a time and in offer order; keys run side by
    /// side; each value runs once.
    async fn a_keys_values_run_one_at_a_time_in_order_across_clients(redis) {
        let producer = redis.client().await;
        let queue = producer.delayed_queue("groups", StringCodec).unwrap();
        for i in 0..30 {
            for k in 0..20 {
                queue.offer_with(&format!("k{k}#{i:02}"), &OfferOptions::default().group(format!("k{k}"))).await.unwrap();
            }
        }
        let status = queue.status().await.unwrap();
        assert_eq!((status.grouped_ready, status.ready), (600, 600));
        let seen = Arc::new(Seen::default());
        let mut workers = Vec::new();
        let mut clients = Vec::new();
        for _ in 0..3 {
            let client = redis.client().await;
            workers.push(client.worker("groups", StringCodec).unwrap().concurrency(8).run(seen.handler()));
            clients.push(client);
        }
        eventually(WAIT, "all handled", || async { seen.done.load(Ordering::SeqCst) == 600 }).await;
        for worker in workers {
            worker.shutdown().await;
        }
        assert_eq!(seen.most_per_key.load(Ordering::SeqCst), 1, "two values of one key at once");
        assert!(seen.most.load(Ordering::SeqCst) > 1, "keys ran one after another");
        {
            let order = seen.order.lock();
            assert_eq!(order.len(), 20);
            for (key, values) in order.iter() {
                let expected: Vec<String> = (0..30).map(|i| format!("{key}#{i:02}")).collect();
                assert_eq!(values, &expected, "{key} out of order");
            }
        }
        assert_eq!(queue.status().await.unwrap().ready, 0);
    }
}

redis_test! {
    /// One key with 400 values and a key concurrency of 4, then 20 keys of
    /// 5: round robin gives every small key its turns, so all of them end
    /// before the busy key's 200th value.
    async fn a_busy_key_does_not_starve_the_others(client) {
        let queue = client.delayed_queue("fair", StringCodec).unwrap();
        let consumers = client.reliable_queue("fair", StringCodec).unwrap();
        consumers.set_group_limits(&GroupLimits::new().concurrency(4)).await.unwrap();
        offer_grouped(&queue, "busy", (0..400).map(|i| format!("busy#{i:03}"))).await;
        for k in 0..20 {
            offer_grouped(&queue, &format!("small{k}"), (0..5).map(|i| format!("small{k}#{i}"))).await;
        }
        let seen = Arc::new(Seen::default());
        let small_done_at = Arc::new(Mutex::new(None::<usize>));
        let worker = client.worker("fair", StringCodec).unwrap().concurrency(4).run({
            let (seen, small_done_at) = (seen.clone(), small_done_at.clone());
            move |value: String| {
                let (seen, small_done_at) = (seen.clone(), small_done_at.clone());
                async move {
                    seen.start(&value);
                    seen.end(&value);
                    let order = seen.order.lock();
                    let small = order.iter().filter(|(k, _)| k.starts_with("small")).map(|(_, v)| v.len()).sum::<usize>();
                    if small == 100 {
                        let busy = order.get("busy").map_or(0, Vec::len);
                        small_done_at.lock().get_or_insert(busy);
                    }
                    Ok::<(), BoxError>(())
                }
            }
        });
        eventually(WAIT, "all handled", || async { seen.done.load(Ordering::SeqCst) == 500 }).await;
        worker.shutdown().await;
        let busy_then = small_done_at.lock().expect("the small keys ended");
        assert!(busy_then < 200, "the busy key ran {busy_then} values before the small keys ended");
        assert!(seen.most_per_key.load(Ordering::SeqCst) <= 4);
    }
}

redis_test! {
    /// Hold (the default): a failed value keeps its key until its retry
    /// ran, other keys go on. Skip: the key's next values go on, the retry
    /// rejoins the end. A dead letter frees its key.
    async fn hold_keeps_a_failing_key_skip_lets_it_go_on_a_dead_letter_frees_it(client) {
        let queue = client.delayed_queue("failing", StringCodec).unwrap();
        let consumers = client.reliable_queue("failing", StringCodec).unwrap();
        offer_grouped(&queue, "a", ["a#1", "a#2", "a#3"].map(String::from)).await;
        offer_grouped(&queue, "b", ["b#1", "b#2"].map(String::from)).await;
        offer_grouped(&queue, "d", ["d#1", "d#2"].map(String::from)).await;
        let seen = Arc::new(Seen::default());
        let failed = Arc::new(Mutex::new(Vec::<String>::new()));
        let run = |seen: Arc<Seen>, failed: Arc<Mutex<Vec<String>>>| {
            move |value: String| {
                let (seen, failed) = (seen.clone(), failed.clone());
                async move {
                    seen.start(&value);
                    seen.end(&value);
                    if (value == "a#1" || value == "c#1") && !failed.lock().contains(&value) {
                        failed.lock().push(value.clone());
                        return Err(RetryAfter::new(Duration::from_millis(500), std::io::Error::other("once")).into());
                    }
                    if value == "d#1" {
                        return Err(Permanent::new(std::io::Error::other("never")).into());
                    }
                    Ok::<(), BoxError>(())
                }
            }
        };
        let worker = client
            .worker("failing", StringCodec)
            .unwrap()
            .concurrency(4)
            .retry(RetryPolicy::fixed(Duration::from_millis(500)).max_attempts(3))
            .run(run(seen.clone(), failed.clone()));
        eventually(WAIT, "a, b and d handled", || async { seen.done.load(Ordering::SeqCst) == 8 }).await;
        worker.shutdown().await;
        {
            let order = seen.order.lock();
            assert_eq!(order["a"], ["a#1", "a#1", "a#2", "a#3"], "a#2 overtook the held a#1");
            assert_eq!(order["b"], ["b#1", "b#2"]);
            assert_eq!(order["d"], ["d#1", "d#2"], "the dead letter freed d");
        }
        assert_eq!(consumers.dead_letter_len().await.unwrap(), 1);

        // Skip: c#2 and c#3 go on while c#1 waits for its retry.
        consumers.set_group_limits(&GroupLimits::new().on_failure(OnFailure::Skip)).await.unwrap();
        offer_grouped(&queue, "c", ["c#1", "c#2", "c#3"].map(String::from)).await;
        let skip_seen = Arc::new(Seen::default());
        let worker = client
            .worker("failing", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::from_millis(500)).max_attempts(3))
            .run(run(skip_seen.clone(), failed.clone()));
        eventually(WAIT, "c handled", || async { skip_seen.done.load(Ordering::SeqCst) == 4 }).await;
        worker.shutdown().await;
        assert_eq!(skip_seen.order.lock()["c"], ["c#1", "c#2", "c#3", "c#1"]);
    }
}

redis_test! {
    /// A worker cut off while it runs a key's first value: no other value
    /// of the key runs until its visibility timeout gives it back, to the
    /// key's head; then the key runs on, in order.
    async fn a_cut_off_workers_value_goes_back_to_its_keys_head(redis, raw) {
        let producer = redis.client().await;
        let queue = producer.delayed_queue("groups-cut", StringCodec).unwrap();
        offer_grouped(&queue, "k", ["k#1", "k#2", "k#3"].map(String::from)).await;
        let proxy = FaultProxy::start(redis.port()).await;
        let doomed = redis.client_builder().url(proxy.url()).build().await.unwrap();
        let started = Arc::new(AtomicUsize::new(0));
        let _first = doomed
            .worker("groups-cut", StringCodec)
            .unwrap()
            .visibility_timeout(Duration::from_secs(1))
            .run({
                let started = started.clone();
                move |_: String| {
                    started.fetch_add(1, Ordering::SeqCst);
                    std::future::pending::<Result<(), std::io::Error>>()
                }
            });
        eventually(WAIT, "k#1 runs", || async { started.load(Ordering::SeqCst) == 1 }).await;
        proxy.black_hole();
        let seen = Arc::new(Seen::default());
        let second = producer.worker("groups-cut", StringCodec).unwrap().concurrency(3).run(seen.handler());
        eventually(WAIT, "all handled", || async { seen.done.load(Ordering::SeqCst) == 3 }).await;
        second.shutdown().await;
        assert_eq!(seen.order.lock()["k"], ["k#1", "k#2", "k#3"]);
        assert_eq!(raw.zcard("delayq_leases:{groups-cut}").await, 0);
        let state = raw.cmd("HGETALL", vec!["delayq_group_state:{groups-cut}".into()]).await;
        let text = format!("{state:?}");
        assert!(!text.contains("n:k") && !text.contains("d:"), "slots not freed: {text}");
    }
}

redis_test! {
    /// Lost replies of the scripts on the group keys (claims, acks) while two
    /// workers run: order per key holds, each value runs, every key's slot
    /// is freed.
    async fn lost_replies_keep_order_and_free_every_slot(redis, raw) {
        let producer = redis.client().await;
        let queue = producer.delayed_queue("groups-lost", StringCodec).unwrap();
        for i in 0..20 {
            for k in 0..5 {
                queue.offer_with(&format!("k{k}#{i:02}"), &OfferOptions::default().group(format!("k{k}"))).await.unwrap();
            }
        }
        let proxy = FaultProxy::start(redis.port()).await;
        let faulty = redis.client_builder().url(proxy.url()).build().await.unwrap();
        let seen = Arc::new(Seen::default());
        let a = faulty.worker("groups-lost", StringCodec).unwrap().concurrency(3).run(seen.handler());
        let b = producer.worker("groups-lost", StringCodec).unwrap().concurrency(3).run(seen.handler());
        for _ in 0..8 {
            settled(&raw, "groups-lost").await;
            proxy.arm(Fault::LoseReply, "delayq_group_ring:{groups-lost}");
            let fired = proxy.fired();
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                while proxy.fired() == fired {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            })
            .await;
        }
        eventually(WAIT, "all handled", || async { seen.done.load(Ordering::SeqCst) >= 100 && queue.status().await.unwrap().ready == 0 && raw.zcard("delayq_leases:{groups-lost}").await == 0 }).await;
        a.shutdown().await;
        b.shutdown().await;
        assert!(proxy.fired() >= 1);
        assert_eq!(seen.most_per_key.load(Ordering::SeqCst), 1);
        for (key, values) in seen.order.lock().iter() {
            // A value whose ack was lost may run again, right after itself.
            let mut distinct = values.clone();
            distinct.dedup();
            let expected: Vec<String> = (0..20).map(|i| format!("{key}#{i:02}")).collect();
            assert_eq!(distinct, expected, "{key}");
        }
        let state = raw.cmd("HGETALL", vec!["delayq_group_state:{groups-lost}".into()]).await;
        let text = format!("{state:?}");
        assert!(!text.contains("\"n:") && !text.contains("d:"), "slots not freed: {text}");
    }
}

redis_test! {
    /// The sequential mode: one value at a time, in order, across two
    /// clients, beside plain values that run in parallel.
    async fn sequential_values_run_one_at_a_time_across_clients(redis) {
        let producer = redis.client().await;
        let queue = producer.delayed_queue("sequential", StringCodec).unwrap();
        for i in 0..40 {
            queue.offer_with(&format!("#{i:02}"), &OfferOptions::default().sequential()).await.unwrap();
        }
        let seen = Arc::new(Seen::default());
        let (c1, c2) = (redis.client().await, redis.client().await);
        let w1 = c1.worker("sequential", StringCodec).unwrap().concurrency(4).run(seen.handler());
        let w2 = c2.worker("sequential", StringCodec).unwrap().concurrency(4).run(seen.handler());
        eventually(WAIT, "all handled", || async { seen.done.load(Ordering::SeqCst) == 40 }).await;
        w1.shutdown().await;
        w2.shutdown().await;
        assert_eq!(seen.most.load(Ordering::SeqCst), 1);
        let expected: Vec<String> = (0..40).map(|i| format!("#{i:02}")).collect();
        assert_eq!(seen.order.lock()[""], expected);
    }
}

redis_test! {
    /// Java's view: a plain (Redisson) take sees only the plain value; the
    /// grouped ones are in delayq's keys, counted by the status, taken by a
    /// reliable take. A grouped value with a priority, a TTL or headers is
    /// refused before anything is written.
    async fn plain_takes_never_see_grouped_values(client, raw) {
        let queue = client.delayed_queue("mixed", StringCodec).unwrap();
        queue.offer_with(&"g1".into(), &OfferOptions::default().group("g")).await.unwrap();
        queue.offer(&"plain".into(), Duration::ZERO).await.unwrap();
        queue.offer_with(&"later".into(), &OfferOptions::after(Duration::from_secs(3600)).group("g")).await.unwrap();
        for bad in [
            OfferOptions::default().group("g").ttl(Duration::from_secs(60)),
            OfferOptions::default().group("g").header("a", "b"),
            OfferOptions::default().group("g").priority(delayq::Priority::new(3).unwrap()),
            OfferOptions::default().group("x".repeat(1025)),
        ] {
            assert!(matches!(queue.offer_with(&"bad".into(), &bad).await, Err(Error::InvalidArgument(_))), "{bad:?}");
        }
        queue.transfer_now().await.unwrap();
        let status = queue.status().await.unwrap();
        assert_eq!((status.grouped_ready, status.grouped_pending, status.ready, status.pending), (1, 1, 2, 1));
        assert_eq!(raw.llen("mixed").await, 1, "Redisson's list holds the plain value only");
        assert_eq!(raw.zcard("redisson_delay_queue_timeout:{mixed}").await, 0);
        let plain = client.blocking_queue("mixed", StringCodec).unwrap();
        assert_eq!(plain.take_timeout(Duration::from_millis(200)).await.unwrap().as_deref(), Some("plain"));
        assert_eq!(plain.take_timeout(Duration::from_millis(200)).await.unwrap(), None);
        let reliable = client.reliable_queue("mixed", StringCodec).unwrap();
        let delivery = reliable.take().await.unwrap();
        assert_eq!(delivery.value(), "g1");
        delivery.ack().await.unwrap();
    }
}

redis_test! {
    /// A key's rate: 10 values under 5 a second start over at least about a
    /// second (5 at once, then one every 200 ms); a key concurrency of 3
    /// runs up to 3 of a key at once.
    async fn a_keys_rate_and_concurrency_hold(client) {
        let queue = client.delayed_queue("rated", StringCodec).unwrap();
        let consumers = client.reliable_queue("rated", StringCodec).unwrap();
        consumers
            .set_group_limits(&GroupLimits::new().concurrency(3).rate(5, Duration::from_secs(1)))
            .await
            .unwrap();
        assert_eq!(consumers.group_limits().await.unwrap().rate_limit(), Some((5, Duration::from_secs(1))));
        offer_grouped(&queue, "r", (0..10).map(|i| format!("r#{i}"))).await;
        let seen = Arc::new(Seen::default());
        let started = tokio::time::Instant::now();
        let worker = client.worker("rated", StringCodec).unwrap().concurrency(8).run({
            let seen = seen.clone();
            move |value: String| {
                let seen = seen.clone();
                async move {
                    seen.start(&value);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    seen.end(&value);
                    Ok::<(), BoxError>(())
                }
            }
        });
        eventually(WAIT, "all handled", || async { seen.done.load(Ordering::SeqCst) == 10 }).await;
        worker.shutdown().await;
        // The server spaces the last five 200 ms apart: a floor, not a speed.
        assert!(started.elapsed() >= Duration::from_millis(800), "{:?}", started.elapsed());
        assert!(seen.most_per_key.load(Ordering::SeqCst) <= 3);
    }
}

/// A Redis restart (its AOF kept) while a worker runs grouped values, a
/// batch and a cancelled job: after it, every grouped value runs in order
/// per key (a value whose ack the restart lost may run again, right after
/// itself), the batch completes once, and the cancelled job never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_batches_and_cancels_hold_across_a_redis_restart() {
    delayq_test_support::deadline(async {
        let mut redis =
            delayq_test_support::RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]).await;
        let producer = redis.client().await;
        let queue = producer.delayed_queue("restart-groups", StringCodec).unwrap();
        queue.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
        for i in 0..40 {
            for k in 0..4 {
                queue
                    .offer_with(&format!("k{k}#{i:02}"), &OfferOptions::default().group(format!("k{k}")))
                    .await
                    .unwrap();
            }
        }
        let batch = queue
            .offer_batch(
                (0..40).map(|i| (format!("b#{i:02}"), Duration::ZERO)),
                &delayq::batch::BatchOptions::new().on_complete("restart-groups-done", serde_json::json!({})),
            )
            .await
            .unwrap();
        queue
            .offer_with_id("doomed", &"never#00".to_owned(), Duration::from_secs(2))
            .await
            .unwrap();
        let consumers = producer.reliable_queue("restart-groups", StringCodec).unwrap();
        assert_eq!(
            consumers.cancel_job("doomed").await.unwrap(),
            delayq::jobs::CancelOutcome::Pending
        );
        queue
            .offer_with_id("late-cancel", &"late#00".to_owned(), Duration::ZERO)
            .await
            .unwrap();
        queue.transfer_now().await.unwrap();
        assert!(matches!(
            consumers.cancel_job("late-cancel").await.unwrap(),
            delayq::jobs::CancelOutcome::Queued { .. }
        ));
        let seen = Arc::new(Seen::default());
        let consumer = redis.client().await;
        let worker = consumer
            .worker("restart-groups", StringCodec)
            .unwrap()
            .concurrency(4)
            .visibility_timeout(Duration::from_secs(2))
            .run({
                let seen = seen.clone();
                move |value: String| {
                    let seen = seen.clone();
                    async move {
                        seen.start(&value);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        seen.end(&value);
                        Ok::<(), BoxError>(())
                    }
                }
            });
        eventually(WAIT, "a quarter handled", || async {
            seen.done.load(Ordering::SeqCst) >= 50
        })
        .await;
        redis.restart().await;
        let done = consumer
            .reliable_queue("restart-groups-done", StringCodec)
            .unwrap()
            .with_transfer();
        eventually(
            Duration::from_secs(60),
            "everything handled, the batch delivered",
            || async {
                let distinct: usize = seen
                    .order
                    .lock()
                    .values()
                    .map(|v| {
                        let mut v = v.clone();
                        v.dedup();
                        v.len()
                    })
                    .sum();
                distinct == 200 && done.len().await.unwrap_or(0) == 1
            },
        )
        .await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        worker.shutdown().await;
        assert_eq!(done.len().await.unwrap(), 1, "one completion");
        let status = consumers.batch(&batch).await.unwrap().unwrap();
        assert_eq!((status.handled, status.dead_lettered), (40, 0));
        let order = seen.order.lock();
        assert!(
            !order.contains_key("never") && !order.contains_key("late"),
            "a cancelled job ran"
        );
        for k in 0..4 {
            let key = format!("k{k}");
            let mut values = order[&key].clone();
            values.dedup();
            let expected: Vec<String> = (0..40).map(|i| format!("{key}#{i:02}")).collect();
            assert_eq!(values, expected, "{key}");
        }
        assert_eq!(seen.most_per_key.load(Ordering::SeqCst).min(1), 1);
    })
    .await;
}

redis_test! {
    /// Single takes on a queue with grouped and plain values take from each
    /// in turn: neither starves the other.
    async fn single_takes_alternate_between_groups_and_the_list(client, raw) {
        let queue = client.delayed_queue("alternate", StringCodec).unwrap();
        for i in 0..10 {
            queue.offer_with(&format!("k{i}#0"), &OfferOptions::default().group(format!("k{i}"))).await.unwrap();
            queue.offer(&format!("plain{i}"), Duration::ZERO).await.unwrap();
        }
        queue.transfer_now().await.unwrap();
        eventually(WAIT, "the plain values listed", || async { raw.llen("alternate").await == 10 }).await;
        let consumer = client.reliable_queue("alternate", StringCodec).unwrap();
        // The first take may come before the client has seen the groups.
        let mut taken = Vec::new();
        for _ in 0..12 {
            let delivery = consumer.take().await.unwrap();
            taken.push(delivery.value().clone());
            delivery.ack().await.unwrap();
        }
        let plain = taken.iter().filter(|v| v.starts_with("plain")).count();
        assert!((4..=8).contains(&plain), "{taken:?}");
    }
}

redis_test! {
    /// One key's values through a worker of one slot: each next value is
    /// claimed when the ack of the one before lands (a settle of its own
    /// wakes its waiting take), not a take's round later: 40 values well
    /// under the 40 rounds of a second a value would take.
    async fn a_keys_next_value_follows_its_ack_at_once(client) {
        let queue = client.delayed_queue("one-key", StringCodec).unwrap();
        for i in 0..40 {
            queue.offer_with(&format!("#{i:02}"), &OfferOptions::default().sequential()).await.unwrap();
        }
        let seen = Arc::new(Seen::default());
        let worker = client.worker("one-key", StringCodec).unwrap().run(seen.handler());
        // A ceiling, not a speed (the machine may be loaded): a round a
        // value would be 40 s.
        eventually(Duration::from_secs(30), "all handled", || async { seen.done.load(Ordering::SeqCst) == 40 }).await;
        worker.shutdown().await;
        let expected: Vec<String> = (0..40).map(|i| format!("#{i:02}")).collect();
        assert_eq!(seen.order.lock()[""], expected);
    }
}
