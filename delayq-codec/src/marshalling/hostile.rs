//! Hostile bytes: truncated, forged, too deep, cyclic,
//! exponential, unknown. Each gives a typed error with its offset; none
//! panics, none allocates for a length the payload cannot hold.

use super::tests::cases;
use super::*;
use crate::kryo::MAX_DEPTH;
use crate::test_support::sweeps::{truncations, Edit};
use delayq_test_support::vectors::unhex;

fn kind(raw: &[u8]) -> MarshallingErrorKind {
    decode(raw).unwrap_err().kind()
}

/// Version 4, then `parts` concatenated.
fn stream(parts: &[&[u8]]) -> Vec<u8> {
    let mut raw = vec![0x04];
    for p in parts {
        raw.extend_from_slice(p);
    }
    raw
}

/// River's small string: `0x3e`, its length, its (ASCII) characters.
fn small(s: &str) -> Vec<u8> {
    let mut out = vec![0x3e, s.len() as u8];
    out.extend_from_slice(s.as_bytes());
    out
}

#[test]
fn every_truncation_of_every_vector_is_a_typed_error() {
    for case in cases() {
        for (len, prefix) in truncations(&case.river) {
            let err = decode(prefix).unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    MarshallingErrorKind::Truncated | MarshallingErrorKind::TooLarge
                ),
                "{} cut at {len}: {err}",
                case.name
            );
            assert!(
                err.offset().is_some_and(|at| at <= len),
                "{} cut at {len}: {err}",
                case.name
            );
        }
    }
}

#[test]
fn forged_lengths_are_refused_before_anything_is_allocated() {
    let max = [0x7f, 0xff, 0xff, 0xff];
    // A String of 2^31 - 1 characters, one byte of them present.
    let err = decode(&stream(&[&[0x40], &max, b"a"])).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (MarshallingErrorKind::TooLarge, Some(6)),
        "{err}"
    );
    // An ArrayList, a HashMap of 2^31 - 1 elements.
    assert_eq!(
        kind(&stream(&[&[0x55], &max, &[0x5a, 0x01]])),
        MarshallingErrorKind::TooLarge
    );
    assert_eq!(
        kind(&stream(&[&[0x55], &max, &[0x64, 0x01, 0x01]])),
        MarshallingErrorKind::TooLarge
    );
    // A class descriptor of 2^31 - 1 fields.
    let class = [
        &[0x04, 0x09][..],
        &small("p.A"),
        &[0; 8],
        &max,
        &small("f"),
        &[0x16, 0x00, 0x16],
    ];
    assert_eq!(kind(&stream(&class)), MarshallingErrorKind::TooLarge);
    // A byte[] and a block of writeObject data of 2^31 - 1 bytes.
    assert_eq!(
        kind(&stream(&[&[0x44], &max, &[0x21, 0x01]])),
        MarshallingErrorKind::Truncated
    );
    let date = [
        &[0x04, 0x38][..],
        &small("java.util.Date"),
        &[0; 12],
        &[0x16, 0x34],
        &max,
        &[0; 8],
    ];
    assert_eq!(kind(&stream(&date)), MarshallingErrorKind::Truncated);
    // Negative lengths.
    assert_eq!(
        kind(&stream(&[&[0x40, 0xff, 0xff, 0xff, 0xff]])),
        MarshallingErrorKind::Malformed
    );
    assert_eq!(
        kind(&stream(&[&[0x55, 0xff, 0xff, 0xff, 0xff, 0x5a]])),
        MarshallingErrorKind::Malformed
    );
}

/// `levels` ArrayLists, each the only element of the one around it.
fn nested_lists(levels: usize) -> Vec<u8> {
    let mut raw = vec![0x04];
    for _ in 1..levels {
        raw.extend_from_slice(&[0x53, 0x01, 0x5a]);
    }
    raw.extend_from_slice(&[0x52, 0x5a]);
    raw
}

#[test]
fn nesting_deeper_than_max_depth_is_refused_without_exhausting_the_stack() {
    assert!(decode(&nested_lists(MAX_DEPTH)).is_ok());
    for levels in [MAX_DEPTH + 1, 100_000] {
        let err = decode(&nested_lists(levels)).unwrap_err();
        assert_eq!(err.kind(), MarshallingErrorKind::TooDeep, "{levels}: {err}");
    }
    // Class descriptors too: each class's superclass described inside it.
    let mut raw = vec![0x04, 0x04];
    for i in 0..100_000 {
        raw.push(0x09);
        raw.extend_from_slice(&stream(&[&small(&format!("p.C{i}")), &[0; 12]])[1..]);
    }
    assert_eq!(kind(&raw), MarshallingErrorKind::TooDeep);
}

/// A back-reference puts a whole earlier tree at the depth it appears:
/// nesting counts it, or references could nest values without bound.
#[test]
fn back_references_cannot_nest_values_past_max_depth() {
    let depth = 60;
    // [A, B]: A is 60 nested lists; B is 60 nested lists holding A inside.
    let mut raw = vec![0x04, 0x53, 0x02, 0x5a];
    raw.extend_from_slice(&nested_lists(depth)[1..]);
    for _ in 0..depth {
        raw.extend_from_slice(&[0x53, 0x01, 0x5a]);
    }
    // Instances: 0 the pair, 1..=60 A's lists, 61..=120 B's: A is 120 back.
    raw.extend_from_slice(&[0x39, (0x100 - 2 * depth) as u8]);
    let err = decode(&raw).unwrap_err();
    assert_eq!(err.kind(), MarshallingErrorKind::TooDeep, "{err}");
    // Inside 15 lists instead of 60, it fits.
    let mut ok = vec![0x04, 0x53, 0x02, 0x5a];
    ok.extend_from_slice(&nested_lists(depth)[1..]);
    for _ in 0..15 {
        ok.extend_from_slice(&[0x53, 0x01, 0x5a]);
    }
    ok.extend_from_slice(&[0x39, (0x100 - (depth + 15)) as u8]);
    assert_eq!(
        decode(&ok).unwrap().to_json().to_string().matches('[').count(),
        1 + depth + 15 + depth
    );
}

#[test]
fn a_value_holding_itself_is_refused() {
    // An ArrayList whose element is itself (instance 0, 1 back).
    let err = decode(&[0x04, 0x53, 0x01, 0x5a, 0x39, 0xff]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (MarshallingErrorKind::BadReference, Some(4)),
        "{err}"
    );
    assert!(err.message().contains("cycle"), "{err}");
    // A POJO whose field is itself: instances "p.Node" 0, "next" 1, the node 2.
    let node = stream(&[
        &[0x04, 0x09],
        &small("p.Node"),
        &[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1],
        &small("next"),
        &[0x16, 0x00, 0x16, 0x39, 0xff],
    ]);
    let err = decode(&node).unwrap_err();
    assert_eq!(err.kind(), MarshallingErrorKind::BadReference, "{err}");
    assert!(
        err.message().contains("instance 2") && err.message().contains("cycle"),
        "{err}"
    );
    // A HashMap whose value is itself (custom writeObject data): instances
    // "java.util.HashMap" 0, "loadFactor" 1, "threshold" 2, the map 3, "k" 4.
    let map = stream(&[
        &[0x04, 0x38],
        &small("java.util.HashMap"),
        &[0x05, 0x07, 0xda, 0xc1, 0xc3, 0x16, 0x60, 0xd1, 0, 0, 0, 2],
        &small("loadFactor"),
        &[0x26, 0x00],
        &small("threshold"),
        &[
            0x23, 0x00, 0x16, 0x3f, 0x40, 0, 0, 0, 0, 0, 12, 0x32, 0x08, 0, 0, 0, 16, 0, 0, 0, 1,
        ],
        &small("k"),
        &[0x39, 0xfe, 0x35],
    ]);
    let err = decode(&map).unwrap_err();
    assert_eq!(err.kind(), MarshallingErrorKind::BadReference, "{err}");
    assert!(err.message().contains("instance 3"), "{err}");
}

/// `levels` ArrayLists, each holding the one inside twice (the second time
/// by reference), the innermost `["x"]`: 2^levels strings from ~5 bytes a
/// level.
fn doubling_lists(levels: usize) -> Vec<u8> {
    let mut raw = vec![0x04];
    for _ in 0..levels {
        raw.extend_from_slice(&[0x53, 0x02, 0x5a]);
    }
    raw.extend_from_slice(&[0x53, 0x01, 0x5a, 0x3e, 0x01, b'x']);
    // Instances: the outermost list 0 ... the innermost levels, "x" levels + 1;
    // the k-th list from the inside repeats the one inside it, k + 1 back.
    for k in 1..=levels {
        raw.extend_from_slice(&[0x39, (0x100 - (k + 1)) as u8]);
    }
    raw
}

#[test]
fn back_references_that_expand_past_the_payloads_bound_are_refused_before_building() {
    // Small enough to see them built: 2^10 strings from 56 bytes.
    let ok = decode(&doubling_lists(10)).unwrap();
    assert_eq!(ok.to_json().to_string().matches("\"x\"").count(), 1 << 10);
    for levels in [20, 40] {
        let raw = doubling_lists(levels);
        let err = decode(&raw).unwrap_err();
        assert_eq!(err.kind(), MarshallingErrorKind::TooLarge, "{levels}: {err}");
    }
    // One string of 10 000 characters repeated 2 000 times: 20 million
    // characters from 14 kB.
    let mut raw = vec![0x04, 0x54, 0x07, 0xd1, 0x5a, 0x3f, 0x27, 0x10];
    raw.extend(std::iter::repeat_n(b'y', 10_000));
    for _ in 0..2_000 {
        raw.extend_from_slice(&[0x39, 0xff]);
    }
    let err = decode(&raw).unwrap_err();
    assert_eq!(err.kind(), MarshallingErrorKind::TooLarge, "{err}");
    // Repeating it within the bound is fine.
    let mut fits = vec![0x04, 0x53, 0x15, 0x5a, 0x3f, 0x27, 0x10];
    fits.extend(std::iter::repeat_n(b'y', 10_000));
    for _ in 0..20 {
        fits.extend_from_slice(&[0x39, 0xff]);
    }
    assert!(decode(&fits).is_ok());
}

#[test]
fn unknown_ids_are_typed_errors_at_their_offset() {
    // No object starts with these (block ids belong inside writeObject data).
    for lead in [0x00].into_iter().chain(0x32..=0x35).chain(0x83..=0xff) {
        let err = decode(&[0x04, lead, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(
            (err.kind(), err.offset()),
            (MarshallingErrorKind::UnknownId, Some(1)),
            "{lead:#x}: {err}"
        );
    }
    // A protocol version River does not have.
    for version in [0x00, 0x01, 0x05, 0xac] {
        let err = decode(&[version, 0x3d]).unwrap_err();
        assert_eq!(
            (err.kind(), err.offset()),
            (MarshallingErrorKind::UnknownId, Some(0)),
            "{err}"
        );
    }
    // A class id and a collection id that do not exist.
    let err = decode(&[0x04, 0x04, 0xf0]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (MarshallingErrorKind::UnknownId, Some(2)),
        "{err}"
    );
    let err = decode(&[0x04, 0x53, 0x01, 0xf0]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (MarshallingErrorKind::UnknownId, Some(3)),
        "{err}"
    );
    // References to instances and classes that were never written.
    let err = decode(&[0x04, 0x02, 0, 0, 0, 7]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (MarshallingErrorKind::BadReference, Some(1)),
        "{err}"
    );
    let err = decode(&[0x04, 0x04, 0x3b, 0xff]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (MarshallingErrorKind::BadReference, Some(2)),
        "{err}"
    );
    // Bytes after the value.
    let err = decode(&[0x04, 0x3d, 0x3d]).unwrap_err();
    assert_eq!(
        (err.kind(), err.offset()),
        (MarshallingErrorKind::TrailingBytes, Some(2)),
        "{err}"
    );
}

#[test]
fn what_delayq_does_not_read_is_named() {
    let unsupported = |raw: &[u8], what: &str| {
        let err = decode(raw).unwrap_err();
        assert_eq!(err.kind(), MarshallingErrorKind::Unsupported, "{what}: {err}");
        assert!(err.message().contains(what), "{what}: {err}");
    };
    unsupported(&[0x04, 0x53, 0x02, 0x7b, 0x01], "java.util.Collections$CopiesList");
    // Read now: an int[] and a LocalDate, which this reader refused before.
    assert_eq!(
        decode(&[0x04, 0x42, 0x01, 0x23, 0, 0, 0, 1]).unwrap(),
        KryoValue::Collection {
            class: "[I".into(),
            items: vec![KryoValue::Int(1)]
        }
    );
    unsupported(&[0x04, 0x5a], "java.lang.Class object (java.util.ArrayList)");
    unsupported(&[0x04, 0x04, 0x08, 0, 0, 0, 0], "a proxy class");
    unsupported(&[0x04, 0x03], "a predefined object");
    // java.time.Ser of a LocalDate (type 3).
    let local_date = stream(&[
        &[0x04, 0x0a, 0, 0, 0, 13],
        b"java.time.Ser",
        &[0; 8],
        &[0x32, 0x07, 3, 0, 0, 0x07, 0xea, 1, 1, 0x35],
    ]);
    assert_eq!(decode(&local_date).unwrap().to_json(), serde_json::json!("2026-01-01"));
    // A TreeMap sorted by a comparator (here a string, standing for one).
    unsupported(
        &[0x04, 0x52, 0x67, 0x3e, 0x01, b'c'],
        "a java.util.TreeMap with a comparator",
    );
    // A class of the application with custom writeObject data.
    let custom = stream(&[
        &[0x04, 0x38],
        &small("p.Custom"),
        &[0; 12],
        &[0x16, 0x32, 0x01, 0x07, 0x35],
    ]);
    unsupported(&custom, "custom writeObject data of p.Custom");
    // Its writeObject calling defaultWriteObject only is a plain POJO.
    let plain = stream(&[
        &[0x04, 0x38],
        &small("p.Custom"),
        &[0; 8],
        &[0, 0, 0, 1],
        &small("n"),
        &[0x23, 0x00, 0x16, 0, 0, 0, 5, 0x35],
    ]);
    assert_eq!(decode(&plain).unwrap().to_json(), serde_json::json!({"n": 5}));
}

#[test]
fn mutated_and_truncated_vectors_never_panic() {
    // Deterministic sweep: every byte of every vector set to a few values.
    let repeats: serde_json::Value =
        serde_json::from_str(include_str!("../../../compat/fixtures/marshalling_repeats.json")).unwrap();
    let mut all: Vec<Vec<u8>> = cases().into_iter().map(|c| c.river).collect();
    all.extend(
        repeats["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| unhex(c["hex"].as_str().unwrap())),
    );
    for raw in all {
        for at in 0..raw.len() {
            for byte in [0x00, 0x01, 0x02, 0x35, 0x39, 0x3b, 0x55, 0x7f, 0x80, 0xff] {
                let mut bad = raw.clone();
                Edit::Set(byte).apply(&mut bad, at);
                let _ = decode(&bad);
                let _ = looks_like(&bad);
            }
        }
    }
}
