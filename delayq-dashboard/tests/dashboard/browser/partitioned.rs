//! A partitioned queue in headless Chromium: one row of the overview among
//! ordinary queues, marked "partitioned ×4", its partitions not listed; its
//! page with the layout, each partition linking to its own queue page, and
//! the sums; a name with markup, an ampersand and CJK shown as text.

use std::time::Duration;

use delayq::StringCodec;
use fantoccini::Locator;

use super::{attr, browser, click, screenshot, serve, start_driver, text, wait_text};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

const NAME: &str = "订单 <b>&'orders";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_queue_is_one_row_and_its_page_lists_its_partitions() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = client.create_partitioned_queue(NAME, 4, StringCodec).await.unwrap();
    // 40 values of 10 keys due from ten minutes on, one a minute, 12 due now (the
    // handle's transfer moves them to the ready lists), a dead letter.
    for i in 0..40u64 {
        let key = format!("customer-{}", i % 10);
        let value = format!("order-{i}");
        queue
            .offer_keyed(&key, &value, Duration::from_secs(600 + 60 * i))
            .await
            .unwrap();
    }
    for i in 0..12 {
        let key = format!("customer-{i}");
        let value = format!("now-{i}");
        queue.offer_keyed(&key, &value, Duration::ZERO).await.unwrap();
    }
    seed::dead_letter(&server, &queue.names()[1], b"failed-order").await;
    eventually(Duration::from_secs(30), "the due values moved", || {
        let queue = queue.clone();
        async move { queue.status().await.unwrap().total.ready == 12 }
    })
    .await;
    let status = queue.status().await.unwrap();
    seed::queue(&server, "payments", 30, 2, 0).await;
    seed::queue(&server, "emails", 5, 0, 3).await;

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    // The overview: three rows, the partitioned one marked, with its sums.
    browser.goto(&format!("{url}/")).await.unwrap();
    let row = "#queues tbody tr.partitioned";
    wait_text(
        &browser,
        &format!("{row} td.pending"),
        &status.total.pending.to_string(),
    )
    .await;
    wait_text(&browser, &format!("{row} .badge.partitioned"), "partitioned ×4").await;
    wait_text(&browser, &format!("{row} td.ready"), "12").await;
    wait_text(&browser, &format!("{row} td.dead-letters"), "1").await;
    assert_eq!(text(&browser, &format!("{row} td.name a")).await, NAME);
    assert_eq!(
        browser.find_all(Locator::Css("#queues tbody tr")).await.unwrap().len(),
        3,
        "one row per queue, the partitions folded into theirs"
    );
    assert!(
        (browser
            .find_all(Locator::Css("#queues b, #queues script"))
            .await
            .unwrap())
        .is_empty(),
        "the name's markup stays text"
    );
    // The totals count each value once: the partitions' 40, and 30 and 5.
    let pending = status.total.pending + 30 + 5;
    wait_text(&browser, "#total-pending", &pending.to_string()).await;
    wait_text(&browser, "#total-queues", "3").await;
    screenshot(&browser, "partitioned-list").await;

    // Its page, from the row's link.
    click(&browser, &format!("{row} td.name a")).await;
    wait_text(&browser, "#partition-count", "4").await;
    assert_eq!(text(&browser, "#queue-name").await, NAME);
    assert_eq!(text(&browser, "#partitioned-badge").await, "partitioned ×4");
    wait_text(&browser, "#sum-pending", &status.total.pending.to_string()).await;
    wait_text(&browser, "#sum-ready", "12").await;
    wait_text(&browser, "#sum-dead-letters", "1").await;
    assert!(text(&browser, "#layout").await.contains("CRC-32(key bytes) mod 4"));
    let layout = queue.layout();
    for (i, name) in layout.names().iter().enumerate() {
        let cells = format!("#partitions tbody tr[data-partition=\"{i}\"]");
        assert_eq!(text(&browser, &format!("{cells} td.name a")).await, *name);
        assert_eq!(
            text(&browser, &format!("{cells} td.slot")).await,
            layout.slot(i).to_string()
        );
        assert_eq!(text(&browser, &format!("{cells} td.node")).await, "–");
        let p = &status.partitions[i];
        assert_eq!(
            text(&browser, &format!("{cells} td.pending")).await,
            p.pending.to_string()
        );
        assert_eq!(text(&browser, &format!("{cells} td.ready")).await, p.ready.to_string());
        let href = attr(&browser, &format!("{cells} td.name a"), "href").await.unwrap();
        assert!(href.starts_with("/queue?name="), "{href}");
    }
    assert!(
        (browser.find_all(Locator::Css("header b, #partitions b")).await.unwrap()).is_empty(),
        "the name's markup stays text"
    );
    screenshot(&browser, "partitioned-queue").await;

    // A partition's own page, as any queue's.
    click(&browser, "#partitions tbody tr[data-partition=\"1\"] td.name a").await;
    wait_text(&browser, "#queue-name", &layout.names()[1]).await;
    wait_text(&browser, "#dead-letters", "1").await;

    // Re-partitioned to 2: the page shows the new generation, says four
    // retired partitions are still read, and its sums still count their
    // values (nothing moved); the overview's row too.
    client.repartition(NAME, 2).await.unwrap();
    browser
        .goto(&format!("{url}/partitioned?name={}", urlencode(NAME)))
        .await
        .unwrap();
    wait_text(&browser, "#partition-count", "2").await;
    assert!(
        text(&browser, "#layout")
            .await
            .contains("generation 2, 4 retired still read"),
        "{}",
        text(&browser, "#layout").await
    );
    wait_text(&browser, "#sum-ready", "12").await;
    wait_text(&browser, "#sum-pending", &status.total.pending.to_string()).await;
    // The retired partitions are rows of their own, marked, and the rows
    // add up to the sums.
    let retired = browser
        .find_all(Locator::Css("#partitions tbody tr.retired"))
        .await
        .unwrap();
    assert_eq!(retired.len(), 4);
    assert_eq!(
        text(&browser, "#partitions tbody tr.retired .badge.retired").await,
        "retired"
    );
    let mut ready = 0u64;
    for cell in browser
        .find_all(Locator::Css("#partitions tbody td.ready"))
        .await
        .unwrap()
    {
        ready += cell
            .attr("data-value")
            .await
            .unwrap()
            .unwrap_or_default()
            .parse::<u64>()
            .unwrap_or(0);
    }
    assert_eq!(ready, 12, "the rows add up to the sum");
    screenshot(&browser, "partitioned-repartitioned").await;
    browser.goto(&format!("{url}/")).await.unwrap();
    wait_text(&browser, &format!("{row} .badge.partitioned"), "partitioned ×2").await;
    wait_text(&browser, &format!("{row} td.ready"), "12").await;

    client.shutdown().await;
}

/// The query-string form of a name (what the overview's links use).
fn urlencode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}
