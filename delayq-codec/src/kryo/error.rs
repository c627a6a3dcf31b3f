//! What can go wrong reading or writing Kryo bytes.

use std::fmt;

/// Why Kryo bytes could not be decoded, or a value could not be encoded.
///
/// [`KryoCodec`](super::KryoCodec) returns it boxed (delayq's queues wrap
/// it in their `Error::Decode` with the raw bytes, so nothing is lost).
/// Downcast it to inspect it:
///
/// ```
/// use delayq_codec::kryo::{KryoError, KryoErrorKind, KryoValue};
///
/// // A String whose bytes stop half-way (no byte with the end bit).
/// let error = KryoValue::decode(&[0x03, b'a', b'b'], None).unwrap_err();
/// assert_eq!(error.kind(), KryoErrorKind::Truncated);
/// assert_eq!(error.offset(), Some(1)); // where the string starts
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KryoError {
    kind: KryoErrorKind,
    offset: Option<usize>,
    message: String,
}

/// The kind of a [`KryoError`].
///
/// ```
/// use delayq_codec::kryo::{KryoErrorKind, KryoValue};
/// // 0x01 0x00 then a class name nobody described.
/// let mut raw = vec![0x01, 0x00];
/// raw.extend_from_slice(b"com.shop.Orde");
/// raw.push(b'r' | 0x80);
/// raw.push(0x00);
/// let error = KryoValue::decode(&raw, None).unwrap_err();
/// assert_eq!(error.kind(), KryoErrorKind::UnknownClass);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KryoErrorKind {
    /// The bytes end before the value does.
    Truncated,
    /// Bytes are left after the value: usually a schema or Rust type with
    /// fewer fields than the Java class.
    TrailingBytes,
    /// A length prefix larger than the bytes left (nothing is allocated for
    /// it); all-null collections past [`MAX_ALL_NULL`](super::MAX_ALL_NULL)
    /// elements in one payload; a value that would take more than
    /// [`max_value_bytes`](crate::bounds::max_value_bytes); or a `BigInteger` or `BigDecimal` past
    /// [`MAX_DECIMAL_BITS`](super::MAX_DECIMAL_BITS) read into a type that
    /// needs its decimal text (a [`KryoValue`](super::KryoValue) holds it exactly).
    TooLarge,
    /// Nested deeper than [`MAX_DEPTH`](super::MAX_DEPTH).
    TooDeep,
    /// A class name that is neither built in nor described by the schema
    /// (or, for a Rust type, not the class the type expects).
    UnknownClass,
    /// The bytes do not fit the schema or Rust type (wrong field type, an
    /// enum ordinal out of range, a null where none is allowed...).
    SchemaMismatch,
    /// Bytes no Kryo writer produces (bad UTF-8, a character cut short...).
    Malformed,
    /// A Kryo setting delayq does not read: registered classes
    /// (`Kryo5Codec(allowedClasses, ...)`), references
    /// (`Kryo5Codec(..., useReferences = true)`), or a class written by a
    /// Java-only serializer; or a value Rust cannot hold (a `String` with
    /// a lone UTF-16 surrogate).
    Unsupported,
    /// A value that cannot be written as Java would (encoding only).
    Encode,
}

impl KryoError {
    pub(crate) fn new(kind: KryoErrorKind, offset: Option<usize>, message: impl Into<String>) -> Self {
        KryoError {
            kind,
            offset,
            message: message.into(),
        }
    }

    /// The same error, with a note after its message.
    pub(crate) fn with_note(mut self, note: &str) -> Self {
        self.message = format!("{} ({note})", self.message);
        self
    }

    pub(crate) fn encode(message: impl Into<String>) -> Self {
        KryoError::new(KryoErrorKind::Encode, None, message)
    }

    /// What went wrong.
    pub fn kind(&self) -> KryoErrorKind {
        self.kind
    }

    /// Where in the payload (byte offset), when decoding.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The message without the offset.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for KryoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "Kryo: {} (at byte {offset})", self.message),
            None => write!(f, "Kryo: {}", self.message),
        }
    }
}

impl std::error::Error for KryoError {}

impl serde::de::Error for KryoError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        KryoError::new(KryoErrorKind::SchemaMismatch, None, msg.to_string())
    }
}

impl serde::ser::Error for KryoError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        KryoError::encode(msg.to_string())
    }
}

pub(crate) type Result<T, E = KryoError> = std::result::Result<T, E>;
