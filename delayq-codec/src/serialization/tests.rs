//! The 27 values real Redisson `SerializationCodec` wrote
//! (`compat/fixtures/codecs.json`), both ways, untyped and typed, and
//! across codecs; then more JDK streams (`serialization-extra.json`).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::*;
use crate::kryo::{JavaType, JavaUuid};
use crate::test_support::pojos::{schema_with_uids as schema, Event, Order, Status};
use crate::Codec;
use delayq_test_support::vectors::{codecs, hex, kryo_cases, unhex};

const EXTRA: &str = include_str!("../../../compat/fixtures/serialization-extra.json");
const JAVA_READS_OURS: &str = include_str!("../../../compat/fixtures/serialization-rust.json");

pub(super) struct Case {
    pub(super) name: String,
    /// Java's SerializationCodec bytes.
    pub(super) raw: Vec<u8>,
    pub(super) java_decoded: String,
    /// Java's Kryo5Codec bytes of the same value.
    kryo: Vec<u8>,
    json: Value,
}

pub(super) fn cases() -> Vec<Case> {
    let codecs = codecs();
    let ser = &codecs["codecs"]["serialization"]["cases"];
    kryo_cases()
        .into_iter()
        .map(|c| Case {
            raw: unhex(ser[&c.name]["hex"].as_str().unwrap()),
            java_decoded: ser[&c.name]["java_decoded"].as_str().unwrap().to_owned(),
            kryo: c.raw,
            json: c.json,
            name: c.name,
        })
        .collect()
}

/// The value Java serialized, as Kryo decoding gives it; for
/// `linkedhashmap_nested` (whose Java value differs between the two files)
/// from its JSON, integers as `Long`s.
fn expected(case: &Case, schema: &KryoSchema) -> KryoValue {
    if case.name == "linkedhashmap_nested" {
        let ones = list("java.util.ArrayList", vec![KryoValue::Long(1), KryoValue::Long(2)]);
        return KryoValue::Map {
            class: "java.util.LinkedHashMap".into(),
            entries: vec![(s("z"), KryoValue::Long(1)), (s("a"), ones)],
        };
    }
    KryoValue::decode(&case.kryo, Some(schema)).unwrap()
}

/// Objects' fields by name (Kryo and Java order them differently).
fn sorted(value: &KryoValue) -> KryoValue {
    match value {
        KryoValue::Object { class, fields } => {
            let mut fields: Vec<_> = fields
                .iter()
                .map(|f| KryoField::new(&f.name, f.declared.clone(), sorted(&f.value)))
                .collect();
            fields.sort_by(|a, b| a.name.cmp(&b.name));
            KryoValue::Object {
                class: class.clone(),
                fields,
            }
        }
        KryoValue::Collection { class, items } => KryoValue::Collection {
            class: class.clone(),
            items: items.iter().map(sorted).collect(),
        },
        KryoValue::Map { class, entries } => KryoValue::Map {
            class: class.clone(),
            entries: entries.iter().map(|(k, v)| (sorted(k), sorted(v))).collect(),
        },
        other => other.clone(),
    }
}

use crate::kryo::KryoField;

/// Java's bytes for `pojo_event_nested` with the `attrs` map's threshold
/// and capacity as a map filled by `put` has them (12 and 16): the peer's
/// `Event.setAttrs` copies the map (`new HashMap<>(attrs)`: 1 and 2), which
/// the value cannot tell. Java reads both (`serialization-rust.json`).
fn event_nested_as_filled(raw: &[u8]) -> Vec<u8> {
    let copied = unhex("3f400000000000017708000000020000000174");
    let filled = unhex("3f4000000000000c7708000000100000000174");
    let at = raw.windows(copied.len()).position(|w| w == copied).unwrap();
    let mut out = raw.to_vec();
    out[at..at + copied.len()].copy_from_slice(&filled);
    out
}

#[test]
fn every_vector_decodes_to_the_value_kryo_decoding_gives() {
    let schema = schema();
    for case in cases() {
        let plain = decode(&case.raw).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(plain.to_json(), case.json, "{}: JSON", case.name);
        let typed = decode_with_schema(&case.raw, &schema).unwrap();
        assert_eq!(sorted(&typed), sorted(&expected(&case, &schema)), "{}", case.name);
    }
}

#[test]
fn every_vector_value_encodes_to_javas_bytes() {
    let schema = schema();
    for case in cases() {
        let value = expected(&case, &schema);
        let ours = encode(&value, Some(&schema)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let java = match case.name.as_str() {
            "pojo_event_nested" => event_nested_as_filled(&case.raw),
            _ => case.raw.clone(),
        };
        assert_eq!(hex(&ours), hex(&java), "{}", case.name);
        // Without a schema's types: the stream's own declarations suffice.
        let plain = decode(&case.raw).unwrap();
        assert_eq!(
            hex(&encode(&plain, Some(&schema)).unwrap()),
            hex(&java),
            "{}: re-encoded",
            case.name
        );
    }
}

#[test]
fn java_reads_what_we_write_as_the_value_it_wrote() {
    // Captured by running each version's peer on our bytes (see the file).
    let ours: Value = serde_json::from_str(JAVA_READS_OURS).unwrap();
    let schema = schema();
    let cases = cases();
    for case in &cases {
        let entry = &ours["cases"][&case.name];
        let ours_hex = hex(&encode(&expected(case, &schema), Some(&schema)).unwrap());
        assert_eq!(
            entry["hex"].as_str(),
            Some(ours_hex.as_str()),
            "{}: the captured bytes are still ours",
            case.name
        );
        for version in ["3.21.0", "3.52.0", "4.7.0"] {
            assert_eq!(
                entry["java_decoded"][version].as_str(),
                Some(case.java_decoded.as_str()),
                "{} read by {version}",
                case.name
            );
        }
    }
    assert_eq!(ours["cases"].as_object().unwrap().len(), cases.len());
}

#[test]
fn pojos_move_between_java_serialization_and_kryo_both_ways() {
    let schema = schema();
    for case in cases()
        .iter()
        .filter(|c| ["pojo_order", "pojo_event_nested"].contains(&c.name.as_str()))
    {
        // Java serialization → Kryo: the schema gives List<String>, the enum's ordinal...
        let from_java = decode_with_schema(&case.raw, &schema).unwrap();
        assert_eq!(
            hex(&from_java.encode().unwrap()),
            hex(&case.kryo),
            "{}: as Kryo",
            case.name
        );
        // ... which the stream alone cannot: a raw List's elements get class names, an enum no ordinal.
        assert_ne!(
            decode(&case.raw).unwrap().encode().ok(),
            Some(case.kryo.clone()),
            "{}",
            case.name
        );
        // Kryo → Java serialization.
        let from_kryo = KryoValue::decode(&case.kryo, Some(&schema)).unwrap();
        let java = match case.name.as_str() {
            "pojo_event_nested" => event_nested_as_filled(&case.raw),
            _ => case.raw.clone(),
        };
        assert_eq!(
            hex(&encode(&from_kryo, Some(&schema)).unwrap()),
            hex(&java),
            "{}: as Java serialization",
            case.name
        );
    }
}

// The peers' POJOs as Rust types.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "java.util.HashSet")]
struct Set(Vec<String>);

/// Decodes with `SerializationCodec<T>`, compares with the captured JSON
/// read into the same type, and encodes back to Java's bytes.
fn typed<T>(case: &Case, codec: SerializationCodec<T>, java: &[u8])
where
    T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug + 'static,
{
    let value = codec.decode(&case.raw).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    if std::any::type_name::<T>() == std::any::type_name::<KryoValue>() {
        // serde_json would make any JSON object a HashMap: compare JSON.
        let json = serde_json::to_value(&value).unwrap();
        assert_eq!(json, case.json, "{}", case.name);
    } else {
        if let Ok(expected) = serde_json::from_value::<T>(case.json.clone()) {
            assert_eq!(value, expected, "{}", case.name);
        }
    }
    let ours = codec.encode(&value).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    assert_eq!(hex(&ours), hex(java), "{}: re-encoded", case.name);
}

#[test]
fn every_vector_round_trips_through_rust_types() {
    use crate::kryo::{JavaBigDecimal, JavaBytes, JavaDate, JavaInstant};
    fn pojos<T>() -> SerializationCodec<T> {
        SerializationCodec::new()
            .with_serial_version_uid("compat.Order", 1)
            .with_serial_version_uid("compat.Event", 1)
    }
    for case in cases() {
        let raw = case.raw.clone();
        match case.name.as_str() {
            "string" | "string_unicode" | "string_empty" => typed::<String>(&case, SerializationCodec::new(), &raw),
            "long" | "long_negative" | "long_max" => typed::<i64>(&case, SerializationCodec::new(), &raw),
            "integer" => typed::<i32>(&case, SerializationCodec::new(), &raw),
            "double" => typed::<f64>(&case, SerializationCodec::new(), &raw),
            "boolean" => typed::<bool>(&case, SerializationCodec::new(), &raw),
            "short" => typed::<i16>(&case, SerializationCodec::new(), &raw),
            "float" => typed::<f32>(&case, SerializationCodec::new(), &raw),
            "char" => typed::<char>(&case, SerializationCodec::new(), &raw),
            "bytes" => typed::<JavaBytes>(&case, SerializationCodec::new(), &raw),
            "pojo_order" | "pojo_order_null_id" => typed::<Order>(&case, pojos(), &raw),
            // With a schema: Option<Order> = None alone would declare the field Object.
            "pojo_event_all_nulls" => typed::<Event>(&case, pojos().with_schema(schema()), &raw),
            "pojo_event_nested" => typed::<Event>(&case, pojos().with_schema(schema()), &event_nested_as_filled(&raw)),
            "hashmap" => typed::<BTreeMap<String, KryoValue>>(&case, SerializationCodec::new(), &raw),
            "arraylist" => typed::<Vec<String>>(&case, SerializationCodec::new(), &raw),
            "arraylist_mixed_nulls" | "linkedhashmap_nested" => {
                typed::<KryoValue>(&case, SerializationCodec::new(), &raw)
            }
            "hashset" => typed::<Set>(&case, SerializationCodec::new(), &raw),
            "uuid" => typed::<JavaUuid>(&case, SerializationCodec::new(), &raw),
            "enum" => typed::<Status>(&case, SerializationCodec::new(), &raw),
            "date" => typed::<JavaDate>(&case, SerializationCodec::new(), &raw),
            "instant" => typed::<JavaInstant>(&case, SerializationCodec::new(), &raw),
            "bigdecimal" => {
                typed::<JavaBigDecimal>(&case, SerializationCodec::new(), &raw);
                let codec = SerializationCodec::<JavaBigDecimal>::new();
                assert_eq!(codec.decode(&raw).unwrap().as_str(), "12.50");
            }
            other => panic!("no Rust type for case {other}"),
        }
    }
}

#[test]
fn a_pojo_without_a_serial_version_uid_is_an_encode_error_that_says_how_to_give_it() {
    let order = Order {
        id: None,
        amount: 1,
        tags: vec![],
    };
    let error = SerializationCodec::<Order>::new().encode(&order).unwrap_err();
    let error = error.downcast_ref::<SerializationError>().unwrap();
    assert_eq!(error.kind(), SerializationErrorKind::Encode);
    for needle in ["compat.Order", "serialVersionUID", "with_serial_version_uid"] {
        assert!(error.message().contains(needle), "{error}");
    }
}

#[test]
fn a_kryo_payload_given_to_this_codec_is_diagnosed() {
    let kryo = cases().into_iter().find(|c| c.name == "pojo_order").unwrap().kryo;
    let codec = SerializationCodec::<Order>::new();
    assert!(codec.decode(&kryo).is_err());
    assert!(codec.diagnose(&kryo).unwrap().contains("KryoCodec"));
    assert_eq!(codec.diagnose(&MAGIC), None);
}

/// `serialization-extra.json`: a case's bytes by name.
pub(super) fn extra(name: &str) -> Vec<u8> {
    let file: Value = serde_json::from_str(EXTRA).unwrap();
    let case = file["cases"].as_array().unwrap().iter().find(|c| c["case"] == name);
    unhex(
        case.unwrap_or_else(|| panic!("no case {name}"))["hex"]
            .as_str()
            .unwrap(),
    )
}

fn obj(class: &str, fields: &[(&str, &str, KryoValue)]) -> KryoValue {
    KryoValue::Object {
        class: class.into(),
        fields: fields
            .iter()
            .map(|(n, t, v)| KryoField::new(*n, JavaType::parse(t).unwrap(), v.clone()))
            .collect(),
    }
}

fn list(class: &str, items: Vec<KryoValue>) -> KryoValue {
    KryoValue::Collection {
        class: class.into(),
        items,
    }
}

fn s(text: &str) -> KryoValue {
    KryoValue::String(text.into())
}

#[test]
fn more_jdk_classes_decode_and_those_delayq_writes_encode_to_javas_bytes() {
    let child = obj(
        "fixture.Gen$Child",
        &[
            ("level", "int", KryoValue::Int(1)),
            ("name", "String", s("p")),
            ("id", "long", KryoValue::Long(99)),
            ("tags", "java.util.List", list("java.util.ArrayList", vec![s("t")])),
        ],
    );
    let color = |name: &str| KryoValue::Enum {
        class: "fixture.Gen$Color".into(),
        ordinal: None,
        name: Some(name.into()),
    };
    let decimal = |text: &str| KryoValue::big_decimal(text).unwrap();
    let map = |class: &str, entries: Vec<(KryoValue, KryoValue)>| KryoValue::Map {
        class: class.into(),
        entries,
    };
    let longs = |n: i64| (0..n).map(KryoValue::Long).collect::<Vec<_>>();
    // (case, value, whether delayq writes Java's very bytes)
    let cases = vec![
        ("linkedlist", list("java.util.LinkedList", vec![s("a"), s("b")]), true),
        (
            "treemap",
            map(
                "java.util.TreeMap",
                vec![(s("a"), KryoValue::Long(1)), (s("b"), KryoValue::Long(2))],
            ),
            true,
        ),
        ("treeset", list("java.util.TreeSet", vec![s("x"), s("y")]), true),
        (
            "arraydeque",
            list("java.util.ArrayDeque", longs(3)[1..].to_vec()),
            false,
        ),
        (
            "linkedhashset",
            list("java.util.LinkedHashSet", vec![s("z"), s("a")]),
            true,
        ),
        (
            "int_array",
            list("[I", vec![KryoValue::Int(1), KryoValue::Int(-2), KryoValue::Int(3)]),
            false,
        ),
        (
            "string_array",
            list("[Ljava.lang.String;", vec![s("a"), KryoValue::Null]),
            false,
        ),
        (
            "shared_object",
            list("java.util.ArrayList", vec![child.clone(), child.clone()]),
            false,
        ),
        (
            "long_cache",
            list("java.util.ArrayList", [1, 1, 1000, 1000].map(KryoValue::Long).to_vec()),
            true,
        ),
        (
            "enum_twice",
            list("java.util.ArrayList", vec![color("RED"), color("GREEN"), color("RED")]),
            true,
        ),
        (
            "plain_write_object",
            obj("fixture.Gen$Plain", &[("x", "int", KryoValue::Int(6))]),
            false,
        ),
        ("superclass_chain", child.clone(), false),
        (
            "biginteger",
            KryoValue::BigInteger(decimal_bytes("-1234567890123456789012345")),
            true,
        ),
        ("bigdecimal_negative", decimal("-0.001"), true),
        ("bigdecimal_zero", decimal("0"), true),
        (
            "bigdecimal_shared_intval",
            list("java.util.ArrayList", vec![decimal("1.5"), decimal("0.15")]),
            true,
        ),
        ("date_before_epoch", KryoValue::Date(-1000), true),
        (
            "hashmap_long_keys",
            map(
                "java.util.HashMap",
                vec![(KryoValue::Long(7), KryoValue::Null), (KryoValue::Long(300), s("v"))],
            ),
            true,
        ),
        ("hashmap_empty", map("java.util.HashMap", vec![]), true),
        (
            "hashmap_copied",
            map("java.util.HashMap", vec![(s("k"), s("v"))]),
            false,
        ),
        ("hashset_empty", list("java.util.HashSet", vec![]), true),
        ("hashset_13", list("java.util.HashSet", longs(13)), true),
        (
            "hashmap_13",
            map(
                "java.util.HashMap",
                longs(13).into_iter().map(|v| (v.clone(), v)).collect(),
            ),
            true,
        ),
        ("byte_boxed", KryoValue::Byte(-3), true),
        ("vector", list("java.util.Vector", vec![s("v")]), false),
        ("instant_negative", KryoValue::Instant { seconds: -1, nanos: 5 }, true),
        (
            "object_array_nested",
            list(
                "[Ljava.lang.Object;",
                vec![list("[J", vec![KryoValue::Long(7)]), s("s")],
            ),
            false,
        ),
    ];
    let mut uids = KryoSchema::new();
    for class in ["fixture.Gen$Child", "fixture.Gen$Plain"] {
        uids = uids.with_class(class, &[]).unwrap();
    }
    let uids = uids
        .with_serial_version_uid("fixture.Gen$Child", 8)
        .unwrap()
        .with_serial_version_uid("fixture.Gen$Plain", 2)
        .unwrap();
    for (name, value, exact) in cases {
        let raw = extra(name);
        let read = decode(&raw).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(read, value, "{name}");
        match encode(&value, Some(&uids)) {
            Ok(ours) if exact => assert_eq!(hex(&ours), hex(&raw), "{name}: encoded"),
            // Java's bytes, or others Java reads as the same value.
            Ok(ours) => assert_eq!(sorted(&decode(&ours).unwrap()), sorted(&value), "{name}: round trip"),
            Err(e) => assert!(!exact, "{name}: {e}"),
        }
    }
}

fn decimal_bytes(text: &str) -> Vec<u8> {
    match KryoValue::big_decimal(text).unwrap() {
        KryoValue::BigDecimal { unscaled, .. } => unscaled,
        _ => unreachable!(),
    }
}

#[test]
fn what_delayq_does_not_read_is_a_typed_error_naming_the_class() {
    for (name, kind, needles) in [
        (
            "custom_write_object",
            SerializationErrorKind::Unsupported,
            &["fixture.Gen$Custom", "custom data"][..],
        ),
        ("list_contains_itself", SerializationErrorKind::Cyclic, &["cycle"]),
    ] {
        let error = decode(&extra(name)).unwrap_err();
        assert_eq!(error.kind(), kind, "{name}: {error}");
        assert!(error.offset().is_some(), "{name}");
        for needle in needles {
            assert!(error.message().contains(needle), "{name}: {error}");
        }
    }
}

#[test]
fn java_time_values_read_as_their_fields() {
    // extra's Duration.ofSeconds(5), which this reader refused before java.time.Ser was read whole.
    assert_eq!(
        decode(&extra("duration")).unwrap(),
        KryoValue::Time(crate::kryo::JavaTime::Duration { seconds: 5, nanos: 0 })
    );
}

/// An array's class descriptor carries the `serialVersionUID` Java computes
/// for its class (arrays declare none): any array class is written, with the
/// UIDs `ObjectStreamClass.lookup(...).getSerialVersionUID()` gives.
#[test]
fn arrays_of_any_class_carry_the_uid_java_computes() {
    for (class, uid) in [
        ("[I", 0x4dba_6026_76ea_b2a5_u64),
        ("[[I", 0x17f7_e44f_198f_893c),
        ("[Ljava.lang.String;", 0xadd2_56e7_e91d_7b47),
        ("[Ljava.lang.Long;", 0x7de1_0ab2_bbbc_632b),
        ("[Ljava.math.BigDecimal;", 0x48f3_6b72_8b37_093c),
        ("[Ljava.time.Instant;", 0x7b94_df45_3b29_b54f),
        ("[[C", 0x9832_7eb7_2369_a9ca),
        ("[[J", 0xfe76_f876_4a55_dfbd),
    ] {
        let raw = encode(&list(class, vec![]), None).unwrap_or_else(|e| panic!("{class}: {e}"));
        // Magic, version, TC_ARRAY, TC_CLASSDESC, the name, then the UID.
        let at = 4 + 2 + 2 + class.len();
        assert_eq!(raw[4..6], [0x75, 0x72], "{class}");
        assert_eq!(raw[at..at + 8], uid.to_be_bytes(), "{class}");
    }
}

#[test]
fn what_delayq_does_not_write_is_an_encode_error() {
    let unwritable = [
        list("java.util.concurrent.LinkedBlockingQueue", vec![]),
        KryoValue::Map {
            class: "java.util.IdentityHashMap".into(),
            entries: vec![],
        },
        KryoValue::Enum {
            class: "compat.Event$Status".into(),
            ordinal: Some(7),
            name: None,
        },
    ];
    for value in unwritable {
        let error = encode(&value, Some(&schema())).unwrap_err();
        assert_eq!(error.kind(), SerializationErrorKind::Encode, "{value:?}");
    }
    // An enum known by its ordinal only takes its name from the schema.
    let paid = KryoValue::Enum {
        class: "compat.Event$Status".into(),
        ordinal: Some(1),
        name: None,
    };
    let raw = encode(&paid, Some(&schema())).unwrap();
    assert_eq!(decode(&raw).unwrap().to_json(), json!("PAID"));
    // A primitive field given a value that does not fit.
    let bad = obj("compat.Order", &[("amount", "long", s("x"))]);
    assert!(encode(&bad, Some(&schema()))
        .unwrap_err()
        .message()
        .contains("compat.Order.amount"));
}

#[test]
fn a_long_string_is_a_tc_longstring_both_ways() {
    let text = "ż".repeat(40_000); // 80 000 bytes of modified UTF-8
    let raw = encode(&s(&text), None).unwrap();
    assert_eq!(raw[4], 0x7c);
    assert_eq!(raw[5..13], 80_000u64.to_be_bytes());
    assert_eq!(decode(&raw).unwrap(), s(&text));
}

#[test]
fn block_data_may_come_in_long_and_split_records() {
    // java.util.Date with its 8 bytes as a TC_BLOCKDATALONG, then as two records.
    let date = unhex("aced00057372000e6a6176612e7574696c2e44617465686a81014b5974190300007870");
    let mut long = date.clone();
    long.extend_from_slice(&unhex("7a00000008000001a2062de20078"));
    let mut split = date;
    split.extend_from_slice(&unhex("77030000017705a2062de20078"));
    for raw in [long, split] {
        assert_eq!(
            decode(&raw).unwrap(),
            KryoValue::Date(1_795_400_000_000),
            "{}",
            hex(&raw)
        );
    }
}

#[test]
fn uids_come_from_the_codec_or_the_schema() {
    let mut uids = HashMap::new();
    uids.insert("compat.Order".to_owned(), 1);
    let order = obj("compat.Order", &[("amount", "long", KryoValue::Long(1))]);
    let with_map = encode_with(
        &order,
        Classes {
            schema: None,
            uids: Some(&uids),
        },
    )
    .unwrap();
    let schema = KryoSchema::new()
        .with_class("compat.Order", &[("amount", "long")])
        .unwrap()
        .with_serial_version_uid("compat.Order", 1)
        .unwrap();
    assert_eq!(with_map, encode(&order, Some(&schema)).unwrap());
}

/// A class descriptor kept from an earlier payload on the thread is taken
/// only where the bytes are the same: every payload, whole, cut short or
/// with a byte changed, reads to what it reads with nothing kept, errors
/// (kind, offset, message) included.
#[test]
fn kept_class_descriptors_read_as_reading_afresh_does() {
    let mut variants = Vec::new();
    for case in [
        "pojo_order",
        "pojo_event_nested",
        "bigdecimal",
        "pojo_order_null_id",
        "enum",
        "linkedhashmap_nested",
    ] {
        let raw = delayq_test_support::vectors::codec_case("serialization", case);
        variants.push(raw.clone());
        for i in (4..raw.len()).step_by(5) {
            let mut changed = raw.clone();
            changed[i] ^= 0x01;
            variants.push(changed);
            variants.push(raw[..i].to_vec());
        }
    }
    let afresh: Vec<String> = variants
        .iter()
        .map(|raw| {
            super::kept::clear();
            format!("{:?}", decode(raw))
        })
        .collect();
    super::kept::clear();
    for round in 0..2 {
        for (raw, want) in variants.iter().zip(&afresh) {
            assert_eq!(&format!("{:?}", decode(raw)), want, "round {round}, {}", hex(raw));
        }
    }
    assert!(super::kept::count() > 0, "no descriptor was kept");
}
