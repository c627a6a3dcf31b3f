//! Which Redisson codec wrote a payload: auto-detection for tools that read
//! queues whose codec they were not told, or whose values came from several
//! (a fleet half way through a codec migration).
//!
//! Printable UTF-8 text goes straight to steps 4, 6 and 7. Otherwise each
//! payload is tried in this order, and the first reading that takes the
//! whole payload wins:
//!
//! 1. Java serialization: its stream magic `AC ED 00 05`;
//! 2. JBoss Marshalling (River): its version byte and a plausible first id;
//! 3. a compression wrapper (`lz4`, `lz4v2`, `snappy`, `zstd`): the framing
//!    is checked, then the payload is decompressed (within the size cap)
//!    and what is inside is detected with steps 1 and 2 and the steps
//!    below;
//! 4. Jackson with type information: JSON holding `@class` or a
//!    `["java.…", …]` wrapper;
//! 5. Kryo: a class id or name first, and a decoding that takes every byte;
//! 6. plain JSON (an object or an array);
//! 7. UTF-8 text; anything else is raw bytes.
//!
//! Where it can be wrong (these are ambiguous bytes, not bugs):
//!
//! - LZ4Codec and LZ4CodecV2 frame a block the same way: both read as `lz4`
//!   (a reader of one reads the other's bytes).
//! - A Snappy block has no magic number: one whose bytes are all printable
//!   (a block of 32 to 127 bytes of text can be) reads as text, and bytes
//!   that happen to form a valid block read as Snappy.
//! - Text that is a Kryo payload by accident (it starts with a control
//!   character `\x01`–`\x0a` and decodes whole as Kryo, like `"\tT"`, which
//!   is Kryo's Long 42, or `"\n"` and 8 more characters, a Double) reads as
//!   Kryo; a `LongCodec` value (`"42"`) reads as
//!   text, and a JSON string written by `StringCodec` as JSON.
//! - An empty payload reads as the empty string.
//! - `ByteArrayCodec` bytes that happen to be valid UTF-8 read as text.

use crate::compress::Compression;
use crate::kryo::{self, KryoSchema, KryoValue};
use crate::{jackson, marshalling, serialization, JavaObject};

/// A payload's codec and its value, as [`detect`] found them.
///
/// ```
/// use delayq_codec::detect::{detect, Untyped};
/// let found = detect(b"hello", None, delayq_codec::compress::DEFAULT_MAX_DECOMPRESSED);
/// assert_eq!(found.codec, "string");
/// assert_eq!(found.value, Untyped::Text("hello".into()));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// The codec, named as the CLI's `--codec` names it (`lz4/jackson`,
    /// `lz4` for LZ4 around Kryo, `serialization`...).
    pub codec: String,
    /// The value.
    pub value: Untyped,
}

impl Detected {
    /// The Java object the payload holds, as far as [`detect`] read it
    /// (`schema` as given to it): a Java value's class, or, for a Kryo
    /// object of a class the schema does not describe (read as
    /// [`Untyped::Bytes`]), its class and why its fields were not read.
    ///
    /// ```
    /// use delayq_codec::detect::detect;
    /// let mut raw = vec![0x01, 0x00];
    /// raw.extend_from_slice(b"com.shop.Orde");
    /// raw.extend_from_slice(&[b'r' | 0x80, 0xa4, 0x13]);
    /// let found = detect(&raw, None, 1 << 20);
    /// let object = found.java_object(None).unwrap();
    /// assert_eq!(object.class, "com.shop.Order");
    /// assert!(object.unread.unwrap().contains("schema"));
    /// ```
    pub fn java_object(&self, schema: Option<&KryoSchema>) -> Option<JavaObject> {
        match &self.value {
            Untyped::Java(value) => value.java_class().map(JavaObject::read),
            // Kryo bytes, alone or in a compression: `detect` keeps the inner bytes.
            Untyped::Bytes(inner) if self.codec == "kryo" || Compression::from_name(&self.codec).is_some() => {
                let class = kryo::class_of(inner)?;
                let why = match KryoValue::decode(inner, schema) {
                    Err(e) => e.message().to_owned(),
                    Ok(_) => "not read".to_owned(),
                };
                Some(JavaObject::unread(class, why))
            }
            _ => None,
        }
    }
}

/// A value read without knowing its type.
///
/// ```
/// use delayq_codec::detect::Untyped;
/// assert_eq!(Untyped::Bytes(vec![0xff]).to_json_text(), "\"ff\"");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Untyped {
    /// A Java object (Kryo, Java serialization, River).
    Java(KryoValue),
    /// JSON text: Jackson's with its type information removed
    /// ([`jackson::to_plain_json`]), properties in the order written and
    /// numbers as written (every digit of a `BigInteger`, a `BigDecimal`'s
    /// scale).
    Json(String),
    /// Text.
    Text(String),
    /// Bytes no codec reads.
    Bytes(Vec<u8>),
}

impl Untyped {
    /// The value as JSON text (bytes as hex), as the CLI prints values.
    pub fn to_json_text(&self) -> String {
        match self {
            Untyped::Java(value) => value.to_json_text(),
            Untyped::Json(json) => json.clone(),
            Untyped::Text(text) => serde_json::Value::String(text.clone()).to_string(),
            Untyped::Bytes(bytes) => {
                let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                serde_json::Value::String(hex).to_string()
            }
        }
    }

    /// The value as a tool shows it: text as it is, bytes as hex, anything
    /// else as JSON text.
    pub fn to_display_text(&self) -> String {
        match self {
            Untyped::Text(text) => text.clone(),
            Untyped::Bytes(bytes) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
            other => other.to_json_text(),
        }
    }
}

/// Detects the codec of `raw` and reads it. POJOs and enums of Kryo
/// payloads need `schema`; decompression stops at `max_size` bytes. Never
/// fails: bytes nothing reads are [`Untyped::Bytes`].
pub fn detect(raw: &[u8], schema: Option<&KryoSchema>, max_size: usize) -> Detected {
    // Printable text is text (or JSON): every binary format here starts with
    // a control or non-ASCII byte (a length, a magic number, a class id),
    // except a Snappy block of 32 to 127 bytes of text, which would read as
    // its own bytes.
    if is_printable(raw) {
        return detect_plain(raw, schema);
    }
    if let Some(java) = detect_java(raw) {
        return java;
    }
    for wrap in Compression::ALL {
        if !wrap.looks_like(raw) {
            continue;
        }
        if let Ok(inner) = wrap.decompress(raw, max_size) {
            let inside = detect_java(&inner).unwrap_or_else(|| detect_plain(&inner, schema));
            let codec = match inside.codec.as_str() {
                "kryo" => wrap.name().to_owned(),
                other => format!("{}/{other}", wrap.name()),
            };
            return Detected { codec, ..inside };
        }
    }
    detect_plain(raw, schema)
}

/// Steps 1 and 2: Java serialization and River.
/// A payload of either that holds something delayq does not read (a
/// comparator, a class it does not know) is still named for its codec,
/// as bytes: no other codec's reading of it is right.
fn detect_java(raw: &[u8]) -> Option<Detected> {
    if raw.starts_with(&serialization::MAGIC) {
        match serialization::decode(raw) {
            Ok(value) => return Some(found("serialization", Untyped::Java(value))),
            Err(e) if e.kind() == serialization::SerializationErrorKind::Unsupported => {
                return Some(found("serialization", Untyped::Bytes(raw.to_vec())))
            }
            Err(_) => {}
        }
    }
    if marshalling::looks_like(raw) {
        match marshalling::decode(raw) {
            Ok(value) => return Some(found("marshalling", Untyped::Java(value))),
            Err(e) if e.kind() == marshalling::MarshallingErrorKind::Unsupported => {
                return Some(found("marshalling", Untyped::Bytes(raw.to_vec())))
            }
            Err(_) => {}
        }
    }
    None
}

/// Steps 4 to 7.
fn detect_plain(raw: &[u8], schema: Option<&KryoSchema>) -> Detected {
    let first = raw.iter().find(|b| !b.is_ascii_whitespace());
    if matches!(first, Some(b'{' | b'['))
        && looks_typed(raw)
        && let Ok(json) = jackson::to_plain_json(raw)
    {
        return found("jackson", Untyped::Json(json));
    }
    if matches!(raw.first(), Some(0x01..=0x0a)) {
        match KryoValue::decode(raw, schema) {
            Ok(value) => return found("kryo", Untyped::Java(value)),
            // A POJO or enum the schema does not describe: Kryo still, as bytes.
            Err(_) if crate::looks_like_kryo(raw) => return found("kryo", Untyped::Bytes(raw.to_vec())),
            Err(_) => {}
        }
    }
    if matches!(first, Some(b'{' | b'[')) && serde_json::from_slice::<serde::de::IgnoredAny>(raw).is_ok() {
        // Plain JSON stays the text it is (key order, number forms).
        if let Ok(text) = std::str::from_utf8(raw) {
            return found("json", Untyped::Text(text.to_owned()));
        }
    }
    match std::str::from_utf8(raw) {
        Ok(text) => found("string", Untyped::Text(text.to_owned())),
        Err(_) => found("bytes", Untyped::Bytes(raw.to_vec())),
    }
}

/// UTF-8 without control characters other than tab, CR and LF.
fn is_printable(raw: &[u8]) -> bool {
    std::str::from_utf8(raw).is_ok_and(|text| text.chars().all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r')))
}

/// Jackson's default typing: `"@class"` in an object, or an array whose
/// first element names a Java class.
fn looks_typed(raw: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&raw[..raw.len().min(4096)]);
    text.contains("\"@class\"") || text.trim_start().starts_with("[\"java.")
}

/// A codec that reads any payload [`detect`] reads, as text, and names the
/// codec it found ([`Codec::detected_codec`](crate::Codec::detected_codec)): for tools that show queues of
/// unknown or mixed codecs (the dashboard's `--codec auto`). It writes
/// nothing: encoding is an error.
///
/// ```
/// use delayq_codec::{detect::AutoCodec, Codec};
/// let auto = AutoCodec::new();
/// let kryo_hello = [0x03, b'h', b'e', b'l', b'l', b'o' | 0x80];
/// assert_eq!(auto.decode(&kryo_hello).unwrap(), "\"hello\"");
/// assert_eq!(auto.detected_codec(&kryo_hello).as_deref(), Some("kryo"));
/// assert!(auto.encode(&"x".to_string()).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct AutoCodec {
    schema: Option<KryoSchema>,
    max_size: usize,
}

impl Default for AutoCodec {
    fn default() -> Self {
        AutoCodec::new()
    }
}

impl AutoCodec {
    /// Detection without a schema, decompressing up to
    /// [`DEFAULT_MAX_DECOMPRESSED`](crate::compress::DEFAULT_MAX_DECOMPRESSED).
    pub fn new() -> Self {
        AutoCodec {
            schema: None,
            max_size: crate::compress::DEFAULT_MAX_DECOMPRESSED,
        }
    }

    /// With the Java classes of Kryo POJOs and enums.
    pub fn with_schema(mut self, schema: KryoSchema) -> Self {
        self.schema = Some(schema);
        self
    }

    /// With another cap on decompressed sizes.
    pub fn with_max_size(mut self, max_size: usize) -> Self {
        self.max_size = max_size;
        self
    }

    /// Detects and reads `raw`.
    pub fn detect(&self, raw: &[u8]) -> Detected {
        detect(raw, self.schema.as_ref(), self.max_size)
    }
}

impl crate::Codec<String> for AutoCodec {
    fn name(&self) -> &'static str {
        "auto"
    }

    fn encode(&self, _value: &String) -> Result<bytes::Bytes, crate::BoxError> {
        Err("auto-detection only reads: name the codec to write with".into())
    }

    /// Text as it is, bytes as hex, anything else as JSON text.
    fn decode(&self, raw: &[u8]) -> Result<String, crate::BoxError> {
        Ok(self.detect(raw).value.to_display_text())
    }

    fn detected_codec(&self, raw: &[u8]) -> Option<String> {
        Some(self.detect(raw).codec)
    }

    fn decode_detected(&self, raw: &[u8]) -> (Result<String, crate::BoxError>, Option<String>) {
        let found = self.detect(raw);
        (Ok(found.value.to_display_text()), Some(found.codec))
    }

    fn java_object(&self, raw: &[u8]) -> Option<JavaObject> {
        self.detect(raw).java_object(self.schema.as_ref())
    }
}

fn found(codec: &str, value: Untyped) -> Detected {
    Detected {
        codec: codec.to_owned(),
        value,
    }
}

#[cfg(test)]
mod tests;
