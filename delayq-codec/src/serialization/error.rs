//! What can go wrong reading or writing Java serialization streams.

use std::fmt;

/// Why a Java serialization stream could not be decoded, or a value could
/// not be encoded.
///
/// [`SerializationCodec`](super::SerializationCodec) returns it boxed
/// (delayq's queues wrap it in their `Error::Decode` with the raw bytes, so
/// nothing is lost). Downcast it to inspect it:
///
/// ```
/// use delayq_codec::serialization::{decode, SerializationErrorKind};
///
/// // A String claiming 0xffff bytes with one byte left.
/// let error = decode(&[0xac, 0xed, 0x00, 0x05, 0x74, 0xff, 0xff, b'a']).unwrap_err();
/// assert_eq!(error.kind(), SerializationErrorKind::TooLarge);
/// assert_eq!(error.offset(), Some(5)); // where the length is
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerializationError {
    kind: SerializationErrorKind,
    offset: Option<usize>,
    message: String,
}

/// The kind of a [`SerializationError`].
///
/// ```
/// use delayq_codec::serialization::{decode, SerializationErrorKind};
/// // 0x55 is no type code of the protocol.
/// let error = decode(&[0xac, 0xed, 0x00, 0x05, 0x55]).unwrap_err();
/// assert_eq!(error.kind(), SerializationErrorKind::Malformed);
/// assert_eq!(error.offset(), Some(4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SerializationErrorKind {
    /// The bytes end before the value does.
    Truncated,
    /// Bytes are left after the value.
    TrailingBytes,
    /// A length (string, array, block data, collection size) larger than the
    /// bytes left, checked before anything is allocated; or a value that
    /// would take more than
    /// [`max_value_bytes`](crate::bounds::max_value_bytes), shared objects
    /// copied, refused before it is built.
    TooLarge,
    /// Nested deeper than [`MAX_DEPTH`](crate::kryo::MAX_DEPTH) (values, or
    /// a chain of superclasses).
    TooDeep,
    /// A back-reference to an object still being read (a list that contains
    /// itself, a class whose superclass is itself): Java's object graph has
    /// a cycle, which a value tree cannot hold.
    Cyclic,
    /// Bytes no `ObjectOutputStream` writes: a bad magic number, an unknown
    /// type code, a handle that was never assigned or names the wrong kind
    /// of thing, bad modified UTF-8, a JDK class without the fields it has.
    Malformed,
    /// Valid Java serialization delayq does not read: a class whose custom
    /// `writeObject`/`writeExternal` data only its own Java code knows, a
    /// `Class` object, a dynamic proxy, an exception written mid-stream, a
    /// `String` with a lone UTF-16 surrogate (Rust strings cannot hold one).
    Unsupported,
    /// The value does not fit the schema or Rust type it is read into.
    SchemaMismatch,
    /// A value that cannot be written as Java would (encoding only).
    Encode,
}

impl SerializationError {
    pub(crate) fn new(kind: SerializationErrorKind, offset: Option<usize>, message: impl Into<String>) -> Self {
        SerializationError {
            kind,
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn set_offset(&mut self, offset: usize) {
        self.offset = Some(offset);
    }

    pub(crate) fn at(kind: SerializationErrorKind, offset: usize, message: impl Into<String>) -> Self {
        Self::new(kind, Some(offset), message)
    }

    pub(crate) fn encode(message: impl Into<String>) -> Self {
        Self::new(SerializationErrorKind::Encode, None, message)
    }

    /// What went wrong.
    ///
    /// ```
    /// use delayq_codec::serialization::{decode, SerializationErrorKind};
    /// assert_eq!(decode(b"hello").unwrap_err().kind(), SerializationErrorKind::Malformed);
    /// ```
    pub fn kind(&self) -> SerializationErrorKind {
        self.kind
    }

    /// Where in the payload (byte offset), when decoding.
    ///
    /// ```
    /// use delayq_codec::serialization::decode;
    /// assert_eq!(decode(&[0xac, 0xed, 0x00]).unwrap_err().offset(), Some(0));
    /// ```
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The message without the offset.
    ///
    /// ```
    /// use delayq_codec::serialization::decode;
    /// assert!(decode(b"hello").unwrap_err().message().contains("magic"));
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SerializationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "Java serialization: {} (at byte {offset})", self.message),
            None => write!(f, "Java serialization: {}", self.message),
        }
    }
}

impl std::error::Error for SerializationError {}

impl From<crate::kryo::KryoError> for SerializationError {
    /// A Kryo-model error met on the way (serde glue, schema).
    fn from(e: crate::kryo::KryoError) -> Self {
        use crate::kryo::KryoErrorKind as K;
        let kind = match e.kind() {
            K::Encode => SerializationErrorKind::Encode,
            K::TooLarge => SerializationErrorKind::TooLarge,
            _ => SerializationErrorKind::SchemaMismatch,
        };
        SerializationError::new(kind, None, e.message().to_owned())
    }
}

/// A class name for an error message: its first 200 characters (a name is
/// as long as the payload says).
pub(crate) fn shown(name: &str) -> String {
    match name.char_indices().nth(200) {
        Some((end, _)) => format!("{}… ({} bytes)", &name[..end], name.len()),
        None => name.to_owned(),
    }
}

pub(crate) type Result<T, E = SerializationError> = std::result::Result<T, E>;
