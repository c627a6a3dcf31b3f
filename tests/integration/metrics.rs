//! The `metrics` feature: what a worker and the transfer report through the
//! `metrics` facade, read back with a debugging recorder.
#![cfg(feature = "metrics")]

use std::time::Duration;

use delayq::error::BoxError;
use delayq::worker::RetryPolicy;
use delayq::StringCodec;
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use metrics_util::MetricKind;

use delayq_test_support::{deadline, eventually, RedisServer};

/// The one recorder of this test binary (a global can be set only once).
fn snapshotter() -> Snapshotter {
    static SNAPSHOTTER: std::sync::OnceLock<Snapshotter> = std::sync::OnceLock::new();
    SNAPSHOTTER
        .get_or_init(|| {
            let recorder = DebuggingRecorder::new();
            let snapshotter = recorder.snapshotter();
            recorder.install().expect("no other recorder in this binary");
            snapshotter
        })
        .clone()
}

type Recorded = Vec<(metrics_util::CompositeKey, DebugValue)>;

/// A snapshot drains the shared recorder: the tests of this file take turns.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Every value recorded for `name` with `queue="metered"` and the given extra label.
fn values<'a>(recorded: &'a Recorded, name: &str, label: Option<(&str, &str)>) -> Vec<&'a DebugValue> {
    recorded
        .iter()
        .filter(|(key, ..)| {
            let key = key.key();
            key.name() == name
                && key.labels().any(|l| l.key() == "queue" && l.value() == "metered")
                && label.is_none_or(|(k, v)| key.labels().any(|l| l.key() == k && l.value() == v))
        })
        .map(|(.., value)| value)
        .collect()
}

fn counter(snapshotter: &Recorded, name: &str, label: Option<(&str, &str)>) -> u64 {
    values(snapshotter, name, label)
        .into_iter()
        .map(|v| match v {
            DebugValue::Counter(n) => *n,
            other => panic!("{name} is not a counter: {other:?}"),
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_and_transfers_report_through_the_metrics_facade() {
    deadline(async {
        let _turn = SERIAL.lock().await;
        let snapshotter = snapshotter();
        let redis = RedisServer::start().await;
        let client = redis.client().await;
        let worker = client
            .worker("metered", StringCodec)
            .unwrap()
            .retry(RetryPolicy::fixed(Duration::from_millis(50)).max_attempts(2))
            .run(|v: String| async move {
                if v.starts_with("fail") {
                    Err(BoxError::from("nope"))
                } else {
                    Ok(())
                }
            });
        let queue = client.delayed_queue("metered", StringCodec).unwrap();
        for v in ["ok-1", "ok-2", "fail-1"] {
            queue.offer(&v.to_owned(), Duration::from_millis(50)).await.unwrap();
        }
        queue
            .offer(&"later".to_owned(), Duration::from_secs(3600))
            .await
            .unwrap();
        eventually(Duration::from_secs(10), "the failing value dead-lettered", || async {
            worker.report().dead_lettered == 1 && worker.report().succeeded == 2
        })
        .await;
        worker.shutdown().await;
        // One more, moved but not taken (the worker is gone): the gauges see it.
        queue
            .offer(&"left".to_owned(), Duration::from_millis(20))
            .await
            .unwrap();
        let dest = client.blocking_queue("metered", StringCodec).unwrap();
        eventually(Duration::from_secs(20), "the last value is ready", || async {
            dest.len().await.unwrap() == 1
        })
        .await;
        // The value reaches the list before the scheduler reads its run's
        // reply and records it: wait for the count (kept after the metrics).
        eventually(Duration::from_secs(20), "the last transfer recorded", || async {
            client.stats().transferred == 5
        })
        .await;

        // A snapshot drains what it reads: take one, then look at it.
        let snapshotter: Recorded = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(k, _, _, v)| (k, v))
            .collect();
        // Three moved by the first transfer, the retry and the last by later ones.
        assert_eq!(counter(&snapshotter, "delayq_transferred_total", None), 5);
        assert_eq!(
            counter(&snapshotter, "delayq_handled_total", Some(("outcome", "ok"))),
            2
        );
        assert_eq!(
            counter(&snapshotter, "delayq_handled_total", Some(("outcome", "retry"))),
            1
        );
        assert_eq!(
            counter(&snapshotter, "delayq_handled_total", Some(("outcome", "dead_letter"))),
            1
        );
        assert_eq!(counter(&snapshotter, "delayq_retries_total", None), 1);
        assert_eq!(
            counter(&snapshotter, "delayq_dead_lettered_total", Some(("reason", "attempts"))),
            1
        );
        let durations = values(&snapshotter, "delayq_handler_duration_seconds", Some(("outcome", "ok")));
        assert!(
            matches!(durations[..], [DebugValue::Histogram(h)] if h.len() == 2),
            "{durations:?}"
        );
        let lateness = values(&snapshotter, "delayq_transfer_lateness_seconds", None);
        assert!(matches!(lateness[..], [DebugValue::Histogram(h)] if !h.is_empty()));
        let delivered = values(&snapshotter, "delayq_delivery_lateness_seconds", None);
        assert!(
            matches!(delivered[..], [DebugValue::Histogram(h)] if h.len() == 4),
            "{delivered:?}"
        );
        assert!(
            matches!(lateness[..], [DebugValue::Histogram(h)] if h.len() >= 3),
            "{lateness:?}"
        );
        // After the last transfer: the hour-long offer pends, the last value is ready.
        let gauge = |name| match values(&snapshotter, name, None)[..] {
            [DebugValue::Gauge(g)] => g.into_inner(),
            ref other => panic!("{name}: {other:?}"),
        };
        assert_eq!(gauge("delayq_pending"), 1.0);
        assert_eq!(gauge("delayq_ready"), 1.0);
        let kinds: Vec<MetricKind> = snapshotter.iter().map(|(k, _)| k.kind()).collect();
        assert!(kinds.contains(&MetricKind::Histogram));
    })
    .await;
}

/// Sum of the counter `name` labelled with `queue` (and `label`, if given).
fn counter_of(recorded: &Recorded, queue: &str, name: &str, label: Option<(&str, &str)>) -> u64 {
    recorded
        .iter()
        .filter(|(key, ..)| {
            let key = key.key();
            key.name() == name
                && key.labels().any(|l| l.key() == "queue" && l.value() == queue)
                && label.is_none_or(|(k, v)| key.labels().any(|l| l.key() == k && l.value() == v))
        })
        .map(|(.., value)| match value {
            DebugValue::Counter(n) => *n,
            other => panic!("{name} is not a counter: {other:?}"),
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_and_rate_limits_report_through_the_metrics_facade() {
    deadline(async {
        let _turn = SERIAL.lock().await;
        let snapshotter = snapshotter();
        let redis = RedisServer::start().await;
        let client = redis.client().await;
        // Its own queue: the recorder is shared with the other tests of the binary.
        let queue = client.delayed_queue("metered-extras", StringCodec).unwrap();
        client
            .schedule(
                "tick",
                delayq::schedule::every(Duration::from_millis(200)),
                &queue,
                &"t".to_string(),
            )
            .await
            .unwrap();
        let worker = client
            .worker("metered-extras", StringCodec)
            .unwrap()
            .concurrency(4)
            .rate_limit(4, Duration::from_secs(1))
            .run(|_: String| async { Ok::<_, BoxError>(()) });
        // Each snapshot drains what it read: add them up.
        let (mut fired, mut waits) = (0, 0);
        let started = std::time::Instant::now();
        while fired < 3 || waits < 1 {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "fired {fired}, waits {waits}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
            let recorded: Recorded = snapshotter
                .snapshot()
                .into_vec()
                .into_iter()
                .map(|(k, _, _, v)| (k, v))
                .collect();
            fired += counter_of(
                &recorded,
                "metered-extras",
                "delayq_schedule_fired_total",
                Some(("schedule", "tick")),
            );
            waits += counter_of(&recorded, "metered-extras", "delayq_rate_limit_waits_total", None);
        }
        worker.shutdown().await;
        client.shutdown().await;
    })
    .await;
}

/// A fire whose reply is lost: fred resends it, the resend offers nothing
/// again (the first run did) and must still answer "fired", so that
/// `delayq_schedule_fired_total` counts what this process offered, as the
/// record does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_fire_whose_reply_is_lost_is_counted_once() {
    deadline(async {
        use delayq_test_support::fault_proxy::Fault;
        let _turn = SERIAL.lock().await;
        let snapshotter = snapshotter();
        let (_redis, proxy, client) = delayq_test_support::behind_proxy().await;
        let queue = client
            .delayed_queue("metered-lost-fire", StringCodec)
            .unwrap()
            .without_transfer();
        let schedules = client
            .schedules(&delayq::QueueKeys::new("metered-lost-fire").unwrap())
            .unwrap();
        let fired = |name: &'static str| {
            let schedules = schedules.clone();
            async move { schedules.get(name).await.unwrap().unwrap().fired }
        };
        // Warms the fire script, so the lost call is the script itself.
        let every = || delayq::schedule::every(Duration::from_millis(300)).misfire(delayq::schedule::Misfire::FireAll);
        client
            .schedule("warm", every(), &queue, &"warm".to_string())
            .await
            .unwrap();
        eventually(Duration::from_secs(60), "warm fired", || async {
            fired("warm").await >= 1
        })
        .await;
        assert!(schedules.pause("warm").await.unwrap());
        // Only a fire carries the value itself.
        proxy.arm(Fault::LoseReply, "lost-fire-value");
        client
            .schedule("job", every(), &queue, &"lost-fire-value".to_string())
            .await
            .unwrap();
        eventually(Duration::from_secs(60), "a lost fire and two more", || async {
            proxy.fired() == 1 && fired("job").await >= 3
        })
        .await;
        assert!(schedules.pause("job").await.unwrap());
        let offered = fired("job").await;
        let mut counted = 0;
        let started = std::time::Instant::now();
        while counted < offered {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "counted {counted} of {offered} offered"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
            let recorded: Recorded = snapshotter
                .snapshot()
                .into_vec()
                .into_iter()
                .map(|(k, _, _, v)| (k, v))
                .collect();
            counted += counter_of(
                &recorded,
                "metered-lost-fire",
                "delayq_schedule_fired_total",
                Some(("schedule", "job")),
            );
        }
        assert_eq!(counted, offered, "none counted twice");
        client.shutdown().await;
    })
    .await;
}

/// The scheduler's transfer whose reply is lost: fred resends it, the resend
/// moves nothing again (the first run did) and must answer what the first
/// run did, so that the metrics count what it moved and quarantined, and
/// how late its first element was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_whose_reply_is_lost_is_counted_once() {
    deadline(async {
        use delayq::fred::interfaces::PubsubInterface;
        use delayq_test_support::fault_proxy::{Fault, FaultProxy};
        let _turn = SERIAL.lock().await;
        let snapshotter = snapshotter();
        let redis = RedisServer::start().await;
        let proxy = FaultProxy::start(redis.port()).await;
        // No resync: the publish below makes the only run after the fault is armed.
        let client = delayq::Client::builder()
            .url(proxy.url())
            .resync_interval(None)
            .build()
            .await
            .unwrap();
        let raw = redis.raw().await;
        // Cached, so that the lost reply is the script's, not a NOSCRIPT.
        let body = delayq_test_support::script_body(include_str!("../../lua/transfer.lua"));
        raw.cmd("SCRIPT", vec!["LOAD".into(), body.as_str().into()]).await;
        let name = "metered-lost-transfer";
        let q = client.delayed_queue(name, StringCodec).unwrap();
        eventually(Duration::from_secs(20), "the first run", || async {
            client.stats().transfer_runs >= 1
        })
        .await;
        // Three elements and one neither format unpacks, due a second ago.
        let due = delayq_test_support::now_ms() - 1_000;
        for (i, v) in ["a", "b", "c"].into_iter().enumerate() {
            let element = delayq::format::pack(delayq::format::Format::Modern, v.as_bytes());
            raw.seed(name, &element, due + i as i64).await;
        }
        raw.seed(name, b"not a packed element", due + 3).await;
        proxy.arm(Fault::LoseReply, delayq::fred::util::sha1_hash(&body));
        let _: i64 = raw.client.publish(q.keys().channel(), due.to_string()).await.unwrap();
        // ClientStats are added after the metrics.
        eventually(Duration::from_secs(20), "counted", || async {
            let stats = client.stats();
            stats.transferred >= 3 && stats.quarantined >= 1
        })
        .await;
        assert_eq!(proxy.fired(), 1);
        let recorded: Recorded = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(k, _, _, v)| (k, v))
            .collect();
        assert_eq!(counter_of(&recorded, name, "delayq_transferred_total", None), 3);
        assert_eq!(counter_of(&recorded, name, "delayq_quarantined_total", None), 1);
        let lateness: Vec<f64> = recorded
            .iter()
            .filter(|(key, ..)| {
                key.key().name() == "delayq_transfer_lateness_seconds"
                    && key.key().labels().any(|l| l.key() == "queue" && l.value() == name)
            })
            .flat_map(|(.., value)| match value {
                DebugValue::Histogram(samples) => samples.iter().map(|s| s.into_inner()).collect::<Vec<_>>(),
                other => panic!("lateness is not a histogram: {other:?}"),
            })
            .collect();
        // One run moved them: one sample, from the first element's due time.
        assert_eq!(lateness.len(), 1, "{lateness:?}");
        assert!(lateness[0] >= 1.0, "{lateness:?}");
        client.shutdown().await;
    })
    .await;
}

/// Offers the queue's limits refuse are counted by the limit that refused them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_offers_are_counted_by_limit() {
    deadline(async {
        let _turn = SERIAL.lock().await;
        let snapshotter = snapshotter();
        let redis = RedisServer::start().await;
        let client = redis.client().await;
        let queue = client.delayed_queue("metered-limits", StringCodec).unwrap();
        queue
            .set_limits(&delayq::limits::Limits::none().max_size(1).max_payload(4))
            .await
            .unwrap();
        queue.offer(&"a".to_string(), Duration::from_secs(60)).await.unwrap();
        assert!(queue.offer(&"b".to_string(), Duration::from_secs(60)).await.is_err());
        assert!(queue.offer(&"c".to_string(), Duration::from_secs(60)).await.is_err());
        assert!(queue
            .offer(&"large".to_string(), Duration::from_secs(60))
            .await
            .is_err());
        let recorded: Recorded = snapshotter
            .snapshot()
            .into_vec()
            .into_iter()
            .map(|(k, _, _, v)| (k, v))
            .collect();
        let refused = |limit| {
            counter_of(
                &recorded,
                "metered-limits",
                "delayq_offers_refused_total",
                Some(("limit", limit)),
            )
        };
        assert_eq!((refused("max_size"), refused("max_payload")), (2, 1));
        client.shutdown().await;
    })
    .await;
}
