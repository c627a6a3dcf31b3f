//! The schedules' Pause, Resume and Remove buttons in headless Chromium.

use fantoccini::Locator;

use super::{browser, click, screenshot, serve, start_driver, text, wait_shown, wait_text, Browser, WAIT};
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

    // Read-only: no actions column, no buttons but the fires' (reading only).
    let read_only = super::serve_read_only(&server).await;
    browser.goto(&format!("{read_only}/queue?name=reports")).await.unwrap();
    wait_text(&browser, r#"tr[data-schedule="weekly"] td.state"#, "no runner").await;
    assert_eq!(count(&browser, "#schedules-table button:not(.schedule-fires)").await, 0);
    assert_eq!(count(&browser, "#schedules-table button.schedule-fires").await, 1);
    assert_eq!(count(&browser, "#schedules-table th.row-actions").await, 0);
    assert_eq!(count(&browser, "#schedules-table td.row-actions").await, 0);
    click(&browser, r#"tr[data-schedule="weekly"] button.schedule-fires"#).await;
    wait_contains(&browser, r#"tr[data-fires-of="weekly"]"#, "no fire recorded yet").await;
}

/// Makes the stored schedule `name` due `ago_ms` ago, as if no runner had
/// run it meanwhile.
async fn due_ago(server: &RedisServer, queue: &str, name: &str, ago_ms: i64) {
    use delayq::fred::interfaces::HashesInterface;
    let raw = seed::raw(server).await;
    let key = delayq::QueueKeys::new(queue).unwrap().schedules();
    let stored: String = raw.hget(&key, name).await.unwrap();
    let mut record: serde_json::Value = serde_json::from_str(&stored).unwrap();
    record["next_ms"] = serde_json::Value::String((seed::now_ms() - ago_ms).to_string());
    let _: i64 = raw.hset(&key, (name, record.to_string())).await.unwrap();
}

/// Waits until the element `css` has `want` in its text.
async fn wait_contains(browser: &Browser, css: &str, want: &str) {
    eventually(WAIT, &format!("{css} says {want:?}"), || {
        let browser = browser.clone();
        async move { text(&browser, css).await.contains(want) }
    })
    .await;
}

/// Waits until nothing matches `css`.
async fn wait_gone(browser: &Browser, css: &str) {
    eventually(WAIT, &format!("{css} gone"), || {
        let browser = browser.clone();
        async move { count(&browser, css).await == 0 }
    })
    .await;
}

/// Types `text` into the input `css`, replacing what it holds.
async fn fill(browser: &Browser, css: &str, text: &str) {
    let input = browser.find(Locator::Css(css)).await.unwrap();
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedule_rows_show_their_fires_run_now_and_edit_inline() {
    let server = RedisServer::start().await;
    saved_schedule(&server, "reports", "nightly", "0 3 * * *").await;
    // An hourly schedule whose runner was away for half an hour: its fire
    // is late (FireOnce offers the missed occurrence past its 1 s window).
    let library = seed::client(&server).await;
    let target = library
        .delayed_queue("reports", delayq::StringCodec)
        .unwrap()
        .without_transfer();
    let hourly = delayq::schedule::every(std::time::Duration::from_secs(3600))
        .misfire(delayq::schedule::Misfire::FireOnce)
        .misfire_after(std::time::Duration::from_secs(1));
    library
        .schedule("hourly", hourly, &target, &"rollup".to_string())
        .await
        .unwrap();
    due_ago(&server, "reports", "hourly", 1_800_000).await;
    let schedules = library.schedules(&delayq::QueueKeys::new("reports").unwrap()).unwrap();
    library
        .run_schedules(&delayq::QueueKeys::new("reports").unwrap())
        .unwrap();
    eventually(WAIT, "the late fire", || {
        let schedules = schedules.clone();
        async move { !schedules.fires("hourly").await.unwrap().is_empty() }
    })
    .await;

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=reports")).await.unwrap();
    wait_shown(&browser, "#schedules", true).await;

    // Fires, opened under the row and kept open across redraws.
    let hourly_row = r#"tr[data-schedule="hourly"]"#;
    click(&browser, &format!("{hourly_row} button.schedule-fires")).await;
    let fires = r#"tr[data-fires-of="hourly"] table.fires"#;
    wait_text(&browser, &format!("{fires} td.kind"), "late").await;
    // The runner the fire records (the live runners' list may have dropped
    // it by now on a loaded machine: it keeps those that beat within 30 s).
    let runner = schedules.fires("hourly").await.unwrap()[0].runner.clone();
    assert!(!runner.is_empty(), "the fire names its runner");
    assert!(text(&browser, fires).await.contains(&runner), "the runner's id shows");

    // Run now: one value, the fire shows as by hand, the next fire stays.
    let nightly_row = r#"tr[data-schedule="nightly"]"#;
    let before = schedules.get("nightly").await.unwrap().unwrap();
    click(&browser, &format!("{nightly_row} button.schedule-run")).await;
    wait_contains(&browser, "#flash", "once, now").await;
    assert_eq!(
        seed::zcard(&server, "redisson_delay_queue_timeout:{reports}").await,
        2,
        "late fire + run now"
    );
    let after = schedules.get("nightly").await.unwrap().unwrap();
    assert_eq!((after.next, after.fired), (before.next, before.fired));
    click(&browser, &format!("{nightly_row} button.schedule-fires")).await;
    wait_text(
        &browser,
        r#"tr[data-fires-of="nightly"] table.fires td.kind"#,
        "by hand",
    )
    .await;
    wait_text(&browser, &format!("{fires} td.kind"), "late").await;

    // Edit: a spec that does not parse is refused in the form, nothing changes.
    click(&browser, &format!("{nightly_row} button.schedule-edit")).await;
    let form = r#"tr[data-edit-of="nightly"] form.schedule-edit"#;
    wait_shown(&browser, form, true).await;
    fill(&browser, &format!("{form} input[name=spec]"), "61 * * * *").await;
    click(&browser, &format!("{form} button.schedule-save")).await;
    wait_contains(&browser, &format!("{form} .form-error"), "does not parse").await;
    assert_eq!(
        schedules.get("nightly").await.unwrap().unwrap().revision,
        before.revision
    );
    screenshot(&browser, "queue-schedules-edit-refused").await;
    // Another expression, a zone and a value with markup: the value stays text.
    fill(&browser, &format!("{form} input[name=spec]"), "0 4 * * *").await;
    fill(&browser, &format!("{form} input[name=tz]"), "Europe/Paris").await;
    let markup = r#"<img src=x onerror="document.title='pwned'">vacuum"#;
    fill(&browser, &format!("{form} textarea[name=value]"), markup).await;
    click(&browser, &format!("{form} button.schedule-save")).await;
    wait_contains(&browser, "#flash", "edited schedule").await;
    wait_text(
        &browser,
        &format!("{nightly_row} td.spec"),
        "CRON_TZ=Europe/Paris 0 4 * * *",
    )
    .await;
    wait_text(&browser, &format!("{nightly_row} td.payload"), markup).await;
    assert_eq!(count(&browser, "#schedules-table img").await, 0, "markup stays text");
    assert_ne!(browser.title().await.unwrap(), "pwned");
    wait_gone(&browser, form).await;
    let edited = schedules.get("nightly").await.unwrap().unwrap();
    assert_eq!(edited.spec.to_string(), "CRON_TZ=Europe/Paris 0 4 * * *");
    assert_eq!(&edited.payload[..], markup.as_bytes());
    assert_eq!(edited.fired, before.fired, "counts stay");
    assert_eq!(schedules.fires("nightly").await.unwrap().len(), 1, "the history stays");
    // Both fire lists still open after the edit's redraw.
    wait_text(
        &browser,
        r#"tr[data-fires-of="nightly"] table.fires td.kind"#,
        "by hand",
    )
    .await;
    screenshot(&browser, "queue-schedules-fires-edit").await;

    // An edit form open while the page redraws keeps what is typed.
    click(&browser, &format!("{hourly_row} button.schedule-edit")).await;
    let hourly_form = r#"tr[data-edit-of="hourly"] form.schedule-edit"#;
    wait_shown(&browser, hourly_form, true).await;
    fill(&browser, &format!("{hourly_form} input[name=spec]"), "every 30m").await;
    // Two polls later (the live clock moved twice), the section was redrawn.
    for _ in 0..2 {
        let live = text(&browser, "#live").await;
        eventually(WAIT, "the page polls again", || {
            let (browser, live) = (browser.clone(), live.clone());
            async move { text(&browser, "#live").await != live }
        })
        .await;
    }
    let typed = super::prop(&browser, &format!("{hourly_form} input[name=spec]"), "value").await;
    assert_eq!(typed.as_deref(), Some("every 30m"));
    // The redraws left the caret where it was: an operator typing when the
    // page polls goes on typing into the field (a redraw that moved the
    // field used to blur it, and the next keys went nowhere).
    let focused: bool = browser
        .execute(
            "return document.activeElement === document.querySelector(arguments[0]);",
            vec![serde_json::json!(format!("{hourly_form} input[name=spec]"))],
        )
        .await
        .unwrap()
        .as_bool()
        .unwrap();
    assert!(focused, "the field being typed in keeps the focus across redraws");
    click(&browser, &format!("{hourly_form} button.schedule-save")).await;
    wait_text(&browser, &format!("{hourly_row} td.spec"), "every 30m").await;
    screenshot(&browser, "queue-schedules-edited").await;
    // The fires and an open form in the dark theme.
    click(&browser, &format!("{nightly_row} button.schedule-edit")).await;
    click(&browser, "#theme").await;
    wait_text(&browser, "#theme", "☀ light").await;
    screenshot(&browser, "queue-schedules-dark").await;
    library.shutdown().await;
}
