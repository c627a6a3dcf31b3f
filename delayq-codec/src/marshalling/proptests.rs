//! Property tests: any value River writes decodes back to itself, and no
//! input makes decoding panic.

use std::collections::BTreeMap;

use proptest::collection::vec;
use proptest::prelude::*;

use super::tests::cases;
use super::*;
use crate::kryo::{JavaType, KryoField};
use crate::test_support::pojos::{schema_with_uids as schema, Event};
use crate::test_support::strategies::{self, event, round_trip, LISTS_AND_SETS};
use crate::test_support::sweeps::Edit;
use crate::Codec;

/// The shared scalars, and what River writes another way: strings it may
/// share, long byte arrays, enums of two classes; `Instant`s in Java's range.
fn scalar() -> impl Strategy<Value = KryoValue> {
    strategies::scalar(vec![
        "[a-c]{0,3}".prop_map(KryoValue::String).boxed(),
        vec(any::<u8>(), 250..300).prop_map(KryoValue::Bytes).boxed(),
        strategies::instant(-31_557_014_167_219_200i64..=31_556_889_864_403_199),
        strategies::big_decimal(any::<i128>()),
        (
            prop_oneof![Just("p.Color"), Just("p.Size")],
            prop_oneof![Just("RED"), Just("BIG")],
        )
            .prop_map(|(class, name)| KryoValue::Enum {
                class: class.into(),
                ordinal: None,
                name: Some(name.into()),
            })
            .boxed(),
    ])
}

const SCHEMA: &str = r#"{"classes": {
    "p.A": {"serialVersionUID": 7, "fields": {"a": "long", "b": "Object"}},
    "p.B": {"serialVersionUID": -1, "fields": {"b": "Object", "c": "int", "d": "boolean"}}
}}"#;

/// POJOs of two classes that share a field name (River writes it once).
fn pojo(inner: impl Strategy<Value = KryoValue> + Clone) -> impl Strategy<Value = KryoValue> {
    let object = JavaType::object;
    prop_oneof![
        (any::<i64>(), inner.clone()).prop_map(move |(a, b)| KryoValue::Object {
            class: "p.A".into(),
            fields: vec![
                KryoField::new("a", JavaType::parse("long").unwrap(), KryoValue::Long(a)),
                KryoField::new("b", object(), b),
            ],
        }),
        (inner, any::<i32>(), any::<bool>()).prop_map(move |(b, c, d)| KryoValue::Object {
            class: "p.B".into(),
            fields: vec![
                KryoField::new("b", object(), b),
                KryoField::new("c", JavaType::parse("int").unwrap(), KryoValue::Int(c)),
                KryoField::new("d", JavaType::parse("boolean").unwrap(), KryoValue::Boolean(d)),
            ],
        }),
    ]
}

fn tree() -> impl Strategy<Value = KryoValue> {
    scalar().prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            strategies::collection(
                [&LISTS_AND_SETS[..], &["java.util.ArrayDeque", "java.util.Vector"]].concat(),
                inner.clone()
            ),
            strategies::map(inner.clone()),
            inner.clone().prop_map(|item| KryoValue::Collection {
                class: "java.util.Collections$SingletonList".into(),
                items: vec![item],
            }),
            Just(KryoValue::Map {
                class: "java.util.Collections$EmptyMap".into(),
                entries: vec![],
            }),
            pojo(inner),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn values_round_trip(value in tree()) {
        let schema = KryoSchema::from_json(SCHEMA).unwrap();
        let raw = encode(&value, Some(&schema)).unwrap();
        prop_assert!(looks_like(&raw));
        prop_assert_eq!(decode(&raw).unwrap(), value);
    }

    #[test]
    fn typed_values_round_trip(event in event()) {
        let raw = round_trip(&MarshallingCodec::<Event>::new().with_schema(schema()), &event)?;
        // And through the value model into Kryo and back.
        let kryo = decode_with_schema(&raw, &schema()).unwrap().encode().unwrap();
        prop_assert_eq!(crate::kryo::from_slice::<Event>(&kryo).unwrap(), event);
    }

    #[test]
    fn any_bytes_decode_or_fail_without_panicking(mut raw in vec(any::<u8>(), 0..96), river in any::<bool>()) {
        if river {
            raw.insert(0, 0x04);
        }
        let _ = decode(&raw);
        let _ = decode_with_schema(&raw, &schema());
        let _ = MarshallingCodec::<Event>::new().decode(&raw);
        let _ = MarshallingCodec::<BTreeMap<String, i64>>::new().decode(&raw);
        let _ = looks_like(&raw);
    }

    #[test]
    fn mutated_vectors_decode_or_fail_without_panicking(
        case in 0usize..27,
        edits in vec((any::<usize>(), any::<u8>(), 0u8..3), 1..4),
    ) {
        let mut raw = cases().swap_remove(case).river;
        for (at, byte, op) in edits {
            let at = at % (raw.len() + 1);
            match op {
                0 if at < raw.len() => Edit::Set(byte),
                1 => Edit::Insert(byte),
                _ if at < raw.len() => Edit::Remove,
                _ => Edit::Push(byte),
            }
            .apply(&mut raw, at);
        }
        let _ = decode(&raw);
        let _ = MarshallingCodec::<Event>::new().decode(&raw);
        let _ = looks_like(&raw);
    }
}
