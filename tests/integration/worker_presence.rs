//! Workers say who they are: each running worker beats in its queue's side
//! keys, `Client::workers` lists them with their settings, counts and what
//! they run, a stopped one is gone and a killed one is flagged silent.

use std::sync::Arc;
use std::time::Duration;

use delayq::events::EventKind;
use delayq::worker::WorkerInfo;
use delayq::{QueueKeys, StringCodec};
use futures_util::StreamExt;
use tokio::sync::Notify;

use delayq_test_support::{eventually, redis_test, wait_for};

/// How long a test waits for a state it expects (not a timing assertion:
/// generous, for a loaded machine).
const WITHIN: Duration = Duration::from_secs(30);

/// A short heartbeat, so that states the tests wait for come soon.
const BEAT: Duration = Duration::from_millis(100);

async fn workers(client: &delayq::Client, queue: &str) -> Vec<WorkerInfo> {
    client.workers(&QueueKeys::new(queue).unwrap()).await.unwrap()
}

redis_test! {
    /// A worker shows with its settings while it runs (a name in Cyrillic
    /// and CJK, as operators use), counts what it handled and failed, and
    /// is gone once it stops; the keys expire on their own.
    async fn a_running_worker_shows_its_settings_and_is_gone_once_it_stops(redis, raw) {
        let queue = "заказы-注文";
        let observer = redis.client().await;
        assert_eq!(workers(&observer, queue).await, []);

        let client = redis.client().await;
        let worker = client
            .worker(queue, StringCodec)
            .unwrap()
            .concurrency(3)
            .prefetch(7)
            .rate_limit(500, Duration::from_secs(2))
            .heartbeat(BEAT)
            .run(|value: String| async move {
                if value == "bad" {
                    return Err(delayq::worker::Permanent::new("refused").into());
                }
                Ok::<(), delayq::error::BoxError>(())
            });
        let seen = wait_for(WITHIN, "the worker beats", || async {
            workers(&observer, queue).await.into_iter().next()
        })
        .await;
        assert!(seen.id.starts_with(&format!("{}-", std::process::id())), "{seen:?}");
        assert_eq!(seen.pid, std::process::id());
        assert_eq!(seen.version, env!("CARGO_PKG_VERSION"));
        assert_eq!((seen.concurrency, seen.prefetch), (3, 7));
        let rate = seen.rate_limit.expect("its rate limit");
        assert_eq!((rate.limit, rate.per, rate.burst), (500, Duration::from_secs(2), 1));
        assert_eq!(seen.heartbeat, BEAT);
        assert!(!seen.silent, "{seen:?}");
        assert!(seen.started_at <= seen.last_beat, "{seen:?}");
        // Another queue has no worker.
        assert_eq!(workers(&observer, "others").await, []);

        let producer = client.delayed_queue(queue, StringCodec).unwrap();
        for value in ["a", "b", "bad", "c"] {
            producer.offer(&value.to_string(), Duration::ZERO).await.unwrap();
        }
        eventually(WITHIN, "three handled, one failed, as the beat says", || async {
            let listed = workers(&observer, queue).await;
            listed.len() == 1 && listed[0].handled == 3 && listed[0].failed == 1
        })
        .await;
        let ttl = raw.cmd("PTTL", vec!["delayq_worker_beats:{заказы-注文}".into()]).await.as_i64().unwrap();
        assert!(ttl > 0, "the beats expire when no worker beats: {ttl}");

        let report = worker.shutdown().await;
        assert_eq!((report.succeeded, report.failed), (3, 1));
        assert_eq!(workers(&observer, queue).await, [], "a stopped worker takes its entry back");
        client.shutdown().await;
        observer.shutdown().await;
    }
}

redis_test! {
    /// A worker whose process dies (its runtime dropped: nothing stops it
    /// cleanly) stays listed, flagged silent once its beats stop; a live
    /// worker of the same queue is not.
    async fn a_killed_worker_is_flagged_silent(redis) {
        let queue = "silent";
        let observer = redis.client().await;
        let alive = observer.worker(queue, StringCodec).unwrap().heartbeat(BEAT).run(|_: String| async {
            Ok::<(), std::io::Error>(())
        });

        let url = redis.url();
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (kill_tx, kill_rx) = std::sync::mpsc::channel::<()>();
        let process = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let client = delayq::Client::connect(&url).await.unwrap();
                let worker = client.worker("silent", StringCodec).unwrap().heartbeat(BEAT).run(|_: String| async {
                    Ok::<(), std::io::Error>(())
                });
                started_tx.send(()).unwrap();
                // Kept alive until the runtime goes: no shutdown, no drop.
                std::mem::forget((client, worker));
            });
            kill_rx.recv().unwrap();
            runtime.shutdown_background();
        });
        started_rx.recv().unwrap();
        let both = wait_for(WITHIN, "two workers beat", || async {
            let listed = workers(&observer, queue).await;
            (listed.len() == 2 && listed.iter().all(|w| !w.silent)).then_some(listed)
        })
        .await;

        kill_tx.send(()).unwrap();
        process.join().unwrap();
        let listed = wait_for(WITHIN, "the killed worker flagged silent", || async {
            let listed = workers(&observer, queue).await;
            listed.iter().any(|w| w.silent).then_some(listed)
        })
        .await;
        assert_eq!(listed.len(), 2, "a silent worker stays listed: {listed:?}");
        let silent: Vec<_> = listed.iter().filter(|w| w.silent).collect();
        assert_eq!(silent.len(), 1, "{listed:?}");
        let live = listed.iter().find(|w| !w.silent).expect("the live worker");
        assert!(both.iter().any(|w| w.id == silent[0].id), "{both:?} vs {listed:?}");
        assert!(live.last_beat > silent[0].last_beat, "{listed:?}");

        alive.shutdown().await;
        observer.shutdown().await;
    }
}

redis_test! {
    /// While a handler is blocked, the worker's beat names the delivery it
    /// runs (the id the claim's event gave), its attempt, since when, and
    /// its lease's expiry; once the handler returns, nothing runs.
    async fn what_a_worker_runs_now_shows_while_its_handler_is_blocked(redis) {
        let queue = "blocked";
        let client = redis.client().await;
        let keys = QueueKeys::new(queue).unwrap();
        client.enable_events(&keys, 1000).await.unwrap();
        let mut events = client.events(&keys).unwrap().from(delayq::events::EventsFrom::Oldest);

        let (entered, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let worker = {
            let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
            client
                .worker(queue, StringCodec)
                .unwrap()
                .concurrency(2)
                .visibility_timeout(Duration::from_secs(30))
                .heartbeat(BEAT)
                .run(move |_: String| {
                    let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
                    async move {
                        entered.notify_one();
                        release.notified().await;
                        Ok::<(), std::io::Error>(())
                    }
                })
        };
        let producer = client.delayed_queue(queue, StringCodec).unwrap();
        producer.offer(&"job".to_string(), Duration::ZERO).await.unwrap();
        entered.notified().await;

        let claimed = loop {
            let event = events.next().await.expect("the stream goes on").unwrap();
            if let EventKind::Claimed { deliveries, .. } = event.kind {
                break deliveries;
            }
        };
        let running = wait_for(WITHIN, "the beat names the running delivery", || async {
            let listed = workers(&client, queue).await;
            let worker = listed.into_iter().next()?;
            (worker.busy == 1).then_some(worker)
        })
        .await;
        assert_eq!(running.running.len(), 1, "{running:?}");
        let now = &running.running[0];
        assert_eq!(claimed, std::slice::from_ref(&now.delivery), "{running:?}");
        assert_eq!(now.attempt, 1);
        assert_eq!(now.job, None, "offered without an id: {running:?}");
        assert!(now.since <= running.last_beat, "{running:?}");
        assert!(now.lease_expires > running.last_beat, "{running:?}");

        release.notify_one();
        eventually(WITHIN, "nothing runs once the handler returned", || async {
            let listed = workers(&client, queue).await;
            listed.len() == 1 && listed[0].busy == 0 && listed[0].running.is_empty() && listed[0].handled == 1
        })
        .await;
        worker.shutdown().await;
        client.shutdown().await;
    }
}

redis_test! {
    /// A running delivery of a value offered with an id names its job, in
    /// the worker's beat as on a plain take's delivery.
    async fn a_running_delivery_names_its_job(client) {
        let queue = "running-jobs";
        let (entered, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let producer = client.delayed_queue(queue, StringCodec).unwrap();
        producer.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
        producer.offer_with_id("order-1", &"charge".to_string(), Duration::ZERO).await.unwrap();
        producer.offer_with_id("order-2", &"refund".to_string(), Duration::ZERO).await.unwrap();
        producer.transfer_now().await.unwrap();
        let taken = client.reliable_queue(queue, StringCodec).unwrap().take().await.unwrap();
        assert_eq!(taken.job_id(), Some("order-1"));
        let worker = {
            let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
            client
                .worker(queue, StringCodec)
                .unwrap()
                .heartbeat(BEAT)
                .run(move |_: String| {
                    let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
                    async move {
                        entered.notify_one();
                        release.notified().await;
                        Ok::<(), std::io::Error>(())
                    }
                })
        };
        entered.notified().await;
        let running = wait_for(WITHIN, "the beat names the running delivery", || async {
            let listed = workers(&client, queue).await;
            let worker = listed.into_iter().next()?;
            (worker.busy == 1).then_some(worker)
        })
        .await;
        assert_eq!(running.running.len(), 1, "{running:?}");
        assert_eq!(running.running[0].job.as_deref(), Some("order-2"), "{running:?}");
        release.notify_one();
        assert!(taken.ack().await.unwrap());
        worker.shutdown().await;
    }
}
