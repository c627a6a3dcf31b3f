//! Work on single pending elements through the router, without a browser (issue 33 item 6).

use std::time::Duration;

use axum::http::{header, StatusCode};
use delayq::fred::prelude::*;
use delayq::StringCodec;
use serde_json::Value;

use super::{action, csrf, dashboard, get, send};
use crate::redis_server::RedisServer;
use crate::seed;

const TIMEOUT: &str = "redisson_delay_queue_timeout:{jobs}";
const PENDING: &str = "redisson_delay_queue:{jobs}";

/// `n` pending elements `item-1`.. (modern, as Redisson 3.21.1+ writes
/// them), element i due `base_ms + i` seconds, with `needles` (1-based
/// element, payload) in place of theirs: written by one script, as a big
/// queue takes too long to seed command by command.
pub(crate) async fn many(server: &RedisServer, name: &str, n: usize, base_ms: i64, needles: &[(usize, &str)]) {
    let keys = delayq::QueueKeys::new(name).unwrap();
    let mut args: Vec<String> = vec![base_ms.to_string(), n.to_string()];
    for (i, text) in needles {
        args.push(i.to_string());
        args.push((*text).to_owned());
    }
    let script = "local base, n = tonumber(ARGV[1]), tonumber(ARGV[2])
        local special = {}
        for k = 3, #ARGV, 2 do special[tonumber(ARGV[k])] = ARGV[k + 1] end
        for i = 1, n do
          local payload = special[i] or ('item-' .. i)
          local element = struct.pack('Bc0Lc0', 8, string.format('%08d', i), string.len(payload), payload)
          redis.call('zadd', KEYS[1], base + i * 1000, element)
          redis.call('rpush', KEYS[2], element)
        end
        return n";
    let _: i64 = seed::raw(server)
        .await
        .eval(script, vec![keys.timeout(), keys.pending()], args)
        .await
        .unwrap();
}

/// 12345 -> "12,345".
fn commas(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The page's element whose payload reads `text`.
fn find<'a>(queue: &'a Value, text: &str) -> &'a Value {
    queue["pending"]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"] == text)
        .unwrap_or_else(|| panic!("{text} not on the page: {queue}"))
}

fn raw_of(queue: &Value, text: &str) -> String {
    find(queue, text)["raw"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_search_looks_at_ten_thousand_elements_a_press_and_says_how_far_and_jumps_go_by_due_time() {
    let server = RedisServer::start().await;
    let base = seed::now_ms() + 3_600_000;
    many(
        &server,
        "big",
        12_000,
        base,
        &[(6, "the needle"), (10_500, "another NEEDLE")],
    )
    .await;
    let app = dashboard(&server, |d| d).await;

    // Pressed until it has looked at everything: no press looks at more
    // than 10,000, each says which elements it looked at, and together
    // they find both needles, each at its place in due order.
    let (mut from, mut found) = (0, Vec::new());
    loop {
        let reply = send(
            &app,
            get(&format!("/api/pending/search?name=big&text=needle&from={from}")),
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let json = reply.json();
        let to = json["to"].as_u64().unwrap() as usize;
        assert!(to > from && to - from <= 10_000, "{json}");
        assert_eq!(json["total"], 12_000);
        let message = json["message"].as_str().unwrap();
        let looked = format!("looked at elements {}–{} of 12,000", commas(from + 1), commas(to));
        assert!(message.contains(&looked), "{message} / {looked}");
        for m in json["matches"].as_array().unwrap() {
            found.push((m["rank"].as_u64().unwrap(), m["text"].as_str().unwrap().to_owned()));
        }
        if json["complete"] == true {
            assert!(!message.contains("continue"), "{message}");
            break;
        }
        assert!(message.ends_with("; continue from there"), "{message}");
        from = to;
    }
    assert_eq!(
        found,
        [(5, "the needle".to_owned()), (10_499, "another NEEDLE".to_owned())]
    );
    let first = send(&app, get("/api/pending/search?name=big&text=needle")).await.json();
    assert!(
        first["message"]
            .as_str()
            .unwrap()
            .starts_with("1 match; looked at elements 1–"),
        "{first}"
    );
    let none = send(&app, get("/api/pending/search?name=big&text=absent&from=11990"))
        .await
        .json();
    assert_eq!(none["message"], "no match; looked at elements 11,991–12,000 of 12,000");
    let empty = send(&app, get("/api/pending/search?name=big")).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST, "{}", empty.body);

    // Jump: the first element due at base + 500 s or later is element 500 (rank 499).
    let jump = send(
        &app,
        get(&format!("/api/pending/jump?name=big&at_ms={}", base + 500_000)),
    )
    .await;
    assert_eq!(jump.status, StatusCode::OK, "{}", jump.body);
    assert_eq!(jump.json()["offset"], 499);
    let page = send(&app, get("/api/queue?name=big&offset=499&limit=1")).await.json();
    assert_eq!(page["pending"]["elements"][0]["due_ms"], base + 500_000);
    assert_eq!(page["pending"]["elements"][0]["text"], "item-500");
    let before = send(
        &app,
        get(&format!("/api/pending/jump?name=big&at_ms={}", base + 500_001)),
    )
    .await;
    assert_eq!(before.json()["offset"], 500);
    let after_all = send(
        &app,
        get(&format!("/api/pending/jump?name=big&at_ms={}", base + 99_000_000)),
    )
    .await;
    assert_eq!(after_all.json()["offset"], 12_000);
    assert_eq!(
        send(&app, get("/api/pending/jump?name=big&at_ms=0")).await.json()["offset"],
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_element_is_found_by_its_id_and_cancelled_with_its_id_freed() {
    let server = RedisServer::start().await;
    let client = seed::client(&server).await;
    let q = client.delayed_queue("jobs", StringCodec).unwrap().without_transfer();
    q.offer(&"plain".to_owned(), Duration::from_secs(1800)).await.unwrap();
    assert!(q
        .offer_with_id("order-42", &"remind".to_owned(), Duration::from_secs(3600))
        .await
        .unwrap());
    assert!(q
        .offer_with_id("order-43", &"remind".to_owned(), Duration::from_secs(7200))
        .await
        .unwrap());
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;

    let page = send(&app, get("/api/queue?name=jobs")).await.json();
    assert_eq!(find(&page, "plain")["id"], Value::Null, "no id: the page shows none");
    let found = send(&app, get("/api/pending/search?name=jobs&id=order-42"))
        .await
        .json();
    let matches = found["matches"].as_array().unwrap();
    assert_eq!(matches.len(), 1, "{found}");
    assert_eq!(
        (matches[0]["id"].as_str(), matches[0]["text"].as_str()),
        (Some("order-42"), Some("remind"))
    );
    assert_eq!(matches[0]["rank"], 1, "due after the plain one");
    let none = send(&app, get("/api/pending/search?name=jobs&id=order-9")).await.json();
    assert_eq!(none["matches"].as_array().unwrap().len(), 0);
    assert_eq!(none["message"], "no pending element has the id \"order-9\"");

    // Cancelled through its row: gone, and the id index with it.
    let raw = matches[0]["raw"].as_str().unwrap();
    let cancelled = send(
        &app,
        action(
            "/api/actions/element-delete",
            &token,
            &format!("name=jobs&element={raw}"),
        ),
    )
    .await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.body);
    assert_eq!(q.get("order-42").await.unwrap(), None);
    assert!(
        q.get("order-43").await.unwrap().is_some(),
        "the equal payload under another id stays"
    );
    assert_eq!(q.status().await.unwrap().ids, 1);
    assert!(
        q.offer_with_id("order-42", &"again".to_owned(), Duration::from_secs(60))
            .await
            .unwrap(),
        "the id is free"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_element_action_does_what_it_says_and_an_element_gone_meanwhile_is_a_conflict() {
    let server = RedisServer::start().await;
    for (text, seconds) in [("a", 600), ("b", 700), ("c", 800), ("d", 900)] {
        seed::offer(&server, "jobs", text, seconds).await;
    }
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let page = send(&app, get("/api/queue?name=jobs")).await.json();
    let post = |path: &'static str, form: String| {
        let (app, token) = (app.clone(), token.clone());
        async move { send(&app, action(path, &token, &form)).await }
    };

    // Delete.
    let a = raw_of(&page, "a");
    let deleted = post("/api/actions/element-delete", format!("name=jobs&element={a}")).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    assert!(deleted.json()["message"]
        .as_str()
        .unwrap()
        .starts_with("deleted the element"));
    assert_eq!(seed::zcard(&server, TIMEOUT).await, 3);
    assert_eq!(seed::llen(&server, PENDING).await, 3);
    // Again: it is gone, nothing else is touched.
    for path in ["/api/actions/element-delete", "/api/actions/element-run"] {
        let gone = post(path, format!("name=jobs&element={a}")).await;
        assert_eq!(gone.status, StatusCode::CONFLICT, "{path}: {}", gone.body);
        assert!(
            gone.json()["error"].as_str().unwrap().contains("no longer pending"),
            "{}",
            gone.body
        );
    }
    let gone = post(
        "/api/actions/element-reschedule",
        format!("name=jobs&element={a}&delay=1m"),
    )
    .await;
    assert_eq!(gone.status, StatusCode::CONFLICT);
    assert_eq!(seed::zcard(&server, TIMEOUT).await, 3);

    // Run now: b is in the queue's list.
    let b = raw_of(&page, "b");
    let ran = post("/api/actions/element-run", format!("name=jobs&element={b}")).await;
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    assert_eq!(seed::lrange(&server, "jobs").await, ["b"]);
    assert_eq!(seed::zcard(&server, TIMEOUT).await, 2);

    // Reschedule by a delay, then to a time: c goes last, then first.
    let c = raw_of(&page, "c");
    let later = post(
        "/api/actions/element-reschedule",
        format!("name=jobs&element={c}&delay=2h"),
    )
    .await;
    assert_eq!(later.status, StatusCode::OK, "{}", later.body);
    assert!(
        later.json()["due_ms"].as_i64().unwrap() > seed::now_ms() + 7_000_000,
        "{}",
        later.body
    );
    assert!(
        later.json()["message"]
            .as_str()
            .unwrap()
            .starts_with("rescheduled the element: due in 1h59m")
            || later.json()["message"]
                .as_str()
                .unwrap()
                .starts_with("rescheduled the element: due in 2h0m"),
        "{}",
        later.body
    );
    let order = send(&app, get("/api/queue?name=jobs")).await.json();
    let texts: Vec<_> = order["pending"]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].clone())
        .collect();
    assert_eq!(texts, ["d", "c"]);
    let at = seed::now_ms() + 60_000;
    let first = post(
        "/api/actions/element-reschedule",
        format!("name=jobs&element={c}&at_ms={at}"),
    )
    .await;
    assert_eq!(first.json()["due_ms"], at, "{}", first.body);
    let order = send(&app, get("/api/queue?name=jobs")).await.json();
    assert_eq!(order["pending"]["elements"][0]["text"], "c");
    assert_eq!(
        order["pending"]["elements"][0]["raw"].as_str(),
        Some(c.as_str()),
        "same bytes"
    );
    assert_eq!(order["pending"]["elements"][0]["due_ms"], at);

    // Bad input: refused, nothing changes.
    for form in [
        format!("name=jobs&element={c}&delay=soon"),
        format!("name=jobs&element={c}"),
        "name=jobs&element=zz&delay=1m".to_owned(),
        "name=jobs&element=&delay=1m".to_owned(),
    ] {
        let refused = post("/api/actions/element-reschedule", form.clone()).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{form}: {}", refused.body);
    }
    assert_eq!(
        send(&app, get("/api/queue?name=jobs")).await.json()["pending"]["elements"][0]["due_ms"],
        at
    );

    // Paused: run now waits, as the transfer does.
    let d = raw_of(&page, "d");
    assert_eq!(
        post("/api/actions/pause", "name=jobs".into()).await.status,
        StatusCode::OK
    );
    let held = post("/api/actions/element-run", format!("name=jobs&element={d}")).await;
    assert_eq!(held.status, StatusCode::CONFLICT);
    assert!(
        held.json()["error"].as_str().unwrap().contains("paused"),
        "{}",
        held.body
    );
    assert_eq!(seed::lrange(&server, "jobs").await, ["b"]);

    // Byte-identical legacy copies: not rescheduled together.
    let due = seed::now_ms() + 600_000;
    let mut twin = (due as f64).to_le_bytes().to_vec();
    twin.extend(4u64.to_le_bytes());
    twin.extend(b"twin");
    let redis = seed::raw(&server).await;
    let _: () = redis
        .zadd(TIMEOUT, None, None, false, false, (due as f64, twin.clone()))
        .await
        .unwrap();
    let _: () = redis.rpush(PENDING, vec![twin.clone(), twin.clone()]).await.unwrap();
    let hex: String = twin.iter().map(|b| format!("{b:02x}")).collect();
    let refused = post(
        "/api/actions/element-reschedule",
        format!("name=jobs&element={hex}&delay=1h"),
    )
    .await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert!(
        refused.json()["error"]
            .as_str()
            .unwrap()
            .contains("byte-identical copies"),
        "{}",
        refused.body
    );
    let one = post("/api/actions/element-delete", format!("name=jobs&element={hex}")).await;
    assert_eq!(one.status, StatusCode::OK);
    assert_eq!(seed::llen(&server, PENDING).await, 3, "c, d and one copy");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn element_actions_need_the_csrf_token_and_read_only_has_none_but_searches() {
    let server = RedisServer::start().await;
    seed::offer(&server, "jobs", "x", 600).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;
    let page = send(&app, get("/api/queue?name=jobs")).await.json();
    let x = raw_of(&page, "x");
    let form = format!("name=jobs&element={x}&delay=1m");
    for path in [
        "/api/actions/element-delete",
        "/api/actions/element-run",
        "/api/actions/element-reschedule",
    ] {
        let mut no_token = action(path, &token, &form);
        no_token.headers_mut().remove("x-csrf-token");
        assert_eq!(send(&app, no_token).await.status, StatusCode::FORBIDDEN, "{path}");
        let mut no_cookie = action(path, &token, &form);
        no_cookie.headers_mut().remove(header::COOKIE);
        assert_eq!(send(&app, no_cookie).await.status, StatusCode::FORBIDDEN, "{path}");
        let read = send(&app, get(&format!("{path}?{form}"))).await;
        assert_ne!(read.status, StatusCode::OK, "{path}: a GET changes nothing");
    }
    let unchanged = send(&app, get("/api/queue?name=jobs")).await.json();
    assert_eq!(find(&unchanged, "x")["due_ms"], find(&page, "x")["due_ms"]);
    assert_eq!(seed::zcard(&server, TIMEOUT).await, 1);

    let read_only = dashboard(&server, |d| d.read_only(true)).await;
    let token = csrf(&read_only).await;
    for path in [
        "/api/actions/element-delete",
        "/api/actions/element-run",
        "/api/actions/element-reschedule",
    ] {
        let refused = send(&read_only, action(path, &token, &form)).await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND, "{path}");
    }
    let search = send(&read_only, get("/api/pending/search?name=jobs&text=x")).await;
    assert_eq!(search.status, StatusCode::OK, "{}", search.body);
    assert_eq!(search.json()["matches"][0]["text"], "x");
    assert_eq!(seed::zcard(&server, TIMEOUT).await, 1);
    assert_eq!(seed::lrange(&server, "jobs").await, Vec::<bytes::Bytes>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_element_is_named_by_a_digest_and_found_among_elements_due_at_the_same_ms() {
    let server = RedisServer::start().await;
    let redis = seed::raw(&server).await;
    let due = seed::now_ms() + 600_000;
    // Two large elements with equal payloads due at the same ms, and a small one.
    let payload = "x".repeat(20_000);
    let big: Vec<_> = (0..2)
        .map(|_| delayq::format::pack(delayq::format::Format::Modern, payload.as_bytes()))
        .collect();
    for element in &big {
        let _: () = redis
            .zadd(TIMEOUT, None, None, false, false, (due as f64, element.clone()))
            .await
            .unwrap();
        let _: () = redis.rpush(PENDING, element.clone()).await.unwrap();
    }
    seed::offer(&server, "jobs", "small", 60).await;
    let app = dashboard(&server, |d| d).await;
    let token = csrf(&app).await;

    let page = send(&app, get("/api/queue?name=jobs")).await;
    assert!(
        page.body.len() < 30_000,
        "the large values travel once: {} bytes",
        page.body.len()
    );
    let page = page.json();
    let elements = page["pending"]["elements"].as_array().unwrap();
    assert!(
        elements[0]["raw"].as_str().unwrap().len() > 30,
        "the small one goes whole, as hex"
    );
    let names: Vec<String> = elements[1..]
        .iter()
        .map(|e| e["raw"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| n.starts_with('~') && n.ends_with(&format!("@{due}"))),
        "{names:?}"
    );
    assert_ne!(names[0], names[1]);

    // Run the second now: exactly it, found among those due at that ms.
    let second = elements[2]["raw"].as_str().unwrap();
    let ran = send(
        &app,
        action(
            "/api/actions/element-run",
            &token,
            &format!("name=jobs&element={second}"),
        ),
    )
    .await;
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    assert_eq!(seed::lrange(&server, "jobs").await, [payload]);
    let left = send(&app, get("/api/queue?name=jobs")).await.json();
    assert_eq!(
        left["pending"]["elements"][1]["raw"].as_str(),
        Some(names[0].as_str()),
        "the other one stays"
    );
    let again = send(
        &app,
        action(
            "/api/actions/element-run",
            &token,
            &format!("name=jobs&element={second}"),
        ),
    )
    .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    // A digest at another due time names nothing.
    let (digest, _) = names[0].split_once('@').unwrap();
    let moved = format!("{digest}@{}", due + 1);
    let none = send(
        &app,
        action(
            "/api/actions/element-delete",
            &token,
            &format!("name=jobs&element={moved}"),
        ),
    )
    .await;
    assert_eq!(none.status, StatusCode::CONFLICT, "{}", none.body);
    assert_eq!(seed::zcard(&server, TIMEOUT).await, 2);
}
