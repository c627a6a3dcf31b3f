//! `/api/batch` (issue 46, item 5: the batch's state is visible): a
//! batch's state and counts as they change, "no such batch" as a 404 the
//! page reads, 400 for an id or a queue name the library refuses; a batch
//! stopped half way by the queue's limits reads `offering`; the job API
//! names the batch of a member (`<batch>/<n>`) and of nothing else.

use std::time::Duration;

use axum::http::StatusCode;
use delayq::batch::BatchOptions;
use delayq::limits::Limits;
use delayq::StringCodec;
use serde_json::Value;

use super::{dashboard, get, send};
use crate::redis_server::RedisServer;
use crate::seed;

const HOUR: Duration = Duration::from_secs(3600);

async fn batch(app: &axum::Router, queue: &str, id: &str) -> Value {
    let reply = send(app, get(&format!("/api/batch?name={queue}&id={id}"))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_batch_api_shows_a_batchs_state_and_counts_as_its_members_end() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = "batch-api";
    let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    let rq = client.reliable_queue(queue, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(HOUR)).await.unwrap();
    // Two due now, one in an hour.
    let items = [("a", Duration::ZERO), ("b", Duration::ZERO), ("c", HOUR)].map(|(v, d)| (v.to_owned(), d));
    let options = BatchOptions::new()
        .id("import-7")
        .on_complete("batch-api-done", serde_json::json!({ "file": "nov.csv" }));
    let id = dq.offer_batch(items, &options).await.unwrap();
    assert_eq!(id, "import-7");
    dq.offer_with_id("plain-1", &"d".to_owned(), HOUR).await.unwrap();
    let app = dashboard(&server, |d| d).await;

    let open = batch(&app, queue, "import-7").await;
    assert_eq!(open["id"], "import-7", "{open}");
    assert_eq!(open["queue"], queue);
    assert_eq!(open["state"], "open");
    for (field, want) in [
        ("total", 3),
        ("offered", 3),
        ("handled", 0),
        ("dead_lettered", 0),
        ("cancelled", 0),
        ("ended", 0),
    ] {
        assert_eq!(open[field], want, "{field}: {open}");
    }
    assert_eq!(open["target"], "batch-api-done");
    let created = open["created_ms"].as_i64().unwrap();
    assert!((created - seed::now_ms()).abs() < 60_000, "{open}");
    assert_eq!(open["completed_ms"], Value::Null);
    assert_eq!(open["redis"]["up"], true, "the header's account, as every answer has");

    // One handled, one dead-lettered, the pending one cancelled.
    dq.transfer_now().await.unwrap();
    assert!(rq.take().await.unwrap().ack().await.unwrap());
    assert!(rq.take().await.unwrap().reject("bad row").await.unwrap());
    let partway = batch(&app, queue, "import-7").await;
    assert_eq!(
        (
            &partway["state"],
            &partway["ended"],
            &partway["handled"],
            &partway["dead_lettered"]
        ),
        (&Value::from("open"), &Value::from(2), &Value::from(1), &Value::from(1)),
        "{partway}"
    );
    rq.cancel_job("import-7/3").await.unwrap();
    let ended = batch(&app, queue, "import-7").await;
    // The test's reliable handle runs a reaper, which may deliver it already.
    let state = ended["state"].as_str().unwrap();
    assert!(matches!(state, "complete" | "delivered"), "{ended}");
    assert_eq!(
        (
            &ended["handled"],
            &ended["dead_lettered"],
            &ended["cancelled"],
            &ended["ended"]
        ),
        (&Value::from(1), &Value::from(1), &Value::from(1), &Value::from(3)),
        "{ended}"
    );
    assert!(ended["completed_ms"].as_i64().unwrap() >= created, "{ended}");

    // A member's job names its batch and its number; other jobs none.
    let member = send(&app, get(&format!("/api/job?name={queue}&id=import-7%2F2")))
        .await
        .json();
    assert_eq!(member["batch"]["id"], "import-7", "{member}");
    assert_eq!(member["batch"]["member"], 2);
    assert_eq!(member["batch"]["total"], 3);
    assert_eq!(member["batch"]["ended"], 3);
    for other in ["plain-1", "nobody%2F3", "import-7%2Fx", "%2F1"] {
        let job = send(&app, get(&format!("/api/job?name={queue}&id={other}"))).await;
        assert_eq!(job.status, StatusCode::OK, "{other}: {}", job.body);
        assert_eq!(job.json()["batch"], Value::Null, "{other}: {}", job.body);
    }

    // No such batch: a 404 the page reads as an answer.
    let missing = send(&app, get(&format!("/api/batch?name={queue}&id=never"))).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    let body = missing.json();
    assert_eq!(body["found"], false, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("no such batch \"never\" in batch-api"),
        "{body}"
    );
    // Ids the library refuses: with a '/', empty, too long.
    let long = "x".repeat(129);
    for bad in ["a%2Fb", "", &long] {
        let refused = send(&app, get(&format!("/api/batch?name={queue}&id={bad}"))).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{bad}: {}", refused.body);
        assert!(
            refused.json()["error"]
                .as_str()
                .unwrap()
                .contains("a batch id is 1 to 128 bytes"),
            "{}",
            refused.body
        );
    }
    // A queue name the library refuses; and no parameters at all.
    let bad = send(&app, get("/api/batch?name=%7Bbroken&id=import-7")).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    assert!(bad.json()["error"].as_str().unwrap().starts_with("invalid queue name"));
    let bare = send(&app, get("/api/batch")).await;
    assert_eq!(bare.status, StatusCode::BAD_REQUEST, "{}", bare.body);

    // Read-only: the same answer.
    let read_only = dashboard(&server, |d| d.read_only(true)).await;
    assert_eq!(batch(&read_only, queue, "import-7").await["total"], 3);
    client.shutdown().await;
}

/// The queue's limits refuse members half way: the batch reads `offering`
/// with the members offered so far.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_stopped_half_way_reads_offering() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let queue = "batch-limited";
    let dq = client.delayed_queue(queue, StringCodec).unwrap().without_transfer();
    dq.set_job_history(Some(HOUR)).await.unwrap();
    dq.set_limits(&Limits::none().max_size(5)).await.unwrap();
    let items: Vec<(String, Duration)> = (1..=8).map(|i| (format!("row-{i}"), HOUR)).collect();
    let refused = dq.offer_batch(items, &BatchOptions::new().id("half")).await;
    assert!(
        matches!(refused, Err(delayq::Error::OfferRefused { .. })),
        "{refused:?}"
    );
    let app = dashboard(&server, |d| d).await;
    let half = batch(&app, queue, "half").await;
    assert_eq!(half["state"], "offering", "{half}");
    assert_eq!(
        (&half["offered"], &half["total"]),
        (&Value::from(5), &Value::from(8)),
        "{half}"
    );
    assert_eq!(half["target"], Value::Null);
    client.shutdown().await;
}
