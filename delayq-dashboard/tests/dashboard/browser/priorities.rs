//! Priorities on the queue page in headless Chromium: the ready list shows
//! what is taken next (the values with a priority first, each with a "P7"
//! badge saying what it means), the counts say how many have a priority,
//! the pending table and the whole-queue buttons count only what they list
//! and take, and a value's markup stays text; in the light and the dark theme.

use fantoccini::Locator;

use super::{attr, browser, click, screenshot, serve, start_driver, text, wait_shown, wait_text, Browser};
use crate::redis_server::RedisServer;
use crate::seed;

const MARKUP: &str = "urgent <b>refund</b>";

async fn scroll_to(browser: &Browser, css: &str) {
    let script = format!("document.querySelector({css:?}).scrollIntoView({{block: 'center'}})");
    browser.execute(&script, vec![]).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ready_list_shows_priority_values_first_with_a_badge_and_the_counts_say_how_many() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 0, 3, 0).await;
    seed::offer(&server, "orders", "plain-later", 600).await;
    seed::priorities(
        &server,
        "orders",
        &[("p2-report", 2, 0), (MARKUP, 7, 0), ("p5-later", 5, 600)],
    )
    .await;
    seed::queue(&server, "plain", 0, 2, 0).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_text(&browser, "#ready", "5").await;
    wait_text(&browser, "#ready-priority", "(2 delayq-only)").await;
    wait_text(&browser, "#pending", "2").await;
    wait_text(&browser, "#pending-priority", "(1 delayq-only)").await;
    assert!(attr(&browser, "#ready-priority", "title")
        .await
        .unwrap()
        .contains("Java does not see them"));

    // Take order: P7, P2, then the plain list, which has no badge.
    let badges = browser
        .find_all(Locator::Css("#ready-list li .badge.priority"))
        .await
        .unwrap();
    assert_eq!(badges.len(), 2, "one badge per priority value");
    assert_eq!(
        text(&browser, "#ready-list li:nth-child(1) .badge.priority").await,
        "P7"
    );
    assert_eq!(
        attr(&browser, "#ready-list li:nth-child(1) .badge.priority", "title")
            .await
            .as_deref(),
        Some("priority 7: taken before lower levels and the plain list; Java does not see it")
    );
    let first = text(&browser, "#ready-list li:nth-child(1)").await;
    assert!(first.starts_with("P7") && first.ends_with(MARKUP), "{first:?}");
    assert!(
        browser
            .find_all(Locator::Css("#ready-list b"))
            .await
            .unwrap()
            .is_empty(),
        "a value's markup stays text"
    );
    assert_eq!(
        text(&browser, "#ready-list li:nth-child(2) .badge.priority").await,
        "P2"
    );
    assert!(text(&browser, "#ready-list li:nth-child(2)")
        .await
        .ends_with("p2-report"));
    assert_eq!(text(&browser, "#ready-list li:nth-child(3)").await, "ready-0");
    assert_eq!(text(&browser, "#ready-list li:nth-child(5)").await, "ready-2");

    // The pending table lists the delayed queue's one element and says what
    // it leaves out; Purge and Migrate count what they take.
    wait_text(
        &browser,
        "#page-info",
        "1–1 of 1, in due order; 1 delayq-only (priority, TTL or headers) not listed",
    )
    .await;
    assert_eq!(
        text(&browser, "#pending-table tbody tr td.payload").await,
        "plain-later"
    );
    wait_text(&browser, "#purge", "Purge 1 pending").await;
    wait_text(&browser, "#migrate", "Migrate 1 pending").await;

    screenshot(&browser, "queue-priorities-counts").await;
    scroll_to(&browser, ".ready-head").await;
    screenshot(&browser, "queue-priorities-ready").await;

    // Dark: the badge keeps its own colours, readable on the dark panel.
    click(&browser, "#theme").await;
    let colours = browser
        .execute(
            "const b = getComputedStyle(document.querySelector('#ready-list .badge.priority'));\
             return [b.backgroundColor, b.color]",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        colours,
        serde_json::json!(["rgb(29, 43, 74)", "rgb(164, 188, 253)"]),
        "the dark theme's badge"
    );
    scroll_to(&browser, ".ready-head").await;
    screenshot(&browser, "queue-priorities-ready-dark").await;

    // A queue without priorities: no note under the counts, no badge.
    browser.goto(&format!("{url}/queue?name=plain")).await.unwrap();
    wait_text(&browser, "#ready-list li:nth-child(2)", "ready-1").await;
    wait_shown(&browser, "#ready-priority", false).await;
    wait_shown(&browser, "#pending-priority", false).await;
    assert!(browser
        .find_all(Locator::Css("#ready-list .badge.priority"))
        .await
        .unwrap()
        .is_empty());
    browser.close().await.unwrap();
    driver.session = None;
}
