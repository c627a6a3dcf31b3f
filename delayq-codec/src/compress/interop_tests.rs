//! What these wrappers write, as real Redisson read it back, and larger
//! payloads real Redisson wrote (`compat/fixtures/compress_interop.json`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::tests::{wrapped, KRYO_WRAPPERS};
use super::*;
use crate::test_support::pojos::Order;
use crate::{Codec, JacksonCodec, StringCodec};
use delayq_test_support::vectors::{hex, kryo_case, kryo_cases, unhex};

/// A JSON-ish document of about `size` bytes: orders with varied ids,
/// amounts and tags (deterministic), as services put in payloads.
fn json_document(size: usize) -> String {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let tags = ["express", "gift", "fragile", "priority", "international", "return"];
    let mut out = String::from("[");
    while out.len() < size {
        let n = next();
        out.push_str(&format!(
            r#"{{"id":"o-{}","customer":"c-{:05}","amount":{},"currency":"EUR","tags":["{}","{}"],"createdAt":{}}},"#,
            n % 1_000_000,
            (n >> 20) % 100_000,
            (n >> 8) % 100_000,
            tags[(n >> 40) as usize % tags.len()],
            tags[(n >> 44) as usize % tags.len()],
            1_795_400_000_000u64 + (n >> 30) % 86_400_000,
        ));
    }
    out.pop();
    out.push(']');
    out
}

/// (peer codec name, case, bytes) for everything the interop check sends
/// to Java: the 27 Kryo values (and `large` strings) in each wrapper, and
/// Jackson and String inner codecs.
fn rust_payloads(large: bool) -> Vec<(String, String, Vec<u8>)> {
    let mut out = Vec::new();
    for (name, compression) in KRYO_WRAPPERS {
        for c in kryo_cases() {
            let raw = compression.compress(&c.raw).unwrap();
            out.push((name.to_owned(), c.name, raw));
        }
        // Kryo strings: 60 KB of JSON text (hex under the 128 KiB a
        // command-line argument may be), and 300 KB of a repeated line
        // (several zstd blocks, long LZ4 matches).
        let text = json_document(60_000);
        let repeated = "{\"id\":\"o-1\",\"amount\":1234} ".repeat(12_000);
        let mut strings = vec![("json_text_60k", text)];
        if !large {
            strings.clear();
        } else if compression != Compression::Lz4V2 {
            strings.push(("repeated_300k", repeated));
        }
        for (case, value) in strings {
            let raw = match compression {
                Compression::Lz4 => Lz4Codec::<String>::new().encode(&value),
                Compression::Lz4V2 => Lz4V2Codec::<String>::new().encode(&value),
                Compression::Snappy => SnappyCodec::<String>::new().encode(&value),
                _ => ZstdCodec::<String>::new().encode(&value),
            };
            out.push((name.to_owned(), case.to_owned(), raw.unwrap().to_vec()));
        }
        for case in ["pojo_order", "pojo_order_null_id"] {
            let order: Order = serde_json::from_value(kryo_case(case).json).unwrap();
            let raw = wrapped(compression, JacksonCodec::<Order>::new()).encode(&order);
            out.push((format!("{name}/json"), case.to_owned(), raw.unwrap().to_vec()));
        }
        for case in ["string", "string_unicode", "string_empty"] {
            let Value::String(text) = kryo_case(case).json else {
                panic!("{case}")
            };
            let raw = wrapped(compression, StringCodec).encode(&text);
            out.push((format!("{name}/string"), case.to_owned(), raw.unwrap().to_vec()));
        }
    }
    out
}

/// Prints `CODEC CASE HEX` lines for the peers:
/// `cargo test -p delayq-codec --lib print_rust_payloads -- --ignored --nocapture`.
#[test]
#[ignore = "prints the payloads for the interop check against real Java"]
fn print_rust_payloads() {
    for (codec, case, raw) in rust_payloads(true) {
        println!("PAYLOAD {codec} {case} {}", hex(&raw));
    }
}

const INTEROP: &str = include_str!("../../../compat/fixtures/compress_interop.json");

#[test]
fn what_we_write_is_what_real_java_was_seen_to_read() {
    // compress_interop.json holds what these wrappers wrote when real
    // Redisson read it back: they must still write the same.
    let file: Value = serde_json::from_str(INTEROP).unwrap();
    let ours: BTreeMap<(String, String), Vec<u8>> = rust_payloads(false)
        .into_iter()
        .map(|(codec, case, raw)| ((codec, case), raw))
        .collect();
    let mut count = 0;
    for (codec, entry) in file["rust_written"].as_object().unwrap() {
        for (case, c) in entry["cases"].as_object().unwrap() {
            let raw = &ours[&(codec.clone(), case.clone())];
            assert_eq!(hex(raw), c["hex"].as_str().unwrap(), "{codec} {case}");
            count += 1;
        }
    }
    assert_eq!(count, ours.len());
    assert_eq!(count, 4 * (27 + 2 + 3));
}

#[test]
fn larger_payloads_real_java_wrote_read_back() {
    let file: Value = serde_json::from_str(INTEROP).unwrap();
    let java = &file["java_written"];
    let text = java["json_text_20k"].as_str().unwrap();
    let repeated = java["repeated_108k"]["unit"]
        .as_str()
        .unwrap()
        .repeat(java["repeated_108k"]["times"].as_u64().unwrap() as usize);
    for (name, compression) in KRYO_WRAPPERS {
        let c = &java["codecs"][name];
        for (case, expected) in [("json_text_20k", text), ("repeated_108k", repeated.as_str())] {
            let raw = unhex(c[case].as_str().unwrap());
            assert!(compression.looks_like(&raw), "{name} {case}");
            let decoded = match compression {
                Compression::Lz4 => Lz4Codec::<String>::new().decode(&raw),
                Compression::Lz4V2 => Lz4V2Codec::<String>::new().decode(&raw),
                Compression::Snappy => SnappyCodec::<String>::new().decode(&raw),
                _ => ZstdCodec::<String>::new().decode(&raw),
            };
            assert_eq!(
                decoded.unwrap_or_else(|e| panic!("{name} {case}: {e}")),
                expected,
                "{name} {case}"
            );
        }
    }
}
