//! Scenario 14, a realistic POJO: Java's `corpus.Order` (`String id`,
//! `long amount`, `LocalDateTime createdAt`, `BigDecimal total`,
//! `List<String> tags`) in each codec Java services send it with, against
//! Kryo in the same run. Decodes read the bytes Java's Redisson wrote
//! (`compat/fixtures/jdk-types.json`), each checked to give the expected
//! value before it is timed; encodes write the value read.
//!
//! Two ways to hold it: a Rust struct of natural types (chrono's
//! `NaiveDateTime`, bigdecimal's `BigDecimal`, through
//! `delayq_codec::natural`), what a Rust service declares; and
//! [`KryoValue`], what the CLI and the dashboard read without Rust types
//! (Jackson's untyped path there is its plain JSON).

use std::hint::black_box;
use std::str::FromStr;
use std::time::Instant;

use delayq::codec::compress::{Compression, Lz4V2Codec, DEFAULT_MAX_DECOMPRESSED};
use delayq::codec::jackson::{self, Dialect};
use delayq::codec::kryo::{KryoSchema, KryoValue};
use delayq::codec::{marshalling, serialization};
use delayq::codec::{Codec, JacksonCodec, KryoCodec, MarshallingCodec, SerializationCodec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

const FIXTURE: &str = include_str!("../../../compat/fixtures/jdk-types.json");
const SCHEMA: &str = include_str!("../../../compat/fixtures/jdk-types-schema.json");

/// `corpus.Order` with the field types a Rust developer would use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "corpus.Order", rename_all = "camelCase")]
pub struct Order {
    id: String,
    amount: i64,
    #[serde(with = "delayq::codec::natural::chrono::local_date_time")]
    created_at: chrono::NaiveDateTime,
    #[serde(with = "delayq::codec::natural::bigdecimal::big_decimal")]
    total: bigdecimal::BigDecimal,
    tags: Vec<String>,
}

/// What Java wrote: `new Order("o-1", 1234L, LocalDateTime.of(2026, 11, 23,
/// 2, 13, 20, 123456789), new BigDecimal("12.50"), new ArrayList<>(List.of("a", "b")))`.
fn expected() -> Order {
    Order {
        id: "o-1".into(),
        amount: 1234,
        created_at: chrono::NaiveDate::from_ymd_opt(2026, 11, 23)
            .unwrap()
            .and_hms_nano_opt(2, 13, 20, 123_456_789)
            .unwrap(),
        total: bigdecimal::BigDecimal::from_str("12.50").unwrap(),
        tags: vec!["a".into(), "b".into()],
    }
}

/// One codec's rates: encodes and decodes per second, and the bytes.
pub struct Rates {
    pub codec: &'static str,
    pub encode: Option<f64>,
    pub decode: f64,
    pub bytes: usize,
}

pub struct Results {
    /// The Rust struct: Kryo first, the baseline.
    pub natural: Vec<Rates>,
    /// `KryoValue` (Jackson: its plain JSON): Kryo first.
    pub untyped: Vec<Rates>,
}

/// Operations per second: the median of 3 runs of about 250 ms.
pub fn per_second(mut op: impl FnMut()) -> f64 {
    let mut rates: Vec<f64> = (0..3)
        .map(|_| {
            let started = Instant::now();
            let mut n = 0u64;
            while started.elapsed().as_millis() < 250 {
                for _ in 0..64 {
                    op();
                }
                n += 64;
            }
            n as f64 / started.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[1]
}

/// Java's bytes of the Order in `codec`.
fn java_bytes(codec: &str) -> Vec<u8> {
    let doc: Value = serde_json::from_str(FIXTURE).expect("jdk-types.json");
    let hex = doc["codecs"][codec]["pojo_order"]["hex"]
        .as_str()
        .unwrap_or_else(|| panic!("no {codec} pojo_order in jdk-types.json"));
    delayq_test_support::vectors::unhex(hex)
}

/// What Java reads back from its bytes, as JSON text (fields by name).
fn java_decoded(codec: &str) -> String {
    let doc: Value = serde_json::from_str(FIXTURE).expect("jdk-types.json");
    doc["codecs"][codec]["pojo_order"]["java_decoded"]
        .as_str()
        .expect("java_decoded")
        .to_owned()
}

fn schema() -> KryoSchema {
    KryoSchema::from_json(SCHEMA).expect("jdk-types-schema.json")
}

fn natural<C: Codec<Order>>(codec: &'static str, fixture: &str, c: &C) -> Rates {
    let java = java_bytes(fixture);
    let read = c
        .decode(&java)
        .unwrap_or_else(|e| panic!("{codec} reads Java's Order: {e}"));
    assert_eq!(read, expected(), "{codec}: Java's Order");
    assert_eq!(
        read.total.as_bigint_and_exponent().1,
        2,
        "{codec}: 12.50 keeps its scale"
    );
    let written = c.encode(&read).expect("encodes");
    assert_eq!(
        c.decode(&written).expect("reads its own bytes"),
        read,
        "{codec} round trip"
    );
    Rates {
        codec,
        encode: Some(per_second(|| {
            black_box(c.encode(black_box(&read)).unwrap());
        })),
        decode: per_second(|| {
            black_box(c.decode(black_box(&java)).unwrap());
        }),
        bytes: java.len(),
    }
}

/// POJO fields by name (each codec has its own order), as Java's reading is.
fn by_name(value: &KryoValue) -> KryoValue {
    match value {
        KryoValue::Object { class, fields } => {
            let mut fields = fields.clone();
            fields.sort_by(|a, b| a.name.cmp(&b.name));
            KryoValue::Object {
                class: class.clone(),
                fields,
            }
        }
        other => other.clone(),
    }
}

type Read<'a> = &'a dyn Fn(&[u8]) -> KryoValue;
type Write<'a> = &'a dyn Fn(&KryoValue) -> Vec<u8>;

fn untyped(codec: &'static str, fixture: &str, read: Read<'_>, write: Write<'_>) -> Rates {
    let java = java_bytes(fixture);
    let value = read(&java);
    assert_eq!(
        by_name(&value).to_json_text(),
        java_decoded(fixture),
        "{codec}: Java's Order"
    );
    assert_eq!(value.java_class(), Some("corpus.Order"), "{codec}");
    let written = write(&value);
    assert_eq!(read(&written), value, "{codec} round trip");
    Rates {
        codec,
        encode: Some(per_second(|| {
            black_box(write(black_box(&value)));
        })),
        decode: per_second(|| {
            black_box(read(black_box(&java)));
        }),
        bytes: java.len(),
    }
}

pub fn run() -> Results {
    let schema = schema();
    let natural = vec![
        natural("kryo", "kryo", &KryoCodec::<Order>::new()),
        natural("lz4v2/kryo", "lz4v2", &Lz4V2Codec::<Order>::new()),
        natural(
            "serialization",
            "serialization",
            &SerializationCodec::<Order>::new().with_schema(schema.clone()),
        ),
        natural(
            "marshalling",
            "marshalling",
            &MarshallingCodec::<Order>::new().with_schema(schema.clone()),
        ),
        natural(
            "jackson (JavaTimeModule)",
            "jackson_jsr310",
            &JacksonCodec::<Order>::new().with_dialect(Dialect::JavaTimeModule),
        ),
    ];
    let s = &schema;
    let lz4v2 = Compression::Lz4V2;
    let mut untyped_rates = vec![
        untyped("kryo", "kryo", &|raw| KryoValue::decode(raw, Some(s)).unwrap(), &|v| {
            v.encode().unwrap()
        }),
        untyped(
            "lz4v2/kryo",
            "lz4v2",
            &|raw| KryoValue::decode(&lz4v2.decompress(raw, DEFAULT_MAX_DECOMPRESSED).unwrap(), Some(s)).unwrap(),
            &|v| lz4v2.compress(&v.encode().unwrap()).unwrap(),
        ),
        untyped(
            "serialization",
            "serialization",
            &|raw| serialization::decode_with_schema(raw, s).unwrap(),
            &|v| serialization::encode(v, Some(s)).unwrap(),
        ),
        untyped(
            "marshalling",
            "marshalling",
            &|raw| marshalling::decode_with_schema(raw, s).unwrap(),
            &|v| marshalling::encode(v, Some(s)).unwrap(),
        ),
    ];
    // Jackson has no KryoValue: the CLI and the dashboard print its JSON
    // without the type information, read only.
    let java = java_bytes("jackson_jsr310");
    let plain = jackson::to_plain_json(&java).expect("plain JSON of Java's Order");
    let want: Value = serde_json::from_str(&java_decoded("jackson_jsr310")).unwrap();
    let got: Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(got["id"], want["id"], "jackson plain JSON: {plain}");
    assert_eq!(got["tags"], want["tags"], "jackson plain JSON: {plain}");
    assert!(plain.contains("12.50"), "jackson plain JSON keeps the scale: {plain}");
    untyped_rates.push(Rates {
        codec: "jackson (JavaTimeModule), plain JSON",
        encode: None,
        decode: per_second(|| {
            black_box(jackson::to_plain_json(black_box(&java)).unwrap());
        }),
        bytes: java.len(),
    });
    Results {
        natural,
        untyped: untyped_rates,
    }
}
