//! The dashboard's HTTP surface without a browser: status codes, the CSRF,
//! cross-site, token and Host refusals, planted CSRF cookies, the token
//! login's redirect, GETs that cannot change anything,
//! the JSON APIs, the actions' effect in Redis, and `/metrics`.

use std::time::Duration;

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use delayq_dashboard::Dashboard;
use serde_json::Value;
use tower::ServiceExt;

use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

const HOST: &str = "127.0.0.1:9090";
const ORIGIN: &str = "http://127.0.0.1:9090";

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

async fn send(app: &Router, request: Request<Body>) -> Reply {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap();
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// GETs `path` until `done` holds for the reply (generous: discovery and
/// sampling run in the background on a possibly loaded machine).
async fn until(app: &Router, path: &str, done: impl Fn(&Reply) -> bool) -> Reply {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let reply = send(app, get(path)).await;
        if done(&reply) {
            return reply;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "GET {path} never got there: {}",
            reply.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .header(header::HOST, HOST)
        .body(Body::empty())
        .unwrap()
}

async fn dashboard(server: &RedisServer, configure: impl FnOnce(Dashboard) -> Dashboard) -> Router {
    let client = seed::client(server).await;
    configure(Dashboard::new(client).sample_interval(Duration::from_millis(200))).router()
}

/// The session's CSRF token, as a browser gets it: from the page's cookie.
async fn csrf(app: &Router) -> String {
    let page = send(app, get("/")).await;
    assert_eq!(page.status, StatusCode::OK);
    let cookie = page.headers[header::SET_COOKIE].to_str().unwrap().to_owned();
    let token = cookie
        .strip_prefix("delayq_csrf=")
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_owned();
    assert!(page.body.contains(&token), "the page embeds the CSRF token");
    assert!(cookie.contains("SameSite=Strict") && cookie.contains("HttpOnly"));
    token
}

/// A same-origin action POST as the page sends it.
fn action(path: &str, csrf: &str, form: &str) -> Request<Body> {
    Request::post(path)
        .header(header::HOST, HOST)
        .header(header::ORIGIN, ORIGIN)
        .header("sec-fetch-site", "same-origin")
        .header(header::COOKIE, format!("delayq_csrf={csrf}"))
        .header("x-csrf-token", csrf)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(form.to_owned()))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overview_and_queue_json_show_counts_pages_and_undecodable_hex() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 120, 3, 2).await;
    seed::undecodable(&server, "orders", 50).await;
    seed::queue(&server, "{shop}payments", 4, 0, 0).await;
    let app = dashboard(&server, |d| d).await;

    let page = send(&app, get("/")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("/assets/dashboard.js"));
    assert_eq!(send(&app, get("/assets/dashboard.js")).await.status, StatusCode::OK);
    assert_eq!(send(&app, get("/assets/dashboard.css")).await.status, StatusCode::OK);

    // Discovery runs in the background; the overview fills in (a queue
    // is listed as discovery finds it, its counts once it is sampled).
    let overview = until(&app, "/api/overview", |r| {
        let json = r.json();
        json["queues"]
            .as_array()
            .is_some_and(|q| q.len() == 2 && q.iter().all(|q| q["pending"].is_u64()))
    })
    .await
    .json();
    assert_eq!(overview["totals"]["pending"], 125);
    assert_eq!(overview["totals"]["dead_letters"], 2);
    let orders = &overview["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "orders")
        .unwrap();
    assert_eq!(orders["pending"], 121);
    assert_eq!(orders["ready"], 3);
    let hour = &orders["due_next_hour"];
    assert_eq!(hour["buckets"].as_array().unwrap().len(), 12);
    let in_hour: u64 = hour["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        hour["overdue"].as_u64().unwrap() + in_hour,
        121,
        "every element is due within the hour"
    );
    assert!(
        hour["overdue"].as_u64().unwrap() >= 2,
        "the first ones are overdue: {hour}"
    );
    let filtered = send(&app, get("/api/overview?filter=pay")).await.json();
    assert_eq!(filtered["queues"][0]["name"], "{shop}payments");

    // Second page of 50, in due order.
    let queue = send(&app, get("/api/queue?name=orders&offset=50&limit=50"))
        .await
        .json();
    let elements = queue["pending"]["elements"].as_array().unwrap();
    assert_eq!(elements.len(), 50);
    assert_eq!(elements[0]["text"], "order-50");
    assert_eq!(elements[0]["decoded"], true);
    assert_eq!(elements[0]["format"], "modern");
    let dues: Vec<i64> = elements.iter().map(|e| e["due_ms"].as_i64().unwrap()).collect();
    assert!(dues.windows(2).all(|w| w[0] <= w[1]), "due order");
    assert_eq!(queue["ready_head"][0]["text"], "ready-0");
    assert_eq!(queue["dead_letters"]["total"], 2);
    assert_eq!(queue["dead_letters"]["items"][1]["text"], "dead-1");

    // The undecodable one is last (due in 50 min) and shown as hex.
    let last = send(&app, get("/api/queue?name=orders&offset=120&limit=50"))
        .await
        .json();
    let odd = &last["pending"]["elements"][0];
    assert_eq!(odd["decoded"], false);
    assert_eq!(odd["text"], "fffe0001");
    assert_eq!(odd["format"], "legacy");

    let bad = send(&app, get("/api/queue?name=%7Bbroken")).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_get_changes_anything() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 10, 0, 3).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    for path in [
        "/api/actions/requeue-dead-letters?name=orders",
        "/api/actions/delete-dead-letters?name=orders",
        "/api/actions/move-due?name=orders",
        "/api/actions/purge?name=orders&confirm=orders",
        "/api/actions/migrate?name=orders&to=legacy",
    ] {
        let request = Request::get(path)
            .header(header::HOST, HOST)
            .header(header::COOKIE, format!("delayq_csrf={token}"))
            .header("x-csrf-token", &token)
            .body(Body::empty())
            .unwrap();
        assert_eq!(
            send(&app, request).await.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{path}"
        );
    }
    assert_eq!(seed::zcard(&server, "redisson_delay_queue_timeout:{orders}").await, 10);
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 3);
    assert_eq!(seed::llen(&server, "orders").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_refuse_cross_site_requests_and_missing_csrf_tokens() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 0, 0, 3).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let path = "/api/actions/requeue-dead-letters";
    let form = "name=orders&count=3";

    let mut no_token = action(path, &token, form);
    no_token.headers_mut().remove("x-csrf-token");
    let mut wrong_token = action(path, &token, form);
    wrong_token
        .headers_mut()
        .insert("x-csrf-token", "0".repeat(32).parse().unwrap());
    let mut no_cookie = action(path, &token, form);
    no_cookie.headers_mut().remove(header::COOKIE);
    let mut other_origin = action(path, &token, form);
    other_origin
        .headers_mut()
        .insert(header::ORIGIN, "http://evil.example".parse().unwrap());
    let mut cross_site = action(path, &token, form);
    cross_site
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    for (what, request) in [
        ("no CSRF header", no_token),
        ("wrong CSRF header", wrong_token),
        ("no CSRF cookie", no_cookie),
        ("another Origin", other_origin),
        ("Sec-Fetch-Site: cross-site", cross_site),
    ] {
        assert_eq!(send(&app, request).await.status, StatusCode::FORBIDDEN, "{what}");
    }
    assert_eq!(
        seed::llen(&server, "delayq_dead_letter:{orders}").await,
        3,
        "nothing moved"
    );

    let done = send(&app, action(path, &token, form)).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_eq!(done.json()["moved"], 3);
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 0);
    assert_eq!(seed::lrange(&server, "orders").await, ["dead-0", "dead-1", "dead-2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_needs_the_typed_name_and_other_actions_do_what_they_say() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 2_500, 0, 4).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let timeout = "redisson_delay_queue_timeout:{orders}";

    // Move due: the two overdue elements (seeded 30 s and 10 s ago) go to the list.
    let moved = send(&app, action("/api/actions/move-due", &token, "name=orders")).await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    assert_eq!(seed::lrange(&server, "orders").await, ["order-0", "order-1"]);

    // Migrate to legacy and back: scores and count kept.
    let migrated = send(&app, action("/api/actions/migrate", &token, "name=orders&to=legacy")).await;
    assert_eq!(migrated.json()["converted"], 2_498, "{}", migrated.body);
    let bad = send(&app, action("/api/actions/migrate", &token, "name=orders&to=kryo")).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);

    // Delete dead letters.
    let deleted = send(
        &app,
        action("/api/actions/delete-dead-letters", &token, "name=orders&count=4"),
    )
    .await;
    assert_eq!(deleted.json()["deleted"], 4);
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 0);

    // Purge: refused without the typed name, then in batches.
    for form in ["name=orders", "name=orders&confirm=order", "name=orders&confirm=ORDERS"] {
        let refused = send(&app, action("/api/actions/purge", &token, form)).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{form}");
    }
    assert_eq!(seed::zcard(&server, timeout).await, 2_498);
    let purged = send(&app, action("/api/actions/purge", &token, "name=orders&confirm=orders")).await;
    assert_eq!(purged.status, StatusCode::OK, "{}", purged.body);
    assert_eq!(purged.json()["removed"], 2_498);
    assert_eq!(seed::zcard(&server, timeout).await, 0);
    assert_eq!(seed::llen(&server, "redisson_delay_queue:{orders}").await, 0);
    assert_eq!(seed::llen(&server, "orders").await, 2, "the ready values stay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_has_no_action_routes() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 5, 0, 2).await;
    let app = dashboard(&server, |d| d.read_only(true)).await;
    let page = send(&app, get("/queue?name=orders")).await;
    assert!(page.body.contains(r#"name="delayq-read-only" content="true""#));
    let token = csrf(&app).await;
    for path in [
        "/api/actions/requeue-dead-letters",
        "/api/actions/purge",
        "/api/actions/pause",
        "/api/actions/resume",
        "/api/actions/limits",
    ] {
        let refused = send(&app, action(path, &token, "name=orders&confirm=orders")).await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND, "{path}");
    }
    assert_eq!(seed::zcard(&server, "redisson_delay_queue_timeout:{orders}").await, 5);
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 2);
    assert_eq!(seed::exists(&server, "delayq_paused:{orders}").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_guards_every_route_and_loopback_needs_a_loopback_host() {
    let server = RedisServer::start().await;
    let open = dashboard(&server, |d| d).await;
    // DNS rebinding: a page from evil.example whose name now points at 127.0.0.1.
    let rebound = Request::get("/api/overview")
        .header(header::HOST, "evil.example:9090")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&open, rebound).await.status, StatusCode::FORBIDDEN);
    let localhost = Request::get("/api/overview")
        .header(header::HOST, "localhost:9090")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&open, localhost).await.status, StatusCode::OK);

    let app = dashboard(&server, |d| d.token(Some("s3cret-token".into()))).await;
    for path in ["/", "/api/overview", "/metrics", "/queue?name=orders"] {
        assert_eq!(send(&app, get(path)).await.status, StatusCode::UNAUTHORIZED, "{path}");
    }
    let wrong = Request::get("/metrics")
        .header(header::HOST, HOST)
        .header(header::AUTHORIZATION, "Bearer nope")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, wrong).await.status, StatusCode::UNAUTHORIZED);
    let bearer = Request::get("/metrics")
        .header(header::HOST, "dashboard.internal:9090")
        .header(header::AUTHORIZATION, "Bearer s3cret-token")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, bearer).await.status, StatusCode::OK);
    // ?token= once: a cookie, and the token leaves the address bar.
    let login = send(&app, get("/queue?name=orders&token=s3cret-token")).await;
    assert_eq!(login.status, StatusCode::SEE_OTHER);
    assert_eq!(login.headers[header::LOCATION], "/queue?name=orders");
    let cookie = login.headers[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let with_cookie = Request::get("/api/overview")
        .header(header::HOST, HOST)
        .header(header::COOKIE, cookie)
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, with_cookie).await.status, StatusCode::OK);
    assert_eq!(send(&app, get("/?token=wrong")).await.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_has_gauges_per_discovered_queue() {
    let server = RedisServer::start().await;
    seed::queue(&server, "metered-orders", 7, 2, 1).await;
    let app = dashboard(&server, |d| d).await;
    let text = until(&app, "/metrics", |r| {
        r.status == StatusCode::OK && r.body.contains(r#"delayq_queue_pending{queue="metered-orders"} 7"#)
    })
    .await
    .body;
    for line in [
        r#"delayq_queue_ready{queue="metered-orders"} 2"#,
        r#"delayq_queue_in_flight{queue="metered-orders"} 0"#,
        r#"delayq_queue_dead_letters{queue="metered-orders"} 1"#,
        r#"delayq_queue_quarantined{queue="metered-orders"} 0"#,
        r#"delayq_queue_transfer_lag_seconds{queue="metered-orders"}"#,
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }

    // The library's own series come through the same recorder: a transfer
    // in this process counts delayq_transferred_total.
    let client = seed::client(&server).await;
    let queue = client.delayed_queue("metered-orders", delayq::StringCodec).unwrap();
    eventually(Duration::from_secs(30), "delayq_transferred_total", || {
        let app = app.clone();
        async move {
            let body = send(&app, get("/metrics")).await.body;
            body.contains(r#"delayq_transferred_total{queue="metered-orders"}"#)
        }
    })
    .await;
    drop(queue);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_router_serves_an_embedding_service() {
    let server = RedisServer::start().await;
    seed::queue(&server, "embedded", 3, 0, 0).await;
    let app = delayq_dashboard::metrics_router(seed::client(&server).await);
    eventually(Duration::from_secs(30), "the embedded /metrics", || {
        let app = app.clone();
        async move {
            let request = Request::builder()
                .method(Method::GET)
                .uri("/metrics")
                .body(Body::empty())
                .unwrap();
            let reply = send(&app, request).await;
            reply.status == StatusCode::OK && reply.body.contains(r#"delayq_queue_pending{queue="embedded"} 3"#)
        }
    })
    .await;
}

/// What any site on the same host can do: plant a `delayq_csrf` cookie
/// (cookies ignore ports). The page never carries its text, and only a
/// token the guard could have minted counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_csrf_cookie_never_reaches_the_page_nor_passes_an_action() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 0, 0, 3).await;
    let app = dashboard(&server, |d| d).await;
    let markup = format!(r#"x"><i/id=pwned>{}"#, "a".repeat(32));
    for planted in [
        markup.as_str(),
        "0123456789abcdef0123456789abcdef0",
        "0123456789ABCDEF0123456789ABCDEF",
    ] {
        for path in ["/", "/queue?name=orders"] {
            let page = send(
                &app,
                Request::get(path)
                    .header(header::HOST, HOST)
                    .header(header::COOKIE, format!("delayq_csrf={planted}"))
                    .body(Body::empty())
                    .unwrap(),
            )
            .await;
            assert_eq!(page.status, StatusCode::OK);
            assert!(!page.body.contains(planted), "{path} embeds the planted {planted:?}");
            assert!(!page.body.contains("<i/id=pwned>"), "{path}: {}", page.body);
            let fresh = page.headers[header::SET_COOKIE].to_str().unwrap();
            let fresh = fresh.strip_prefix("delayq_csrf=").unwrap().split(';').next().unwrap();
            assert_eq!(fresh.len(), 32);
            assert!(page.body.contains(&format!(r#"content="{fresh}""#)), "{}", page.body);
        }
        // The planted value, echoed in the header, is no token either.
        let refused = send(
            &app,
            action("/api/actions/requeue-dead-letters", planted, "name=orders"),
        )
        .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{planted:?}: {}", refused.body);
    }
    assert_eq!(
        seed::llen(&server, "delayq_dead_letter:{orders}").await,
        3,
        "nothing moved"
    );

    // A planted cookie of the right shape beside the session's does not
    // shadow it: either value is one the browser really holds.
    let token = csrf(&app).await;
    let mut both = action("/api/actions/requeue-dead-letters", &token, "name=orders&count=3");
    both.headers_mut().insert(
        header::COOKIE,
        format!("delayq_csrf={}; delayq_csrf={token}", "0".repeat(32))
            .parse()
            .unwrap(),
    );
    let done = send(&app, both).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert_eq!(done.json()["moved"], 3);
}

/// `?token=` sends the browser on without the token: to a path of this
/// dashboard, whatever the request's path looks like.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_login_redirect_stays_on_the_dashboard() {
    let server = RedisServer::start().await;
    let app = dashboard(&server, |d| d.token(Some("s3cret-token".into()))).await;
    for (path, want) in [
        ("//evil.example/?token=s3cret-token", "/evil.example/"),
        ("///evil.example/x?token=s3cret-token&a=1", "/evil.example/x?a=1"),
        ("/queue?name=orders&token=s3cret-token", "/queue?name=orders"),
        ("/?token=s3cret-token", "/"),
    ] {
        let login = send(&app, get(path)).await;
        assert_eq!(login.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(login.headers[header::LOCATION], want, "{path}");
    }
}

/// Migrate answers within the time every action has; stopped, it keeps the
/// batches it finished, and pressing again goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_stops_at_the_action_time_limit_like_the_other_actions() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 1_200, 0, 3).await;
    let legacy = |elements: Vec<bytes::Bytes>| {
        elements
            .iter()
            .filter(|e| delayq::format::unpack(e).unwrap().format() == delayq::format::Format::Legacy)
            .count()
    };
    let pending = "redisson_delay_queue:{orders}";

    // No time at all: no more than the batch in flight when it stopped (500).
    let app = dashboard(&server, |d| d.action_time(Duration::ZERO)).await;
    let token = csrf(&app).await;
    let stopped = send(&app, action("/api/actions/migrate", &token, "name=orders&to=legacy")).await;
    assert_eq!(stopped.status, StatusCode::OK, "{}", stopped.body);
    assert_eq!(stopped.json()["complete"], false, "{}", stopped.body);
    assert!(stopped.json()["message"].as_str().unwrap().contains("press again"));
    let rewritten = legacy(seed::lrange(&server, pending).await);
    assert!(rewritten <= 500, "{rewritten} rewritten in no time");
    let requeue = send(
        &app,
        action("/api/actions/requeue-dead-letters", &token, "name=orders&count=3"),
    )
    .await;
    assert_eq!(requeue.json()["complete"], false, "{}", requeue.body);
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 3);

    // With the default limit, pressing again finishes it.
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let finished = send(&app, action("/api/actions/migrate", &token, "name=orders&to=legacy")).await;
    assert_eq!(finished.json()["complete"], true, "{}", finished.body);
    // (The batch cut off above may still land in between: a copy of this one's work.)
    let converted = finished.json()["converted"].as_u64().unwrap() as usize;
    assert!(converted >= 1_200 - 500 - rewritten, "{}", finished.body);
    assert_eq!(legacy(seed::lrange(&server, pending).await), 1_200);
    assert_eq!(
        seed::zcard(&server, "redisson_delay_queue_timeout:{orders}").await,
        1_200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_loopback_the_dashboard_refuses_to_start_without_a_token() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let refused = Dashboard::new(client.clone()).serve(listener).await.unwrap_err();
    assert!(refused.to_string().contains("without a token"), "{refused}");
}

/// Redis stops under a running dashboard: every API, the actions included,
/// answers 503 with a JSON error naming the outage (a generous guard turns
/// a hang into a failure), and `/metrics` says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_api_answers_503_while_redis_is_down() {
    let mut server = RedisServer::start().await;
    seed::queue(&server, "outage-orders", 5, 1, 1).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    until(&app, "/api/overview", |r| r.json()["sampler"]["queues"] == 1).await;
    server.kill();
    let metrics = until(&app, "/metrics", |r| r.body.contains("delayq_dashboard_redis_up 0")).await;
    assert!(
        metrics.body.contains("delayq_dashboard_sample_age_seconds "),
        "{}",
        metrics.body
    );
    let guard = |request| {
        let app = app.clone();
        async move {
            tokio::time::timeout(Duration::from_secs(30), send(&app, request))
                .await
                .expect("an answer while Redis is down, not a hang")
        }
    };
    for request in [
        get("/api/overview"),
        get("/api/queue?name=outage-orders"),
        action("/api/actions/move-due", &token, "name=outage-orders"),
        action("/api/actions/requeue-dead-letters", &token, "name=outage-orders"),
    ] {
        let path = request.uri().to_string();
        let reply = guard(request).await;
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {}", reply.body);
        let body = reply.json();
        assert!(
            body["error"].as_str().unwrap().starts_with("Redis is unreachable"),
            "{body}"
        );
        assert_eq!(body["redis"]["up"], false);
        assert!(body["redis"]["since_ms"].is_i64(), "{body}");
    }
    server.restart().await;
    until(&app, "/api/overview", |r| r.status == StatusCode::OK).await;
    until(&app, "/metrics", |r| r.body.contains("delayq_dashboard_redis_up 1")).await;
}

/// A paused queue: the APIs and `/metrics` say so (no lag to alert on),
/// "Move due now" refuses, pause and resume are CSRF-guarded POSTs, and a
/// name with no key is not paused into existence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_queue_looks_paused_and_is_paused_and_resumed_by_actions() {
    let server = RedisServer::start().await;
    // Two elements overdue: a lag, had the pause not been deliberate.
    seed::queue(&server, "paused-orders", 3, 0, 0).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let flag = "delayq_paused:{paused-orders}";

    let mut refused = action("/api/actions/pause", &token, "name=paused-orders");
    refused.headers_mut().remove("x-csrf-token");
    assert_eq!(send(&app, refused).await.status, StatusCode::FORBIDDEN);
    let paused = send(&app, action("/api/actions/pause", &token, "name=paused-orders")).await;
    assert_eq!(paused.status, StatusCode::OK, "{}", paused.body);
    assert_eq!(seed::exists(&server, flag).await, 1);

    let overview = until(&app, "/api/overview", |r| r.json()["queues"][0]["paused"] == true).await;
    assert!(overview.json()["queues"][0]["lag_ms"].as_u64().unwrap() > 0);
    let queue = send(&app, get("/api/queue?name=paused-orders")).await.json();
    assert_eq!(queue["status"]["paused"], true, "{queue}");
    let metrics = until(&app, "/metrics", |r| {
        r.body.contains(r#"delayq_queue_paused{queue="paused-orders"} 1"#)
    })
    .await;
    assert!(
        metrics
            .body
            .contains(r#"delayq_queue_transfer_lag_seconds{queue="paused-orders"} 0"#),
        "no lag alert for a deliberate pause:\n{}",
        metrics.body
    );

    let moved = send(&app, action("/api/actions/move-due", &token, "name=paused-orders")).await;
    assert_eq!(moved.status, StatusCode::CONFLICT, "{}", moved.body);
    assert!(
        moved.json()["error"]
            .as_str()
            .unwrap()
            .contains("paused-orders is paused"),
        "{}",
        moved.body
    );
    assert_eq!(seed::llen(&server, "paused-orders").await, 0, "nothing moved");

    let resumed = send(&app, action("/api/actions/resume", &token, "name=paused-orders")).await;
    assert_eq!(resumed.json()["message"], "paused-orders resumed", "{}", resumed.body);
    assert_eq!(seed::exists(&server, flag).await, 0);
    until(&app, "/metrics", |r| {
        r.body.contains(r#"delayq_queue_paused{queue="paused-orders"} 0"#)
    })
    .await;
    let moved = send(&app, action("/api/actions/move-due", &token, "name=paused-orders")).await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    assert_eq!(seed::lrange(&server, "paused-orders").await, ["order-0", "order-1"]);

    let missing = send(&app, action("/api/actions/pause", &token, "name=paused-ordrs")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    assert_eq!(
        seed::exists(&server, "delayq_paused:{paused-ordrs}").await,
        0,
        "no stray key"
    );
}

/// A queue holding only ready values (transferred, consumers down) has no
/// key `SCAN` looks for: the registry keeps it on the page and in
/// `/metrics` after a dashboard restart. Names whose keys are all gone, and
/// that nobody registered lately, are dropped as discovery finds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_holding_only_ready_values_is_found_through_the_registry() {
    use delayq::fred::interfaces::{ListInterface, SortedSetsInterface};
    let server = RedisServer::start().await;
    // A producer process offers and transfers, then stops.
    let producer = seed::client(&server).await;
    let queue = producer
        .delayed_queue("only-ready", delayq::StringCodec)
        .unwrap()
        .with_transfer();
    for i in 0..4 {
        queue.offer(&format!("job-{i}"), Duration::ZERO).await.unwrap();
    }
    eventually(Duration::from_secs(30), "the values transferred", || async {
        seed::llen(&server, "only-ready").await == 4
    })
    .await;
    drop(queue);
    producer.shutdown().await;
    assert_eq!(
        seed::zcard(&server, "redisson_delay_queue_timeout:{only-ready}").await,
        0
    );

    // The producer registered the queue it offered to; a consumer of a
    // list Java fills registers it too.
    let redis = seed::raw(&server).await;
    let consumer = seed::client(&server).await;
    let _: () = redis.rpush("java-filled", "from-java").await.unwrap();
    let taken: Option<String> = consumer
        .blocking_queue("java-filled", delayq::StringCodec)
        .unwrap()
        .take_timeout(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(taken.as_deref(), Some("from-java"));
    consumer.shutdown().await;
    for name in ["only-ready", "java-filled"] {
        eventually(Duration::from_secs(30), name, || {
            let redis = redis.clone();
            async move {
                let score: Option<f64> = redis.zscore("delayq_queues", name).await.unwrap();
                score.is_some()
            }
        })
        .await;
    }

    // Registered names: one gone long ago, one gone but registered lately.
    let long_ago = (seed::now_ms() - 3_600_000) as f64;
    let _: () = redis
        .zadd("delayq_queues", None, None, false, false, (long_ago, "long-gone"))
        .await
        .unwrap();
    let _: () = redis
        .zadd(
            "delayq_queues",
            None,
            None,
            false,
            false,
            (seed::now_ms() as f64, "just-emptied"),
        )
        .await
        .unwrap();
    // Also old, but its keys hold values: it stays.
    let _: () = redis
        .zadd("delayq_queues", None, None, false, false, (long_ago, "only-ready"))
        .await
        .unwrap();

    // A dashboard started now.
    let app = dashboard(&server, |d| d).await;
    // Listed first, counted at the sampler's next pass: waited for both.
    let overview = until(&app, "/api/overview", |r| {
        r.json()["queues"]
            .as_array()
            .is_some_and(|q| q.iter().any(|q| q["name"] == "only-ready" && q["ready"].is_number()))
    })
    .await
    .json();
    let row = overview["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == "only-ready")
        .unwrap();
    assert_eq!(row["ready"], 4, "{row}");
    until(&app, "/metrics", |r| {
        r.body.contains(r#"delayq_queue_ready{queue="only-ready"} 4"#)
    })
    .await;

    eventually(Duration::from_secs(30), "the long-gone name dropped", || {
        let redis = redis.clone();
        async move {
            let score: Option<f64> = redis.zscore("delayq_queues", "long-gone").await.unwrap();
            score.is_none()
        }
    })
    .await;
    // Another full pass, then the two others are still there.
    let cycles = send(&app, get("/api/overview")).await.json()["sampler"]["cycles"]
        .as_u64()
        .unwrap();
    until(&app, "/api/overview", |r| {
        r.json()["sampler"]["cycles"].as_u64().unwrap() > cycles + 1
    })
    .await;
    for name in ["just-emptied", "only-ready"] {
        let score: Option<f64> = redis.zscore("delayq_queues", name).await.unwrap();
        assert!(score.is_some(), "{name} stays registered");
    }
}

// One file per part of the pages, each using the helpers above.
mod batches;
mod dead_letters;
mod elements;
mod events;
mod groups;
mod headers;
mod history;
mod java;
mod jobs;
mod limits;
mod overview;
mod partitioned;
mod priorities;
mod review;
mod schedules;
mod search;

/// Limits: shown by `/api/queue`, set by a CSRF-guarded POST, refused for
/// bad numbers and for a name delayq does not know (no stray key).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_are_shown_and_set_by_an_action() {
    let server = RedisServer::start().await;
    seed::queue(&server, "limited", 3, 0, 0).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let queue = send(&app, get("/api/queue?name=limited")).await.json();
    assert_eq!(queue["limits"]["text"], "none", "{queue}");

    let form = "name=limited&max_size=3&max_payload=&offers=off&takes=on";
    let mut refused = action("/api/actions/limits", &token, form);
    refused.headers_mut().remove("x-csrf-token");
    assert_eq!(send(&app, refused).await.status, StatusCode::FORBIDDEN);
    assert_eq!(seed::exists(&server, "delayq_limits:{limited}").await, 0);
    let set = send(&app, action("/api/actions/limits", &token, form)).await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    assert_eq!(set.json()["limits"], "max_size=3 offers=off");
    let queue = send(&app, get("/api/queue?name=limited")).await.json();
    assert_eq!(queue["limits"]["max_size"], 3, "{queue}");
    assert_eq!(queue["limits"]["max_payload"], serde_json::Value::Null, "{queue}");
    assert_eq!(queue["limits"]["offers"], false, "{queue}");

    let bad = send(
        &app,
        action("/api/actions/limits", &token, "name=limited&max_size=lots"),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    let missing = send(&app, action("/api/actions/limits", &token, "name=limitd&max_size=1")).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.body);
    assert_eq!(seed::exists(&server, "delayq_limits:{limitd}").await, 0, "no stray key");
}
