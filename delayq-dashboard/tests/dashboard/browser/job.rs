//! The job page in headless Chromium: reached from a dead letter's row and
//! from the find-a-job box, showing the job's state and each attempt with
//! its worker, outcome, error and source chain, user text as text; a
//! running job's progress bar and its Cancel button, a handler's result.

use std::time::Duration;

use delayq::error::BoxError;
use delayq::worker::JobContext;
use delayq::StringCodec;
use fantoccini::Locator;

use super::{attr, browser, click, screenshot, serve, start_driver, text, wait_text};
use crate::redis_server::RedisServer;
use crate::seed;

const QUEUE: &str = "billing-счета";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jobs_page_shows_its_attempts_and_is_reached_from_its_dead_letter_and_by_id() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let dq = client.delayed_queue(QUEUE, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(QUEUE, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    let id = "order-<b>42</b>";
    dq.offer_with_id(id, &"charge".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.offer_with_id("order-43", &"charge".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.transfer_now().await.unwrap();
    assert!(rq.take().await.unwrap().nack(Duration::ZERO).await.unwrap());
    assert!(rq.take().await.unwrap().ack().await.unwrap());
    let last = rq.take().await.unwrap();
    assert!(last.reject("card <i>declined</i>").await.unwrap());

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    // From the dead letter's row to its job.
    browser
        .goto(&format!("{url}/queue?name={}", urlencode(QUEUE)))
        .await
        .unwrap();
    wait_text(&browser, "#dead-table tbody td.reason a.job-link", id).await;
    // Found again if a poll redraws the table between the find and the click.
    click(&browser, "#dead-table tbody td.reason a.job-link").await;
    wait_text(&browser, "#job-state", "dead-lettered").await;
    assert_eq!(text(&browser, "#job-id").await, id, "the id is text, not markup");
    assert_eq!(text(&browser, "#job-queue").await, QUEUE);
    assert_eq!(text(&browser, "#job-attempts").await, "2");
    assert!(text(&browser, "#job-detail")
        .await
        .contains("rejected: card <i>declined</i>"));
    let outcomes: Vec<String> = {
        let cells = browser
            .find_all(Locator::Css("#job-table tbody td.outcome"))
            .await
            .unwrap();
        let mut out = Vec::new();
        for cell in cells {
            out.push(cell.text().await.unwrap());
        }
        out
    };
    assert_eq!(outcomes, ["nacked", "rejected"]);
    // A rejected attempt carries its why, as its dead letter does; a nack
    // without one has none.
    let errors: Vec<String> = {
        let cells = browser
            .find_all(Locator::Css("#job-table tbody td.error"))
            .await
            .unwrap();
        let mut out = Vec::new();
        for cell in cells {
            out.push(cell.text().await.unwrap());
        }
        out
    };
    assert_eq!(errors, ["–", "card <i>declined</i>"]);
    // The header names the server, as on every page (not a lone dash).
    assert!(
        text(&browser, "#server").await.contains("db "),
        "{}",
        text(&browser, "#server").await
    );
    assert!(text(&browser, "#job-table tbody td.worker").await.starts_with("pid "));
    screenshot(&browser, "job").await;

    // By id, from the box: the other job, handled.
    let input = browser.find(Locator::Css("#job-search-id")).await.unwrap();
    input.clear().await.unwrap();
    input.send_keys("order-43").await.unwrap();
    browser
        .find(Locator::Css("#job-search button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "handled").await;
    assert_eq!(text(&browser, "#job-table tbody td.outcome").await, "ok");

    // An id with no trace says so.
    browser
        .goto(&format!("{url}/job?name={}&id=nobody", urlencode(QUEUE)))
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "unknown").await;
    assert!(!text(&browser, "#job-detail").await.contains("keeps no job history"));

    // With history off, the page says so.
    dq.set_job_history(None).await.unwrap();
    browser
        .goto(&format!("{url}/job?name={}&id=order-43", urlencode(QUEUE)))
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "unknown").await;
    assert!(
        text(&browser, "#job-detail")
            .await
            .contains("This queue keeps no job history"),
        "{}",
        text(&browser, "#job-detail").await
    );
    client.shutdown().await;
}

/// What a script on the page answers.
async fn js(browser: &fantoccini::Client, script: &str) -> serde_json::Value {
    browser.execute(script, vec![]).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_jobs_page_shows_its_times_links_its_row_and_requeues_or_deletes_it() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = "refunds";
    let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    // Two dead letters before the job's, so its row is #3.
    seed::dead_letter(&server, queue, b"older-1").await;
    seed::dead_letter(&server, queue, b"older-2").await;
    for id in ["r-1", "r-2"] {
        dq.offer_with_id(id, &format!("refund {id}"), Duration::ZERO)
            .await
            .unwrap();
    }
    dq.transfer_now().await.unwrap();
    for _ in 0..2 {
        assert!(rq.take().await.unwrap().reject("account closed").await.unwrap());
    }

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/job?name={queue}&id=r-1")).await.unwrap();
    wait_text(&browser, "#job-state", "dead-lettered").await;

    // Times as the other pages write them: local with the zone, beside how long ago.
    let since = text(&browser, "#job-since").await;
    assert!(since.contains(" ago\n20") && since.contains("UTC"), "{since:?}");
    let started = text(&browser, "#job-table tbody td.when").await;
    assert!(
        started.starts_with("20") && started.contains("UTC") && started.ends_with(" ago"),
        "{started:?}"
    );

    // The find-a-job box is styled as the other pages' inputs are.
    let radius = js(
        &browser,
        "return getComputedStyle(document.getElementById('job-search-id')).borderTopLeftRadius",
    )
    .await;
    assert_eq!(radius, "6px");

    // Its row: a link to the queue page's dead letters, opened at its row.
    wait_text(&browser, "#job-dead-row", "#3 in the dead letters").await;
    screenshot(&browser, "job-dead").await;
    let href = attr(&browser, "#job-dead-row", "href").await.unwrap();
    assert!(href.contains("dead=3"), "{href}");
    click(&browser, "#job-dead-row").await;
    wait_text(&browser, "#dead-table tbody tr.target td.num", "3").await;
    assert_eq!(text(&browser, "#dead-table tbody tr.target a.job-link").await, "r-1");
    browser.back().await.unwrap();

    // Requeue: one press, that value only, back to the queue's tail.
    wait_text(&browser, "#job-state", "dead-lettered").await;
    click(&browser, "#job-requeue").await;
    wait_text(&browser, "#job-state", "ready").await;
    assert!(text(&browser, "#flash").await.contains("requeued 1 dead letter"));
    assert_eq!(seed::lrange(&server, queue).await, [bytes::Bytes::from("refund r-1")]);
    assert_eq!(seed::llen(&server, &format!("delayq_dead_letter:{{{queue}}}")).await, 3);

    // Delete: the first press only asks.
    browser.goto(&format!("{url}/job?name={queue}&id=r-2")).await.unwrap();
    wait_text(&browser, "#job-dead-row", "#3 in the dead letters").await;
    click(&browser, "#job-delete").await;
    wait_text(&browser, "#job-delete", "Delete? Press again").await;
    assert_eq!(seed::llen(&server, &format!("delayq_dead_letter:{{{queue}}}")).await, 3);
    click(&browser, "#job-delete").await;
    wait_text(&browser, "#job-state", "deleted (its dead letter)").await;
    let left: Vec<bytes::Bytes> = seed::lrange(&server, &format!("delayq_dead_letter:{{{queue}}}")).await;
    assert_eq!(left, [bytes::Bytes::from("older-1"), bytes::Bytes::from("older-2")]);
    assert!(
        attr(&browser, "#job-actions", "hidden").await.is_some(),
        "no dead letter, no actions"
    );
    client.shutdown().await;
}

/// The queue page's Find id on an id no longer pending says so and links
/// to the job's page, which says where it went.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_id_on_a_job_no_longer_pending_links_to_where_it_went() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = "refunds";
    let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    dq.offer_with_id("r-7", &"refund".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.transfer_now().await.unwrap();
    assert!(rq.take().await.unwrap().reject("account closed").await.unwrap());

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name={queue}")).await.unwrap();
    wait_text(&browser, "#dead-letters", "1").await;
    browser
        .find(Locator::Css("#search-q"))
        .await
        .unwrap()
        .send_keys("r-7")
        .await
        .unwrap();
    click(&browser, "#search-id").await;
    wait_text(&browser, "#search-info a.job-link", "where it went (its job page)").await;
    assert!(text(&browser, "#search-info")
        .await
        .starts_with("no pending element has the id"));
    click(&browser, "#search-info a.job-link").await;
    wait_text(&browser, "#job-state", "dead-lettered").await;
    assert_eq!(text(&browser, "#job-id").await, "r-7");
    client.shutdown().await;
}

/// A library Worker runs the job: it reports progress 0.5 and waits for
/// its cancel. The page shows the bar; Cancel (two presses) asks the cancel,
/// the worker tells the handler, and the page shows the job cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_jobs_progress_shows_as_a_bar_and_cancel_job_stops_it() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = "imports";
    let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    dq.offer_with_id("import-7", &"big.csv".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.transfer_now().await.unwrap();
    let worker = client
        .worker(queue, StringCodec)
        .unwrap()
        .cancel_poll(Duration::from_millis(100))
        .run_job(|_file: String, job: JobContext| async move {
            job.progress(&0.5).await?;
            job.cancelled().await;
            Err::<u32, BoxError>("stopped on the cancel".into())
        });

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser
        .goto(&format!("{url}/job?name={queue}&id=import-7"))
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "in flight").await;
    wait_text(&browser, "#job-progress .percent", "50%").await;
    assert_eq!(
        attr(&browser, "#job-progress progress", "value").await.as_deref(),
        Some("0.5")
    );
    assert!(text(&browser, "#job-progress-at").await.starts_with("reported "));
    assert!(
        attr(&browser, "#job-cancel-badge", "hidden").await.is_some(),
        "no cancel asked yet"
    );

    // The first press only asks; the second cancels.
    click(&browser, "#job-cancel").await;
    wait_text(&browser, "#job-cancel", "Cancel job? Press again").await;
    assert!(rq.job("import-7").await.unwrap().cancel_requested.is_none());
    click(&browser, "#job-cancel").await;
    wait_text(&browser, "#job-state", "cancelled").await;
    let flash = text(&browser, "#flash").await;
    assert!(
        flash.contains("which runs") && flash.contains("its worker tells its handler"),
        "{flash}"
    );
    assert!(text(&browser, "#job-detail").await.contains("cancelled while it ran"));
    assert!(
        attr(&browser, "#job-cancel-actions", "hidden").await.is_some(),
        "an ended job has no Cancel"
    );
    assert_eq!(
        text(&browser, "#job-progress .percent").await,
        "50%",
        "its last progress stays"
    );
    screenshot(&browser, "job-cancel").await;
    let report = worker.shutdown().await;
    assert_eq!(report.cancelled, 1);
    assert_eq!(dq.status().await.unwrap().totals.cancelled, 1);
    client.shutdown().await;
}

/// A handler's result and progress are its text: markup shows as text and
/// runs nothing; a long result folds, and stays open through the polls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jobs_result_and_progress_show_as_text_and_a_long_result_folds() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = "renders";
    let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(Duration::from_secs(3600))).await.unwrap();
    for id in ["render-1", "render-2"] {
        dq.offer_with_id(id, &"page".to_string(), Duration::ZERO).await.unwrap();
    }
    dq.transfer_now().await.unwrap();
    let first = rq.take().await.unwrap();
    assert!(first
        .progress(&serde_json::json!({"phase": "<b>layout</b>", "pages": 3}))
        .await
        .unwrap());
    let result = serde_json::json!({"html": "<img src=x onerror=alert(1)>", "quote": "\"'", "bell": "\u{7}"});
    assert!(first.ack_with_result(&result).await.unwrap());
    let rows: Vec<serde_json::Value> = (0..40).map(|i| serde_json::json!({"row": i, "ok": true})).collect();
    assert!(rq.take().await.unwrap().ack_with_result(&rows).await.unwrap());

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser
        .goto(&format!("{url}/job?name={queue}&id=render-1"))
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "handled").await;
    let shown = text(&browser, "#job-result pre").await;
    assert!(shown.contains(r#""html": "<img src=x onerror=alert(1)>""#), "{shown}");
    assert!(shown.contains(r#""quote": "\"'""#), "{shown}");
    assert!(shown.contains(r#""bell": "\u0007""#), "{shown}");
    let progress = text(&browser, "#job-progress pre").await;
    assert!(progress.contains(r#""phase": "<b>layout</b>""#), "{progress}");
    // Text, not markup: no element came of it, and no alert is open (the
    // next command would fail on one).
    let made = js(
        &browser,
        "return document.querySelectorAll('#job-result img, #job-progress b').length",
    )
    .await;
    assert_eq!(made, 0);
    assert!(attr(&browser, "#job-cancel-actions", "hidden").await.is_some());
    screenshot(&browser, "job-result").await;

    // 40 rows fold away; opened, they stay open through the next polls.
    browser
        .goto(&format!("{url}/job?name={queue}&id=render-2"))
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "handled").await;
    let summary = text(&browser, "#job-result details summary").await;
    assert!(
        summary.starts_with("162 lines,") && summary.ends_with("bytes of JSON: show"),
        "{summary}"
    );
    click(&browser, "#job-result details summary").await;
    tokio::time::sleep(Duration::from_millis(4500)).await;
    assert_eq!(
        js(&browser, "return document.querySelector('#job-result details').open").await,
        true
    );
    assert!(text(&browser, "#job-result pre").await.contains("\"row\": 39"));

    // A ready job whose cancel was asked waits for the take that drops it:
    // the badge says since when, and Cancel job stays (asking again asks once).
    dq.offer_with_id("render-3", &"page".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.transfer_now().await.unwrap();
    assert!(matches!(
        rq.cancel_job("render-3").await.unwrap(),
        delayq::jobs::CancelOutcome::Queued { .. }
    ));
    browser
        .goto(&format!("{url}/job?name={queue}&id=render-3"))
        .await
        .unwrap();
    wait_text(&browser, "#job-state", "ready").await;
    let badge = text(&browser, "#job-cancel-badge").await;
    assert!(badge.starts_with("cancel requested "), "{badge:?}");
    assert!(attr(&browser, "#job-cancel-actions", "hidden").await.is_none());
    screenshot(&browser, "job-cancel-requested").await;
    client.shutdown().await;
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
