//! Java objects in headless Chromium: a Kryo POJO (and the same in LZ4,
//! Java serialization and a Zstd dead letter) drawn as a tree of its fields
//! with a schema, dates in ISO-8601 and decimals exact; the class and a
//! note without one; markup in a field stays text.

use std::time::Duration;

use delayq::codec::detect::AutoCodec;
use delayq::codec::kryo::KryoValue;
use delayq_dashboard::Dashboard;
use fantoccini::{Client as Browser, Locator};

use super::click;
use super::elements::wait_contains;
use super::{browser, screenshot, start_driver, text, wait_text};
use crate::redis_server::RedisServer;
use crate::seed;

const MARKUP: &str = "<script id=pwn-field>document.title='pwned'</script>";

/// A served dashboard: every queue detected with the fixtures' schema, and
/// `legacy` detected without it.
async fn serve_java(server: &RedisServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let client = seed::client(server).await;
    tokio::spawn(
        Dashboard::new(client)
            .codec(AutoCodec::new().with_schema(seed::java_schema()))
            .queue_codec("legacy", AutoCodec::new())
            .serve(listener),
    );
    url
}

/// The member names and values of the tree in the payload of `css`.
async fn members(browser: &Browser, css: &str) -> Vec<(String, String)> {
    let script = "return [...document.querySelectorAll(arguments[0] + ' details.tree > ul > li')]
        .map((li) => [li.children[0].textContent, li.children[1].textContent]);";
    let found = browser.execute(script, vec![serde_json::json!(css)]).await.unwrap();
    serde_json::from_value(found).unwrap()
}

async fn tree_open(browser: &Browser, css: &str) -> bool {
    let script = "const d = document.querySelector(arguments[0] + ' details.tree'); return d !== null && d.open;";
    browser.execute(script, vec![serde_json::json!(css)]).await.unwrap() == serde_json::json!(true)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_objects_are_trees_of_their_fields_and_without_a_schema_name_their_class() {
    let server = RedisServer::start().await;
    for (i, codec) in ["kryo", "lz4", "serialization"].iter().enumerate() {
        let raw = seed::java_bytes("jdk-types.json", codec, "pojo_order");
        seed::offer_bytes(&server, "orders", &raw, 600 + 60 * i as i64).await;
    }
    let schema = seed::java_schema();
    let hostile = KryoValue::from_json(
        &serde_json::json!({"id": MARKUP, "amount": 1, "createdAt": null, "total": null, "tags": [MARKUP]}),
        &schema.parse_type("corpus.Order").unwrap(),
        Some(&schema),
    )
    .unwrap()
    .encode()
    .unwrap();
    seed::offer_bytes(&server, "orders", &hostile, 3_600).await;
    let everything = seed::java_bytes("jdk-types.json", "zstd", "pojo_everything");
    seed::offer_bytes(&server, "orders", &everything, 7_200).await;
    seed::dead_letter(
        &server,
        "orders",
        &seed::java_bytes("jdk-types.json", "zstd", "pojo_order"),
    )
    .await;
    seed::offer_bytes(
        &server,
        "legacy",
        &seed::java_bytes("jdk-types.json", "snappy", "pojo_order"),
        600,
    )
    .await;
    let url = serve_java(&server).await;
    let mut driver = start_driver().await;
    let browser = browser(&mut driver).await;

    browser.goto(&format!("{url}/queue?name=orders")).await.unwrap();
    let first = "#pending-table tbody tr:first-child td.payload";
    wait_text(&browser, &format!("{first} .class-tag"), "corpus.Order").await;
    assert_eq!(text(&browser, &format!("{first} .codec-tag")).await, "kryo");
    // Folded: one line of JSON; opened: each field on its own line.
    assert!(!tree_open(&browser, first).await);
    click(&browser, &format!("{first} details.tree > summary")).await;
    let fields = members(&browser, first).await;
    let want = [
        ("amount", "1234"),
        ("createdAt", "\"2026-11-23T02:13:20.123456789\""),
        ("id", "\"o-1\""),
        ("tags", "0\"a\"1\"b\""),
        ("total", "12.50"),
    ];
    let want: Vec<(String, String)> = want.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    assert_eq!(fields, want);
    // LZ4 and Java serialization read to the same fields.
    for row in [2, 3] {
        let css = format!("#pending-table tbody tr:nth-child({row}) td.payload");
        assert_eq!(members(&browser, &css).await, want, "row {row}");
        assert_eq!(text(&browser, &format!("{css} .class-tag")).await, "corpus.Order");
    }
    assert_eq!(
        text(&browser, "#pending-table tbody tr:nth-child(2) td.payload .codec-tag").await,
        "lz4"
    );
    // The dead letter (Zstd) too.
    wait_text(&browser, "#dead-table tbody td.payload .class-tag", "corpus.Order").await;
    assert_eq!(members(&browser, "#dead-table tbody td.payload").await, want);
    // The page refreshes its rows every few seconds: the opened tree stays open.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        tree_open(&browser, first).await,
        "the opened tree stays open across refreshes"
    );
    // Markup in a field is a value, not markup.
    let hostile = "#pending-table tbody tr:nth-child(4) td.payload";
    click(&browser, &format!("{hostile} details.tree > summary")).await;
    let fields = members(&browser, hostile).await;
    assert!(fields.contains(&("id".into(), format!("{:?}", MARKUP))), "{fields:?}");
    assert!(browser.find_all(Locator::Css("[id^=pwn-]")).await.unwrap().is_empty());
    assert_ne!(browser.title().await.unwrap(), "pwned");
    // Numbers a float would round keep every digit; java.time reads as Java prints it.
    let everything = members(&browser, "#pending-table tbody tr:nth-child(5) td.payload").await;
    for (name, value) in [
        ("big", "-18446744073709551617"),
        ("price", "19.990"),
        ("offsetDateTime", "\"2026-11-23T02:13:20.123456789-03:00\""),
        ("duration", "\"PT36H\""),
        ("localDate", "\"2026-11-23\""),
    ] {
        assert!(
            everything.contains(&(name.into(), value.into())),
            "{name} = {value} not in {everything:?}"
        );
    }
    browser
        .execute(
            "document.querySelector(arguments[0]).scrollIntoView()",
            vec![serde_json::json!(hostile)],
        )
        .await
        .unwrap();
    screenshot(&browser, "queue-java-objects").await;

    // Without the schema: the class, a note, the bytes; no guessed fields.
    browser.goto(&format!("{url}/queue?name=legacy")).await.unwrap();
    let cell = "#pending-table tbody tr:first-child td.payload";
    wait_text(&browser, &format!("{cell} .class-tag"), "corpus.Order").await;
    assert_eq!(text(&browser, &format!("{cell} .codec-tag")).await, "snappy");
    wait_contains(&browser, &format!("{cell} .unread"), "schema").await;
    assert!(browser
        .find_all(Locator::Css(&format!("{cell} details.tree")))
        .await
        .unwrap()
        .is_empty());
    let title = super::attr(&browser, cell, "title").await.unwrap_or_default();
    assert!(title.contains("corpus.Order"), "{title}");
    screenshot(&browser, "queue-java-no-schema").await;
    browser.close().await.unwrap();
    driver.session = None;
}
