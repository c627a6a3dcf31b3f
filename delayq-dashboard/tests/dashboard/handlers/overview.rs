//! The overview and the queue page's header and charts through the router,
//! without a browser: attention order, filter, which Redis (never its
//! password), history kept across restarts, gauges of vanished queues.

use std::time::Duration;

use axum::http::StatusCode;
use delayq::fred::prelude::*;
use delayq_dashboard::Dashboard;
use serde_json::Value;

use super::{dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed;

/// The names of the overview's rows, in order.
fn names(overview: &Value) -> Vec<String> {
    overview["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `n` values pushed onto `key`'s list.
async fn push(server: &RedisServer, key: &str, n: usize) {
    let redis = seed::raw(server).await;
    for i in 0..n {
        let _: () = redis.rpush(key, format!("v-{i}")).await.unwrap();
    }
}

/// A queue whose schedules nothing runs: saved by a process that then stopped.
async fn orphan_schedule(server: &RedisServer, name: &str) {
    let saver = seed::client(server).await;
    let queue = saver.delayed_queue(name, delayq::StringCodec).unwrap();
    saver
        .schedule("nightly", "0 3 * * *", &queue, &"compact".to_string())
        .await
        .unwrap();
    drop(queue);
    saver.shutdown().await;
}

/// Dead letters first (most first), then transfer lag, then quarantined,
/// then schedules no runner fires; the calm ones after, by name. Every
/// queue has a pending element so discovery finds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_opens_with_what_needs_attention_first() {
    let server = RedisServer::start().await;
    for name in [
        "a-calm",
        "b-calm",
        "few-dead",
        "many-dead",
        "quarantined",
        "unrun",
        "z-lagging",
    ] {
        seed::offer(&server, name, "later", 3_600).await;
    }
    let keys = |name: &str| delayq::QueueKeys::new(name).unwrap();
    push(&server, keys("few-dead").dead_letter(), 1).await;
    push(&server, keys("many-dead").dead_letter(), 4).await;
    push(&server, keys("quarantined").quarantine(), 2).await;
    // Its head a minute overdue, and nothing transfers it.
    seed::offer(&server, "z-lagging", "late", -60).await;
    orphan_schedule(&server, "unrun").await;
    let app = dashboard(&server, |d| d).await;

    let want = [
        "many-dead",
        "few-dead",
        "z-lagging",
        "quarantined",
        "unrun",
        "a-calm",
        "b-calm",
    ];
    let overview = until(&app, "/api/overview", |r| {
        let json = r.json();
        json["queues"].as_array().is_some_and(|q| {
            q.len() == want.len()
                && q.iter().all(|q| q["pending"].is_u64())
                && q.iter().any(|q| q["schedules"].is_object())
        })
    })
    .await
    .json();
    assert_eq!(names(&overview), want, "{overview}");
    assert_eq!(overview["sort"], "attention");
    let unrun = &overview["queues"][4];
    assert_eq!(unrun["schedules"]["alive"], false, "{unrun}");
    assert_eq!(unrun["schedules"]["runners"], 0);
    assert_eq!(overview["queues"][5]["schedules"], Value::Null, "no schedules: null");

    // Explicit sorts still work; paging follows the order.
    let by_name = send(&app, get("/api/overview?sort=name")).await.json();
    let mut sorted = want.map(str::to_owned).to_vec();
    sorted.sort();
    assert_eq!(names(&by_name), sorted);
    let page = send(&app, get("/api/overview?sort=attention&offset=2&limit=2"))
        .await
        .json();
    assert_eq!(names(&page), ["z-lagging", "quarantined"]);
    assert_eq!(page["matching"], want.len());
}

/// The filter matches names whatever their case, Unicode's included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filter_ignores_case_unicode_included() {
    let server = RedisServer::start().await;
    for name in ["Zürich-Orders", "ÉTÉ-emails", "other"] {
        seed::offer(&server, name, "x", 600).await;
    }
    let app = dashboard(&server, |d| d).await;
    until(&app, "/api/overview", |r| {
        r.json()["queues"].as_array().is_some_and(|q| q.len() == 3)
    })
    .await;
    for (filter, want) in [
        ("zürich", "Zürich-Orders"),
        ("ZÜRICH", "Zürich-Orders"),
        ("orders", "Zürich-Orders"),
        ("été", "ÉTÉ-emails"),
        ("Été-E", "ÉTÉ-emails"),
    ] {
        let path = format!("/api/overview?filter={}", encode(filter));
        let found = send(&app, get(&path)).await.json();
        assert_eq!(names(&found), [want], "filter {filter:?}");
    }
    let none = send(&app, get("/api/overview?filter=zurich")).await.json();
    assert_eq!(names(&none), Vec::<String>::new(), "ü is not u");
}

/// Percent-encodes every byte outside the unreserved set.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Both APIs name the Redis: address, db, mode, version, memory; the
/// password in the dashboard's URL reaches no page and no JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_apis_name_the_redis_and_never_its_password() {
    const PASSWORD: &str = "Hunter2-sEcReT-pw";
    let mut server = RedisServer::start().await;
    seed::offer(&server, "billing", "x", 600).await;
    crate::redis_server::node_command(
        server.port(),
        "CONFIG",
        vec!["SET".into(), "requirepass".into(), PASSWORD.into()],
    )
    .await;
    // db 0 holds the queue; the header says which db the dashboard reads.
    let url = format!("redis://:{PASSWORD}@127.0.0.1:{}/0", server.port());
    let client = delayq::Client::builder()
        .url(url)
        .build()
        .await
        .expect("connect with the password");
    let app = Dashboard::new(client)
        .sample_interval(Duration::from_millis(200))
        .router();

    let overview = until(&app, "/api/overview", |r| {
        r.json()["redis"]["server"]["version"].is_string() && r.json()["queues"][0]["name"] == "billing"
    })
    .await;
    let server_json = &overview.json()["redis"]["server"];
    assert_eq!(
        server_json["addresses"],
        serde_json::json!([format!("127.0.0.1:{}", server.port())])
    );
    assert_eq!(server_json["db"], 0);
    assert_eq!(server_json["mode"], "standalone");
    assert_eq!(server_json["connected"], server_json["addresses"]);
    assert_eq!(server_json["role"], "master");
    assert!(server_json["version"]
        .as_str()
        .unwrap()
        .starts_with(|c: char| c.is_ascii_digit()));
    assert!(server_json["used_memory_human"].is_string(), "{server_json}");
    assert!(server_json["maxmemory"].is_u64(), "{server_json}");
    assert!(server_json["uptime_seconds"].is_u64(), "{server_json}");

    let queue = send(&app, get("/api/queue?name=billing")).await;
    assert_eq!(queue.json()["redis"]["server"]["addresses"], server_json["addresses"]);
    for path in ["/", "/queue?name=billing", "/assets/dashboard.js", "/metrics"] {
        assert!(
            !send(&app, get(path)).await.body.contains(PASSWORD),
            "{path} shows the password"
        );
    }
    assert!(!overview.body.contains(PASSWORD) && !queue.body.contains(PASSWORD));

    // While Redis is down the answers (503) still say which Redis it is.
    server.kill();
    let down = until(&app, "/api/overview", |r| {
        r.status == StatusCode::SERVICE_UNAVAILABLE && r.json()["redis"]["up"] == false
    })
    .await;
    assert_eq!(down.json()["redis"]["server"]["addresses"], server_json["addresses"]);
    assert!(!down.body.contains(PASSWORD));
}

/// The minutes the dashboards sample are kept in Redis: two dashboards at
/// once leave one record of a minute, its hour is rolled up, and a
/// dashboard started later shows it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_survives_a_dashboard_restart() {
    let server = RedisServer::start().await;
    let name = "kept";
    seed::offer(&server, name, "x", 3_600).await;
    let (minutes_key, hours_key) = ("delayq_dashboard_minutes:{kept}", "delayq_dashboard_hours:{kept}");
    let first = dashboard(&server, |d| d).await;
    let second = dashboard(&server, |d| d).await;
    until(&first, "/api/queue?name=kept", |r| r.json()["sampled"] == true).await;
    until(&second, "/api/queue?name=kept", |r| r.json()["sampled"] == true).await;
    // A minute ends (at most a minute and a bit): both dashboards put it.
    let redis = seed::raw(&server).await;
    let records = |key: &'static str| {
        let redis = redis.clone();
        async move {
            let fields: std::collections::HashMap<String, String> = redis.hgetall(key).await.unwrap();
            let mut all: Vec<Value> = fields
                .values()
                .flat_map(|text| serde_json::from_str::<Vec<Value>>(text).unwrap())
                .collect();
            all.sort_by_key(|r| r[0].as_i64().unwrap());
            all
        }
    };
    let stored = crate::redis_server::wait_for(Duration::from_secs(150), "a minute kept", || async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The pending level (item 14) of a finished minute: the one element.
        records(minutes_key)
            .await
            .iter()
            .find(|r| r[13] == 1)
            .map(|r| r[0].as_i64().unwrap())
    })
    .await;
    let minutes = records(minutes_key).await;
    assert_eq!(
        minutes.iter().filter(|r| r[0] == stored).count(),
        1,
        "one record of the minute: {minutes:?}"
    );
    let hours = records(hours_key).await;
    assert!(
        hours.iter().any(|r| r[0] == stored.div_euclid(60) && r[13] == 1),
        "its hour: {hours:?}"
    );
    let ttl: i64 = redis.ttl(minutes_key).await.unwrap();
    assert!(ttl > 0 && ttl <= 25 * 3_600, "the minutes expire: TTL {ttl}");
    drop(first);
    drop(second);

    // A new dashboard reads it back.
    let restarted = dashboard(&server, |d| d).await;
    let reply = send(&restarted, get("/api/history?name=kept&range=1h")).await.json();
    let point = reply["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["t_ms"] == stored * 60_000)
        .cloned()
        .unwrap_or_else(|| panic!("minute {stored} missing: {reply}"));
    assert_eq!(point["pending"], 1, "{point}");
}

/// A queue gone from discovery leaves `/metrics`: its gauges go with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_queues_gauges_leave_metrics() {
    let server = RedisServer::start().await;
    seed::offer(&server, "short-lived", "x", 600).await;
    seed::offer(&server, "staying", "x", 600).await;
    let app = dashboard(&server, |d| d).await;
    until(&app, "/metrics", |r| {
        r.body.contains(r#"delayq_queue_pending{queue="short-lived"} 1"#)
    })
    .await;

    let keys = delayq::QueueKeys::new("short-lived").unwrap();
    let _: i64 = seed::raw(&server)
        .await
        .del(vec![keys.timeout(), keys.pending()])
        .await
        .unwrap();
    let metrics = until(&app, "/metrics", |r| !r.body.contains(r#"queue="short-lived""#)).await;
    assert!(
        metrics.body.contains(r#"delayq_queue_pending{queue="staying"} 1"#),
        "{}",
        metrics.body
    );
}

use delayq_test_support::redis_sentinel;

/// Through Sentinel the header names it, with the master's name, and the
/// sentinels' addresses; `INFO` comes from the master.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_sentinel_the_header_says_sentinel_and_the_master() {
    let sentinel = redis_sentinel::RedisSentinel::start().await;
    let client = delayq::Client::builder()
        .url(sentinel.url())
        .build()
        .await
        .expect("connect through Sentinel");
    let app = Dashboard::new(client)
        .sample_interval(Duration::from_millis(200))
        .router();
    let overview = until(&app, "/api/overview", |r| {
        r.json()["redis"]["server"]["version"].is_string()
    })
    .await;
    let server = &overview.json()["redis"]["server"];
    assert_eq!(server["mode"], "sentinel", "{server}");
    assert_eq!(server["master"], redis_sentinel::SERVICE);
    assert_eq!(server["role"], "master");
    let mut want: Vec<String> = sentinel
        .sentinel_ports()
        .iter()
        .map(|port| format!("127.0.0.1:{port}"))
        .collect();
    want.sort();
    let mut addresses: Vec<String> = serde_json::from_value(server["addresses"].clone()).unwrap();
    addresses.sort();
    assert_eq!(addresses, want, "the sentinels");
    let master = format!("127.0.0.1:{}", sentinel.master_port().await);
    assert_eq!(server["connected"], serde_json::json!([master]), "the master found");
}

/// Ready values nobody takes (no live worker, none left the ready list
/// between two samples) rank after dead letters and transfer lag, the
/// oldest waiting first; then a pause older than an hour. The oldest ready
/// value's age shows where a transfer recorded its due time, and is null
/// (unknown) where none did; `/metrics` has it only where known.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_values_nobody_takes_and_long_pauses_need_attention() {
    let server = RedisServer::start().await;
    for name in [
        "a-calm",
        "few-dead",
        "long-paused",
        "short-paused",
        "stuck",
        "stuck-old",
    ] {
        seed::offer(&server, name, "later", 3_600).await;
    }
    let keys = |name: &str| delayq::QueueKeys::new(name).unwrap();
    push(&server, keys("few-dead").dead_letter(), 1).await;
    push(&server, keys("stuck").destination(), 3).await;
    push(&server, keys("stuck-old").destination(), 2).await;
    let redis = seed::raw(&server).await;
    let now = seed::now_ms();
    // What a transfer records while lateness tracking is on: the head fell
    // due ten minutes ago.
    let _: () = redis
        .zadd(
            keys("stuck-old").due(),
            None,
            None,
            false,
            false,
            ((now - 600_000) as f64, "v-0"),
        )
        .await
        .unwrap();
    let _: () = redis
        .set(keys("long-paused").paused(), now - 2 * 3_600_000, None, None, false)
        .await
        .unwrap();
    let _: () = redis
        .set(keys("short-paused").paused(), now - 60_000, None, None, false)
        .await
        .unwrap();
    let app = dashboard(&server, |d| d).await;

    let want = [
        "few-dead",
        "stuck-old",
        "stuck",
        "long-paused",
        "a-calm",
        "short-paused",
    ];
    let overview = until(&app, "/api/overview", |r| names(&r.json()) == want).await.json();
    let row = |name: &str| {
        overview["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["name"] == name)
            .unwrap()
            .clone()
    };
    let old = row("stuck-old");
    assert_eq!(old["untaken"], true, "{old}");
    assert!(old["oldest_ready_age_ms"].as_u64().unwrap() >= 600_000, "{old}");
    let stuck = row("stuck");
    assert_eq!(
        (stuck["untaken"].clone(), stuck["ready"].clone()),
        (Value::Bool(true), Value::from(3))
    );
    assert_eq!(stuck["oldest_ready_age_ms"], Value::Null, "unknown, not zero: {stuck}");
    assert_eq!(row("a-calm")["untaken"], false);
    let paused = row("long-paused");
    assert_eq!(paused["paused_since_ms"], now - 2 * 3_600_000, "{paused}");

    let metrics = send(&app, get("/metrics")).await.body;
    let age = metrics
        .lines()
        .find(|l| l.starts_with("delayq_queue_oldest_ready_age_seconds{queue=\"stuck-old\"}"))
        .unwrap_or_else(|| panic!("{metrics}"));
    let seconds: f64 = age.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(seconds >= 600.0, "{age}");
    assert!(
        !metrics.contains("delayq_queue_oldest_ready_age_seconds{queue=\"stuck\"}"),
        "no made-up age for an unknown one"
    );
    assert!(
        metrics.contains("delayq_queue_oldest_ready_age_seconds{queue=\"a-calm\"} 0"),
        "nothing ready: 0"
    );
    assert!(metrics.contains("delayq_queue_ready_untaken{queue=\"stuck\"} 1"));
    assert!(metrics.contains("delayq_queue_ready_untaken{queue=\"a-calm\"} 0"));
}
