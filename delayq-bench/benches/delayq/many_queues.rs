//! Scenario 4: 100,000 queues in one client; one offer on each of 20,000 of
//! them, due at random times over 10 s (from 5 s on: 2,000 a second, as in
//! scenario 2); against the same offers on a single queue.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::clients::SubscriberClient;
use delayq::fred::prelude::*;
use delayq::fred::types::Value;
use delayq::{Client, LongCodec};
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::admin::Admin;
use crate::measure::{now_ms_f64, percentiles, rss_bytes, CpuWindow};
use crate::report::{thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

pub const QUEUES: usize = 100_000;
/// Queues (of the 100,000) that get an element; the rest stay registered and idle.
pub const OFFERED: usize = 20_000;
const SPREAD_MS: u64 = 10_000;

pub struct ManyQueues {
    pub p99: f64,
    pub max: f64,
    pub subscriber_connections: usize,
    /// Seconds from the last handle created (registered) to every channel subscribed / every check run done.
    pub subscribed_s: f64,
    pub checked_s: f64,
    pub subscribed_channels: i64,
    pub rss_mb: f64,
    /// Client memory (RSS growth) per registered queue, handle included.
    pub bytes_per_queue: f64,
    pub cpu_run: f64,
    pub cpu_idle: f64,
    pub single_p99: f64,
}

/// Takes every element pushed to a destination list named `mq:*` as a
/// consumer would, told by keyspace notifications (a consumer per queue would
/// need 100,000 blocking connections), and records how late it came (values
/// are due times).
async fn observe(redis: &RedisServer, expected: usize) -> (Arc<Mutex<Vec<f64>>>, tokio::task::JoinHandle<()>) {
    let admin = Admin::connect(&redis.url()).await;
    admin.config_set("notify-keyspace-events", "Kl").await;
    let mut builder = delayq::fred::types::Builder::from_config(Config::from_url(&redis.url()).unwrap());
    builder.with_performance_config(|p| p.broadcast_channel_capacity = 1 << 15);
    let subscriber: SubscriberClient = builder.build_subscriber_client().unwrap();
    subscriber.init().await.unwrap();
    // fred delivers keyspace notifications on their own stream.
    let mut messages = subscriber.keyspace_event_rx();
    subscriber.psubscribe("__keyspace@0__:mq:*").await.unwrap();
    let (keys_tx, mut keys_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    // Forward events without waiting on Redis, so none is dropped.
    let forwarder = tokio::spawn(async move {
        loop {
            match messages.recv().await {
                Ok(event) if event.operation == "rpush" => {
                    let key = String::from_utf8_lossy(event.key.as_bytes()).into_owned();
                    if keys_tx.send(key).is_err() {
                        break;
                    }
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => panic!("observer lost {n} events"),
                Err(_) => break,
            }
        }
        let _ = subscriber.quit().await;
    });
    let seen = Arc::new(Mutex::new(Vec::with_capacity(expected)));
    let sink = seen.clone();
    let admin = Arc::new(admin);
    let task = tokio::spawn(async move {
        // One task per event, so that a round trip never holds the next queue's value back.
        while sink.lock().len() < expected {
            // Checks the count at least every 100 ms: the last values are counted by their own tasks.
            let key = match tokio::time::timeout(Duration::from_millis(100), keys_rx.recv()).await {
                Err(_) => continue,
                Ok(None) => break,
                Ok(Some(key)) => key,
            };
            let (admin, sink) = (admin.clone(), sink.clone());
            tokio::spawn(async move {
                loop {
                    match admin.cmd("LPOP", vec![key.as_str().into()]).await {
                        Value::Null => break,
                        value => {
                            let due: f64 = value.as_string().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN);
                            sink.lock().push(now_ms_f64() - due);
                        }
                    }
                }
            });
        }
        forwarder.abort();
    });
    (seen, task)
}

async fn offer_spread(client: &Client, names: &[String]) {
    // Due at set times (offer_at) from 5 s on, so that the time 100,000
    // concurrent offers take to send does not count as lateness.
    let start = std::time::SystemTime::now() + Duration::from_secs(5);
    let offers = names.iter().map(|name| {
        let queue = client.delayed_queue(name, LongCodec).unwrap().without_transfer();
        let due = start + Duration::from_millis(fastrand::u64(0..SPREAD_MS));
        let value = due.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
        async move {
            match queue.offer_at(&value, due).await {
                // Sent after its due time (a stalled machine): due now, later than it says.
                Err(delayq::Error::InvalidDelay(_)) => queue.offer(&value, Duration::ZERO).await.unwrap(),
                other => other.unwrap(),
            }
        }
    });
    futures_util::future::join_all(offers).await;
}

async fn wait_for(seen: &Arc<Mutex<Vec<f64>>>, expected: usize) {
    let started = Instant::now();
    while seen.lock().len() < expected {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "not all elements arrived: {}",
            seen.lock().len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub async fn run(redis: &RedisServer) -> ManyQueues {
    let admin = Admin::connect(&redis.url()).await;
    let names: Vec<String> = (0..QUEUES).map(|i| format!("mq:{i}")).collect();
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let rss_before = rss_bytes();
    let queues: Vec<_> = names
        .iter()
        .map(|n| client.delayed_queue(n, LongCodec).unwrap())
        .collect();
    // Wait until the last queue's channel is subscribed (subscriptions go in order).
    let last = queues.last().unwrap().keys().channel().to_owned();
    let started = Instant::now();
    loop {
        let numsub = admin.cmd("PUBSUB", vec!["NUMSUB".into(), last.as_str().into()]).await;
        if matches!(&numsub, Value::Array(v) if v[1].as_i64() == Some(1)) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "100,000 subscriptions did not finish"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let subscribed = started.elapsed().as_secs_f64();
    // Each subscribed queue gets a check run (something may be due already):
    // the offers below start once those are over, so lateness is steady state.
    while client.stats().transfer_runs < QUEUES as u64 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "check runs did not finish"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let checked = started.elapsed().as_secs_f64();
    eprintln!(
        "   {QUEUES} queues registered and subscribed in {subscribed:.1} s, their check runs done in {checked:.1} s"
    );
    let rss_mb = rss_bytes() as f64 / 1_048_576.0;
    let bytes_per_queue = rss_bytes().saturating_sub(rss_before) as f64 / QUEUES as f64;
    let (seen, observer) = observe(redis, OFFERED).await;
    let cpu = CpuWindow::start(redis.pid());
    offer_spread(&client, &names[..OFFERED]).await;
    eprintln!("   {OFFERED} offered");
    wait_for(&seen, OFFERED).await;
    eprintln!("   {OFFERED} delivered");
    let (cpu_run, _) = cpu.stop();
    observer.await.unwrap();
    // Idle: 100,000 queues scheduled, nothing due for 3 s.
    let idle = CpuWindow::start(redis.pid());
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (cpu_idle, _) = idle.stop();
    let clients = match admin.cmd("CLIENT", vec!["LIST".into()]).await {
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        other => panic!("CLIENT LIST: {other:?}"),
    };
    let subscribers: Vec<i64> = clients
        .lines()
        .filter_map(|l| {
            let fields: HashMap<&str, &str> = l.split(' ').filter_map(|f| f.split_once('=')).collect();
            fields.get("sub").and_then(|s| s.parse::<i64>().ok()).filter(|n| *n > 0)
        })
        .collect();
    let (_, p99, max) = percentiles(std::mem::take(&mut *seen.lock()));
    drop(queues);
    client.shutdown().await;

    // Baseline: the same 20,000 offers on one queue, taken by two consumers.
    let client = Client::builder().url(redis.url()).build().await.unwrap();
    let single = client.delayed_queue("single", LongCodec).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let seen = Arc::new(Mutex::new(Vec::with_capacity(OFFERED)));
    let consumers: Vec<_> = (0..2)
        .map(|_| {
            let (dest, seen) = (single.destination(), seen.clone());
            tokio::spawn(async move {
                while seen.lock().len() < OFFERED {
                    if let Ok(Some(due)) = dest.take_timeout(Duration::from_millis(200)).await {
                        seen.lock().push(now_ms_f64() - due as f64);
                    }
                }
            })
        })
        .collect();
    offer_spread(&client, &vec!["single".to_owned(); OFFERED]).await;
    wait_for(&seen, OFFERED).await;
    for consumer in consumers {
        consumer.await.unwrap();
    }
    let (_, single_p99, _) = percentiles(std::mem::take(&mut *seen.lock()));
    client.shutdown().await;

    ManyQueues {
        p99,
        max,
        subscriber_connections: subscribers.len(),
        subscribed_s: subscribed,
        checked_s: checked,
        subscribed_channels: subscribers.iter().sum(),
        rss_mb,
        bytes_per_queue,
        cpu_run,
        cpu_idle,
        single_p99,
    }
}

/// Scenario 4. 100,000 queues in one client: lateness, subscriber connections, memory and CPU.
pub struct QueuesInOneClient;

impl Scenario for QueuesInOneClient {
    fn name(&self) -> &'static str {
        "queues"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("4. 100,000 queues in one client...");
            let redis = RedisServer::start().await;
            let m = run(&redis).await;
            rows.push(
                Row::new(
                    "4. many queues",
                    "lateness p99 (100,000 queues; 20,000 get one element, 2,000/s)",
                )
                .values(
                    format!("{:.1} ms (max {:.1})", m.p99, m.max),
                    format!("{:.1} ms (same load, one queue)", m.single_p99),
                )
                .ratio(m.p99 / m.single_p99)
                .target("p99 ≤ 5 ms", m.p99 <= 5.0),
            );
            rows.push(
                Row::new("4. many queues", "subscriber connections (channels)")
                    .values(
                        format!(
                            "{} ({})",
                            m.subscriber_connections,
                            thousands(m.subscribed_channels as u64)
                        ),
                        "—".into(),
                    )
                    .target("1", m.subscriber_connections == 1),
            );
            rows.push(
                Row::new(
                    "4. many queues",
                    "100,000 registered: every channel subscribed / every check run done",
                )
                .values(format!("{:.1} s / {:.1} s", m.subscribed_s, m.checked_s), "—".into())
                .note("the offers start after both"),
            );
            rows.push(
                Row::new(
                    "4. many queues",
                    "client RSS / per registered queue / CPU during run / CPU idle",
                )
                .values(
                    format!(
                        "{:.0} MiB / {:.1} KiB / {:.1}% / {:.2}%",
                        m.rss_mb,
                        m.bytes_per_queue / 1024.0,
                        m.cpu_run,
                        m.cpu_idle
                    ),
                    "—".into(),
                )
                .note("% of one core"),
            );
            rows
        })
    }
}
