//! Groups (`OfferOptions::group`) on the queue page's JSON and through the
//! group settings action: the grouped counts beside the priority counts,
//! the Groups card's settings, keys runnable and held (with the next one
//! freed); the settings set and read back through the library, refused
//! with nothing changed for bad numbers, guarded as every action; and the
//! grouped gauges of `/metrics`.

use std::time::Duration;

use axum::http::{header, StatusCode};
use delayq::groups::{GroupLimits, OnFailure};
use delayq::StringCodec;
use serde_json::Value;

use super::{action, csrf, dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_json_counts_grouped_values_and_shows_the_groups_keys() {
    let server = RedisServer::start().await;
    // One plain element, due later: the ready values are all grouped, so
    // a take below takes those.
    seed::offer(&server, "orders", "plain-later", 600).await;
    seed::grouped(
        &server,
        "orders",
        &[
            ("a#1", "customer-a", 0),
            ("a#2", "customer-a", 0),
            ("b#1", "<b>&\"b\"", 0),
            ("c#1", "customer-c", 600),
        ],
    )
    .await;
    seed::queue(&server, "plain", 0, 2, 0).await;
    let app = dashboard(&server, |d| d).await;

    let queue = send(&app, get("/api/queue?name=orders")).await.json();
    let status = &queue["status"];
    assert_eq!(status["grouped_ready"], 3, "{status}");
    assert_eq!(status["grouped_pending"], 1, "{status}");
    // The pending table lists the delayed queue's elements only.
    assert_eq!(status["pending"], 2, "{status}");
    assert_eq!(queue["pending"]["total"], 1, "{queue}");
    assert_eq!(queue["pending"]["elements"][0]["text"], "plain-later");
    let groups = &queue["groups"];
    assert_eq!(groups["used"], true, "{groups}");
    assert_eq!(groups["concurrency"], 1, "{groups}");
    assert_eq!(groups["rate"], Value::Null, "{groups}");
    assert_eq!(groups["on_failure"], "hold", "{groups}");
    assert_eq!(groups["text"], "concurrency 1 per key, no rate, on failure hold");
    assert_eq!(groups["runnable"], 2, "both keys with ready values may run: {groups}");
    assert_eq!(groups["held"], 0, "{groups}");
    assert_eq!(groups["next_freed"], Value::Null, "{groups}");

    // A failed value under hold holds its key until its retry is due.
    let client = seed::client(&server).await;
    let consumers = client
        .reliable_queue("orders", StringCodec)
        .unwrap()
        .without_transfer()
        .with_visibility_timeout(Duration::from_secs(600));
    let mut taken = Vec::new();
    while taken.len() < 2 {
        let delivery = consumers
            .take_timeout(Duration::from_secs(10))
            .await
            .unwrap()
            .expect("a grouped value");
        taken.push(delivery);
    }
    let b = taken
        .iter()
        .position(|d| d.value() == "b#1")
        .expect("one of each key in turn");
    let retried = taken.remove(b);
    let before = seed::now_ms();
    assert!(retried.nack(Duration::from_secs(300)).await.unwrap());
    let groups = send(&app, get("/api/queue?name=orders")).await.json()["groups"].clone();
    assert_eq!(groups["held"], 1, "{groups}");
    assert_eq!(groups["runnable"], 0, "a is at its concurrency, b held: {groups}");
    assert_eq!(groups["next_freed"]["key"], "<b>&\"b\"", "the key as offered: {groups}");
    let at = groups["next_freed"]["at_ms"].as_i64().unwrap();
    assert!(
        (before + 290_000..before + 310_000).contains(&at),
        "freed at its retry, in 5 minutes: {at} vs {before}"
    );

    // A queue that never had a grouped value: nothing used, the defaults.
    let plain = send(&app, get("/api/queue?name=plain")).await.json();
    assert_eq!(plain["status"]["grouped_ready"], 0);
    assert_eq!(plain["groups"]["used"], false, "{}", plain["groups"]);
    assert_eq!(plain["groups"]["concurrency"], 1);

    // The overview's totals add them up too, once sampled after the takes:
    // a#2, and b#1 back at its key's head.
    let overview = until(&app, "/api/overview", |r| r.json()["totals"]["grouped_ready"] == 2)
        .await
        .json();
    assert_eq!(overview["totals"]["grouped_pending"], 1, "{}", overview["totals"]);
    for delivery in taken {
        assert!(delivery.ack().await.unwrap());
    }
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_settings_are_set_read_back_guarded_and_refused_when_bad() {
    let server = RedisServer::start().await;
    seed::grouped(&server, "orders", &[("a#1", "customer-a", 0)]).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let client = seed::client(&server).await;
    let consumers = client.reliable_queue("orders", StringCodec).unwrap().without_transfer();
    let path = "/api/actions/group-limits";
    let form = "name=orders&concurrency=2&rate=10&per=1s&on_failure=skip";

    // POST only, same site, with the page's CSRF token, as every action.
    let read = send(&app, get(&format!("{path}?{form}"))).await;
    assert_eq!(read.status, StatusCode::METHOD_NOT_ALLOWED, "{}", read.body);
    let mut forged = action(path, &token, form);
    forged.headers_mut().remove("x-csrf-token");
    assert_eq!(send(&app, forged).await.status, StatusCode::FORBIDDEN);
    let mut cross_site = action(path, &token, form);
    cross_site
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    assert_eq!(send(&app, cross_site).await.status, StatusCode::FORBIDDEN);
    // Off loopback the dashboard's token is needed too.
    let guarded = dashboard(&server, |d| d.token(Some("s3cret-token".into()))).await;
    let refused = send(&guarded, action(path, &token, form)).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", refused.body);
    assert_eq!(
        consumers.group_limits().await.unwrap(),
        GroupLimits::new(),
        "nothing set yet"
    );

    let set = send(&app, action(path, &token, form)).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    let want = GroupLimits::new()
        .concurrency(2)
        .rate(10, Duration::from_secs(1))
        .on_failure(OnFailure::Skip);
    assert_eq!(consumers.group_limits().await.unwrap(), want);
    let message = set.json()["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("concurrency 2 per key, at most 10 starts per 1s per key, on failure skip"),
        "{message}"
    );
    let groups = send(&app, get("/api/queue?name=orders")).await.json()["groups"].clone();
    assert_eq!(groups["concurrency"], 2, "{groups}");
    assert_eq!(groups["rate"]["count"], 10, "{groups}");
    assert_eq!(groups["rate"]["per_ms"], 1_000, "{groups}");
    assert_eq!(groups["rate"]["per"], "1s", "{groups}");
    assert_eq!(groups["on_failure"], "skip", "{groups}");

    // Bad numbers: 400 saying which field, and nothing changes.
    for (bad, field) in [
        ("concurrency=0", "concurrency must be 1 or more"),
        ("concurrency=-1", "concurrency"),
        ("concurrency=lots", "concurrency"),
        ("concurrency=4294967296", "concurrency"),
        ("concurrency=2.5", "concurrency"),
        ("concurrency=3&rate=x&per=1s", "rate"),
        ("concurrency=3&rate=-2&per=1s", "rate"),
        ("concurrency=3&rate=5", "needs its period"),
        ("concurrency=3&rate=5&per=soon", "per must be a period"),
        ("concurrency=3&rate=5&per=0s", "per must be a period"),
        ("concurrency=3&on_failure=retry", "on failure must be hold or skip"),
    ] {
        let refused = send(&app, action(path, &token, &format!("name=orders&{bad}"))).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{bad}: {}", refused.body);
        let why = refused.json()["error"].as_str().unwrap().to_owned();
        assert!(
            why.contains(field) && why.contains("Nothing was changed"),
            "{bad}: {why}"
        );
    }
    assert_eq!(consumers.group_limits().await.unwrap(), want, "nothing changed");

    // Empty fields are the defaults: one at a time, no rate, hold.
    let reset = send(
        &app,
        action(path, &token, "name=orders&concurrency=&rate=&per=&on_failure="),
    )
    .await;
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    assert_eq!(consumers.group_limits().await.unwrap(), GroupLimits::new());

    // A name delayq does not know: 404 and no stray key.
    let missing = send(&app, action(path, &token, "name=ordrs&concurrency=2")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    assert_eq!(
        seed::exists(&server, "delayq_group_state:{ordrs}").await,
        0,
        "no stray key"
    );

    // Read-only: no such route.
    let read_only = dashboard(&server, |d| d.read_only(true)).await;
    let token = csrf(&read_only).await;
    let refused = send(&read_only, action(path, &token, form)).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    // The card still reads.
    let page = send(&read_only, get("/api/queue?name=orders")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(page.headers[header::CONTENT_TYPE], "application/json");
    client.shutdown().await;
}

/// `delayq_queue_grouped_ready` and `delayq_queue_grouped_pending`: one line
/// per queue, 0 for a queue without groups, labels escaped as every gauge's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_gauge_grouped_values() {
    let server = RedisServer::start().await;
    let odd = "grouped\"q\"\\b";
    seed::grouped(
        &server,
        odd,
        &[("a#1", "a", 0), ("a#2", "a", 0), ("b#1", "b", 0), ("a#3", "a", 600)],
    )
    .await;
    seed::queue(&server, "plain", 2, 0, 0).await;
    let app = dashboard(&server, |d| d).await;
    let ready = r#"delayq_queue_grouped_ready{queue="grouped\"q\"\\b"} 3"#;
    let text = until(&app, "/metrics", |r| {
        r.body.contains(ready) && r.body.contains(r#"delayq_queue_pending{queue="plain"} 2"#)
    })
    .await
    .body;
    for line in [
        r#"delayq_queue_grouped_pending{queue="grouped\"q\"\\b"} 1"#,
        r#"delayq_queue_grouped_ready{queue="plain"} 0"#,
        r#"delayq_queue_grouped_pending{queue="plain"} 0"#,
        "# TYPE delayq_queue_grouped_ready gauge",
        "# TYPE delayq_queue_grouped_pending gauge",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
}
