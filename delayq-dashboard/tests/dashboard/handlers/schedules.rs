//! The schedules' Pause, Resume and Remove actions through the router,
//! without a browser.

use axum::http::StatusCode;

use super::{action, csrf, dashboard, get, send};
use crate::redis_server::RedisServer;
use crate::seed;

/// Saves the schedule `name` on `queue` from a client that then stops (so
/// nothing fires it while a test looks).
pub(crate) async fn saved_schedule(server: &RedisServer, queue: &str, name: &str) {
    let saver = seed::client(server).await;
    let target = saver.delayed_queue(queue, delayq::StringCodec).unwrap();
    saver
        .schedule(name, "0 3 * * *", &target, &"compact".to_string())
        .await
        .unwrap();
    drop(target);
    saver.shutdown().await;
}

/// Whether the library reports `name` of `queue` paused; `None`: no such schedule.
async fn paused(server: &RedisServer, queue: &str, name: &str) -> Option<bool> {
    let client = seed::client(server).await;
    let info = client
        .schedules(&delayq::QueueKeys::new(queue).unwrap())
        .unwrap()
        .get(name)
        .await
        .unwrap();
    client.shutdown().await;
    info.map(|info| info.paused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedule_actions_pause_resume_and_remove_one_schedule() {
    let server = RedisServer::start().await;
    saved_schedule(&server, "reports", "nightly").await;
    saved_schedule(&server, "reports", "weekly").await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let form = "name=reports&schedule=nightly";

    // Without the CSRF header: refused, nothing changes.
    let mut no_token = action("/api/actions/schedule-pause", &token, form);
    no_token.headers_mut().remove("x-csrf-token");
    assert_eq!(send(&app, no_token).await.status, StatusCode::FORBIDDEN);
    assert_eq!(paused(&server, "reports", "nightly").await, Some(false));

    let paused_now = send(&app, action("/api/actions/schedule-pause", &token, form)).await;
    assert_eq!(paused_now.status, StatusCode::OK, "{}", paused_now.body);
    assert_eq!(paused_now.json()["ok"], true);
    assert!(paused_now.json()["message"].as_str().unwrap().contains("paused"));
    assert_eq!(paused(&server, "reports", "nightly").await, Some(true));
    assert_eq!(paused(&server, "reports", "weekly").await, Some(false), "only that one");

    let resumed = send(&app, action("/api/actions/schedule-resume", &token, form)).await;
    assert_eq!(resumed.status, StatusCode::OK, "{}", resumed.body);
    assert_eq!(paused(&server, "reports", "nightly").await, Some(false));

    let removed = send(&app, action("/api/actions/schedule-remove", &token, form)).await;
    assert_eq!(removed.status, StatusCode::OK, "{}", removed.body);
    assert_eq!(paused(&server, "reports", "nightly").await, None, "gone");
    assert_eq!(
        paused(&server, "reports", "weekly").await,
        Some(false),
        "the other stays"
    );

    // An unknown schedule (the removed one, one never saved, one on another
    // queue): 404 naming it, and nothing is created for it.
    for (path, form) in [
        ("/api/actions/schedule-pause", "name=reports&schedule=nightly"),
        ("/api/actions/schedule-resume", "name=reports&schedule=hourly"),
        ("/api/actions/schedule-remove", "name=other&schedule=weekly"),
    ] {
        let unknown = send(&app, action(path, &token, form)).await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{path} {form}: {}", unknown.body);
        assert!(
            unknown.json()["error"].as_str().unwrap().contains("no schedule"),
            "{}",
            unknown.body
        );
    }
    assert_eq!(paused(&server, "reports", "nightly").await, None);
    assert_eq!(paused(&server, "reports", "hourly").await, None);
    assert_eq!(paused(&server, "other", "weekly").await, None);
    assert_eq!(paused(&server, "reports", "weekly").await, Some(false));

    // A bad schedule name: 400.
    let empty = send(
        &app,
        action("/api/actions/schedule-pause", &token, "name=reports&schedule="),
    )
    .await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST, "{}", empty.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_has_no_schedule_actions() {
    let server = RedisServer::start().await;
    saved_schedule(&server, "reports", "nightly").await;
    let app = dashboard(&server, |d| d.read_only(true)).await;
    let token = csrf(&app).await;
    for path in [
        "/api/actions/schedule-pause",
        "/api/actions/schedule-resume",
        "/api/actions/schedule-remove",
    ] {
        let refused = send(&app, action(path, &token, "name=reports&schedule=nightly")).await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND, "{path}");
    }
    assert_eq!(
        paused(&server, "reports", "nightly").await,
        Some(false),
        "still there, not paused"
    );
}

/// The library's view of a schedule of `reports`.
async fn info(server: &RedisServer, name: &str) -> Option<delayq::schedule::ScheduleInfo> {
    let client = seed::client(server).await;
    let info = client
        .schedules(&delayq::QueueKeys::new("reports").unwrap())
        .unwrap()
        .get(name)
        .await
        .unwrap();
    client.shutdown().await;
    info
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_now_edit_and_fires_through_the_router() {
    let server = RedisServer::start().await;
    saved_schedule(&server, "reports", "nightly").await;
    let before = info(&server, "nightly").await.unwrap();
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;

    let ran = send(
        &app,
        action("/api/actions/schedule-run", &token, "name=reports&schedule=nightly"),
    )
    .await;
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    assert!(ran.json()["due_ms"].as_i64().is_some(), "{}", ran.body);
    assert_eq!(seed::zcard(&server, "redisson_delay_queue_timeout:{reports}").await, 1);
    let fires = send(&app, get("/api/schedule-fires?name=reports&schedule=nightly")).await;
    assert_eq!(fires.status, StatusCode::OK, "{}", fires.body);
    assert_eq!(fires.json()["fires"][0]["kind"], "by_hand", "{}", fires.body);
    assert_eq!(fires.json()["fires"][0]["due_ms"], ran.json()["due_ms"]);
    let unknown = send(&app, get("/api/schedule-fires?name=reports&schedule=weekly")).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.body);

    // Refused, nothing changed: a spec that does not parse, a zone on a
    // period, nothing to change (400); a name it does not hold (404, none added).
    for (form, status, says) in [
        (
            "name=reports&schedule=nightly&spec=61+*+*+*+*",
            StatusCode::BAD_REQUEST,
            "does not parse",
        ),
        (
            "name=reports&schedule=nightly&spec=every+5m&tz=UTC",
            StatusCode::BAD_REQUEST,
            "time zone",
        ),
        (
            "name=reports&schedule=nightly",
            StatusCode::BAD_REQUEST,
            "nothing to change",
        ),
        (
            "name=reports&schedule=weekly&value=x",
            StatusCode::NOT_FOUND,
            "no schedule",
        ),
    ] {
        let refused = send(&app, action("/api/actions/schedule-edit", &token, form)).await;
        assert_eq!(refused.status, status, "{form}: {}", refused.body);
        assert!(
            refused.json()["error"].as_str().unwrap().contains(says),
            "{form}: {}",
            refused.body
        );
    }
    assert_eq!(info(&server, "nightly").await.unwrap().revision, before.revision);
    assert!(info(&server, "weekly").await.is_none());

    let edited = send(
        &app,
        action(
            "/api/actions/schedule-edit",
            &token,
            "name=reports&schedule=nightly&spec=every+5m&value=vacuum",
        ),
    )
    .await;
    assert_eq!(edited.status, StatusCode::OK, "{}", edited.body);
    let after = info(&server, "nightly").await.unwrap();
    assert_eq!(after.spec.to_string(), "every 5m");
    assert_eq!(&after.payload[..], b"vacuum");
    let queue = send(&app, get("/api/queue?name=reports")).await;
    let item = &queue.json()["schedules"]["items"][0];
    assert_eq!(
        (item["expr"].as_str(), item["time_zone"].as_str()),
        (Some("every 5m"), None),
        "{item}"
    );

    // Read-only: the fires read, no run or edit.
    let read_only = dashboard(&server, |d| d.read_only(true)).await;
    let token = csrf(&read_only).await;
    let fires = send(&read_only, get("/api/schedule-fires?name=reports&schedule=nightly")).await;
    assert_eq!(fires.status, StatusCode::OK, "{}", fires.body);
    for path in ["/api/actions/schedule-run", "/api/actions/schedule-edit"] {
        let refused = send(
            &read_only,
            action(path, &token, "name=reports&schedule=nightly&value=x"),
        )
        .await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND, "{path}");
    }
    assert_eq!(seed::zcard(&server, "redisson_delay_queue_timeout:{reports}").await, 1);
}
