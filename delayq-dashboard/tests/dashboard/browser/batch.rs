//! The batch page in headless Chromium (issue 46, item 5: the batch's
//! state is visible): a batch of 20 offered with the library, a library
//! Worker handling 15 and dead-lettering 5; the page's bar and counts, the
//! batch delivered once its completion reaches its target; a member's job
//! page linking to it; the live events' sentence; ids as text.

use std::time::Duration;

use delayq::batch::{BatchOptions, BatchState};
use delayq::worker::{Permanent, RetryPolicy};
use delayq::StringCodec;
use fantoccini::Locator;

use super::{attr, browser, click, screenshot, serve, start_driver, text, wait_text, Browser};
use crate::redis_server::RedisServer;
use crate::seed;

const QUEUE: &str = "imports";
const TARGET: &str = "imports-done";
/// Markup in a batch id (which may not hold a '/', so no closing tag).
const BATCH: &str = "<b>x<b> <img src=x onerror=window.pwned=1>";

/// What a script on the page answers.
async fn js(browser: &Browser, script: &str) -> serde_json::Value {
    browser.execute(script, vec![]).await.unwrap()
}

/// `text` with every byte but letters, digits and `-_.` percent-encoded.
fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// No element came of the ids' markup, and no script ran.
async fn no_markup(browser: &Browser) {
    assert_eq!(
        js(browser, "return document.querySelectorAll('b, img').length").await,
        0
    );
    assert_eq!(js(browser, "return window.pwned === undefined").await, true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batchs_page_shows_its_members_ending_and_its_completion_delivered() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    client
        .enable_events(&delayq::QueueKeys::new(QUEUE).unwrap(), 1000)
        .await
        .unwrap();
    let dq = client.delayed_queue(QUEUE, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    // A batch id with "</b>" is refused by the library (no '/' in an id).
    assert!(matches!(
        dq.offer_batch([("a".to_owned(), Duration::ZERO)], &BatchOptions::new().id("<b>x</b>"))
            .await,
        Err(delayq::Error::InvalidArgument(_))
    ));
    // 20 rows; the last 5 fail for good.
    let items: Vec<(String, Duration)> = (1..=20)
        .map(|i| {
            (
                if i > 15 {
                    format!("fail-{i}")
                } else {
                    format!("row-{i}")
                },
                Duration::ZERO,
            )
        })
        .collect();
    let options = BatchOptions::new()
        .id(BATCH)
        .on_complete(TARGET, serde_json::json!({ "file": "nov.csv" }));
    assert_eq!(dq.offer_batch(items, &options).await.unwrap(), BATCH);
    dq.transfer_now().await.unwrap();

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    let page = format!("{url}/batch?name={QUEUE}&id={}", urlencode(BATCH));

    // Open: nothing ended yet.
    browser.goto(&page).await.unwrap();
    wait_text(&browser, "#batch-state", "open").await;
    assert_eq!(text(&browser, "#batch-id").await, BATCH, "the id is text, not markup");
    assert_eq!(text(&browser, "#batch-ended").await, "0 / 20");
    assert_eq!(text(&browser, "#batch-waiting").await, "20");
    assert_eq!(text(&browser, "#batch-completed").await, "–");
    let created = text(&browser, "#batch-created").await;
    assert!(created.contains(" ago\n20") && created.contains("UTC"), "{created:?}");
    no_markup(&browser).await;

    // A Worker handles 15 and dead-letters 5; its reaper then offers the
    // completion to its target.
    let worker = client
        .worker(QUEUE, StringCodec)
        .unwrap()
        .concurrency(1)
        .retry(RetryPolicy::none())
        .run(|row: String| async move {
            tokio::time::sleep(Duration::from_millis(250)).await;
            if row.starts_with("fail") {
                return Err(Permanent::new(format!("{row}: bad row")));
            }
            Ok(())
        });
    // On its way (about 5 s): the bar's parts are as wide as their counts.
    let mut running = String::new();
    for _ in 0..100 {
        running = text(&browser, "#batch-ended").await;
        if running != "0 / 20" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let drawn = js(
        &browser,
        "return [...document.querySelectorAll('#batch-bar .seg')].map((s) => [s.dataset.value, s.style.width])",
    )
    .await;
    for part in drawn.as_array().unwrap() {
        let count: f64 = part[0].as_str().unwrap().parse().unwrap();
        let width = part[1].as_str().unwrap();
        assert_eq!(width, format!("{}%", count * 100.0 / 20.0), "{drawn}");
    }
    screenshot(&browser, "batch-running").await;
    println!("batch-running shows {running}");
    wait_text(&browser, "#batch-state", "delivered").await;
    assert_eq!(text(&browser, "#batch-handled").await, "15");
    assert_eq!(text(&browser, "#batch-dead").await, "5");
    assert_eq!(text(&browser, "#batch-cancelled").await, "0");
    assert_eq!(text(&browser, "#batch-waiting").await, "0");
    assert_eq!(text(&browser, "#batch-ended").await, "20 / 20");
    assert_eq!(text(&browser, "#batch-percent").await, "100% ended");
    let widths = js(
        &browser,
        "return [...document.querySelectorAll('#batch-bar .seg')].map((s) => s.style.width)",
    )
    .await;
    assert_eq!(widths, serde_json::json!(["75%", "25%", "0%"]));
    let bar = attr(&browser, "#batch-bar", "aria-label").await.unwrap();
    assert_eq!(bar, "20 of 20 ended: 15 handled, 5 dead-lettered, 0 cancelled");
    let completed = text(&browser, "#batch-completed").await;
    assert!(
        completed.contains(" ago\n20") && completed.contains("UTC"),
        "{completed:?}"
    );
    // The completion's queue, a link to its page.
    assert_eq!(text(&browser, "#batch-target a").await, TARGET);
    let href = attr(&browser, "#batch-target a", "href").await.unwrap();
    assert!(href.ends_with(&format!("/queue?name={TARGET}")), "{href}");
    let detail = text(&browser, "#batch-detail").await;
    assert!(
        detail.starts_with(&format!(
            "Every member has ended, and its completion was offered to {TARGET}. Members: {BATCH}/1 … {BATCH}/20."
        )),
        "{detail}"
    );
    assert_eq!(
        dq.batch(BATCH).await.unwrap().unwrap().state,
        BatchState::Delivered,
        "the page says what the library reads"
    );
    no_markup(&browser).await;
    screenshot(&browser, "batch").await;

    // A member's job page links to its batch.
    browser
        .goto(&format!(
            "{url}/job?name={QUEUE}&id={}",
            urlencode(&format!("{BATCH}/7"))
        ))
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "handled").await;
    wait_text(
        &browser,
        "#job-batch",
        &format!("member 7 of 20 in batch {BATCH} · delivered · 20 of 20 ended"),
    )
    .await;
    no_markup(&browser).await;
    screenshot(&browser, "batch-member-job").await;
    click(&browser, "#job-batch a.batch-link").await;
    wait_text(&browser, "#batch-state", "delivered").await;
    assert_eq!(text(&browser, "#batch-id").await, BATCH);
    // A job that is no member has no such line.
    browser
        .goto(&format!("{url}/job?name={QUEUE}&id=order-1"))
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "unknown").await;
    assert!(attr(&browser, "#job-batch", "hidden").await.is_some());

    // The live events: the batch completed, as a sentence with a link.
    browser.goto(&format!("{url}/queue?name={QUEUE}")).await.unwrap();
    let details = "#events-table tbody tr.event[data-kind=\"batch_completed\"] td.details";
    wait_text(
        &browser,
        details,
        &format!("batch {BATCH} completed: 15 handled, 5 dead-lettered, 0 cancelled"),
    )
    .await;
    assert_eq!(
        text(
            &browser,
            "#events-table tbody tr.event[data-kind=\"batch_completed\"] td.kind"
        )
        .await,
        "batch_completed"
    );
    let link = browser
        .find(Locator::Css(&format!("{details} a.batch-link")))
        .await
        .unwrap();
    assert_eq!(link.text().await.unwrap(), BATCH, "the id is text");
    let href = link.attr("href").await.unwrap().unwrap();
    assert!(
        href.contains(&format!("/batch?name={QUEUE}&id=%3Cb%3Ex%3Cb%3E")),
        "{href}"
    );
    no_markup(&browser).await;
    browser
        .execute("document.getElementById('events-section').scrollIntoView()", vec![])
        .await
        .unwrap();
    screenshot(&browser, "events-batch").await;

    // No such batch: the page says so, and stays live.
    browser
        .goto(&format!("{url}/batch?name={QUEUE}&id=never"))
        .await
        .unwrap();
    wait_text(&browser, "#batch-state", "not found").await;
    assert!(text(&browser, "#batch-detail")
        .await
        .starts_with("no such batch \"never\""));
    wait_text_prefix(&browser, "#live", "live · ").await;
    worker.shutdown().await;
    client.shutdown().await;
}

/// A batch whose offer the queue's limits stopped half way: `offering`,
/// with how many are offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_stopped_half_way_shows_as_offering() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let dq = client.delayed_queue("limited", StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    dq.set_limits(&delayq::limits::Limits::none().max_size(5))
        .await
        .unwrap();
    let items: Vec<(String, Duration)> = (1..=8)
        .map(|i| (format!("row-{i}"), Duration::from_secs(3600)))
        .collect();
    assert!(dq.offer_batch(items, &BatchOptions::new().id("half")).await.is_err());

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser
        .goto(&format!("{url}/batch?name=limited&id=half"))
        .await
        .unwrap();
    wait_text(&browser, "#batch-state", "offering").await;
    assert_eq!(text(&browser, "#batch-offering").await, "5 of 8 offered");
    assert_eq!(text(&browser, "#batch-target").await, "none asked");
    assert!(text(&browser, "#batch-detail")
        .await
        .starts_with("Its offer has added 5 of 8 members"));
    screenshot(&browser, "batch-offering").await;
    client.shutdown().await;
}

/// Waits until the element `css` starts with `prefix`.
async fn wait_text_prefix(browser: &Browser, css: &str, prefix: &str) {
    let deadline = tokio::time::Instant::now() + super::WAIT;
    let mut seen = String::new();
    while tokio::time::Instant::now() < deadline {
        seen = text(browser, css).await;
        if seen.starts_with(prefix) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{css} reads {seen:?}, not {prefix}…");
}
