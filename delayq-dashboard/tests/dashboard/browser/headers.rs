//! Message headers and TTLs on the queue page in headless Chromium: a ready
//! value shows "expires in 5m" and its headers on one muted line under it,
//! cut at the line's end with every header in the title; a dead letter
//! shows its headers the same way. Header text is the offerer's: markup
//! stays text (no element, no script run), unicode shows as it is, and a
//! control character as its escape.

use fantoccini::Locator;

use super::{attr, browser, click, screenshot, serve, start_driver, text, wait_text};
use crate::redis_server::RedisServer;
use crate::seed;

const MARKUP: &str = "<img src=x onerror=alert(1)>";
const UNICODE: &str = "Zürich · 東京 🚀\nline two";
/// Long enough to be cut at the line's end, on the widest panel.
const LONG: &str = "https://checkout-service.eu-west-1.internal.example.com/api/v2/orders/submit?trace=0af7651916cd43dd8448eb211c80319c&span=b7ad6b7169203331&session=5f2b9c1e-8d4a-4f61-9b0e-3c7a2d1e6f80&campaign=spring-sale-2026-newsletter-variant-b";

async fn scroll_to(browser: &fantoccini::Client, css: &str) {
    let script = format!("document.querySelector({css:?}).scrollIntoView({{block: 'center'}})");
    browser.execute(&script, vec![]).await.unwrap();
}

/// The whole text of the element `css`, shown or cut off (WebDriver's text
/// is what is shown: a line cut at its end loses the rest).
async fn content(browser: &fantoccini::Client, css: &str) -> String {
    let script = format!("return document.querySelector({css:?}).textContent");
    let value = browser.execute(&script, vec![]).await.unwrap();
    value.as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_and_expiry_show_under_ready_values_and_dead_letters_as_text() {
    let server = RedisServer::start().await;
    seed::rejected_with_headers(
        &server,
        "orders",
        "refund-17",
        &[("tenant", "acme"), ("source", MARKUP), ("city", UNICODE)],
        "no such account",
    )
    .await;
    seed::headered(
        &server,
        "orders",
        &[
            (
                "order-42",
                0,
                &[("tenant", "acme"), ("source", MARKUP), ("city", UNICODE)],
                300,
            ),
            ("order-43", 7, &[("tenant", "globex"), ("referer", LONG)], 0),
        ],
    )
    .await;
    seed::queue(&server, "orders", 0, 2, 0).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_text(&browser, "#ready", "4").await;
    wait_text(&browser, "#ready-list li:nth-child(4)", "ready-1").await;

    // Take order: P7, the level-0 value with a TTL and headers, the plain list.
    let first = "#ready-list li:nth-child(1)";
    let second = "#ready-list li:nth-child(2)";
    assert_eq!(
        content(&browser, &format!("{first} .offered-with .headers")).await,
        format!("referer={LONG} · tenant=globex"),
        "a P7 value without a TTL: headers only"
    );
    assert!(browser
        .find_all(Locator::Css(&format!("{first} .expires")))
        .await
        .unwrap()
        .is_empty());
    // Every header in the line's title, whatever the line shows.
    assert_eq!(
        attr(&browser, &format!("{first} .offered-with .headers"), "title")
            .await
            .as_deref(),
        Some(format!("2 headers:\nreferer={LONG}\ntenant=globex").as_str())
    );
    let cut = browser
        .execute(
            &format!("const n = document.querySelector('{first} .offered-with'); return n.scrollWidth > n.clientWidth"),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        cut,
        serde_json::json!(true),
        "a long header is cut at the line's end, not wrapped"
    );

    let expires = text(&browser, &format!("{second} .offered-with .expires")).await;
    assert!(
        expires == "expires in 5m" || expires.starts_with("expires in 4m"),
        "300 s TTL: {expires:?}"
    );
    assert!(attr(&browser, &format!("{second} .offered-with .expires"), "title")
        .await
        .unwrap()
        .starts_with("TTL: expires "));
    // Markup as text, unicode as it is, a newline as its escape.
    let shown = format!(r"city=Zürich · 東京 🚀\nline two · source={MARKUP} · tenant=acme");
    assert_eq!(text(&browser, &format!("{second} .offered-with .headers")).await, shown);
    assert_eq!(
        text(&browser, &format!("{second} .offered-with")).await,
        format!("{expires} · {shown}")
    );
    // The value itself reads as before: the headers are a line of their own.
    assert_eq!(
        browser
            .execute(
                &format!("return document.querySelector('{second}').firstChild.textContent"),
                vec![],
            )
            .await
            .unwrap(),
        serde_json::json!("order-42")
    );
    assert_eq!(text(&browser, "#ready-list li:nth-child(3)").await, "ready-0");

    // The dead letter: the same line under its value.
    scroll_to(&browser, "#dead-table").await;
    wait_text(
        &browser,
        "#dead-table tbody tr:first-child td.payload .offered-with",
        &shown,
    )
    .await;
    assert!(text(&browser, "#dead-table tbody tr:first-child td.payload")
        .await
        .starts_with("refund-17"));

    // No element was made from header text and no script of it ran (an
    // alert would be open now, and block this call).
    let images = browser
        .execute("return document.querySelectorAll('img').length", vec![])
        .await
        .expect("no alert open");
    assert_eq!(images, serde_json::json!(0), "no element made from a header");
    assert!(browser.get_alert_text().await.is_err(), "no alert");

    scroll_to(&browser, ".ready-head").await;
    screenshot(&browser, "queue-headers-ready").await;
    scroll_to(&browser, "#dead-table").await;
    screenshot(&browser, "queue-headers-dead").await;
    // Dark: the line stays muted and readable on the dark panel.
    click(&browser, "#theme").await;
    scroll_to(&browser, ".ready-head").await;
    screenshot(&browser, "queue-headers-ready-dark").await;
    browser.close().await.unwrap();
    driver.session = None;
}
