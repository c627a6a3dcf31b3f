//! The JDK types real POJOs carry, as Redisson's own codec objects wrote them
//! (`compat/fixtures/jdk-types.json`, made by `compat/java/corpus.sh`), read
//! with this crate's public API: each (type, codec) pair reads to what Java
//! itself reads back, or is refused with a typed `Unsupported` error naming
//! the Java class. Never silently wrong.

use std::collections::BTreeMap;

use delayq_codec::compress::{Compression, DEFAULT_MAX_DECOMPRESSED};
use delayq_codec::kryo::{KryoErrorKind, KryoSchema, KryoValue};
use delayq_codec::marshalling::{self, MarshallingErrorKind};
use delayq_codec::serialization::{self, SerializationErrorKind};
use serde_json::Value;

const FIXTURE: &str = include_str!("../../compat/fixtures/jdk-types.json");
const SCHEMA: &str = include_str!("../../compat/fixtures/jdk-types-schema.json");

/// The binary codecs: their Java values go through the one value model.
const BINARY: &[&str] = &["kryo", "serialization", "marshalling", "lz4", "lz4v2", "snappy", "zstd"];

/// Pairs refused on purpose, with a class the error must name and why.
const REFUSED: &[(&str, &str, &str)] = &[
    // A Comparator is Java code: delayq cannot order as it does.
    ("*", "tree_map_comparator", "java.util.Collections$ReverseComparator"),
    ("*", "tree_set_comparator", "java.util.Collections$ReverseComparator"),
    // Kryo writes an enum constant as its ordinal: delayq names only the
    // constants of the JDK enums POJOs carry (DayOfWeek, Month, TimeUnit...).
    ("kryo", "enum_set_big", UNICODE_SCRIPT),
    ("lz4", "enum_set_big", UNICODE_SCRIPT),
    ("lz4v2", "enum_set_big", UNICODE_SCRIPT),
    ("snappy", "enum_set_big", UNICODE_SCRIPT),
    ("zstd", "enum_set_big", UNICODE_SCRIPT),
];

const UNICODE_SCRIPT: &str = "java.lang.Character$UnicodeScript";

fn fixture() -> Value {
    serde_json::from_str(FIXTURE).expect("jdk-types.json is JSON")
}

fn schema() -> KryoSchema {
    KryoSchema::from_json(SCHEMA).expect("jdk-types-schema.json is a Kryo schema")
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A refusal: whether it is the codec's `Unsupported` kind, and its message.
type Refusal = (bool, String);

/// Reads a payload of `codec` with the crate's public API.
pub fn read(codec: &str, raw: &[u8], schema: &KryoSchema) -> Result<KryoValue, Refusal> {
    match codec {
        "kryo" => {
            KryoValue::decode(raw, Some(schema)).map_err(|e| (e.kind() == KryoErrorKind::Unsupported, e.to_string()))
        }
        "serialization" => serialization::decode_with_schema(raw, schema)
            .map_err(|e| (e.kind() == SerializationErrorKind::Unsupported, e.to_string())),
        "marshalling" => marshalling::decode_with_schema(raw, schema)
            .map_err(|e| (e.kind() == MarshallingErrorKind::Unsupported, e.to_string())),
        wrapper => {
            let wrap = Compression::ALL
                .into_iter()
                .find(|w| w.name() == wrapper)
                .unwrap_or_else(|| panic!("no codec {wrapper}"));
            let inner = wrap
                .decompress(raw, DEFAULT_MAX_DECOMPRESSED)
                .map_err(|e| (false, e.to_string()))?;
            read("kryo", &inner, schema)
        }
    }
}

/// POJO fields by name (their order is each codec's own), everything else
/// as it is: map order is Java's iteration order, which every codec keeps.
fn by_name(value: KryoValue) -> KryoValue {
    match value {
        KryoValue::Object { class, mut fields } => {
            fields.sort_by(|a, b| a.name.cmp(&b.name));
            for f in &mut fields {
                f.value = by_name(std::mem::replace(&mut f.value, KryoValue::Null));
            }
            KryoValue::Object { class, fields }
        }
        KryoValue::Collection { class, items } => KryoValue::Collection {
            class,
            items: items.into_iter().map(by_name).collect(),
        },
        KryoValue::Map { class, entries } => KryoValue::Map {
            class,
            entries: entries.into_iter().map(|(k, v)| (by_name(k), by_name(v))).collect(),
        },
        other => other,
    }
}

#[derive(Debug)]
pub enum Outcome {
    Right,
    /// Right, but for a `ZonedDateTime` in a region zone read from Kryo,
    /// which writes no offset (Java computes it from the zone database):
    /// the value is the local date-time and the zone, without the offset.
    RightWithoutOffset,
    Refused(String),
    Wrong(String),
}

/// Every JDK class name a value holds, for the guard below.
fn objects_of_jdk_classes(value: &KryoValue, out: &mut Vec<String>) {
    match value {
        KryoValue::Object { class, fields } => {
            if ["java.", "javax.", "jdk.", "sun."].iter().any(|p| class.starts_with(p)) {
                out.push(class.clone());
            }
            fields.iter().for_each(|f| objects_of_jdk_classes(&f.value, out));
        }
        KryoValue::Collection { items, .. } | KryoValue::EnumSet { items, .. } => {
            items.iter().for_each(|i| objects_of_jdk_classes(i, out))
        }
        KryoValue::Map { entries, .. } => entries.iter().for_each(|(k, v)| {
            objects_of_jdk_classes(k, out);
            objects_of_jdk_classes(v, out);
        }),
        KryoValue::Wrapped { value, .. } => objects_of_jdk_classes(value, out),
        KryoValue::Throwable { cause: Some(c), .. } => objects_of_jdk_classes(c, out),
        _ => {}
    }
}

/// `Set.of` and `Map.of` iterate in an order each JVM salts anew: Java's
/// reading and the bytes agree on the elements, not on their order.
fn unordered(class: &str) -> bool {
    class.starts_with("java.util.ImmutableCollections$Set") || class.starts_with("java.util.ImmutableCollections$Map")
}

/// JSON text with its arrays' elements sorted (objects are sorted by key
/// when parsed).
fn sorted(text: &str) -> String {
    fn sort(v: Value) -> Value {
        match v {
            Value::Array(items) => {
                let mut items: Vec<Value> = items.into_iter().map(sort).collect();
                items.sort_by_key(|i| i.to_string());
                Value::Array(items)
            }
            Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, sort(v))).collect()),
            other => other,
        }
    }
    serde_json::from_str::<Value>(text)
        .map(sort)
        .map_or_else(|_| text.to_owned(), |v| v.to_string())
}

/// Java's `ZonedDateTime` texts without the offset before a region zone
/// (`…20.5+01:00[Europe/Paris]` → `…20.5[Europe/Paris]`).
fn without_offsets(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (i, _) in text.match_indices('[') {
        let offset = i >= 7
            && matches!(b[i - 6], b'+' | b'-')
            && b[i - 3] == b':'
            && [i - 5, i - 4, i - 2, i - 1, i - 7]
                .iter()
                .all(|&k| b[k].is_ascii_digit());
        if offset {
            out.push_str(&text[from..i - 6]);
            from = i;
        }
    }
    out.push_str(&text[from..]);
    out
}

fn judge(codec: &str, case: &str, rec: &Value, schema: &KryoSchema) -> Option<Outcome> {
    let raw = hex(rec.get("hex")?.as_str()?);
    let want = rec.get("java_decoded")?.as_str()?;
    let want_class = rec["java_decoded_class"].as_str().unwrap_or_default();
    let refused = REFUSED
        .iter()
        .find(|(c, name, _)| (*c == "*" || *c == codec) && *name == case)
        .map(|(_, _, class)| *class);
    Some(match read(codec, &raw, schema) {
        Ok(value) => {
            let mut jdk_objects = Vec::new();
            objects_of_jdk_classes(&value, &mut jdk_objects);
            let mut got = by_name(value.clone()).to_json_text();
            let mut want = want.to_owned();
            if unordered(want_class) {
                (got, want) = (sorted(&got), sorted(&want));
            }
            if !jdk_objects.is_empty() {
                Outcome::Wrong(format!("JDK classes read as POJOs: {jdk_objects:?}"))
            } else if got != want && got == without_offsets(&want) && codec != "serialization" && codec != "marshalling"
            {
                Outcome::RightWithoutOffset
            } else if got != want {
                Outcome::Wrong(format!("read {got}, Java reads {want}"))
            } else if value.java_class().unwrap_or("null") != want_class {
                Outcome::Wrong(format!("class {:?}, Java's is {want_class}", value.java_class()))
            } else if refused.is_some() {
                Outcome::Wrong("read, though listed as refused".into())
            } else {
                Outcome::Right
            }
        }
        Err((true, message)) => {
            let named = refused.unwrap_or(rec["java_class"].as_str().unwrap_or_default());
            if message.contains(named) {
                Outcome::Refused(message)
            } else {
                Outcome::Wrong(format!("refused without naming {named}: {message}"))
            }
        }
        Err((false, message)) => Outcome::Wrong(format!("error that is not Unsupported: {message}")),
    })
}

/// Every (case, codec) pair of the binary codecs, judged.
pub fn judge_all() -> BTreeMap<(String, String), Outcome> {
    let doc = fixture();
    let schema = schema();
    let mut out = BTreeMap::new();
    for codec in BINARY {
        let cases = doc["codecs"][codec].as_object().expect("codec in fixture");
        for (case, rec) in cases {
            if let Some(outcome) = judge(codec, case, rec, &schema) {
                out.insert((case.clone(), codec.to_string()), outcome);
            }
        }
    }
    out
}

#[test]
fn every_jdk_type_reads_as_java_reads_it_or_is_refused_by_name() {
    let judged = judge_all();
    let mut counts: BTreeMap<&str, (usize, usize, usize, usize)> = BTreeMap::new();
    let mut wrong = Vec::new();
    for ((case, codec), outcome) in &judged {
        let c = counts.entry(codec.as_str()).or_default();
        match outcome {
            Outcome::Right => c.0 += 1,
            Outcome::RightWithoutOffset => c.3 += 1,
            Outcome::Refused(why) => {
                c.1 += 1;
                println!("refused: {codec} {case}: {why}");
            }
            Outcome::Wrong(why) => {
                c.2 += 1;
                wrong.push(format!("{codec} {case}: {why}"));
            }
        }
    }
    for (codec, (right, refused, bad, no_offset)) in &counts {
        println!("{codec:14} right {right:3} (+{no_offset} without a zone offset)  refused {refused:3}  wrong {bad:3}");
    }
    assert!(wrong.is_empty(), "{} pairs wrong:\n{}", wrong.len(), wrong.join("\n"));
}

/// What each binary codec writes for a value read from Java's bytes: its
/// bytes, or why it cannot.
pub fn rewrite(codec: &str, value: &KryoValue, schema: &KryoSchema) -> Result<Vec<u8>, String> {
    match codec {
        "kryo" => value.encode().map_err(|e| e.to_string()),
        "serialization" => serialization::encode(value, Some(schema)).map_err(|e| e.to_string()),
        "marshalling" => marshalling::encode(value, Some(schema)).map_err(|e| e.to_string()),
        _ => unreachable!("wrappers compress what Kryo writes"),
    }
}

/// Kryo is written byte for byte as Java writes it: every value read from
/// Java's Kryo bytes (those Java can read back) encodes to the same bytes,
/// except the classes Kryo hands to Java serialization, which are refused.
#[test]
fn kryo_writes_the_jdk_types_as_java_does() {
    let doc = fixture();
    let schema = schema();
    let (mut same, mut refused, mut differ) = (0, Vec::new(), Vec::new());
    for (case, rec) in doc["codecs"]["kryo"].as_object().unwrap() {
        let Some(hex_text) = rec["hex"].as_str() else { continue };
        let Ok(value) = read("kryo", &hex(hex_text), &schema) else {
            continue;
        };
        match value.encode() {
            Ok(bytes) if bytes == hex(hex_text) => same += 1,
            Ok(_) => differ.push(case.clone()),
            Err(e) => refused.push(format!("{case}: {e}")),
        }
    }
    println!("kryo: {same} byte-equal, {} refused", refused.len());
    for r in &refused {
        println!("  {r}");
    }
    differ.retain(|case| {
        !HISTORY
            .iter()
            .any(|(c, name, _)| (*c == "*" || *c == "kryo") && name == case)
    });
    assert!(differ.is_empty(), "written otherwise than Java: {differ:?}");
}

/// Values whose Java bytes depend on the object's history, not its value:
/// delayq writes the other form, which Java reads as the same value.
const HISTORY: &[(&str, &str, &str)] = &[
    (
        "*",
        "synchronized_map",
        "a HashMap copied from another map has a smaller table",
    ),
    ("*", "throwable", "the stack trace, which delayq does not keep"),
    ("serialization", "locale", "Java shares its empty strings"),
    ("serialization", "locale_language", "Java shares its empty strings"),
    (
        "serialization",
        "pojo_everything",
        "its Locale: Java shares its empty strings",
    ),
    (
        "marshalling",
        "pojo_everything",
        "Java shares the literal \"a\" of a list with a map's key",
    ),
    (
        "*",
        "arrays_as_list",
        "the backing array's class, the caller's static type (String[] here): delayq writes Object[]",
    ),
];

/// Java serialization and River are written byte for byte as Java writes
/// them too, but for the values whose bytes depend on their history.
#[test]
fn serialization_and_river_write_the_jdk_types_as_java_does() {
    let doc = fixture();
    let schema = schema();
    for codec in ["serialization", "marshalling"] {
        let (mut same, mut differ) = (0, Vec::new());
        for (case, rec) in doc["codecs"][codec].as_object().unwrap() {
            let Some(hex_text) = rec["hex"].as_str() else { continue };
            let Ok(value) = read(codec, &hex(hex_text), &schema) else {
                continue;
            };
            match rewrite(codec, &value, &schema) {
                Ok(bytes) if bytes == hex(hex_text) => same += 1,
                Ok(_)
                    if HISTORY
                        .iter()
                        .any(|(c, name, _)| (*c == "*" || *c == codec) && name == case) => {}
                Ok(_) => differ.push(case.clone()),
                Err(_) => {}
            }
        }
        println!("{codec}: {same} byte-equal");
        assert!(differ.is_empty(), "{codec} written otherwise than Java: {differ:?}");
    }
}

/// What delayq does not write (typed encode errors), and why: Kryo's
/// wrappers as Kryo. Any other value read is written, and Java reads it
/// back equal.
const NOT_WRITTEN: &[(&str, &[&str], &str)] = &[(
    "*",
    &["checked_list"],
    "a checked view's element class is not in the value (Java checks later inserts against it)",
)];

fn expected_not_written(codec: &str, case: &str) -> bool {
    let kryo = ["kryo", "lz4", "lz4v2", "snappy", "zstd"].contains(&codec);
    NOT_WRITTEN
        .iter()
        .any(|(c, cases, _)| (*c == "*" || *c == codec || (kryo && *c == "kryo")) && cases.contains(&case))
}

const RUST_FIXTURE: &str = include_str!("../../compat/fixtures/jdk-types-rust.json");

/// What delayq writes, per codec and case, for each value it read from
/// Java's bytes: hex, or why it does not write it.
fn rust_bytes() -> BTreeMap<String, BTreeMap<String, Result<String, String>>> {
    let doc = fixture();
    let schema = schema();
    let mut out: BTreeMap<String, BTreeMap<String, Result<String, String>>> = BTreeMap::new();
    for codec in BINARY {
        for (case, rec) in doc["codecs"][codec].as_object().unwrap() {
            let Some(hex_text) = rec["hex"].as_str() else { continue };
            let Ok(value) = read(codec, &hex(hex_text), &schema) else {
                continue;
            };
            let written = match *codec {
                "kryo" | "serialization" | "marshalling" => rewrite(codec, &value, &schema),
                wrapper => {
                    let wrap = Compression::ALL.into_iter().find(|w| w.name() == wrapper).unwrap();
                    value
                        .encode()
                        .map_err(|e| e.to_string())
                        .and_then(|raw| wrap.compress(&raw).map_err(|e| e.to_string()))
                }
            };
            let hex_of = |b: Vec<u8>| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
            out.entry(codec.to_string())
                .or_default()
                .insert(case.clone(), written.map(hex_of));
        }
    }
    out
}

/// Writes `compat/fixtures/jdk-types-rust.json` (then `compat/java/corpus.sh
/// verify` has Java read it back).
#[test]
#[ignore = "writes the Rust-to-Java fixture; run by hand, then compat/java/corpus.sh verify"]
fn write_rust_fixture() {
    let mut codecs = serde_json::Map::new();
    for (codec, cases) in rust_bytes() {
        let mut out = serde_json::Map::new();
        for (case, written) in cases {
            out.insert(
                case,
                match written {
                    Ok(hex) => serde_json::json!({ "hex": hex }),
                    Err(why) => serde_json::json!({ "not_written": why }),
                },
            );
        }
        codecs.insert(codec, Value::Object(out));
    }
    let doc = serde_json::json!({
        "about": "What delayq-codec writes for each value it read from compat/fixtures/jdk-types.json (the wrappers: \
                  Kryo inside), and what Redisson's own codec objects read from it (compat/java/corpus.sh verify): \
                  java_decoded in canonical JSON, java_class, same_class, equal (Java's equals, element by element \
                  for arrays, the canonical form for classes without a value equals), or java_error.",
        "codecs": codecs,
    });
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../compat/fixtures/jdk-types-rust.json");
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
}

/// Java reads back, equal, what delayq writes: the bytes delayq writes today
/// are those real Redisson codecs read (`jdk-types-rust.json`, checked with
/// the peers), and Java found each equal to the value it wrote.
#[test]
fn java_reads_back_equal_what_delayq_writes() {
    let recorded: Value = serde_json::from_str(RUST_FIXTURE).expect("jdk-types-rust.json is JSON");
    let java = fixture();
    let (mut equal, mut not_written, mut problems) = (BTreeMap::<String, usize>::new(), 0, Vec::new());
    for (codec, cases) in rust_bytes() {
        for (case, written) in cases {
            let rec = &recorded["codecs"][&codec][&case];
            match written {
                Ok(hex) => {
                    if rec["hex"].as_str() != Some(hex.as_str()) {
                        problems.push(format!(
                            "{codec} {case}: delayq writes other bytes than Java checked (run corpus.sh verify)"
                        ));
                    } else if rec["same_class"] == Value::Bool(true)
                        && (rec["equal"] == Value::Bool(true)
                            // What Java reads from its own bytes (Kryo keeps a Timestamp's
                            // milliseconds only; a list of arrays is never equals()).
                            || rec["java_decoded"] == java["codecs"][&codec][&case]["java_decoded"])
                    {
                        *equal.entry(codec.clone()).or_default() += 1;
                    } else {
                        problems.push(format!("{codec} {case}: Java read {rec}"));
                    }
                    if expected_not_written(&codec, &case) {
                        problems.push(format!("{codec} {case}: written, though listed as not written"));
                    }
                }
                Err(why) => {
                    not_written += 1;
                    if !expected_not_written(&codec, &case) {
                        problems.push(format!("{codec} {case}: not written: {why}"));
                    }
                }
            }
        }
    }
    for (codec, n) in &equal {
        println!("{codec:14} Java reads back equal: {n}");
    }
    println!("not written (typed encode errors): {not_written}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `detect` names the codec that wrote every corpus payload: never a codec
/// that reads only part of it, or another meaning of its bytes (a River
/// `boolean[]` as a Kryo `Float`, River arrays or a default-package River
/// enum as text).
#[test]
fn detect_names_the_codec_of_every_jdk_type() {
    use delayq_codec::detect::{detect, Untyped};
    let doc = fixture();
    let schema = schema();
    let mut wrong = Vec::new();
    for codec in BINARY {
        for (case, rec) in doc["codecs"][codec].as_object().unwrap() {
            let Some(hex_text) = rec["hex"].as_str() else { continue };
            let found = detect(&hex(hex_text), Some(&schema), DEFAULT_MAX_DECOMPRESSED);
            // LZ4Codec and LZ4CodecV2 frame a block alike (see detect's docs).
            let want = if *codec == "lz4v2" { "lz4" } else { codec };
            // Bytes only where delayq refuses the payload (named for its codec still).
            let refused = read(codec, &hex(hex_text), &schema).is_err();
            let read_whole = !matches!(found.value, Untyped::Bytes(_)) || refused;
            if found.codec != want || !read_whole {
                wrong.push(format!(
                    "{codec} {case}: detected as {} ({:?})",
                    found.codec, found.value
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
