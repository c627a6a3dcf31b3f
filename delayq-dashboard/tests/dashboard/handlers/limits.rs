//! The fleet-wide concurrency limit (`Limits::concurrency`) through the
//! limits action: set, read back, refused at 0 or a bad number with nothing
//! changed, kept when a form does not post the field, removed when empty;
//! and its `/metrics` gauge.

use std::collections::HashMap;

use axum::http::StatusCode;
use delayq::fred::prelude::*;

use super::{action, csrf, dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed;

/// The queue's limits hash, field by field, as Redis holds it.
async fn limits_hash(server: &RedisServer, name: &str) -> HashMap<String, String> {
    let redis = seed::raw(server).await;
    redis.hgetall(format!("delayq_limits:{{{name}}}")).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_limits_are_set_read_back_refused_at_0_and_removed() {
    let server = RedisServer::start().await;
    seed::queue(&server, "fleet", 3, 0, 0).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let queue = send(&app, get("/api/queue?name=fleet")).await.json();
    assert_eq!(queue["limits"]["concurrency"], serde_json::Value::Null, "{queue}");

    // POST only, with the page's token, as every action.
    let form = "name=fleet&max_size=10&max_payload=&offers=on&takes=on&concurrency=4";
    let mut forged = action("/api/actions/limits", &token, form);
    forged.headers_mut().remove("x-csrf-token");
    assert_eq!(send(&app, forged).await.status, StatusCode::FORBIDDEN);
    let mut cross_site = action("/api/actions/limits", &token, form);
    cross_site
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    assert_eq!(send(&app, cross_site).await.status, StatusCode::FORBIDDEN);
    let read = send(&app, get("/api/actions/limits?name=fleet&concurrency=4")).await;
    assert_eq!(read.status, StatusCode::METHOD_NOT_ALLOWED, "{}", read.body);
    assert_eq!(seed::exists(&server, "delayq_limits:{fleet}").await, 0);

    let set = send(&app, action("/api/actions/limits", &token, form)).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(set.json()["limits"], "max_size=10 concurrency=4");
    let queue = send(&app, get("/api/queue?name=fleet")).await.json();
    assert_eq!(queue["limits"]["concurrency"], 4, "{queue}");
    assert_eq!(queue["limits"]["max_size"], 10, "{queue}");
    assert_eq!(queue["limits"]["text"], "max_size=10 concurrency=4", "{queue}");
    assert_eq!(queue["status"]["in_flight"], 0, "{queue}");
    let before = limits_hash(&server, "fleet").await;
    assert_eq!(before.get("concurrency").map(String::as_str), Some("4"), "{before:?}");

    // 0 would hold every take: refused with a message that says what to
    // do instead, and nothing changes (not the other fields either).
    let zero = send(
        &app,
        action(
            "/api/actions/limits",
            &token,
            "name=fleet&max_size=99&offers=off&takes=on&concurrency=0",
        ),
    )
    .await;
    assert_eq!(zero.status, StatusCode::BAD_REQUEST, "{}", zero.body);
    let why = zero.json()["error"].as_str().unwrap().to_owned();
    assert!(
        why.contains("concurrency must be 1 or more") && why.contains("takes off"),
        "{why}"
    );
    for bad in ["-1", "lots", "4294967296", "2.5", "null"] {
        let form = format!("name=fleet&max_size=99&concurrency={bad}");
        let refused = send(&app, action("/api/actions/limits", &token, &form)).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{bad}: {}", refused.body);
        assert!(
            refused.json()["error"].as_str().unwrap().contains("concurrency"),
            "{bad}"
        );
    }
    assert_eq!(limits_hash(&server, "fleet").await, before, "nothing changed");
    let queue = send(&app, get("/api/queue?name=fleet")).await.json();
    assert_eq!(queue["limits"]["text"], "max_size=10 concurrency=4", "{queue}");

    // A form without the field (a page or script from before it) keeps the
    // limit; the other limits are the form's, as ever.
    let kept = send(&app, action("/api/actions/limits", &token, "name=fleet&max_size=20")).await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.body);
    assert_eq!(kept.json()["limits"], "max_size=20 concurrency=4");

    // Empty removes it and keeps the other limits.
    let removed = send(
        &app,
        action(
            "/api/actions/limits",
            &token,
            "name=fleet&max_size=20&max_payload=&offers=off&takes=on&concurrency=",
        ),
    )
    .await;
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.body);
    assert_eq!(removed.json()["limits"], "max_size=20 offers=off");
    let queue = send(&app, get("/api/queue?name=fleet")).await.json();
    assert_eq!(queue["limits"]["concurrency"], serde_json::Value::Null, "{queue}");
    assert_eq!(queue["limits"]["max_size"], 20, "{queue}");
    assert_eq!(queue["limits"]["offers"], false, "{queue}");
    assert!(!limits_hash(&server, "fleet").await.contains_key("concurrency"));

    // A name delayq does not know: 404 and no stray key, as for the others.
    let missing = send(&app, action("/api/actions/limits", &token, "name=flet&concurrency=2")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    assert_eq!(seed::exists(&server, "delayq_limits:{flet}").await, 0, "no stray key");
}

/// `delayq_queue_concurrency_limit`: one line per queue with a limit, its
/// label escaped as every gauge's; none for a queue without, and the line
/// goes once the limit is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_gauge_the_concurrency_limits() {
    let server = RedisServer::start().await;
    let odd = "fleet\"q\"\\b";
    seed::queue(&server, odd, 2, 0, 0).await;
    seed::queue(&server, "unlimited", 2, 0, 0).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    // fleet"q"\b, form-encoded.
    let named = "name=fleet%22q%22%5Cb";
    let set = send(
        &app,
        action("/api/actions/limits", &token, &format!("{named}&concurrency=7")),
    )
    .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    let line = r#"delayq_queue_concurrency_limit{queue="fleet\"q\"\\b"} 7"#;
    // Both queues sampled (a render may come between two queues' samples).
    let text = until(&app, "/metrics", |r| {
        r.body.contains(line) && r.body.contains(r#"delayq_queue_pending{queue="unlimited"} 2"#)
    })
    .await
    .body;
    assert!(text.contains("# TYPE delayq_queue_concurrency_limit gauge"), "{text}");
    assert!(
        !text.contains(r#"delayq_queue_concurrency_limit{queue="unlimited"}"#),
        "no line without a limit: {text}"
    );

    let removed = send(
        &app,
        action("/api/actions/limits", &token, &format!("{named}&concurrency=")),
    )
    .await;
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.body);
    until(&app, "/metrics", |r| {
        r.body.contains(r#"delayq_queue_pending{queue="unlimited"}"#)
            && !r.body.contains("delayq_queue_concurrency_limit{")
    })
    .await;
}
