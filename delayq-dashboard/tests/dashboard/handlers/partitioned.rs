//! Partitioned queues: one overview row whose counts are its partitions'
//! added up (the totals count each value once), a page whose numbers are
//! the library's `PartitionedStatus`, `/metrics` series labelled
//! `partition_of` (a Prometheus sum counts each value once), a hostile
//! name kept as data, and Redis going away said as such, never as zeros.

use std::time::Duration;

use axum::http::StatusCode;
use delayq::{PartitionedQueue, PartitionedStatus, StringCodec};
use serde_json::Value;

use super::{dashboard, get, send, until};
use crate::redis_server::RedisServer;
use crate::seed::{self, eventually};

/// A partitioned queue of 4 with `pending` values due in ten minutes and
/// `ready` values due now (moved to the ready lists by the handle's
/// transfer), each by its own partition key, and a dead letter in
/// partition 2; its status once every ready value is moved.
async fn partitioned(
    server: &RedisServer,
    name: &str,
    pending: usize,
    ready: usize,
) -> (PartitionedQueue<String>, PartitionedStatus) {
    let client = seed::client(server).await;
    let queue = client.create_partitioned_queue(name, 4, StringCodec).await.unwrap();
    for i in 0..pending {
        let key = format!("customer-{i}");
        let value = format!("later-{i}");
        queue.offer_keyed(&key, &value, Duration::from_secs(600)).await.unwrap();
    }
    for i in 0..ready {
        let key = format!("customer-{i}");
        let value = format!("now-{i}");
        queue.offer_keyed(&key, &value, Duration::ZERO).await.unwrap();
    }
    seed::dead_letter(server, &queue.names()[2], b"dead-0").await;
    eventually(
        Duration::from_secs(30),
        "the due values moved to the ready lists",
        || {
            let queue = queue.clone();
            async move { queue.status().await.unwrap().total.ready == ready as u64 }
        },
    )
    .await;
    let status = queue.status().await.unwrap();
    assert_eq!(status.total.pending, pending as u64);
    assert_eq!(status.total.dead_letters, 1);
    (queue, status)
}

fn counts(json: &Value) -> [u64; 4] {
    ["ready", "pending", "in_flight", "dead_letters"].map(|k| json[k].as_u64().unwrap_or_else(|| panic!("{k}: {json}")))
}

fn status_counts(status: &delayq::QueueStatus) -> [u64; 4] {
    [status.ready, status.pending, status.in_flight, status.dead_letters]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_queue_is_one_row_and_its_page_shows_the_librarys_status() {
    let server = RedisServer::start().await;
    let (queue, status) = partitioned(&server, "orders", 10, 6).await;
    seed::queue(&server, "plain", 3, 1, 1).await;
    let app = dashboard(&server, |d| d).await;

    // One row for the partitioned queue, none for its partitions.
    let overview = until(&app, "/api/overview", |r| {
        let json = r.json();
        json["queues"].as_array().is_some_and(|q| {
            q.len() == 2 && q.iter().all(|q| q["pending"].is_u64()) && json["sampler"]["partitions"] == 4
        })
    })
    .await
    .json();
    let rows = overview["queues"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|q| q["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"orders") && names.contains(&"plain"), "{names:?}");
    let orders = rows.iter().find(|q| q["name"] == "orders").unwrap();
    assert_eq!(orders["partitioned"]["count"], 4);
    assert_eq!(orders["partitioned"]["sampled"], 4);
    assert_eq!(counts(orders), status_counts(&status.total));
    let plain = rows.iter().find(|q| q["name"] == "plain").unwrap();
    assert!(plain["partitioned"].is_null());
    // The totals count each value once: the partitions' and the plain queue's.
    let plain_counts = counts(plain);
    let want: Vec<u64> = (status_counts(&status.total).iter().zip(plain_counts))
        .map(|(a, b)| a + b)
        .collect();
    assert_eq!(counts(&overview["totals"]).to_vec(), want, "{}", overview["totals"]);
    assert_eq!(overview["sampler"]["queues"], 2, "queues as a reader names them");
    assert_eq!(overview["sampler"]["partitioned"], 1);
    // The next hour is the partitions' added up: all 10 pending within it.
    let hour = &orders["due_next_hour"];
    let due: u64 = hour["overdue"].as_u64().unwrap()
        + (hour["buckets"].as_array().unwrap().iter())
            .map(|b| b.as_u64().unwrap())
            .sum::<u64>();
    assert_eq!(due, 10, "{hour}");

    // A partition's name finds its partitioned queue's row.
    let filter = format!("/api/overview?filter={}", encode(&queue.names()[3]));
    let found = send(&app, get(&filter)).await.json();
    assert_eq!(found["matching"], 1, "{found}");
    assert_eq!(found["queues"][0]["name"], "orders");

    // The page: the layout, each partition, the sums, as the library reads them.
    let page = send(&app, get("/api/partitioned?name=orders")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let page = page.json();
    let layout = queue.layout();
    assert_eq!(page["name"], "orders");
    assert_eq!(page["count"], 4);
    assert_eq!(page["hash"], "crc32");
    let created = layout.created().expect("a stored layout has its time");
    let created_ms = created.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    assert_eq!(page["created_ms"], created_ms);
    assert!(created_ms > 0);
    let now = queue.status().await.unwrap();
    assert_eq!(now, status, "nothing moved meanwhile");
    assert_eq!(counts(&page["total"]), status_counts(&status.total));
    let partitions = page["partitions"].as_array().unwrap();
    assert_eq!(partitions.len(), 4);
    for (i, p) in partitions.iter().enumerate() {
        assert_eq!(p["index"], i);
        assert_eq!(p["name"], layout.names()[i]);
        assert_eq!(p["slot"], layout.slot(i));
        assert!(p["node"].is_null(), "one server: no Cluster node");
        assert_eq!(counts(p), status_counts(&status.partitions[i]), "partition {i}");
    }
    assert_eq!(partitions[2]["dead_letters"], 1);
    // Each partition keeps its ordinary queue page.
    let one = send(&app, get(&format!("/api/queue?name={}", encode(&layout.names()[2])))).await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.body);
    assert_eq!(one.json()["dead_letters"]["total"], 1);
    // A queue that is not partitioned: 404, saying so.
    let plain = send(&app, get("/api/partitioned?name=plain")).await;
    assert_eq!(plain.status, StatusCode::NOT_FOUND, "{}", plain.body);
    assert!(plain.json()["error"]
        .as_str()
        .unwrap()
        .contains("not a partitioned queue"));
    assert_eq!(send(&app, get("/partitioned?name=orders")).await.status, StatusCode::OK);

    // /metrics: each partition's series labelled with its queue, no series
    // for the logical name, and a sum over every series counts each once.
    let metrics = until(&app, "/metrics", |r| r.body.contains("partition_of=\"orders\""))
        .await
        .body;
    for name in layout.names() {
        let line = format!("delayq_queue_pending{{queue=\"{name}\",partition_of=\"orders\"}} ");
        assert!(metrics.contains(&line), "{line} in {metrics}");
    }
    // (The library's process-wide series of other tests may name an
    // "orders": only the dashboard's own delayq_queue_* lines count here.)
    let logical = (metrics.lines()).find(|l| l.starts_with("delayq_queue_") && l.contains("{queue=\"orders\""));
    assert!(logical.is_none(), "{logical:?}");
    let summed = |family: &str, only: Option<&str>| -> f64 {
        (metrics.lines())
            .filter(|l| l.starts_with(&format!("{family}{{")))
            .filter(|l| only.is_none_or(|o| l.contains(o)))
            .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
            .sum()
    };
    assert_eq!(
        summed("delayq_queue_pending", None),
        (status.total.pending + plain_counts[1]) as f64
    );
    assert_eq!(
        summed("delayq_queue_ready", Some("partition_of=\"orders\"")),
        status.total.ready as f64
    );
}

/// Names as a browser's query string carries them.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_partitioned_name_stays_data() {
    const NAME: &str = "<script>alert(\"x\")</script> 'ü\"q";
    let server = RedisServer::start().await;
    let (queue, status) = partitioned(&server, NAME, 2, 0).await;
    let app = dashboard(&server, |d| d).await;

    // The page is the fixed template: the name never reaches the markup.
    let page = send(&app, get(&format!("/partitioned?name={}", encode(NAME)))).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(!page.body.contains("alert("), "{}", page.body);
    let script = send(&app, get("/assets/dashboard.js")).await.body;
    assert!(!script.contains("innerHTML"), "data is put into pages as text only");

    // The API carries it as JSON data, exactly.
    let api = send(&app, get(&format!("/api/partitioned?name={}", encode(NAME)))).await;
    assert_eq!(api.status, StatusCode::OK, "{}", api.body);
    let api = api.json();
    assert_eq!(api["name"], NAME);
    assert_eq!(api["partitions"][0]["name"], queue.names()[0]);
    assert!(queue.names()[0].starts_with(NAME));
    assert_eq!(counts(&api["total"]), status_counts(&status.total));
    let overview = until(&app, "/api/overview", |r| r.json()["queues"][0]["pending"].is_u64())
        .await
        .json();
    assert_eq!(overview["queues"][0]["name"], NAME);
    assert_eq!(overview["matching"], 1);

    // /metrics: label values escaped (quotes and backslashes).
    let metrics = until(&app, "/metrics", |r| r.body.contains("partition_of=")).await.body;
    let escaped = NAME.replace('\\', "\\\\").replace('"', "\\\"");
    assert!(metrics.contains(&format!("partition_of=\"{escaped}\"")), "{metrics}");
}

/// Redis stops under an open partitioned page: the API answers 503 naming
/// the outage (the page's banner), not a layout of zeros.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partitioned_page_says_redis_is_down_instead_of_zeros() {
    let mut server = RedisServer::start().await;
    let (_queue, status) = partitioned(&server, "orders", 3, 0).await;
    let app = dashboard(&server, |d| d).await;
    let before = send(&app, get("/api/partitioned?name=orders")).await.json();
    assert_eq!(counts(&before["total"]), status_counts(&status.total));
    server.kill();
    // Before the probe notices, a read gets no reply within 3 s: 503 too.
    let first = tokio::time::timeout(Duration::from_secs(30), send(&app, get("/api/partitioned?name=orders")))
        .await
        .expect("an answer while Redis is down, not a hang");
    assert_eq!(first.status, StatusCode::SERVICE_UNAVAILABLE, "{}", first.body);
    assert!(first.json().get("total").is_none(), "{}", first.body);
    // Once it has: the outage, and since when.
    until(&app, "/metrics", |r| r.body.contains("delayq_dashboard_redis_up 0")).await;
    let reply = tokio::time::timeout(Duration::from_secs(30), send(&app, get("/api/partitioned?name=orders")))
        .await
        .expect("an answer while Redis is down, not a hang");
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "{}", reply.body);
    let body = reply.json();
    assert!(
        body["error"].as_str().unwrap().starts_with("Redis is unreachable"),
        "{body}"
    );
    assert_eq!(body["redis"]["up"], false);
    assert!(body["redis"]["since_ms"].is_i64(), "{body}");
    assert!(
        body.get("total").is_none() && body.get("partitions").is_none(),
        "{body}"
    );
    // Back (an empty server: the layout is gone, and the page says that).
    server.restart().await;
    let back = until(&app, "/api/partitioned?name=orders", |r| {
        r.status != StatusCode::SERVICE_UNAVAILABLE
    })
    .await;
    assert_eq!(back.status, StatusCode::NOT_FOUND, "{}", back.body);
}
