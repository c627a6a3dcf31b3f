//! Cancelling a job from the dashboard, and what the job API says of a
//! job's cancel, progress and result (issue 46, items 3 and 4): cancel-job
//! is a POST behind every action's guards and answers each outcome as a
//! sentence; `/api/job` carries `cancel_requested_ms`, `progress` and
//! `result` (the handler's text, pretty-printed, never interpreted); the
//! `cancelled` total reaches `/metrics`.

use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use delayq::StringCodec;
use serde_json::{json, Value};

use super::{action, csrf, dashboard, get, send, until, Reply};
use crate::redis_server::RedisServer;
use crate::seed;

const DAY: Duration = Duration::from_secs(24 * 3600);

async fn job(app: &axum::Router, queue: &str, id: &str) -> Value {
    let reply = send(app, get(&format!("/api/job?name={queue}&id={id}"))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.json()
}

async fn cancel(app: &axum::Router, token: &str, queue: &str, id: &str) -> Reply {
    send(
        app,
        action("/api/actions/cancel-job", token, &format!("name={queue}&id={id}")),
    )
    .await
}

fn outcome(reply: &Reply) -> (String, String) {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let json = reply.json();
    assert_eq!(json["ok"], true, "{json}");
    (
        json["outcome"].as_str().unwrap().to_owned(),
        json["message"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_job_is_a_guarded_post_and_answers_each_outcome() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = "cancels";
    let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(DAY)).await.unwrap();
    // handled, then running (held), then ready, then pending.
    dq.offer_with_id("done-1", &"a".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.transfer_now().await.unwrap();
    assert!(rq.take().await.unwrap().ack().await.unwrap());
    dq.offer_with_id("run-1", &"b".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.transfer_now().await.unwrap();
    let running = rq.take().await.unwrap();
    dq.offer_with_id("ready-1", &"c".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.transfer_now().await.unwrap();
    dq.offer_with_id("later-1", &"d".to_string(), Duration::from_secs(3600))
        .await
        .unwrap();

    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;

    // POST only: a GET changes nothing.
    let read = Request::get("/api/actions/cancel-job?name=cancels&id=later-1")
        .header(header::HOST, "127.0.0.1:9090")
        .header(header::COOKIE, format!("delayq_csrf={token}"))
        .header("x-csrf-token", &token)
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, read).await.status, StatusCode::METHOD_NOT_ALLOWED);
    // Cross-site, another origin, no CSRF token: refused.
    let form = "name=cancels&id=later-1";
    let mut cross_site = action("/api/actions/cancel-job", &token, form);
    cross_site
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    let mut other_origin = action("/api/actions/cancel-job", &token, form);
    other_origin
        .headers_mut()
        .insert(header::ORIGIN, "http://evil.example".parse().unwrap());
    let mut forged = action("/api/actions/cancel-job", &token, form);
    forged.headers_mut().remove("x-csrf-token");
    for (what, request) in [
        ("cross-site", cross_site),
        ("other origin", other_origin),
        ("no CSRF header", forged),
    ] {
        let refused = send(&app, request).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{what}: {}", refused.body);
    }
    assert!(dq.get("later-1").await.unwrap().is_some(), "nothing cancelled yet");

    // Each outcome, as a sentence.
    let (kind, said) = outcome(&cancel(&app, &token, queue, "later-1").await);
    assert_eq!(kind, "pending");
    assert!(said.contains("it was pending") && said.contains("removed"), "{said}");
    assert!(dq.get("later-1").await.unwrap().is_none(), "its element is gone");

    let (kind, said) = outcome(&cancel(&app, &token, queue, "ready-1").await);
    assert_eq!(kind, "queued");
    assert!(said.contains("(ready)") && said.contains("will not run"), "{said}");

    let (kind, said) = outcome(&cancel(&app, &token, queue, "run-1").await);
    assert_eq!(kind, "running");
    assert!(
        said.contains("which runs") && said.contains("its worker tells its handler"),
        "{said}"
    );
    let page = job(&app, queue, "run-1").await;
    assert!(page["cancel_requested_ms"].is_i64(), "{page}");
    assert_eq!(page["finished"], false);
    assert!(running.settle_cancelled().await.unwrap());
    let page = job(&app, queue, "run-1").await;
    assert_eq!(page["state"]["name"], "cancelled", "{page}");
    assert_eq!(page["state"]["how"], "cancelled while it ran");
    assert_eq!(page["finished"], true);
    assert_eq!(page["cancel_requested_ms"], Value::Null, "the flag goes with the job");

    let (kind, said) = outcome(&cancel(&app, &token, queue, "done-1").await);
    assert_eq!(kind, "finished");
    assert!(
        said.contains("already ended (handled)") && said.contains("nothing changed"),
        "{said}"
    );

    let (kind, said) = outcome(&cancel(&app, &token, queue, "nobody").await);
    assert_eq!(kind, "unknown");
    assert!(said.contains("only with the queue's job history on"), "{said}");

    // An id the library refuses, and a bad queue name: 400.
    let empty = cancel(&app, &token, queue, "").await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST, "{}", empty.body);
    let bad = cancel(&app, &token, "%7Bbroken", "x").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);

    // Read-only: no such route.
    let read_only = dashboard(&server, |d| d.read_only(true)).await;
    let token = csrf(&read_only).await;
    let refused = cancel(&read_only, &token, queue, "ready-1").await;
    assert!(
        matches!(refused.status, StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED),
        "{}: {}",
        refused.status,
        refused.body
    );
    client.shutdown().await;
}

/// Off loopback the dashboard has a token: an action without it is
/// refused before anything else, with it the cancel goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_job_off_loopback_needs_the_token() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let dq = client.delayed_queue("remote", StringCodec).unwrap().without_transfer();
    dq.offer_with_id("later", &"v".to_string(), Duration::from_secs(3600))
        .await
        .unwrap();
    let app = dashboard(&server, |d| d.token(Some("s3cret-token".into()))).await;
    let csrf = "0123456789abcdef0123456789abcdef";
    let request = |bearer: bool| {
        let mut request = Request::post("/api/actions/cancel-job")
            .header(header::HOST, "dashboard.internal:9090")
            .header(header::ORIGIN, "http://dashboard.internal:9090")
            .header("sec-fetch-site", "same-origin")
            .header(header::COOKIE, format!("delayq_csrf={csrf}"))
            .header("x-csrf-token", csrf)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        if bearer {
            request = request.header(header::AUTHORIZATION, "Bearer s3cret-token");
        }
        request.body(Body::from("name=remote&id=later")).unwrap()
    };
    let refused = send(&app, request(false)).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", refused.body);
    assert!(dq.get("later").await.unwrap().is_some(), "nothing cancelled");
    let (kind, _) = outcome(&send(&app, request(true)).await);
    assert_eq!(kind, "pending");
    assert!(dq.get("later").await.unwrap().is_none());
    client.shutdown().await;
}

/// The job API carries a running job's cancel and last progress, and a
/// handled job's result: the handler's text, markup and escape codes
/// included, as JSON strings (the page puts them in as text).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_json_carries_progress_result_and_cancel_requested() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = "reports";
    let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(DAY)).await.unwrap();
    dq.offer_with_id("import-7", &"file".to_string(), Duration::ZERO)
        .await
        .unwrap();
    dq.transfer_now().await.unwrap();
    let delivery = rq.take().await.unwrap();
    let app = dashboard(&server, |d| d).await;

    let fresh = job(&app, queue, "import-7").await;
    assert_eq!(fresh["state"]["name"], "in_flight");
    assert_eq!(fresh["progress"], Value::Null);
    assert_eq!(fresh["result"], Value::Null);
    assert_eq!(fresh["cancel_requested_ms"], Value::Null);

    let report = json!({"step": "<script>alert('x')</script>", "ansi": "\u{1b}[31mred", "done": 3});
    assert!(delivery.progress(&report).await.unwrap());
    let page = job(&app, queue, "import-7").await;
    let progress = &page["progress"];
    assert_eq!(progress["value"], report, "{page}");
    assert!(progress["at_ms"].is_i64());
    assert_eq!(progress["delivery"].as_str().unwrap().len(), 16);
    let pretty = progress["pretty"].as_str().unwrap();
    assert!(
        pretty.contains("\n  \"step\": \"<script>alert('x')</script>\""),
        "{pretty}"
    );
    assert!(
        pretty.contains(r#""\u001b[31mred""#),
        "the escape stays escaped: {pretty}"
    );

    // A cancel asked: the time, while it runs.
    let token = csrf(&app).await;
    let (kind, _) = outcome(&cancel(&app, &token, queue, "import-7").await);
    assert_eq!(kind, "running");
    let page = job(&app, queue, "import-7").await;
    let asked = page["cancel_requested_ms"].as_i64().expect("asked");
    assert!((asked - seed::now_ms()).abs() < 60_000, "{asked}");

    // It finishes anyway: handled, with its result; the cancel flag goes.
    let result = json!({"html": "<img src=x onerror=alert(1)>", "total": 42});
    assert!(delivery.ack_with_result(&result).await.unwrap());
    let page = job(&app, queue, "import-7").await;
    assert_eq!(page["state"]["name"], "handled", "{page}");
    assert_eq!(page["finished"], true);
    assert_eq!(page["cancel_requested_ms"], Value::Null);
    let kept = &page["result"];
    assert_eq!(
        serde_json::from_str::<Value>(kept["pretty"].as_str().unwrap()).unwrap(),
        result
    );
    assert!(kept["pretty"].as_str().unwrap().contains("\n  \"html\""), "{kept}");
    assert_eq!(kept["bytes"], result.to_string().len());
    assert!(kept["at_ms"].is_i64());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_export_the_cancelled_total() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let dq = client
        .delayed_queue("cancel-metered", StringCodec)
        .unwrap()
        .without_transfer();
    let rq = client
        .reliable_queue("cancel-metered", StringCodec)
        .unwrap()
        .without_transfer();
    dq.set_job_history(Some(DAY)).await.unwrap();
    for id in ["a", "b", "c"] {
        dq.offer_with_id(id, &format!("v-{id}"), Duration::ZERO).await.unwrap();
    }
    dq.transfer_now().await.unwrap();
    for id in ["a", "b"] {
        rq.cancel_job(id).await.unwrap();
    }
    // The takes drop both cancelled jobs and deliver the third, whatever
    // the order the three were listed in (equal due times are listed by
    // element).
    let mut delivered = Vec::new();
    while let Some(delivery) = rq.take_timeout(Duration::from_millis(100)).await.unwrap() {
        delivered.push(delivery.job_id().unwrap().to_owned());
        delivery.ack().await.unwrap();
    }
    assert_eq!(delivered, ["c"]);
    assert_eq!(dq.status().await.unwrap().totals.cancelled, 2);

    let app = dashboard(&server, |d| d).await;
    let text = until(&app, "/metrics", |r| {
        r.body
            .contains(r#"delayq_queue_cancelled_total{queue="cancel-metered"} 2"#)
    })
    .await
    .body;
    assert!(text.contains("# TYPE delayq_queue_cancelled_total counter"), "{text}");
    assert!(
        text.contains(r#"delayq_queue_acked_total{queue="cancel-metered"} 1"#),
        "{text}"
    );
    client.shutdown().await;
}
