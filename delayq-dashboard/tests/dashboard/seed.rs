//! Queues in known states, written as Java (or a delayq producer) leaves them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use delayq::format::Format;
use delayq::fred::prelude::*;
use delayq::Client;

pub use crate::redis_server::eventually;
use crate::redis_server::RedisServer;

pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// A plain fred client, to seed and check Redis directly.
pub async fn raw(server: &RedisServer) -> delayq::fred::clients::Client {
    let client = delayq::fred::clients::Client::new(Config::from_url(&server.url()).unwrap(), None, None, None);
    client.init().await.expect("raw client connects");
    client
}

pub async fn client(server: &RedisServer) -> Client {
    Client::builder()
        .url(server.url())
        .blocking_timeout(Duration::from_secs(1))
        .build()
        .await
        .expect("connect")
}

/// `pending` elements `order-0`.. (the first two overdue, the others due
/// one every 20 s from ten minutes from now), `ready` ready values, `dead` dead letters and one
/// element whose payload is not UTF-8 (shown as hex).
pub async fn queue(server: &RedisServer, name: &str, pending: usize, ready: usize, dead: usize) {
    let redis = raw(server).await;
    let keys = delayq::QueueKeys::new(name).unwrap();
    let now = now_ms();
    for i in 0..pending {
        let due = match i {
            0 => now - 30_000,
            1 => now - 10_000,
            _ => now + 600_000 + (i as i64 - 2) * 20_000,
        };
        let element = delayq::format::pack(Format::Modern, format!("order-{i}").as_bytes());
        let _: () = redis
            .zadd(keys.timeout(), None, None, false, false, (due as f64, element.clone()))
            .await
            .unwrap();
        let _: () = redis.rpush(keys.pending(), element).await.unwrap();
    }
    for i in 0..ready {
        let _: () = redis.rpush(keys.destination(), format!("ready-{i}")).await.unwrap();
    }
    for i in 0..dead {
        let _: () = redis.rpush(keys.dead_letter(), format!("dead-{i}")).await.unwrap();
    }
}

/// One pending element `text`, due in `seconds`, written as an offer
/// writes it. (Through a delayq handle the test's client would register the
/// queue, and a registration runs the transfer, even for a handle turned
/// `without_transfer()` at once: it moved due elements in 15 of 20 tries.)
pub async fn offer(server: &RedisServer, name: &str, text: &str, seconds: i64) {
    offer_bytes(server, name, text.as_bytes(), seconds).await
}

/// One pending element with this payload, due in `seconds` (as [`offer`]).
pub async fn offer_bytes(server: &RedisServer, name: &str, payload: &[u8], seconds: i64) {
    let redis = raw(server).await;
    let keys = delayq::QueueKeys::new(name).unwrap();
    let element = delayq::format::pack(Format::Modern, payload);
    let due = now_ms() + seconds * 1_000;
    let _: () = redis
        .zadd(keys.timeout(), None, None, false, false, (due as f64, element.clone()))
        .await
        .unwrap();
    let _: () = redis.rpush(keys.pending(), element).await.unwrap();
}

/// One element with bytes no text codec decodes, due in `minutes`.
pub async fn undecodable(server: &RedisServer, name: &str, minutes: i64) {
    let redis = raw(server).await;
    let keys = delayq::QueueKeys::new(name).unwrap();
    let element = delayq::format::pack(Format::Legacy, &[0xff, 0xfe, 0x00, 0x01]);
    let due = now_ms() + minutes * 60_000;
    let _: () = redis
        .zadd(keys.timeout(), None, None, false, false, (due as f64, element.clone()))
        .await
        .unwrap();
    let _: () = redis.rpush(keys.pending(), element).await.unwrap();
}

pub async fn zcard(server: &RedisServer, key: &str) -> i64 {
    raw(server).await.zcard(key).await.unwrap()
}

pub async fn llen(server: &RedisServer, key: &str) -> i64 {
    raw(server).await.llen(key).await.unwrap()
}

pub async fn lrange(server: &RedisServer, key: &str) -> Vec<Bytes> {
    raw(server).await.lrange(key, 0, -1).await.unwrap()
}

pub async fn exists(server: &RedisServer, key: &str) -> i64 {
    raw(server).await.exists(key).await.unwrap()
}

/// The bytes Java wrote for `case` with `codec`, from a fixture of
/// `compat/fixtures` (`jdk-types.json`, `natural-types-java.json`).
pub fn java_bytes(fixture: &str, codec: &str, case: &str) -> Vec<u8> {
    let path = format!("{}/../compat/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let hex = json["codecs"][codec][case]["hex"]
        .as_str()
        .unwrap_or_else(|| panic!("no {codec} bytes for {case} in {fixture}"));
    delayq_test_support::vectors::unhex(hex)
}

/// The schema of the Java classes of `jdk-types.json` (`corpus.Order`...).
pub fn java_schema() -> delayq::codec::kryo::KryoSchema {
    let path = format!(
        "{}/../compat/fixtures/jdk-types-schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    delayq::codec::kryo::KryoSchema::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// One dead letter with this payload, as a consumer leaves it.
pub async fn dead_letter(server: &RedisServer, name: &str, payload: &[u8]) {
    let keys = delayq::QueueKeys::new(name).unwrap();
    let _: () = raw(server)
        .await
        .rpush(keys.dead_letter(), Bytes::copy_from_slice(payload))
        .await
        .unwrap();
}

/// Values offered with a priority through delayq (levels 1-9 live in
/// delayq's own sets, which no raw write here imitates): each `(text,
/// level, seconds)` is due in `seconds` (0: ready at once). The handle's
/// registration runs the transfer once: plain elements already due move.
pub async fn priorities(server: &RedisServer, name: &str, values: &[(&str, u8, u64)]) {
    let client = client(server).await;
    let queue = client.delayed_queue(name, delayq::StringCodec).unwrap();
    for &(text, level, seconds) in values {
        queue
            .offer_with_priority(
                &text.to_owned(),
                Duration::from_secs(seconds),
                delayq::Priority::new(level).unwrap(),
            )
            .await
            .expect("a priority offer");
    }
}

/// A value for [`headered`]: `(text, level, headers, ttl_seconds)`.
pub type Headered<'a> = (&'a str, u8, &'a [(&'a str, &'a str)], u64);

/// Values offered through delayq with headers (`OfferOptions::header`),
/// ready at once: each `(text, level, headers, ttl_seconds)`, level 0 the
/// default, `ttl_seconds` 0 for no TTL. Such values live in delayq's ready
/// set at every level, as values with a priority do.
pub async fn headered(server: &RedisServer, name: &str, values: &[Headered<'_>]) {
    let client = client(server).await;
    let queue = client.delayed_queue(name, delayq::StringCodec).unwrap();
    for &(text, level, headers, ttl) in values {
        let mut options = delayq::OfferOptions::after(Duration::ZERO).priority(delayq::Priority::new(level).unwrap());
        for &(key, value) in headers {
            options = options.header(key, value);
        }
        if ttl > 0 {
            options = options.ttl(Duration::from_secs(ttl));
        }
        queue
            .offer_with(&text.to_owned(), &options)
            .await
            .expect("an offer with headers");
    }
}

/// A dead letter with headers, as a consumer leaves it: `text` offered with
/// `headers`, taken and rejected (reason `rejected: <why>`).
pub async fn rejected_with_headers(server: &RedisServer, name: &str, text: &str, headers: &[(&str, &str)], why: &str) {
    headered(server, name, &[(text, 0, headers, 0)]).await;
    let client = client(server).await;
    let queue = client.reliable_queue(name, delayq::StringCodec).unwrap();
    let delivery = queue
        .take_timeout(Duration::from_secs(10))
        .await
        .unwrap()
        .expect("the headered value is taken");
    assert_eq!(delivery.value(), text, "the value offered last is the only one ready");
    assert!(delivery.reject(why).await.unwrap(), "rejected while in flight");
}

/// Values offered through delayq with a group key (`OfferOptions::group`):
/// each `(text, key, seconds)` is due in `seconds` (0: ready at once, in
/// its key's line). They live in delayq's group keys, which no raw write
/// here imitates.
pub async fn grouped(server: &RedisServer, name: &str, values: &[(&str, &str, u64)]) {
    let client = client(server).await;
    let queue = client.delayed_queue(name, delayq::StringCodec).unwrap();
    for &(text, key, seconds) in values {
        queue
            .offer_with(
                &text.to_owned(),
                &delayq::OfferOptions::after(Duration::from_secs(seconds)).group(key),
            )
            .await
            .expect("a grouped offer");
    }
    client.shutdown().await;
}
