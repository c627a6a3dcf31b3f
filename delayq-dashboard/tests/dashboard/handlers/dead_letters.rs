//! The queue page's dead letters through the router, without a browser: pages, reasons, exact requeue and delete.

use axum::http::StatusCode;
use delayq::fred::prelude::*;

use super::{action, csrf, dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed;

/// Dead letters as delayq records them: `count` values `dead-<i>`, each with a
/// reason record `<ms> <reason>` (reasons taking turns from `reasons`), the
/// i-th dying at `first_ms + i` seconds.
pub(crate) async fn dead_letters(server: &RedisServer, name: &str, count: usize, reasons: &[&str], first_ms: i64) {
    let redis = seed::raw(server).await;
    let dead = format!("delayq_dead_letter:{{{name}}}");
    let why = format!("delayq_dead_reasons:{{{name}}}");
    for i in 0..count {
        let _: i64 = redis.rpush(&dead, format!("dead-{i}")).await.unwrap();
        let record = format!("{} {}", first_ms + 1_000 * i as i64, reasons[i % reasons.len()]);
        let _: i64 = redis.rpush(&why, record).await.unwrap();
    }
}

/// The JSON pages over every dead letter: index, key, reason and when each died.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letter_pages_show_when_each_died_and_go_past_the_first_fifty() {
    let server = RedisServer::start().await;
    dead_letters(&server, "orders", 130, &["smtp down", "bad input"], 1_700_000_000_000).await;
    let app = dashboard(&server, |d| d).await;

    let first = send(&app, get("/api/dead-letters?name=orders")).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let first = first.json();
    assert_eq!(first["total"], 130);
    assert_eq!(first["items"].as_array().unwrap().len(), 50);
    assert_eq!(first["items"][0]["text"], "dead-0");
    assert_eq!(first["items"][0]["at_ms"], 1_700_000_000_000i64);
    assert_eq!(first["items"][1]["reason"], "bad input");

    let third = send(&app, get("/api/dead-letters?name=orders&offset=100&limit=100"))
        .await
        .json();
    let items = third["items"].as_array().unwrap();
    assert_eq!(items.len(), 30);
    assert_eq!(items[0]["index"], 100);
    assert_eq!(items[29]["text"], "dead-129");
    assert_eq!(items[29]["at_ms"], 1_700_000_129_000i64);
    assert!(
        items[29]["key"].as_str().unwrap().starts_with("129:8:"),
        "{}",
        items[29]["key"]
    );
    // The page size is capped.
    let capped = send(&app, get("/api/dead-letters?name=orders&limit=5000")).await.json();
    assert_eq!(capped["items"].as_array().unwrap().len(), 100);

    // The queue's own poll shows when each died too.
    let queue = send(&app, get("/api/queue?name=orders")).await.json();
    assert_eq!(queue["dead_letters"]["items"][2]["at_ms"], 1_700_000_002_000i64);
}

/// Counted by reason, over at most the given most recent, saying how far it looked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_are_grouped_by_reason_with_counts() {
    let server = RedisServer::start().await;
    dead_letters(
        &server,
        "orders",
        9,
        &["smtp down", "smtp down", "bad input"],
        1_700_000_000_000,
    )
    .await;
    let app = dashboard(&server, |d| d).await;
    let all = send(&app, get("/api/dead-letters/reasons?name=orders")).await;
    assert_eq!(all.status, StatusCode::OK, "{}", all.body);
    let all = all.json();
    assert_eq!((all["total"].clone(), all["looked"].clone()), (9.into(), 9.into()));
    assert_eq!(all["groups"][0]["reason"], "smtp down");
    assert_eq!(all["groups"][0]["count"], 6);
    assert_eq!(all["groups"][0]["last_at_ms"], 1_700_000_007_000i64);
    assert_eq!(all["groups"][1]["reason"], "bad input");
    assert_eq!(all["groups"][1]["count"], 3);

    let recent = send(&app, get("/api/dead-letters/reasons?name=orders&most=3"))
        .await
        .json();
    assert_eq!(recent["looked"], 3);
    assert_eq!(recent["total"], 9);
    assert_eq!(recent["groups"][0]["count"], 2);

    // One reason's dead letters, a page at a time: each page ends at its last match.
    let first = send(&app, get("/api/dead-letters?name=orders&reason=bad%20input&limit=2"))
        .await
        .json();
    let indices: Vec<u64> = first["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [2, 5]);
    assert_eq!(first["next_offset"], 6);
    let rest = send(
        &app,
        get("/api/dead-letters?name=orders&reason=bad%20input&limit=2&offset=6"),
    )
    .await
    .json();
    assert_eq!(rest["items"][0]["index"], 8);
    assert_eq!(rest["items"].as_array().unwrap().len(), 1);
    assert_eq!(rest["next_offset"], 9);
}

/// Per-value and bulk requeue and delete act on the values named, even
/// after the list moved; a value gone is a 409 and nothing is done; without
/// the CSRF token nothing happens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_dead_letters_are_requeued_and_deleted_exactly() {
    let server = RedisServer::start().await;
    dead_letters(&server, "orders", 10, &["why"], 1_700_000_000_000).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let page = send(&app, get("/api/dead-letters?name=orders")).await.json();
    let key = |i: usize| page["items"][i]["key"].as_str().unwrap().to_owned();

    // No CSRF header: refused, nothing moved.
    let mut forged = action(
        "/api/actions/delete-dead-letter-keys",
        &token,
        &format!("name=orders&keys={}", key(4)),
    );
    forged.headers_mut().remove("x-csrf-token");
    assert_eq!(send(&app, forged).await.status, StatusCode::FORBIDDEN);
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 10);

    // One requeued.
    let one = send(
        &app,
        action(
            "/api/actions/requeue-dead-letter-keys",
            &token,
            &format!("name=orders&keys={}", key(4)),
        ),
    )
    .await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.body);
    assert!(one.json()["message"].as_str().unwrap().contains("#5"), "{}", one.body);
    assert_eq!(seed::lrange(&server, "orders").await, ["dead-4"]);

    // Two leave the head, then two named by the first page are deleted together.
    let _ = send(
        &app,
        action(
            "/api/actions/delete-dead-letter-keys",
            &token,
            &format!("name=orders&keys={}", key(0)),
        ),
    )
    .await;
    let _ = send(
        &app,
        action(
            "/api/actions/delete-dead-letter-keys",
            &token,
            &format!("name=orders&keys={}", key(1)),
        ),
    )
    .await;
    let both = send(
        &app,
        action(
            "/api/actions/delete-dead-letter-keys",
            &token,
            &format!("name=orders&keys={},{}", key(6), key(8)),
        ),
    )
    .await;
    assert_eq!(both.status, StatusCode::OK, "{}", both.body);
    assert_eq!(both.json()["found_at"], serde_json::json!([3, 5]));
    let left: Vec<String> = seed::lrange(&server, "delayq_dead_letter:{orders}")
        .await
        .iter()
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect();
    assert_eq!(left, ["dead-2", "dead-3", "dead-5", "dead-7", "dead-9"]);

    // Gone: 409, and the other named value stays.
    let gone = send(
        &app,
        action(
            "/api/actions/requeue-dead-letter-keys",
            &token,
            &format!("name=orders&keys={},{}", key(9), key(6)),
        ),
    )
    .await;
    assert_eq!(gone.status, StatusCode::CONFLICT, "{}", gone.body);
    assert!(gone.json()["error"].as_str().unwrap().contains("#7"), "{}", gone.body);
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 5);
    assert_eq!(seed::lrange(&server, "orders").await, ["dead-4"]);

    // A key that is no key: 400.
    let bad = send(
        &app,
        action("/api/actions/delete-dead-letter-keys", &token, "name=orders&keys=7"),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
}

/// Read-only: the pages read, the per-value actions do not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_dead_letters_read_but_have_no_action_routes() {
    let server = RedisServer::start().await;
    dead_letters(&server, "orders", 3, &["why"], 1_700_000_000_000).await;
    let app = dashboard(&server, |d| d.read_only(true)).await;
    let page = send(&app, get("/api/dead-letters?name=orders")).await;
    assert_eq!(page.status, StatusCode::OK);
    let key = page.json()["items"][0]["key"].as_str().unwrap().to_owned();
    assert_eq!(
        send(&app, get("/api/dead-letters/reasons?name=orders")).await.status,
        StatusCode::OK
    );
    let token = csrf(&app).await;
    for path in [
        "/api/actions/requeue-dead-letter-keys",
        "/api/actions/delete-dead-letter-keys",
        "/api/actions/delete-dead-letters",
    ] {
        let refused = send(&app, action(path, &token, &format!("name=orders&keys={key}"))).await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND, "{path}");
    }
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 3);
}

/// While Redis is away the dead-letter pages, counts and per-value actions
/// answer 503 at once, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letter_reads_and_actions_answer_503_while_redis_is_down() {
    let mut server = RedisServer::start().await;
    dead_letters(&server, "orders", 3, &["why"], 1_700_000_000_000).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let key = send(&app, get("/api/dead-letters?name=orders")).await.json()["items"][0]["key"]
        .as_str()
        .unwrap()
        .to_owned();
    server.kill();
    until(&app, "/metrics", |r| r.body.contains("delayq_dashboard_redis_up 0")).await;
    for request in [
        get("/api/dead-letters?name=orders"),
        get("/api/dead-letters/reasons?name=orders"),
        action(
            "/api/actions/delete-dead-letter-keys",
            &token,
            &format!("name=orders&keys={key}"),
        ),
    ] {
        let path = request.uri().to_string();
        let reply = send(&app, request).await;
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {}", reply.body);
        assert!(
            reply.json()["error"]
                .as_str()
                .unwrap()
                .starts_with("Redis is unreachable"),
            "{}",
            reply.body
        );
    }
}

/// Requeue all and delete all act on what the view shows: filtered by a
/// reason, only the dead letters with it (an equal payload that died of
/// something else stays), and only while they are as many as the operator
/// confirmed; a request that says no count does nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_dead_letter_actions_act_on_the_filter_and_the_confirmed_count_only() {
    let server = RedisServer::start().await;
    let redis = seed::raw(&server).await;
    let (dead, why) = ("delayq_dead_letter:{orders}", "delayq_dead_reasons:{orders}");
    // Twelve dead letters; "smtp down" at #1, #5, #9 and "bad input" at the
    // others; every other payload is the same bytes ("same") from another job.
    let push = |i: i64, reason: &'static str| {
        let redis = redis.clone();
        async move {
            let value = if i % 2 == 0 {
                "same".to_owned()
            } else {
                format!("dead-{i}")
            };
            let _: i64 = redis.rpush(dead, value).await.unwrap();
            let _: i64 = redis
                .rpush(why, format!("{} {reason}", 1_700_000_000_000 + 1_000 * i))
                .await
                .unwrap();
        }
    };
    for i in 0..12 {
        push(i, if i % 4 == 0 { "smtp down" } else { "bad input" }).await;
    }
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let page = send(&app, get("/api/dead-letters?name=orders&reason=smtp%20down"))
        .await
        .json();
    assert_eq!(page["items"].as_array().unwrap().len(), 3, "{page}");
    assert_eq!(page["matching"], 3, "the count the buttons say: {page}");
    let requeue = |form: &str| action("/api/actions/requeue-dead-letters", &token, form);

    // No count confirmed: nothing done.
    let unconfirmed = send(&app, requeue("name=orders&reason=smtp%20down")).await;
    assert_eq!(unconfirmed.status, StatusCode::BAD_REQUEST, "{}", unconfirmed.body);
    assert_eq!(seed::llen(&server, dead).await, 12);
    // A count that no longer matches: 409, nothing done.
    let stale = send(&app, requeue("name=orders&reason=smtp%20down&count=2")).await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{}", stale.body);
    assert!(
        stale.json()["error"].as_str().unwrap().contains("3 dead letter(s)"),
        "{}",
        stale.body
    );
    assert_eq!(seed::llen(&server, dead).await, 12);
    assert_eq!(seed::llen(&server, "orders").await, 0);

    // The three, and only them, whatever else has the same bytes.
    let done = send(&app, requeue("name=orders&reason=smtp%20down&count=3")).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_eq!(done.json()["moved"], 3, "{}", done.body);
    assert_eq!(seed::lrange(&server, "orders").await, ["same", "same", "same"]);
    let left: Vec<String> = redis.lrange(why, 0, -1).await.unwrap();
    assert_eq!(left.len(), 9);
    assert!(left.iter().all(|r| r.ends_with(" bad input")), "{left:?}");
    let values: Vec<String> = redis.lrange(dead, 0, -1).await.unwrap();
    assert_eq!(values.iter().filter(|v| *v == "same").count(), 3, "{values:?}");

    // Two more die of smtp: a delete confirmed for one does nothing, for two deletes them.
    push(20, "smtp down").await;
    push(22, "smtp down").await;
    let delete = |form: &str| action("/api/actions/delete-dead-letters", &token, form);
    let stale = send(&app, delete("name=orders&reason=smtp%20down&count=1")).await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{}", stale.body);
    assert_eq!(seed::llen(&server, dead).await, 11);
    let done = send(&app, delete("name=orders&reason=smtp%20down&count=2")).await;
    assert_eq!(done.json()["deleted"], 2, "{}", done.body);
    let left: Vec<String> = redis.lrange(why, 0, -1).await.unwrap();
    assert_eq!(left.len(), 9);
    assert!(left.iter().all(|r| r.ends_with(" bad input")), "{left:?}");

    // Unfiltered: the count confirmed is the most it does (the oldest, as
    // shown); more than there are is refused.
    let refused = send(&app, requeue("name=orders&count=10")).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    assert_eq!(seed::llen(&server, dead).await, 9);
    let done = send(&app, requeue("name=orders&count=4")).await;
    assert_eq!(done.json()["moved"], 4, "{}", done.body);
    assert_eq!(seed::llen(&server, dead).await, 5);
    let unconfirmed = send(&app, delete("name=orders")).await;
    assert_eq!(unconfirmed.status, StatusCode::BAD_REQUEST, "{}", unconfirmed.body);
    assert_eq!(seed::llen(&server, dead).await, 5);
}
