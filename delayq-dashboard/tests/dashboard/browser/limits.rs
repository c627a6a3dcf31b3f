//! The fleet-wide concurrency limit on the queue page, in headless
//! Chromium: set in the limits editor, shown as "in flight N / LIMIT" on
//! the in-flight card, 0 refused with the server's message, and the card
//! marked once the limit is reached (delayq's takes then wait).

use std::time::Duration;

use delayq::StringCodec;
use fantoccini::Locator;

use super::{attr, browser, click, screenshot, serve, start_driver, text, wait_shown, wait_text, Browser, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

/// Waits until the in-flight card reads `want` (label and value on one
/// line, in lower case: the label is upper-cased by the style sheet).
async fn wait_card(browser: &Browser, want: &str) {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::time::Instant::now() < deadline {
        seen = text(browser, "#in-flight-card")
            .await
            .to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if seen == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the in-flight card reads {seen:?}, not {want:?}");
}

async fn flash_says(browser: &Browser, what: &str) {
    eventually(WAIT, &format!("the flash saying {what:?}"), || {
        let browser = browser.clone();
        let what = what.to_owned();
        async move { text(&browser, "#flash").await.contains(&what) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_sets_a_concurrency_limit_and_sees_in_flight_against_it() {
    let server = RedisServer::start().await;
    seed::queue(&server, "crawler", 3, 6, 0).await;
    let client = seed::client(&server).await;
    let jobs = client
        .reliable_queue("crawler", StringCodec)
        .unwrap()
        .without_transfer()
        .with_visibility_timeout(Duration::from_secs(600));
    let mut held = vec![jobs.take().await.unwrap(), jobs.take().await.unwrap()];

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=crawler")).await.unwrap();
    wait_text(&browser, "#limits", "none").await;
    wait_card(&browser, "in flight 2").await;
    wait_shown(&browser, "#in-flight-limit", false).await;

    browser
        .find(Locator::Css("#limit-concurrency"))
        .await
        .unwrap()
        .send_keys("4")
        .await
        .unwrap();
    click(&browser, "#set-limits").await;
    flash_says(&browser, "crawler limits: concurrency=4").await;
    wait_text(&browser, "#limits", "concurrency=4").await;
    wait_card(&browser, "in flight 2 / 4").await;
    let title = attr(&browser, "#in-flight-card", "title").await.unwrap_or_default();
    assert!(title.contains("at most 4 delayq deliveries"), "{title}");
    assert!(!title.contains("reached"), "{title}");

    // 0 is refused by the server, with its message; nothing changes.
    let field = browser.find(Locator::Css("#limit-concurrency")).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys("0").await.unwrap();
    click(&browser, "#set-limits").await;
    flash_says(&browser, "concurrency must be 1 or more").await;
    assert!(
        attr(&browser, "#flash", "class")
            .await
            .unwrap_or_default()
            .contains("error"),
        "shown as an error"
    );
    wait_text(&browser, "#limits", "concurrency=4").await;
    let queue = client.delayed_queue("crawler", StringCodec).unwrap().without_transfer();
    assert_eq!(
        queue.limits().await.unwrap(),
        delayq::limits::Limits::none().concurrency(4)
    );

    // A typo the number field cannot read (it reads as empty, which would
    // post "no limit") is refused in the page; the limit stays.
    let field = browser.find(Locator::Css("#limit-concurrency")).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys("8-").await.unwrap();
    click(&browser, "#set-limits").await;
    flash_says(&browser, "concurrency: not a whole number").await;
    assert_eq!(
        queue.limits().await.unwrap(),
        delayq::limits::Limits::none().concurrency(4)
    );
    let field = browser.find(Locator::Css("#limit-concurrency")).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys("4").await.unwrap();

    // Up to the limit: the card says so, and the next take waits.
    held.push(jobs.take().await.unwrap());
    held.push(jobs.take().await.unwrap());
    wait_card(&browser, "in flight 4 / 4").await;
    eventually(WAIT, "the card marked full", || {
        let browser = browser.clone();
        async move {
            attr(&browser, "#in-flight-card", "class")
                .await
                .unwrap_or_default()
                .contains("full")
        }
    })
    .await;
    // The editor shows the limit again once the refused 0 was posted.
    eventually(WAIT, "the editor back at 4", || {
        let browser = browser.clone();
        async move {
            browser
                .find(Locator::Css("#limit-concurrency"))
                .await
                .unwrap()
                .prop("value")
                .await
                .unwrap()
                .as_deref()
                == Some("4")
        }
    })
    .await;
    screenshot(&browser, "queue-concurrency-limit").await;
    assert!(
        jobs.take_timeout(Duration::from_secs(1)).await.unwrap().is_none(),
        "a fifth delivery waits for a settle"
    );
    // The overview says it too, in the queue's row.
    browser.goto(&url).await.unwrap();
    wait_text(&browser, "td.in-flight.full", "4 / 4").await;
    screenshot(&browser, "overview-concurrency-limit").await;
    browser.goto(&format!("{url}/queue?name=crawler")).await.unwrap();
    for delivery in held {
        assert!(delivery.ack().await.unwrap());
    }
    wait_card(&browser, "in flight 0 / 4").await;
    browser.close().await.unwrap();
    driver.session = None;
    client.shutdown().await;
}
