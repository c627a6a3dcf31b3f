//! The Workers page, the overview's workers column and the worker gauges in
//! headless Chromium: a busy worker with what it runs, a killed one flagged
//! silent, on a queue named in Cyrillic and CJK.

use std::sync::Arc;
use std::time::Duration;

use delayq::StringCodec;
use tokio::sync::Notify;

use super::{browser, http, screenshot, serve, start_driver, text, wait_text, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

const QUEUE: &str = "заказы-订单";

/// A worker on `QUEUE` in a runtime of its own, then the runtime dropped
/// (a killed process: it never leaves, its beats stop).
fn killed_worker(url: String) {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let client = delayq::Client::connect(&url).await.unwrap();
            let worker = client
                .worker(QUEUE, StringCodec)
                .unwrap()
                .heartbeat(Duration::from_millis(100))
                .run(|_: String| async { Ok::<(), std::io::Error>(()) });
            let keys = delayq::QueueKeys::new(QUEUE).unwrap();
            while client.workers(&keys).await.unwrap().len() < 2 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            std::mem::forget((client, worker));
        });
        runtime.shutdown_background();
    })
    .join()
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_show_what_they_run_and_a_silent_one_is_flagged() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let (entered, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let worker = {
        let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
        client
            .worker(QUEUE, StringCodec)
            .unwrap()
            .concurrency(2)
            .rate_limit(100, Duration::from_secs(1))
            .heartbeat(Duration::from_millis(100))
            .run(move |_: String| {
                let (entered, release) = (Arc::clone(&entered), Arc::clone(&release));
                async move {
                    entered.notify_one();
                    release.notified().await;
                    Ok::<(), std::io::Error>(())
                }
            })
    };
    // Straight to the ready list: a raw pending element is seen only by the
    // transfer's periodic check (no publish), a minute later.
    let _: i64 = delayq::fred::interfaces::ListInterface::rpush(&seed::raw(&server).await, QUEUE, "job")
        .await
        .unwrap();
    entered.notified().await;
    // Killed after the live worker holds the job: a killed worker's blocked
    // pop can still take a value (its socket outlives its runtime here),
    // which then waits out the visibility timeout before anyone else sees it.
    killed_worker(server.url());

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    // The overview: one live worker, one of two slots busy, one silent.
    browser.goto(&format!("{url}/")).await.unwrap();
    let cell = format!(r#"tr[data-queue="{QUEUE}"] td.workers"#);
    wait_text(&browser, &format!("{cell} a"), "1 · 1/2").await;
    wait_text(&browser, &format!("{cell} .silent"), "1 silent").await;

    // The Workers page of the queue.
    let encoded = "%D0%B7%D0%B0%D0%BA%D0%B0%D0%B7%D1%8B-%E8%AE%A2%E5%8D%95";
    browser.goto(&format!("{url}/workers?queue={encoded}")).await.unwrap();
    wait_text(&browser, "#workers-silent", "1").await;
    wait_text(&browser, "#workers-alive", "1").await;
    wait_text(&browser, "#workers-busy", "1").await;
    assert_eq!(text(&browser, "#workers-scope a").await, QUEUE);
    assert_eq!(text(&browser, "#workers tbody tr.silent .badge.silent").await, "silent");
    assert_eq!(
        text(&browser, "#workers tbody tr:not(.silent) .badge.alive").await,
        "alive"
    );
    assert_eq!(text(&browser, "#workers tbody tr:not(.silent) td.busy").await, "1 / 2");
    assert!(text(&browser, "#workers tbody tr:not(.silent)")
        .await
        .contains("100 per 1s"));
    let listed = client.workers(&delayq::QueueKeys::new(QUEUE).unwrap()).await.unwrap();
    let busy = listed.iter().find(|w| w.busy == 1).expect("the busy worker");
    let delivery = &busy.running[0].delivery;
    assert_eq!(text(&browser, "#running td.delivery").await, *delivery);
    assert!(!text(&browser, "#workers tbody tr:not(.silent) td.host")
        .await
        .is_empty());
    screenshot(&browser, "workers").await;

    // Every queue's workers: the same, from the sampler.
    browser.goto(&format!("{url}/workers")).await.unwrap();
    wait_text(&browser, "#running td.delivery", delivery).await;
    assert_eq!(text(&browser, "#workers-scope").await, "of every queue");

    // The gauges.
    eventually(WAIT, "the worker gauges", || {
        let url = url.clone();
        async move {
            let (_, metrics) = http(&url, "GET", "/metrics").await;
            [
                "delayq_queue_workers{queue=\"заказы-订单\"} 1",
                "delayq_queue_workers_silent{queue=\"заказы-订单\"} 1",
                "delayq_queue_worker_busy_slots{queue=\"заказы-订单\"} 1",
                "delayq_queue_worker_slots{queue=\"заказы-订单\"} 2",
            ]
            .iter()
            .all(|line| metrics.lines().any(|l| l == *line))
        }
    })
    .await;

    release.notify_one();
    worker.shutdown().await;
    client.shutdown().await;
}
