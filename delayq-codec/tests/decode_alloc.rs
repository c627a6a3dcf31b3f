//! What decoding a hostile payload allocates, measured: a counting global
//! allocator (a test binary of its own) notes the most bytes live at once
//! on the decoding thread, and each decode must stay within the bound the
//! crate states (`bounds::max_decode_bytes` of the decompressed size), and a
//! payload refused for its size must be refused before its value is built.
//!
//! The payloads are built here: River and Java serialization streams whose
//! back-references repeat one large shared list, a Kryo all-null
//! collection, each also inside LZ4; and, for contrast, honest payloads
//! that take the most a payload byte can stand for (POJOs of one-byte
//! fields), which must decode.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use delayq_codec::bounds::{max_decode_bytes, max_value_bytes};
use delayq_codec::compress::{Compression, DEFAULT_MAX_DECOMPRESSED};
use delayq_codec::kryo::{JavaType, KryoField, KryoSchema, KryoValue};
use delayq_codec::{marshalling, serialization};

/// The system allocator, counting the bytes live on this thread and the
/// most live since the last reset; past `CAP` it refuses (the process
/// aborts) rather than let a runaway decode take the machine.
struct Counting;

const CAP: usize = 1 << 30;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn grow(by: isize) -> bool {
    LIVE.with(|live| {
        let now = live.get() + by;
        if by > 0 && now > CAP as isize {
            return false;
        }
        live.set(now);
        PEAK.with(|peak| peak.set(peak.get().max(now)));
        true
    })
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if !grow(layout.size() as isize) {
                return std::ptr::null_mut();
            }
            System.alloc(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe {
            grow(-(layout.size() as isize));
            System.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            if !grow(new_size as isize - layout.size() as isize) {
                return std::ptr::null_mut();
            }
            System.realloc(ptr, layout, new_size)
        }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// How a measured decode ended, and the most bytes it had live at once.
struct Measured {
    /// `Ok`, or the error's text.
    outcome: Result<(), String>,
    /// The decompressed payload's size, which the bound is stated in.
    payload: usize,
    peak: usize,
}

/// Runs `decode` on `raw` (decompressed first when `wrap` says so), with
/// the peak counted from zero: what the decode itself allocated.
fn measure(wrap: Option<Compression>, raw: &[u8], decode: impl Fn(&[u8]) -> Result<(), String>) -> Measured {
    let base = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(base));
    let (outcome, payload) = match wrap {
        None => (decode(raw), raw.len()),
        Some(compression) => {
            let inner = compression
                .decompress(raw, DEFAULT_MAX_DECOMPRESSED)
                .expect("decompresses");
            (decode(&inner), inner.len())
        }
    };
    let peak = (PEAK.with(Cell::get) - base) as usize;
    Measured { outcome, payload, peak }
}

/// A decoder under measure: `Ok`, or its error's kind and text.
type Decode<'a> = dyn Fn(&[u8]) -> Result<(), String> + 'a;

fn river(raw: &[u8]) -> Result<(), String> {
    marshalling::decode(raw)
        .map(drop)
        .map_err(|e| format!("{:?}: {e}", e.kind()))
}

fn java(raw: &[u8]) -> Result<(), String> {
    serialization::decode(raw)
        .map(drop)
        .map_err(|e| format!("{:?}: {e}", e.kind()))
}

fn kryo(raw: &[u8]) -> Result<(), String> {
    KryoValue::decode(raw, None)
        .map(drop)
        .map_err(|e| format!("{:?}: {e}", e.kind()))
}

/// Within the stated bound; and, when refused for its size, refused before
/// the value was built: the decoder's working memory for these streams is
/// a slot of 8 bytes per reference or null (16 with a vector's growth),
/// nothing of the value's size.
fn assert_bounded(what: &str, m: &Measured) {
    eprintln!(
        "{what}: {} bytes in, {} bytes at most live ({:.1} per byte): {}",
        m.payload,
        m.peak,
        m.peak as f64 / m.payload as f64,
        match &m.outcome {
            Ok(()) => "decoded".to_owned(),
            Err(e) => e.chars().take(100).collect(),
        }
    );
    assert!(
        m.peak <= max_decode_bytes(m.payload),
        "{what}: {} bytes live at once, over the bound of {} for {} bytes",
        m.peak,
        max_decode_bytes(m.payload),
        m.payload
    );
    if let Err(e) = &m.outcome {
        assert!(e.starts_with("TooLarge"), "{what}: {e}");
        assert!(
            m.peak <= 24 * m.payload + (1 << 20),
            "{what}: refused, but only after {} bytes were live at once",
            m.peak
        );
    }
}

/// A River `ArrayList` of `shared` (an `ArrayList` of `nulls` nulls) and
/// `repeats` back-references to it: a value of `(repeats + 1) × nulls`
/// nulls from `nulls + 5 × repeats` bytes.
fn river_shared_list(nulls: u32, repeats: u32) -> Vec<u8> {
    let mut raw = vec![0x04, 0x55];
    raw.extend_from_slice(&(repeats + 1).to_be_bytes());
    raw.extend_from_slice(&[0x5a, 0x55]);
    raw.extend_from_slice(&nulls.to_be_bytes());
    raw.push(0x5a);
    raw.resize(raw.len() + nulls as usize, 0x01);
    for _ in 0..repeats {
        // REPEAT_OBJECT_FAR: instance 0 is the outer list, 1 the shared one.
        raw.extend_from_slice(&[0x02, 0, 0, 0, 1]);
    }
    raw
}

/// The same in Java serialization, as `Object[]`s.
fn java_shared_array(nulls: u32, repeats: u32) -> Vec<u8> {
    let mut raw = vec![0xac, 0xed, 0x00, 0x05, 0x75, 0x72, 0x00, 0x13];
    raw.extend_from_slice(b"[Ljava.lang.Object;");
    // serialVersionUID, SC_SERIALIZABLE, no fields, no annotation, no superclass.
    raw.extend_from_slice(&[
        0x90, 0xce, 0x58, 0x9f, 0x10, 0x73, 0x29, 0x6c, 0x02, 0x00, 0x00, 0x78, 0x70,
    ]);
    raw.extend_from_slice(&(repeats + 1).to_be_bytes());
    // The shared array: its class by handle 0x7e0000; it is handle 0x7e0002.
    raw.extend_from_slice(&[0x75, 0x71, 0x00, 0x7e, 0x00, 0x00]);
    raw.extend_from_slice(&nulls.to_be_bytes());
    raw.resize(raw.len() + nulls as usize, 0x70);
    for _ in 0..repeats {
        raw.extend_from_slice(&[0x71, 0x00, 0x7e, 0x00, 0x02]);
    }
    raw
}

#[test]
fn river_back_references_to_a_shared_list_are_refused_before_they_are_copied() {
    // 63 lists of 50,000 nulls: 200 MB of values from 50 KB.
    let raw = river_shared_list(50_000, 62);
    for wrap in [None, Some(Compression::Lz4), Some(Compression::Zstd)] {
        let bytes = match wrap {
            None => raw.clone(),
            Some(c) => c.compress(&raw).unwrap(),
        };
        let m = measure(wrap, &bytes, river);
        assert_bounded(&format!("river, {wrap:?}, {} bytes stored", bytes.len()), &m);
        assert!(m.outcome.is_err());
    }
}

#[test]
fn a_2_kb_lz4_river_value_of_back_references_does_not_take_gigabytes() {
    // 63 lists of 500,000 nulls: 2 GB of values before; 2 KB stored.
    let raw = Compression::Lz4.compress(&river_shared_list(500_000, 62)).unwrap();
    assert!(raw.len() < 2100, "{} bytes", raw.len());
    let m = measure(Some(Compression::Lz4), &raw, river);
    assert_bounded("river, 2 KB of LZ4", &m);
    assert!(m.outcome.is_err());
}

#[test]
fn java_serialization_back_references_are_refused_before_they_are_copied() {
    // 6 arrays of 1,000,000 nulls: 384 MB of values from 1 MB.
    let raw = java_shared_array(1_000_000, 5);
    let m = measure(None, &raw, java);
    assert_bounded("serialization, 1 MB", &m);
    assert!(m.outcome.is_err());
    // The same stored in 4 KB of LZ4.
    let lz4 = Compression::Lz4.compress(&raw).unwrap();
    let m = measure(Some(Compression::Lz4), &lz4, java);
    assert_bounded(&format!("serialization, {} bytes of LZ4", lz4.len()), &m);
    assert!(m.outcome.is_err());
}

#[test]
fn a_kryo_all_null_collection_cannot_claim_more_than_its_bytes_allow() {
    // An ArrayList claiming 2^20 - 1 elements, all null: 64 MB from 26 bytes.
    let mut raw = vec![0x01, 0x00];
    raw.extend_from_slice(b"java.util.ArrayLis");
    raw.extend_from_slice(&[b't' | 0x80, 0xc0, 0x80, 0x80, 0x01, 0x00]);
    for wrap in [None, Some(Compression::Snappy)] {
        let bytes = match wrap {
            None => raw.clone(),
            Some(c) => c.compress(&raw).unwrap(),
        };
        let m = measure(wrap, &bytes, kryo);
        assert_bounded(&format!("kryo all-null, {wrap:?}"), &m);
        assert!(m.outcome.is_err());
    }
}

/// A POJO of ten `boolean` fields: each payload byte of its fields stands
/// for a whole field of the value, the most any byte stands for without a
/// back-reference.
fn flags() -> KryoValue {
    let boolean = JavaType::parse("boolean").unwrap();
    KryoValue::Object {
        class: "shop.Flags".into(),
        fields: (0..10)
            .map(|i| KryoField::new(format!("flag{i}"), boolean.clone(), KryoValue::Boolean(i % 3 == 0)))
            .collect(),
    }
}

#[test]
fn honest_payloads_of_the_densest_values_decode_within_the_bound() {
    let list = KryoValue::Collection {
        class: "java.util.ArrayList".into(),
        items: vec![flags(); 20_000],
    };
    let names: Vec<String> = (0..10).map(|i| format!("flag{i}")).collect();
    let fields: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "boolean")).collect();
    let schema = KryoSchema::new()
        .with_class("shop.Flags", &fields)
        .unwrap()
        .with_serial_version_uid("shop.Flags", 1)
        .unwrap();
    let kryo_with_schema = |raw: &[u8]| {
        KryoValue::decode(raw, Some(&schema))
            .map(drop)
            .map_err(|e| format!("{:?}: {e}", e.kind()))
    };
    let payloads: [(&str, Vec<u8>, &Decode<'_>); 3] = [
        ("river", marshalling::encode(&list, Some(&schema)).unwrap(), &river),
        (
            "serialization",
            serialization::encode(&list, Some(&schema)).unwrap(),
            &java,
        ),
        ("kryo", list.encode().unwrap(), &kryo_with_schema),
    ];
    for (what, raw, decode) in payloads {
        for wrap in [None, Some(Compression::Lz4)] {
            let bytes = match wrap {
                None => raw.clone(),
                Some(c) => c.compress(&raw).unwrap(),
            };
            let m = measure(wrap, &bytes, decode);
            assert_bounded(&format!("{what} of 20,000 POJOs, {wrap:?}"), &m);
            assert_eq!(m.outcome, Ok(()), "{what}");
        }
    }
}

/// A Kryo class name (by name, with the payload's next name id), as Kryo
/// writes it: ASCII, the last byte's high bit set.
fn kryo_class(raw: &mut Vec<u8>, id: u8, name: &str) {
    raw.extend_from_slice(&[0x01, id]);
    let (last, init) = name.as_bytes().split_last().unwrap();
    raw.extend_from_slice(init);
    raw.push(last | 0x80);
}

#[test]
fn java_objects_inside_kryo_share_the_payload_s_bound() {
    // Redisson's Kryo5Codec hands each Collections view class, EnumMap and
    // throwables to a JavaSerializer of its own: three Java streams in one
    // payload, each of 11 arrays of 30,000 nulls (each stream within the
    // payload's bound alone, the three together over it).
    let mut raw = Vec::new();
    kryo_class(&mut raw, 0, "java.util.ArrayList");
    raw.push(0x04);
    let classes = ["java.util.Collections$A", "java.util.Collections$B", "x.Failure"];
    for (i, class) in classes.iter().enumerate() {
        kryo_class(&mut raw, i as u8 + 1, class);
        raw.extend_from_slice(&java_shared_array(30_000, 10));
    }
    let m = measure(None, &raw, kryo);
    assert_bounded("kryo with three Java streams", &m);
    assert!(m.outcome.is_err());
    // One of them alone reads.
    let mut one = Vec::new();
    kryo_class(&mut one, 0, "x.Failure");
    one.extend_from_slice(&java_shared_array(1_000, 10));
    let m = measure(None, &one, kryo);
    assert_bounded("kryo with one Java stream", &m);
}

fn jackson_value(raw: &[u8]) -> Result<(), String> {
    delayq_codec::jackson::decode_value(raw, None)
        .map(drop)
        .map_err(|e| format!("{:?}: {e}", e.kind()))
}

fn jackson_plain(raw: &[u8]) -> Result<(), String> {
    delayq_codec::jackson::to_plain_json(raw)
        .map(drop)
        .map_err(|e| format!("{:?}: {e}", e.kind()))
}

fn jackson_serde(raw: &[u8]) -> Result<(), String> {
    delayq_codec::jackson::from_slice::<serde_json::Value>(raw)
        .map(drop)
        .map_err(|e| format!("{:?}: {e}", e.kind()))
}

/// `count` copies of `item` in an `ArrayList`, as Jackson writes one.
fn jackson_list(item: &str, count: usize) -> Vec<u8> {
    let items = vec![item; count].join(",");
    format!(r#"["java.util.ArrayList",[{items}]]"#).into_bytes()
}

#[test]
fn wide_jackson_json_decodes_within_the_bound_on_every_path() {
    // The most JSON values per byte: 2-byte zeros, empty arrays and
    // objects, 1-byte property names each with a value, nulls, ~1 MB each. Bare arrays and objects are no Java value Jackson writes in an
    // `Object` slot (decode_value refuses them): the serde paths only.
    let props: Vec<String> = (0..150_000).map(|i| format!("\"{}\":0", i % 10)).collect();
    let payloads = [
        ("nulls", jackson_list("null", 500_000), true),
        ("zeros", jackson_list("0", 500_000), true),
        ("one-letter strings", jackson_list("\"a\"", 250_000), true),
        (
            "a map of 150,000 properties",
            format!(r#"{{"@class":"java.util.LinkedHashMap",{}}}"#, props.join(",")).into_bytes(),
            true,
        ),
        ("empty arrays", jackson_list("[]", 330_000), false),
        ("empty objects", jackson_list("{}", 330_000), false),
    ];
    let decoders: [(&str, &Decode<'_>); 3] = [
        ("decode_value", &jackson_value),
        ("to_plain_json", &jackson_plain),
        ("from_slice::<serde_json::Value>", &jackson_serde),
    ];
    for (what, raw, java_value) in &payloads {
        for (path, decode) in decoders {
            if path == "decode_value" && !java_value {
                continue;
            }
            let m = measure(None, raw, decode);
            assert_bounded(&format!("jackson {what}, {path}"), &m);
            assert_eq!(m.outcome, Ok(()), "{what}, {path}");
        }
    }
}

#[test]
fn jackson_pojos_a_schema_fills_with_nulls_stop_at_the_value_bound() {
    // 18 bytes per POJO whose 2,000 absent fields the schema fills with
    // nulls: 300 KB of fields per 18 bytes, 15,000 times over (4.5 GB).
    // JSON has no back-references: the value is counted as it is built,
    // and refused when it reaches max_value_bytes.
    let names: Vec<String> = (0..2_000).map(|i| format!("f{i}")).collect();
    let fields: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "java.lang.Object")).collect();
    let schema = KryoSchema::new().with_class("x.Wide", &fields).unwrap();
    let raw = jackson_list(r#"{"@class":"x.Wide"}"#, 15_000);
    let m = measure(None, &raw, |raw| {
        delayq_codec::jackson::decode_value(raw, Some(&schema))
            .map(drop)
            .map_err(|e| format!("{:?}: {e}", e.kind()))
    });
    eprintln!(
        "jackson POJOs filled by a schema: {} bytes in, {} bytes at most live ({:.1} per byte): {:?}",
        m.payload,
        m.peak,
        m.peak as f64 / m.payload as f64,
        m.outcome
    );
    assert!(
        m.outcome.as_ref().is_err_and(|e| e.starts_with("TooLarge")),
        "{:?}",
        m.outcome
    );
    // The value up to its bound, the JSON tree and the parser's working memory.
    assert!(
        m.peak <= max_value_bytes(m.payload) + 64 * m.payload,
        "{} bytes live at once, past the value bound of {}",
        m.peak,
        max_value_bytes(m.payload)
    );
    assert!(m.peak <= max_decode_bytes(m.payload));
    // The serde path fills nothing: the same bytes are 15,000 empty maps.
    let m = measure(None, &raw, jackson_serde);
    assert_bounded("jackson POJOs, from_slice::<serde_json::Value>", &m);
    assert_eq!(m.outcome, Ok(()));
}

#[test]
fn jackson_json_nested_a_million_deep_is_refused_before_it_is_built() {
    let raw = "[".repeat(1_000_000).into_bytes();
    let decoders: [(&str, &Decode<'_>); 3] = [
        ("decode_value", &jackson_value),
        ("to_plain_json", &jackson_plain),
        ("from_slice::<serde_json::Value>", &jackson_serde),
    ];
    for (path, decode) in decoders {
        let m = measure(None, &raw, decode);
        eprintln!("jackson nested, {path}: {} bytes at most live", m.peak);
        assert!(
            m.outcome.as_ref().is_err_and(|e| e.starts_with("TooDeep")),
            "{path}: {:?}",
            m.outcome
        );
        // Nothing of the payload's size: the parser stops at the 202nd level.
        assert!(m.peak < 64 << 10, "{path}: {} bytes live", m.peak);
    }
}
