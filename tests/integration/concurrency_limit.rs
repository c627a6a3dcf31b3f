//! A queue's fleet-wide concurrency limit (`Limits::concurrency`): at most
//! N deliveries in flight across every process, under lost replies and
//! killed workers, and takes of a limited queue never move a value out of
//! the list for a claim that would refuse it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::interfaces::LuaInterface;
use delayq::limits::Limits;
use delayq::{Error, LongCodec, StringCodec};
use delayq_test_support::fault_proxy::{Fault, FaultProxy};
use delayq_test_support::{deadline, eventually, redis_test, RawRedis, RedisServer};
use parking_lot::Mutex;

/// Handlers shared by every worker of a test: which values ran, and the
/// most that ran at once across all of them.
#[derive(Clone, Default)]
struct Fleet {
    handled: Arc<Mutex<Vec<i64>>>,
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl Fleet {
    fn handler(
        &self,
        busy: Duration,
    ) -> impl Fn(i64) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), std::io::Error>> + Send>>
           + Send
           + Sync
           + 'static {
        let fleet = self.clone();
        move |value| {
            let fleet = fleet.clone();
            Box::pin(async move {
                let running = fleet.running.fetch_add(1, Ordering::SeqCst) + 1;
                fleet.most.fetch_max(running, Ordering::SeqCst);
                tokio::time::sleep(busy).await;
                fleet.handled.lock().push(value);
                fleet.running.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            })
        }
    }

    fn handled_sorted(&self) -> Vec<i64> {
        let mut handled = self.handled.lock().clone();
        handled.sort_unstable();
        handled
    }
}

/// The live leases of a lease set (visibility deadline ahead of the
/// server's clock): what the limit counts, read as the claim scripts do.
async fn live_leases(raw: &RawRedis, key: &str) -> Result<usize, delayq::fred::error::Error> {
    const LIVE: &str = "local t = redis.call('time') \
        return redis.call('zcount', KEYS[1], '(' .. (t[1] * 1000 + math.floor(t[2] / 1000)), '+inf')";
    raw.client.eval(LIVE, vec![key.to_owned()], Vec::<String>::new()).await
}

/// Samples the live leases every few milliseconds until stopped; the
/// largest number it saw.
struct LeaseSampler {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<usize>,
}

impl LeaseSampler {
    fn start(raw: RawRedis, queue: &str) -> LeaseSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let key = format!("delayq_leases:{{{queue}}}");
        let task = tokio::spawn({
            let stop = stop.clone();
            async move {
                let mut most = 0;
                while !stop.load(Ordering::SeqCst) {
                    // Nothing to read while the server restarts.
                    most = most.max(live_leases(&raw, &key).await.unwrap_or(0));
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                most
            }
        });
        LeaseSampler { stop, task }
    }

    async fn most(self) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.unwrap()
    }
}

redis_test! {
    /// Three processes' workers of eight slots each over a queue limited to
    /// five: never more than five values in flight or handled at once,
    /// every value handled once.
    async fn a_fleet_limit_holds_every_worker_of_every_client_to_n(redis, raw) {
        const N: i64 = 400;
        let producer = redis.client().await;
        let queue = producer.delayed_queue("fleet", LongCodec).unwrap();
        queue.set_limits(&Limits::none().concurrency(5)).await.unwrap();
        client_offers(&producer, "fleet", N).await;
        let sampler = LeaseSampler::start(redis.raw().await, "fleet");
        let fleet = Fleet::default();
        let mut workers = Vec::new();
        for _ in 0..3 {
            let client = redis.client().await;
            workers.push((
                client.clone(),
                client.worker("fleet", LongCodec).unwrap().concurrency(8).run(fleet.handler(Duration::from_millis(3))),
            ));
        }
        eventually(Duration::from_secs(60), "every value handled", || async {
            fleet.handled.lock().len() >= N as usize
        })
        .await;
        let mut succeeded = 0;
        for (_, worker) in workers {
            succeeded += worker.shutdown().await.succeeded;
        }
        assert_eq!(fleet.handled_sorted(), (0..N).collect::<Vec<_>>(), "each value handled once");
        assert_eq!(succeeded, N as u64);
        let most = fleet.most.load(Ordering::SeqCst);
        assert!(most <= 5, "at most 5 handlers at once across the fleet, saw {most}");
        assert!(most > 1, "handlers do run side by side");
        let leases = sampler.most().await;
        assert!(leases <= 5, "at most 5 leases at once, saw {leases}");
        assert_eq!(raw.zcard("delayq_leases:{fleet}").await, 0);
    }
}

redis_test! {
    /// Claims and acks whose replies are lost (a claim is sent once: its
    /// deliveries are found by id and given back uncounted) never take the
    /// fleet past its limit, and every value is handled once.
    async fn lost_replies_never_take_the_fleet_past_its_limit(redis, proxy, client, raw) {
        const N: i64 = 300;
        let queue = client.delayed_queue("lost-limit", LongCodec).unwrap();
        queue.set_limits(&Limits::none().concurrency(3)).await.unwrap();
        client_offers(&client, "lost-limit", N).await;
        let sampler = LeaseSampler::start(redis.raw().await, "lost-limit");
        let fleet = Fleet::default();
        let workers: Vec<_> = (0..2)
            .map(|_| {
                client
                    .worker("lost-limit", LongCodec)
                    .unwrap()
                    .concurrency(4)
                    .run(fleet.handler(Duration::from_millis(2)))
            })
            .collect();
        // Each arm loses the next reply of a script on the queue's leases:
        // claims and acks alike.
        for _ in 0..12 {
            proxy.arm(Fault::LoseReply, "delayq_leases:{lost-limit}");
            tokio::time::sleep(Duration::from_millis(40)).await;
        }
        eventually(Duration::from_secs(60), "every value handled", || async {
            fleet.handled.lock().len() >= N as usize
        })
        .await;
        for worker in workers {
            worker.shutdown().await;
        }
        assert!(proxy.fired() > 0, "replies were lost");
        assert_eq!(fleet.handled_sorted(), (0..N).collect::<Vec<_>>(), "each value handled once");
        let leases = sampler.most().await;
        assert!(leases <= 3, "at most 3 leases at once, saw {leases}");
        assert!(fleet.most.load(Ordering::SeqCst) <= 3);
        assert_eq!(raw.zcard("delayq_leases:{lost-limit}").await, 0);
        assert_eq!(raw.llen("delayq_dead_letter:{lost-limit}").await, 0, "no value dead-lettered");
    }
}

redis_test! {
    /// A worker whose process is cut off holds its two slots of a limit of
    /// two until their visibility timeout ends; then another worker handles
    /// the values (once a reaper returns the cut-off worker's). It never
    /// handles one while the cut-off worker's leases are live.
    async fn a_cut_off_workers_slots_come_back_after_its_visibility_timeout(redis, raw) {
        let producer = redis.client().await;
        let queue = producer.delayed_queue("cut-off", StringCodec).unwrap();
        queue.set_limits(&Limits::none().concurrency(2)).await.unwrap();
        let ready = producer.blocking_queue("cut-off", StringCodec).unwrap();
        ready.offer_all((0..6).map(|i| format!("v{i}"))).await.unwrap();
        let proxy = FaultProxy::start(redis.port()).await;
        let doomed = redis.client_builder().url(proxy.url()).build().await.unwrap();
        let stuck: Arc<Mutex<Vec<String>>> = Arc::default();
        let first = doomed
            .worker("cut-off", StringCodec)
            .unwrap()
            .concurrency(2)
            .visibility_timeout(Duration::from_secs(2))
            .run({
                let stuck = stuck.clone();
                move |value: String| {
                    stuck.lock().push(value);
                    std::future::pending::<Result<(), std::io::Error>>()
                }
            });
        eventually(Duration::from_secs(10), "the first worker holds two", || async {
            stuck.lock().len() == 2
        })
        .await;
        proxy.black_hole();
        // The cut-off worker's two leases, by member (id and value): the
        // same values claimed again later have other members.
        let held: Vec<bytes::Bytes> = raw.zrange("delayq_leases:{cut-off}").await.into_iter().map(|(m, _)| m).collect();
        assert_eq!(held.len(), 2);
        let handled: Arc<Mutex<Vec<String>>> = Arc::default();
        let rescuer = redis.client().await;
        let second = rescuer.worker("cut-off", StringCodec).unwrap().concurrency(4).run({
            let handled = handled.clone();
            move |value: String| {
                handled.lock().push(value);
                async { Ok::<(), std::io::Error>(()) }
            }
        });
        let mut waited_for_room = false;
        loop {
            let count = handled.lock().len();
            let members = raw.zrange("delayq_leases:{cut-off}").await;
            // Read after the leases: a deadline past this was live when read.
            let now = delayq_test_support::now_ms();
            let live: Vec<_> = members.iter().filter(|(_, deadline)| *deadline > now).collect();
            assert!(live.len() <= 2, "at most 2 live leases, saw {}", live.len());
            if live.iter().filter(|(m, _)| held.contains(m)).count() == 2 {
                // Both of the cut-off worker's leases were live after the
                // count was read: the second worker had no room, and had
                // handled nothing.
                assert_eq!(count, 0, "handled while the limit was full");
                waited_for_room = true;
            }
            if count == 6 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(waited_for_room, "the second worker started while the first held the limit");
        let mut all = handled.lock().clone();
        all.sort();
        assert_eq!(all, (0..6).map(|i| format!("v{i}")).collect::<Vec<_>>());
        second.shutdown().await;
        drop(first);
        assert_eq!(raw.zcard("delayq_leases:{cut-off}").await, 0);
    }
}

redis_test! {
    /// A take of a queue at its limit waits without moving anything: no
    /// value goes to the staging list, the list (what Java reads) stays as
    /// it is, and the take delivers the next value once the held one is
    /// acked.
    async fn a_take_at_the_limit_waits_without_moving_a_value(redis, raw) {
        let holder = redis.client().await;
        let ready = holder.blocking_queue("held", StringCodec).unwrap();
        ready.offer_all(["a", "b", "c"].map(String::from)).await.unwrap();
        let queue = holder.delayed_queue("held", StringCodec).unwrap();
        queue.set_limits(&Limits::none().concurrency(1)).await.unwrap();
        let first = holder.reliable_queue("held", StringCodec).unwrap().take().await.unwrap();
        assert_eq!(first.value(), "a");
        let waiter = redis.client().await;
        let reliable = waiter.reliable_queue("held", StringCodec).unwrap();
        let monitor = redis.monitor().await;
        // Waits its whole timeout: the limit has no room.
        let none = reliable.take_timeout(Duration::from_millis(600)).await.unwrap();
        assert!(none.is_none());
        assert_eq!(raw.lrange("held").await, vec!["b", "c"]);
        let staged: Vec<_> = monitor
            .entries()
            .await
            .into_iter()
            .filter(|e| e.args.iter().any(|a| a.starts_with(b"delayq_staging:")) && !e.from_lua)
            .map(|e| e.name())
            .collect();
        assert!(
            staged.is_empty(),
            "{} commands moved values to the staging list, first {:?}",
            staged.len(),
            &staged[..staged.len().min(6)]
        );
        // Room again: the waiting take delivers the next value.
        let (next, ()) = tokio::join!(reliable.take_timeout(Duration::from_secs(10)), async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(first.ack().await.unwrap());
        });
        let next = next.unwrap().expect("delivered once the first was acked");
        assert_eq!(next.value(), "b");
        assert!(next.ack().await.unwrap());
        // take_many is held to the limit too: one at most.
        let many = reliable.take_many(10, Duration::from_secs(5)).await.unwrap();
        assert_eq!(many.len(), 1);
        assert_eq!(raw.zcard("delayq_leases:{held}").await, 1);
    }
}

redis_test! {
    /// A limit set while a take already waits (this client's look is up
    /// to a second old): the claim refuses, the value goes back to the
    /// head in its place, and it is delivered once there is room.
    async fn a_limit_set_under_a_waiting_take_puts_the_value_back_in_order(redis, raw) {
        let client = redis.client().await;
        let reliable = client.reliable_queue("late-limit", StringCodec).unwrap();
        let queue = client.delayed_queue("late-limit", StringCodec).unwrap();
        let holder = redis.client().await;
        let ready = holder.blocking_queue("late-limit", StringCodec).unwrap();
        ready.offer(&"held".to_owned()).await.unwrap();
        let held = holder.reliable_queue("late-limit", StringCodec).unwrap().take().await.unwrap();
        // The waiting take looks for a limit first (none yet), then blocks.
        let waiting = tokio::spawn(async move { reliable.take_timeout(Duration::from_secs(20)).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
        queue.set_limits(&Limits::none().concurrency(1)).await.unwrap();
        ready.offer_all(["x", "y"].map(String::from)).await.unwrap();
        // The take moved "x" before it knew; its claim refused; "x" is back
        // at the head, before "y".
        eventually(Duration::from_secs(5), "x back at the head", || async {
            raw.lrange("late-limit").await == vec!["x", "y"]
        })
        .await;
        assert_eq!(raw.llen("delayq_staging:{late-limit}").await, 0);
        assert!(held.ack().await.unwrap());
        let next = waiting.await.unwrap().unwrap().expect("delivered once there was room");
        assert_eq!(next.value(), "x");
        assert!(next.ack().await.unwrap());
    }
}

/// A Redis restart (its AOF kept) while workers run under a limit: the
/// limit stands after it, no more than N are in flight before, during
/// or after, and every value is handled (at least once: an ack the
/// restart lost is a value delivered again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_holds_across_a_redis_restart() {
    deadline(async {
        const N: i64 = 200;
        let mut redis = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]).await;
        let producer = redis.client().await;
        let queue = producer.delayed_queue("restarted", LongCodec).unwrap();
        queue.set_limits(&Limits::none().concurrency(3)).await.unwrap();
        client_offers(&producer, "restarted", N).await;
        let sampler = LeaseSampler::start(redis.raw().await, "restarted");
        let fleet = Fleet::default();
        let consumer = redis.client().await;
        let workers: Vec<_> = (0..2)
            .map(|_| {
                consumer
                    .worker("restarted", LongCodec)
                    .unwrap()
                    .concurrency(4)
                    .visibility_timeout(Duration::from_secs(2))
                    .run(fleet.handler(Duration::from_millis(5)))
            })
            .collect();
        eventually(Duration::from_secs(30), "a quarter handled", || async {
            fleet.handled.lock().len() >= N as usize / 4
        })
        .await;
        redis.restart().await;
        eventually(Duration::from_secs(60), "every value handled", || async {
            let mut handled = fleet.handled_sorted();
            handled.dedup();
            handled.len() == N as usize
        })
        .await;
        for worker in workers {
            worker.shutdown().await;
        }
        let leases = sampler.most().await;
        assert!(leases <= 3, "at most 3 leases at once, saw {leases}");
        assert!(fleet.most.load(Ordering::SeqCst) <= 3);
        assert_eq!(
            queue.limits().await.unwrap().concurrency_limit(),
            Some(3),
            "the limit survives the restart"
        );
        let raw = redis.raw().await;
        assert_eq!(raw.zcard("delayq_leases:{restarted}").await, 0);
        assert_eq!(raw.llen("restarted").await, 0);
        assert_eq!(raw.llen("delayq_dead_letter:{restarted}").await, 0);
    })
    .await;
}

/// A worker of a queue whose one slot another process holds (its claims
/// answer `full`); `then` runs while it waits, then the holder acks; a
/// value offered after that must still be handled.
async fn a_full_worker_goes_on_after(redis: &RedisServer, name: &str, paused_meanwhile: bool) {
    let holder = redis.client().await;
    let ready = holder.blocking_queue(name, StringCodec).unwrap();
    let queue = holder.delayed_queue(name, StringCodec).unwrap();
    queue.set_limits(&Limits::none().concurrency(1)).await.unwrap();
    ready.offer(&"held".to_owned()).await.unwrap();
    let held = holder.reliable_queue(name, StringCodec).unwrap().take().await.unwrap();
    let client = redis.client().await;
    let handled: Arc<Mutex<Vec<String>>> = Arc::default();
    let worker = client.worker(name, StringCodec).unwrap().concurrency(2).run({
        let handled = handled.clone();
        move |value: String| {
            handled.lock().push(value);
            async { Ok::<(), std::io::Error>(()) }
        }
    });
    // Long enough for its claims to find the limit full.
    tokio::time::sleep(Duration::from_millis(300)).await;
    if paused_meanwhile {
        queue.pause().await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(held.ack().await.unwrap());
    if paused_meanwhile {
        queue.resume().await.unwrap();
    } else {
        // Its next claim finds the list empty.
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    ready.offer(&"later".to_owned()).await.unwrap();
    eventually(
        Duration::from_secs(10),
        "the worker handles the later value",
        || async { handled.lock().as_slice() == ["later"] },
    )
    .await;
    worker.shutdown().await;
}

redis_test! {
    /// A worker whose claims found the limit full, then the list empty
    /// (the review's find: it waited for news that never came, for good).
    async fn a_worker_that_found_the_limit_full_then_the_list_empty_takes_again(redis) {
        a_full_worker_goes_on_after(&redis, "full-then-empty", false).await;
    }
}

redis_test! {
    /// The same with a pause and a resume after the limit was full.
    async fn a_worker_that_found_the_limit_full_then_a_pause_takes_after_the_resume(redis) {
        a_full_worker_goes_on_after(&redis, "full-then-paused", true).await;
    }
}

redis_test! {
    /// A delivery past its visibility timeout (its consumer gone, no reaper
    /// yet) is in flight but lapsed: the status says so, and the limit does
    /// not count it.
    async fn a_lapsed_delivery_is_told_apart_and_not_counted(client, raw) {
        let queue = client.delayed_queue("lapsed", StringCodec).unwrap();
        queue.set_limits(&Limits::none().concurrency(1)).await.unwrap();
        // As a consumer that died would leave it: id, count, value; its
        // deadline a minute ago.
        let member = [&[7u8; 8][..], b"0000000001", b"gone"].concat();
        let past = delayq_test_support::now_ms() - 60_000;
        raw.cmd("ZADD", vec!["delayq_leases:{lapsed}".into(), past.into(), delayq::fred::types::Value::Bytes(member.into())]).await;
        let status = queue.status().await.unwrap();
        assert_eq!((status.in_flight, status.lapsed, status.live_in_flight()), (1, 1, 0));
        // The claim script by hand (no client, so no reaper): the limit of
        // one has room beside the lapsed lease, and then none.
        let reliable = client.reliable_queue("lapsed", StringCodec).unwrap();
        raw.cmd("RPUSH", vec!["lapsed".into(), "a".into(), "b".into()]).await;
        let sha = raw.load_script(include_str!("../../lua/claim_batch.lua")).await;
        let keys = reliable.keys();
        let claim = |batch: &str| {
            let mut args: Vec<delayq::fred::types::Value> = vec![sha.as_str().into(), 12.into()];
            for key in [
                keys.destination().to_owned(),
                keys.leases().to_owned(),
                keys.dead_letter().to_owned(),
                keys.due().to_owned(),
                keys.counts().to_owned(),
                keys.counts_expiry().to_owned(),
                keys.paused().to_owned(),
                keys.dead_reasons().to_owned(),
                keys.events_config(),
                keys.events(),
                keys.stats(),
                keys.limits(),
            ] {
                args.push(key.into());
            }
            args.extend([batch.into(), 5.into(), 600_000.into(), 0.into(), (1 << 20).into()]);
            args
        };
        let delayq::fred::types::Value::Array(first) = raw.cmd("EVALSHA", claim("batch1")).await else {
            panic!("claim_batch answers an array")
        };
        assert_eq!(first[0], "ok".into(), "{first:?}");
        assert_eq!(first[2], 1.into(), "one claimed: the lapsed lease is not counted");
        assert_eq!(first[3], 0.into(), "no room left after it");
        let delayq::fred::types::Value::Array(second) = raw.cmd("EVALSHA", claim("batch2")).await else {
            panic!("claim_batch answers an array")
        };
        assert_eq!(second, vec!["full".into()]);
        assert_eq!(raw.lrange("lapsed").await, vec!["b"]);
    }
}

redis_test! {
    /// A limit of 0 is refused (it would hold every take: takes(false)
    /// says that), and a limit round-trips with the others.
    async fn a_limit_of_zero_is_refused_and_a_limit_reads_back(client) {
        let queue = client.delayed_queue("zero", StringCodec).unwrap();
        let refused = queue.set_limits(&Limits::none().concurrency(0)).await.unwrap_err();
        assert!(matches!(refused, Error::InvalidArgument(_)), "{refused:?}");
        assert_eq!(queue.limits().await.unwrap(), Limits::none());
        let limits = Limits::none().max_size(100).concurrency(7);
        queue.set_limits(&limits).await.unwrap();
        assert_eq!(queue.limits().await.unwrap(), limits);
        assert_eq!(queue.limits().await.unwrap().concurrency_limit(), Some(7));
        assert_eq!(queue.status().await.unwrap().concurrency_limit, Some(7), "the status reads it");
        queue.set_limits(&Limits::none()).await.unwrap();
        assert_eq!(queue.status().await.unwrap().concurrency_limit, None);
    }
}

/// Offers `0..n` ready, as a Java producer's transfer would leave them.
async fn client_offers(client: &delayq::Client, name: &str, n: i64) {
    let ready = client.blocking_queue(name, LongCodec).unwrap();
    ready.offer_all(0..n).await.unwrap();
}
