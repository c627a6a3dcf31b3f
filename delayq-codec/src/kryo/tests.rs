//! The 27 values real Redisson `Kryo5Codec` wrote (`compat/fixtures/kryo5.json`),
//! both ways, untyped and typed; then bad input.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;
use crate::test_support::pojos::{schema, Event, Order, Status, SCHEMA};
use crate::test_support::sweeps::truncations;
use crate::Codec;
use delayq_test_support::vectors::{kryo_case, kryo_cases, KryoCase as Case};

#[test]
fn every_captured_value_decodes_to_its_json_and_encodes_back_to_the_same_bytes() {
    let schema = schema();
    for case in kryo_cases() {
        let value = KryoValue::decode(&case.raw, Some(&schema)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(value.java_class(), Some(case.class.as_str()), "{}", case.name);
        assert_eq!(value.to_json(), case.json, "{}", case.name);
        assert_eq!(value.encode().unwrap(), case.raw, "{}: re-encoded", case.name);
        // And from the captured JSON and Java class alone (what the CLI does).
        let declared = schema.parse_type(&case.class).unwrap();
        let declared = match case.name.as_str() {
            // JSON cannot tell Arrays.asList(1L, 2L) in a map of Integers, or null vs a Long.
            "linkedhashmap_nested" | "arraylist_mixed_nulls" => continue,
            "hashmap" => JavaType::parse("HashMap<String,Object>").unwrap(),
            _ => declared,
        };
        let json = if case.class == "java.math.BigDecimal" {
            Value::String(case.json_text.clone())
        } else {
            case.json.clone()
        };
        let rebuilt =
            KryoValue::from_json(&json, &declared, Some(&schema)).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(rebuilt.encode().unwrap(), case.raw, "{}: from JSON", case.name);
    }
}

#[test]
fn big_decimal_json_text_keeps_the_scale() {
    let case = kryo_case("bigdecimal");
    assert_eq!(
        KryoValue::decode(&case.raw, None).unwrap().to_json_text(),
        case.json_text
    );
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename = "java.util.HashSet")]
struct Set(Vec<String>);

/// Decodes with `KryoCodec<T>`, compares with the captured JSON read by
/// serde_json into the same type, and encodes back, also with the one-pass
/// writer alone unless it leaves `T` to the tree path (then `false`).
fn typed<T>(case: &Case) -> bool
where
    T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug + 'static,
{
    let codec = KryoCodec::<T>::new();
    let value = codec.decode(&case.raw).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    if let Ok(expected) = serde_json::from_value::<T>(case.json.clone()) {
        assert_eq!(value, expected, "{}", case.name);
    }
    assert_eq!(
        codec.encode(&value).unwrap().as_ref(),
        case.raw,
        "{}: re-encoded",
        case.name
    );
    assert_eq!(
        tree_to_vec(&value).unwrap(),
        case.raw,
        "{}: through the tree",
        case.name
    );
    match ser_direct::to_vec(&value) {
        Ok(direct) => {
            assert_eq!(direct, case.raw, "{}: in one pass", case.name);
            true
        }
        Err(_) => false,
    }
}

#[test]
fn every_captured_value_round_trips_through_rust_types() {
    let mut left_to_the_tree = Vec::new();
    for case in kryo_cases() {
        let direct = match case.name.as_str() {
            "string" | "string_unicode" | "string_empty" => typed::<String>(&case),
            "long" | "long_negative" | "long_max" => typed::<i64>(&case),
            "integer" => typed::<i32>(&case),
            "double" => typed::<f64>(&case),
            "boolean" => typed::<bool>(&case),
            "short" => typed::<i16>(&case),
            "float" => typed::<f32>(&case),
            "char" => typed::<char>(&case),
            "bytes" => {
                assert_eq!(from_slice::<JavaBytes>(&case.raw).unwrap().0, vec![1, 2, 0xff]);
                typed::<JavaBytes>(&case)
            }
            "pojo_order" | "pojo_order_null_id" => typed::<Order>(&case),
            "pojo_event_nested" | "pojo_event_all_nulls" => typed::<Event>(&case),
            "hashmap" => typed::<BTreeMap<String, KryoValue>>(&case),
            "arraylist" => typed::<Vec<String>>(&case),
            "arraylist_mixed_nulls" | "linkedhashmap_nested" => {
                // A KryoValue keeps Java's classes; compare its JSON form.
                let codec = KryoCodec::<KryoValue>::new();
                let value = codec.decode(&case.raw).unwrap();
                assert_eq!(value.to_json(), case.json, "{}", case.name);
                assert_eq!(codec.encode(&value).unwrap().as_ref(), case.raw, "{}", case.name);
                false
            }
            "hashset" => typed::<Set>(&case),
            "uuid" => typed::<JavaUuid>(&case),
            "enum" => typed::<Status>(&case),
            "date" => {
                assert_eq!(from_slice::<JavaDate>(&case.raw).unwrap(), JavaDate(1_795_400_000_000));
                typed::<JavaDate>(&case)
            }
            "instant" => typed::<JavaInstant>(&case),
            "bigdecimal" => {
                assert_eq!(from_slice::<JavaBigDecimal>(&case.raw).unwrap().as_str(), "12.50");
                typed::<JavaBigDecimal>(&case)
            }
            other => panic!("no Rust type for case {other}"),
        };
        if !direct {
            left_to_the_tree.push(case.name);
        }
    }
    // KryoValues (an Object field's value may be anything).
    assert_eq!(
        left_to_the_tree,
        ["hashmap", "linkedhashmap_nested", "arraylist_mixed_nulls"]
    );
}

#[test]
fn a_rust_value_encodes_as_java_would_write_it() {
    let event = Event {
        kind: Some("charge".into()),
        order: Some(Order {
            id: Some("o-1".into()),
            amount: 1234,
            tags: vec!["a".into(), "b".into()],
        }),
        status: Some(Status::Paid),
        uuid: Some("123e4567-e89b-12d3-a456-426614174000".parse().unwrap()),
        created_at: 1_795_400_000_000,
        attrs: Some(BTreeMap::from([("k".into(), "v".into())])),
        retries: None,
        ratio: 0.25,
        urgent: true,
    };
    let case = kryo_case("pojo_event_nested");
    assert_eq!(to_vec(&event).unwrap(), case.raw);
}

// ------------------------------------------------------------ bad input

fn event_raw() -> Vec<u8> {
    kryo_case("pojo_event_nested").raw
}

#[test]
fn every_truncation_is_a_typed_error() {
    let schema = schema();
    let raw = event_raw();
    for (cut, prefix) in truncations(&raw) {
        // Cut bytes, or a length prefix longer than what is left.
        let cut_kinds = [KryoErrorKind::Truncated, KryoErrorKind::TooLarge];
        let err = KryoValue::decode(prefix, Some(&schema)).unwrap_err();
        assert!(cut_kinds.contains(&err.kind()), "cut at {cut}: {err}");
        let err = from_slice::<Event>(prefix).unwrap_err();
        assert!(cut_kinds.contains(&err.kind()), "typed, cut at {cut}: {err}");
    }
}

#[test]
fn unknown_classes_and_schema_mismatches_are_named() {
    let raw = event_raw();
    let err = KryoValue::decode(&raw, None).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::UnknownClass);
    assert!(
        err.to_string().contains("compat.Event") && err.to_string().contains("schema"),
        "{err}"
    );

    // A schema with a field too few: bytes are left over, or a field reads wrong.
    let short = KryoSchema::from_json(&SCHEMA.replace(r#""urgent": "boolean""#, r#""zz": "boolean""#)).unwrap();
    let err = KryoValue::decode(&raw, Some(&short)).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            KryoErrorKind::SchemaMismatch | KryoErrorKind::TrailingBytes | KryoErrorKind::Malformed
        ),
        "{err}"
    );
    let fewer = KryoSchema::from_json(&SCHEMA.replace(r#", "urgent": "boolean""#, "")).unwrap();
    assert_eq!(
        KryoValue::decode(&raw, Some(&fewer)).unwrap_err().kind(),
        KryoErrorKind::TrailingBytes
    );

    // A Rust type of another class.
    #[derive(Debug, Deserialize)]
    #[serde(rename = "compat.Other")]
    #[allow(dead_code)]
    struct Other {
        x: i64,
    }
    let err = from_slice::<Other>(&raw).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::UnknownClass, "{err}");

    // An enum ordinal past the constants.
    let status = [&b"\x01\x00compat.Event$Statu"[..], &[b's' | 0x80, 0x09]].concat();
    let err = KryoValue::decode(&status, Some(&schema())).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::SchemaMismatch, "{err}");
    assert_eq!(
        from_slice::<Status>(&status).unwrap_err().kind(),
        KryoErrorKind::SchemaMismatch
    );
}

#[test]
fn huge_lengths_allocate_nothing() {
    // An ArrayList of 2^31 - 2 elements, a byte[] of 2^31 - 2 bytes, a map of as many entries.
    let list = [
        &b"\x01\x00java.util.ArrayLis"[..],
        &[b't' | 0x80, 0x7f, 0xff, 0xff, 0xff, 0x07, 0x03],
    ]
    .concat();
    let bytes = [0x01, 0x00, b'[', b'B' | 0x80, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00];
    let map = [
        &b"\x01\x00java.util.HashMa"[..],
        &[b'p' | 0x80, 0xff, 0xff, 0xff, 0xff, 0x07, 0x03],
    ]
    .concat();
    for raw in [&list[..], &bytes, &map] {
        let err = KryoValue::decode(raw, None).unwrap_err();
        assert_eq!(err.kind(), KryoErrorKind::TooLarge, "{err}");
    }
    assert_eq!(
        from_slice::<Vec<String>>(&list).unwrap_err().kind(),
        KryoErrorKind::TooLarge
    );
    assert_eq!(
        from_slice::<BTreeMap<String, String>>(&map).unwrap_err().kind(),
        KryoErrorKind::TooLarge
    );
}

/// An ArrayList holding an ArrayList holding ... `depth` times.
fn nested_lists(depth: usize) -> Vec<u8> {
    let mut raw = [&b"\x01\x00java.util.ArrayLis"[..], &[b't' | 0x80]].concat();
    for _ in 1..depth {
        // One element, not same-typed: then the element's class (name id 0 again) and body.
        raw.extend_from_slice(&[0x02, 0x01, 0x00]);
    }
    raw.push(0x01); // the innermost list is empty
    raw
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    assert!(KryoValue::decode(&nested_lists(MAX_DEPTH - 1), None).is_ok());
    let err = KryoValue::decode(&nested_lists(100_000), None).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::TooDeep);
    assert_eq!(
        from_slice::<KryoValue>(&nested_lists(100_000)).unwrap_err().kind(),
        KryoErrorKind::TooDeep
    );
    #[derive(Debug, Deserialize)]
    struct Deep(#[allow(dead_code)] Vec<Deep>);
    assert_eq!(
        from_slice::<Deep>(&nested_lists(100_000)).unwrap_err().kind(),
        KryoErrorKind::TooDeep
    );
}

#[test]
fn registered_classes_are_refused_by_name_of_the_java_setting() {
    for raw in [&[0x0b, 0x01][..], &[0x14, 0x00]] {
        let err = KryoValue::decode(raw, None).unwrap_err();
        assert_eq!(err.kind(), KryoErrorKind::Unsupported);
        assert!(err.to_string().contains("Kryo5Codec(allowedClasses"), "{err}");
        assert!(diagnose(raw).unwrap().contains("allowedClasses"));
    }
    // A TreeMap ordered by a Comparator (an empty one: size 0, then the comparator's class).
    let tree = [
        &b"\x01\x00java.util.TreeMa"[..],
        &[b'p' | 0x80, 0x01, 0x01, 0x01],
        b"x.Cm",
        &[b'p' | 0x80],
    ]
    .concat();
    let err = KryoValue::decode(&tree, None).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::Unsupported);
    assert!(err.to_string().contains("x.Cmp"), "{err}");
}

#[test]
fn the_codec_error_downcasts_to_a_kryo_error() {
    let raw = event_raw()[..10].to_vec();
    let err = KryoCodec::<Event>::new().decode(&raw).unwrap_err();
    assert_eq!(
        err.downcast_ref::<KryoError>().unwrap().kind(),
        KryoErrorKind::Truncated
    );
}

#[test]
fn all_null_collections_take_one_byte_and_cannot_claim_billions() {
    let nulls = KryoValue::Collection {
        class: "java.util.ArrayList".into(),
        items: vec![KryoValue::Null; 3],
    };
    let raw = nulls.encode().unwrap();
    assert_eq!(raw[raw.len() - 2..], [0x84, 0x00]);
    assert_eq!(KryoValue::decode(&raw, None).unwrap(), nulls);
    let forged = [&raw[..raw.len() - 2], &[0xff, 0xff, 0xff, 0xff, 0x07, 0x00]].concat();
    assert_eq!(
        KryoValue::decode(&forged, None).unwrap_err().kind(),
        KryoErrorKind::TooLarge
    );
    assert_eq!(
        from_slice::<Vec<Option<String>>>(&forged).unwrap_err().kind(),
        KryoErrorKind::TooLarge
    );
}

/// `Kryo5Codec(..., useReferences = true)` writes a "new object" marker (1)
/// after the class of every POJO and collection: delayq refuses such bytes
/// with an error that names the setting.
#[test]
fn reference_tracking_bytes_are_refused_naming_the_java_setting() {
    let schema = schema();
    let order = kryo_cases()
        .into_iter()
        .find(|c| c.class == "compat.Order")
        .expect("an Order vector");
    // The class is written as 0x01 (name follows), a name id, then the ASCII name.
    let name_end = order
        .raw
        .iter()
        .position(|b| b & 0x80 != 0 && *b != 0x80)
        .expect("class name end")
        + 1;
    let mut with_references = order.raw[..name_end].to_vec();
    with_references.push(0x01);
    with_references.extend_from_slice(&order.raw[name_end..]);
    let error = KryoValue::decode(&with_references, Some(&schema)).unwrap_err();
    assert!(error.message().contains("useReferences = true"), "{error}");
    // The bytes Java writes by default decode as before.
    assert!(KryoValue::decode(&order.raw, Some(&schema)).is_ok());
}

/// 2^131072 - 1 as Java's `toByteArray()`: a 0x00 sign byte, 16 KiB of 0xff.
fn largest_in_limit() -> Vec<u8> {
    [&[0x00][..], &[0xff; 16 * 1024]].concat()
}

#[test]
fn big_numbers_decode_to_their_exact_digits_up_to_the_limit() {
    let digits = decimal::tests::all_ones_in_decimal(131_072);
    let positive = KryoValue::BigInteger(largest_in_limit());
    // -(2^131072 - 1): 0xff, then 2^131072 - (2^131072 - 1) = 1 in 16 KiB.
    let negative_bytes = [&[0xff][..], &[0x00; 16 * 1024 - 1], &[0x01]].concat();
    let negative = KryoValue::BigInteger(negative_bytes.clone());
    for (value, text) in [(&positive, digits.clone()), (&negative, format!("-{digits}"))] {
        let raw = value.encode().unwrap();
        assert_eq!(from_slice::<String>(&raw).unwrap(), text);
        assert_eq!(
            KryoValue::decode(&raw, None).unwrap().to_json(),
            Value::String(text.clone())
        );
        assert_eq!(
            from_slice::<Value>(&raw).unwrap(),
            Value::String(text.clone()),
            "any serde type"
        );
    }
    // A BigDecimal: unscaled -(2^131072 - 1), scale 39,000.
    let decimal_value = KryoValue::BigDecimal {
        unscaled: negative_bytes,
        scale: 39_000,
    };
    let raw = decimal_value.encode().unwrap();
    let text = format!("-{}.{}", &digits[..457], &digits[457..]);
    assert_eq!(from_slice::<JavaBigDecimal>(&raw).unwrap().as_str(), text);
    let tree = KryoValue::decode(&raw, None).unwrap();
    assert_eq!(tree.to_json_text(), text);
    // And back: the digits encode to the bytes Java wrote.
    let parsed = KryoValue::from_json(&Value::String(text), &JavaType::parse("BigDecimal").unwrap(), None).unwrap();
    assert_eq!(parsed.encode().unwrap(), raw);
    assert_eq!(to_vec(&from_slice::<JavaBigDecimal>(&raw).unwrap()).unwrap(), raw);
}

#[test]
fn beyond_the_limit_big_numbers_are_a_typed_error_and_lose_nothing() {
    // 2^131072: one bit past MAX_DECIMAL_BITS.
    let bytes = [&[0x01][..], &[0x00; 16 * 1024]].concat();
    let raw = KryoValue::BigInteger(bytes.clone()).encode().unwrap();
    let err = from_slice::<String>(&raw).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::TooLarge, "{err}");
    assert!(err.message().contains("131073 bits"), "{err}");
    assert_eq!(from_slice::<Value>(&raw).unwrap_err().kind(), KryoErrorKind::TooLarge);
    let codec_error = KryoCodec::<String>::new().decode(&raw).unwrap_err();
    assert_eq!(
        codec_error.downcast_ref::<KryoError>().unwrap().kind(),
        KryoErrorKind::TooLarge
    );

    // As a KryoValue: exact bytes, hexadecimal JSON that reads back.
    let tree = KryoValue::decode(&raw, None).unwrap();
    assert_eq!(tree, KryoValue::BigInteger(bytes.clone()));
    assert_eq!(tree.encode().unwrap(), raw);
    let hex = format!("0x1{}", "0".repeat(32 * 1024));
    assert_eq!(tree.to_json(), Value::String(hex.clone()));
    assert_eq!(tree.to_json_text(), format!("\"{hex}\""));
    let big_integer = JavaType::parse("BigInteger").unwrap();
    assert_eq!(KryoValue::from_json(&tree.to_json(), &big_integer, None).unwrap(), tree);

    // A BigDecimal of that unscaled value, negative, with a scale.
    let negative = [&[0xff][..], &[0x00; 16 * 1024]].concat();
    let value = KryoValue::BigDecimal {
        unscaled: negative,
        scale: -5,
    };
    let raw = value.encode().unwrap();
    assert_eq!(
        from_slice::<JavaBigDecimal>(&raw).unwrap_err().kind(),
        KryoErrorKind::TooLarge
    );
    let tree = KryoValue::decode(&raw, None).unwrap();
    let json = tree.to_json();
    assert_eq!(json, Value::String(format!("-0x1{} scale -5", "0".repeat(32 * 1024))));
    let back = KryoValue::from_json(&json, &JavaType::parse("BigDecimal").unwrap(), None).unwrap();
    assert_eq!(back.encode().unwrap(), raw);
    // Its text has as many digits as Java's would: encoding it says so.
    let digits = "9".repeat(40_000);
    assert!(KryoValue::big_decimal(&digits).unwrap_err().contains("digits"));
}

/// A map whose only key is a map whose only key is ... `depth` deep, the
/// innermost key a string with a quote (escaped once more at every level).
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

#[test]
fn map_keys_in_map_keys_print_in_size_linear_in_the_payload() {
    // Two levels of maps as keys print exactly; a third shows its class.
    assert_eq!(maps_in_keys(2).to_json_text(), r#"{"{\"a\\\"b\":1}":1}"#);
    assert_eq!(
        maps_in_keys(3).to_json_text(),
        r#"{"{\"{\\\"a\\\\\\\"b\\\":1}\":1}":1}"#
    );
    assert_eq!(
        maps_in_keys(4).to_json_text(),
        r#"{"{\"{\\\"<java.util.HashMap>\\\":1}\":1}":1}"#
    );
    for depth in [14, MAX_DEPTH - 1] {
        let raw = maps_in_keys(depth).encode().unwrap();
        let tree = KryoValue::decode(&raw, None).unwrap();
        let text = tree.to_json_text();
        assert!(
            text.len() <= 8 * raw.len(),
            "{depth} deep: {} bytes of JSON from {}",
            text.len(),
            raw.len()
        );
        assert_eq!(tree.to_json().to_string().len(), text.len());
    }
}

/// An all-null collection is its size alone: its elements count against
/// the bytes the value may take ([`max_value_bytes`](crate::bounds::max_value_bytes)),
/// 64 each, between all the collections of a payload.
#[test]
fn all_null_collections_cannot_claim_more_than_the_value_bound_between_them() {
    let nulls = |n: usize| KryoValue::Collection {
        class: "java.util.ArrayList".into(),
        items: vec![KryoValue::Null; n],
    };
    let lists = |n: usize, each: usize| KryoValue::Collection {
        class: "java.util.ArrayList".into(),
        items: vec![nulls(each); n],
    };
    // 1 MiB (the bound's floor) holds 16,384 nulls, less the lists themselves.
    let within = lists(2, 8_000).encode().unwrap();
    assert!(within.len() < 64, "{} bytes", within.len());
    assert!(KryoValue::decode(&within, None).is_ok());
    assert!(from_slice::<Vec<Vec<Option<String>>>>(&within).is_ok());
    // Each list is within the bound, the three together are not.
    let over = lists(3, 8_000).encode().unwrap();
    let err = KryoValue::decode(&over, None).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::TooLarge, "{err}");
    assert_eq!(
        from_slice::<Vec<Vec<Option<String>>>>(&over).unwrap_err().kind(),
        KryoErrorKind::TooLarge
    );
}

#[test]
fn a_huge_class_name_is_shortened_in_messages() {
    let name = format!("com.{}", "x".repeat(100_000));
    let raw = [&[0x01, 0x00][..], &name.as_bytes()[..name.len() - 1], &[b'x' | 0x80]].concat();
    let err = KryoValue::decode(&raw, None).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::UnknownClass);
    assert!(err.message().len() < 400, "{} bytes", err.message().len());
    assert!(err.message().contains("(100004 bytes)"), "{}", err.message());
}

/// Kryo 5's `FieldSerializer` writes a subclass's fields and its
/// superclasses' together, sorted by name (`CachedFields.rebuild`: the
/// declared fields of each class up to `Object`, then a stable sort), so a
/// field the subclass redeclares comes first of the two.
#[test]
fn a_subclass_reads_its_superclasses_fields_in_kryo_order() {
    let schema = KryoSchema::from_json(
        r#"{"classes": {
            "shop.Base": {"fields": {"id": "String", "zone": "int"}},
            "shop.Order": {"extends": "shop.Base", "fields": {"amount": "long", "note": "String"}},
            "shop.Rush": {"extends": "shop.Order", "fields": {"by": "long", "zone": "long"}}
        }}"#,
    )
    .unwrap();
    let mut raw = vec![0x01, 0x00];
    raw.extend_from_slice(b"shop.Rus");
    raw.push(b'h' | 0x80);
    // amount 5, by 7, id "o-1", note null, zone (Rush's long) 9, zone (Base's int) 3.
    raw.extend_from_slice(&[0x0a, 0x0e, b'o', b'-', b'1' | 0x80, 0x80, 0x12, 0x06]);
    let rush = KryoValue::decode(&raw, Some(&schema)).unwrap();
    let KryoValue::Object { fields, .. } = &rush else {
        panic!("{rush:?}")
    };
    let names: Vec<_> = fields
        .iter()
        .map(|f| (f.name.as_str(), f.declared.to_string()))
        .collect();
    assert_eq!(
        names,
        [
            ("amount", "long".to_owned()),
            ("by", "long".to_owned()),
            ("id", "java.lang.String".to_owned()),
            ("note", "java.lang.String".to_owned()),
            ("zone", "long".to_owned()),
            ("zone", "int".to_owned()),
        ]
    );
    assert_eq!(rush.encode().unwrap(), raw);
    assert_eq!(schema.superclass("shop.Rush"), Some("shop.Order"));
}

#[test]
fn a_superclass_the_schema_lacks_or_a_cycle_is_an_error() {
    for (json, why) in [
        (r#"{"classes": {"a.B": {"extends": "a.A", "fields": {}}}}"#, "a.A"),
        (
            r#"{"classes": {"a.A": {"extends": "a.B", "fields": {}}, "a.B": {"extends": "a.A", "fields": {}}}}"#,
            "cycle",
        ),
        (r#"{"classes": {"a.E": {"extends": "a.A", "enum": ["X"]}}}"#, "enum"),
    ] {
        let err = KryoSchema::from_json(json).unwrap_err();
        assert!(err.contains(why), "{err}");
    }
    // A superclass replaced by an enum leaves its subclass unreadable, not short of fields.
    let schema = KryoSchema::new()
        .with_class("a.A", &[("x", "int")])
        .unwrap()
        .with_class("a.B", &[])
        .unwrap()
        .with_superclass("a.B", "a.A")
        .unwrap()
        .with_enum("a.A", &["X"]);
    let raw = [0x01, 0x00, b'a', b'.', b'B' | 0x80];
    let err = KryoValue::decode(&raw, Some(&schema)).unwrap_err();
    assert_eq!(err.kind(), KryoErrorKind::SchemaMismatch, "{err}");
}

/// A collection field of nulls: a final element class known from the Rust
/// type (String, a boxed primitive) gets one null per element, as Java's
/// `CollectionSerializer` writes with that class's serializer (String's
/// null is 0x80); an element type nothing tells is refused when the two
/// forms Java may expect differ (two or more nulls), in both writers.
#[test]
fn null_elements_of_a_known_final_class_are_written_one_by_one() {
    #[derive(Serialize, Debug)]
    #[serde(rename = "compat.Tags")]
    struct Tags {
        tags: Vec<Option<String>>,
    }
    #[derive(Serialize, Debug)]
    #[serde(rename = "compat.Longs")]
    struct Longs {
        longs: Vec<Option<i64>>,
    }
    #[derive(Serialize, Debug)]
    #[serde(rename = "compat.Orders")]
    struct Orders {
        orders: Vec<Option<Order>>,
    }
    let both = |bytes: Result<Vec<u8>, KryoError>, tree: Result<Vec<u8>, KryoError>| {
        let direct = bytes.unwrap();
        assert_eq!(direct, tree.unwrap());
        direct
    };
    let tags = Tags { tags: vec![None, None] };
    assert!(both(ser_direct::to_vec(&tags), tree_to_vec(&tags)).ends_with(&[0x83, 0x80, 0x80]));
    let tags = Tags {
        tags: vec![None, Some("x".into())],
    };
    assert!(both(ser_direct::to_vec(&tags), tree_to_vec(&tags)).ends_with(&[0x83, 0x80, 0x82, b'x']));
    let longs = Longs { longs: vec![None; 3] };
    assert!(both(ser_direct::to_vec(&longs), tree_to_vec(&longs)).ends_with(&[0x84, 0, 0, 0]));
    // One null reads the same either way.
    let orders = Orders { orders: vec![None] };
    assert!(both(ser_direct::to_vec(&orders), tree_to_vec(&orders)).ends_with(&[0x82, 0]));
    let orders = Orders {
        orders: vec![None, None],
    };
    for refused in [ser_direct::to_vec(&orders), tree_to_vec(&orders), to_vec(&orders)] {
        assert!(refused.unwrap_err().to_string().contains("only nulls"));
    }
}

/// The same holds for a collection nested in a field's map values or list
/// elements (Kryo passes the declared generic types down: Java writes
/// `Map<String, List<String>>`'s `[null, null]` as `83 80 80`,
/// `Map<String, List<Object>>`'s as `83 00`); a top-level collection has
/// no declared type, and Java writes the all-null form (`83 00`).
#[test]
fn nested_all_null_collections_of_an_unknown_element_type_are_refused() {
    use std::collections::BTreeMap as Map;
    #[derive(Serialize, Debug)]
    #[serde(rename = "compat.Nested")]
    struct MapOfOrders {
        m: Map<String, Vec<Option<Order>>>,
    }
    #[derive(Serialize, Debug)]
    #[serde(rename = "compat.Nested")]
    struct ListOfOrders {
        l: Vec<Vec<Option<Order>>>,
    }
    #[derive(Serialize, Debug)]
    #[serde(rename = "compat.Nested")]
    struct MapOfStrings {
        m: Map<String, Vec<Option<String>>>,
    }
    let map = MapOfOrders {
        m: Map::from([("k".to_owned(), vec![None, None])]),
    };
    let list = ListOfOrders {
        l: vec![vec![None, None]],
    };
    for refused in [tree_to_vec(&map), to_vec(&map), tree_to_vec(&list), to_vec(&list)] {
        assert!(refused.unwrap_err().to_string().contains("only nulls"));
    }
    // A final element class the Rust type names: one null per element.
    let strings = MapOfStrings {
        m: Map::from([("k".to_owned(), vec![None, None])]),
    };
    assert!(to_vec(&strings).unwrap().ends_with(&[0x83, 0x80, 0x80]));
    // Top level: Java's `new ArrayList<>(Arrays.asList(null, null))`.
    let top: Vec<Option<Order>> = vec![None, None];
    let java = b"\x01\x00java.util.ArrayLis\xf4\x83\x00";
    assert_eq!(to_vec(&top).unwrap(), java);
    assert_eq!(tree_to_vec(&top).unwrap(), java);
}
