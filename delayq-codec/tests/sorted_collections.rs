//! Sorted collections built in Rust out of their natural order. Java
//! serialization and River hand a `TreeMap`/`TreeSet` to Java in the order
//! written, and Java builds its tree from it without comparing (an invalid
//! tree: lookups miss, silently); a `ConcurrentSkipList*` refuses it on
//! Java's side. So every codec writes them in Java's natural order (String
//! by UTF-16 code units, as `compareTo`), refuses two elements `compareTo`
//! calls equal (Java would keep one), and, where Java trusts the order
//! written, refuses elements whose natural order delayq does not know.

use delayq_codec::kryo::{KryoSchema, KryoValue};
use delayq_codec::{jackson, marshalling, serialization};
use serde_json::Value;

const FIXTURE: &str = include_str!("../../compat/fixtures/jdk-types.json");
const SCHEMA: &str = include_str!("../../compat/fixtures/jdk-types-schema.json");

const SORTED_SETS: [&str; 2] = ["java.util.TreeSet", "java.util.concurrent.ConcurrentSkipListSet"];
const SORTED_MAPS: [&str; 2] = ["java.util.TreeMap", "java.util.concurrent.ConcurrentSkipListMap"];

fn s(text: &str) -> KryoValue {
    KryoValue::String(text.into())
}

fn set(class: &str, items: Vec<KryoValue>) -> KryoValue {
    KryoValue::Collection {
        class: class.into(),
        items,
    }
}

fn map(class: &str, keys: Vec<KryoValue>) -> KryoValue {
    KryoValue::Map {
        class: class.into(),
        entries: keys.into_iter().map(|k| (k, KryoValue::Int(1))).collect(),
    }
}

fn schema() -> KryoSchema {
    KryoSchema::from_json(SCHEMA).unwrap()
}

/// Each codec's round trip of a value, or its error's text.
fn round_trips(value: &KryoValue) -> Vec<(&'static str, Result<KryoValue, String>)> {
    let schema = schema();
    vec![
        (
            "kryo",
            value
                .encode()
                .map_err(|e| e.to_string())
                .and_then(|raw| KryoValue::decode(&raw, Some(&schema)).map_err(|e| e.to_string())),
        ),
        (
            "serialization",
            serialization::encode(value, Some(&schema))
                .map_err(|e| e.to_string())
                .and_then(|raw| serialization::decode_with_schema(&raw, &schema).map_err(|e| e.to_string())),
        ),
        (
            "marshalling",
            marshalling::encode(value, Some(&schema))
                .map_err(|e| e.to_string())
                .and_then(|raw| marshalling::decode_with_schema(&raw, &schema).map_err(|e| e.to_string())),
        ),
        (
            "jackson",
            jackson::encode_value(value, jackson::Dialect::JavaTimeModule)
                .map_err(|e| e.to_string())
                .and_then(|raw| jackson::decode_value(&raw, Some(&schema)).map_err(|e| e.to_string())),
        ),
    ]
}

#[test]
fn sorted_collections_are_written_in_javas_natural_order() {
    // UTF-16 order puts U+1F600 (a surrogate pair, 0xD83D...) before
    // U+FFFF; code point order (Rust's) the other way round.
    let keys = || vec![s("b"), s("\u{ffff}"), s("a"), s("😀")];
    let natural = vec![s("a"), s("b"), s("😀"), s("\u{ffff}")];
    let numbers = vec![KryoValue::Long(10), KryoValue::Long(-3), KryoValue::Long(2)];
    let sorted_numbers = vec![KryoValue::Long(-3), KryoValue::Long(2), KryoValue::Long(10)];
    for class in SORTED_SETS {
        for (codec, got) in round_trips(&set(class, keys())) {
            assert_eq!(got, Ok(set(class, natural.clone())), "{codec} {class}");
        }
        for (codec, got) in round_trips(&set(class, numbers.clone())) {
            assert_eq!(got, Ok(set(class, sorted_numbers.clone())), "{codec} {class}");
        }
    }
    for class in SORTED_MAPS {
        for (codec, got) in round_trips(&map(class, keys())) {
            assert_eq!(got, Ok(map(class, natural.clone())), "{codec} {class}");
        }
    }
}

#[test]
fn elements_compare_to_calls_equal_are_refused() {
    let decimals = vec![
        KryoValue::big_decimal("2.5").unwrap(),
        KryoValue::big_decimal("2.50").unwrap(),
    ];
    for value in [
        set("java.util.TreeSet", vec![s("a"), s("a")]),
        map("java.util.TreeMap", vec![s("k"), s("k")]),
        set("java.util.concurrent.ConcurrentSkipListSet", decimals),
    ] {
        for (codec, got) in round_trips(&value) {
            let error = got.unwrap_err();
            assert!(error.contains("equal"), "{codec}: {error}");
        }
    }
}

/// Two `corpus.Order`s: a class whose `compareTo` delayq does not know.
fn orders() -> Vec<KryoValue> {
    let doc: Value = serde_json::from_str(FIXTURE).unwrap();
    let hex = doc["codecs"]["kryo"]["pojo_order"]["hex"].as_str().unwrap();
    let raw: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let order = KryoValue::decode(&raw, Some(&schema())).unwrap();
    vec![order.clone(), order]
}

#[test]
fn an_order_delayq_does_not_know_is_refused_where_java_trusts_it() {
    for class in SORTED_SETS {
        let value = set(class, orders());
        for (codec, got) in round_trips(&value) {
            match codec {
                // Java adds each element to the set it builds, with compareTo.
                "kryo" | "jackson" => assert!(got.is_ok(), "{codec} {class}: {got:?}"),
                _ => {
                    let error = got.unwrap_err();
                    assert!(
                        error.contains(class) && error.contains("corpus.Order"),
                        "{codec}: {error}"
                    );
                }
            }
        }
    }
    // One element has no order to keep.
    for (codec, got) in round_trips(&set("java.util.TreeSet", orders()[..1].to_vec())) {
        assert!(got.is_ok(), "{codec}: {got:?}");
    }
}
