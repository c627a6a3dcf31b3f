//! `GET /api/events` (Server-Sent Events) through the router, with events
//! written by real library operations on a real redis-server.

use std::time::Duration;

use axum::body::{Body, BodyDataStream};
use axum::http::{header, HeaderMap, Request, StatusCode};
use axum::Router;
use delayq::{Client, StringCodec};
use futures_util::StreamExt;
use serde_json::Value;
use tower::ServiceExt;

use super::{dashboard, get, send, HOST};
use crate::redis_server::RedisServer;
use crate::seed;

/// Longest wait for one message (a hang guard, not a timing claim; the
/// switch is read again every 15 s).
const MESSAGE_WAIT: Duration = Duration::from_secs(40);

/// One message of the stream: its `event:`, `id:` and `data:` lines.
#[derive(Debug)]
struct Message {
    event: Option<String>,
    id: Option<String>,
    data: Vec<String>,
}

impl Message {
    /// The single `data:` line as JSON.
    fn json(&self) -> Value {
        assert_eq!(self.data.len(), 1, "one data line: {self:?}");
        serde_json::from_str(&self.data[0]).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    /// The event's kind, for a lifecycle event (no `event:` line).
    fn kind(&self) -> Option<String> {
        if self.event.is_some() {
            return None;
        }
        Some(self.json()["kind"].as_str().unwrap().to_owned())
    }
}

/// An open `text/event-stream` answer, read a message at a time.
struct Live {
    body: BodyDataStream,
    buffer: String,
}

impl Live {
    /// The next message with data (comments and the `retry:` hint skipped).
    async fn next(&mut self) -> Message {
        // One deadline for the message: keep-alive comments do not extend it.
        let deadline = tokio::time::Instant::now() + MESSAGE_WAIT;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut message = Message {
                    event: None,
                    id: None,
                    data: Vec::new(),
                };
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        message.event = Some(v.trim_start().to_owned());
                    } else if let Some(v) = line.strip_prefix("id:") {
                        message.id = Some(v.trim_start().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        message.data.push(v.trim_start().to_owned());
                    }
                }
                if !message.data.is_empty() {
                    return message;
                }
                continue;
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next())
                .await
                .unwrap_or_else(|_| panic!("no message within {MESSAGE_WAIT:?}; so far: {:?}", self.buffer))
                .expect("the stream goes on")
                .unwrap();
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// Messages up to the first lifecycle event of `kind` (inclusive).
    async fn until_kind(&mut self, kind: &str) -> Vec<Message> {
        let mut seen = Vec::new();
        loop {
            let message = self.next().await;
            let done = message.kind().as_deref() == Some(kind);
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    /// The next message named `event` (others skipped).
    async fn until_event(&mut self, event: &str) -> Message {
        loop {
            let message = self.next().await;
            if message.event.as_deref() == Some(event) {
                return message;
            }
        }
    }
}

/// Opens `/api/events?{query}` (with `Last-Event-ID` if given): the status,
/// headers, and the stream when it is one (the body otherwise).
async fn open(app: &Router, query: &str, last_id: Option<&str>) -> (StatusCode, HeaderMap, Result<Live, String>) {
    let mut request = Request::get(format!("/api/events?{query}")).header(header::HOST, HOST);
    if let Some(id) = last_id {
        request = request.header("last-event-id", id);
    }
    let response = app.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let streaming = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|t| t.to_str().unwrap().starts_with("text/event-stream"));
    let body = response.into_body();
    if streaming {
        let live = Live {
            body: body.into_data_stream(),
            buffer: String::new(),
        };
        (status, headers, Ok(live))
    } else {
        let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
        (status, headers, Err(String::from_utf8_lossy(&bytes).into_owned()))
    }
}

/// A client with `queue`'s events on, and one offer so the queue exists.
async fn with_events(server: &RedisServer, queue: &str) -> Client {
    let client = seed::client(server).await;
    client
        .enable_events(&delayq::QueueKeys::new(queue).unwrap(), 1000)
        .await
        .unwrap();
    let q = client.delayed_queue(queue, StringCodec).unwrap();
    q.offer_with_id("first", &"first".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    client
}

/// The error body of a refused request.
fn refused(answer: Result<Live, String>) -> String {
    match answer {
        Ok(_) => panic!("a stream, not a refusal"),
        Err(body) => body,
    }
}

fn ids(messages: &[Message]) -> Vec<String> {
    messages.iter().filter_map(|m| m.id.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_events_come_as_one_json_data_line_each_in_order() {
    let server = RedisServer::start().await;
    let client = with_events(&server, "orders").await;
    let app = dashboard(&server, |d| d).await;

    let (status, headers, live) = open(&app, "queue=orders", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    let mut live = live.unwrap();
    let state = live.next().await;
    assert_eq!(state.event.as_deref(), Some("enabled"), "{state:?}");
    assert_eq!(state.json()["max_len"], 1000);
    // It opens with what the stream keeps: the offer made before.
    let first = live.next().await;
    assert_eq!(first.kind().as_deref(), Some("offered"));
    assert_eq!(first.json()["id"], "first");

    let q = client.delayed_queue("orders", StringCodec).unwrap();
    q.offer_with_id("job-1", &"later".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    q.offer(&"now".into(), Duration::ZERO).await.unwrap();
    let reliable = client.reliable_queue("orders", StringCodec).unwrap();
    let delivery = reliable.take().await.unwrap();
    assert!(delivery.ack().await.unwrap());
    assert!(q.cancel("job-1").await.unwrap());

    let seen = live.until_kind("cancelled").await;
    // Transfers run on their own schedule: left out of the order.
    let kinds: Vec<String> = seen
        .iter()
        .filter_map(Message::kind)
        .filter(|k| k != "transferred")
        .collect();
    assert_eq!(
        kinds,
        ["offered", "offered", "claimed", "acked", "cancelled"],
        "{seen:?}"
    );
    for message in &seen {
        let json = message.json();
        assert_eq!(json["queue"], "orders");
        assert_eq!(
            message.id.as_deref(),
            json["stream_id"].as_str(),
            "the id line is the stream id"
        );
        assert!(json["time_ms"].as_u64().unwrap() > 0);
    }
    assert_eq!(seen[0].json()["id"], "job-1");
    assert_eq!(seen.last().unwrap().json()["id"], "job-1");
    let ids = ids(&seen);
    let ms_seq = |id: &str| -> (u64, u64) {
        let (ms, seq) = id.split_once('-').unwrap();
        (ms.parse().unwrap(), seq.parse().unwrap())
    };
    assert!(
        ids.windows(2).all(|w| ms_seq(&w[0]) < ms_seq(&w[1])),
        "in stream order: {ids:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_event_id_resumes_after_the_given_event() {
    let server = RedisServer::start().await;
    let client = with_events(&server, "orders").await;
    let q = client.delayed_queue("orders", StringCodec).unwrap();
    for id in ["a", "b", "c"] {
        q.offer_with_id(id, &id.into(), Duration::from_secs(3600))
            .await
            .unwrap();
    }
    let app = dashboard(&server, |d| d).await;
    // The opening history: the four offers, oldest first.
    let mut live = open(&app, "queue=orders", None).await.2.unwrap();
    let mut kept = Vec::new();
    while kept.len() < 4 {
        let message = live.next().await;
        if message.kind().is_some() {
            kept.push(message);
        }
    }
    let offers: Vec<Value> = kept.iter().map(|m| m.json()["id"].clone()).collect();
    assert_eq!(offers, ["first", "a", "b", "c"]);
    let id_of = |offer: &str| {
        kept.iter()
            .find(|m| m.json()["id"] == offer)
            .and_then(|m| m.id.clone())
            .unwrap()
    };

    // As a browser's EventSource reconnects: after `a`, so `b` then `c`.
    let (status, _, resumed) = open(&app, "queue=orders", Some(&id_of("a"))).await;
    assert_eq!(status, StatusCode::OK);
    let mut resumed = resumed.unwrap();
    assert_eq!(resumed.next().await.event.as_deref(), Some("enabled"));
    assert_eq!(resumed.next().await.json()["id"], "b");
    assert_eq!(resumed.next().await.json()["id"], "c");
    // What comes next is new, not the history again.
    q.offer_with_id("d", &"d".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    assert_eq!(resumed.until_kind("offered").await.last().unwrap().json()["id"], "d");

    // `?after=` for a client that opens a new connection itself; the header wins.
    let mut after = open(&app, &format!("queue=orders&after={}", id_of("b")), None)
        .await
        .2
        .unwrap();
    after.until_event("enabled").await;
    assert_eq!(after.next().await.json()["id"], "c");
    let mut both = open(&app, &format!("queue=orders&after={}", id_of("a")), Some(&id_of("b")))
        .await
        .2
        .unwrap();
    both.until_event("enabled").await;
    assert_eq!(both.next().await.json()["id"], "c");

    for bad in ["$", "1-2-3", "abc", "1-x"] {
        let (status, _, body) = open(&app, "queue=orders", Some(bad)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad:?}");
        assert!(refused(body).contains("not a stream id"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_off_are_said_and_turning_them_on_is_seen_unknown_queues_are_404() {
    let server = RedisServer::start().await;
    seed::offer(&server, "plain", "x", 3600).await;
    let app = dashboard(&server, |d| d).await;

    let mut live = open(&app, "queue=plain", None).await.2.unwrap();
    let off = live.next().await;
    assert_eq!(off.event.as_deref(), Some("disabled"), "{off:?}");
    assert_eq!(off.json()["enabled"], false);
    assert!(
        off.json()["message"]
            .as_str()
            .unwrap()
            .contains("delayq events enable plain"),
        "{off:?}"
    );

    // Turned on while the view is open: it says so (the switch is read
    // every 15 s) and the events follow.
    let client = seed::client(&server).await;
    client
        .enable_events(&delayq::QueueKeys::new("plain").unwrap(), 50)
        .await
        .unwrap();
    let on = live.until_event("enabled").await;
    assert_eq!(on.json()["max_len"], 50);
    let q = client.delayed_queue("plain", StringCodec).unwrap();
    q.offer_with_id("after-on", &"y".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    assert_eq!(
        live.until_kind("offered").await.last().unwrap().json()["id"],
        "after-on"
    );

    let (status, _, body) = open(&app, "queue=nope", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let body: Value = serde_json::from_str(&refused(body)).unwrap();
    assert_eq!(body["error"], "no queue nope");
    assert_eq!(
        seed::exists(&server, "delayq_events:{nope}").await
            + seed::exists(&server, "delayq_events_config:{nope}").await,
        0,
        "nothing created for it"
    );
    let (status, _, _) = open(&app, "queue=%7Bbroken", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_live_views_than_the_cap_answer_503_until_one_closes() {
    let server = RedisServer::start().await;
    let _client = with_events(&server, "orders").await;
    let app = dashboard(&server, |d| d).await;
    let mut open_views = Vec::new();
    for _ in 0..32 {
        let (status, _, live) = open(&app, "queue=orders", None).await;
        assert_eq!(status, StatusCode::OK);
        open_views.push(live.unwrap());
    }
    let (status, _, body) = open(&app, "queue=orders", None).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused(body).contains("32 live event views at once"));
    // The other APIs still answer.
    assert_eq!(send(&app, get("/api/queue?name=orders")).await.status, StatusCode::OK);

    drop(open_views.pop());
    let (status, _, live) = open(&app, "queue=orders", None).await;
    assert_eq!(status, StatusCode::OK, "a closed view gives its place back");
    assert_eq!(live.unwrap().next().await.event.as_deref(), Some("enabled"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_quotes_newlines_and_unicode_stay_inside_one_json_line() {
    let server = RedisServer::start().await;
    let name = "<script>alert(\"q\")</script>·ü";
    let client = with_events(&server, name).await;
    let q = client.delayed_queue(name, StringCodec).unwrap();
    let id = "</script>\n<img src=x onerror=alert(1)>\u{202e}\"é";
    q.offer_with_id(id, &"v".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    let app = dashboard(&server, |d| d).await;

    let query = format!("queue={}", url_encode(name));
    let mut live = open(&app, &query, None).await.2.unwrap();
    let state = live.next().await;
    assert_eq!(state.json()["queue"], name);
    live.until_kind("offered").await; // "first"
    let offers = live.until_kind("offered").await;
    let last = offers.last().unwrap();
    assert_eq!(last.data.len(), 1, "the newline stayed escaped inside the JSON");
    assert!(!last.data[0].contains('\n') && last.data[0].contains(r"\n"));
    assert_eq!(last.json()["id"], id);
    assert_eq!(last.json()["queue"], name);

    client
        .disable_events(&delayq::QueueKeys::new(name).unwrap())
        .await
        .unwrap();
    let mut off = open(&app, &query, None).await.2.unwrap();
    let off = off.next().await;
    assert_eq!(off.event.as_deref(), Some("disabled"));
    assert!(off.json()["message"].as_str().unwrap().ends_with(name));
}

/// `text` as a query value.
fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_going_away_is_an_error_message_and_the_view_reads_on_after() {
    let mut server = RedisServer::start().await;
    let _client = with_events(&server, "orders").await;
    let app = dashboard(&server, |d| d).await;
    let mut live = open(&app, "queue=orders", None).await.2.unwrap();
    live.until_kind("offered").await;

    server.kill();
    let error = live.until_event("error").await;
    assert!(
        error.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("Redis is unreachable"),
        "{error:?}"
    );
    server.restart().await;
    // Back: the switch is said again (the restarted server kept nothing:
    // events are off) and events written after are read.
    let state = loop {
        let message = live.next().await;
        if message.event.as_deref() != Some("error") {
            break message;
        }
    };
    assert_eq!(state.event.as_deref(), Some("disabled"), "{state:?}");
    let client = seed::client(&server).await;
    client
        .enable_events(&delayq::QueueKeys::new("orders").unwrap(), 1000)
        .await
        .unwrap();
    let q = client.delayed_queue("orders", StringCodec).unwrap();
    q.offer_with_id("after-restart", &"v".into(), Duration::from_secs(3600))
        .await
        .unwrap();
    assert_eq!(
        live.until_kind("offered").await.last().unwrap().json()["id"],
        "after-restart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_the_server_down_ends_open_live_views() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let server = RedisServer::start().await;
    let _client = with_events(&server, "orders").await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let dashboard = delayq_dashboard::Dashboard::new(seed::client(&server).await);
    let served = tokio::spawn(dashboard.serve_with_shutdown(listener, async {
        let _ = stopped.await;
    }));

    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET /api/events?queue=orders HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("event: enabled") {
        let n = tokio::time::timeout(MESSAGE_WAIT, socket.read(&mut chunk))
            .await
            .expect("the view opens")
            .unwrap();
        assert!(n > 0, "closed early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&chunk[..n]);
    }

    // Ctrl-C in `delayq dashboard`: the server stops though a page is open
    // (a graceful shutdown waits for every response to end).
    stop.send(()).unwrap();
    tokio::time::timeout(MESSAGE_WAIT, served)
        .await
        .expect("the server stopped, not waited for the live view forever")
        .unwrap()
        .unwrap();
    let mut rest = Vec::new();
    tokio::time::timeout(MESSAGE_WAIT, socket.read_to_end(&mut rest))
        .await
        .expect("the view's connection ends")
        .unwrap();
}
