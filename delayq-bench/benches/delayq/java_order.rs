//! Scenario 14, a realistic POJO: Java's `corpus.Order` (`String id`,
//! `long amount`, `LocalDateTime createdAt`, `BigDecimal total`,
//! `List<String> tags`) in each codec Java services send it with, against
//! Kryo measured in turns with it (5 rounds of 100 ms each side: on a
//! shared machine whose speed changes by the second, the ratio of each
//! round is what carries over). Decodes read the bytes Java's Redisson wrote
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

/// A codec's rate and Kryo's, measured in turns.
pub struct Paired {
    pub ours: f64,
    pub kryo: f64,
    /// The median of the rounds' ratios: a machine whose speed changes
    /// during the run changes both sides of each.
    pub ratio: f64,
}

/// One codec's rates against Kryo's, and the bytes of each.
pub struct Rates {
    pub codec: &'static str,
    pub encode: Option<Paired>,
    pub decode: Paired,
    pub bytes: usize,
    pub kryo_bytes: usize,
}

pub struct Results {
    /// The Rust struct.
    pub natural: Vec<Rates>,
    /// `KryoValue` (Jackson: its plain JSON).
    pub untyped: Vec<Rates>,
}

const ROUNDS: usize = 5;

/// Operations per second of `ours` and of `kryo`, in 5 rounds of about
/// 100 ms each, one after the other: the medians, and the median ratio.
fn paired(ours: &mut dyn FnMut(), kryo: &mut dyn FnMut()) -> Paired {
    let rate = |op: &mut dyn FnMut()| {
        let started = Instant::now();
        let mut n = 0u64;
        while started.elapsed().as_millis() < 100 {
            for _ in 0..32 {
                op();
            }
            n += 32;
        }
        n as f64 / started.elapsed().as_secs_f64()
    };
    let rounds: Vec<(f64, f64)> = (0..ROUNDS).map(|_| (rate(&mut *ours), rate(&mut *kryo))).collect();
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    Paired {
        ours: median(rounds.iter().map(|r| r.0).collect()),
        kryo: median(rounds.iter().map(|r| r.1).collect()),
        ratio: median(rounds.iter().map(|r| r.0 / r.1).collect()),
    }
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
    let kryo = KryoCodec::<Order>::new();
    let kryo_java = java_bytes("kryo");
    assert_eq!(kryo.decode(&kryo_java).expect("kryo reads Java's Order"), read);
    Rates {
        codec,
        encode: Some(paired(
            &mut || {
                black_box(c.encode(black_box(&read)).unwrap());
            },
            &mut || {
                black_box(kryo.encode(black_box(&read)).unwrap());
            },
        )),
        decode: paired(
            &mut || {
                black_box(c.decode(black_box(&java)).unwrap());
            },
            &mut || {
                black_box(kryo.decode(black_box(&kryo_java)).unwrap());
            },
        ),
        bytes: java.len(),
        kryo_bytes: kryo_java.len(),
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

/// Kryo's KryoValue read and write, the baseline of the untyped rows.
struct KryoSide<'a> {
    java: Vec<u8>,
    value: KryoValue,
    schema: &'a KryoSchema,
}

impl<'a> KryoSide<'a> {
    fn new(schema: &'a KryoSchema) -> Self {
        let java = java_bytes("kryo");
        let value = KryoValue::decode(&java, Some(schema)).expect("kryo reads Java's Order");
        KryoSide { java, value, schema }
    }

    fn read(&self) {
        black_box(KryoValue::decode(black_box(&self.java), Some(self.schema)).unwrap());
    }

    fn write(&self) {
        black_box(black_box(&self.value).encode().unwrap());
    }
}

fn untyped(codec: &'static str, fixture: &str, read: Read<'_>, write: Write<'_>, kryo: &KryoSide<'_>) -> Rates {
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
        encode: Some(paired(
            &mut || {
                black_box(write(black_box(&value)));
            },
            &mut || kryo.write(),
        )),
        decode: paired(
            &mut || {
                black_box(read(black_box(&java)));
            },
            &mut || kryo.read(),
        ),
        bytes: java.len(),
        kryo_bytes: kryo.java.len(),
    }
}

pub fn run() -> Results {
    let schema = schema();
    let natural = vec![
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
    let kryo = KryoSide::new(s);
    let lz4v2 = Compression::Lz4V2;
    let mut untyped_rates = vec![
        untyped(
            "lz4v2/kryo",
            "lz4v2",
            &|raw| KryoValue::decode(&lz4v2.decompress(raw, DEFAULT_MAX_DECOMPRESSED).unwrap(), Some(s)).unwrap(),
            &|v| lz4v2.compress(&v.encode().unwrap()).unwrap(),
            &kryo,
        ),
        untyped(
            "serialization",
            "serialization",
            &|raw| serialization::decode_with_schema(raw, s).unwrap(),
            &|v| serialization::encode(v, Some(s)).unwrap(),
            &kryo,
        ),
        untyped(
            "marshalling",
            "marshalling",
            &|raw| marshalling::decode_with_schema(raw, s).unwrap(),
            &|v| marshalling::encode(v, Some(s)).unwrap(),
            &kryo,
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
        decode: paired(
            &mut || {
                black_box(jackson::to_plain_json(black_box(&java)).unwrap());
            },
            &mut || kryo.read(),
        ),
        bytes: java.len(),
        kryo_bytes: kryo.java.len(),
    });
    Results {
        natural,
        untyped: untyped_rates,
    }
}
