//! The Kryo vectors real Redisson clients wrote (`compat/fixtures/kryo5.json`)
//! and hostile Kryo values, shared by the library's and the CLI's tests.

#![allow(dead_code)]

use delayq::codec::kryo::KryoValue;

const VECTORS: &str = include_str!("../../compat/fixtures/kryo5.json");

pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// (case name, Java class, value JSON text, Kryo bytes).
pub fn vectors() -> Vec<(String, String, String, Vec<u8>)> {
    let file: serde_json::Value = serde_json::from_str(VECTORS).unwrap();
    file["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["case"].as_str().unwrap().to_owned(),
                c["java_class"].as_str().unwrap().to_owned(),
                c["value_json"].as_str().unwrap().to_owned(),
                unhex(c["kryo_hex"].as_str().unwrap()),
            )
        })
        .collect()
}

pub fn vector(name: &str) -> Vec<u8> {
    vectors().into_iter().find(|v| v.0 == name).unwrap().3
}

/// A 32 KiB positive BigInteger (Java's toByteArray()).
pub fn hostile_big_integer() -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..32 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    bytes[0] = 0x5a;
    bytes
}

/// A map whose only key is a map whose only key is ... `depth` deep.
pub fn maps_in_keys(depth: usize) -> KryoValue {
    let mut v = KryoValue::String("a\"b".into());
    for _ in 0..depth {
        v = KryoValue::Map {
            class: "java.util.HashMap".into(),
            entries: vec![(v, KryoValue::Int(1))],
        };
    }
    v
}
