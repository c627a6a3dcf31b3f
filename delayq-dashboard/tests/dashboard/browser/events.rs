//! The queue page's live events in headless Chromium: rows appear as the
//! library writes events, without a reload; the counts follow; the list
//! pauses and resumes; a queue with events off says how to turn them on.

use std::time::Duration;

use delayq::StringCodec;
use fantoccini::Locator;

use super::{browser, http, screenshot, serve, start_driver, text, wait_shown, wait_text, Browser, WAIT};
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
    super::click(&browser, "#events-pause").await;
    wait_text(&browser, "#events-pause", "Resume list").await;
    q.offer_with_id("while-paused", &"v".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    wait_text(&browser, "#events-info", "paused · 1 new while paused").await;
    assert_eq!(column(&browser, "kind").await.len(), rows, "nothing added while paused");
    screenshot(&browser, "events-paused").await;
    super::click(&browser, "#events-pause").await;
    newest_details(&browser, "count 1 · id while-paused").await;

    // Filtered by kind, then by an id: only matching rows show, the count
    // says how many of how many, and new events follow the filter.
    let all = column(&browser, "kind").await.len();
    super::click(&browser, r#"#events-kind option[value="offered"]"#).await;
    wait_text(&browser, "#events-info", &format!("4 of the last {all} shown")).await;
    assert_eq!(shown_column(&browser, "kind").await, ["offered"; 4]);
    browser
        .find(Locator::Css("#events-find"))
        .await
        .unwrap()
        .send_keys("WHILE")
        .await
        .unwrap();
    wait_text(&browser, "#events-info", &format!("1 of the last {all} shown")).await;
    assert_eq!(shown_column(&browser, "details").await, ["count 1 · id while-paused"]);
    screenshot(&browser, "events-filtered").await;
    q.offer_with_id("while-filtered", &"v".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    q.offer_with_id("other", &"v".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    wait_text(&browser, "#events-info", &format!("2 of the last {} shown", all + 2)).await;
    assert_eq!(
        shown_column(&browser, "details").await,
        ["count 1 · id while-filtered", "count 1 · id while-paused"]
    );
    super::click(&browser, r#"#events-kind option[value=""]"#).await;
    browser
        .find(Locator::Css("#events-find"))
        .await
        .unwrap()
        .clear()
        .await
        .unwrap();
    browser
        .find(Locator::Css("#events-find"))
        .await
        .unwrap()
        .send_keys(" ")
        .await
        .unwrap();
    wait_text(&browser, "#events-info", &format!("{} shown", all + 2)).await;
    assert_eq!(shown_column(&browser, "kind").await.len(), all + 2);

    // An id with no event among the last ones: the filter says so and
    // points to the job's page, which has its whole history.
    let find = browser.find(Locator::Css("#events-find")).await.unwrap();
    find.clear().await.unwrap();
    find.send_keys("while-paused").await.unwrap();
    wait_text(&browser, "#events-info", &format!("1 of the last {} shown", all + 2)).await;
    assert!(
        text(&browser, "#events-hint").await.starts_with("Only the last"),
        "{}",
        text(&browser, "#events-hint").await
    );
    find.clear().await.unwrap();
    find.send_keys("pay-1017").await.unwrap();
    wait_text(&browser, "#events-info", &format!("0 of the last {} shown", all + 2)).await;
    let hint = text(&browser, "#events-hint").await;
    assert!(
        hint.starts_with(&format!("No event among the last {} mentions", all + 2)),
        "{hint}"
    );
    assert_eq!(
        super::attr(&browser, "#events-hint a", "href").await.as_deref(),
        Some("/job?name=orders&id=pay-1017")
    );
    screenshot(&browser, "events-filter-points-to-the-job").await;
    super::click(&browser, "#events-hint a").await;
    wait_text(&browser, "#job-id", "pay-1017").await;
}

/// The texts of the column `class` of the rows the filter shows, newest first.
async fn shown_column(browser: &Browser, class: &str) -> Vec<String> {
    let mut texts = Vec::new();
    let css = format!("#events-table tbody tr.event:not([hidden]) td.{class}");
    for cell in browser.find_all(Locator::Css(&css)).await.unwrap_or_default() {
        texts.push(cell.text().await.unwrap_or_default());
    }
    texts
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

/// A queue page with events on, Redis restarted under it: once Redis
/// answers again the page reads it at once (the events' 15-second fallback
/// does not hold a page that shows an outage), and no header or answer
/// carries the old server's uptime, neither during the outage nor after.
///
/// The page's clock is frozen so the fallback can never fall due, and its
/// queue reads answer the outage's 503 until the events stream is back:
/// without a frozen clock or that order the check would depend on timing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_with_events_on_comes_back_with_redis_and_shows_the_new_servers_uptime() {
    let mut server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let keys = delayq::QueueKeys::new("orders").unwrap();
    client.enable_events(&keys, 1000).await.unwrap();
    seed::offer(&server, "orders", "x", 3600).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_text(&browser, "#pending", "1").await;
    let on = || {
        let browser = browser.clone();
        async move { text(&browser, "#events-state").await.starts_with("events on") }
    };
    eventually(WAIT, "events on", on).await;
    eventually(WAIT, "the header shows the uptime", || {
        let browser = browser.clone();
        async move { text(&browser, "#server").await.contains(" · up ") }
    })
    .await;
    browser
        .execute(
            r#"const frozen = Date.now();
               Date.now = () => frozen;
               const fetch = window.fetch;
               window.heldQueueReads = false;
               window.fetch = async (url, options) => {
                 if (String(url).startsWith("/api/queue?") && window.heldQueueReads) {
                   return new Response(window.outageBody, { status: 503, headers: { "content-type": "application/json" } });
                 }
                 const response = await fetch(url, options);
                 if (String(url).startsWith("/api/queue?") && response.status === 503) {
                   window.outageBody = await response.clone().text();
                 }
                 return response;
               };"#,
            vec![],
        )
        .await
        .unwrap();

    server.kill();
    wait_shown(&browser, "#outage", true).await;
    // The outage's answers and header: no uptime of a server that is gone.
    let (status, body) = http(&url, "GET", "/api/queue?name=orders").await;
    assert_eq!(status, 503, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        body["redis"]["server"]["uptime_seconds"],
        serde_json::Value::Null,
        "{body}"
    );
    eventually(WAIT, "the page's own 503 recorded", || {
        let browser = browser.clone();
        async move {
            browser
                .execute("return typeof window.outageBody === 'string';", vec![])
                .await
                .unwrap()
                == serde_json::json!(true)
        }
    })
    .await;
    let header = text(&browser, "#server").await;
    assert!(!header.contains(" · up "), "{header}");
    browser.execute("window.heldQueueReads = true;", vec![]).await.unwrap();

    server.restart().await;
    // The restarted server kept nothing: events are turned on again.
    seed::client(&server).await.enable_events(&keys, 1000).await.unwrap();
    seed::offer(&server, "orders", "y", 3600).await;
    seed::offer(&server, "orders", "z", 3600).await;
    eventually(WAIT, "events on again", on).await;
    assert!(!text(&browser, "#outage").await.is_empty(), "still the outage");
    browser.execute("window.heldQueueReads = false;", vec![]).await.unwrap();
    wait_shown(&browser, "#outage", false).await;
    wait_text(&browser, "#pending", "2").await;
    // Whatever INFO the page shows now was read from the new server.
    let (status, body) = http(&url, "GET", "/api/queue?name=orders").await;
    assert_eq!(status, 200, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    let server_json = &body["redis"]["server"];
    if !server_json["uptime_seconds"].is_null() {
        assert!(
            server_json["read_at_ms"].as_i64() >= body["redis"]["since_ms"].as_i64(),
            "INFO read after Redis came back: {body}"
        );
    }
    screenshot(&browser, "events-redis-back").await;
}

/// The job events read as sentences, each id a link to its job page (as
/// text): a progress report, a cancel asked, a running job cancelled, a
/// result kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_events_read_as_sentences_with_links_to_the_jobs() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let name = "job-events";
    client
        .enable_events(&delayq::QueueKeys::new(name).unwrap(), 1000)
        .await
        .unwrap();
    let dq = client.delayed_queue(name, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(name, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    let id = "<b>job</b> 1";
    dq.offer_with_id(id, &"one".into(), Duration::ZERO).await.unwrap();
    dq.offer_with_id("job-2", &"two".into(), Duration::ZERO).await.unwrap();
    dq.transfer_now().await.unwrap();
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name={name}")).await.unwrap();
    wait_text(&browser, "#ready", "2").await;

    let running = rq.take().await.unwrap();
    assert!(running.progress(&0.25).await.unwrap());
    rq.cancel_job(id).await.unwrap();
    assert!(running.settle_cancelled().await.unwrap());
    assert!(rq
        .take()
        .await
        .unwrap()
        .ack_with_result(&serde_json::json!({"ok": true}))
        .await
        .unwrap());

    let details = |kind: &str| format!("#events-table tbody tr.event[data-kind=\"{kind}\"] td.details");
    wait_text(&browser, &details("result"), "1 result kept: job-2").await;
    wait_text(
        &browser,
        &details("job_cancelled"),
        &format!("1 job stopped while running, settled as cancelled: {id}"),
    )
    .await;
    wait_text(
        &browser,
        &details("cancel_requested"),
        &format!("cancel asked for job {id} (it was running)"),
    )
    .await;
    let progress = text(&browser, &details("progress")).await;
    assert!(
        progress.starts_with(&format!("job {id} reported progress (delivery ")),
        "{progress}"
    );
    let link = browser
        .find(Locator::Css(&format!("{} a.job-link", details("cancel_requested"))))
        .await
        .unwrap();
    assert_eq!(link.text().await.unwrap(), id, "the id is text");
    let href = link.attr("href").await.unwrap().unwrap();
    assert!(
        href.ends_with("/job?name=job-events&id=%3Cb%3Ejob%3C%2Fb%3E+1"),
        "{href}"
    );
    let bold = browser
        .find_all(Locator::Css("#events-table td.details b"))
        .await
        .unwrap();
    assert!(bold.is_empty(), "no markup came of an id");
    browser
        .execute("document.getElementById('events-section').scrollIntoView()", vec![])
        .await
        .unwrap();
    screenshot(&browser, "events-jobs").await;
    client.shutdown().await;
}
