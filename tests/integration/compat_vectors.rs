//! Interop proof against captures from real Java Redisson clients
//! (`compat/fixtures/`, from 3.21.0, 3.52.0 and 4.7.0; String, Long,
//! ByteArray and JsonJackson codecs).
//!
//! Java → Rust: the state Java wrote, byte for byte, reads the same in delayq
//! and transfers to exactly the bytes Redisson's own transfer produced.
//! Rust → Java: delayq's offers of the same values write the same keys, the
//! same element layout and payload bytes, the same scores, and publish under
//! the same rule.

use std::time::Duration;

use bytes::Bytes;
use delayq::codec::{self, Codec};
use delayq::error::BoxError;
use delayq::format::{unpack, Format};
use delayq::fred::prelude::*;
use delayq::{BytesCodec, JacksonCodec, LongCodec, StringCodec};
use serde::{Deserialize, Serialize};

use delayq_test_support::{deadline, now_ms, unhex, RawRedis, RedisServer};

#[derive(Debug, Deserialize)]
struct Vector {
    redisson_version: String,
    case: String,
    keys: Keys,
    delay_ms: i64,
    input_values: Vec<String>,
    zset: Vec<ZsetEntry>,
    list: Vec<ListEntry>,
    key_types: KeyTypes,
    offers: Vec<Offer>,
    #[serde(rename = "java_readAll")]
    java_read_all: Vec<String>,
    java_size: String,
    transfer: Transfer,
    take: Take,
}

#[derive(Debug, Deserialize)]
struct Keys {
    destination_queue: String,
    timeout_zset: String,
    delayed_list: String,
    channel: String,
}

#[derive(Debug, Deserialize)]
struct ZsetEntry {
    member_hex: String,
    score: String,
}

#[derive(Debug, Deserialize)]
struct ListEntry {
    element_hex: String,
}

#[derive(Debug, Deserialize)]
struct KeyTypes {
    destination_queue: String,
    timeout_zset: String,
    delayed_list: String,
}

#[derive(Debug, Deserialize)]
struct Offer {
    offer_script_redis_calls: Vec<Call>,
    published: Option<Vec<Published>>,
}

#[derive(Debug, Deserialize)]
struct Call {
    cmd: String,
    args: Vec<Arg>,
}

#[derive(Debug, Deserialize)]
struct Arg {
    hex: String,
}

#[derive(Debug, Deserialize)]
struct Published {
    message: Text,
}

#[derive(Debug, Deserialize)]
struct Text {
    text: String,
}

#[derive(Debug, Deserialize)]
struct Transfer {
    destination_list_after_hex: Vec<String>,
    timeout_zset_after: usize,
    delayed_list_after: usize,
}

#[derive(Debug, Deserialize)]
struct Take {
    java_printed: Vec<String>,
}

fn load(version: &str, case: &str) -> Vector {
    let path = format!("{}/compat/fixtures/{version}/{case}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The Java class of the json vectors, named once for the Jackson codec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "compat.Order")]
struct Order {
    id: String,
    amount: i64,
    tags: Vec<String>,
}

/// Each vector's values as text: what the capture gave Java as input and
/// what Java printed, through the real delayq codec of the case.
struct PrintCodec(&'static str);

impl PrintCodec {
    fn for_case(case: &str) -> PrintCodec {
        PrintCodec(match case {
            "string" => "string",
            "long" => "long",
            "bytes" => "bytes",
            "json" => "json",
            other => panic!("unknown case {other}"),
        })
    }
}

impl Codec<String> for PrintCodec {
    fn name(&self) -> &'static str {
        self.0
    }

    fn encode(&self, input: &String) -> Result<Bytes, BoxError> {
        match self.0 {
            "string" => StringCodec.encode(input),
            "long" => LongCodec.encode(&input.parse()?),
            "bytes" => Codec::<Bytes>::encode(&BytesCodec, &Bytes::from(unhex(input))),
            _ => JacksonCodec::<Order>::new().encode(&serde_json::from_str::<Order>(input)?),
        }
    }

    fn decode(&self, raw: &[u8]) -> Result<String, BoxError> {
        Ok(match self.0 {
            "string" => StringCodec.decode(raw)?,
            "long" => LongCodec.decode(raw)?.to_string(),
            "bytes" => Codec::<Bytes>::decode(&BytesCodec, raw)?
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
            _ => {
                // As the capture's Java printed it.
                let o: Order = JacksonCodec::new().decode(raw)?;
                format!("Order id={} amount={} tags=[{}]", o.id, o.amount, o.tags.join(", "))
            }
        })
    }
}

fn format_of(version: &str) -> Format {
    if version == "3.21.0" {
        Format::Legacy
    } else {
        Format::Modern
    }
}

async fn key_type(raw: &RawRedis, key: &str) -> String {
    match raw.cmd("TYPE", vec![key.into()]).await {
        delayq::fred::types::Value::String(s) => s.to_string(),
        other => panic!("TYPE: {other:?}"),
    }
}

/// Seeds Redis with exactly what the Java client left: ZSET members and
/// scores, and the pending list in its order.
async fn seed_java_state(raw: &RawRedis, v: &Vector) {
    for entry in &v.zset {
        let score: f64 = entry.score.parse().unwrap();
        let _: i64 = raw
            .client
            .zadd(
                &v.keys.timeout_zset,
                None,
                None,
                false,
                false,
                (score, unhex(&entry.member_hex)),
            )
            .await
            .unwrap();
    }
    for entry in &v.list {
        let _: i64 = raw
            .client
            .rpush(&v.keys.delayed_list, unhex(&entry.element_hex))
            .await
            .unwrap();
    }
}

async fn java_to_rust(version: &str, case: &str) {
    let v = load(version, case);
    let redis = RedisServer::start().await;
    let raw = redis.raw().await;
    seed_java_state(&raw, &v).await;
    let client = redis.client_builder().resync_interval(None).build().await.unwrap();
    let name = v.keys.destination_queue.as_str();
    let ctx = format!("{version}/{case}");

    // Reads of the Java-written state agree with what Java reported, exact scores kept.
    let q = client
        .delayed_queue(name, PrintCodec::for_case(case))
        .unwrap()
        .without_transfer();
    assert_eq!(q.keys().timeout(), v.keys.timeout_zset, "{ctx}");
    assert_eq!(q.keys().pending(), v.keys.delayed_list, "{ctx}");
    assert_eq!(q.keys().channel(), v.keys.channel, "{ctx}");
    assert_eq!(q.len().await.unwrap().to_string(), v.java_size, "{ctx}: size");
    assert_eq!(q.read_all().await.unwrap(), v.java_read_all, "{ctx}: readAll");
    assert_eq!(q.peek().await.unwrap().as_ref(), v.java_read_all.first(), "{ctx}: peek");
    for value in &v.input_values {
        assert!(q.contains(value).await.unwrap(), "{ctx}: contains {value}");
    }
    assert!(
        q.contains_all(v.input_values.clone()).await.unwrap(),
        "{ctx}: containsAll"
    );
    assert!(
        !q.contains(&absent_value(case)).await.unwrap(),
        "{ctx}: contains of a value never offered"
    );

    // remove and poll, on the Java-written elements.
    assert!(q.remove(&v.input_values[1]).await.unwrap(), "{ctx}: remove");
    let mut rest = v.java_read_all.clone();
    rest.remove(1);
    assert_eq!(q.read_all().await.unwrap(), rest, "{ctx}: readAll after remove");
    assert_eq!(q.remove_first().await.unwrap().as_ref(), rest.first(), "{ctx}: poll");
    assert_eq!(raw.zcard(&v.keys.timeout_zset).await, v.zset.len() - 2, "{ctx}");

    // Transfer: the capture rewrote every score to 1 (due) and ran Redisson's
    // own transfer; delayq's transfer of the same state gives the same bytes.
    let _: i64 = raw
        .client
        .del(vec![v.keys.timeout_zset.as_str(), v.keys.delayed_list.as_str()])
        .await
        .unwrap();
    seed_java_state(&raw, &v).await;
    for entry in &v.zset {
        let _: i64 = raw
            .client
            .zadd(
                &v.keys.timeout_zset,
                Some(SetOptions::XX),
                None,
                false,
                false,
                (1.0, unhex(&entry.member_hex)),
            )
            .await
            .unwrap();
    }
    let report = q.transfer_now().await.unwrap();
    assert_eq!(report.moved as usize, v.zset.len(), "{ctx}");
    let expected: Vec<Bytes> = v
        .transfer
        .destination_list_after_hex
        .iter()
        .map(|h| Bytes::from(unhex(h)))
        .collect();
    assert_eq!(
        raw.lrange(name).await,
        expected,
        "{ctx}: destination bytes after transfer"
    );
    assert_eq!(
        raw.zcard(&v.keys.timeout_zset).await,
        v.transfer.timeout_zset_after,
        "{ctx}"
    );
    assert_eq!(
        raw.llen(&v.keys.delayed_list).await,
        v.transfer.delayed_list_after,
        "{ctx}"
    );

    // take() decodes each to what Java's take printed.
    let dest = client.blocking_queue(name, PrintCodec::for_case(case)).unwrap();
    for printed in &v.take.java_printed {
        assert_eq!(
            &dest.take_timeout(Duration::from_secs(5)).await.unwrap().unwrap(),
            printed,
            "{ctx}: take"
        );
    }
}

async fn rust_to_java(version: &str, case: &str) {
    let v = load(version, case);
    let redis = RedisServer::start().await;
    let raw = redis.raw().await;
    let client = redis.client().await;
    let format = format_of(version);
    let ctx = format!("{version}/{case}");
    let q = client
        .delayed_queue(&v.keys.destination_queue, PrintCodec::for_case(case))
        .unwrap()
        .without_transfer()
        .with_format(format);
    let monitor = redis.monitor().await;

    let mut windows: Vec<(i64, i64)> = Vec::new();
    for value in &v.input_values {
        // Like Java's one process per offer, each offer gets a later due time than the last.
        while windows.last().is_some_and(|&(_, after)| now_ms() <= after) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let before = now_ms();
        q.offer(value, Duration::from_millis(v.delay_ms as u64)).await.unwrap();
        windows.push((before, now_ms()));
    }
    let seen = monitor.entries().await;

    // Same keys, same types.
    assert_eq!(
        key_type(&raw, &v.keys.timeout_zset).await,
        v.key_types.timeout_zset,
        "{ctx}"
    );
    assert_eq!(
        key_type(&raw, &v.keys.delayed_list).await,
        v.key_types.delayed_list,
        "{ctx}"
    );
    assert_eq!(
        key_type(&raw, &v.keys.destination_queue).await,
        v.key_types.destination_queue,
        "{ctx}"
    );

    // Same element layout and payload bytes (the random id aside), same scores.
    let ours = raw.lrange(&v.keys.delayed_list).await;
    let zset = raw.zrange(&v.keys.timeout_zset).await;
    assert_eq!(ours.len(), v.list.len(), "{ctx}");
    let id_len = match format {
        Format::Modern => 9,
        Format::Legacy => 8,
    };
    for (i, (element, java)) in ours.iter().zip(&v.list).enumerate() {
        let java = unhex(&java.element_hex);
        assert_eq!(element.len(), java.len(), "{ctx}: element {i} length");
        assert_eq!(
            element[id_len..],
            java[id_len..],
            "{ctx}: element {i} length field and payload"
        );
        if format == Format::Modern {
            assert_eq!(element[0], java[0], "{ctx}: id length byte");
        }
        assert_eq!(unpack(element).unwrap().format(), format, "{ctx}");
        assert_eq!(
            unpack(element).unwrap().payload,
            unpack(&java).unwrap().payload,
            "{ctx}: payload bytes"
        );
        let score = zset.iter().find(|(m, _)| m == element).expect("in the timeout set").1;
        let (before, after) = windows[i];
        assert!(
            score >= before + v.delay_ms && score <= after + v.delay_ms,
            "{ctx}: score {score} for offer {i}"
        );
    }

    // The same writes per offer, on the same keys; published under the same rule.
    let writes: Vec<Vec<(String, Vec<Vec<u8>>)>> = {
        let mut per_offer = Vec::new();
        let mut current = Vec::new();
        for entry in seen.iter().filter(|e| e.from_lua) {
            let name = entry.name();
            if !matches!(name.as_str(), "zadd" | "rpush" | "publish") {
                continue;
            }
            if name == "zadd" && !current.is_empty() {
                per_offer.push(std::mem::take(&mut current));
            }
            // delayq adds NX to ZADD (so a colliding id is re-drawn, never merged).
            let args: Vec<Vec<u8>> = entry.args[1..]
                .iter()
                .filter(|a| a.as_slice() != b"NX")
                .cloned()
                .collect();
            current.push((name, args));
        }
        per_offer.push(current);
        per_offer
    };
    assert_eq!(writes.len(), v.offers.len(), "{ctx}: one script per offer");
    for (i, (ours, java)) in writes.iter().zip(&v.offers).enumerate() {
        let java_writes: Vec<&Call> = java
            .offer_script_redis_calls
            .iter()
            .filter(|c| matches!(c.cmd.as_str(), "zadd" | "rpush" | "publish"))
            .collect();
        let our_names: Vec<&str> = ours.iter().map(|(n, _)| n.as_str()).collect();
        let java_names: Vec<&str> = java_writes.iter().map(|c| c.cmd.as_str()).collect();
        assert_eq!(our_names, java_names, "{ctx}: writes of offer {i}");
        for ((_, our_args), java_call) in ours.iter().zip(&java_writes) {
            // Same key (first argument) for every write.
            assert_eq!(
                our_args[0],
                unhex(&java_call.args[0].hex),
                "{ctx}: key of {} in offer {i}",
                java_call.cmd
            );
        }
        let java_published = java.published.as_ref().is_some_and(|p| !p.is_empty());
        let published: Vec<&Vec<Vec<u8>>> = ours.iter().filter(|(n, _)| n == "publish").map(|(_, a)| a).collect();
        assert_eq!(
            !published.is_empty(),
            java_published,
            "{ctx}: publish rule for offer {i}"
        );
        if let (Some(message), Some(java)) = (published.first(), java.published.as_ref().and_then(|p| p.first())) {
            // The message is the due time in ms as decimal text, the ZADD score, as Java's is.
            let (_, zadd) = ours.iter().find(|(n, _)| n == "zadd").unwrap();
            assert_eq!(message[1], zadd[1], "{ctx}: published message is the score");
            let java_zadd = java_writes.iter().find(|c| c.cmd == "zadd").unwrap();
            assert_eq!(
                java.message.text.as_bytes(),
                unhex(&java_zadd.args[1].hex),
                "{ctx}: Java's rule, for reference"
            );
        }
    }

    // And Java's own readAll/size of this state would print what the capture printed.
    assert_eq!(
        q.read_all().await.unwrap(),
        v.java_read_all,
        "{ctx}: readAll of Rust-written state"
    );
    assert_eq!(q.len().await.unwrap().to_string(), v.java_size, "{ctx}");
}

/// A value of the case that no vector offers.
fn absent_value(case: &str) -> String {
    match case {
        "string" => "never offered".into(),
        "long" => "123456789".into(),
        "bytes" => "abcdef01".into(),
        _ => r#"{"id":"o-none","amount":0,"tags":[]}"#.into(),
    }
}

#[test]
fn every_vector_file_is_present_and_well_formed() {
    for version in ["3.21.0", "3.52.0", "4.7.0"] {
        for case in ["string", "long", "bytes", "json"] {
            let v = load(version, case);
            assert_eq!(v.redisson_version, version);
            assert_eq!(v.case, case);
            // Every captured element is of the format its version writes.
            for entry in &v.list {
                assert_eq!(
                    unpack(&unhex(&entry.element_hex)).unwrap().format(),
                    format_of(version),
                    "{version}/{case}"
                );
            }
            // Re-encoding every captured Java payload from its decoded value gives Java's bytes.
            let codec = PrintCodec::for_case(case);
            for entry in &v.list {
                let java = Bytes::copy_from_slice(unpack(&unhex(&entry.element_hex)).unwrap().payload);
                if case == "json" {
                    let order: Order = codec::decode(&JacksonCodec::new(), java.clone()).unwrap();
                    assert_eq!(
                        JacksonCodec::new().encode(&order).unwrap(),
                        java,
                        "{version}/json re-encoding"
                    );
                } else {
                    let text = codec.decode(&java).unwrap();
                    assert_eq!(codec.encode(&text).unwrap(), java, "{version}/{case} re-encoding");
                }
            }
        }
    }
}

macro_rules! vector_tests {
    ($($name:ident: $version:literal $case:literal,)*) => {
        mod java_to_rust {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::deadline(super::java_to_rust($version, $case)).await;
                }
            )*
        }
        mod rust_to_java {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::deadline(super::rust_to_java($version, $case)).await;
                }
            )*
        }
    };
}

vector_tests! {
    redisson_3_21_0_string: "3.21.0" "string",
    redisson_3_21_0_long: "3.21.0" "long",
    redisson_3_21_0_bytes: "3.21.0" "bytes",
    redisson_3_21_0_json: "3.21.0" "json",
    redisson_3_52_0_string: "3.52.0" "string",
    redisson_3_52_0_long: "3.52.0" "long",
    redisson_3_52_0_bytes: "3.52.0" "bytes",
    redisson_3_52_0_json: "3.52.0" "json",
    redisson_4_7_0_string: "4.7.0" "string",
    redisson_4_7_0_long: "4.7.0" "long",
    redisson_4_7_0_bytes: "4.7.0" "bytes",
    redisson_4_7_0_json: "4.7.0" "json",
}
