//! Property tests: any bytes compress and decompress back; random bytes and
//! mutations of Java's payloads never panic, never come out at another
//! size than they claim, and `looks_like` never refuses what decompresses
//! (for LZ4 and Snappy: answers exactly whether it does).

use proptest::collection::vec;
use proptest::prelude::*;

use super::tests::{vectors, KRYO_WRAPPERS};
use super::*;
use crate::test_support::sweeps::Edit;

/// Decompresses (also with a small cap) and checks what holds for any input.
fn check_any(compression: Compression, raw: &[u8]) -> Result<(), TestCaseError> {
    for max_size in [DEFAULT_MAX_DECOMPRESSED, 16] {
        match compression.decompress(raw, max_size) {
            Ok(out) => {
                prop_assert!(out.len() <= max_size);
                prop_assert!(
                    compression.looks_like(raw),
                    "{compression}: decompressed but not looks_like: {raw:02x?}"
                );
                let claimed = match compression {
                    Compression::Snappy => snap::raw::decompress_len(raw).unwrap(),
                    _ => u32::from_be_bytes(raw[..4].try_into().unwrap()) as usize,
                };
                prop_assert_eq!(out.len(), claimed);
            }
            Err(e) => prop_assert_eq!(e.compression(), compression),
        }
    }
    // For LZ4 and Snappy, looks_like walks the block: it answers exactly
    // whether the block decompresses (what auto-detection relies on).
    if compression != Compression::Zstd {
        let decompresses = compression.decompress(raw, usize::MAX).is_ok();
        prop_assert_eq!(
            compression.looks_like(raw),
            decompresses,
            "{}: {:02x?}",
            compression,
            raw
        );
    }
    Ok(())
}

/// A vector of one of the wrappers, with a mutation: a byte changed,
/// inserted or removed, or the bytes cut short.
fn mutated() -> impl Strategy<Value = (Compression, Vec<u8>)> {
    let all: Vec<(Compression, Vec<u8>)> = KRYO_WRAPPERS
        .into_iter()
        .flat_map(|(name, compression)| vectors(name).into_iter().map(move |v| (compression, v.raw)))
        .collect();
    (0..all.len(), any::<usize>(), any::<u8>(), 0..4u8).prop_map(move |(i, at, byte, how)| {
        let (compression, mut raw) = all[i].clone();
        let at = at % raw.len();
        match how {
            0 => Edit::Flip(byte),
            1 => Edit::Insert(byte),
            2 => Edit::Remove,
            _ => Edit::Truncate,
        }
        .apply(&mut raw, at);
        (compression, raw)
    })
}

fn compression() -> impl Strategy<Value = Compression> {
    prop::sample::select(Compression::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_bytes_round_trip(compression in compression(), inner in vec(any::<u8>(), 0..2000), repeat in 1usize..20) {
        // Repeated too, so that the compressors find matches.
        let inner = inner.repeat(repeat);
        let raw = compression.compress(&inner).unwrap();
        prop_assert!(compression.looks_like(&raw));
        prop_assert_eq!(compression.decompress(&raw, inner.len()).unwrap(), inner);
    }

    #[test]
    fn random_bytes_never_panic(compression in compression(), raw in vec(any::<u8>(), 0..64)) {
        check_any(compression, &raw)?;
    }

    #[test]
    fn random_data_behind_a_valid_header_never_panics(
        compression in compression(),
        claimed in 0u32..4096,
        data in vec(any::<u8>(), 0..256),
    ) {
        let mut raw = match compression {
            Compression::Snappy => {
                let mut header = Vec::new();
                let mut n = claimed;
                while n >= 0x80 {
                    header.push(n as u8 | 0x80);
                    n >>= 7;
                }
                header.push(n as u8);
                header
            }
            Compression::Zstd => [&claimed.to_be_bytes()[..], &[0x28, 0xb5, 0x2f, 0xfd]].concat(),
            _ => claimed.to_be_bytes().to_vec(),
        };
        raw.extend_from_slice(&data);
        check_any(compression, &raw)?;
    }

    #[test]
    fn mutations_of_java_s_payloads_never_panic((compression, raw) in mutated()) {
        check_any(compression, &raw)?;
        // Any wrapper may be handed any other's bytes (auto-detection).
        for other in Compression::ALL {
            check_any(other, &raw)?;
        }
    }
}
