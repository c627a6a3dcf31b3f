//! Redisson's default codec (Kryo5Codec) against a real queue: the 27
//! captured values offered from Rust land in Redis as exactly the bytes Java
//! wrote, Java-written elements are taken as Rust values, bad bytes stay in
//! the queue, hostile values are read exactly or refused and kept, and the
//! CLI reads and writes Kryo queues.

use std::process::{Command, Output};

use bytes::Bytes;
use delayq::codec::kryo::{JavaUuid, KryoError, KryoErrorKind, KryoSchema, KryoValue};
use delayq::format::{pack, unpack, Format};
use delayq::{Error, KryoCodec};
use serde::{Deserialize, Serialize};

use crate::harness::{deadline, now_ms, RedisServer};

const VECTORS: &str = include_str!("../../compat/fixtures/kryo5.json");
const SCHEMA_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/compat/kryo-schema.example.json");

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// (case name, Java class, value JSON text, Kryo bytes).
fn vectors() -> Vec<(String, String, String, Vec<u8>)> {
    let file: serde_json::Value = serde_json::from_str(VECTORS).unwrap();
    file["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["case"].as_str().unwrap().to_owned(),
                c["java_class"].as_str().unwrap().to_owned(),
                c["value_json"].as_str().unwrap().to_owned(),
                unhex(c["kryo_hex"].as_str().unwrap()),
            )
        })
        .collect()
}

fn vector(name: &str) -> Vec<u8> {
    vectors().into_iter().find(|v| v.0 == name).unwrap().3
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Order")]
struct Order {
    id: Option<String>,
    amount: i64,
    tags: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Event$Status")]
enum Status {
    #[serde(rename = "NEW")]
    New,
    #[serde(rename = "PAID")]
    Paid,
    #[serde(rename = "CANCELLED")]
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Event", rename_all = "camelCase")]
struct Event {
    #[serde(rename = "type")]
    kind: Option<String>,
    order: Option<Order>,
    status: Option<Status>,
    uuid: Option<JavaUuid>,
    created_at: i64,
    attrs: Option<std::collections::BTreeMap<String, String>>,
    retries: Option<i32>,
    ratio: f64,
    urgent: bool,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_captured_value_offered_from_rust_is_in_redis_as_java_wrote_it() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let schema = KryoSchema::from_json(&std::fs::read_to_string(SCHEMA_FILE).unwrap()).unwrap();
        for format in [Format::Modern, Format::Legacy] {
            let name = format!("kq-{}", format.as_str());
            let q = client
                .delayed_queue(&name, KryoCodec::<KryoValue>::new())
                .unwrap()
                .without_transfer()
                .with_format(format);
            let cases = vectors();
            for (case, _, _, bytes) in &cases {
                let value = KryoValue::decode(bytes, Some(&schema)).unwrap_or_else(|e| panic!("{case}: {e}"));
                q.offer(&value, std::time::Duration::from_secs(3600)).await.unwrap();
            }
            let pending = raw.lrange(&format!("redisson_delay_queue:{{{name}}}")).await;
            assert_eq!(pending.len(), cases.len());
            for (element, (case, _, _, bytes)) in pending.iter().zip(&cases) {
                let element = unpack(element).unwrap();
                assert_eq!(element.format(), format, "{case}");
                assert_eq!(element.payload, &bytes[..], "{case}: payload inside the packed element");
            }
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_written_elements_are_taken_as_rust_values_and_bad_ones_stay() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let good = vector("pojo_event_nested");
        let truncated = good[..good.len() - 3].to_vec();
        // As a Java producer offers them: a good event, a cut one, a good one.
        let due = now_ms() - 1000;
        for (i, payload) in [&good, &truncated, &good].iter().enumerate() {
            raw.seed("events", &pack(Format::Modern, payload), due + i as i64).await;
        }
        let client = redis.client().await;
        let q = client
            .blocking_queue("events", KryoCodec::<Event>::new())
            .unwrap()
            .with_transfer();
        let first = q.take().await.unwrap();
        assert_eq!(
            first.order.as_ref().unwrap().tags,
            vec!["a".to_string(), "b".to_string()]
        );
        assert_eq!(first.status, Some(Status::Paid));
        match q.take().await {
            Err(Error::Decode(e)) => {
                assert_eq!(e.raw().as_ref(), &truncated[..]);
                assert_eq!(e.codec(), "kryo");
                assert!(e.restored(), "the bad value is given back to the list");
                assert!(
                    e.to_string().contains("ends inside a value") || e.to_string().contains("bytes left"),
                    "{e}"
                );
            }
            other => panic!("expected a decode error, got {other:?}"),
        }
        let left = raw.lrange("events").await;
        assert!(
            left.contains(&Bytes::from(truncated.clone())),
            "the cut element is still in the queue"
        );
    })
    .await;
}

fn delayq(redis: &RedisServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_delayq"))
        .args(args)
        .env("REDIS_URL", redis.url())
        .output()
        .expect("run delayq")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn payloads(redis: &RedisServer, queue: &str) -> Vec<Vec<u8>> {
    let raw = redis.raw().await;
    raw.lrange(&format!("redisson_delay_queue:{{{queue}}}"))
        .await
        .iter()
        .map(|e| unpack(e).unwrap().payload.to_vec())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_offers_java_bytes_and_prints_json() {
    deadline(async {
        let redis = RedisServer::start().await;
        let order = r#"{"id":"o-1","amount":1234,"tags":["a","b"]}"#;
        let base = ["offer", "kq", "--delay", "1h", "--codec", "kryo"];
        ok(&delayq(&redis, &[&base[..], &["--java-type", "Long", "42"]].concat()));
        ok(&delayq(
            &redis,
            &[&base[..], &["--java-type", "String", "order-42"]].concat(),
        ));
        ok(&delayq(
            &redis,
            &[&base[..], &["--java-type", "BigDecimal", "12.50"]].concat(),
        ));
        ok(&delayq(&redis, &[&base[..], &[r#"["x","y","z"]"#]].concat()));
        ok(&delayq(
            &redis,
            &[
                &base[..],
                &["--java-class", "compat.Order", "--kryo-schema", SCHEMA_FILE, order],
            ]
            .concat(),
        ));
        let want: Vec<Vec<u8>> = ["long", "string", "bigdecimal", "arraylist", "pojo_order"]
            .iter()
            .map(|c| vector(c))
            .collect();
        assert_eq!(
            payloads(&redis, "kq").await,
            want,
            "exactly the bytes Java's Kryo5Codec wrote"
        );

        // inspect and take print JSON.
        let shown = ok(&delayq(
            &redis,
            &[
                "inspect",
                "kq",
                "--codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
                "--format",
                "json",
            ],
        ));
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let previews: Vec<&str> = shown["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["payload"].as_str().unwrap())
            .collect();
        assert_eq!(
            previews,
            [
                "42",
                "\"order-42\"",
                "12.50",
                r#"["x","y","z"]"#,
                r#"{"amount":1234,"id":"o-1","tags":["a","b"]}"#
            ]
        );
        // Another codec says what the bytes are and what to use.
        let shown = ok(&delayq(
            &redis,
            &["inspect", "kq", "--codec", "long", "--format", "json"],
        ));
        assert!(shown.contains("use --codec kryo"), "{shown}");
        // POJOs need the schema.
        let shown = ok(&delayq(
            &redis,
            &["inspect", "kq", "--codec", "kryo", "--format", "json"],
        ));
        assert!(shown.contains("--kryo-schema"), "{shown}");

        ok(&delayq(
            &redis,
            &[
                "offer",
                "ready",
                "--delay",
                "0",
                "--codec",
                "kryo",
                "--java-class",
                "compat.Order",
                "--kryo-schema",
                SCHEMA_FILE,
                order,
            ],
        ));
        let out = ok(&delayq(
            &redis,
            &[
                "take",
                "ready",
                "--timeout",
                "10s",
                "--codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
            ],
        ));
        assert_eq!(out, "{\"amount\":1234,\"id\":\"o-1\",\"tags\":[\"a\",\"b\"]}\n");

        // Mistakes are errors, not wrong bytes.
        let out = delayq(&redis, &[&base[..], &["--java-class", "compat.Order", order]].concat());
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--kryo-schema"),
            "{out:?}"
        );
        let out = delayq(&redis, &[&base[..], &["--java-type", "Integer", "x"]].concat());
        assert!(!out.status.success(), "{out:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_letters_list_as_json_with_the_kryo_codec() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let client = redis.client().await;
        let keys = client
            .delayed_queue("dl", KryoCodec::<KryoValue>::new())
            .unwrap()
            .without_transfer()
            .keys()
            .clone();
        let _: i64 = delayq::fred::interfaces::ListInterface::rpush(
            &raw.client,
            keys.dead_letter(),
            vec![vector("uuid"), vector("enum")],
        )
        .await
        .unwrap();
        let out = ok(&delayq(
            &redis,
            &[
                "dead-letter",
                "list",
                "dl",
                "--codec",
                "kryo",
                "--kryo-schema",
                SCHEMA_FILE,
                "--format",
                "json",
            ],
        ));
        let out: serde_json::Value = serde_json::from_str(&out).unwrap();
        let values: Vec<&str> = out["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["value"].as_str().unwrap())
            .collect();
        assert_eq!(values, ["\"123e4567-e89b-12d3-a456-426614174000\"", "\"CANCELLED\""]);
    })
    .await;
}

/// Decimal digits to little-endian 32-bit limbs, digit by digit: slow and
/// plain, to check the library's conversion.
fn decimal_to_limbs(digits: &str) -> Vec<u32> {
    let mut limbs: Vec<u32> = Vec::new();
    let digits = digits.as_bytes();
    let first = digits.len() % 9;
    let chunks = std::iter::once(&digits[..first]).chain(digits[first..].chunks(9));
    for chunk in chunks.filter(|c| !c.is_empty()) {
        let scale = 10u64.pow(chunk.len() as u32);
        let mut carry: u64 = std::str::from_utf8(chunk).unwrap().parse().unwrap();
        for limb in limbs.iter_mut() {
            let v = u64::from(*limb) * scale + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        while carry > 0 {
            limbs.push(carry as u32);
            carry >>= 32;
        }
    }
    limbs
}

/// A 32 KiB positive BigInteger (Java's toByteArray()).
fn hostile_big_integer() -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..32 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    bytes[0] = 0x5a;
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_16_kb_big_integer_is_taken_exactly_and_a_32_kb_one_refused_and_kept() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        // As a Java producer offers them: 2^131072 - 1 (16 KiB of 0xff after
        // the sign byte), then a 32 KiB BigInteger.
        let largest = KryoValue::BigInteger([&[0x00][..], &[0xff; 16 * 1024]].concat())
            .encode()
            .unwrap();
        let hostile = KryoValue::BigInteger(hostile_big_integer()).encode().unwrap();
        let due = now_ms() - 1000;
        raw.seed("big", &pack(Format::Modern, &largest), due).await;
        raw.seed("big", &pack(Format::Modern, &hostile), due + 1).await;
        let client = redis.client().await;
        let q = client
            .blocking_queue("big", KryoCodec::<String>::new())
            .unwrap()
            .with_transfer();
        let digits = q.take().await.unwrap();
        assert_eq!(digits.len(), 39_457);
        assert_eq!(decimal_to_limbs(&digits), vec![u32::MAX; 4096], "2^131072 - 1 exactly");
        match q.take().await {
            Err(Error::Decode(e)) => {
                assert_eq!(e.raw().as_ref(), &hostile[..]);
                assert!(e.restored(), "the value is given back to the list");
                let kind = std::error::Error::source(&e)
                    .and_then(|s| s.downcast_ref::<KryoError>())
                    .map(KryoError::kind);
                assert_eq!(kind, Some(KryoErrorKind::TooLarge), "{e}");
            }
            other => panic!("expected a decode error, got {other:?}"),
        }
        // Nothing lost: a KryoValue queue takes it, every byte.
        let values = client.blocking_queue("big", KryoCodec::<KryoValue>::new()).unwrap();
        let taken = values.take().await.unwrap();
        assert_eq!(taken, KryoValue::BigInteger(hostile_big_integer()));
        assert_eq!(taken.encode().unwrap(), hostile);
        assert_eq!(raw.llen("big").await, 0);
    })
    .await;
}

/// A map whose only key is a map whose only key is ... `depth` deep.
fn maps_in_keys(depth: usize) -> KryoValue {
    let mut v = KryoValue::String("a\"b".into());
    for _ in 0..depth {
        v = KryoValue::Map {
            class: "java.util.HashMap".into(),
            entries: vec![(v, KryoValue::Int(1))],
        };
    }
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_prints_hostile_kryo_payloads_exactly_or_bounded() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        let hostile = KryoValue::BigInteger(hostile_big_integer()).encode().unwrap();
        let keys = maps_in_keys(14).encode().unwrap();
        let due = now_ms() + 3_600_000;
        raw.seed("hostile", &pack(Format::Modern, &hostile), due).await;
        raw.seed("hostile", &pack(Format::Modern, &keys), due + 1).await;
        let shown = ok(&delayq(
            &redis,
            &["inspect", "hostile", "--codec", "kryo", "--format", "json"],
        ));
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        let payloads: Vec<&str> = shown["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["payload"].as_str().unwrap_or_else(|| panic!("{e}")))
            .collect();
        // Past 2^131072 a BigInteger prints in hexadecimal, every bit of it.
        let hex: String = hostile_big_integer().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(payloads[0], format!("\"0x{hex}\""));
        // Maps as keys of maps as keys...: two levels print as JSON text, the
        // rest as their class, so the text stays proportional to the payload.
        assert!(payloads[1].contains("<java.util.HashMap>"), "{}", payloads[1]);
        assert!(
            payloads[1].len() <= 8 * keys.len(),
            "{} bytes of JSON from a {}-byte payload",
            payloads[1].len(),
            keys.len()
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_kryo_shapes_are_refused_with_short_typed_errors_and_kept() {
    deadline(async {
        let redis = RedisServer::start().await;
        let raw = redis.raw().await;
        // Three all-null lists of 2^19 elements: 40-odd bytes that claim 1.5
        // million elements (each list alone is within the limit).
        let nulls = KryoValue::Collection {
            class: "java.util.ArrayList".into(),
            items: vec![KryoValue::Null; 1 << 19],
        };
        let lists = KryoValue::Collection {
            class: "java.util.ArrayList".into(),
            items: vec![nulls; 3],
        }
        .encode()
        .unwrap();
        // A class name of 100,000 characters.
        let name = format!("com.{}", "x".repeat(100_000));
        let long_name = [&[0x01, 0x00][..], &name.as_bytes()[..name.len() - 1], &[b'x' | 0x80]].concat();
        let client = redis.client().await;
        for (queue, payload, kind) in [
            ("nulls", &lists, KryoErrorKind::TooLarge),
            ("name", &long_name, KryoErrorKind::UnknownClass),
        ] {
            raw.seed(queue, &pack(Format::Modern, payload), now_ms() - 1000).await;
            let q = client
                .blocking_queue(queue, KryoCodec::<KryoValue>::new())
                .unwrap()
                .with_transfer();
            match q.take().await {
                Err(Error::Decode(e)) => {
                    assert_eq!(e.raw().as_ref(), &payload[..], "{queue}");
                    assert!(e.restored(), "{queue}: the value is given back to the list");
                    let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<KryoError>());
                    assert_eq!(source.map(KryoError::kind), Some(kind), "{queue}: {e}");
                    let message = e.to_string();
                    assert!(message.len() < 1_000, "{queue}: a {}-byte message", message.len());
                }
                other => panic!("{queue}: expected a decode error, got {other:?}"),
            }
            assert_eq!(raw.lrange(queue).await, vec![Bytes::from(payload.clone())], "{queue}");
        }
    })
    .await;
}
