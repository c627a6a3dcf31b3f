//! Java objects on the queue page: Kryo POJOs (plain or in LZ4, LZ4 v2,
//! Snappy, Zstd), Java serialization and River, from the bytes Java wrote
//! (`compat/fixtures`): their fields with a schema, their class without
//! one, java.time in ISO-8601 and decimals exact.

use delayq::codec::detect::AutoCodec;
use serde_json::Value;

use super::{dashboard, get, send};
use crate::redis_server::RedisServer;
use crate::seed;

/// Each codec of `jdk-types.json`'s `pojo_order`, as `--codec auto` names it.
const ORDERS: [(&str, &str); 7] = [
    ("kryo", "kryo"),
    ("lz4", "lz4"),
    ("lz4v2", "lz4"),
    ("snappy", "snappy"),
    ("zstd", "zstd"),
    ("serialization", "serialization"),
    ("marshalling", "marshalling"),
];

/// `new Order("o-1", 1234, LocalDateTime.of(2026, 11, 23, 2, 13, 20, 123456789), new BigDecimal("12.50"), ["a", "b"])`.
const ORDER_JSON: &str =
    r#"{"amount":1234,"createdAt":"2026-11-23T02:13:20.123456789","id":"o-1","tags":["a","b"],"total":12.50}"#;

/// `orders`: `pojo_order` in every codec, due one a minute in that order,
/// and one dead letter (Kryo).
async fn seed_orders(server: &RedisServer) {
    for (i, (codec, _)) in ORDERS.iter().enumerate() {
        let raw = seed::java_bytes("jdk-types.json", codec, "pojo_order");
        seed::offer_bytes(server, "orders", &raw, 600 + 60 * i as i64).await;
    }
    seed::dead_letter(
        server,
        "orders",
        &seed::java_bytes("jdk-types.json", "kryo", "pojo_order"),
    )
    .await;
}

async fn elements(app: &axum::Router, queue: &str) -> (Vec<Value>, Vec<Value>) {
    let reply = send(app, get(&format!("/api/queue?name={queue}"))).await.json();
    let elements = reply["pending"]["elements"].as_array().unwrap().clone();
    let dead = reply["dead_letters"]["items"].as_array().unwrap().clone();
    (elements, dead)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_schema_java_objects_show_their_fields_dates_in_iso_8601_and_exact_decimals() {
    let server = RedisServer::start().await;
    seed_orders(&server).await;
    let app = dashboard(&server, |d| d.codec(AutoCodec::new().with_schema(seed::java_schema()))).await;

    let (elements, dead) = elements(&app, "orders").await;
    assert_eq!(elements.len(), ORDERS.len());
    for ((codec, detected), shown) in ORDERS.iter().zip(&elements) {
        assert_eq!(shown["codec"], *detected, "{codec}: {shown}");
        assert_eq!(shown["decoded"], true, "{codec}: {shown}");
        assert_eq!(shown["class"], "corpus.Order", "{codec}: {shown}");
        assert_eq!(shown["json"], true, "{codec}: {shown}");
        // Exactly the JSON Java's own reading gives: 12.50 keeps its scale,
        // the LocalDateTime its nanoseconds.
        assert_eq!(shown["text"], ORDER_JSON, "{codec}");
    }
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0]["class"], "corpus.Order", "{}", dead[0]);
    assert_eq!(dead[0]["codec"], "kryo");
    assert_eq!(dead[0]["text"], ORDER_JSON);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_schema_a_kryo_pojo_shows_its_class_and_that_its_fields_need_one() {
    let server = RedisServer::start().await;
    seed_orders(&server).await;
    let nulls = seed::java_bytes("natural-types-java.json", "kryo", "pojo_order_nulls");
    seed::offer_bytes(&server, "orders", &nulls, 3_600).await;
    let app = dashboard(&server, |d| d.codec(AutoCodec::new())).await;

    let (elements, dead) = elements(&app, "orders").await;
    assert_eq!(elements.len(), ORDERS.len() + 1);
    for (i, shown) in elements.iter().enumerate() {
        assert_eq!(shown["class"], "corpus.Order", "{shown}");
        let codec = shown["codec"].as_str().unwrap();
        if matches!(codec, "serialization" | "marshalling") {
            // Their streams carry the field names: read whole without a schema.
            assert_eq!(shown["decoded"], true, "{shown}");
            assert_eq!(shown["text"], ORDER_JSON, "{shown}");
            continue;
        }
        // Kryo writes field values only: no tree is guessed, the class is named.
        assert_eq!(shown["decoded"], false, "{i}: {shown}");
        let unread = shown["unread"].as_str().unwrap_or_else(|| panic!("{shown}"));
        assert!(unread.contains("corpus.Order") && unread.contains("schema"), "{unread}");
        assert_eq!(shown["error"], unread);
        assert!(shown.get("json").is_none_or(|j| j != true), "{shown}");
    }
    assert_eq!(dead[0]["class"], "corpus.Order");
    assert_eq!(dead[0]["decoded"], false);
    assert!(dead[0]["unread"].as_str().unwrap().contains("schema"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_codec_reads_that_queue_and_leaves_the_others_to_the_default() {
    let server = RedisServer::start().await;
    seed_orders(&server).await;
    seed::offer(&server, "notes", "\u{1}not kryo, just text", 600).await;
    let app = dashboard(&server, |d| {
        d.codec(delayq::StringCodec)
            .queue_codec("orders", AutoCodec::new().with_schema(seed::java_schema()))
    })
    .await;

    let (orders, _) = elements(&app, "orders").await;
    assert!(orders.iter().all(|e| e["text"] == ORDER_JSON), "{orders:?}");
    let (notes, _) = elements(&app, "notes").await;
    // The default codec: text as text, not guessed as Kryo.
    assert_eq!(notes[0]["text"], "\u{1}not kryo, just text");
    assert_eq!(notes[0]["class"], Value::Null);
    let queue = send(&app, get("/api/queue?name=orders")).await.json();
    assert_eq!(queue["codec"], "auto");
}
