//! What an operator's review of the dashboard on realistic data found.

use axum::http::StatusCode;
use delayq::fred::interfaces::SortedSetsInterface;

use super::{action, csrf, dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed;

/// Pause takes any queue the overview lists (`delayq pause` does): one only
/// in delayq's registry, one with only schedules, one with only dead
/// letters; it refuses only a name delayq does not know, creating nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_takes_every_queue_the_overview_lists() {
    let server = RedisServer::start().await;
    let redis = seed::raw(&server).await;
    let _: () = redis
        .zadd(
            "delayq_queues",
            None,
            None,
            false,
            false,
            (seed::now_ms() as f64, "registered-q"),
        )
        .await
        .unwrap();
    let saver = seed::client(&server).await;
    let target = saver.delayed_queue("scheduled-q", delayq::StringCodec).unwrap();
    saver
        .schedule("nightly", "0 3 * * *", &target, &"compact".to_string())
        .await
        .unwrap();
    drop(target);
    saver.shutdown().await;
    seed::queue(&server, "dead-q", 0, 0, 2).await;

    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    for name in ["registered-q", "scheduled-q", "dead-q"] {
        let paused = send(&app, action("/api/actions/pause", &token, &format!("name={name}"))).await;
        assert_eq!(paused.status, StatusCode::OK, "{name}: {}", paused.body);
        assert_eq!(
            seed::exists(&server, &format!("delayq_paused:{{{name}}}")).await,
            1,
            "{name}"
        );
        let queue = send(&app, get(&format!("/api/queue?name={name}"))).await.json();
        assert_eq!(queue["known"], true, "{name}: {queue}");
        assert_eq!(queue["status"]["paused"], true, "{name}: {queue}");
    }
    let missing = send(&app, action("/api/actions/pause", &token, "name=nobody-q")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    assert_eq!(missing.json()["error"], "no queue nobody-q");
    assert_eq!(
        seed::exists(&server, "delayq_paused:{nobody-q}").await,
        0,
        "no stray key"
    );
}

/// A mistyped name is not shown as an empty queue: the answer says delayq
/// does not know it and names the closest known queues.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mistyped_queue_name_is_unknown_with_suggestions() {
    let server = RedisServer::start().await;
    seed::queue(&server, "svc-orders-1", 3, 0, 0).await;
    seed::queue(&server, "svc-payments-1", 3, 0, 0).await;
    let app = dashboard(&server, |d| d).await;
    until(&app, "/api/overview", |r| {
        r.json()["queues"].as_array().is_some_and(|q| q.len() == 2)
    })
    .await;

    let typo = send(&app, get("/api/queue?name=SVC-ordrs-1")).await.json();
    assert_eq!(typo["known"], false, "{typo}");
    assert_eq!(typo["did_you_mean"], serde_json::json!(["svc-orders-1"]), "{typo}");
    let far = send(&app, get("/api/queue?name=billing")).await.json();
    assert_eq!(far["known"], false, "{far}");
    assert_eq!(far["did_you_mean"], serde_json::json!([]), "{far}");
    let right = send(&app, get("/api/queue?name=svc-orders-1")).await.json();
    assert_eq!(right["known"], true, "{right}");
    assert_eq!(right["did_you_mean"], serde_json::json!([]), "{right}");
}

/// While Redis is down the payload does not claim a connection the client
/// has not got: `connected` is empty and `reconnecting` says why; once Redis
/// is back, the connection shows again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_down_lists_no_connected_server() {
    let mut server = RedisServer::start().await;
    seed::queue(&server, "q", 1, 0, 0).await;
    let app = dashboard(&server, |d| d).await;
    until(&app, "/api/overview", |r| {
        r.json()["redis"]["server"]["connected"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    })
    .await;
    server.kill();
    let down = until(&app, "/api/overview", |r| r.json()["redis"]["up"] == false)
        .await
        .json();
    assert_eq!(down["redis"]["server"]["connected"], serde_json::json!([]), "{down}");
    assert_eq!(down["redis"]["server"]["reconnecting"], true, "{down}");
    server.restart().await;
    let back = until(&app, "/api/overview", |r| {
        r.json()["redis"]["server"]["connected"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    })
    .await
    .json();
    assert_eq!(back["redis"]["server"]["reconnecting"], false, "{back}");
}
