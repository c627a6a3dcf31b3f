//! The error of Jackson's value reader and writer ([`decode_value`](super::decode_value),
//! [`encode_value`](super::encode_value)).

use std::fmt;

/// Why a Jackson payload could not be read as a Java value, or a value not
/// written as Jackson would.
///
/// ```
/// use delayq_codec::jackson::{decode_value, JacksonErrorKind};
/// let error = decode_value(br#"{"@class":"java.util.BitSet","empty":false}"#, None).unwrap_err();
/// assert_eq!(error.kind(), JacksonErrorKind::Unsupported);
/// assert!(error.message().contains("java.util.BitSet"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JacksonError {
    kind: JacksonErrorKind,
    offset: Option<usize>,
    message: String,
}

/// What kind of [`JacksonError`] it is.
///
/// ```
/// use delayq_codec::jackson::{decode_value, JacksonErrorKind};
/// assert_eq!(decode_value(b"[1,", None).unwrap_err().kind(), JacksonErrorKind::Malformed);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JacksonErrorKind {
    /// Not JSON, or JSON no Jackson writes for the type (a `Long` that is
    /// not an integer, a date that is not a date).
    Malformed,
    /// Nested deeper than [`MAX_DEPTH`](crate::kryo::MAX_DEPTH) Java values.
    TooDeep,
    /// A value that would take more than
    /// [`max_value_bytes`](crate::bounds::max_value_bytes) (a schema's absent
    /// fields are filled with nulls), refused as it is built.
    TooLarge,
    /// Valid Jackson delayq does not read, or that does not hold the Java
    /// value (a `BitSet`, which Jackson writes as a bean of its `empty`
    /// property; a JDK class written as its getters; a sorted collection
    /// whose order says it had a comparator): the message names the class.
    Unsupported,
    /// A value that cannot be written as Jackson would (encoding only): a
    /// `java.time` value without `JavaTimeModule`, a class Jackson writes
    /// as something Java cannot read back.
    Encode,
}

impl JacksonError {
    pub(crate) fn new(kind: JacksonErrorKind, offset: Option<usize>, message: impl Into<String>) -> Self {
        JacksonError {
            kind,
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        Self::new(JacksonErrorKind::Malformed, None, message)
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        Self::new(JacksonErrorKind::Unsupported, None, message)
    }

    pub(crate) fn encode(message: impl Into<String>) -> Self {
        Self::new(JacksonErrorKind::Encode, None, message)
    }

    /// The same error, said of the field `field` of a `class`.
    pub(crate) fn within(mut self, class: &str, field: &str) -> Self {
        self.message = format!("{class}.{field}: {}", self.message);
        self
    }

    /// The kind of error.
    ///
    /// ```
    /// use delayq_codec::jackson::{decode_value, JacksonErrorKind};
    /// let deep = "[".repeat(1000);
    /// assert_eq!(decode_value(deep.as_bytes(), None).unwrap_err().kind(), JacksonErrorKind::TooDeep);
    /// ```
    pub fn kind(&self) -> JacksonErrorKind {
        self.kind
    }

    /// The byte of the payload where the JSON went wrong, for JSON that is
    /// not JSON.
    ///
    /// ```
    /// assert_eq!(delayq_codec::jackson::decode_value(b"[1,]", None).unwrap_err().offset(), Some(3));
    /// ```
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// What went wrong.
    ///
    /// ```
    /// let e = delayq_codec::jackson::decode_value(br#"["java.lang.Long",1.5]"#, None).unwrap_err();
    /// assert!(e.message().contains("java.lang.Long"));
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for JacksonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            JacksonErrorKind::Malformed => "malformed Jackson JSON",
            JacksonErrorKind::TooDeep => "Jackson JSON nested too deep",
            JacksonErrorKind::TooLarge => "Jackson value too large",
            JacksonErrorKind::Unsupported => "unsupported Jackson value",
            JacksonErrorKind::Encode => "cannot write as Jackson",
        };
        write!(f, "{what}: {}", self.message)?;
        if let Some(at) = self.offset {
            write!(f, " (at byte {at})")?;
        }
        Ok(())
    }
}

impl std::error::Error for JacksonError {}
