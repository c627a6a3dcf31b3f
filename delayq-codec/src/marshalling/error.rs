//! What can go wrong reading or writing River bytes.

use std::fmt;

use crate::kryo::{KryoError, KryoErrorKind};

/// Why River bytes could not be decoded, or a value could not be encoded.
///
/// [`MarshallingCodec`](super::MarshallingCodec) returns it boxed (delayq's
/// queues wrap it in their `Error::Decode` with the raw bytes, so nothing is
/// lost). Downcast it to inspect it:
///
/// ```
/// use delayq_codec::marshalling::{self, MarshallingErrorKind};
///
/// // Version 4, then a Long of which only 3 of 8 bytes arrived.
/// let error = marshalling::decode(&[0x04, 0x4c, 0x00, 0x00, 0x2a]).unwrap_err();
/// assert_eq!(error.kind(), MarshallingErrorKind::Truncated);
/// assert_eq!(error.offset(), Some(2)); // where the long starts
///
/// // A String claiming 8 characters with 2 bytes left: refused before
/// // anything is allocated for it.
/// let error = marshalling::decode(&[0x04, 0x3e, 0x08, b'o', b'r']).unwrap_err();
/// assert_eq!(error.kind(), MarshallingErrorKind::TooLarge);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarshallingError {
    kind: MarshallingErrorKind,
    offset: Option<usize>,
    message: String,
}

/// The kind of a [`MarshallingError`].
///
/// ```
/// use delayq_codec::marshalling::{self, MarshallingErrorKind};
/// // 0x7b: Collections.nCopies(2, null), which delayq does not read.
/// let error = marshalling::decode(&[0x04, 0x53, 0x02, 0x7b, 0x01]).unwrap_err();
/// assert_eq!(error.kind(), MarshallingErrorKind::Unsupported);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MarshallingErrorKind {
    /// The bytes end before the value does.
    Truncated,
    /// Bytes are left after the value.
    TrailingBytes,
    /// A count or length larger than the bytes left (nothing is allocated
    /// for it), or a value that would take more than
    /// [`max_value_bytes`](crate::bounds::max_value_bytes) (back-references
    /// expanded), refused before it is built.
    TooLarge,
    /// Values or class descriptors nested deeper than
    /// [`MAX_DEPTH`](crate::kryo::MAX_DEPTH).
    TooDeep,
    /// A byte where River allows none of that value (an unknown object or
    /// class id, a bad protocol version).
    UnknownId,
    /// A back-reference to an instance or class descriptor that does not
    /// exist, or that is still being read (a cycle: a value cannot hold
    /// itself).
    BadReference,
    /// Bytes no River writer produces (bad UTF-8, a negative length, a
    /// class name that is not a string, a JDK class with the wrong data...).
    Malformed,
    /// A Java class or River feature delayq does not read: `Class`
    /// objects, proxies, externalizers, class or object tables, custom
    /// `writeObject` data of non-JDK classes, JDK classes it does not know,
    /// a `String` with a lone UTF-16 surrogate (Rust strings cannot hold one)...
    Unsupported,
    /// The value does not fit the Rust type it is read into.
    SchemaMismatch,
    /// A value that cannot be written as Java would (encoding only).
    Encode,
}

impl MarshallingError {
    pub(crate) fn new(kind: MarshallingErrorKind, offset: Option<usize>, message: impl Into<String>) -> Self {
        MarshallingError {
            kind,
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn encode(message: impl Into<String>) -> Self {
        MarshallingError::new(MarshallingErrorKind::Encode, None, message)
    }

    /// What went wrong.
    pub fn kind(&self) -> MarshallingErrorKind {
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

impl fmt::Display for MarshallingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "JBoss Marshalling: {} (at byte {offset})", self.message),
            None => write!(f, "JBoss Marshalling: {}", self.message),
        }
    }
}

impl std::error::Error for MarshallingError {}

/// Errors of the shared value model (reading a value into a Rust type,
/// turning a Rust value into a value).
impl From<KryoError> for MarshallingError {
    fn from(e: KryoError) -> Self {
        let kind = match e.kind() {
            KryoErrorKind::TooLarge => MarshallingErrorKind::TooLarge,
            KryoErrorKind::Encode => MarshallingErrorKind::Encode,
            _ => MarshallingErrorKind::SchemaMismatch,
        };
        MarshallingError::new(kind, None, e.message())
    }
}

pub(crate) type Result<T, E = MarshallingError> = std::result::Result<T, E>;
