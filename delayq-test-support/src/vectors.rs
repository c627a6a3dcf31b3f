//! The values real Redisson clients wrote, as captured in `compat/fixtures/`:
//! Kryo5's 27 cases (`kryo5.json`) and the other codecs' payloads of the
//! same values (`codecs.json`: LZ4, Snappy, Zstd, Java serialization, JBoss
//! Marshalling...); and hostile Kryo values. The one reader of those files
//! for the codec crate's, the library's, the CLI's and the dashboard's tests
//! and for the benchmark.

use serde_json::Value;

/// What real Redisson `Kryo5Codec` wrote: 27 cases.
const KRYO5: &str = include_str!("../../compat/fixtures/kryo5.json");
/// What Redisson's other codecs wrote, by codec and case.
const CODECS: &str = include_str!("../../compat/fixtures/codecs.json");

/// Decodes a hex string.
pub fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Bytes as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// One case of `kryo5.json`.
pub struct KryoCase {
    pub name: String,
    /// The Java class of the value.
    pub class: String,
    /// The value as Java's JSON text.
    pub json_text: String,
    /// The same, parsed (a `byte[]` is given as bare hex, so as a string).
    pub json: Value,
    /// Kryo's bytes.
    pub raw: Vec<u8>,
}

/// The 27 cases of `kryo5.json`, in its order.
pub fn kryo_cases() -> Vec<KryoCase> {
    let file: Value = serde_json::from_str(KRYO5).unwrap();
    let cases: Vec<KryoCase> = file["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = c["value_json"].as_str().unwrap();
            KryoCase {
                name: c["case"].as_str().unwrap().to_owned(),
                class: c["java_class"].as_str().unwrap().to_owned(),
                json_text: text.to_owned(),
                json: serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
                raw: unhex(c["kryo_hex"].as_str().unwrap()),
            }
        })
        .collect();
    assert_eq!(cases.len(), 27);
    cases
}

/// `kryo5.json`'s case of that name.
pub fn kryo_case(name: &str) -> KryoCase {
    kryo_cases()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no Kryo vector {name}"))
}

/// `codecs.json`, parsed.
pub fn codecs() -> Value {
    serde_json::from_str(CODECS).unwrap()
}

/// The bytes Java's codec `codec` (named as in `codecs.json`: `lz4`,
/// `marshalling`, `lz4/json`...) wrote for `case` (a case of `kryo5.json`).
pub fn codec_case(codec: &str, case: &str) -> Vec<u8> {
    let hex = codecs()["codecs"][codec]["cases"][case]["hex"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no {codec} vector for {case}"));
    unhex(&hex)
}

/// A 32 KiB positive BigInteger (Java's `toByteArray()`).
pub fn hostile_big_integer() -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..32 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    bytes[0] = 0x5a;
    bytes
}

/// A map whose only key is a map whose only key is ... `depth` deep.
#[cfg(feature = "redis")]
pub fn maps_in_keys(depth: usize) -> delayq::codec::kryo::KryoValue {
    use delayq::codec::kryo::KryoValue;
    let mut v = KryoValue::String("a\"b".into());
    for _ in 0..depth {
        v = KryoValue::Map {
            class: "java.util.HashMap".into(),
            entries: vec![(v, KryoValue::Int(1))],
        };
    }
    v
}
