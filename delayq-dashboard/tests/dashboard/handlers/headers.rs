//! Message headers and TTLs on the queue page's JSON: each ready head
//! entry has `headers` (an object, `{}` for none) and `expires_at_ms`
//! (null without a TTL); each dead letter, of the queue's poll and of the
//! dead-letter pages, has its `headers`. Header text comes back exactly as
//! offered (markup, unicode, control characters): the page escapes it.

use serde_json::{json, Value};

use super::{dashboard, get, send};
use crate::redis_server::RedisServer;
use crate::seed;

const MARKUP: &str = "<img src=x onerror=alert(1)>";
const UNICODE: &str = "Zürich · 東京 🚀\nline two";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_json_gives_each_ready_value_its_headers_and_expiry() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 0, 2, 0).await;
    let before = seed::now_ms();
    seed::headered(
        &server,
        "orders",
        &[
            (
                "traced",
                0,
                &[("tenant", "acme"), ("source", MARKUP), ("city", UNICODE)],
                300,
            ),
            ("urgent", 5, &[("tenant", "globex")], 0),
        ],
    )
    .await;
    let after = seed::now_ms();
    seed::priorities(&server, "orders", &[("p3-bare", 3, 0)]).await;
    let app = dashboard(&server, |d| d).await;

    let queue = send(&app, get("/api/queue?name=orders")).await.json();
    let head = queue["ready_head"].as_array().expect("ready_head is a list");
    let texts: Vec<&str> = head.iter().map(|v| v["text"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        ["urgent", "p3-bare", "traced", "ready-0", "ready-1"],
        "take order: the ready set (a level-0 value with headers included) before the plain list"
    );
    let by_text = |text: &str| head.iter().find(|v| v["text"] == text).unwrap().clone();

    let traced = by_text("traced");
    assert_eq!(
        traced["headers"],
        json!({"city": UNICODE, "source": MARKUP, "tenant": "acme"}),
        "every header, exactly as offered: {traced}"
    );
    assert_eq!(traced["priority"], 0, "{traced}");
    let expires = traced["expires_at_ms"].as_i64().expect("a TTL value has expires_at_ms");
    assert!(
        (before + 300_000 - 1_000..=after + 300_000 + 1_000).contains(&expires),
        "300 s after the offer: {expires} (offered between {before} and {after})"
    );
    // The keys are in sorted order in the JSON text as well.
    let text = serde_json::to_string(&traced["headers"]).unwrap();
    assert!(
        text.find("city") < text.find("source") && text.find("source") < text.find("tenant"),
        "{text}"
    );

    let urgent = by_text("urgent");
    assert_eq!(
        (urgent["priority"].clone(), urgent["headers"].clone()),
        (json!(5), json!({"tenant": "globex"}))
    );
    assert_eq!(urgent["expires_at_ms"], Value::Null, "no TTL: {urgent}");

    // Without headers: an empty object, never missing, and no expiry; the
    // fields the page drew before are all there.
    for bare in [by_text("p3-bare"), by_text("ready-0")] {
        assert_eq!(bare["headers"], json!({}), "{bare}");
        assert_eq!(bare["expires_at_ms"], Value::Null, "{bare}");
        assert_eq!(bare["decoded"], true, "{bare}");
        assert!(bare.get("codec").is_some() && bare.get("class").is_some(), "{bare}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letter_json_gives_each_dead_letter_its_headers() {
    let server = RedisServer::start().await;
    // One dead letter as Java leaves it (no headers), then one offered with
    // headers and rejected by a delayq consumer.
    seed::dead_letter(&server, "orders", b"plain-dead").await;
    seed::rejected_with_headers(
        &server,
        "orders",
        "traced-dead",
        &[("tenant", "acme"), ("source", MARKUP), ("city", UNICODE)],
        "no such account",
    )
    .await;
    let app = dashboard(&server, |d| d).await;
    let want = json!({"city": UNICODE, "source": MARKUP, "tenant": "acme"});

    let page = send(&app, get("/api/dead-letters?name=orders")).await.json();
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{page}");
    assert_eq!(items[0]["text"], "plain-dead");
    assert_eq!(items[0]["headers"], json!({}), "none: an empty object, {}", items[0]);
    assert_eq!(items[1]["text"], "traced-dead");
    assert_eq!(items[1]["headers"], want, "{}", items[1]);
    assert_eq!(
        items[1]["reason"], "rejected: no such account",
        "the reason stays apart from the headers"
    );

    // A filtered page, and the queue's own poll, have them too.
    let filtered = send(
        &app,
        get("/api/dead-letters?name=orders&reason=rejected%3A%20no%20such%20account"),
    )
    .await
    .json();
    assert_eq!(filtered["items"][0]["headers"], want, "{filtered}");
    let queue = send(&app, get("/api/queue?name=orders")).await.json();
    assert_eq!(queue["dead_letters"]["items"][1]["headers"], want);
    assert_eq!(queue["dead_letters"]["items"][0]["headers"], json!({}));
}
