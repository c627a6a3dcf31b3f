//! What an operator's review of the dashboard on realistic data found.

use std::time::Duration;

use fantoccini::{Client as Browser, Locator};

use super::click;
use super::elements::many;
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
            // The page may redraw the button between the look and the press
            // (a loaded machine): a press that did not land is tried again.
            if let Ok(button) = browser.find(Locator::Css("#search-more")).await {
                let _ = button.click().await;
            }
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

/// Whether `css` is there and shown.
async fn shown(browser: &Browser, css: &str) -> bool {
    match browser.find(Locator::Css(css)).await {
        Ok(node) => node.is_displayed().await.unwrap_or(false),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mistyped_queue_name_says_so_offers_the_known_one_and_has_no_actions() {
    let server = RedisServer::start().await;
    seed::queue(&server, "svc-orders-1", 3, 0, 2).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    // Markup in the typed name stays text.
    browser
        .goto(&format!("{url}/queue?name=svc-ordrs-1%3Cb%3E"))
        .await
        .unwrap();
    let banner = super::elements::wait_contains(&browser, "#unknown", "Did you mean").await;
    assert_eq!(
        banner,
        "no queue `svc-ordrs-1<b>`: delayq knows no key, schedule or registration of that name. \
         Did you mean `svc-orders-1`?"
    );
    for css in ["#pause", "#move-due", "#purge", "#requeue-dead", "#delete-dead"] {
        assert!(!shown(&browser, css).await, "{css} is not offered for an unknown queue");
    }
    screenshot(&browser, "review-unknown-queue").await;
    click(&browser, "#unknown a").await;
    super::wait_text(&browser, "#pending", "3").await;
    assert!(!shown(&browser, "#unknown").await, "the known queue has no banner");
    assert!(shown(&browser, "#pause").await, "and its actions");
    browser.close().await.unwrap();
    driver.session = None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_letter_rows_delete_asks_to_be_pressed_again() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 0, 0, 2).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    let first = "#dead-table tbody tr:first-child button.delete-one";
    super::wait_text(&browser, first, "Delete").await;
    click(&browser, first).await;
    super::wait_text(&browser, first, "Delete? Press again").await;
    assert_eq!(
        seed::llen(&server, "delayq_dead_letter:{orders}").await,
        2,
        "one press deletes nothing"
    );
    screenshot(&browser, "review-dead-letter-delete-armed").await;
    click(&browser, first).await;
    super::elements::wait_contains(&browser, "#flash", "deleted").await;
    seed::eventually(WAIT, "one dead letter deleted", || async {
        seed::llen(&server, "delayq_dead_letter:{orders}").await == 1
    })
    .await;
    browser.close().await.unwrap();
    driver.session = None;
}

/// A dead letter of `name` recorded as dying at `at_ms`.
async fn dead_at(server: &RedisServer, name: &str, value: &str, at_ms: i64) {
    use delayq::fred::interfaces::ListInterface;
    let redis = seed::raw(server).await;
    let _: i64 = redis
        .rpush(format!("delayq_dead_letter:{{{name}}}"), value)
        .await
        .unwrap();
    let _: i64 = redis
        .rpush(
            format!("delayq_dead_reasons:{{{name}}}"),
            format!("{at_ms} permanent: no such account"),
        )
        .await
        .unwrap();
}

/// Every time on the queue page writes its zone one way, the header's
/// (`UTC+05:30` in Kolkata): the dead letters' DIED, the jump box (with the
/// zone's name once) and a reschedule's answer; no `GMT+5:30`, no `Z`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_time_on_the_queue_page_writes_its_zone_one_way() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let q = client
        .delayed_queue("tz", delayq::StringCodec)
        .unwrap()
        .without_transfer();
    assert!(q
        .offer_with_id("order-7", &"remind".to_owned(), Duration::from_secs(3_600))
        .await
        .unwrap());
    dead_at(&server, "tz", "dead-0", seed::now_ms() - 120_000).await;
    let url = serve(&server).await;
    let mut driver = super::start_driver_in(Some("Asia/Kolkata")).await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=tz")).await.unwrap();
    super::wait_text(&browser, "#zone", "times in UTC+05:30").await;

    let died = super::elements::wait_contains(&browser, "#dead-table td.died", "UTC+05:30").await;
    assert!(!died.contains("GMT"), "{died:?}");
    let jump = text(&browser, "#jump-zone").await;
    assert!(jump.starts_with("UTC+05:30 ("), "{jump:?}");
    assert_eq!(jump.matches("UTC").count(), 1, "the offset once: {jump:?}");

    let row = "#pending-table tbody tr:first-child";
    super::wait_text(&browser, &format!("{row} td.id"), "order-7").await;
    click(&browser, &format!("{row} button.resched")).await;
    let input = browser
        .find(Locator::Css(&format!("{row} input.resched-to")))
        .await
        .unwrap();
    input.send_keys("2036-12-01 09:00").await.unwrap();
    click(&browser, &format!("{row} button.resched-ok")).await;
    let flash = super::elements::wait_contains(&browser, "#flash", "rescheduled").await;
    assert!(
        flash.starts_with("rescheduled the element: due 2036-12-01 09:00:00.000 UTC+05:30 (in "),
        "{flash:?}"
    );
    screenshot(&browser, "review-one-zone").await;
    browser.close().await.unwrap();
    driver.session = None;
}

/// A schedule's next fire says when, not only how soon, on one line at
/// 1,400 px: "in 3d9h · 2026-11-30 03:00 UTC+05:30".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedules_next_fire_shows_its_time_and_zone_on_one_line() {
    let server = RedisServer::start().await;
    let saver = seed::client(&server).await;
    let reports = saver.delayed_queue("reports", delayq::StringCodec).unwrap();
    saver
        .schedule(
            "nightly",
            "0 3 * * *",
            &reports,
            &"compact the archive of last month's orders".to_string(),
        )
        .await
        .unwrap();
    drop(reports);
    saver.shutdown().await;
    let url = serve(&server).await;
    let mut driver = super::start_driver_in(Some("Asia/Kolkata")).await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=reports")).await.unwrap();
    let cell = r#"tr[data-schedule="nightly"] td.next"#;
    let next = super::elements::wait_contains(&browser, cell, " · ").await;
    let title = super::attr(&browser, cell, "title").await.unwrap();
    let (soon, at) = next.split_once(" · ").unwrap();
    assert!(soon.starts_with("in "), "{next:?}");
    assert_eq!(at, format!("{} UTC+05:30", &title[..16]), "{next:?} ({title:?})");
    let lines = browser
        .execute(
            "const r = document.createRange(); r.selectNodeContents(document.querySelector(arguments[0]));
             return r.getClientRects().length;",
            vec![serde_json::json!(cell)],
        )
        .await
        .unwrap();
    assert_eq!(lines, serde_json::json!(1), "one line at 1,400 px");
    screenshot(&browser, "review-schedule-next-fire").await;
    browser.close().await.unwrap();
    driver.session = None;
}

/// Read-only, the pending tables have no ACTIONS column and no note on
/// actions that are not there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_pending_tables_have_no_actions_column_nor_note() {
    let server = RedisServer::start().await;
    seed::offer(&server, "jobs", "only", 600).await;
    let url = super::serve_read_only(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=jobs")).await.unwrap();
    super::wait_text(&browser, "#pending-table tbody tr:first-child td.payload", "only").await;
    browser
        .find(Locator::Css("#search-q"))
        .await
        .unwrap()
        .send_keys("onl")
        .await
        .unwrap();
    click(&browser, "#search-text").await;
    super::elements::wait_contains(&browser, "#search-info", "1 match").await;
    for css in [
        "#pending-table th.act",
        "#pending-table td.act",
        "#search-table th.act",
        "#search-table td.act",
    ] {
        assert!(
            browser.find_all(Locator::Css(css)).await.unwrap().is_empty(),
            "no {css} when read-only"
        );
    }
    assert!(!shown(&browser, "#pending-actions-note").await, "no note on actions");
    screenshot(&browser, "review-read-only-pending").await;
    browser.close().await.unwrap();
    driver.session = None;
}

/// Whether `css` can be pressed (is there and not disabled).
async fn enabled(browser: &Browser, css: &str) -> bool {
    browser
        .find(Locator::Css(css))
        .await
        .unwrap()
        .is_enabled()
        .await
        .unwrap()
}

/// A queue page opened while Redis is down offers no action (each could
/// only fail); once Redis is back, they work again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_are_disabled_while_the_outage_banner_shows() {
    let mut server = RedisServer::start().await;
    seed::queue(&server, "orders", 2, 0, 2).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    server.kill();
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    super::wait_shown(&browser, "#outage", true).await;
    for css in ["#requeue-dead", "#delete-dead", "#move-due", "#pause", "#migrate"] {
        assert!(!enabled(&browser, css).await, "{css} is disabled while Redis is down");
    }
    screenshot(&browser, "review-outage-no-actions").await;
    server.restart().await;
    seed::queue(&server, "orders", 2, 0, 2).await;
    super::wait_shown(&browser, "#outage", false).await;
    super::wait_text(&browser, "#dead-letters", "2").await;
    seed::eventually(WAIT, "the actions back", || async {
        enabled(&browser, "#requeue-dead").await && enabled(&browser, "#pause").await
    })
    .await;
    assert!(
        !enabled(&browser, "#purge").await,
        "purge still waits for the typed name"
    );
    browser.close().await.unwrap();
    driver.session = None;
}

/// The overview's footer credits both ways queues are found: a queue only
/// in delayq's registry is listed too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_footer_says_queues_come_from_scan_and_the_registry() {
    use delayq::fred::interfaces::SortedSetsInterface;
    let server = RedisServer::start().await;
    seed::queue(&server, "scanned", 1, 0, 0).await;
    let _: () = seed::raw(&server)
        .await
        .zadd(
            "delayq_queues",
            None,
            None,
            false,
            false,
            (seed::now_ms() as f64, "registered"),
        )
        .await
        .unwrap();
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/")).await.unwrap();
    let note = super::elements::wait_contains(&browser, "#sampler-note", "2 queues").await;
    assert!(
        note.starts_with("2 queues found by SCAN and delayq's registry; "),
        "{note:?}"
    );
    browser.close().await.unwrap();
    driver.session = None;
}
