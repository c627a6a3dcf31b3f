//! Hostile bytes: truncations, forged lengths, deep nesting, cycles,
//! exponential sharing, unknown codes. Each is a typed error with an
//! offset, never a panic, in time linear in the input.

use super::tests::{cases, extra};
use super::*;
use crate::test_support::sweeps::truncations;
use delayq_test_support::vectors::unhex;

use SerializationErrorKind as K;

fn stream(hex: &str) -> Vec<u8> {
    let mut raw = MAGIC.to_vec();
    raw.extend_from_slice(&unhex(&hex.replace(' ', "")));
    raw
}

fn utf(text: &str) -> String {
    let mut out = format!("{:04x}", text.len());
    out.extend(text.bytes().map(|b| format!("{b:02x}")));
    out
}

fn handle(index: u32) -> String {
    format!("71{:08x}", 0x7e_0000 + index)
}

fn error_of(raw: &[u8]) -> SerializationError {
    match decode(raw) {
        // Not the value: a failed cap would print what it let through.
        Ok(v) => panic!("decoded a {:?}", v.java_class()),
        Err(e) => e,
    }
}

const ARRAYLIST_DESC: &str =
    "72 0013 6a6176612e7574696c2e41727261794c697374 7881d21d99c7619d 03 0001 49 0004 73697a65 78 70";

#[test]
fn every_truncation_of_every_vector_is_an_error_at_or_before_the_cut() {
    let extras = [
        "linkedlist",
        "treemap",
        "shared_object",
        "superclass_chain",
        "object_array_nested",
    ];
    let vectors = cases()
        .into_iter()
        .map(|c| c.raw)
        .chain(extras.iter().map(|n| extra(n)));
    for raw in vectors {
        for (cut, prefix) in truncations(&raw) {
            let e = error_of(prefix);
            // A cut string or array leaves a length larger than the bytes left.
            assert!(matches!(e.kind(), K::Truncated | K::TooLarge), "cut at {cut}: {e}");
            assert!(e.offset().is_some_and(|at| at <= cut), "cut at {cut}: {e}");
        }
    }
}

#[test]
fn forged_lengths_are_refused_before_anything_is_allocated() {
    let byte_array_desc = "72 0002 5b42 acf317f8060854e0 02 0000 78 70";
    let long_array_desc = "72 0002 5b4a 782004b512b17593 02 0000 78 70";
    let object_array_desc = "72 0013 5b4c6a6176612e6c616e672e4f626a6563743b 90ce589f1073296c 02 0000 78 70";
    let date_desc = "72 000e 6a6176612e7574696c2e44617465 686a81014b597419 03 0000 78 70";
    for (what, hex, at) in [
        ("a string of 65535 bytes", "74 ffff 61".to_owned(), 5),
        ("a long string of 2^63-1 bytes", "7c 7fffffffffffffff 61".to_owned(), 5),
        ("a byte[] of 2^31-1", format!("75 {byte_array_desc} 7fffffff 01"), 23),
        (
            "a long[] of 2^28 (2 GiB)",
            format!("75 {long_array_desc} 10000000 01"),
            23,
        ),
        (
            "an Object[] of 2^31-1",
            format!("75 {object_array_desc} 7fffffff 70"),
            40,
        ),
        ("a block of 2^31-1 bytes", format!("73 {date_desc} 7a 7fffffff 00"), 36),
        (
            "a class of 32767 fields",
            "73 72 0003 702e41 0000000000000001 02 7fff 49".to_owned(),
            20,
        ),
    ] {
        let e = error_of(&stream(&hex));
        assert_eq!((e.kind(), e.offset()), (K::TooLarge, Some(at)), "{what}: {e}");
    }
    for (what, hex) in [
        ("a negative long string", "7c ffffffffffffffff 61"),
        ("a negative array", &format!("75 {byte_array_desc} ffffffff") as &str),
    ] {
        assert_eq!(error_of(&stream(hex)).kind(), K::Malformed, "{what}");
    }
    // Sizes inside custom data are checked against the objects read.
    let hashmap = cases().into_iter().find(|c| c.name == "hashmap").unwrap().raw;
    let size = unhex("0000001000000002");
    let at = hashmap.windows(8).position(|w| w == size).unwrap();
    let mut forged = hashmap.clone();
    forged[at + 4..at + 8].copy_from_slice(&[0x7f, 0xff, 0xff, 0xff]);
    let e = error_of(&forged);
    assert_eq!(e.kind(), K::Malformed, "{e}");
    assert!(e.message().contains("claims 2147483647 entries"), "{e}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // 10 000 ArrayLists, each inside the previous one.
    let mut hex = format!("73 {ARRAYLIST_DESC} 00000001 7704 00000001");
    for _ in 1..10_000 {
        hex += &format!("73 {} 00000001 7704 00000001", handle(0));
    }
    hex += &"78".repeat(10_000);
    let e = error_of(&stream(&hex));
    assert_eq!(e.kind(), K::TooDeep, "{e}");

    // 10 000 nested superclass descriptors.
    let mut hex = "73".to_owned();
    for i in 0..10_000 {
        hex += &format!("72 {} 0000000000000001 02 0000 78", utf(&format!("p.C{i:05}")));
    }
    hex += "70";
    assert_eq!(error_of(&stream(&hex)).kind(), K::TooDeep);

    // 200 classes, each naming the previous one as its superclass by
    // reference: each is read at depth 1, their chain is 200 long.
    let mut hex = format!("73 {ARRAYLIST_DESC} 000000c8 7704 000000c8");
    let mut next = 2; // handles: ArrayList's descriptor, the list
    for i in 0..200u32 {
        let parent = if i == 0 { "70".to_owned() } else { handle(next - 2) };
        hex += &format!(
            "73 72 {} 0000000000000001 02 0000 78 {parent}",
            utf(&format!("p.C{i:03}"))
        );
        next += 2; // the class, the object
    }
    hex += "78";
    let e = error_of(&stream(&hex));
    assert_eq!(e.kind(), K::TooDeep, "{e}");
    assert!(e.message().contains("superclasses"), "{e}");

    // Back-references nest a 90-deep list inside another 90-deep one.
    let nest = |inner: &str| {
        let mut hex = String::new();
        for _ in 0..90 {
            hex += &format!("73 {} 00000001 7704 00000001", handle(0));
        }
        hex + inner + &"78".repeat(90)
    };
    // The root list holds A (handles 2..=91) then B, whose innermost list holds A again.
    let a = nest("70");
    let b = nest(&handle(2));
    let hex = format!("73 {ARRAYLIST_DESC} 00000002 7704 00000002 {a} {b} 78");
    let e = error_of(&stream(&hex));
    assert_eq!(e.kind(), K::TooDeep, "{e}");
    assert!(e.message().contains("back-references"), "{e}");
}

#[test]
fn cyclic_back_references_are_an_error() {
    // Java's own: ArrayList l; l.add(l).
    let e = error_of(&extra("list_contains_itself"));
    assert_eq!((e.kind(), e.offset()), (K::Cyclic, Some(57)), "{e}");
    // A POJO whose field holds itself: handles are the class, its field type, the object.
    let hex = format!(
        "73 72 {} 0000000000000001 02 0001 4c {} 74 {} 78 70 {}",
        utf("p.Node"),
        utf("next"),
        utf("Lp/Node;"),
        handle(2)
    );
    assert_eq!(error_of(&stream(&hex)).kind(), K::Cyclic);
    // A class that is its own superclass.
    let hex = format!("73 72 {} 0000000000000001 02 0000 78 {}", utf("p.A"), handle(0));
    assert_eq!(error_of(&stream(&hex)).kind(), K::Cyclic);
    // A handle not assigned yet (the object's own, while its class is read).
    let e = error_of(&stream(&format!("73 {}", handle(0))));
    assert_eq!((e.kind(), e.offset()), (K::Malformed, Some(5)), "{e}");
    assert!(e.message().contains("never assigned"), "{e}");
}

/// `L0 = ["x"]`, `L(i+1) = [L(i), L(i)]` (the second by reference).
fn doubling(levels: usize) -> Vec<u8> {
    let mut hex = String::new();
    // Handles: ArrayList's descriptor 0, then each list one, "x" one.
    for level in 0..levels {
        let desc = if level == 0 {
            ARRAYLIST_DESC.to_owned()
        } else {
            handle(0)
        };
        hex += &format!("73 {desc} 00000002 7704 00000002");
    }
    hex += &format!("73 {} 00000001 7704 00000001 74 0001 78 78", handle(0));
    for level in (0..levels).rev() {
        // The list one level down got handle level + 2.
        hex += &format!("{} 78", handle(level as u32 + 2));
    }
    stream(&hex)
}

#[test]
fn shared_objects_cannot_expand_exponentially() {
    // 2^60 leaves from 1.3 KB.
    let raw = doubling(60);
    let e = error_of(&raw);
    assert_eq!(e.kind(), K::TooLarge, "{e}");
    // A little sharing decodes: 2^8 leaves.
    let value = decode(&doubling(8)).unwrap();
    assert_eq!(value.to_json().to_string().matches('x').count(), 256);
}

#[test]
fn long_names_copied_into_each_object_count_against_the_cap() {
    // 2000 objects of a class whose name, field name or field type is
    // 60 000 bytes long: 120 MB of names from 72 KB.
    let long = "f".repeat(60_000);
    let signature = format!("L{long};");
    for (class, field, code, ty, value) in [
        (long.as_str(), "f", "5a", "", "01"),
        ("p.A", long.as_str(), "5a", "", "01"),
        ("p.A", "f", "4c", signature.as_str(), "70"),
    ] {
        let ty = if ty.is_empty() {
            String::new()
        } else {
            format!("74 {}", utf(ty))
        };
        let mut hex = format!("73 {ARRAYLIST_DESC} 000007d0 7704 000007d0");
        hex += &format!(
            "73 72 {} 0000000000000001 02 0001 {code} {} {ty} 78 70 {value}",
            utf(class),
            utf(field)
        );
        for _ in 1..2000 {
            hex += &format!("73 {} {value}", handle(2));
        }
        hex += "78";
        assert_eq!(error_of(&stream(&hex)).kind(), K::TooLarge, "{}", &field[..1]);
    }
}

#[test]
fn unknown_and_unread_type_codes_are_typed_errors_with_offsets() {
    for code in (0u8..=0xff).filter(|c| !(0x70..=0x7e).contains(c)) {
        let e = error_of(&stream(&format!("{code:02x}")));
        assert_eq!((e.kind(), e.offset()), (K::Malformed, Some(4)), "{code:#x}: {e}");
    }
    for (hex, kind) in [
        ("76 70", K::Malformed),                  // TC_CLASS without its class
        ("7d 00000000 78 70", K::Unsupported),    // TC_PROXYCLASSDESC as a value
        ("73 7d 00000000 78 70", K::Unsupported), // an object of a proxy class
        ("7b 70", K::Unsupported),                // TC_EXCEPTION
        ("77 01 00", K::Malformed),               // block data at the top
        ("78", K::Malformed),                     // TC_ENDBLOCKDATA at the top
        ("7e 70", K::Malformed),                  // an enum without a class
    ] {
        let e = error_of(&stream(hex));
        assert_eq!((e.kind(), e.offset().is_some()), (kind, true), "{hex}: {e}");
    }
    // An unknown field type code, at its offset.
    let e = error_of(&stream(&format!(
        "73 72 {} 0000000000000001 02 0001 58 {}",
        utf("p.A"),
        utf("f")
    )));
    assert_eq!((e.kind(), e.offset()), (K::Malformed, Some(22)), "{e}");
    // Not Java serialization, another version, bytes after the object.
    assert_eq!(error_of(b"hello").offset(), Some(0));
    assert_eq!(error_of(&[0xac, 0xed, 0x00, 0x04, 0x70]).offset(), Some(2));
    let e = error_of(&stream("70 70"));
    assert_eq!((e.kind(), e.offset()), (K::TrailingBytes, Some(5)));
    // A lone surrogate in a string: Java writes one, Rust cannot hold it.
    assert_eq!(error_of(&stream("74 0003 eda0bd")).kind(), K::Unsupported);
}

#[test]
fn resets_between_objects_are_skipped() {
    assert_eq!(
        decode(&stream("79 79 74 0001 61")).unwrap(),
        KryoValue::String("a".into())
    );
}
