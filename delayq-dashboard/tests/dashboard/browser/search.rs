//! Search every queue in headless Chromium: from the overview's box to the
//! results page, a request bounded to 5,000 values that says how far it
//! looked, Continue, markup in values kept as text, a match's link to its
//! queue's page and an id's to its job's page, and a search that finds
//! nothing saying so.

use std::time::Duration;

use fantoccini::Locator;

use super::{browser, http, screenshot, serve, start_driver, text, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

const QUEUE: &str = "заказы-📦";

/// Waits until the element `css` reads something that starts with `want`.
async fn wait_prefix(browser: &fantoccini::Client, css: &str, want: &str) -> String {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::time::Instant::now() < deadline {
        seen = text(browser, css).await;
        if seen.starts_with(want) {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{css} reads {seen:?}, not {want:?}…");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_from_the_overview_finds_values_in_every_queue_and_state() {
    let server = RedisServer::start().await;
    // 5,200 values that do not match before the one that does.
    seed::queue(&server, "big", 5_200, 0, 0).await;
    seed::offer(&server, "big", "far away: ord-40", 200_000).await;
    seed::offer(&server, QUEUE, "Order ORD-42 <b>bold</b> for Анна", 3_600).await;
    let client = seed::client(&server).await;
    client
        .delayed_queue::<String, _>(QUEUE, delayq::StringCodec)
        .unwrap()
        .without_transfer()
        .offer_with_id("ord-43", &"second order".to_owned(), Duration::from_secs(7_200))
        .await
        .unwrap();
    client.shutdown().await;
    let keys = delayq::QueueKeys::new(QUEUE).unwrap();
    let redis = seed::raw(&server).await;
    let _: () = delayq::fred::interfaces::ListInterface::rpush(&redis, keys.destination(), "ready ord-44")
        .await
        .unwrap();
    seed::dead_letter(&server, "mail", b"bounced ORD-45").await;

    let url = serve(&server).await;
    // The sampler knows every queue before the search asks it.
    eventually(WAIT, "every queue sampled", || {
        let url = url.clone();
        async move { http(&url, "GET", "/api/overview").await.1.contains("\"matching\":3") }
    })
    .await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    // From the overview's box to the results page.
    browser.goto(&format!("{url}/")).await.unwrap();
    let field = browser
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Id("search-everywhere-text"))
        .await
        .unwrap();
    field.send_keys("ORD-4\n").await.unwrap();
    let first = wait_prefix(&browser, "#found-info", "no match; searched 5,000 of").await;
    assert_eq!(first, "no match; searched 5,000 of 5,205 values; continue from there");
    assert!(browser
        .current_url()
        .await
        .unwrap()
        .as_str()
        .ends_with("/search?text=ORD-4"));

    // Continue: the rest, from where the first request stopped.
    browser
        .find(Locator::Id("found-more"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_prefix(
        &browser,
        "#found-info",
        "5 matches; searched 5,205 of 5,205 values: all",
    )
    .await;
    let rows = browser.find_all(Locator::Css("#found tbody tr")).await.unwrap();
    let mut seen = Vec::new();
    for row in &rows {
        let queue = row.attr("data-queue").await.unwrap().unwrap();
        let state = row.attr("data-state").await.unwrap().unwrap();
        let payload = row
            .find(Locator::Css("td.payload"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        seen.push((queue, state, payload));
    }
    let row = |q: &str, s: &str, p: &str| (q.to_owned(), s.to_owned(), p.to_owned());
    assert_eq!(
        seen,
        [
            row("big", "pending", "far away: ord-40"),
            row("mail", "dead", "bounced ORD-45"),
            row(QUEUE, "pending", "Order ORD-42 <b>bold</b> for Анна"),
            row(QUEUE, "pending", "second order"),
            row(QUEUE, "ready", "ready ord-44"),
        ]
    );
    // The column holds a pending element's due time or a dead letter's why,
    // and says so.
    let head = super::prop(&browser, "#found thead th:nth-child(4)", "textContent").await;
    assert_eq!(head.as_deref(), Some("due or why"));
    // Markup in a value is text, not markup.
    assert!(browser
        .find_all(Locator::Css("#found td.payload b"))
        .await
        .unwrap()
        .is_empty());
    screenshot(&browser, "search").await;
    // An id links to its job's page.
    let job = browser
        .find(Locator::Css(&format!(
            r#"#found tr[data-queue="{QUEUE}"]:nth-child(4) td.id a"#
        )))
        .await
        .unwrap();
    assert_eq!(job.text().await.unwrap(), "ord-43");
    let job_href = job.attr("href").await.unwrap().unwrap();
    assert!(
        job_href.starts_with("/job?name=") && job_href.ends_with("&id=ord-43"),
        "{job_href}"
    );

    // A pending match links to its queue's page, which finds it again.
    let link = browser
        .find(Locator::Css(&format!(
            r#"#found tr[data-queue="{QUEUE}"]:nth-child(4) td.name a"#
        )))
        .await
        .unwrap();
    link.click().await.unwrap();
    eventually(WAIT, "the queue page finds the element by its id", || {
        let browser = browser.clone();
        async move {
            text(&browser, "#search-table tbody").await.contains("second order")
                && text(&browser, "#search-info").await.contains("found by its id")
        }
    })
    .await;
    screenshot(&browser, "search-to-queue").await;

    // The id's link: the job's page, pending.
    browser.goto(&format!("{url}{job_href}")).await.unwrap();
    eventually(WAIT, "the job page shows the pending job", || {
        let browser = browser.clone();
        async move { text(&browser, "#job-id").await == "ord-43" && text(&browser, "#job-state").await == "pending" }
    })
    .await;

    // Nothing matches: said so, after looking at everything.
    browser
        .goto(&format!("{url}/search?text=no%20such%20order"))
        .await
        .unwrap();
    wait_prefix(
        &browser,
        "#found-info",
        "no match; searched 5,000 of 5,205 values; continue",
    )
    .await;
    browser
        .find(Locator::Id("found-more"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_prefix(&browser, "#found-info", "no match; searched 5,205 of 5,205 values: all").await;
    assert!(browser
        .find(Locator::Id("found-more"))
        .await
        .unwrap()
        .attr("hidden")
        .await
        .unwrap()
        .is_some());
}
