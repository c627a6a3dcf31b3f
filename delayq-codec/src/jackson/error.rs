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
    /// Where in the value (`items[2].price`), for errors of the serde path.
    path: String,
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
    /// not an integer, a date that is not a date), or (serde path) JSON
    /// that does not fit the Rust type (a string for a number, a missing
    /// field).
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
    /// A number the Rust type cannot hold exactly (serde path only): a
    /// `BigInteger` past 64 bits into a `serde_json::Value`, a decimal with
    /// more digits than a double holds into an `f64`. Read it into a
    /// `String` (its text), a wide enough integer, or with
    /// [`decode_value`](super::decode_value).
    Inexact,
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
            path: String::new(),
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

    /// The same error, inside the property or element `segment` (a name,
    /// or `[index]`) of the value around it.
    pub(crate) fn in_path(mut self, segment: &str) -> Self {
        self.path = if self.path.is_empty() || self.path.starts_with('[') {
            format!("{segment}{}", self.path)
        } else {
            format!("{segment}.{}", self.path)
        };
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

    /// Where in the value the error is, as a path of property names and
    /// indexes (`items[2].price`), when a [`JacksonCodec`](super::JacksonCodec)
    /// read it into a Rust type; empty for the payload itself or when the
    /// place is not known.
    ///
    /// ```
    /// use delayq_codec::jackson::{from_slice, JacksonErrorKind};
    ///
    /// #[derive(serde::Deserialize, Debug)]
    /// struct Price { amount: f64 }
    ///
    /// let e = from_slice::<Vec<Price>>(br#"[{"amount":1.5},{"amount":9007199254740993}]"#).unwrap_err();
    /// assert_eq!(e.kind(), JacksonErrorKind::Inexact);
    /// assert_eq!(e.path(), "[1].amount");
    /// ```
    pub fn path(&self) -> &str {
        &self.path
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
            JacksonErrorKind::Inexact => "Jackson number not held exactly",
            JacksonErrorKind::Encode => "cannot write as Jackson",
        };
        write!(f, "{what}: ")?;
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        f.write_str(&self.message)?;
        if let Some(at) = self.offset {
            write!(f, " (at byte {at})")?;
        }
        Ok(())
    }
}

impl std::error::Error for JacksonError {}
