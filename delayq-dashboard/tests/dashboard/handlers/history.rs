//! The lasting history and what `/metrics` serves from the server-side
//! totals; the shipped Grafana dashboard and Prometheus alert rules, held
//! to the names a live dashboard really serves.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use axum::http::StatusCode;
use delayq::StringCodec;
use serde_json::Value;

use super::{dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed;

/// What a queue's processes did, counted on the server, is what `/metrics`
/// says, as counters; a queue with a schedule and no runner reads 0
/// runners, one without schedules has no runner line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_what_every_process_did_and_the_schedule_runners() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let delayed = client.delayed_queue("counted", StringCodec).unwrap();
    for v in ["a", "b", "c"] {
        delayed.offer(&v.to_owned(), Duration::ZERO).await.unwrap();
    }
    // A duplicate is counted as such, not as offered.
    let once = delayq::dedup::Dedup::by_payload(Duration::from_secs(600));
    for _ in 0..2 {
        let _ = delayed
            .offer_dedup(&"d".to_owned(), Duration::from_secs(600), &once)
            .await
            .unwrap();
    }
    let jobs = client.reliable_queue("counted", StringCodec).unwrap();
    assert!(jobs.take().await.unwrap().ack().await.unwrap());
    assert!(jobs.take().await.unwrap().reject("broken").await.unwrap());
    let target = client
        .delayed_queue("scheduled", StringCodec)
        .unwrap()
        .without_transfer();
    client
        .schedule("nightly", "0 3 * * *", &target, &"x".to_owned())
        .await
        .unwrap();

    let app = dashboard(&server, |d| d).await;
    let text = until(&app, "/metrics", |r| {
        r.body.contains(r#"delayq_queue_acked_total{queue="counted"} 1"#)
            && r.body.contains(r#"delayq_queue_schedule_runners{queue="scheduled"}"#)
    })
    .await
    .body;
    for line in [
        "# TYPE delayq_queue_offered_total counter",
        r#"delayq_queue_offered_total{queue="counted"} 4"#,
        r#"delayq_queue_transferred_total{queue="counted"} 3"#,
        r#"delayq_queue_failed_total{queue="counted"} 1"#,
        r#"delayq_queue_dead_lettered_total{queue="counted"} 1"#,
        r#"delayq_queue_timed_out_total{queue="counted"} 0"#,
        "# TYPE delayq_queue_duplicates_total counter",
        r#"delayq_queue_duplicates_total{queue="counted"} 1"#,
        "# TYPE delayq_queue_expired_total counter",
        r#"delayq_queue_expired_total{queue="counted"} 0"#,
        "# TYPE delayq_queue_cancelled_total counter",
        r#"delayq_queue_cancelled_total{queue="counted"} 0"#,
        r#"delayq_queue_schedule_runners{queue="scheduled"} 0"#,
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    assert!(
        !text.contains(r#"delayq_queue_schedule_runners{queue="counted"}"#),
        "{text}"
    );
    // No gauge under a name the library's process metrics use (summing
    // both double counted): this process never transferred "scheduled", so
    // only the dashboard could have a line of it.
    for old in [
        "delayq_pending{",
        "delayq_ready{",
        "delayq_workers{",
        "delayq_transfer_lag_seconds{",
    ] {
        let line = format!(r#"{old}queue="scheduled"}}"#);
        assert!(!text.contains(&line), "{line} uses the library's name:\n{text}");
    }
    assert!(text.contains(r#"delayq_queue_pending{queue="scheduled"} 0"#), "{text}");
}

/// A minute record as `history.lua` stores it (see `src/history.rs`).
fn record(minute: i64, offered: u64, failed: u64, oldest_ms: u64, memory: u64) -> Value {
    serde_json::json!([minute, offered, offered, 0, failed, 0, 0, 0, 10, 20, oldest_ms, memory, 1, 2, 0])
}

/// A dashboard started later reads what was kept in Redis before it: the
/// flows per minute (differences of the totals), latency and memory, for
/// a queue and for the whole server; an unknown range is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dashboard_started_later_reads_back_the_kept_history() {
    let server = RedisServer::start().await;
    let now = seed::now_ms().div_euclid(60_000);
    let raw = seed::raw(&server).await;
    // Three finished minutes, kept by an earlier dashboard.
    let minutes = [
        record(now - 3, 10, 0, 500, 4096),
        record(now - 2, 14, 1, 1500, 8192),
        record(now - 1, 20, 3, 900, 4096),
    ];
    let by_hour = |m: &Value| m[0].as_i64().unwrap().div_euclid(60);
    for key in ["delayq_dashboard_minutes:{kept}", "delayq_dashboard_server_minutes:{s}"] {
        for hour in minutes.iter().map(by_hour).collect::<BTreeSet<_>>() {
            let of_hour: Vec<&Value> = minutes.iter().filter(|m| by_hour(m) == hour).collect();
            let _: () = delayq::fred::interfaces::HashesInterface::hset(
                &raw,
                key,
                (hour.to_string(), serde_json::to_string(&of_hour).unwrap()),
            )
            .await
            .unwrap();
        }
    }
    let app = dashboard(&server, |d| d).await;
    for path in ["/api/history?name=kept&range=1h", "/api/history?range=1h"] {
        let reply = send(&app, get(path)).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let body = reply.json();
        let points = body["points"].as_array().unwrap();
        let at: Vec<i64> = points.iter().map(|p| p["t_ms"].as_i64().unwrap() / 60_000).collect();
        assert_eq!(at, [now - 3, now - 2, now - 1], "{body}");
        let offered: Vec<&Value> = points.iter().map(|p| &p["offered"]).collect();
        assert_eq!(offered, [&Value::Null, &Value::from(4), &Value::from(6)], "{body}");
        let failed: Vec<&Value> = points.iter().map(|p| &p["failed"]).collect();
        assert_eq!(failed, [&Value::Null, &Value::from(1), &Value::from(2)], "{body}");
        // Records of a dashboard that kept no cancelled total: no flow of it.
        assert!(points.iter().all(|p| p["cancelled"].is_null()), "{body}");
        assert_eq!(points[1]["oldest_ready_ms"], 1500);
        assert_eq!(points[1]["memory_bytes"], 8192);
        assert_eq!(body["step_ms"], 60_000);
    }
    // 24 hours: the three minutes in one 12-minute point or two.
    let day = send(&app, get("/api/history?name=kept&range=24h")).await.json();
    let offered: u64 = day["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["offered"].as_u64())
        .sum();
    assert_eq!(offered, 10, "{day}");
    assert_eq!(day["step_ms"], 12 * 60_000);
    let refused = send(&app, get("/api/history?range=1y")).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
}

/// The repository's `deploy/` directory.
fn deploy(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy").join(path)
}

/// The metric names a PromQL expression names (`delayq_...` identifiers).
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("delayq_") {
        let before = rest[..at].chars().next_back();
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            names.push(tail[..end].to_owned());
        }
        rest = &tail[end..];
    }
    names
}

/// Every `expr` string anywhere in a JSON document (Grafana's targets), and
/// the templating queries.
fn exprs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("expr" | "definition", Value::String(text)) => out.push(text.clone()),
                    _ => exprs(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| exprs(v, out)),
        _ => {}
    }
}

/// The shipped Grafana dashboard and alert rules name only metrics a live
/// dashboard serves (scraped here, with a queue that has every series),
/// the JSON parses as a Grafana dashboard, the YAML has the rule structure
/// Prometheus loads; with `promtool` on the PATH it checks the rules too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_grafana_dashboard_and_alerts_name_only_served_metrics() {
    let server = RedisServer::start().await;
    seed::queue(&server, "served", 2, 1, 1).await;
    // Nothing ready: its oldest ready age reads 0 (unknown ages have no line).
    seed::queue(&server, "calm", 1, 0, 0).await;
    let client = seed::client(&server).await;
    let target = client.delayed_queue("served", StringCodec).unwrap().without_transfer();
    client
        .schedule("nightly", "0 3 * * *", &target, &"x".to_owned())
        .await
        .unwrap();
    let app = dashboard(&server, |d| d).await;
    let metrics = until(&app, "/metrics", |r| {
        r.body.contains("delayq_queue_schedule_runners{") && r.body.contains(r#"delayq_queue_pending{queue="calm"}"#)
    })
    .await
    .body;
    let served: BTreeSet<String> = metrics
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(['{', ' ']).next().unwrap().to_owned())
        .collect();

    let grafana: Value = serde_json::from_str(&std::fs::read_to_string(deploy("grafana/delayq.json")).unwrap())
        .expect("the Grafana dashboard is JSON");
    assert!(grafana["title"].is_string() && grafana["uid"].is_string());
    let panels = grafana["panels"].as_array().expect("panels");
    assert!(panels.len() >= 6, "{} panels", panels.len());
    for panel in panels {
        let targets = panel["targets"]
            .as_array()
            .unwrap_or_else(|| panic!("a panel without targets: {panel}"));
        assert!(!targets.is_empty(), "{panel}");
        assert!(panel["gridPos"]["w"].is_u64() && panel["title"].is_string(), "{panel}");
    }
    let mut grafana_exprs = Vec::new();
    exprs(&grafana, &mut grafana_exprs);

    let text = std::fs::read_to_string(deploy("prometheus/alerts.yml")).unwrap();
    let docs = yaml_rust2::YamlLoader::load_from_str(&text).expect("the alert rules are YAML");
    let groups = docs[0]["groups"].as_vec().expect("a `groups` list");
    let mut alert_exprs = Vec::new();
    let mut alerts = Vec::new();
    for group in groups {
        assert!(group["name"].as_str().is_some(), "a group without a name");
        for rule in group["rules"].as_vec().expect("a group's `rules` list") {
            let alert = rule["alert"].as_str().expect("an alert rule's name");
            let expr = rule["expr"].as_str().unwrap_or_else(|| panic!("{alert}: no expr"));
            if let Some(wait) = rule["for"].as_str() {
                assert!(
                    wait.len() > 1 && wait[..wait.len() - 1].parse::<u32>().is_ok() && wait.ends_with(['s', 'm', 'h']),
                    "{alert}: `for: {wait}`"
                );
            }
            assert!(rule["labels"]["severity"].as_str().is_some(), "{alert}: no severity");
            assert!(rule["annotations"]["summary"].as_str().is_some(), "{alert}: no summary");
            alerts.push(alert.to_owned());
            alert_exprs.push(expr.to_owned());
        }
    }
    for wanted in [
        "Lagging",
        "Latency",
        "DeadLetters",
        "ScheduleRunnersGone",
        "WorkersSilent",
    ] {
        assert!(
            alerts.iter().any(|a| a.contains(wanted)),
            "no alert on {wanted}: {alerts:?}"
        );
    }

    let mut named = 0;
    for expr in grafana_exprs.iter().chain(&alert_exprs) {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "no delayq metric in {expr}");
        for name in names {
            assert!(
                served.contains(&name),
                "{name} (in {expr}) is not served; /metrics has {served:?}"
            );
            named += 1;
        }
    }
    println!(
        "{} Grafana expressions, {} alert rules, {named} metric references, all served",
        grafana_exprs.len(),
        alerts.len()
    );

    // promtool, where installed (Debian's `prometheus` package): never required.
    match std::process::Command::new("promtool")
        .args(["check", "rules"])
        .arg(deploy("prometheus/alerts.yml"))
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "promtool: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => println!("promtool not run ({e}): the structure above was checked without it"),
    }
}
