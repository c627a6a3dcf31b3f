//! `GET /api/search` through the router: what it refuses, a bounded
//! request that says how far it looked, the cursor that goes on, and
//! values matched as the pages decode them.

use axum::http::StatusCode;

use super::{dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_answers_a_bounded_page_goes_on_from_its_cursor_and_refuses_bad_input() {
    let server = RedisServer::start().await;
    seed::queue(&server, "big", 6_000, 0, 0).await;
    seed::offer(&server, "big", "needle in big", 500_000).await;
    seed::dead_letter(&server, "{t}ящик", "a dead needle".as_bytes()).await;
    let app = dashboard(&server, |d| d).await;
    until(&app, "/api/overview", |r| r.json()["sampler"]["queues"] == 2).await;

    for (path, why) in [
        ("/api/search", "type an id"),
        ("/api/search?text=x&state=lost", "no value state"),
        ("/api/search?text=x&from=nonsense", "is not a search cursor"),
    ] {
        let reply = send(&app, get(path)).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{path}: {}", reply.body);
        assert!(
            reply.json()["error"].as_str().unwrap().contains(why),
            "{path}: {}",
            reply.body
        );
    }

    let first = send(&app, get("/api/search?text=NEEDLE")).await.json();
    assert_eq!(first["searched"], 5_000, "{first}");
    assert_eq!(first["total"], 6_002);
    assert_eq!(first["matches"].as_array().unwrap().len(), 0);
    assert_eq!(
        first["message"],
        "no match; searched 5,000 of 6,002 values; continue from there"
    );
    let next = first["next"].as_str().unwrap();
    let path = format!("/api/search?text=NEEDLE&from={}", percent(next));
    let second = send(&app, get(&path)).await.json();
    assert_eq!(
        second["message"], "2 matches; searched 6,002 of 6,002 values: all",
        "{second}"
    );
    assert_eq!(second["next"], serde_json::Value::Null);
    let matches = second["matches"].as_array().unwrap();
    assert_eq!(
        (matches[0]["queue"].as_str(), matches[0]["state"].as_str()),
        (Some("big"), Some("pending"))
    );
    assert_eq!(matches[0]["text"], "needle in big");
    assert_eq!(matches[0]["position"], 6_000);
    assert_eq!(
        (matches[1]["queue"].as_str(), matches[1]["state"].as_str()),
        (Some("{t}ящик"), Some("dead"))
    );
    assert_eq!(matches[1]["text"], "a dead needle");

    // One queue, one state: a small search, all of it in one request.
    let dead = send(
        &app,
        get(&format!(
            "/api/search?text=needle&state=dead&queue={}",
            percent("{t}ящик")
        )),
    )
    .await
    .json();
    assert_eq!(dead["message"], "1 match; searched 1 of 1 values: all", "{dead}");
    let none = send(&app, get("/api/search?text=nothing%20like%20it&state=dead"))
        .await
        .json();
    assert_eq!(none["message"], "no match; searched 1 of 1 values: all", "{none}");
}

/// `text` as a query value.
fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
