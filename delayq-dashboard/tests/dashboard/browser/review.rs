//! What an operator's review of the dashboard on realistic data found.

use std::time::Duration;

use fantoccini::{Client as Browser, Locator};

use super::elements::{click, many};
use super::{browser, screenshot, serve, start_driver, text, WAIT};
use crate::redis_server::RedisServer;
use crate::seed;

/// Whether `css` is shown and can be pressed.
async fn pressable(browser: &Browser, css: &str) -> bool {
    match browser.find(Locator::Css(css)).await {
        Ok(node) => node.is_displayed().await.unwrap_or(false) && node.is_enabled().await.unwrap_or(false),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_search_keeps_its_matches_across_continue() {
    let server = RedisServer::start().await;
    // Matches in the first and the third 10,000 (one request's most), none after.
    many(
        &server,
        "big",
        45_000,
        seed::now_ms() + 3_600_000,
        &[(5, "job-early"), (25_000, "job-late")],
    )
    .await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=big")).await.unwrap();
    super::wait_text(&browser, "#pending", "45,000").await;
    browser
        .find(Locator::Css("#search-q"))
        .await
        .unwrap()
        .send_keys("job-")
        .await
        .unwrap();
    click(&browser, "#search-text").await;
    // However far each press gets, Continue until the search has looked at everything.
    let want = "2 matches; looked at elements 1–45,000 of 45,000";
    let deadline = tokio::time::Instant::now() + WAIT * 2;
    loop {
        let info = text(&browser, "#search-info").await;
        if info == want {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "search reads {info:?}, not {want:?}"
        );
        if info.contains("continue from there") && pressable(&browser, "#search-more").await {
            click(&browser, "#search-more").await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let found: Vec<String> = {
        let mut found = Vec::new();
        for row in browser
            .find_all(Locator::Css("#search-table tbody td.payload"))
            .await
            .unwrap()
        {
            found.push(row.text().await.unwrap());
        }
        found
    };
    assert_eq!(found, ["job-early", "job-late"], "the early match stays after Continue");
    screenshot(&browser, "review-search-accumulates").await;
    browser.close().await.unwrap();
    driver.session = None;
}
