//! The dashboard in a real browser: Debian's headless Chromium driven
//! through chromedriver (WebDriver). Loads each page, reads the numbers
//! from the DOM, presses requeue and purge and checks Redis afterwards;
//! markup in queue data and a cookie planted by another port stay text.
//! A screenshot of each page goes to `target/dashboard/` (path printed).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use delayq_dashboard::Dashboard;
use delayq_test_support::vectors::codec_case;
use fantoccini::{Client as Browser, ClientBuilder, Locator};

use crate::redis_server::{free_port, RedisServer};
use crate::seed::{self, eventually};

/// Generous: a loaded 2-core machine starts Chromium slowly.
const WAIT: Duration = Duration::from_secs(60);

/// chromedriver on a free port. Dropped (also when an assertion fails), it
/// ends the browser session, so Chromium exits, then kills chromedriver.
struct Driver {
    child: Child,
    port: u16,
    session: Option<String>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(id) = self.session.take() {
            // Plain HTTP: Drop cannot await the WebDriver client.
            use std::io::Write;
            if let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(20)));
                let request = format!("DELETE /session/{id} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
                if stream.write_all(request.as_bytes()).is_ok() {
                    read_one_response(&mut stream);
                }
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one HTTP response (head and `Content-Length` body) and stops:
/// chromedriver keeps the connection open whatever `Connection: close`
/// says, so reading to the end waited out the read timeout (20 s per test).
fn read_one_response(stream: &mut std::net::TcpStream) {
    use std::io::Read;
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(head_end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..head_end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if got.len() >= head_end + 4 + length {
                return;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
        }
    }
}

fn command(var: &str, default: &str) -> String {
    let path = std::env::var(var).unwrap_or_else(|_| default.to_owned());
    assert!(
        std::path::Path::new(&path).exists(),
        "{path} not found: run ./scripts/test.sh, which installs Debian's chromium and chromium-driver, or set {var}"
    );
    path
}

async fn start_driver() -> Driver {
    start_driver_in(None).await
}

/// chromedriver whose Chromium runs in the time zone `zone` (`TZ`), if given.
async fn start_driver_in(zone: Option<&str>) -> Driver {
    let chromedriver = command("CHROMEDRIVER", "/usr/bin/chromedriver");
    let port = free_port();
    let mut command = Command::new(chromedriver);
    if let Some(zone) = zone {
        command.env("TZ", zone);
    }
    let child = command
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let driver = Driver {
        child,
        port,
        session: None,
    };
    eventually(WAIT, "chromedriver listening", || async move {
        tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok()
    })
    .await;
    driver
}

async fn browser(driver: &mut Driver) -> Browser {
    let chromium = command("CHROMIUM", "/usr/bin/chromium");
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1500", "--hide-scrollbars", "--lang=en-US"],
        }),
    );
    let browser = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a WebDriver session with headless Chromium");
    driver.session = browser.session_id().await.ok().flatten();
    browser
}

/// A served read-only dashboard on a free loopback port.
async fn serve_read_only(server: &RedisServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(
        Dashboard::new(seed::client(server).await)
            .read_only(true)
            .serve(listener),
    );
    url
}

/// A served dashboard on a free loopback port.
async fn serve(server: &RedisServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let client = seed::client(server).await;
    tokio::spawn(
        Dashboard::new(client)
            .sample_interval(Duration::from_millis(300))
            .serve(listener),
    );
    url
}

/// The text of the element `css`, once it is there ("" until then). An
/// element the page redrew between its find and its read (stale) is found
/// again: the pages redraw on every poll.
async fn text(browser: &Browser, css: &str) -> String {
    for _ in 0..3 {
        let Ok(element) = browser.find(Locator::Css(css)).await else {
            return String::new();
        };
        if let Ok(text) = element.text().await {
            return text;
        }
    }
    String::new()
}

/// Clicks `css`, finding it again if a redraw replaced it between the find
/// and the click (the pages redraw on every poll).
async fn click(browser: &Browser, css: &str) {
    let mut last = None;
    for _ in 0..50 {
        match browser.find(Locator::Css(css)).await {
            Ok(element) => match element.click().await {
                Ok(_) => return,
                Err(e) => last = Some(e),
            },
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot click {css}: {last:?}");
}

/// The attribute `name` of the element `css`, found again if a redraw
/// replaced it between the find and the read.
async fn attr(browser: &Browser, css: &str, name: &str) -> Option<String> {
    let mut last = None;
    for _ in 0..50 {
        match browser.find(Locator::Css(css)).await {
            Ok(element) => match element.attr(name).await {
                Ok(value) => return value,
                Err(e) => last = Some(e),
            },
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot read {name} of {css}: {last:?}");
}

/// The property `name` of the element `css`, as [`attr`] reads attributes.
async fn prop(browser: &Browser, css: &str, name: &str) -> Option<String> {
    let mut last = None;
    for _ in 0..50 {
        match browser.find(Locator::Css(css)).await {
            Ok(element) => match element.prop(name).await {
                Ok(value) => return value,
                Err(e) => last = Some(e),
            },
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot read {name} of {css}: {last:?}");
}

/// Waits until the element `css` reads `want`.
async fn wait_text(browser: &Browser, css: &str, want: &str) {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::time::Instant::now() < deadline {
        seen = text(browser, css).await;
        if seen == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{css} reads {seen:?}, not {want:?}");
}

async fn screenshot(browser: &Browser, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp is in target/")
        .join("dashboard");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, browser.screenshot().await.expect("screenshot")).unwrap();
    println!("screenshot: {}", path.display());
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_sees_every_queue_and_fixes_a_dead_letter_pile_up_in_the_browser() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 180, 4, 12).await;
    seed::undecodable(&server, "orders", 300).await;
    seed::queue(&server, "payments", 40, 0, 0).await;
    seed::queue(&server, "{tenant-7}emails", 9, 25, 0).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    // Overview: every queue, with the server's counts.
    browser.goto(&format!("{url}/")).await.unwrap();
    wait_text(&browser, r#"tr[data-queue="orders"] td.pending"#, "181").await;
    wait_text(&browser, "#total-queues", "3").await;
    wait_text(&browser, "#total-pending", "230").await;
    assert_eq!(text(&browser, "#total-dead-letters").await, "12");
    assert_eq!(
        text(&browser, r#"tr[data-queue="{tenant-7}emails"] td.ready"#).await,
        "25"
    );
    assert_eq!(text(&browser, r#"tr[data-queue="orders"] td.dead-letters"#).await, "12");
    let bars = browser
        .find_all(Locator::Css(r#"tr[data-queue="orders"] td.hour rect"#))
        .await
        .unwrap();
    assert_eq!(bars.len(), 13, "overdue + twelve 5-minute buckets");
    screenshot(&browser, "overview").await;

    // Live refresh: an offer elsewhere shows up without a reload.
    seed::offer(&server, "payments", "late-payment", 600).await;
    wait_text(&browser, r#"tr[data-queue="payments"] td.pending"#, "41").await;

    // Queue page, through the link.
    click(&browser, r#"tr[data-queue="orders"] td.name a"#).await;
    wait_text(&browser, "#pending", "181").await;
    wait_text(&browser, "#dead-letters", "12").await;
    let rows = browser.find_all(Locator::Css("#pending-table tbody tr")).await.unwrap();
    assert_eq!(rows.len(), 50, "one page");
    assert_eq!(
        text(&browser, "#pending-table tbody tr:first-child td.payload").await,
        "order-0"
    );
    assert!(text(&browser, "#pending-table tbody tr:nth-child(3) td.when")
        .await
        .starts_with("in "));
    assert_eq!(text(&browser, "#ready-list li:first-child").await, "ready-0");
    assert_eq!(
        browser
            .find_all(Locator::Css("#dead-table tbody tr"))
            .await
            .unwrap()
            .len(),
        12
    );
    // Wait for a few history samples so the charts have points.
    tokio::time::sleep(Duration::from_secs(2)).await;
    screenshot(&browser, "queue").await;

    // The last page holds the undecodable element (due in 5 hours), as hex.
    for _ in 0..3 {
        click(&browser, "#next").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    wait_text(
        &browser,
        "#pending-table tbody tr:last-child td.payload.hex",
        "fffe0001",
    )
    .await;

    // Requeue the dead letters: the button says how many, and takes a second press.
    wait_text(&browser, "#requeue-dead", "Requeue all 12").await;
    for _ in 0..2 {
        click(&browser, "#requeue-dead").await;
    }
    wait_text(&browser, "#dead-letters", "0").await;
    assert_eq!(seed::llen(&server, "delayq_dead_letter:{orders}").await, 0);
    assert_eq!(seed::llen(&server, "orders").await, 16, "4 ready + 12 requeued");
    assert!(text(&browser, "#flash").await.contains("requeued 12"));

    // Migrate: says how many pending it rewrites, and acts on the second press.
    let before = seed::lrange(&server, "redisson_delay_queue:{orders}").await;
    click(&browser, r#"#migrate-to option[value="legacy"]"#).await;
    wait_text(&browser, "#migrate", "Migrate 181 pending").await;
    let migrate = browser.find(Locator::Css("#migrate")).await.unwrap();
    migrate.click().await.unwrap();
    wait_text(
        &browser,
        "#migrate",
        "Really rewrite the 181 pending as legacy? Press again",
    )
    .await;
    screenshot(&browser, "queue-migrate-armed").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        seed::lrange(&server, "redisson_delay_queue:{orders}").await,
        before,
        "the first press rewrites nothing"
    );
    migrate.click().await.unwrap();
    eventually(WAIT, "the migration's answer", || {
        let browser = browser.clone();
        async move { text(&browser, "#flash").await.contains("rewritten as legacy") }
    })
    .await;
    assert_ne!(seed::lrange(&server, "redisson_delay_queue:{orders}").await, before);
    wait_text(&browser, "#migrate", "Migrate 181 pending").await;

    // Purge: the button says how many, and waits for the typed name.
    wait_text(&browser, "#purge", "Purge 181 pending").await;
    let purge = browser.find(Locator::Css("#purge")).await.unwrap();
    assert!(!purge.is_enabled().await.unwrap());
    let confirm = browser.find(Locator::Css("#purge-confirm")).await.unwrap();
    confirm.send_keys("order").await.unwrap();
    assert!(!purge.is_enabled().await.unwrap());
    confirm.send_keys("s").await.unwrap();
    eventually(WAIT, "the purge button enabled", || {
        let purge = purge.clone();
        async move { purge.is_enabled().await.unwrap_or(false) }
    })
    .await;
    purge.click().await.unwrap();
    wait_text(&browser, "#pending", "0").await;
    assert_eq!(seed::zcard(&server, "redisson_delay_queue_timeout:{orders}").await, 0);
    assert_eq!(seed::llen(&server, "redisson_delay_queue:{orders}").await, 0);
    assert_eq!(
        seed::zcard(&server, "redisson_delay_queue_timeout:{payments}").await,
        41,
        "other queues untouched"
    );
    screenshot(&browser, "queue-after-requeue-and-purge").await;

    browser.close().await.unwrap();
    driver.session = None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_pages_have_no_buttons() {
    let server = RedisServer::start().await;
    seed::queue(&server, "orders", 5, 0, 2).await;
    let url = serve_read_only(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_text(&browser, "#dead-letters", "2").await;
    let actions = browser.find(Locator::Css("#actions")).await.unwrap();
    assert!(!actions.is_displayed().await.unwrap(), "the actions panel is hidden");
    assert_eq!(text(&browser, "#read-only").await, "read-only");
    // No pause toggle either (the queue is not paused: the page would show Pause).
    for button in ["#pause", "#resume"] {
        assert!(
            !browser
                .find(Locator::Css(button))
                .await
                .unwrap()
                .is_displayed()
                .await
                .unwrap(),
            "{button}"
        );
    }
    screenshot(&browser, "queue-read-only").await;
    browser.close().await.unwrap();
    driver.session = None;
}

/// Another site on the same host (another port): it plants a `delayq_csrf`
/// cookie, which the browser then sends to the dashboard too.
async fn serve_planter(value: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(move || async move {
            (
                [(axum::http::header::SET_COOKIE, format!("delayq_csrf={value}; Path=/"))],
                "planted",
            )
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_in_queue_data_and_a_planted_cookie_stay_text() {
    const NAME: &str = r#"<img src=x id=pwn-name>"#;
    const PLANTED: &str = r#"x"><i/id=pwn-cookie>aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"#;
    let server = RedisServer::start().await;
    seed::offer(&server, NAME, r#"<img src=x id=pwn-payload>"#, -5).await;
    seed::offer(&server, NAME, "\u{1b}[31mred\u{202e}</td><b id=pwn-cell>", 600).await;
    let redis = seed::raw(&server).await;
    let _: () = delayq::fred::interfaces::ListInterface::rpush(
        &redis,
        format!("delayq_dead_letter:{{{NAME}}}"),
        r#"<script id=pwn-dead>document.title='pwned'</script>"#,
    )
    .await
    .unwrap();
    let url = serve(&server).await;
    let planter = serve_planter(PLANTED).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    browser.goto(&format!("{planter}/")).await.unwrap();
    let planted = browser.get_named_cookie("delayq_csrf").await.unwrap();
    assert_eq!(planted.value(), PLANTED, "the browser holds the planted cookie");

    browser.goto(&format!("{url}/")).await.unwrap();
    wait_text(&browser, "#queues td.name a", NAME).await;
    let injected =
        |browser: Browser| async move { browser.find_all(Locator::Css(r#"[id^="pwn-"]"#)).await.unwrap().len() };
    assert_eq!(injected(browser.clone()).await, 0, "no element made from data");
    assert_ne!(
        browser.get_named_cookie("delayq_csrf").await.unwrap().value(),
        PLANTED,
        "the dashboard replaced the planted cookie"
    );

    click(&browser, "#queues td.name a").await;
    wait_text(&browser, "#queue-name", NAME).await;
    wait_text(&browser, "#pending", "2").await;
    assert_eq!(
        text(&browser, "#pending-table tbody tr:first-child td.payload").await,
        "<img src=x id=pwn-payload>"
    );
    // Control characters and bidirectional overrides show as the CLI shows them.
    assert_eq!(
        text(&browser, "#pending-table tbody tr:nth-child(2) td.payload").await,
        r"\u{1b}[31mred\u{202e}</td><b id=pwn-cell>"
    );
    assert_eq!(
        text(&browser, "#dead-table tbody tr:first-child td.payload").await,
        "<script id=pwn-dead>document.title='pwned'</script>"
    );
    assert_eq!(injected(browser.clone()).await, 0, "no element made from data");
    assert_eq!(browser.title().await.unwrap(), format!("delayq · {NAME}"));

    // The page's token is one the dashboard minted: an action goes through.
    // Move due now says how many it takes and acts on the second press.
    wait_text(&browser, "#move-due", "Move due now (1)").await;
    let move_due = browser.find(Locator::Css("#move-due")).await.unwrap();
    move_due.click().await.unwrap();
    wait_text(&browser, "#move-due", "Really move the 1 due now? Press again").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        seed::lrange(&server, NAME).await.is_empty(),
        "the first press moves nothing"
    );
    move_due.click().await.unwrap();
    wait_text(&browser, "#pending", "1").await;
    assert!(
        text(&browser, "#flash").await.contains("moved 1"),
        "{}",
        text(&browser, "#flash").await
    );
    assert_eq!(seed::lrange(&server, NAME).await, ["<img src=x id=pwn-payload>"]);
    screenshot(&browser, "queue-markup-in-data").await;

    browser.close().await.unwrap();
    driver.session = None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_detection_names_each_payloads_codec_on_the_page() {
    let server = RedisServer::start().await;
    // A queue half way through codec migrations.
    seed::offer_bytes(&server, "mixed", &codec_case("marshalling", "pojo_order"), 600).await;
    seed::offer_bytes(&server, "mixed", &codec_case("lz4/json", "pojo_order"), 1200).await;
    seed::offer_bytes(&server, "mixed", &codec_case("serialization", "uuid"), 1800).await;
    seed::offer_bytes(&server, "mixed", &codec_case("zstd/string", "string_unicode"), 2400).await;
    seed::offer(&server, "mixed", "plain <b>text</b>", 3000).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(
        Dashboard::new(seed::client(&server).await)
            .codec(delayq::codec::detect::AutoCodec::new())
            .serve(listener),
    );
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=mixed")).await.unwrap();
    wait_text(&browser, "#pending", "5").await;
    let row = |n: usize, part: &str| format!("#pending-table tbody tr:nth-child({n}) td.payload{part}");
    wait_text(&browser, &row(1, " span.codec-tag"), "marshalling").await;
    let expected = [
        ("marshalling", r#"{"amount":1234,"id":"o-1","tags":["a","b"]}"#),
        ("lz4/jackson", r#"{"amount":1234,"id":"o-1","tags":["a","b"]}"#),
        ("serialization", r#""123e4567-e89b-12d3-a456-426614174000""#),
        ("zstd/string", "zażółć 🚀"),
        ("string", "plain <b>text</b>"),
    ];
    for (i, (codec, value)) in expected.iter().enumerate() {
        assert_eq!(
            text(&browser, &row(i + 1, " span.codec-tag")).await,
            *codec,
            "row {}",
            i + 1
        );
        let cell = text(&browser, &row(i + 1, "")).await;
        assert!(cell.ends_with(value), "row {}: {cell:?}", i + 1);
    }
    screenshot(&browser, "queue-auto-codecs").await;
    browser.close().await.unwrap();
    driver.session = None;
}

/// One HTTP/1.1 request to the served dashboard, by hand (Drop-free, no
/// client library): its status and body. A generous guard turns a hang
/// into a failure.
async fn http(url: &str, method: &str, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let host = url.trim_start_matches("http://").to_owned();
    let request = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(&host).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await.unwrap();
        String::from_utf8_lossy(&reply).into_owned()
    };
    let reply = tokio::time::timeout(Duration::from_secs(30), exchange)
        .await
        .unwrap_or_else(|_| panic!("{method} {path} hangs while Redis is down"));
    let status = reply[9..12].parse().unwrap();
    let body = reply
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The value of an unlabelled line of `/metrics`.
async fn gauge(url: &str, name: &str) -> Option<f64> {
    let (_, text) = http(url, "GET", "/metrics").await;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .and_then(|v| v.trim().parse().ok())
}

/// Waits until the element `css` is shown (or hidden).
async fn wait_shown(browser: &Browser, css: &str, shown: bool) {
    eventually(WAIT, &format!("{css} shown: {shown}"), || {
        let browser = browser.clone();
        async move {
            match browser.find(Locator::Css(css)).await {
                Ok(element) => element.is_displayed().await.unwrap_or(false) == shown,
                Err(_) => false,
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_going_down_under_a_running_dashboard_shows_everywhere_at_once() {
    let mut server = RedisServer::start().await;
    seed::queue(&server, "orders", 30, 2, 1).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/")).await.unwrap();
    wait_text(&browser, "#total-pending", "30").await;
    assert_eq!(gauge(&url, "delayq_dashboard_redis_up").await, Some(1.0));

    server.kill();
    let killed = tokio::time::Instant::now();
    // The open page: a banner, a red badge, and its last numbers, greyed, with their age.
    wait_shown(&browser, "#outage", true).await;
    wait_text(&browser, "#live", "Redis unreachable").await;
    assert_eq!(text(&browser, "#total-pending").await, "30", "the last numbers stay");
    let banner = text(&browser, "#outage").await;
    assert!(banner.starts_with("Redis is unreachable since "), "{banner}");
    assert!(banner.contains("The numbers below are from "), "{banner}");
    screenshot(&browser, "overview-redis-down").await;

    // Every API answers, 503 with a JSON error naming the outage.
    for path in ["/api/overview", "/api/queue?name=orders"] {
        let (status, body) = http(&url, "GET", path).await;
        assert_eq!(status, 503, "{path}: {body}");
        let body: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(
            body["error"].as_str().unwrap().starts_with("Redis is unreachable"),
            "{body}"
        );
        assert_eq!(body["redis"]["up"], false, "{body}");
    }
    assert_eq!(gauge(&url, "delayq_dashboard_redis_up").await, Some(0.0));
    let age = gauge(&url, "delayq_dashboard_sample_age_seconds").await.unwrap();
    assert!(
        age >= killed.elapsed().as_secs_f64() - 0.5,
        "the gauges are at least as old as the outage: {age}"
    );

    // A page opened during the outage says so instead of "connecting…",
    // and offers no action that could only fail (browser::review).
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_shown(&browser, "#outage", true).await;
    assert!(
        text(&browser, "#outage")
            .await
            .ends_with("No numbers yet: they appear once Redis answers."),
        "{}",
        text(&browser, "#outage").await
    );
    let move_due = browser.find(Locator::Css("#move-due")).await.unwrap();
    assert!(!move_due.is_enabled().await.unwrap(), "no action while Redis is down");
    screenshot(&browser, "queue-redis-down").await;

    // Redis is back on the same port: the page, the APIs and /metrics follow.
    server.restart().await;
    seed::queue(&server, "orders", 3, 0, 0).await;
    wait_shown(&browser, "#outage", false).await;
    wait_text(&browser, "#pending", "3").await;
    assert!(text(&browser, "#live").await.starts_with("live"));
    wait_shown(&browser, "#flash", false).await;
    let (status, _) = http(&url, "GET", "/api/overview").await;
    assert_eq!(status, 200);
    eventually(WAIT, "redis_up 1", || {
        let url = url.clone();
        async move { gauge(&url, "delayq_dashboard_redis_up").await == Some(1.0) }
    })
    .await;
    screenshot(&browser, "queue-redis-back").await;
    browser.close().await.unwrap();
    driver.session = None;
}

/// A poll whose answer is late turns "● live" into "checking…" at once,
/// not only once the server's 3 s PING calls Redis gone; the next answer
/// makes it live again; then Redis stopped brings the banner. (The page's
/// answers are held back in the page itself, so the poll is late for sure.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_answer_says_checking_and_a_stopped_redis_then_the_banner() {
    let mut server = RedisServer::start().await;
    seed::queue(&server, "orders", 30, 2, 1).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    wait_text(&browser, "#pending", "30").await;
    let live_now = || async { text(&browser, "#live").await };
    eventually(WAIT, "live", || async { live_now().await.starts_with("live · ") }).await;

    // Every answer of the API from now on is held 6 s in the page.
    browser
        .execute(
            "window.realFetch = window.fetch;\
             window.fetch = (...args) => window.realFetch(...args).then((r) => new Promise((done) => setTimeout(() => done(r), 6000)));",
            vec![],
        )
        .await
        .unwrap();
    eventually(WAIT, "checking…", || async {
        live_now().await.starts_with("checking… (last answer ")
    })
    .await;
    assert_eq!(attr(&browser, "#live", "class").await.as_deref(), Some("live late"));
    assert!(!browser
        .find(Locator::Css("#outage"))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap());
    screenshot(&browser, "queue-checking").await;

    // Answers come again: live.
    browser
        .execute("window.fetch = window.realFetch;", vec![])
        .await
        .unwrap();
    eventually(WAIT, "live again", || async {
        live_now().await.starts_with("live · ")
    })
    .await;

    // Redis stopped: the banner, whatever the page said meanwhile.
    server.kill();
    wait_shown(&browser, "#outage", true).await;
    wait_text(&browser, "#live", "Redis unreachable").await;
    browser.close().await.unwrap();
    driver.session = None;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_queue_shows_a_badge_no_red_lag_and_is_resumed_with_a_button() {
    let server = RedisServer::start().await;
    seed::queue(&server, "billing", 6, 0, 0).await;
    seed::queue(&server, "late", 3, 0, 0).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    // Paused with the page's button.
    browser.goto(&format!("{url}/queue?name=billing")).await.unwrap();
    wait_text(&browser, "#pending", "6").await;
    wait_shown(&browser, "#pause", true).await;
    click(&browser, "#pause").await;
    wait_shown(&browser, "#paused-badge", true).await;
    wait_shown(&browser, "#resume", true).await;
    assert!(!browser
        .find(Locator::Css("#pause"))
        .await
        .unwrap()
        .is_displayed()
        .await
        .unwrap());
    assert_eq!(seed::exists(&server, "delayq_paused:{billing}").await, 1);
    assert!(
        text(&browser, "#lag").await.starts_with("paused"),
        "{}",
        text(&browser, "#lag").await
    );
    assert!(
        browser
            .find_all(Locator::Css("#pending-table td.when.late"))
            .await
            .unwrap()
            .is_empty(),
        "no red for a deliberate pause"
    );
    // Move due now says the queue is paused, and moves nothing.
    let move_due = browser.find(Locator::Css("#move-due")).await.unwrap();
    move_due.click().await.unwrap();
    if text(&browser, "#move-due").await.starts_with("Really") {
        move_due.click().await.unwrap();
    }
    eventually(WAIT, "the paused answer", || {
        let browser = browser.clone();
        async move { text(&browser, "#flash").await.contains("billing is paused") }
    })
    .await;
    assert_eq!(seed::llen(&server, "billing").await, 0);
    screenshot(&browser, "queue-paused").await;

    // The overview: a badge, and the lag grey, while the other overdue queue's is red.
    browser.goto(&format!("{url}/")).await.unwrap();
    wait_text(&browser, r#"tr[data-queue="billing"] td.name .badge.paused"#, "paused").await;
    assert_eq!(
        attr(&browser, r#"tr[data-queue="billing"] td.lag"#, "class")
            .await
            .as_deref(),
        Some("lag paused")
    );
    wait_text(&browser, r#"tr[data-queue="late"] td.name"#, "late").await;
    assert_eq!(
        attr(&browser, r#"tr[data-queue="late"] td.lag"#, "class")
            .await
            .as_deref(),
        Some("lag late")
    );
    screenshot(&browser, "overview-paused").await;

    // Resumed with the button: the badge goes, the due elements move.
    browser.goto(&format!("{url}/queue?name=billing")).await.unwrap();
    wait_shown(&browser, "#resume", true).await;
    click(&browser, "#resume").await;
    wait_shown(&browser, "#paused-badge", false).await;
    wait_shown(&browser, "#pause", true).await;
    assert_eq!(seed::exists(&server, "delayq_paused:{billing}").await, 0);
    browser.close().await.unwrap();
    driver.session = None;
}

/// The queue page shows a queue's limits and sets them with its form; the
/// library then refuses offers as the operator set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_sets_a_queues_limits_on_its_page() {
    let server = RedisServer::start().await;
    seed::queue(&server, "mailer", 4, 0, 0).await;
    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;
    browser.goto(&format!("{url}/queue?name=mailer")).await.unwrap();
    wait_text(&browser, "#pending", "4").await;
    wait_text(&browser, "#limits", "none").await;
    let size = browser.find(Locator::Css("#limit-max-size")).await.unwrap();
    size.send_keys("5").await.unwrap();
    browser
        .find(Locator::Css("#limit-takes"))
        .await
        .unwrap()
        .select_by_value("off")
        .await
        .unwrap();
    browser
        .find(Locator::Css("#set-limits"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_text(&browser, "#limits", "max_size=5 takes=off").await;
    eventually(WAIT, "the answer", || {
        let browser = browser.clone();
        async move {
            text(&browser, "#flash")
                .await
                .contains("mailer limits: max_size=5 takes=off")
        }
    })
    .await;
    // The form keeps what was set after the page's next polls.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let shown = browser
        .find(Locator::Css("#limit-max-size"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap();
    assert_eq!(shown.as_deref(), Some("5"));
    screenshot(&browser, "queue-limits").await;
    let client = seed::client(&server).await;
    let queue = client.delayed_queue("mailer", delayq::StringCodec).unwrap();
    assert_eq!(
        queue.limits().await.unwrap(),
        delayq::limits::Limits::none().max_size(5).takes(false)
    );
    queue.offer(&"fifth".into(), Duration::from_secs(3600)).await.unwrap();
    assert!(matches!(
        queue.offer(&"sixth".into(), Duration::from_secs(3600)).await,
        Err(delayq::Error::OfferRefused { .. })
    ));
    browser.close().await.unwrap();
    driver.session = None;
}

/// The queue page's schedules: spec, next and last fire, counts and state,
/// and a badge that says whether any process runs them (their heartbeats).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_show_their_fires_and_whether_a_runner_is_alive() {
    let server = RedisServer::start().await;
    seed::queue(&server, "plain", 2, 0, 0).await;
    // A runner: this client runs the schedules of "reports".
    let runner = seed::client(&server).await;
    let reports = runner.delayed_queue("reports", delayq::StringCodec).unwrap();
    let tick = delayq::schedule::every(Duration::from_secs(2));
    runner
        .schedule("tick", tick, &reports, &"build".to_string())
        .await
        .unwrap();
    runner
        .schedule("weekly", "0 9 * * MON", &reports, &"summary".to_string())
        .await
        .unwrap();
    assert!(runner
        .schedules(&delayq::QueueKeys::new("reports").unwrap())
        .unwrap()
        .pause("weekly")
        .await
        .unwrap());
    // Saved by a process that then stopped: nothing runs the schedules of "archive".
    let saver = seed::client(&server).await;
    let archive = saver.delayed_queue("archive", delayq::StringCodec).unwrap();
    saver
        .schedule("<b>nightly</b>", "0 3 * * *", &archive, &"compact".to_string())
        .await
        .unwrap();
    drop(archive);
    saver.shutdown().await;

    let url = serve(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    browser.goto(&format!("{url}/queue?name=reports")).await.unwrap();
    wait_shown(&browser, "#schedules", true).await;
    eventually(WAIT, "a live runner and a fired tick", || {
        let browser = browser.clone();
        async move {
            text(&browser, "#schedule-runners").await.starts_with("1 runner alive")
                && text(&browser, r#"tr[data-schedule="tick"] td.last"#)
                    .await
                    .ends_with(" ago")
        }
    })
    .await;
    assert_eq!(text(&browser, r#"tr[data-schedule="tick"] td.spec"#).await, "every 2s");
    assert_eq!(text(&browser, r#"tr[data-schedule="tick"] td.state"#).await, "running");
    assert!(text(&browser, r#"tr[data-schedule="tick"] td.next"#)
        .await
        .starts_with("in "));
    assert_eq!(text(&browser, r#"tr[data-schedule="weekly"] td.state"#).await, "paused");
    assert_eq!(text(&browser, r#"tr[data-schedule="weekly"] td.last"#).await, "never");
    assert_eq!(
        text(&browser, r#"tr[data-schedule="weekly"] td.spec"#).await,
        "0 9 * * MON"
    );
    screenshot(&browser, "queue-schedules-running").await;

    browser.goto(&format!("{url}/queue?name=archive")).await.unwrap();
    wait_text(&browser, "#schedule-runners", "no runner alive").await;
    // The name is text, not markup.
    wait_text(&browser, "#schedules-table td.name", "<b>nightly</b>").await;
    assert_eq!(text(&browser, "#schedules-table td.state").await, "no runner");
    assert_eq!(text(&browser, "#schedules-table td.last").await, "never");
    assert!(browser
        .find_all(Locator::Css("#schedules-table b"))
        .await
        .unwrap()
        .is_empty());
    screenshot(&browser, "queue-schedules-no-runner").await;

    // A queue without schedules has no section.
    browser.goto(&format!("{url}/queue?name=plain")).await.unwrap();
    wait_text(&browser, "#pending", "2").await;
    wait_shown(&browser, "#schedules", false).await;

    // The runner stops: the page says nothing runs the schedules any more.
    drop(reports);
    runner.shutdown().await;
    browser.goto(&format!("{url}/queue?name=reports")).await.unwrap();
    wait_text(&browser, "#schedule-runners", "no runner alive").await;
    assert_eq!(
        text(&browser, r#"tr[data-schedule="tick"] td.state"#).await,
        "no runner"
    );
    browser.close().await.unwrap();
    driver.session = None;
}

// One file per part of the pages, each using the helpers above.
mod batch;
mod dead_letters;
mod elements;
mod events;
mod fit;
mod groups;
mod headers;
mod history;
mod java;
mod job;
mod limits;
mod overview;
mod partitioned;
mod priorities;
mod review;
mod schedules;
mod search;
mod workers;
