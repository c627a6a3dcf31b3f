//! Auto-detection on every payload real Redisson clients wrote
//! (`compat/fixtures/codecs.json`, `kryo5.json`), and on hostile bytes.

use proptest::prelude::*;
use serde_json::Value;

use super::*;
use crate::compress::DEFAULT_MAX_DECOMPRESSED;

use crate::test_support::pojos::schema;
use crate::test_support::sweeps::Edit;
use delayq_test_support::vectors::{codec_case, codecs, kryo_case, kryo_cases, unhex, KryoCase};

fn kryo_value(case: &str) -> Value {
    let raw = kryo_case(case).raw;
    KryoValue::decode(&raw, Some(&schema())).unwrap().to_json()
}

#[test]
fn every_kryo_vector_is_detected_as_kryo() {
    for KryoCase { name: case, raw, .. } in kryo_cases() {
        let found = detect(&raw, Some(&schema()), DEFAULT_MAX_DECOMPRESSED);
        assert_eq!(found.codec, "kryo", "{case}");
        assert_eq!(
            found.value,
            Untyped::Java(KryoValue::decode(&raw, Some(&schema())).unwrap()),
            "{case}"
        );
    }
}

#[test]
fn every_java_codec_vector_is_detected_with_its_codec_and_value() {
    let file = codecs();
    let mut checked = 0;
    for (name, expected) in [
        ("lz4", "lz4"),
        // LZ4CodecV2 frames its block as LZ4Codec does: the same bytes.
        ("lz4v2", "lz4"),
        ("snappy", "snappy"),
        ("zstd", "zstd"),
        ("serialization", "serialization"),
        ("marshalling", "marshalling"),
        ("lz4/json", "lz4/jackson"),
        ("snappy/json", "snappy/jackson"),
        ("zstd/string", "zstd/string"),
    ] {
        for (case, vector) in file["codecs"][name]["cases"].as_object().unwrap() {
            let raw = unhex(vector["hex"].as_str().unwrap());
            let found = detect(&raw, Some(&schema()), DEFAULT_MAX_DECOMPRESSED);
            assert_eq!(found.codec, expected, "{name} {case}");
            match &found.value {
                // linkedhashmap_nested is another Java value in kryo5.json.
                Untyped::Java(value) if case != "linkedhashmap_nested" => {
                    assert_eq!(value.to_json(), kryo_value(case), "{name} {case}")
                }
                Untyped::Java(_) => {}
                Untyped::Json(json) => {
                    let json: Value = serde_json::from_str(json).unwrap();
                    assert_eq!(json["id"], kryo_value(case)["id"], "{name} {case}")
                }
                Untyped::Text(text) => assert_eq!(Value::String(text.clone()), kryo_value(case), "{name} {case}"),
                Untyped::Bytes(_) => panic!("{name} {case}: read as bytes"),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 27 * 6 + 2 + 2 + 3);
}

#[test]
fn jackson_with_type_information_plain_json_and_text() {
    let order = codec_case("jackson", "pojo_order");
    let found = detect(&order, None, DEFAULT_MAX_DECOMPRESSED);
    assert_eq!(found.codec, "jackson");
    assert_eq!(
        found.value,
        Untyped::Json(r#"{"amount":1234,"id":"o-1","tags":["a","b"]}"#.into())
    );
    let list = codec_case("jackson", "arraylist");
    assert_eq!(detect(&list, None, DEFAULT_MAX_DECOMPRESSED).codec, "jackson");
    let plain = detect(br#"{"id": 1}"#, None, DEFAULT_MAX_DECOMPRESSED);
    assert_eq!(
        (plain.codec.as_str(), plain.value),
        ("json", Untyped::Text(r#"{"id": 1}"#.into()))
    );
    assert_eq!(detect("zażółć 🚀".as_bytes(), None, 1).codec, "string");
    assert_eq!(detect(b"", None, 1).value, Untyped::Text(String::new()));
    let binary = detect(&[0xff, 0xfe, 0x00], None, 1);
    assert_eq!(
        (binary.codec.as_str(), binary.value),
        ("bytes", Untyped::Bytes(vec![0xff, 0xfe, 0x00]))
    );
}

#[test]
fn java_codecs_inside_a_wrapper_are_detected() {
    let java = codec_case("serialization", "uuid");
    let raw = crate::compress::Compression::Zstd.compress(&java).unwrap();
    let found = detect(&raw, None, DEFAULT_MAX_DECOMPRESSED);
    assert_eq!(found.codec, "zstd/serialization");
    assert_eq!(found.value.to_json_text(), "\"123e4567-e89b-12d3-a456-426614174000\"");
}

#[test]
fn a_kryo_pojo_the_schema_does_not_describe_is_still_named_kryo() {
    let raw = kryo_case("pojo_order").raw;
    let found = detect(&raw, None, DEFAULT_MAX_DECOMPRESSED);
    assert_eq!((found.codec.as_str(), found.value), ("kryo", Untyped::Bytes(raw)));
}

#[test]
fn a_compressed_payload_over_the_cap_reads_as_bytes_not_as_its_content() {
    let inner = vec![b'a'; 4096];
    let raw = crate::compress::Compression::Lz4.compress(&inner).unwrap();
    assert_eq!(detect(&raw, None, 1 << 20).codec, "lz4/string");
    // Under a 1 KiB cap the claim (4 KiB) is refused before decompressing.
    let capped = detect(&raw, None, 1024);
    assert_eq!((capped.codec.as_str(), capped.value), ("bytes", Untyped::Bytes(raw)));
}

#[test]
fn documented_ambiguities_hold() {
    // Text that is Kryo by accident: "\tT" is Kryo's Long 42.
    let found = detect(b"\tT", None, 1);
    assert_eq!(
        (found.codec.as_str(), found.value),
        ("kryo", Untyped::Java(KryoValue::Long(42)))
    );
    // LongCodec's "42" is text.
    assert_eq!(detect(b"42", None, 1).codec, "string");
}

proptest! {
    #[test]
    fn any_bytes_are_detected_as_something_without_panicking(raw in proptest::collection::vec(any::<u8>(), 0..512)) {
        let found = detect(&raw, None, 1 << 16);
        prop_assert!(!found.codec.is_empty());
    }

    #[test]
    fn mutated_java_payloads_never_panic(case in 0usize..27, at in 0usize..64, byte in any::<u8>()) {
        let file = codecs();
        for name in ["lz4", "snappy", "zstd", "serialization", "marshalling"] {
            let cases = file["codecs"][name]["cases"].as_object().unwrap();
            let mut raw = unhex(cases.values().nth(case).unwrap()["hex"].as_str().unwrap());
            if !raw.is_empty() {
                let i = at % raw.len();
                Edit::Set(byte).apply(&mut raw, i);
            }
            let found = detect(&raw, Some(&schema()), 1 << 16);
            prop_assert!(!found.codec.is_empty());
        }
    }
}
