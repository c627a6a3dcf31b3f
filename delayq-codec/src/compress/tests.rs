//! The bytes real Redisson `LZ4Codec`, `LZ4CodecV2`, `SnappyCodecV2` and
//! `ZStdCodec` wrote (`compat/fixtures/codecs.json`), decoded to the values
//! of `kryo5.json`; then hostile bytes.

use serde_json::Value;

use super::*;
use crate::kryo::KryoValue;
use crate::test_support::pojos::{schema, Event, Order};
use crate::test_support::sweeps::truncations;
use crate::{Codec, JacksonCodec, StringCodec};
use delayq_test_support::vectors::{codecs, kryo_case, unhex, KryoCase};

/// One captured payload of a wrapper (`name` as in codecs.json).
pub(super) struct Vector {
    pub(super) case: String,
    pub(super) raw: Vec<u8>,
    pub(super) java_decode_error: bool,
}

/// Every payload of the wrappers' codecs, and of every version that wrote
/// other bytes.
pub(super) fn vectors(codec: &'static str) -> Vec<Vector> {
    let file = codecs();
    let cases = file["codecs"][codec]["cases"].as_object().unwrap();
    let mut out = Vec::new();
    for (case, c) in cases {
        let Some(hex) = c["hex"].as_str() else { continue };
        let hexes = std::iter::once(hex).chain(
            c.get("differs_in")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|m| m.values().filter_map(Value::as_str)),
        );
        for hex in hexes {
            out.push(Vector {
                case: case.clone(),
                raw: unhex(hex),
                java_decode_error: c.get("java_decode_error").is_some(),
            });
        }
    }
    assert!(!out.is_empty(), "{codec}");
    out
}

/// `inner` in the typed wrapper of `compression`.
pub(super) fn wrapped<T: 'static, C: Codec<T>>(compression: Compression, inner: C) -> Box<dyn Codec<T>> {
    match compression {
        Compression::Lz4 => Box::new(Lz4Codec::wrap(inner)),
        Compression::Lz4V2 => Box::new(Lz4V2Codec::wrap(inner)),
        Compression::Snappy => Box::new(SnappyCodec::wrap(inner)),
        Compression::Zstd => Box::new(ZstdCodec::wrap(inner)),
    }
}

pub(super) const KRYO_WRAPPERS: [(&str, Compression); 4] = [
    ("lz4", Compression::Lz4),
    ("lz4v2", Compression::Lz4V2),
    ("snappy", Compression::Snappy),
    ("zstd", Compression::Zstd),
];

#[test]
fn every_kryo_vector_decompresses_to_java_s_kryo_bytes_and_value() {
    let schema = schema();
    let mut count = 0;
    for (name, compression) in KRYO_WRAPPERS {
        for v in vectors(name) {
            assert!(compression.looks_like(&v.raw), "{name} {}", v.case);
            let inner = compression
                .decompress(&v.raw, DEFAULT_MAX_DECOMPRESSED)
                .unwrap_or_else(|e| panic!("{name} {}: {e}", v.case));
            let KryoCase { raw: kryo, json, .. } = kryo_case(&v.case);
            // codecs.json's linkedhashmap_nested holds Longs in an ArrayList,
            // kryo5.json's Integers in Arrays$ArrayList (same JSON).
            if v.case != "linkedhashmap_nested" {
                assert_eq!(inner, kryo, "{name} {}", v.case);
            }
            let value = KryoValue::decode(&inner, Some(&schema)).unwrap_or_else(|e| panic!("{name} {}: {e}", v.case));
            assert_eq!(value.to_json(), json, "{name} {}", v.case);
            count += 1;
        }
    }
    assert_eq!(count, 4 * 27);
}

#[test]
fn typed_wrappers_read_java_s_kryo_payloads() {
    fn check<T, C>(codec: &C, name: &'static str, case: &str)
    where
        T: PartialEq + std::fmt::Debug + serde::de::DeserializeOwned,
        C: Codec<T>,
    {
        let v = vectors(name).into_iter().find(|v| v.case == case).unwrap();
        let json = kryo_case(case).json;
        let decoded = codec.decode(&v.raw).unwrap_or_else(|e| panic!("{name} {case}: {e}"));
        assert_eq!(decoded, serde_json::from_value::<T>(json).unwrap(), "{name} {case}");
        // And what we write reads back.
        assert_eq!(codec.decode(&codec.encode(&decoded).unwrap()).unwrap(), decoded);
    }
    check(&Lz4Codec::<Event>::new(), "lz4", "pojo_event_nested");
    check(&Lz4V2Codec::<Event>::new(), "lz4v2", "pojo_event_nested");
    check(&SnappyCodec::<Event>::new(), "snappy", "pojo_event_nested");
    check(&ZstdCodec::<Event>::new(), "zstd", "pojo_event_nested");
    check(&Lz4Codec::<Order>::new(), "lz4", "pojo_order");
    check(&Lz4V2Codec::<Event>::new(), "lz4v2", "pojo_event_all_nulls");
    check(&SnappyCodec::<String>::new(), "snappy", "string_unicode");
    check(&ZstdCodec::<i64>::new(), "zstd", "long_max");
    assert_eq!(Lz4Codec::<Order>::new().name(), "lz4");
    assert_eq!(ZstdCodec::<Order>::new().name(), "zstd");
}

#[test]
fn typed_wrappers_read_java_s_jackson_and_string_payloads() {
    let mut count = 0;
    for (name, compression) in [("lz4/json", Compression::Lz4), ("snappy/json", Compression::Snappy)] {
        for v in vectors(name) {
            let json = kryo_case(&v.case).json;
            let order: Order = serde_json::from_value(json).unwrap();
            let decoded = wrapped(compression, JacksonCodec::<Order>::new()).decode(&v.raw);
            assert_eq!(decoded.unwrap_or_else(|e| panic!("{name} {}: {e}", v.case)), order);
            count += 1;
        }
    }
    let codec = ZstdCodec::wrap(StringCodec);
    for v in vectors("zstd/string") {
        let json = kryo_case(&v.case).json;
        assert_eq!(Value::String(codec.decode(&v.raw).unwrap()), json, "{}", v.case);
        count += 1;
    }
    assert_eq!(count, 2 + 2 + 3);
    assert_eq!(Lz4Codec::wrap(JacksonCodec::<Order>::new()).name(), "lz4/jackson");
    assert_eq!(SnappyCodec::wrap(StringCodec).name(), "snappy/string");
}

/// The literal run an LZ4 block starts with (its first sequence's).
fn first_literal_run(block: &[u8]) -> usize {
    let mut len = usize::from(block[0] >> 4);
    if len == 15 {
        for &b in &block[1..] {
            len += usize::from(b);
            if b != 255 {
                break;
            }
        }
    }
    len
}

#[test]
fn java_3_52_could_not_read_the_lz4v2_blocks_that_hold_a_match_and_we_can() {
    // Redisson before 4.5.0 read LZ4CodecV2 bytes with one read() on
    // commons-compress's stream, which returns one literal run or one match
    // a call: exactly the three vectors whose block has a match failed.
    for v in vectors("lz4v2") {
        let claimed = u32::from_be_bytes(v.raw[..4].try_into().unwrap()) as usize;
        let literal_only = first_literal_run(&v.raw[4..]) == claimed;
        assert_eq!(literal_only, !v.java_decode_error, "{}", v.case);
        let inner = Compression::Lz4V2.decompress(&v.raw, DEFAULT_MAX_DECOMPRESSED).unwrap();
        assert_eq!(inner.len(), claimed, "{}", v.case);
    }
    assert_eq!(vectors("lz4v2").iter().filter(|v| v.java_decode_error).count(), 3);
    // So ours are one literal run, whatever the inner bytes.
    let inner = b"abcabcabcabcabcabcabcabcabcabc".repeat(40);
    let raw = Compression::Lz4V2.compress(&inner).unwrap();
    assert_eq!(first_literal_run(&raw[4..]), inner.len());
    assert!(Compression::Lz4.compress(&inner).unwrap().len() < inner.len() / 4);
}

#[test]
fn every_wrapper_round_trips_edge_sizes_and_names_itself() {
    for compression in Compression::ALL {
        assert_eq!(Compression::from_name(compression.name()), Some(compression));
        assert_eq!(compression.to_string(), compression.name());
        for len in [0, 1, 14, 15, 16, 269, 270, 271, 65_535, 200_000] {
            let inner: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let raw = compression.compress(&inner).unwrap();
            assert!(compression.looks_like(&raw), "{compression} {len}");
            assert_eq!(compression.decompress(&raw, len).unwrap(), inner, "{compression} {len}");
        }
    }
}

// Hostile bytes.

fn kind(compression: Compression, raw: &[u8], max_size: usize) -> CompressErrorKind {
    match compression.decompress(raw, max_size) {
        Ok(out) => panic!("{compression}: {raw:02x?} decompressed to {} bytes", out.len()),
        Err(e) => {
            assert_eq!(e.compression(), compression);
            e.kind()
        }
    }
}

#[test]
fn a_claimed_size_over_the_cap_is_refused() {
    let inner = vec![7u8; 1000];
    for compression in Compression::ALL {
        let raw = compression.compress(&inner).unwrap();
        assert_eq!(
            kind(compression, &raw, 999),
            CompressErrorKind::TooLarge,
            "{compression}"
        );
        assert_eq!(compression.decompress(&raw, 1000).unwrap(), inner);
    }
    // 2 GiB - 1 claimed by a few bytes.
    for compression in [Compression::Lz4, Compression::Lz4V2, Compression::Zstd] {
        let raw = [0x7f, 0xff, 0xff, 0xff, 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58];
        assert_eq!(
            kind(compression, &raw, DEFAULT_MAX_DECOMPRESSED),
            CompressErrorKind::TooLarge
        );
    }
    let snappy = [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00];
    assert_eq!(
        kind(Compression::Snappy, &snappy, DEFAULT_MAX_DECOMPRESSED),
        CompressErrorKind::TooLarge
    );
    // The typed wrappers apply their cap.
    let codec = ZstdCodec::<String>::new().with_max_size(10);
    let raw = ZstdCodec::<String>::new().encode(&"x".repeat(20)).unwrap();
    let error = codec.decode(&raw).unwrap_err();
    assert_eq!(
        error.downcast_ref::<CompressError>().unwrap().kind(),
        CompressErrorKind::TooLarge
    );
}

#[test]
fn a_claim_more_than_the_bytes_can_make_is_refused_under_the_cap() {
    // A length the compressed size cannot reach (LZ4: 255 per byte,
    // Snappy: 22, zstd: 32 Ki), within the cap: refused before allocating.
    let lz4 = [0x00, 0x10, 0x00, 0x00, 0x10, b'a'];
    assert_eq!(
        kind(Compression::Lz4, &lz4, usize::MAX),
        CompressErrorKind::LengthMismatch
    );
    let snappy = [0x80, 0x80, 0x10, 0x04, b'a'];
    assert_eq!(
        kind(Compression::Snappy, &snappy, usize::MAX),
        CompressErrorKind::LengthMismatch
    );
    let zstd = [
        0x01, 0x00, 0x00, 0x00, 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0x02, 0x00, 0x00, 0x00,
    ];
    assert_eq!(
        kind(Compression::Zstd, &zstd, usize::MAX),
        CompressErrorKind::LengthMismatch
    );
}

#[test]
fn a_bomb_stops_at_the_claimed_length() {
    // Data that decompresses to 4 MiB behind a claim of 100 bytes.
    let zeros = vec![0u8; 4 << 20];
    for compression in Compression::ALL {
        let mut raw = compression.compress(&zeros).unwrap();
        match compression {
            Compression::Snappy => {
                // The varint header: 100 instead of 4 Mi.
                let (_, start) = snappy_header(&raw);
                raw.splice(..start, [100]);
            }
            _ => raw[..4].copy_from_slice(&100u32.to_be_bytes()),
        }
        assert_eq!(
            kind(compression, &raw, DEFAULT_MAX_DECOMPRESSED),
            CompressErrorKind::LengthMismatch,
            "{compression}"
        );
    }
    // An honest claim over the cap.
    for compression in Compression::ALL {
        let raw = compression.compress(&zeros).unwrap();
        assert_eq!(
            kind(compression, &raw, 1 << 20),
            CompressErrorKind::TooLarge,
            "{compression}"
        );
    }
}

fn snappy_header(raw: &[u8]) -> (usize, usize) {
    let end = raw.iter().position(|b| b & 0x80 == 0).unwrap() + 1;
    let value = raw[..end]
        .iter()
        .rev()
        .fold(0usize, |acc, b| acc << 7 | usize::from(b & 0x7f));
    (value, end)
}

#[test]
fn every_truncation_of_every_vector_is_an_error() {
    for (name, compression) in KRYO_WRAPPERS {
        for v in vectors(name) {
            for (len, cut) in truncations(&v.raw) {
                let error = compression
                    .decompress(cut, DEFAULT_MAX_DECOMPRESSED)
                    .map(|out| format!("{} bytes", out.len()))
                    .expect_err(&format!("{name} {} cut to {len}", v.case));
                assert!(
                    matches!(
                        error.kind(),
                        CompressErrorKind::Truncated | CompressErrorKind::LengthMismatch | CompressErrorKind::Malformed
                    ),
                    "{name} {} cut to {len}: {error}",
                    v.case
                );
            }
        }
    }
}

#[test]
fn a_forged_length_is_an_error_never_cut_or_padded_bytes() {
    for (name, compression) in KRYO_WRAPPERS {
        for v in vectors(name) {
            for delta in [-1i64, 1, 2, 1000] {
                let mut raw = v.raw.clone();
                if compression == Compression::Snappy {
                    let (claimed, start) = snappy_header(&raw);
                    let Ok(forged) = u8::try_from(claimed as i64 + delta) else {
                        continue;
                    };
                    if forged >= 0x80 {
                        continue;
                    }
                    raw.splice(..start, [forged]);
                } else {
                    let claimed = i64::from(u32::from_be_bytes(raw[..4].try_into().unwrap()));
                    let Ok(forged) = u32::try_from(claimed + delta) else {
                        continue;
                    };
                    raw[..4].copy_from_slice(&forged.to_be_bytes());
                }
                let error = kind(compression, &raw, DEFAULT_MAX_DECOMPRESSED);
                assert!(
                    matches!(error, CompressErrorKind::LengthMismatch | CompressErrorKind::Truncated),
                    "{name} {} {delta:+}: {error:?}",
                    v.case
                );
            }
        }
    }
}

#[test]
fn garbage_and_other_wrappers_bytes_are_typed_errors() {
    let kryo = [0x03, b'h', b'i' | 0x80];
    for compression in Compression::ALL {
        for raw in [&b""[..], b"hello world", &kryo, b"\xff\xff\xff\xff\xff\xff\xff"] {
            let _ = kind(compression, raw, DEFAULT_MAX_DECOMPRESSED);
        }
    }
    // zstd: a bad magic number, a dictionary, trailing bytes, a bad checksum.
    let good = Compression::Zstd.compress(b"hello hello hello").unwrap();
    let mut bad_magic = good.clone();
    bad_magic[4] ^= 1;
    assert_eq!(kind(Compression::Zstd, &bad_magic, 1024), CompressErrorKind::Malformed);
    let mut dictionary = good.clone();
    dictionary[8] |= 0b01;
    assert_eq!(
        kind(Compression::Zstd, &dictionary, 1024),
        CompressErrorKind::Unsupported
    );
    let mut reserved = good.clone();
    reserved[8] |= 0b1000;
    assert_eq!(kind(Compression::Zstd, &reserved, 1024), CompressErrorKind::Malformed);
    let mut trailing = good.clone();
    trailing.extend_from_slice(b"junk");
    assert_eq!(kind(Compression::Zstd, &trailing, 1024), CompressErrorKind::Malformed);
    // A frame with a checksum (flag 0x04): the frame, then 4 bytes.
    let java = unhex("0000000228b52ffd0458100000038101000000000000");
    assert_eq!(kind(Compression::Zstd, &java, 1024), CompressErrorKind::Malformed);
    // A window far over the claim and 8 MiB: refused before reserving it.
    let huge_window = unhex("0000000228b52ffd0078100000038101000000");
    assert_eq!(
        kind(Compression::Zstd, &huge_window, 1024),
        CompressErrorKind::Unsupported
    );
    // LZ4: an offset before the start.
    let lz4 = [0, 0, 0, 9, 0x14, b'a', 0x05, 0x00];
    assert_eq!(kind(Compression::Lz4, &lz4, 1024), CompressErrorKind::Malformed);
    // The typed wrappers say which wrapper wrote what they cannot read.
    let zstd_bytes = ZstdCodec::<String>::new().encode(&"hi".to_string()).unwrap();
    let hint = Lz4Codec::<String>::new().diagnose(&zstd_bytes).unwrap();
    assert!(hint.contains("ZStdCodec"), "{hint}");
    assert!(Lz4Codec::<String>::new().diagnose(&kryo).unwrap().contains("KryoCodec"));
}

#[test]
fn an_inner_codec_s_error_comes_through_unchanged() {
    let raw = Compression::Snappy.compress(&[0xff, 0xfe]).unwrap();
    let error = SnappyCodec::wrap(StringCodec).decode(&raw).unwrap_err();
    assert!(error.downcast_ref::<std::str::Utf8Error>().is_some(), "{error}");
}
