//! Priorities on the queue page's JSON: the ready head in take order (the
//! values with a priority first, each with its level, then the plain
//! list's head up to ten), and how many of the counts have a priority.

use serde_json::Value;

use super::{dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed;

fn texts_and_levels(head: &Value) -> Vec<(String, u64)> {
    head.as_array()
        .expect("ready_head is a list")
        .iter()
        .map(|v| (v["text"].as_str().unwrap().to_owned(), v["priority"].as_u64().unwrap()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_json_lists_priority_values_first_with_their_levels_and_counts_them() {
    let server = RedisServer::start().await;
    // Twelve plain ready values and one plain pending (due in 10 minutes).
    seed::queue(&server, "orders", 0, 12, 0).await;
    seed::offer(&server, "orders", "plain-later", 600).await;
    // Three ready with a priority, offered lowest first, and one delayed.
    seed::priorities(
        &server,
        "orders",
        &[("p3-a", 3, 0), ("p9", 9, 0), ("p3-b", 3, 0), ("p5-later", 5, 600)],
    )
    .await;
    // A queue without priorities: its head is the plain list, at level 0.
    seed::queue(&server, "plain", 0, 2, 0).await;
    let app = dashboard(&server, |d| d).await;

    let queue = send(&app, get("/api/queue?name=orders")).await.json();
    let want: Vec<(String, u64)> = [("p9", 9), ("p3-a", 3), ("p3-b", 3)]
        .into_iter()
        .map(|(t, l)| (t.to_owned(), l))
        .chain((0..7).map(|i| (format!("ready-{i}"), 0)))
        .collect();
    assert_eq!(
        texts_and_levels(&queue["ready_head"]),
        want,
        "take order: highest level first, a level in offer order, then the plain list up to ten"
    );
    // The entries keep every field the page drew before.
    let first = &queue["ready_head"][0];
    assert_eq!(first["decoded"], true, "{first}");
    assert!(first.get("codec").is_some() && first.get("class").is_some(), "{first}");

    let status = &queue["status"];
    assert_eq!(status["ready"], 15, "{status}");
    assert_eq!(status["priority_ready"], 3, "{status}");
    assert_eq!(status["pending"], 2, "{status}");
    assert_eq!(status["priority_pending"], 1, "{status}");
    // The pending table's pages list the delayed queue's elements only.
    assert_eq!(queue["pending"]["total"], 1);
    assert_eq!(queue["pending"]["elements"][0]["text"], "plain-later");

    let plain = send(&app, get("/api/queue?name=plain")).await.json();
    assert_eq!(
        texts_and_levels(&plain["ready_head"]),
        vec![("ready-0".to_owned(), 0), ("ready-1".to_owned(), 0)]
    );
    assert_eq!(plain["status"]["priority_ready"], 0);
    assert_eq!(plain["status"]["priority_pending"], 0);

    // The overview's totals add them up too, once orders is sampled.
    let overview = until(&app, "/api/overview", |r| r.json()["totals"]["priority_ready"] == 3)
        .await
        .json();
    assert_eq!(overview["totals"]["priority_pending"], 1, "{}", overview["totals"]);
    let orders = overview["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "orders")
        .expect("orders on the overview");
    assert_eq!(orders["priority_ready"], 3);
}
