//! Scenario 8: the dashboard at scale — 10,000 queues of one element each and
//! one queue of 1,000,000 — on one server. Measures the first discovery and
//! sampling pass, the overview API (what the page polls), the queue page
//! at the first, middle and last page of the big queue, and `/metrics`.
//! Handlers are called in process (no socket, no browser): server time only.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, Request};
use axum::Router;
use delayq::QueueKeys;
use tower::ServiceExt;

use crate::admin::Admin;
use crate::measure::{median, rss_bytes};
use crate::report::{thousands, Row};
use crate::scenario::{Context, Rows, Scenario};
use crate::RedisServer;

pub const QUEUES: i64 = 10_000;
pub const BIG: i64 = 1_000_000;

pub struct DashboardRun {
    pub first_pass: Duration,
    pub steady_pass_ms: u64,
    pub overview_ms: (f64, f64),
    pub overview_by_pending_ms: f64,
    pub overview_bytes: usize,
    pub queue_page_ms: [(i64, f64); 3],
    pub metrics_ms: f64,
    pub metrics_bytes: usize,
    pub rss_mb: f64,
}

/// One element in each of `QUEUES` queues, due over the next hour.
const SEED_QUEUES: &str = r#"
local first, last, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
for i = first, last - 1 do
  local name = string.format('dash-%05d', i)
  local payload = '{"job":' .. i .. '}'
  local element = struct.pack('Bc0Lc0', 8, struct.pack('<I4I4', i, i), #payload, payload)
  redis.call('zadd', 'redisson_delay_queue_timeout:{' .. name .. '}', now + 60000 + (i % 3600) * 1000, element)
  redis.call('rpush', 'redisson_delay_queue:{' .. name .. '}', element)
end
return last - first
"#;

async fn get(app: &Router, path: &str) -> (Duration, String) {
    let request = Request::get(path)
        .header(header::HOST, "127.0.0.1:9090")
        .body(Body::empty())
        .unwrap();
    let started = Instant::now();
    let response = app.clone().oneshot(request).await.unwrap();
    assert!(response.status().is_success(), "{path}: {}", response.status());
    let body = axum::body::to_bytes(response.into_body(), 1 << 30).await.unwrap();
    (started.elapsed(), String::from_utf8_lossy(&body).into_owned())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub async fn run(redis: &RedisServer) -> DashboardRun {
    let admin = Admin::connect(&redis.url()).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let seed = admin.script_load(SEED_QUEUES).await;
    for first in (0..QUEUES).step_by(1_000) {
        admin
            .cmd(
                "EVALSHA",
                vec![
                    seed.as_str().into(),
                    0.into(),
                    first.into(),
                    (first + 1_000).into(),
                    now.into(),
                ],
            )
            .await;
    }
    let big = QueueKeys::new("dash-big").unwrap();
    let load = admin.script_load(include_str!("load_backlog.lua")).await;
    for first in (0..BIG).step_by(100_000) {
        admin
            .cmd(
                "EVALSHA",
                vec![
                    load.as_str().into(),
                    2.into(),
                    big.timeout().into(),
                    big.pending().into(),
                    first.into(),
                    (first + 100_000).into(),
                    (now + 600_000).into(),
                    (now + 3_000_000).into(),
                    BIG.into(),
                    16.into(),
                ],
            )
            .await;
    }

    let client = delayq::Client::connect(&redis.url()).await.unwrap();
    let started = Instant::now();
    let app = delayq_dashboard::Dashboard::new(client).router();
    // The first pass: discovery by SCAN, then every queue's counts.
    let first_pass = loop {
        let (_, body) = get(&app, "/api/overview?limit=1").await;
        let value: serde_json::Value = serde_json::from_str(&body).unwrap();
        if value["sampler"]["cycles"].as_u64().unwrap_or(0) >= 1 {
            assert_eq!(value["sampler"]["queues"].as_i64(), Some(QUEUES + 1));
            break started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };

    let mut overview = Vec::new();
    let mut overview_bytes = 0;
    for _ in 0..20 {
        let (took, body) = get(&app, "/api/overview?limit=50").await;
        overview.push(ms(took));
        overview_bytes = body.len();
    }
    let overview_max = overview.iter().cloned().fold(0.0, f64::max);
    let mut by_pending = Vec::new();
    for _ in 0..10 {
        let (took, body) = get(&app, "/api/overview?limit=50&sort=pending").await;
        assert!(body.contains("dash-big"));
        by_pending.push(ms(took));
    }

    let mut pages = [(0, 0.0), (BIG / 2, 0.0), (BIG - 50, 0.0)];
    for (offset, median_ms) in &mut pages {
        let mut took = Vec::new();
        for _ in 0..10 {
            let (t, body) = get(&app, &format!("/api/queue?name=dash-big&offset={offset}&limit=50")).await;
            assert!(body.contains("ord-"), "the page holds elements");
            took.push(ms(t));
        }
        *median_ms = median(took);
    }

    let mut metrics = Vec::new();
    let mut metrics_bytes = 0;
    for _ in 0..5 {
        let (took, body) = get(&app, "/metrics").await;
        assert!(body.contains(r#"delayq_queue_pending{queue="dash-big"} 1000000"#));
        metrics.push(ms(took));
        metrics_bytes = body.len();
    }

    // A second pass, with the cache warm (the sampler runs every 5 s).
    let steady_pass_ms = loop {
        let (_, body) = get(&app, "/api/overview?limit=1").await;
        let value: serde_json::Value = serde_json::from_str(&body).unwrap();
        if value["sampler"]["cycles"].as_u64().unwrap_or(0) >= 2 {
            break value["sampler"]["last_cycle_ms"].as_u64().unwrap_or(0);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };

    DashboardRun {
        first_pass,
        steady_pass_ms,
        overview_ms: (median(overview), overview_max),
        overview_by_pending_ms: median(by_pending),
        overview_bytes,
        queue_page_ms: pages,
        metrics_ms: median(metrics),
        metrics_bytes,
        rss_mb: rss_bytes() as f64 / (1024.0 * 1024.0),
    }
}

/// Scenario 10. The dashboard over 10,000 queues and one of 1,000,000.
pub struct DashboardAtScale;

impl Scenario for DashboardAtScale {
    fn name(&self) -> &'static str {
        "dashboard"
    }

    fn run<'a>(&'a self, _: &'a mut Context) -> Rows<'a> {
        Box::pin(async move {
            let mut rows = Vec::new();
            eprintln!("10. dashboard: 10,000 queues and one of 1,000,000...");
            let redis = RedisServer::start().await;
            let d = run(&redis).await;
            let scenario = "10. dashboard, 10,001 queues";
            let ms = |v: f64| format!("{v:.1} ms");
            rows.push(
                Row::new(scenario, "first pass: SCAN discovery + every queue's counts").values(
                    format!(
                        "{:.2} s (then {:.2} s per pass, every 5 s)",
                        d.first_pass.as_secs_f64(),
                        d.steady_pass_ms as f64 / 1000.0
                    ),
                    "—".into(),
                ),
            );
            rows.push(
                Row::new(scenario, "overview API, 50 rows with next-hour charts: median / max")
                    .values(
                        format!(
                            "{} / {} ({} KB)",
                            ms(d.overview_ms.0),
                            ms(d.overview_ms.1),
                            d.overview_bytes / 1024
                        ),
                        format!("{} sorted by pending", ms(d.overview_by_pending_ms)),
                    )
                    .target("< 1 s", d.overview_ms.1 < 1000.0),
            );
            for (offset, took) in d.queue_page_ms {
                rows.push(
                    Row::new(
                        scenario,
                        &format!("queue page of 1,000,000: 50 elements at {}", thousands(offset as u64)),
                    )
                    .values(ms(took), "—".into())
                    .note("median of 10; ZRANGE by index"),
                );
            }
            rows.push(
                Row::new(scenario, "/metrics (6 gauges per queue): median render / size").values(
                    format!("{} / {} KB", ms(d.metrics_ms), d.metrics_bytes / 1024),
                    "—".into(),
                ),
            );
            rows.push(
                Row::new(scenario, "benchmark process RSS after (client + dashboard + history)")
                    .values(format!("{:.0} MiB", d.rss_mb), "—".into()),
            );
            rows
        })
    }
}
