//! Work on single pending elements in headless Chromium: delete, run now, reschedule.

use std::time::Duration;

use delayq::fred::prelude::*;
use delayq::StringCodec;
use fantoccini::{Client as Browser, Locator};

use super::{browser, click, screenshot, serve, start_driver, text, wait_text, WAIT};
use crate::redis_server::RedisServer;
use crate::seed;

/// `n` pending elements `item-1`.. due one a second from `base_ms`, with
/// `needles` (1-based element, payload) in place of theirs, in one script.
pub(super) async fn many(server: &RedisServer, name: &str, n: usize, base_ms: i64, needles: &[(usize, &str)]) {
    let keys = delayq::QueueKeys::new(name).unwrap();
    let mut args: Vec<String> = vec![base_ms.to_string(), n.to_string()];
    for (i, text) in needles {
        args.extend([i.to_string(), (*text).to_owned()]);
    }
    let script = "local special = {}
        for k = 3, #ARGV, 2 do special[tonumber(ARGV[k])] = ARGV[k + 1] end
        for i = 1, tonumber(ARGV[2]) do
          local payload = special[i] or ('item-' .. i)
          local element = struct.pack('Bc0Lc0', 8, string.format('%08d', i), string.len(payload), payload)
          redis.call('zadd', KEYS[1], tonumber(ARGV[1]) + i * 1000, element)
          redis.call('rpush', KEYS[2], element)
        end
        return 1";
    let _: i64 = seed::raw(server)
        .await
        .eval(script, vec![keys.timeout(), keys.pending()], args)
        .await
        .unwrap();
}

/// Waits until the element `css` reads something containing `part`.
pub(super) async fn wait_contains(browser: &Browser, css: &str, part: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let seen = text(browser, css).await;
        if seen.contains(part) {
            return seen;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{css} reads {seen:?}, without {part:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

const ROW: &str = "#pending-table tbody tr";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_finds_jumps_to_and_works_on_single_elements() {
    let server = RedisServer::start().await;
    let base = seed::now_ms() + 3_600_000;
    many(
        &server,
        "big",
        3_000,
        base,
        &[(7, "the needle"), (2_500, "another needle")],
    )
    .await;
    let client = seed::client(&server).await;
    let q = client.delayed_queue("big", StringCodec).unwrap().without_transfer();
    assert!(q
        .offer_with_id("order-42", &"remind order 42".to_owned(), Duration::from_secs(1800))
        .await
        .unwrap());
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=big")).await.unwrap();
    wait_text(&browser, "#pending", "3,001").await;

    // The ID column: the id where there is one, "–" where not.
    wait_text(&browser, &format!("{ROW}:first-child td.id"), "order-42").await;
    assert_eq!(text(&browser, &format!("{ROW}:nth-child(2) td.id")).await, "–");
    assert_eq!(
        text(&browser, &format!("{ROW}:first-child td.act button.del")).await,
        "Cancel"
    );
    assert_eq!(
        text(&browser, &format!("{ROW}:nth-child(2) td.act button.del")).await,
        "Delete"
    );
    assert_eq!(text(&browser, "#page-count").await, "61");
    screenshot(&browser, "elements-id-column").await;

    // Jump to a due time: the first element due then or later heads the page.
    let at = base + 1_500_000;
    browser
        .execute(
            "const ms = arguments[0]; const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
             document.getElementById('jump-at').value = d.toISOString().slice(0, 19);",
            vec![serde_json::json!(at)],
        )
        .await
        .unwrap();
    assert!(!text(&browser, "#jump-zone").await.is_empty(), "the zone is shown");
    click(&browser, "#jump-go").await;
    wait_text(&browser, &format!("{ROW}:first-child td.payload"), "item-1500").await;
    assert!(text(&browser, "#page-info").await.starts_with("1,501–1,550 of 3,001"));
    assert_eq!(super::prop(&browser, "#page-no", "value").await.as_deref(), Some("31"));
    screenshot(&browser, "elements-jump").await;

    // A page number.
    let page = browser.find(Locator::Css("#page-no")).await.unwrap();
    page.clear().await.unwrap();
    page.send_keys("3").await.unwrap();
    click(&browser, "#page-go").await;
    wait_contains(&browser, "#page-info", "101–150 of 3,001").await;
    page.clear().await.unwrap();
    page.send_keys("1").await.unwrap();
    click(&browser, "#page-go").await;
    wait_text(&browser, &format!("{ROW}:first-child td.id"), "order-42").await;

    // Text search: both needles, and how far it looked.
    let search = browser.find(Locator::Css("#search-q")).await.unwrap();
    search.send_keys("needle").await.unwrap();
    click(&browser, "#search-text").await;
    let info = wait_contains(&browser, "#search-info", "2 matches").await;
    assert_eq!(info, "2 matches; looked at elements 1–3,001 of 3,001");
    assert_eq!(
        text(&browser, "#search-table tbody tr:first-child td.payload").await,
        "the needle"
    );
    assert_eq!(text(&browser, "#search-table tbody tr:first-child td.rank").await, "#8");
    screenshot(&browser, "elements-search").await;
    // A match's place in due order shows its page.
    click(&browser, "#search-table tbody tr:nth-child(2) td.rank button").await;
    wait_text(&browser, &format!("{ROW}:first-child td.payload"), "another needle").await;
    assert!(text(&browser, "#page-info").await.starts_with("2,501–2,550 of 3,001"));
    page.clear().await.unwrap();
    page.send_keys("1").await.unwrap();
    click(&browser, "#page-go").await;
    wait_text(&browser, &format!("{ROW}:first-child td.id"), "order-42").await;

    // By id.
    search.clear().await.unwrap();
    search.send_keys("order-42").await.unwrap();
    click(&browser, "#search-id").await;
    wait_text(&browser, "#search-info", "found by its id").await;
    assert_eq!(
        text(&browser, "#search-table tbody tr:first-child td.payload").await,
        "remind order 42"
    );
    click(&browser, "#search-close").await;

    // Reschedule item-1 by two hours: it leaves the head of the page.
    let second = format!("{ROW}:nth-child(2)");
    wait_text(&browser, &format!("{second} td.payload"), "item-1").await;
    click(&browser, &format!("{second} button.resched")).await;
    let to = browser
        .find(Locator::Css(&format!("{second} input.resched-to")))
        .await
        .unwrap();
    to.send_keys("2h").await.unwrap();
    screenshot(&browser, "elements-reschedule-editor").await;
    click(&browser, &format!("{second} button.resched-ok")).await;
    // The new due time in the page's zone, and how soon (browser::review).
    let flash = wait_contains(&browser, "#flash", "rescheduled the element: due ").await;
    assert!(flash.ends_with("(in 2h)") || flash.ends_with("(in 1h59m)"), "{flash:?}");
    wait_text(&browser, &format!("{second} td.payload"), "item-2").await;
    let mut ranks = Vec::new();
    for start in (0..3_001).step_by(1_000) {
        ranks.extend(q.pending_page(start, 1_000).await.unwrap());
    }
    let moved = ranks
        .iter()
        .position(|e| e.value.as_deref().ok() == Some("item-1"))
        .unwrap();
    assert!(moved > 2_000, "due in 2 h, after most of the queue: rank {moved}");
    screenshot(&browser, "elements-after-reschedule").await;

    // Run order-42 now, then delete item-2 (pressed twice).
    click(&browser, &format!("{ROW}:first-child button.run")).await;
    wait_contains(&browser, "#flash", "moved the element to big now").await;
    assert_eq!(seed::lrange(&server, "big").await, ["remind order 42"]);
    assert!(q.get("order-42").await.unwrap().is_none());
    wait_text(&browser, &format!("{ROW}:first-child td.payload"), "item-2").await;
    click(&browser, &format!("{ROW}:first-child button.del")).await;
    assert_eq!(
        text(&browser, &format!("{ROW}:first-child button.del")).await,
        "Delete? Press again"
    );
    assert_eq!(q.len().await.unwrap(), 3_000, "one press deletes nothing");
    click(&browser, &format!("{ROW}:first-child button.del")).await;
    wait_contains(&browser, "#flash", "deleted the element").await;
    wait_text(&browser, &format!("{ROW}:first-child td.payload"), "item-3").await;
    assert_eq!(q.len().await.unwrap(), 2_999);

    browser.close().await.unwrap();
    driver.session = None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_rows_have_no_element_buttons_but_search_works() {
    let server = RedisServer::start().await;
    seed::offer(&server, "jobs", "only", 600).await;
    let url = super::serve_read_only(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=jobs")).await.unwrap();
    wait_text(&browser, &format!("{ROW}:first-child td.payload"), "only").await;
    let buttons = browser
        .find_all(Locator::Css("#pending-table td.act button"))
        .await
        .unwrap();
    assert_eq!(buttons.len(), 0, "no per-element actions when read-only");
    browser
        .find(Locator::Css("#search-q"))
        .await
        .unwrap()
        .send_keys("onl")
        .await
        .unwrap();
    click(&browser, "#search-text").await;
    wait_text(&browser, "#search-info", "1 match; looked at elements 1–1 of 1").await;
    browser.close().await.unwrap();
    driver.session = None;
}
