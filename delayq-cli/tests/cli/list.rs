//! `delayq list` ranks, filters and fits queues as the dashboard's overview
//! does: both sort by the library's one rule (`delayq::attention`).

use std::io::{Read, Write};
use std::process::{Child, Command, Output};
use std::time::{Duration, SystemTime};

use delayq::fred::interfaces::{KeysInterface, ListInterface};
use delayq_test_support::{redis_test, RedisServer};

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .expect("run delayq")
}

fn ok(output: Output) -> Output {
    assert!(output.status.success(), "{output:?}");
    output
}

fn names(doc: &serde_json::Value, field: &str, key: &str) -> Vec<String> {
    doc[field]
        .as_array()
        .unwrap_or_else(|| panic!("no {field} in {doc}"))
        .iter()
        .map(|q| q[key].as_str().unwrap().to_owned())
        .collect()
}

/// `delayq list --format json` with `args`, and the queues in its order.
fn listed(redis: &RedisServer, args: &[&str]) -> Vec<String> {
    let mut all = vec!["list", "--format", "json"];
    all.extend_from_slice(args);
    let doc: serde_json::Value = serde_json::from_slice(&ok(delayq(redis, &all)).stdout).unwrap();
    names(&doc, "queues", "queue")
}

/// A running `delayq dashboard`, killed when dropped.
struct Dashboard {
    child: Child,
    port: u16,
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Dashboard {
    fn start(redis: &RedisServer) -> Dashboard {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_delayq"))
            .args([
                "dashboard",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--url",
                &redis.url(),
                "--sample-interval",
                "200ms",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        Dashboard { child, port }
    }

    /// `GET path` as JSON, or `None` while the dashboard does not answer yet.
    fn get(&self, path: &str) -> Option<serde_json::Value> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        let (head, body) = response.split_once("\r\n\r\n")?;
        head.split(' ')
            .nth(1)
            .is_some_and(|code| code == "200")
            .then(|| serde_json::from_str(body).unwrap())
    }

    /// The overview once the sampler has read every queue twice (ready values
    /// nobody takes show from the second sample on).
    async fn overview(&self, sort: &str) -> serde_json::Value {
        loop {
            if let Some(doc) = self.get(&format!("/api/overview?limit=500&sort={sort}"))
                && doc["sampler"]["cycles"].as_u64().unwrap_or(0) >= 3
            {
                return doc;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Offers `values` to `queue`, then makes every pending element of it due
/// at `at` (the library refuses a due time in the past), with no transfer
/// running to move them.
async fn offer_at(redis: &RedisServer, queue: &str, at: SystemTime, values: &[&str]) {
    use delayq::fred::interfaces::SortedSetsInterface;
    let mut args = vec!["offer", queue, "--delay", "1h"];
    args.extend_from_slice(values);
    ok(delayq(redis, &args));
    let client = delayq::Client::connect(&redis.url()).await.unwrap();
    let key = delayq::QueueKeys::new(queue).unwrap().timeout().to_owned();
    let members: Vec<delayq::fred::types::Value> = client
        .redis()
        .next()
        .zrange(&key, 0, -1, None, false, None, false)
        .await
        .unwrap();
    for member in members {
        let _: () = client
            .redis()
            .next()
            .zadd(&key, None, None, false, false, (epoch_ms(at) as f64, member))
            .await
            .unwrap();
    }
    client.shutdown().await;
}

fn year(y: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs((y - 1970) * 365 * 86_400)
}

fn epoch_ms(at: SystemTime) -> u64 {
    at.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_millis() as u64
}

redis_test! {
    /// The same queues come out of `delayq list` and the overview in the same
    /// order, in every sort: dead letters first (most first), then transfer
    /// lag, ready values nobody takes, a pause over an hour, quarantined
    /// elements, schedules with no runner, and calm queues by name.
    async fn list_and_the_overview_rank_the_same_queues_the_same_way(redis, raw) {
        let hour_ago = epoch_ms(SystemTime::now() - Duration::from_secs(7200));
        ok(delayq(&redis, &["offer", "calm", "--delay", "1h", "a"]));
        ok(delayq(&redis, &["offer", "очередь-спокойная", "--delay", "2h", "a", "b", "c"]));
        offer_at(&redis, "late-2020", year(2020), &["x"]).await;
        offer_at(&redis, "late-2024", year(2024), &["x", "y"]).await;
        let _: () = raw.client.rpush("delayq_dead_letter:{t}mail", vec!["a", "b"]).await.unwrap();
        let _: () = raw.client.rpush("delayq_dead_letter:{t}заказы", "c").await.unwrap();
        ok(delayq(&redis, &["offer", "ready-only", "--delay", "0", "r"]));
        ok(delayq(&redis, &["move-due", "ready-only"]));
        ok(delayq(&redis, &["offer", "paused-long", "--delay", "1h", "p"]));
        let _: () = raw
            .client
            .set("delayq_paused:{paused-long}", hour_ago, None, None, false)
            .await
            .unwrap();
        ok(delayq(&redis, &["offer", "quarantined", "--delay", "1h", "q"]));
        let _: () = raw.client.rpush("delayq_quarantine:{quarantined}", "junk").await.unwrap();
        ok(delayq(&redis, &["schedule", "add", "unrun", "nightly", "--cron", "0 3 * * *", "x"]));

        let dashboard = Dashboard::start(&redis);
        let expected = [
            "{t}mail",
            "{t}заказы",
            "late-2020",
            "late-2024",
            "ready-only",
            "paused-long",
            "quarantined",
            "unrun",
            "calm",
            "очередь-спокойная",
        ];
        let overview = dashboard.overview("attention").await;
        assert_eq!(names(&overview, "queues", "name"), expected, "{overview}");
        assert_eq!(listed(&redis, &[]), expected);
        for sort in ["attention", "name", "pending", "ready", "dead", "lag"] {
            let overview = dashboard.overview(sort).await;
            assert_eq!(overview["sort"], sort);
            assert_eq!(
                listed(&redis, &["--sort", sort]),
                names(&overview, "queues", "name"),
                "--sort {sort}"
            );
        }
        // The filter is the overview's: any case, anywhere in the name.
        let overview = dashboard
            .get("/api/overview?limit=500&filter=%D0%9E%D0%A7%D0%95%D0%A0%D0%95%D0%94%D0%AC")
            .unwrap();
        assert_eq!(names(&overview, "queues", "name"), ["очередь-спокойная"]);
        assert_eq!(listed(&redis, &["--filter", "ОЧЕРЕДЬ"]), ["очередь-спокойная"]);
        assert_eq!(listed(&redis, &["--filter", "LATE", "--sort", "pending"]), ["late-2024", "late-2020"]);
        // Only what needs attention: the calm queues are left out.
        assert_eq!(listed(&redis, &["--attention-only"]), expected[..8]);
        let table = String::from_utf8(ok(delayq(&redis, &["list", "--attention-only"])).stdout).unwrap();
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("QUEUE") && lines[0].contains("ATTENTION"), "{table}");
        assert!(lines[1].starts_with("{t}mail") && lines[1].ends_with("2 dead"), "{table}");
        assert!(lines[5].contains("ready untaken"), "{table}");
        assert!(lines[6].ends_with("paused 2h"), "{table}");
        assert!(lines[8].ends_with("schedules unrun"), "{table}");
        // A filter that matches nothing says so.
        let out = ok(delayq(&redis, &["list", "--filter", "nothing-like-it"]));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "no queue matches (of 10)\n");
        drop(dashboard);
    }
}

redis_test! {
    /// Long names (Cyrillic, CJK, emoji, 100 characters) and control
    /// characters keep the table within 100 terminal cells: names are cut
    /// with an ellipsis by display width, escaped, and JSON keeps them whole.
    async fn the_list_fits_100_columns_with_long_unicode_names(redis) {
        let long = format!("очередь-订单队列-📦-{}", "x".repeat(90));
        let control = "bad\u{1b}[31mname";
        for name in [long.as_str(), control, "short"] {
            ok(delayq(&redis, &["offer", name, "--delay", "1h", "a"]));
            offer_at(&redis, name, year(2020), &["b"]).await;
        }
        let table = String::from_utf8(ok(delayq(&redis, &["list"])).stdout).unwrap();
        for line in table.lines() {
            let cells = unicode_width::UnicodeWidthStr::width(line);
            assert!(cells <= 100, "{cells} cells: {line}\n{table}");
        }
        assert!(!table.contains('\u{1b}'), "{table}");
        assert!(table.contains(r"bad\u{1b}[31mname"), "{table}");
        assert!(table.contains("очередь-订单队列-📦-xx"), "{table}");
        assert!(table.contains("x…"), "the long name is cut: {table}");
        assert!(listed(&redis, &["--sort", "name"]).contains(&long));
    }
}
