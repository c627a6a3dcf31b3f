//! Property tests: any value of the written shapes encodes and decodes
//! back; no input, random or a mutated real payload, makes decoding panic.

use std::collections::BTreeMap;

use proptest::collection::vec;
use proptest::prelude::*;

use super::tests::{cases, extra};
use super::*;
use crate::kryo::{JavaType, KryoField};
use crate::test_support::pojos::{schema_with_uids as schema, Event};
use crate::test_support::strategies::{self, event, round_trip, LISTS_AND_SETS};
use crate::test_support::sweeps::Edit;
use crate::Codec;

/// The shared scalars, and what JDK serialization writes another way:
/// cached `Long`s, small `BigDecimal`s, enums.
fn scalar() -> impl Strategy<Value = KryoValue> {
    strategies::scalar(vec![
        (-130i64..130).prop_map(KryoValue::Long).boxed(),
        // Java refuses an Instant past its range, and so does this reader.
        strategies::instant(-31_557_014_167_219_200i64..=31_556_889_864_403_199),
        strategies::big_decimal(prop_oneof![any::<i128>(), -20i128..20]),
        prop_oneof![Just("RED"), Just("GREEN")]
            .prop_map(|name| KryoValue::Enum {
                class: "p.Color".into(),
                ordinal: None,
                name: Some(name.into()),
            })
            .boxed(),
    ])
}

/// A POJO of class `p.A` (always these fields, as one class has one
/// descriptor), its fields in the stream's order: primitives, then by name.
fn pojo(inner: impl Strategy<Value = KryoValue> + Clone) -> impl Strategy<Value = KryoValue> {
    (any::<i64>(), any::<bool>(), inner.clone(), inner).prop_map(|(n, flag, any, other)| {
        let field = |name: &str, ty: &str, value| KryoField::new(name, JavaType::parse(ty).unwrap(), value);
        KryoValue::Object {
            class: "p.A".into(),
            fields: vec![
                field("n", "long", KryoValue::Long(n)),
                field("z", "boolean", KryoValue::Boolean(flag)),
                field("any", "Object", any),
                field("other", "Object", other),
            ],
        }
    })
}

fn tree() -> impl Strategy<Value = KryoValue> {
    scalar().prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            strategies::collection(LISTS_AND_SETS.to_vec(), inner.clone()),
            strategies::map(inner.clone()),
            pojo(inner),
        ]
    })
}

/// Every payload the tests know: the 27 vectors and the extra ones.
fn payloads() -> Vec<Vec<u8>> {
    let extras = [
        "linkedlist",
        "treemap",
        "treeset",
        "vector",
        "shared_object",
        "superclass_chain",
        "long_cache",
        "enum_twice",
        "custom_write_object",
        "object_array_nested",
        "bigdecimal_shared_intval",
        "duration",
    ];
    cases()
        .into_iter()
        .map(|c| c.raw)
        .chain(extras.iter().map(|n| extra(n)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_values_round_trip(value in tree()) {
        let uids = KryoSchema::new().with_class("p.A", &[]).unwrap().with_serial_version_uid("p.A", 3).unwrap();
        let raw = encode(&value, Some(&uids)).unwrap();
        prop_assert_eq!(decode(&raw).unwrap(), value);
    }

    #[test]
    fn pojos_round_trip_typed(event in event()) {
        let raw = round_trip(&SerializationCodec::<Event>::new().with_schema(schema()), &event)?;
        // Through the value model and Kryo and back.
        let value = decode_with_schema(&raw, &schema()).unwrap();
        let kryo = KryoValue::decode(&value.encode().unwrap(), Some(&schema())).unwrap();
        prop_assert_eq!(encode(&kryo, Some(&schema())).unwrap(), raw.to_vec());
    }

    #[test]
    fn any_bytes_decode_or_fail_without_panicking(raw in vec(any::<u8>(), 0..96), magic in any::<bool>()) {
        let raw = if magic { [&MAGIC[..], &raw].concat() } else { raw };
        let _ = decode(&raw);
        let _ = SerializationCodec::<Event>::new().decode(&raw);
    }

    #[test]
    fn any_mutation_of_a_real_payload_decodes_or_fails_without_panicking(
        which in any::<prop::sample::Index>(),
        edits in vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..4),
    ) {
        let payloads = payloads();
        let mut raw = payloads[which.index(payloads.len())].clone();
        for (at, byte, how) in edits {
            let at = at.index(raw.len());
            match how {
                0 => Edit::Set(byte),
                1 => Edit::Insert(byte),
                2 => Edit::Remove,
                // A handle nearby: back-references to anything.
                _ => Edit::Splice(vec![0x71, 0x00, 0x7e, 0x00, byte % 16]),
            }
            .apply(&mut raw, at);
            if raw.is_empty() {
                break;
            }
        }
        if let Ok(value) = decode(&raw) {
            // What decodes, encodes (or is refused with a typed error).
            let _ = encode(&value, Some(&schema()));
        }
        let _ = decode_with_schema(&raw, &schema());
        let _ = SerializationCodec::<BTreeMap<String, KryoValue>>::new().decode(&raw);
    }
}
