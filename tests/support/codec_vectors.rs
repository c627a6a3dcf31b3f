//! The values real Redisson clients wrote with their other codecs
//! (`compat/fixtures/codecs.json`: LZ4, Snappy, Zstd, Java serialization,
//! JBoss Marshalling...), shared by the CLI's tests.

#![allow(dead_code)]

const VECTORS: &str = include_str!("../../compat/fixtures/codecs.json");

/// The bytes Java's codec `codec` (named as in the file: `lz4`,
/// `marshalling`, `lz4/json`...) wrote for `case` (a case of kryo5.json).
pub fn codec_vector(codec: &str, case: &str) -> Vec<u8> {
    let file: serde_json::Value = serde_json::from_str(VECTORS).unwrap();
    let hex = file["codecs"][codec]["cases"][case]["hex"]
        .as_str()
        .unwrap_or_else(|| panic!("no {codec} vector for {case}"));
    crate::kryo_vectors::unhex(hex)
}
