//! The schedules' Pause, Resume and Remove buttons in headless Chromium.

use fantoccini::Locator;

use super::{browser, screenshot, serve, start_driver, text, wait_shown, wait_text, Browser, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

/// Saves the schedule `name` on `queue` from a client that then stops.
async fn saved_schedule(server: &RedisServer, queue: &str, name: &str, spec: &str) {
    let saver = seed::client(server).await;
    let target = saver.delayed_queue(queue, delayq::StringCodec).unwrap();
    saver
        .schedule(name, spec, &target, &"compact".to_string())
        .await
        .unwrap();
    drop(target);
    saver.shutdown().await;
}

/// Clicks `css`, finding it again if the 2-second redraw replaced it.
async fn click(browser: &Browser, css: &str) {
    let mut last = None;
    for _ in 0..50 {
        match browser.find(Locator::Css(css)).await {
            Ok(element) => match element.click().await {
                Ok(_) => return,
                Err(e) => last = Some(e),
            },
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("cannot click {css}: {last:?}");
}

async fn count(browser: &Browser, css: &str) -> usize {
    browser.find_all(Locator::Css(css)).await.unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedule_rows_pause_resume_and_remove_with_a_second_press() {
    let server = RedisServer::start().await;
    saved_schedule(&server, "reports", "nightly", "0 3 * * *").await;
    saved_schedule(&server, "reports", "weekly", "0 9 * * MON").await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=reports")).await.unwrap();
    wait_shown(&browser, "#schedules", true).await;
    let row = r#"tr[data-schedule="nightly"]"#;
    wait_text(&browser, &format!("{row} td.state"), "no runner").await;

    click(&browser, &format!("{row} button.schedule-pause")).await;
    wait_text(&browser, &format!("{row} td.state"), "paused").await;
    assert!(text(&browser, "#flash").await.contains("paused schedule"));
    wait_text(&browser, &format!("{row} button.schedule-resume"), "Resume").await;
    let library = seed::client(&server).await;
    let schedules = library.schedules(&delayq::QueueKeys::new("reports").unwrap()).unwrap();
    assert!(schedules.get("nightly").await.unwrap().unwrap().paused);
    assert!(!schedules.get("weekly").await.unwrap().unwrap().paused, "only that row");
    screenshot(&browser, "queue-schedules-actions").await;

    click(&browser, &format!("{row} button.schedule-resume")).await;
    wait_text(&browser, &format!("{row} td.state"), "no runner").await;
    assert!(!schedules.get("nightly").await.unwrap().unwrap().paused);

    // Remove: the first press only arms it.
    click(&browser, &format!("{row} button.schedule-remove")).await;
    wait_text(
        &browser,
        &format!("{row} button.schedule-remove"),
        "Remove? Press again",
    )
    .await;
    assert!(
        schedules.get("nightly").await.unwrap().is_some(),
        "one press removes nothing"
    );
    click(&browser, &format!("{row} button.schedule-remove")).await;
    eventually(WAIT, "the removed row goes", || {
        let browser = browser.clone();
        async move { count(&browser, r#"tr[data-schedule="nightly"]"#).await == 0 }
    })
    .await;
    assert!(text(&browser, "#flash").await.contains("removed schedule"));
    assert!(schedules.get("nightly").await.unwrap().is_none());
    assert_eq!(count(&browser, r#"tr[data-schedule="weekly"]"#).await, 1);
    assert_eq!(text(&browser, "#schedules-table th.row-actions").await, "ACTIONS");
    screenshot(&browser, "queue-schedules-removed").await;

    // Read-only: no actions column, no buttons.
    let read_only = super::serve_read_only(&server).await;
    browser.goto(&format!("{read_only}/queue?name=reports")).await.unwrap();
    wait_text(&browser, r#"tr[data-schedule="weekly"] td.state"#, "no runner").await;
    assert_eq!(count(&browser, "#schedules-table button").await, 0);
    assert_eq!(count(&browser, "#schedules-table th.row-actions").await, 0);
    assert_eq!(count(&browser, "#schedules-table td.row-actions").await, 0);
}
