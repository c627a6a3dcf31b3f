//! The JDK types real POJOs carry, as Redisson's `JsonJacksonCodec` wrote
//! them, plain and with `JavaTimeModule` (`compat/fixtures/jdk-types.json`,
//! codecs `jackson` and `jackson_jsr310`), read with
//! `delayq_codec::jackson::decode_value`: each reads to what Java reads
//! back from the same bytes (or, where Java cannot read its own bytes, to
//! the value Java wrote), or is refused with a typed `Unsupported` error
//! naming the class. Never silently wrong.

use std::collections::BTreeMap;

use delayq_codec::jackson::{decode_value, JacksonErrorKind};
use delayq_codec::kryo::{KryoSchema, KryoValue};
use serde_json::Value;

const FIXTURE: &str = include_str!("../../compat/fixtures/jdk-types.json");
const SCHEMA: &str = include_str!("../../compat/fixtures/jdk-types-schema.json");

pub const JACKSON: &[&str] = &["jackson", "jackson_jsr310"];

/// Refused on purpose: the case, the class the error must name, and why.
const REFUSED: &[(&str, &str)] = &[
    // Jackson writes a BitSet as `{"empty":false}`: its bits are not in the
    // bytes (Java reads back an empty BitSet).
    ("bit_set", "java.util.BitSet"),
    // The comparator is not in the bytes: Java reads the entries back in
    // natural order, another value.
    ("tree_map_comparator", "java.util.TreeMap"),
    ("tree_set_comparator", "java.util.TreeSet"),
    // Java reads back a String holding a lone UTF-16 surrogate, which no
    // Rust string holds. Jackson writes a `char` and a `char[]` as a JSON
    // string, so Java's reading (and the error) is a java.lang.String, not
    // the Character or char[] Java wrote; the char[] holds a pair (read as
    // one code point) and a lone low surrogate.
    ("char_lone_surrogate", "java.lang.String"),
    ("char_array_surrogates", "java.lang.String"),
    ("string_lone_surrogate", "java.lang.String"),
];

pub fn fixture() -> Value {
    serde_json::from_str(FIXTURE).expect("jdk-types.json is JSON")
}

pub fn schema() -> KryoSchema {
    KryoSchema::from_json(SCHEMA).expect("jdk-types-schema.json is a Kryo schema")
}

pub fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// POJO fields by name, everything else as it is.
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

/// Numbers in exponent form (Java's `Double.toString`: `1.7954000001234567E9`)
/// as Rust prints the same double (`1795400000.1234567`); every other
/// number (integers, a `BigDecimal`'s `2.50`) is left as written.
fn doubles_as_rust_prints_them(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut in_string) = (0, false);
    while i < b.len() {
        let c = b[i];
        if in_string {
            out.push(c as char);
            if c == b'\\' && i + 1 < b.len() {
                out.push(b[i + 1] as char);
                i += 1;
            } else if c == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_string = true;
        }
        if c == b'-' || c.is_ascii_digit() {
            let start = i;
            while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                i += 1;
            }
            let token = &text[start..i];
            match token.contains(['e', 'E']).then(|| token.parse::<f64>().ok()).flatten() {
                Some(v) => out.push_str(&v.to_string()),
                None => out.push_str(token),
            }
            continue;
        }
        // Multi-byte UTF-8 is copied byte by byte through the char boundary.
        let ch = text[i..].chars().next().expect("a char");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

/// Classes whose iteration order is their hash order, which Java's reading
/// (into a new `HashSet`/`HashMap`, or `Set.of`'s salted order) need not
/// keep: compared as sets.
fn unordered(class: &str) -> bool {
    class.starts_with("java.util.ImmutableCollections$Set")
        || class.starts_with("java.util.ImmutableCollections$Map")
        || matches!(
            class,
            "java.util.HashSet" | "java.util.Collections$UnmodifiableSet" | "java.util.Collections$SynchronizedSet"
        )
}

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

fn jdk_objects(value: &KryoValue, out: &mut Vec<String>) {
    match value {
        KryoValue::Object { class, fields } => {
            if ["java.", "javax.", "jdk.", "sun."].iter().any(|p| class.starts_with(p)) {
                out.push(class.clone());
            }
            fields.iter().for_each(|f| jdk_objects(&f.value, out));
        }
        KryoValue::Collection { items, .. } | KryoValue::EnumSet { items, .. } => {
            items.iter().for_each(|i| jdk_objects(i, out))
        }
        KryoValue::Map { entries, .. } => entries.iter().for_each(|(k, v)| {
            jdk_objects(k, out);
            jdk_objects(v, out);
        }),
        KryoValue::Wrapped { value, .. } => jdk_objects(value, out),
        KryoValue::Throwable { cause: Some(c), .. } => jdk_objects(c, out),
        _ => {}
    }
}

#[derive(Debug)]
pub enum Outcome {
    /// Read to what Java reads back.
    Right,
    /// Java cannot read its own bytes, delayq reads the value Java wrote.
    RightWhereJavaRefuses,
    Refused(String),
    /// Refused where Java cannot read its own bytes either.
    RefusedLikeJava(String),
    Wrong(String),
}

pub fn judge(case: &str, rec: &Value, schema: &KryoSchema) -> Option<(Outcome, Option<KryoValue>)> {
    let raw = hex(rec.get("hex")?.as_str()?);
    let java_reads = rec.get("java_decoded").and_then(Value::as_str);
    let want = java_reads.or(rec["expected"].as_str())?;
    let classes = [
        rec["java_decoded_class"].as_str().unwrap_or_default(),
        rec["java_class"].as_str().unwrap_or_default(),
    ];
    let refused = REFUSED.iter().find(|(c, _)| *c == case).map(|(_, class)| *class);
    Some(match decode_value(&raw, Some(schema)) {
        Ok(value) => {
            let mut found = Vec::new();
            jdk_objects(&value, &mut found);
            let mut got = doubles_as_rust_prints_them(&by_name(value.clone()).to_json_text());
            let mut want = doubles_as_rust_prints_them(want);
            if classes.iter().any(|c| unordered(c)) {
                (got, want) = (sorted(&got), sorted(&want));
            }
            let class = value.java_class().unwrap_or("null");
            let outcome = if !found.is_empty() {
                Outcome::Wrong(format!("JDK classes read as POJOs: {found:?}"))
            } else if got != want {
                Outcome::Wrong(format!("read {got}, Java's value {want}"))
            } else if refused.is_some() {
                Outcome::Wrong("read, though listed as refused".into())
            } else if java_reads.is_none() {
                Outcome::RightWhereJavaRefuses
            } else if !classes.contains(&class) {
                Outcome::Wrong(format!("class {class}, Java's is {classes:?}"))
            } else {
                Outcome::Right
            };
            (outcome, Some(value))
        }
        Err(e) if e.kind() == JacksonErrorKind::Unsupported => {
            let named = refused.unwrap_or(classes[1]);
            if java_reads.is_none() {
                // Java cannot read these bytes either: the class is not in them.
                (Outcome::RefusedLikeJava(e.to_string()), None)
            } else if e.message().contains(named) {
                (Outcome::Refused(e.to_string()), None)
            } else {
                (Outcome::Wrong(format!("refused without naming {named}: {e}")), None)
            }
        }
        Err(e) => (Outcome::Wrong(format!("error that is not Unsupported: {e}")), None),
    })
}

/// Every (case, codec) pair of the Jackson codecs, judged, with the value read.
pub fn judge_all() -> BTreeMap<(String, String), (Outcome, Option<KryoValue>)> {
    let doc = fixture();
    let schema = schema();
    let mut out = BTreeMap::new();
    for codec in JACKSON {
        for (case, rec) in doc["codecs"][codec].as_object().expect("codec in fixture") {
            if let Some(judged) = judge(case, rec, &schema) {
                out.insert((case.clone(), codec.to_string()), judged);
            }
        }
    }
    out
}

#[test]
fn every_jackson_payload_reads_as_java_reads_it_or_is_refused_by_name() {
    let judged = judge_all();
    let mut counts: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut wrong = Vec::new();
    for ((case, codec), (outcome, _)) in &judged {
        println!(
            "outcome {case} {codec} {}",
            format!("{outcome:?}").split('(').next().unwrap_or_default()
        );
        let c = counts.entry(codec.as_str()).or_default();
        match outcome {
            Outcome::Right => c[0] += 1,
            Outcome::RightWhereJavaRefuses => c[0] += 1,
            Outcome::Refused(why) => {
                c[2] += 1;
                println!("refused: {codec} {case}: {why}");
            }
            Outcome::RefusedLikeJava(_) => c[1] += 1,
            Outcome::Wrong(why) => {
                c[3] += 1;
                wrong.push(format!("{codec} {case}: {why}"));
            }
        }
    }
    for (codec, [right, java_refuses, refused, bad]) in &counts {
        println!(
            "{codec:15} right {right:3}  refused {refused:3} (+{java_refuses} that Java cannot read back either)  wrong {bad:3}"
        );
    }
    assert!(judged.len() > 150, "the fixture has Jackson payloads");
    assert!(wrong.is_empty(), "{} pairs wrong:\n{}", wrong.len(), wrong.join("\n"));
}

/// The corpus's cases at the edges of Java's text and enums, each in both
/// Jackson rows: the three lone-surrogate values are refused naming the
/// String Java reads back (above), and an `EnumSet` of 156 constants (more
/// than a long's 64 bits) reads as the `JumboEnumSet` Java reads.
#[test]
fn lone_surrogates_are_refused_as_strings_and_a_big_enum_set_reads_as_jumbo() {
    let judged = judge_all();
    for codec in JACKSON {
        let outcome = |case: &str| {
            let (outcome, value) = judged
                .get(&(case.to_owned(), codec.to_string()))
                .unwrap_or_else(|| panic!("{codec} {case} is in the fixture"));
            (format!("{outcome:?}"), value)
        };
        for case in ["char_lone_surrogate", "char_array_surrogates", "string_lone_surrogate"] {
            let (outcome, _) = outcome(case);
            assert!(
                outcome.starts_with("Refused(")
                    && outcome.contains("a java.lang.String holding a lone UTF-16 surrogate"),
                "{codec} {case}: {outcome}"
            );
        }
        let (outcome, value) = outcome("enum_set_big");
        assert_eq!(outcome, "Right", "{codec} enum_set_big");
        match value {
            Some(KryoValue::EnumSet { items, .. }) => assert_eq!(items.len(), 156, "{codec}"),
            other => panic!("{codec} enum_set_big read as {other:?}"),
        }
        assert_eq!(
            value.as_ref().and_then(KryoValue::java_class),
            Some("java.util.JumboEnumSet"),
            "{codec}"
        );
    }
}

/// `corpus.Everything` (a field of every type) is refused for its one
/// `BitSet`; without it, every other field (every `java.time` type in
/// `JavaTimeModule`'s form, arrays, enums, `EnumSet`, `EnumMap`, atomics,
/// `BigInteger`, `BigDecimal`'s scale, a `LinkedHashMap`'s order) reads as
/// Java reads it.
#[test]
fn every_field_of_the_everything_pojo_but_its_bit_set_reads_as_java_reads_it() {
    let doc = fixture();
    let rec = &doc["codecs"]["jackson_jsr310"]["pojo_everything"];
    let json = String::from_utf8(hex(rec["hex"].as_str().unwrap())).unwrap();
    let without_bits = json.replace(r#""bits":{"@class":"java.util.BitSet","empty":false},"#, "");
    assert_ne!(json, without_bits, "the payload has its BitSet");
    let value = decode_value(without_bits.as_bytes(), Some(&schema())).unwrap();
    let want = rec["java_decoded"]
        .as_str()
        .unwrap()
        .replace(r#""bits":[]"#, r#""bits":null"#);
    assert_eq!(
        doubles_as_rust_prints_them(&by_name(value).to_json_text()),
        doubles_as_rust_prints_them(&want)
    );
}

const RUST_FIXTURE: &str = include_str!("../../compat/fixtures/jdk-types-rust-jackson.json");

fn dialect(codec: &str) -> delayq_codec::jackson::Dialect {
    match codec {
        "jackson" => delayq_codec::jackson::Dialect::Plain,
        _ => delayq_codec::jackson::Dialect::JavaTimeModule,
    }
}

/// What delayq writes, per codec and case, for each value it read from
/// Java's Jackson bytes: hex, or why it does not write it.
fn rust_bytes() -> BTreeMap<String, BTreeMap<String, Result<String, String>>> {
    let mut out: BTreeMap<String, BTreeMap<String, Result<String, String>>> = BTreeMap::new();
    for ((case, codec), (_, value)) in judge_all() {
        let Some(value) = value else { continue };
        let written = delayq_codec::jackson::encode_value(&value, dialect(&codec))
            .map(|b| b.iter().map(|x| format!("{x:02x}")).collect::<String>())
            .map_err(|e| e.to_string());
        out.entry(codec).or_default().insert(case, written);
    }
    out
}

/// Writes `compat/fixtures/jdk-types-rust-jackson.json` (then
/// `compat/java/corpus.sh verify compat/fixtures/jdk-types-rust-jackson.json`
/// has Java read it back).
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
        "about": "What delayq_codec::jackson::encode_value writes for each value decode_value read from \
                  compat/fixtures/jdk-types.json (jackson: Dialect::Plain, jackson_jsr310: Dialect::JavaTimeModule), \
                  and what Redisson's JsonJacksonCodec (plain, and with JavaTimeModule) reads from it \
                  (compat/java/corpus.sh verify): java_decoded in canonical JSON, java_class, same_class, equal \
                  (Java's equals, element by element for arrays, the canonical form for classes without a value \
                  equals), or java_error.",
        "codecs": codecs,
    });
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../compat/fixtures/jdk-types-rust-jackson.json"
    );
    std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
}

/// Java reads back, equal, what delayq writes in Jackson: the bytes delayq
/// writes today are those the real `JsonJacksonCodec`s read
/// (`jdk-types-rust-jackson.json`, checked with the peers), and Java found
/// each equal to the value it wrote, or read what it reads from its own
/// bytes (Jackson's own losses: a `Character` or a `Currency` at the root
/// comes back a `String`, a `Timestamp` its milliseconds).
#[test]
fn java_reads_back_equal_what_delayq_writes_in_jackson() {
    let recorded: Value = serde_json::from_str(RUST_FIXTURE).expect("jdk-types-rust-jackson.json is JSON");
    let java = fixture();
    let (mut equal, mut as_own, mut not_written, mut problems) = (
        BTreeMap::<String, usize>::new(),
        BTreeMap::<String, usize>::new(),
        BTreeMap::<String, usize>::new(),
        Vec::new(),
    );
    for (codec, cases) in rust_bytes() {
        for (case, written) in cases {
            let rec = &recorded["codecs"][&codec][&case];
            match written {
                Ok(hex) => {
                    let theirs = &java["codecs"][&codec][&case];
                    if rec["hex"].as_str() != Some(hex.as_str()) {
                        problems.push(format!(
                            "{codec} {case}: delayq writes other bytes than Java checked (run corpus.sh verify)"
                        ));
                    } else if rec["same_class"] == Value::Bool(true) && rec["equal"] == Value::Bool(true) {
                        *equal.entry(codec.clone()).or_default() += 1;
                    } else if rec["java_decoded"].is_string()
                        && rec["java_decoded"] == theirs["java_decoded"]
                        && rec["java_class"] == theirs["java_decoded_class"]
                    {
                        *as_own.entry(codec.clone()).or_default() += 1;
                    } else {
                        problems.push(format!("{codec} {case}: Java read {rec}"));
                    }
                }
                Err(why) => {
                    println!("not written: {codec} {case}: {why}");
                    *not_written.entry(codec.clone()).or_default() += 1;
                }
            }
        }
    }
    for codec in JACKSON {
        let count = |m: &BTreeMap<String, usize>| m.get(*codec).copied().unwrap_or(0);
        println!(
            "{codec:15} Java reads back equal: {}  as from its own bytes: {}  not written (typed Encode errors): {}",
            count(&equal),
            count(&as_own),
            count(&not_written)
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
