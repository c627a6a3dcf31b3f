//! Property tests: any value of the supported shapes encodes and decodes
//! back, and no input makes decoding panic.

use std::collections::BTreeMap;

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::test_support::pojos::{Event, Status, SCHEMA};
use crate::test_support::strategies::{self, event};
use crate::test_support::sweeps::Edit;

/// The shared scalars, and ASCII strings (Kryo writes those another way).
fn scalar() -> impl Strategy<Value = KryoValue> {
    strategies::scalar(vec![
        "[a-z]{0,40}".prop_map(KryoValue::String).boxed(),
        strategies::instant(any::<i64>()),
        strategies::big_decimal(any::<i128>()),
    ])
}

fn tree() -> impl Strategy<Value = KryoValue> {
    scalar().prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            strategies::collection(
                vec!["java.util.ArrayList", "java.util.HashSet", "java.util.LinkedList"],
                inner.clone()
            ),
            // Lists of one class (Kryo's same-class shortcut), with nulls.
            (vec(prop::option::of(any::<i64>()), 0..8)).prop_map(|items| KryoValue::Collection {
                class: "java.util.ArrayList".into(),
                items: items
                    .into_iter()
                    .map(|i| i.map_or(KryoValue::Null, KryoValue::Long))
                    .collect(),
            }),
            strategies::map(inner),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn self_describing_values_round_trip(value in tree()) {
        let raw = value.encode().unwrap();
        prop_assert_eq!(KryoValue::decode(&raw, None).unwrap(), value.clone());
        // Also as a Rust-side KryoValue.
        prop_assert_eq!(from_slice::<KryoValue>(&raw).unwrap(), value);
    }

    #[test]
    fn pojos_round_trip_typed_and_untyped(event in event()) {
        let raw = to_vec(&event).unwrap();
        prop_assert_eq!(from_slice::<Event>(&raw).unwrap(), event);
        let schema = KryoSchema::from_json(SCHEMA).unwrap();
        let untyped = KryoValue::decode(&raw, Some(&schema)).unwrap();
        prop_assert_eq!(untyped.encode().unwrap(), raw);
    }

    #[test]
    fn lists_and_maps_of_rust_types_round_trip(
        longs in vec(any::<i64>(), 0..10),
        maybe in vec(prop::option::of(any::<String>()), 0..10),
        map in prop::collection::btree_map(any::<String>(), vec(any::<i32>(), 0..3), 0..5),
    ) {
        prop_assert_eq!(from_slice::<Vec<i64>>(&to_vec(&longs).unwrap()).unwrap(), longs);
        if maybe.iter().any(Option::is_some) {
            prop_assert_eq!(from_slice::<Vec<Option<String>>>(&to_vec(&maybe).unwrap()).unwrap(), maybe);
        }
        prop_assert_eq!(from_slice::<BTreeMap<String, Vec<i32>>>(&to_vec(&map).unwrap()).unwrap(), map);
    }

    #[test]
    fn any_bytes_decode_or_fail_without_panicking(raw in vec(any::<u8>(), 0..64)) {
        let schema = KryoSchema::from_json(SCHEMA).unwrap();
        let _ = KryoValue::decode(&raw, Some(&schema));
        let _ = from_slice::<Event>(&raw);
        let _ = from_slice::<KryoValue>(&raw);
    }

    #[test]
    fn any_mutation_of_a_real_payload_decodes_or_fails_without_panicking(at in 0usize..120, byte in any::<u8>()) {
        let mut raw = to_vec(&Event {
            kind: Some("charge".into()), order: None, status: Some(Status::Paid), uuid: Some(JavaUuid(7)),
            created_at: 5, attrs: Some(BTreeMap::from([("k".into(), "v".into())])), retries: Some(3),
            ratio: 0.5, urgent: true,
        }).unwrap();
        let at = at % raw.len();
        Edit::Set(byte).apply(&mut raw, at);
        let schema = KryoSchema::from_json(SCHEMA).unwrap();
        let _ = KryoValue::decode(&raw, Some(&schema));
        let _ = from_slice::<Event>(&raw);
    }
}
