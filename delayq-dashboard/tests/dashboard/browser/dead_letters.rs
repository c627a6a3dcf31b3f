//! The queue page's dead letters in headless Chromium: pages, reasons, exact requeue and delete.

use delayq::fred::prelude::*;
use fantoccini::Locator;

use super::{browser, click, screenshot, serve, start_driver, text, wait_shown, wait_text};
use crate::redis_server::RedisServer;
use crate::seed;

/// `count` dead letters as delayq records them, the i-th dying `count - i`
/// minutes ago: every seventh a long sentence, every eleventh one long
/// unbroken token (a URL), the others short; reasons taking turns.
async fn seed_dead(server: &RedisServer, name: &str, count: usize) -> Vec<String> {
    let redis = seed::raw(server).await;
    let now = seed::now_ms();
    let reasons = [
        "failed 5 attempt(s): smtp down: connection refused by mx.example.com",
        "delivered 3 times without an ack (max_deliveries 3)",
        "permanent: no such account",
    ];
    let mut values = Vec::new();
    for i in 0..count {
        let value = if i % 11 == 0 {
            format!("https://example.com/callback/{i}/{}", "a1b2c3d4e5".repeat(30))
        } else if i % 7 == 0 {
            format!("order {i} for customer Johanna Strawinski, shipping to Rue de la République 12, Lyon, with gift wrapping and a note that says happy birthday")
        } else {
            format!("order-{i}")
        };
        let _: i64 = redis
            .rpush(format!("delayq_dead_letter:{{{name}}}"), value.as_str())
            .await
            .unwrap();
        let at = now - 60_000 * (count - i) as i64;
        let record = format!("{at} {}", reasons[i % 3]);
        let _: i64 = redis
            .rpush(format!("delayq_dead_reasons:{{{name}}}"), record)
            .await
            .unwrap();
        values.push(value);
    }
    values
}

async fn dead_list(server: &RedisServer, name: &str) -> Vec<String> {
    seed::lrange(server, &format!("delayq_dead_letter:{{{name}}}"))
        .await
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect()
}

async fn scroll_to_dead_letters(browser: &fantoccini::Client) {
    browser
        .execute(
            "document.getElementById('dead-letters-section').scrollIntoView()",
            vec![],
        )
        .await
        .unwrap();
}

/// Waits until every listed row has `reason`.
async fn eventually_rows_have_reason(browser: &fantoccini::Client, reason: &str) {
    seed::eventually(std::time::Duration::from_secs(60), "rows of one reason", || async {
        let rows = browser
            .find_all(Locator::Css("#dead-table tbody td.reason"))
            .await
            .unwrap();
        let mut all = !rows.is_empty();
        for row in rows {
            all &= row.text().await.unwrap_or_default() == reason;
        }
        all
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_pages_groups_requeues_and_deletes_dead_letters_one_by_one_and_ticked() {
    let server = RedisServer::start().await;
    let values = seed_dead(&server, "orders", 130).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();

    // Page 1: when each died, with its zone and how long ago.
    wait_text(&browser, "#dead-info", "1–50 of 130").await;
    wait_text(&browser, "#dead-pages", "3").await;
    let died = text(&browser, "#dead-table tbody tr:nth-child(2) td.died").await;
    // Seeded 2h9m ago (later hours for a slow run).
    assert!(died.contains("\n2h") && died.ends_with(" ago"), "{died:?}");
    assert!(died.contains("UTC") || died.contains("GMT"), "a zone: {died:?}");
    assert_eq!(text(&browser, "#dead-table tbody tr:nth-child(3) td.num").await, "3");
    scroll_to_dead_letters(&browser).await;
    screenshot(&browser, "dead-letters-page-1").await;

    // No value breaks mid-word unless the word is longer than its cell: a
    // cell of short words is as wide as its longest word or wider.
    let narrowest_word_fits: bool = browser
        .execute(
            "const cell = document.querySelector('#dead-table tbody tr:nth-child(8) td.payload');\
             const range = document.createRange(); range.selectNodeContents(cell);\
             return cell.getClientRects().length > 0 && [...range.getClientRects()].every((r) => r.width > 20);",
            vec![],
        )
        .await
        .unwrap()
        .as_bool()
        .unwrap();
    assert!(narrowest_word_fits, "the sentence wraps between words");
    let css: String = browser
        .execute(
            "return getComputedStyle(document.querySelector('#dead-table td.payload')).overflowWrap + ' ' + \
             getComputedStyle(document.querySelector('#dead-table td.payload')).wordBreak;",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(css, "anywhere normal");

    // Page 2, then page 3 by its number.
    click(&browser, "#dead-next").await;
    wait_text(&browser, "#dead-info", "51–100 of 130").await;
    wait_text(&browser, "#dead-table tbody tr:first-child td.num", "51").await;
    scroll_to_dead_letters(&browser).await;
    screenshot(&browser, "dead-letters-page-2").await;
    let jump = browser.find(Locator::Css("#dead-page")).await.unwrap();
    jump.clear().await.unwrap();
    jump.send_keys("3\n").await.unwrap();
    browser
        .execute(
            "document.getElementById('dead-page').dispatchEvent(new Event('change'))",
            vec![],
        )
        .await
        .unwrap();
    wait_text(&browser, "#dead-info", "101–130 of 130").await;

    // One requeued by its row's button: #102 (order-101) goes to the queue.
    wait_text(&browser, "#dead-table tbody tr:nth-child(2) td.num", "102").await;
    click(&browser, "#dead-table tbody tr:nth-child(2) button.requeue-one").await;
    wait_text(&browser, "#dead-info", "101–129 of 129").await;
    assert_eq!(seed::lrange(&server, "orders").await, [values[101].as_str()]);

    // The page ticked at once, and unticked.
    click(&browser, "#dead-all").await;
    wait_text(&browser, "#dead-selected", "29 selected").await;
    click(&browser, "#dead-all").await;
    wait_text(&browser, "#dead-selected", "").await;

    // Meanwhile someone else deletes the two oldest: the ticked values are
    // still the ones deleted.
    wait_text(&browser, "#dead-table tbody tr:nth-child(4) td.num", "104").await;
    click(&browser, "#dead-table tbody tr:nth-child(4) td.pick input").await;
    click(&browser, "#dead-table tbody tr:nth-child(6) td.pick input").await;
    wait_text(&browser, "#dead-selected", "2 selected").await;
    let ticked = [values[104].clone(), values[106].clone()];
    let redis = seed::raw(&server).await;
    let _: () = redis.ltrim("delayq_dead_letter:{orders}", 2, -1).await.unwrap();
    let _: () = redis.ltrim("delayq_dead_reasons:{orders}", 2, -1).await.unwrap();
    click(&browser, "#delete-selected").await;
    wait_text(&browser, "#delete-selected", "Really delete 2? Press again").await;
    assert_eq!(
        dead_list(&server, "orders").await.len(),
        127,
        "nothing deleted on the first press"
    );
    click(&browser, "#delete-selected").await;
    wait_text(&browser, "#dead-letters", "125").await;
    let left = dead_list(&server, "orders").await;
    assert!(
        !left.contains(&ticked[0]) && !left.contains(&ticked[1]),
        "the ticked ones went"
    );
    assert!(
        left.contains(&values[105]) && left.contains(&values[103]),
        "their neighbours stayed"
    );
    assert!(text(&browser, "#flash").await.contains("deleted 2 dead letters"));
    wait_text(&browser, "#dead-selected", "").await;
    scroll_to_dead_letters(&browser).await;
    screenshot(&browser, "dead-letters-after-bulk-delete").await;

    // By reason: three reasons with their counts.
    click(&browser, "#dead-view-reasons").await;
    wait_shown(&browser, "#dead-reasons", true).await;
    wait_text(&browser, "#dead-reasons-note", "All 125 dead letters counted.").await;
    // Read again until each count reads as a number: the table is redrawn
    // on every poll, and a cell found just before a redraw reads "" (stale).
    let mut counts: Vec<String> = Vec::new();
    for _ in 0..50 {
        counts.clear();
        for row in 1..=3 {
            counts.push(text(&browser, &format!("#dead-reasons tbody tr:nth-child({row}) td.num")).await);
        }
        if counts.iter().all(|c| c.parse::<u32>().is_ok()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let total: u32 = counts.iter().map(|c| c.parse::<u32>().expect("a count")).sum();
    assert_eq!(total, 125, "{counts:?}");
    for list_only in ["#dead-table", "#dead-paging"] {
        assert!(
            !browser
                .find(Locator::Css(list_only))
                .await
                .unwrap()
                .is_displayed()
                .await
                .unwrap(),
            "{list_only} hidden"
        );
    }
    assert!(text(&browser, "#dead-reasons tbody tr:first-child td.died")
        .await
        .ends_with(" ago"));
    scroll_to_dead_letters(&browser).await;
    screenshot(&browser, "dead-letters-by-reason").await;

    // One reason's dead letters, from its group.
    click(&browser, "#dead-reasons a.reason-filter").await;
    wait_shown(&browser, "#dead-filter", true).await;
    wait_shown(&browser, "#dead-table", true).await;
    let chosen = text(&browser, "#dead-filter-text").await;
    eventually_rows_have_reason(&browser, &chosen).await;
    // The rows and the line under them come from the same filtered read.
    let info = text(&browser, "#dead-info").await;
    assert!(info.contains("found among #1–#125 of 125"), "{info:?}");
    scroll_to_dead_letters(&browser).await;
    screenshot(&browser, "dead-letters-one-reason").await;
    click(&browser, "#dead-filter-clear").await;
    wait_text(&browser, "#dead-info", "1–50 of 125").await;
    browser.close().await.unwrap();
    driver.session = None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_dead_letters_show_when_they_died_but_no_buttons_or_ticks() {
    let server = RedisServer::start().await;
    seed_dead(&server, "orders", 3).await;
    let url = super::serve_read_only(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_text(&browser, "#dead-info", "1–3 of 3").await;
    assert!(text(&browser, "#dead-table tbody tr:first-child td.died")
        .await
        .ends_with(" ago"));
    for absent in ["#dead-table td.pick input", "#dead-table button"] {
        assert!(
            browser.find_all(Locator::Css(absent)).await.unwrap().is_empty(),
            "{absent}"
        );
    }
    for hidden in ["#dead-actions", "#dead-all"] {
        let node = browser.find(Locator::Css(hidden)).await.unwrap();
        assert!(!node.is_displayed().await.unwrap(), "{hidden}");
    }
    browser.close().await.unwrap();
    driver.session = None;
}

/// Filtered to one reason ("3 found" of 12), Requeue all says it takes
/// those 3, needs a second press, and requeues only them; unfiltered,
/// Delete all says how many too. (The operator review's first finding:
/// Requeue all requeued all 12, at one press.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_all_under_a_reason_filter_takes_only_what_the_filter_shows_after_a_second_press() {
    let server = RedisServer::start().await;
    let values = seed_dead(&server, "orders", 12).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_text(&browser, "#dead-info", "1–12 of 12").await;
    wait_text(&browser, "#requeue-dead", "Requeue all 12").await;

    // "permanent: no such account" is every third: #3, #6, #9, #12.
    let reason = "permanent: no such account";
    click(&browser, "#dead-view-reasons").await;
    wait_shown(&browser, "#dead-reasons", true).await;
    // Each reason has 4: ties keep the order they first died in.
    let link = "#dead-reasons tbody tr:nth-child(3) a.reason-filter";
    seed::eventually(std::time::Duration::from_secs(60), "the reason's row", || async {
        text(&browser, link).await == reason
    })
    .await;
    click(&browser, link).await;
    eventually_rows_have_reason(&browser, reason).await;
    wait_text(&browser, "#requeue-dead", "Requeue 4 with this reason").await;
    wait_text(&browser, "#delete-dead", "Delete 4 with this reason").await;

    // The first press only says what the second would do.
    click(&browser, "#requeue-dead").await;
    wait_text(
        &browser,
        "#requeue-dead",
        "Really requeue the 4 with this reason? Press again",
    )
    .await;
    assert_eq!(dead_list(&server, "orders").await.len(), 12, "nothing moved yet");
    scroll_to_dead_letters(&browser).await;
    screenshot(&browser, "dead-letters-requeue-filtered-armed").await;
    click(&browser, "#requeue-dead").await;
    wait_shown(&browser, "#flash", true).await;
    let answer = text(&browser, "#flash").await;
    assert!(answer.starts_with("requeued 4 dead letters"), "{answer}");
    let requeued: Vec<String> = seed::lrange(&server, "orders")
        .await
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    let want: Vec<String> = [2, 5, 8, 11].iter().map(|&i| values[i].clone()).collect();
    assert_eq!(requeued, want, "only the filtered ones, in list order");
    let left = dead_list(&server, "orders").await;
    assert_eq!(left.len(), 8);
    assert!(want.iter().all(|v| !left.contains(v)));
    wait_text(&browser, "#requeue-dead", "Requeue 0 with this reason").await;
    assert!(!browser
        .find(Locator::Css("#requeue-dead"))
        .await
        .unwrap()
        .is_enabled()
        .await
        .unwrap());
    scroll_to_dead_letters(&browser).await;
    screenshot(&browser, "dead-letters-requeue-filtered-done").await;

    // Unfiltered: Delete all says how many, and also waits for a second press.
    click(&browser, "#dead-filter-clear").await;
    wait_text(&browser, "#delete-dead", "Delete all 8").await;
    click(&browser, "#delete-dead").await;
    wait_text(&browser, "#delete-dead", "Really delete all 8? Press again").await;
    assert_eq!(dead_list(&server, "orders").await.len(), 8);
    click(&browser, "#delete-dead").await;
    wait_text(&browser, "#dead-letters", "0").await;
    assert_eq!(seed::lrange(&server, "orders").await.len(), 4, "the requeued stay");
    browser.close().await.unwrap();
    driver.session = None;
}

/// Reasons that differ only by an id ("customer c-14 not found", "c-19")
/// are one row of By reason; its bulk requeue takes exactly the count it
/// showed, matched where it runs: one more of the shape dead-lettered
/// between the first and the second press refuses it (nothing moves), and
/// the new count is then shown and taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasons_that_differ_by_an_id_are_one_row_and_are_requeued_together() {
    let server = RedisServer::start().await;
    let redis = seed::raw(&server).await;
    let now = seed::now_ms();
    let dead = async |value: &str, reason: &str| {
        let _: i64 = redis.rpush("delayq_dead_letter:{pay}", value).await.unwrap();
        let _: i64 = redis
            .rpush("delayq_dead_reasons:{pay}", format!("{now} {reason}"))
            .await
            .unwrap();
    };
    for (value, reason) in [
        ("p-1", "customer c-14 not found"),
        ("p-2", "card declined"),
        ("p-3", "customer c-19 not found"),
        ("p-4", "customer c-23 not found"),
        ("p-5", "card declined"),
    ] {
        dead(value, reason).await;
    }
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=pay")).await.unwrap();
    wait_text(&browser, "#dead-info", "1–5 of 5").await;
    click(&browser, "#dead-view-reasons").await;
    wait_shown(&browser, "#dead-reasons", true).await;
    let first = "#dead-reasons tbody tr:first-child";
    wait_text(
        &browser,
        &format!("{first} a.reason-filter"),
        "customer c-<n> not found",
    )
    .await;
    assert_eq!(text(&browser, &format!("{first} td.num")).await, "3");
    assert!(text(&browser, &format!("{first} .shape-note"))
        .await
        .contains("3 different reasons"));
    // A reason alone in its shape reads as it was recorded.
    wait_text(
        &browser,
        "#dead-reasons tbody tr:nth-child(2) a.reason-filter",
        "card declined",
    )
    .await;
    assert_eq!(
        browser
            .find_all(Locator::Css("#dead-reasons tbody tr"))
            .await
            .unwrap()
            .len(),
        2
    );
    scroll_to_dead_letters(&browser).await;
    screenshot(&browser, "dead-letters-by-shape").await;

    click(&browser, &format!("{first} a.reason-filter")).await;
    wait_shown(&browser, "#dead-table", true).await;
    wait_text(&browser, "#dead-filter-text", "customer c-<n> not found").await;
    wait_text(&browser, "#requeue-dead", "Requeue 3 like this").await;
    let rows = browser.find_all(Locator::Css("#dead-table tbody tr")).await.unwrap();
    assert_eq!(rows.len(), 3);
    click(&browser, "#requeue-dead").await;
    wait_text(
        &browser,
        "#requeue-dead",
        "Really requeue the 3 whose reason looks like this? Press again",
    )
    .await;
    // One more of the shape dies before the second press.
    dead("p-6", "customer c-77 not found").await;
    click(&browser, "#requeue-dead").await;
    wait_shown(&browser, "#flash", true).await;
    let answer = text(&browser, "#flash").await;
    assert!(
        answer.contains("4 dead letter(s) of `pay` match now, not the 3 confirmed"),
        "{answer}"
    );
    assert!(seed::lrange(&server, "pay").await.is_empty(), "nothing moved: {answer}");
    assert_eq!(dead_list(&server, "pay").await.len(), 6);

    // The page now counts 4, and takes them.
    wait_text(&browser, "#requeue-dead", "Requeue 4 like this").await;
    click(&browser, "#requeue-dead").await;
    wait_text(
        &browser,
        "#requeue-dead",
        "Really requeue the 4 whose reason looks like this? Press again",
    )
    .await;
    click(&browser, "#requeue-dead").await;
    seed::eventually(std::time::Duration::from_secs(60), "4 requeued", || async {
        seed::lrange(&server, "pay").await.len() == 4
    })
    .await;
    let requeued: Vec<String> = seed::lrange(&server, "pay")
        .await
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    assert_eq!(requeued, ["p-1", "p-3", "p-4", "p-6"]);
    assert_eq!(dead_list(&server, "pay").await, ["p-2", "p-5"]);
    assert!(text(&browser, "#flash").await.contains("whose reason looks like"));
    browser.close().await.unwrap();
    driver.session = None;
}
