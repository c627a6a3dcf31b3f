//! Groups on the queue page in headless Chromium: values offered with a
//! group key through the library show as grouped under the pending and
//! ready counts, the Groups card says the settings, the keys runnable and
//! held (a held key's markup stays text), and the editor sets a key's
//! concurrency to 2, read back on the page and by the library.

use std::time::Duration;

use delayq::groups::GroupLimits;
use delayq::StringCodec;
use fantoccini::Locator;

use super::{attr, browser, click, prop, screenshot, serve, start_driver, text, wait_shown, wait_text, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

const MARKUP: &str = "<img src=x onerror=alert(1)>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_sees_the_groups_and_sets_a_keys_concurrency() {
    let server = RedisServer::start().await;
    seed::offer(&server, "orders", "plain-later", 600).await;
    seed::grouped(
        &server,
        "orders",
        &[
            ("charge-1", "customer-7", 0),
            ("charge-2", "customer-7", 0),
            ("charge-3", "customer-7", 0),
            ("refund-1", MARKUP, 0),
            ("charge-4", "customer-7", 900),
        ],
    )
    .await;
    // A failed value under hold keeps its key (the markup one) held for 5
    // minutes; the other key runs one of its values.
    let client = seed::client(&server).await;
    let consumers = client
        .reliable_queue("orders", StringCodec)
        .unwrap()
        .without_transfer()
        .with_visibility_timeout(Duration::from_secs(600));
    let mut taken = Vec::new();
    for _ in 0..2 {
        taken.push(
            consumers
                .take_timeout(Duration::from_secs(10))
                .await
                .unwrap()
                .expect("one value of each key"),
        );
    }
    let refund = taken.iter().position(|d| d.value() == "refund-1").expect("a turn each");
    assert!(taken.remove(refund).nack(Duration::from_secs(300)).await.unwrap());

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    // charge-2, charge-3 and the held refund-1 wait in their lines; charge-4 later.
    wait_text(&browser, "#ready-grouped", "(3 grouped)").await;
    wait_text(&browser, "#pending-grouped", "(1 grouped)").await;
    assert!(attr(&browser, "#ready-grouped", "title")
        .await
        .unwrap()
        .contains("Java does not see them"));
    wait_text(&browser, "#pending", "2").await;
    wait_text(&browser, "#page-info", "1–1 of 1, in due order; 1 grouped not listed").await;

    wait_shown(&browser, "#groups", true).await;
    wait_text(
        &browser,
        "#groups-settings",
        "concurrency 1 per key, no rate, on failure hold",
    )
    .await;
    // customer-7 is at its concurrency (charge-1 in flight): neither runnable nor held.
    wait_text(&browser, "#groups-runnable", "0").await;
    wait_text(&browser, "#groups-held", "1").await;
    let next = text(&browser, "#groups-next").await;
    assert!(
        next.starts_with("next freed in 4m") || next.starts_with("next freed in 5m"),
        "{next:?}"
    );
    assert!(next.ends_with(&format!(": {MARKUP}")), "the key as text: {next:?}");
    assert!(
        browser.find_all(Locator::Css("#groups img")).await.unwrap().is_empty(),
        "a group key's markup stays text"
    );
    assert_eq!(
        prop(&browser, "#group-concurrency", "value").await.as_deref(),
        Some("1")
    );
    assert_eq!(
        prop(&browser, "#group-on-failure", "value").await.as_deref(),
        Some("hold")
    );

    // Concurrency 2 through the editor: the page and the library read it back.
    let field = browser.find(Locator::Css("#group-concurrency")).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys("2").await.unwrap();
    click(&browser, "#set-groups").await;
    eventually(WAIT, "the flash saying the settings", || {
        let browser = browser.clone();
        async move {
            text(&browser, "#flash")
                .await
                .contains("orders groups: concurrency 2 per key")
        }
    })
    .await;
    wait_text(
        &browser,
        "#groups-settings",
        "concurrency 2 per key, no rate, on failure hold",
    )
    .await;
    assert_eq!(
        consumers.group_limits().await.unwrap(),
        GroupLimits::new().concurrency(2)
    );
    assert_eq!(
        prop(&browser, "#group-concurrency", "value").await.as_deref(),
        Some("2")
    );
    screenshot(&browser, "queue-groups").await;

    // On a phone the card wraps: nothing scrolls sideways, a long key neither.
    browser.set_window_size(390, 844).await.unwrap();
    let fits = browser
        .execute(
            "document.getElementById('groups').scrollIntoView({block: 'start'});\
             return document.documentElement.scrollWidth <= window.innerWidth + 1",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        fits,
        serde_json::json!(true),
        "the queue page scrolls sideways on a phone"
    );
    screenshot(&browser, "queue-groups-phone").await;
    browser.set_window_size(1400, 1500).await.unwrap();

    // A bad number is refused with the server's message; nothing changes.
    let field = browser.find(Locator::Css("#group-concurrency")).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys("0").await.unwrap();
    click(&browser, "#set-groups").await;
    eventually(WAIT, "the flash refusing 0", || {
        let browser = browser.clone();
        async move { text(&browser, "#flash").await.contains("concurrency must be 1 or more") }
    })
    .await;
    assert_eq!(
        consumers.group_limits().await.unwrap(),
        GroupLimits::new().concurrency(2)
    );
    eventually(WAIT, "the editor back at 2", || {
        let browser = browser.clone();
        async move { prop(&browser, "#group-concurrency", "value").await.as_deref() == Some("2") }
    })
    .await;

    // A queue without groups: no card, no grouped counts.
    seed::queue(&server, "plain", 0, 2, 0).await;
    browser.goto(&format!("{url}/queue?name=plain")).await.unwrap();
    wait_text(&browser, "#ready", "2").await;
    wait_shown(&browser, "#groups", false).await;
    wait_shown(&browser, "#ready-grouped", false).await;
    for delivery in taken {
        assert!(delivery.ack().await.unwrap());
    }
    browser.close().await.unwrap();
    driver.session = None;
    client.shutdown().await;
}
