//! The captured Java vectors (`compat/fixtures/*.json`): Kryo5's 27 cases
//! and the other codecs' payloads, as bytes.

use serde_json::Value;

/// What real Redisson `Kryo5Codec` wrote: 27 cases.
pub(crate) const KRYO5: &str = include_str!("../../../compat/fixtures/kryo5.json");
/// What Redisson's other codecs wrote, by codec and case.
pub(crate) const CODECS: &str = include_str!("../../../compat/fixtures/codecs.json");

pub(crate) fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// codecs.json, parsed.
pub(crate) fn codecs() -> Value {
    serde_json::from_str(CODECS).unwrap()
}

/// codecs.json's bytes of one codec's case.
pub(crate) fn codec_case(codec: &str, case: &str) -> Vec<u8> {
    unhex(codecs()["codecs"][codec]["cases"][case]["hex"].as_str().unwrap())
}

/// One case of kryo5.json.
pub(crate) struct KryoCase {
    pub(crate) name: String,
    pub(crate) class: String,
    /// The value as Java's JSON text.
    pub(crate) json_text: String,
    pub(crate) json: Value,
    /// Kryo's bytes.
    pub(crate) raw: Vec<u8>,
}

/// The 27 cases of kryo5.json, in its order.
pub(crate) fn kryo_cases() -> Vec<KryoCase> {
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
                // byte[] is given as bare hex, not JSON.
                json: serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
                raw: unhex(c["kryo_hex"].as_str().unwrap()),
            }
        })
        .collect();
    assert_eq!(cases.len(), 27);
    cases
}

/// kryo5.json's case of that name.
pub(crate) fn kryo_case(name: &str) -> KryoCase {
    kryo_cases().into_iter().find(|c| c.name == name).unwrap()
}
