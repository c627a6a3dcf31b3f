//! The queue page's live events in headless Chromium: rows appear as the
//! library writes events, without a reload; the counts follow; the list
//! pauses and resumes; a queue with events off says how to turn them on.

use std::time::Duration;

use delayq::StringCodec;
use fantoccini::Locator;

use super::{browser, screenshot, serve, start_driver, text, wait_text, Browser, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

/// The texts of the column `class` of the event rows, newest first.
async fn column(browser: &Browser, class: &str) -> Vec<String> {
    let mut texts = Vec::new();
    let css = format!("#events-table tbody tr.event td.{class}");
    for cell in browser.find_all(Locator::Css(&css)).await.unwrap_or_default() {
        texts.push(cell.text().await.unwrap_or_default());
    }
    texts
}

/// Waits until the newest row's details read `want`.
async fn newest_details(browser: &Browser, want: &str) {
    wait_text(browser, "#events-table tbody tr.event:first-child td.details", want).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_events_appear_on_the_queue_page_without_a_reload() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    client
        .enable_events(&delayq::QueueKeys::new("orders").unwrap(), 1000)
        .await
        .unwrap();
    let q = client.delayed_queue("orders", StringCodec).unwrap();
    q.offer_with_id("first", &"first".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();

    // The page opens with what the stream keeps.
    newest_details(&browser, "count 1 · id first").await;
    let state = text(&browser, "#events-state").await;
    assert!(
        state.starts_with("events on: the counts refresh on each event"),
        "{state}"
    );
    wait_text(&browser, "#pending", "1").await;

    // New events appear at the top as they happen; markup in an id stays text.
    let id = "<img src=x onerror=document.title='pwned'>";
    q.offer_with_id(id, &"later".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    newest_details(&browser, &format!("count 1 · id {id}")).await;
    wait_text(&browser, "#pending", "2").await;
    q.offer(&"now".into(), Duration::ZERO).await.unwrap();
    let reliable = client.reliable_queue("orders", StringCodec).unwrap();
    let delivery = reliable.take().await.unwrap();
    assert!(delivery.ack().await.unwrap());
    wait_text(&browser, "#events-table tbody tr.event:first-child td.kind", "acked").await;
    assert!(q.cancel(id).await.unwrap());
    newest_details(&browser, &format!("count 1 · id {id}")).await;
    wait_text(
        &browser,
        "#events-table tbody tr.event:first-child td.kind",
        "cancelled",
    )
    .await;
    wait_text(&browser, "#pending", "1").await;
    let kinds = column(&browser, "kind").await;
    let shown: Vec<&str> = kinds
        .iter()
        .map(String::as_str)
        .filter(|k| *k != "transferred")
        .collect();
    assert_eq!(
        shown,
        ["cancelled", "acked", "claimed", "offered", "offered", "offered"]
    );
    let times = column(&browser, "time").await;
    assert!(
        times.iter().all(|t| t.contains(" UTC+") || t.contains(" UTC-")),
        "times say their zone: {times:?}"
    );
    assert_ne!(browser.title().await.unwrap(), "pwned");
    assert!(
        browser.find(Locator::Css("#events-table img")).await.is_err(),
        "no markup from an id"
    );
    screenshot(&browser, "events-live").await;

    // Paused, the list holds new events; resumed, it shows them.
    let rows = column(&browser, "kind").await.len();
    browser
        .find(Locator::Css("#events-pause"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&browser, "#events-pause", "Resume list").await;
    q.offer_with_id("while-paused", &"v".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    wait_text(&browser, "#events-info", "paused · 1 new while paused").await;
    assert_eq!(column(&browser, "kind").await.len(), rows, "nothing added while paused");
    screenshot(&browser, "events-paused").await;
    browser
        .find(Locator::Css("#events-pause"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    newest_details(&browser, "count 1 · id while-paused").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_with_events_off_says_how_to_turn_them_on_and_then_shows_them() {
    let server = RedisServer::start().await;
    seed::offer(&server, "plain", "x", 3600).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=plain")).await.unwrap();
    wait_text(
        &browser,
        "#events-state",
        "events are off for this queue — delayq events enable plain turns them on; the counts refresh every 2 s",
    )
    .await;
    wait_text(
        &browser,
        "#events-table tbody tr.empty",
        "no events yet: they appear here as they happen",
    )
    .await;
    screenshot(&browser, "events-off").await;

    // Turned on from elsewhere: the page notices (the switch is read every
    // 15 s) and shows what comes.
    let client = seed::client(&server).await;
    client
        .enable_events(&delayq::QueueKeys::new("plain").unwrap(), 1000)
        .await
        .unwrap();
    eventually(WAIT, "the page sees events turned on", || {
        let browser = browser.clone();
        async move { text(&browser, "#events-state").await.starts_with("events on") }
    })
    .await;
    let q = client.delayed_queue("plain", StringCodec).unwrap();
    q.offer_with_id("after-on", &"v".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    newest_details(&browser, "count 1 · id after-on").await;
}
