//! Redisson's default codec (Kryo5Codec) against a real queue: the 27
//! captured values offered from Rust land in Redis as exactly the bytes Java
//! wrote, Java-written elements are taken as Rust values, bad bytes stay in
//! the queue, hostile values are read exactly or refused and kept, and the
//! CLI reads and writes Kryo queues.

use bytes::Bytes;
use delayq::codec::kryo::{JavaUuid, KryoError, KryoErrorKind, KryoSchema, KryoValue};
use delayq::format::{pack, unpack, Format};
use delayq::{Error, KryoCodec};
use serde::{Deserialize, Serialize};

use delayq_test_support::vectors::{hostile_big_integer, kryo_case, kryo_cases};
use delayq_test_support::{now_ms, redis_test};

const SCHEMA_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/compat/kryo-schema.example.json");

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

redis_test! {
    async fn every_captured_value_offered_from_rust_is_in_redis_as_java_wrote_it(raw, client) {
        let schema = KryoSchema::from_json(&std::fs::read_to_string(SCHEMA_FILE).unwrap()).unwrap();
        for format in [Format::Modern, Format::Legacy] {
            let name = format!("kq-{}", format.as_str());
            let q = client
                .delayed_queue(&name, KryoCodec::<KryoValue>::new())
                .unwrap()
                .without_transfer()
                .with_format(format);
            let cases = kryo_cases();
            for case in &cases {
                let value =
                    KryoValue::decode(&case.raw, Some(&schema)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
                q.offer(&value, std::time::Duration::from_secs(3600)).await.unwrap();
            }
            let pending = raw.lrange(&format!("redisson_delay_queue:{{{name}}}")).await;
            assert_eq!(pending.len(), cases.len());
            for (element, case) in pending.iter().zip(&cases) {
                let element = unpack(element).unwrap();
                assert_eq!(element.format(), format, "{}", case.name);
                assert_eq!(
                    element.payload,
                    &case.raw[..],
                    "{}: payload inside the packed element",
                    case.name
                );
            }
        }
    }
}

redis_test! {
    async fn java_written_elements_are_taken_as_rust_values_and_bad_ones_stay(redis, raw) {
        let good = kryo_case("pojo_event_nested").raw;
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
    }
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

redis_test! {
    async fn a_16_kb_big_integer_is_taken_exactly_and_a_32_kb_one_refused_and_kept(redis, raw) {
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
    }
}

redis_test! {
    async fn hostile_kryo_shapes_are_refused_with_short_typed_errors_and_kept(redis, raw) {
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
    }
}
