//! Redisson's transfer, for baselines measured in the same run: its script
//! (`redisson.lua`) and its scheduling as the wire contract describes it —
//! run on (re)subscribe, on each published due time (at once when it is due
//! within 10 ms), and after each run at the returned head time (again at once
//! when that is within 10 ms); timers tick every 10 ms (Netty's
//! HashedWheelTimer at its finest setting).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use delayq::fred::clients::SubscriberClient;
use delayq::fred::prelude::*;
use delayq::fred::types::{ClusterHash, CustomCommand, Value};
use delayq::QueueKeys;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub const SCRIPT: &str = include_str!("redisson.lua");
const TICK_MS: f64 = 10.0;

/// Runs one Redisson transfer script; returns the new head's due time.
pub async fn transfer_once(
    conn: &delayq::fred::clients::Client,
    sha: &str,
    keys: &QueueKeys,
    limit: i64,
) -> Option<f64> {
    let now = crate::measure::now_ms_f64() as i64;
    let args: Vec<Value> = vec![
        sha.into(),
        3.into(),
        keys.destination().into(),
        keys.timeout().into(),
        keys.pending().into(),
        now.into(),
        limit.into(),
    ];
    let command = CustomCommand::new_static("EVALSHA", ClusterHash::Random, false);
    match conn
        .custom::<Value, Value>(command, args)
        .await
        .expect("Redisson transfer")
    {
        Value::Null => None,
        head => head.as_string().and_then(|s| s.parse::<f64>().ok()),
    }
}

/// Emulates one JVM's transfer task for `keys` until `stop`; counts script runs.
pub async fn run_task(url: String, sha: String, keys: QueueKeys, stop: CancellationToken, runs: Arc<AtomicU64>) {
    let config = Config::from_url(&url).unwrap();
    let conn = delayq::fred::clients::Client::new(config.clone(), None, None, None);
    conn.init().await.unwrap();
    let subscriber = SubscriberClient::new(config, None, None, None);
    subscriber.init().await.unwrap();
    let mut messages = subscriber.message_rx();
    subscriber.subscribe(keys.channel()).await.unwrap();
    let started = Instant::now();
    // The one timeout the task keeps: (due ms, when it fires).
    let mut timer: Option<(f64, Instant)> = None;
    let mut run_now = true;
    loop {
        if run_now {
            run_now = false;
            timer = None;
            runs.fetch_add(1, Ordering::Relaxed);
            if let Some(head) = transfer_once(&conn, &sha, &keys, 100).await {
                schedule(head, &mut timer, &mut run_now, started);
            }
            continue;
        }
        let sleep = async {
            match timer {
                Some((_, at)) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            message = messages.recv() => {
                if let Ok(message) = message
                    && let Some(due) = message.value.as_string().and_then(|s| s.parse::<f64>().ok()) {
                        schedule(due, &mut timer, &mut run_now, started);
                    }
            }
            _ = sleep => run_now = true,
            _ = stop.cancelled() => break,
        }
    }
    let _ = subscriber.quit().await;
    let _ = conn.quit().await;
}

fn schedule(due: f64, timer: &mut Option<(f64, Instant)>, run_now: &mut bool, started: Instant) {
    let delay = due - crate::measure::now_ms_f64();
    if delay < TICK_MS {
        *run_now = true;
        return;
    }
    if timer.is_some_and(|(scheduled, _)| scheduled <= due) {
        return;
    }
    // The wheel fires on the first tick at or after the deadline.
    let deadline = started.elapsed().as_secs_f64() * 1000.0 + delay;
    let fire_ms = (deadline / TICK_MS).ceil() * TICK_MS;
    *timer = Some((due, started + Duration::from_secs_f64(fire_ms / 1000.0)));
}
