//! The overview and the queue page's header and charts in headless
//! Chromium: which Redis and which zone, attention order, and charts that
//! print their numbers.

use std::time::Duration;

use bytes::Bytes;
use delayq::format::Format;
use delayq::fred::prelude::*;
use fantoccini::{Client as Browser, Locator};
use serde_json::Value;

use super::{browser, screenshot, serve, start_driver, text, wait_text, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

/// `count` pending elements of `name`, all due `minutes` from now, written
/// in batches (as many offers would leave them).
async fn many(server: &RedisServer, name: &str, count: usize, minutes: i64) {
    let redis = seed::raw(server).await;
    let keys = delayq::QueueKeys::new(name).unwrap();
    let due = (seed::now_ms() + minutes * 60_000) as f64;
    for start in (0..count).step_by(10_000) {
        let elements: Vec<Bytes> = (start..count.min(start + 10_000))
            .map(|i| delayq::format::pack(Format::Modern, format!("bulk-{i}").as_bytes()))
            .collect();
        let scored: Vec<(f64, Bytes)> = elements.iter().map(|e| (due, e.clone())).collect();
        let _: () = redis
            .zadd(keys.timeout(), None, None, false, false, scored)
            .await
            .unwrap();
        let _: () = redis.rpush(keys.pending(), elements).await.unwrap();
    }
}

const LONG: &str = "tenant-42-eu-west-1-invoice-reminders-after-a-failed-card-payment-second-attempt";

/// What `script` returns in the page.
async fn run(browser: &Browser, script: &str) -> Value {
    browser.execute(script, vec![]).await.expect("script runs")
}

/// The rows of the overview, by queue name, in order.
async fn rows(browser: &Browser) -> Vec<String> {
    let found = run(
        browser,
        "return [...document.querySelectorAll('#queues tbody tr')].map(tr => tr.dataset.queue);",
    )
    .await;
    serde_json::from_value(found).unwrap()
}

/// The texts of the SVG elements `css` (tick labels, counts).
async fn svg_texts(browser: &Browser, css: &str) -> Vec<String> {
    let script = format!("return [...document.querySelectorAll({css:?})].map(t => t.textContent);");
    serde_json::from_value(run(browser, &script).await).unwrap()
}

/// The overview opens on what needs attention, keeps its view in the URL,
/// names the Redis and the zone, wraps no column at 1,400 px, and the
/// charts' axes and counts tell one element from 200,000.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_triages_at_a_glance_and_charts_say_their_numbers() {
    let server = RedisServer::start().await;
    seed::offer(&server, "one-element", "only", 600).await;
    // A name longer than its column: cut, never wrapped.
    seed::offer(&server, LONG, "x", 600).await;
    many(&server, "big", 200_000, 22).await;
    seed::offer(&server, "big", "lonely", 50 * 60).await;
    seed::queue(&server, "dead-pile", 0, 0, 3).await;
    seed::offer(&server, "Lagging-Payments", "late", -120).await;
    let saver = seed::client(&server).await;
    let unrun = saver.delayed_queue("nightly-unrun", delayq::StringCodec).unwrap();
    saver
        .schedule("nightly", "0 3 * * *", &unrun, &"compact".to_string())
        .await
        .unwrap();
    drop(unrun);
    saver.shutdown().await;
    seed::offer(&server, "nightly-unrun", "x", 600).await;

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    // Attention first: dead letters, lag, schedules nothing runs; then by name.
    browser.goto(&format!("{url}/")).await.unwrap();
    wait_text(&browser, r#"tr[data-queue="big"] td.pending"#, "200,001").await;
    let want = [
        "dead-pile",
        "Lagging-Payments",
        "nightly-unrun",
        "big",
        "one-element",
        LONG,
    ];
    eventually(WAIT, "the attention order", || {
        let browser = browser.clone();
        async move { rows(&browser).await == want }
    })
    .await;
    assert_eq!(
        text(&browser, r#"tr[data-queue="nightly-unrun"] td.name .badge.runners"#).await,
        "no schedule runner"
    );
    // The header: which Redis, and the zone of every time.
    eventually(WAIT, "the Redis header", || {
        let browser = browser.clone();
        async move { text(&browser, "#server").await.contains("Redis ") }
    })
    .await;
    let header = text(&browser, "#server").await;
    let address = format!("127.0.0.1:{} · db 0 · standalone · Redis ", server.port());
    assert!(header.starts_with(&address), "{header}");
    assert!(header.contains(" / no maxmemory · up "), "{header}");
    assert!(text(&browser, "#zone").await.starts_with("times in UTC"));
    // The hour column says its tallest bar.
    assert_eq!(text(&browser, r#"tr[data-queue="big"] td.hour .peak"#).await, "200k");
    assert!(super::attr(&browser, r#"tr[data-queue="big"] td.hour"#, "title")
        .await
        .unwrap()
        .contains("the tallest bar is 200,000"));
    assert_eq!(
        text(&browser, r#"tr[data-queue="one-element"] td.hour .peak"#).await,
        "1"
    );
    // No cell of the table wraps: each lays out as one line box.
    let lines = run(
        &browser,
        "return [...document.querySelectorAll('#queues th, #queues td')].map(cell => {
           const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
           const rects = [];
           for (let node = walk.nextNode(); node; node = walk.nextNode()) {
             if (node.parentElement.closest('svg')) continue;
             const range = document.createRange(); range.selectNodeContents(node);
             rects.push(...range.getClientRects());
           }
           rects.sort((a, b) => a.top - b.top);
           let lines = 0, bottom = -Infinity;
           for (const r of rects) { if (r.top >= bottom - 1) { lines += 1; bottom = r.bottom; } else bottom = Math.max(bottom, r.bottom); }
           return [cell.className || cell.textContent, lines];
         }).filter(([, n]) => n > 1);",
    )
    .await;
    assert_eq!(lines, serde_json::json!([]), "cells on more than one line");
    screenshot(&browser, "overview-attention").await;

    // Sort and filter go into the URL; a reload shows the same view.
    let sort = browser.find(Locator::Css("#sort")).await.unwrap();
    sort.select_by_value("name").await.unwrap();
    let filter = browser.find(Locator::Css("#filter")).await.unwrap();
    filter.send_keys("PAYMENTS").await.unwrap();
    eventually(WAIT, "the filtered view", || {
        let browser = browser.clone();
        async move { rows(&browser).await == ["Lagging-Payments"] }
    })
    .await;
    let address = browser.current_url().await.unwrap();
    assert_eq!(address.query(), Some("sort=name&filter=PAYMENTS"));
    browser.refresh().await.unwrap();
    eventually(WAIT, "the view after a reload", || {
        let browser = browser.clone();
        async move { rows(&browser).await == ["Lagging-Payments"] }
    })
    .await;
    let restored = run(
        &browser,
        "return [document.querySelector('#sort').value, document.querySelector('#filter').value];",
    )
    .await;
    assert_eq!(restored, serde_json::json!(["name", "PAYMENTS"]));
    screenshot(&browser, "overview-url-restored").await;

    // One element: the axis tops at 1, and the bar says 1.
    browser.goto(&format!("{url}/queue?name=one-element")).await.unwrap();
    wait_text(&browser, "#pending", "1").await;
    eventually(WAIT, "the one-element chart's axis", || {
        let browser = browser.clone();
        async move { svg_texts(&browser, "#chart-hour text.tick").await == ["0", "1"] }
    })
    .await;
    assert_eq!(svg_texts(&browser, "#chart-hour text.count").await, ["1"]);
    assert!(text(&browser, "#server").await.contains("· db 0 ·"));
    // An absolute time says its zone.
    let title = super::attr(&browser, "#next-due", "title").await.unwrap_or_default();
    let zone = title.rsplit(' ').next().unwrap_or_default().to_owned();
    assert!(
        zone.len() == 9 && (zone.starts_with("UTC+") || zone.starts_with("UTC-")),
        "{title:?}"
    );
    assert_eq!(text(&browser, "#zone").await, format!("times in {zone}"));
    screenshot(&browser, "queue-one-element").await;

    // 200,000 in one bucket and 1 in another: the axis reads 200,000, the
    // big bar "200k", and the lone element's bar is a sliver titled 1.
    browser.goto(&format!("{url}/queue?name=big")).await.unwrap();
    wait_text(&browser, "#pending", "200,001").await;
    eventually(WAIT, "the big chart's axis", || {
        let browser = browser.clone();
        async move { svg_texts(&browser, "#chart-hour text.tick").await == ["0", "100,000", "200,000"] }
    })
    .await;
    assert_eq!(svg_texts(&browser, "#chart-hour text.count").await, ["200k", "1"]);
    let titles = svg_texts(&browser, "#chart-hour rect title").await;
    assert!(
        titles.iter().any(|t| t.starts_with("200,000 due in 20–25 min")),
        "{titles:?}"
    );
    assert!(titles.iter().any(|t| t.starts_with("1 due in 45–50 min")), "{titles:?}");
    let heights = run(
        &browser,
        "return [...document.querySelectorAll('#chart-hour rect.bar')].map(r => r.getBBox().height).filter(h => h > 0);",
    )
    .await;
    let heights: Vec<f64> = serde_json::from_value(heights).unwrap();
    assert_eq!(heights.len(), 2, "{heights:?}");
    assert!(
        heights[1] * 20.0 < heights[0],
        "the lone element's bar is a sliver: {heights:?}"
    );
    // Nothing moved and no lag: the history axes top at 1 and 1 s.
    assert_eq!(svg_texts(&browser, "#chart-flow text.tick").await, ["0", "1"]);
    assert_eq!(svg_texts(&browser, "#chart-lag text.tick").await, ["0", "500ms", "1s"]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    screenshot(&browser, "queue-big").await;
    browser.close().await.unwrap();
    driver.session = None;
}

/// Consumer trouble on the overview and the queue page: ready values nobody
/// takes are flagged and rank high, their oldest one's wait shows where a
/// transfer recorded its due time ("unknown" where none did), and a pause
/// older than an hour says how old it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_flags_ready_values_nobody_takes_and_long_pauses() {
    let server = RedisServer::start().await;
    for name in ["a-calm", "long-paused", "stuck", "stuck-old"] {
        seed::offer(&server, name, "later", 3_600).await;
    }
    let keys = |name: &str| delayq::QueueKeys::new(name).unwrap();
    let redis = seed::raw(&server).await;
    let _: () = redis
        .rpush(keys("stuck").destination(), vec!["a", "b", "c"])
        .await
        .unwrap();
    let _: () = redis
        .rpush(keys("stuck-old").destination(), vec!["old", "new"])
        .await
        .unwrap();
    let now = seed::now_ms();
    // Due three hours ago, as a transfer records it while tracking is on.
    let _: () = redis
        .zadd(
            keys("stuck-old").due(),
            None,
            None,
            false,
            false,
            ((now - 3 * 3_600_000) as f64, "old"),
        )
        .await
        .unwrap();
    let _: () = redis
        .set(
            keys("long-paused").paused(),
            now - 2 * 3_600_000 - 60_000,
            None,
            None,
            false,
        )
        .await
        .unwrap();

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/")).await.unwrap();
    let want = ["stuck-old", "stuck", "long-paused", "a-calm"];
    eventually(WAIT, "the attention order", || {
        let browser = browser.clone();
        async move { rows(&browser).await == want }
    })
    .await;
    wait_text(
        &browser,
        r#"tr[data-queue="stuck"] td.name .badge.untaken"#,
        "nobody takes",
    )
    .await;
    assert_eq!(text(&browser, r#"tr[data-queue="stuck"] td.waiting"#).await, "unknown");
    let waiting = text(&browser, r#"tr[data-queue="stuck-old"] td.waiting"#).await;
    assert!(waiting.starts_with("3h"), "{waiting:?}");
    assert_eq!(text(&browser, r#"tr[data-queue="a-calm"] td.waiting"#).await, "–");
    assert_eq!(
        text(&browser, r#"tr[data-queue="long-paused"] td.name .badge.paused"#).await,
        "paused 2h1m"
    );
    screenshot(&browser, "overview-consumer-trouble").await;

    browser.goto(&format!("{url}/queue?name=stuck")).await.unwrap();
    wait_text(&browser, "#oldest-ready", "unknown").await;
    let title = super::attr(&browser, "#oldest-ready", "title")
        .await
        .unwrap_or_default();
    assert!(title.contains("no transfer recorded"), "{title:?}");
    wait_text(&browser, "#untaken-badge", "nobody takes").await;
    screenshot(&browser, "queue-untaken").await;
    browser.goto(&format!("{url}/queue?name=stuck-old")).await.unwrap();
    eventually(WAIT, "the oldest ready value's wait", || {
        let browser = browser.clone();
        async move { text(&browser, "#oldest-ready").await.starts_with("3h") }
    })
    .await;
    browser.close().await.unwrap();
    driver.session = None;
}
