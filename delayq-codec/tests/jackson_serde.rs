//! The serde path of Jackson (`JacksonCodec`, `jackson::to_plain_json`,
//! auto-detection) on what Java's `JsonJacksonCodec` wrote
//! (`compat/fixtures/jdk-types.json`): numbers keep every digit, maps their
//! order, type wrappers come off (generic ones too), and a number the Rust
//! target cannot hold exactly is refused naming the field, never rounded.

use delayq_codec::compress::DEFAULT_MAX_DECOMPRESSED;
use delayq_codec::detect::detect;
use delayq_codec::jackson::to_plain_json;
use delayq_codec::{Codec, JacksonCodec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

const FIXTURE: &str = include_str!("../../compat/fixtures/jdk-types.json");

/// The bytes Java's plain `JsonJacksonCodec` wrote for `case`.
fn java(case: &str) -> Vec<u8> {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    let hex = fixture["codecs"]["jackson"][case]["hex"].as_str().unwrap();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// `java(case)`'s value as the property `value` of a `t.Holder`, as Jackson
/// writes a field declared `Object`.
fn held(case: &str) -> Vec<u8> {
    let inner = String::from_utf8(java(case)).unwrap();
    format!(r#"{{"@class":"t.Holder","value":{inner}}}"#).into_bytes()
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename = "t.Holder")]
struct Holder<T> {
    value: T,
}

fn decode<T: serde::de::DeserializeOwned + serde::Serialize + 'static>(raw: &[u8]) -> Result<T, String> {
    JacksonCodec::<T>::new().decode(raw).map_err(|e| e.to_string())
}

#[test]
fn a_big_integer_reads_every_digit_into_string_and_128_bit_fields() {
    assert_eq!(
        decode::<Holder<String>>(&held("big_integer")).unwrap().value,
        "123456789012345678901234567890"
    );
    assert_eq!(
        decode::<Holder<u128>>(&held("big_integer")).unwrap().value,
        123456789012345678901234567890
    );
    assert_eq!(
        decode::<Holder<i128>>(&held("big_integer_negative")).unwrap().value,
        -98765432109876543210
    );
    assert_eq!(decode::<Holder<i64>>(&held("big_integer_small")).unwrap().value, 42);
    // At the root too.
    assert_eq!(
        decode::<String>(&java("big_integer")).unwrap(),
        "123456789012345678901234567890"
    );
}

#[test]
fn a_big_decimal_keeps_its_scale_in_a_string_and_its_value_in_a_double() {
    assert_eq!(
        decode::<Holder<String>>(&held("big_decimal_scale")).unwrap().value,
        "2.50"
    );
    assert_eq!(
        decode::<Holder<String>>(&held("big_decimal_long")).unwrap().value,
        "-12345678901234567890.123456789"
    );
    assert_eq!(decode::<Holder<f64>>(&held("big_decimal_scale")).unwrap().value, 2.5);
}

#[test]
fn a_number_a_target_cannot_hold_exactly_is_refused_naming_the_field() {
    for case in ["big_integer", "big_decimal_long"] {
        for err in [
            decode::<Holder<f64>>(&held(case)).unwrap_err(),
            decode::<Holder<Value>>(&held(case)).unwrap_err(),
            decode::<Holder<i64>>(&held(case)).unwrap_err(),
        ] {
            assert!(err.contains("value"), "{case}: {err}");
        }
    }
    // 2^53 + 1 is no double; an Instant's nanoseconds are not either.
    let raw = br#"{"@class":"t.Holder","value":["java.lang.Long",9007199254740993]}"#;
    let err = decode::<Holder<f64>>(raw).unwrap_err();
    assert!(err.contains("value") && err.contains("9007199254740993"), "{err}");
    assert_eq!(decode::<Holder<i64>>(raw).unwrap().value, 9007199254740993);
    let err = decode::<Holder<f64>>(br#"{"@class":"t.Holder","value":1795400000.123456789}"#).unwrap_err();
    assert!(err.contains("value"), "{err}");
    // A double Java wrote reads as that double.
    assert_eq!(
        decode::<Holder<f64>>(br#"{"@class":"t.Holder","value":1.7954000001234567E9}"#)
            .unwrap()
            .value,
        1.7954000001234567E9
    );
    assert_eq!(
        decode::<Holder<f64>>(br#"{"@class":"t.Holder","value":0.1}"#)
            .unwrap()
            .value,
        0.1
    );
}

#[test]
fn a_linked_hash_map_keeps_its_order_for_targets_that_keep_one() {
    let pairs = decode::<Vec<(String, i64)>>(&java("linked_hash_map")).unwrap();
    assert_eq!(
        pairs,
        [("z".to_string(), 1), ("a".to_string(), 2), ("m".to_string(), 3)]
    );
    // A BTreeMap asks for its own order.
    let sorted = decode::<std::collections::BTreeMap<String, i64>>(&java("linked_hash_map")).unwrap();
    assert_eq!(
        sorted.into_iter().collect::<Vec<_>>(),
        [("a".into(), 2), ("m".into(), 3), ("z".into(), 1)]
    );
}

#[test]
fn an_enum_set_reads_without_its_generic_type_wrapper() {
    #[derive(Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
    #[serde(rename_all = "UPPERCASE")]
    enum Day {
        Monday,
        Friday,
    }
    assert_eq!(decode::<Vec<String>>(&java("enum_set")).unwrap(), ["MONDAY", "FRIDAY"]);
    assert_eq!(
        decode::<Vec<Day>>(&java("enum_set")).unwrap(),
        [Day::Monday, Day::Friday]
    );
    assert_eq!(decode::<Holder<Vec<Day>>>(&held("enum_set_empty")).unwrap().value, []);
    assert_eq!(
        decode::<Value>(&java("enum_set_ours")).unwrap(),
        serde_json::json!(["RED", "BLUE"])
    );
}

#[test]
fn plain_json_keeps_digits_scale_order_and_drops_every_wrapper() {
    for (case, plain) in [
        ("big_integer", "123456789012345678901234567890"),
        ("big_integer_negative", "-98765432109876543210"),
        ("big_decimal_scale", "2.50"),
        ("big_decimal_long", "-12345678901234567890.123456789"),
        ("linked_hash_map", r#"{"z":1,"a":2,"m":3}"#),
        ("enum_set", r#"["MONDAY","FRIDAY"]"#),
        ("enum_set_ours", r#"["RED","BLUE"]"#),
    ] {
        assert_eq!(to_plain_json(&java(case)).unwrap().to_string(), plain, "{case}");
        // Auto-detection reads Jackson the same way.
        let found = detect(&java(case), None, DEFAULT_MAX_DECOMPRESSED);
        assert_eq!(found.codec, "jackson", "{case}");
        assert_eq!(found.value.to_json_text(), plain, "{case}");
    }
    // An Instant's nanoseconds (JavaTimeModule's decimal seconds).
    let instant = br#"{"@class":"t.Holder","when":1795400000.123456789,"a":1}"#;
    assert_eq!(
        to_plain_json(instant).unwrap().to_string(),
        r#"{"when":1795400000.123456789,"a":1}"#
    );
}

#[test]
fn an_enum_tagged_with_the_class_reads_a_field_of_an_interface_type() {
    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    #[serde(tag = "@class")]
    enum Payment {
        #[serde(rename = "shop.Card")]
        Card { last4: String },
        #[serde(rename = "shop.Transfer")]
        // serde buffers an enum's content through `deserialize_any`: its
        // numbers arrive as i64, u64 or f64 (exact, or refused).
        Transfer { iban: String, amount: f64 },
    }
    let raw = br#"{"@class":"t.Holder","value":{"@class":"shop.Transfer","amount":["java.math.BigDecimal",10.50],"iban":"NO93"}}"#;
    assert_eq!(
        decode::<Holder<Payment>>(raw).unwrap().value,
        Payment::Transfer {
            iban: "NO93".into(),
            amount: 10.5
        }
    );
}
