//! The lasting history's range buttons in headless Chromium: 1h, 24h, 7d
//! and 30d on a queue's page and on the overview (the whole server), drawn
//! from what Redis keeps, the range kept in the address across a reload.

use std::collections::BTreeMap;

use delayq::fred::prelude::*;
use fantoccini::Client as Browser;
use serde_json::{json, Value};

use super::{browser, click, screenshot, serve, start_driver, text, wait_text, WAIT};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

/// A stored record (see `src/history.rs`): totals that grow along a wave,
/// some failures, latency and memory that vary.
fn record(at: i64, i: i64) -> Value {
    let offered = (i * 40 + (i % 7) * 9) as u64;
    let failed = (i * 2 + i % 5) as u64;
    let wave = ((i as f64) / 9.0).sin().abs();
    json!([
        at,
        offered,
        offered,
        offered - failed,
        failed,
        failed / 3,
        i / 20,
        0,
        (wave * 800.0) as u64,
        (wave * 2400.0) as u64,
        (wave * 90_000.0) as u64 + 1_000,
        4_000_000 + (wave * 3_000_000.0) as u64,
        12,
        300,
        failed / 3
    ])
}

/// An hour of minutes and 31 days of hours, stored as the dashboards keep
/// them, for `prefix` (`delayq_dashboard` or `delayq_dashboard_server`).
async fn keep(server: &RedisServer, minutes_key: &str, hours_key: &str) {
    let redis = seed::raw(server).await;
    let now = seed::now_ms().div_euclid(60_000);
    let mut minutes: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    for m in (now - 90)..now {
        minutes
            .entry(m.div_euclid(60))
            .or_default()
            .push(record(m, m - now + 2_000));
    }
    let mut hours: BTreeMap<i64, Vec<Value>> = BTreeMap::new();
    let hour = now.div_euclid(60);
    for h in (hour - 31 * 24)..hour {
        hours
            .entry(h.div_euclid(24))
            .or_default()
            .push(record(h, h - hour + 1_000));
    }
    for (key, fields) in [(minutes_key, minutes), (hours_key, hours)] {
        let values: Vec<(String, String)> = fields
            .into_iter()
            .map(|(f, v)| (f.to_string(), serde_json::to_string(&v).unwrap()))
            .collect();
        let _: () = redis.hset(key, values).await.unwrap();
    }
}

/// What the history section says: its range and how many points it drew.
async fn drawn(browser: &Browser) -> (String, usize) {
    let found = browser
        .execute(
            "const s = document.querySelector('#history'); return [s.dataset.range || '', s.dataset.points || '0'];",
            vec![],
        )
        .await
        .expect("script runs");
    (
        found[0].as_str().unwrap().to_owned(),
        found[1].as_str().unwrap().parse().unwrap(),
    )
}

async fn press(browser: &Browser, range: &str) {
    let css = format!("#history-ranges button[data-range='{range}']");
    click(browser, &css).await;
    eventually(WAIT, &format!("the {range} history drawn"), || {
        let browser = browser.clone();
        let range = range.to_owned();
        async move {
            let (shown, points) = drawn(&browser).await;
            shown == range && points > 0
        }
    })
    .await;
    let pressed = browser
        .execute(
            "return [...document.querySelectorAll('#history-ranges button')].filter(b => b.getAttribute('aria-pressed') === 'true').map(b => b.textContent);",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(pressed, json!([range]));
}

/// Lines in a chart, by their points' count.
async fn line_points(browser: &Browser, chart: &str) -> Vec<usize> {
    let script = format!(
        "return [...document.querySelectorAll('#{chart} polyline')].map(p => p.getAttribute('points').split(' ').length);"
    );
    serde_json::from_value(browser.execute(&script, vec![]).await.unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_range_buttons_show_an_hour_a_day_a_week_and_a_month() {
    let server = RedisServer::start().await;
    seed::offer(&server, "charted", "x", 600).await;
    keep(
        &server,
        "delayq_dashboard_minutes:{charted}",
        "delayq_dashboard_hours:{charted}",
    )
    .await;
    keep(
        &server,
        "delayq_dashboard_server_minutes:{s}",
        "delayq_dashboard_server_hours:{s}",
    )
    .await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    browser.goto(&format!("{url}/queue?name=charted")).await.unwrap();
    wait_text(&browser, "#pending", "1").await;
    eventually(WAIT, "the hour drawn", || {
        let browser = browser.clone();
        async move { drawn(&browser).await == ("1h".to_owned(), 60) }
    })
    .await;
    assert_eq!(text(&browser, "#history-step").await, "one point per 1 minute");
    // The first minute's flows come from the one before it: 60 points each.
    // Offered, transferred and acked, and taken (from the samples, known
    // for the first minute too).
    assert_eq!(line_points(&browser, "chart-flow").await, [60, 60, 60, 60]);

    press(&browser, "30d").await;
    assert_eq!(text(&browser, "#history-step").await, "one point per 6 hours");
    let (_, points) = drawn(&browser).await;
    assert_eq!(points, 120, "30 days of hours in 6-hour points");
    assert_eq!(line_points(&browser, "chart-memory").await, [120]);
    let address = browser.current_url().await.unwrap();
    assert_eq!(address.query(), Some("name=charted&range=30d"));
    screenshot(&browser, "history-queue-30d").await;
    // A reload keeps the range.
    browser.refresh().await.unwrap();
    eventually(WAIT, "30 days after a reload", || {
        let browser = browser.clone();
        async move { drawn(&browser).await.0 == "30d" }
    })
    .await;

    press(&browser, "7d").await;
    assert_eq!(drawn(&browser).await.1, 84, "a week of hours in 2-hour points");
    press(&browser, "24h").await;
    // Only the last 90 minutes were kept: 8 points of 12 minutes at most.
    let (_, points) = drawn(&browser).await;
    assert!((7..=9).contains(&points), "{points} points");
    screenshot(&browser, "history-queue-24h").await;

    // The overview: the whole server's history, the same buttons.
    browser.goto(&url).await.unwrap();
    eventually(WAIT, "the server's hour drawn", || {
        let browser = browser.clone();
        async move { drawn(&browser).await == ("1h".to_owned(), 60) }
    })
    .await;
    press(&browser, "7d").await;
    assert_eq!(line_points(&browser, "chart-lag").await, [84, 84]);
    screenshot(&browser, "history-overview-7d").await;
    browser.close().await.unwrap();
    driver.session = None;
}
