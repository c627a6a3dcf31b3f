//! Rust types for Java classes serde has no type for: `UUID`, `Date`,
//! `Instant`, `BigDecimal`, `byte[]`. Each is a newtype named after its
//! Java class, which [`KryoCodec`](super::KryoCodec) recognises; other
//! serde formats see the plain inner value (a string, a number, bytes).

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::json::{instant_text, parse_instant, parse_uuid, uuid_text};

pub(crate) const UUID: &str = "java.util.UUID";
pub(crate) const DATE: &str = "java.util.Date";
pub(crate) const INSTANT: &str = "java.time.Instant";
pub(crate) const BIG_DECIMAL: &str = "java.math.BigDecimal";
pub(crate) const BIG_INTEGER: &str = "java.math.BigInteger";
pub(crate) const BYTES: &str = "[B";

/// A `java.util.UUID` (a `final` class: a field of this type has a null
/// marker, no class name). Other serde formats see its text.
///
/// ```
/// use delayq_codec::kryo::{to_vec, JavaUuid};
/// let id: JavaUuid = "123e4567-e89b-12d3-a456-426614174000".parse().unwrap();
/// assert_eq!(id.to_string(), "123e4567-e89b-12d3-a456-426614174000");
/// // 0x01 0x00, "java.util.UUID", the two longs.
/// assert_eq!(to_vec(&id).unwrap().len(), 2 + 14 + 16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct JavaUuid(pub u128);

impl fmt::Display for JavaUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&uuid_text(self.0))
    }
}

impl std::str::FromStr for JavaUuid {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_uuid(s).map(JavaUuid)
    }
}

impl Serialize for JavaUuid {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(UUID, &uuid_text(self.0))
    }
}

impl<'de> Deserialize<'de> for JavaUuid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = d.deserialize_newtype_struct(UUID, TextVisitor)?;
        parse_uuid(&text).map(JavaUuid).map_err(de::Error::custom)
    }
}

/// A `java.util.Date`: milliseconds since the Unix epoch.
///
/// ```
/// use delayq_codec::kryo::{to_vec, JavaDate};
/// let raw = to_vec(&JavaDate(1_795_400_000_000)).unwrap();
/// assert!(raw.ends_with(&[0x80, 0xc4, 0xb7, 0xb1, 0xa0, 0x34]));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct JavaDate(pub i64);

impl Serialize for JavaDate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(DATE, &self.0)
    }
}

impl<'de> Deserialize<'de> for JavaDate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = i64;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("milliseconds since the epoch")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
                Ok(v)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
                i64::try_from(v).map_err(E::custom)
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<i64, D::Error> {
                i64::deserialize(d)
            }
        }
        d.deserialize_newtype_struct(DATE, V).map(JavaDate)
    }
}

/// A `java.time.Instant` (a `final` class). Other serde formats see its
/// ISO-8601 text.
///
/// ```
/// use delayq_codec::kryo::JavaInstant;
/// let t: JavaInstant = "2026-11-23T02:13:20.123Z".parse().unwrap();
/// assert_eq!((t.seconds, t.nanos), (1_795_400_000, 123_000_000));
/// assert_eq!(t.to_string(), "2026-11-23T02:13:20.123Z");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct JavaInstant {
    /// Seconds since the Unix epoch.
    pub seconds: i64,
    /// Nanoseconds in the second.
    pub nanos: u32,
}

impl fmt::Display for JavaInstant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&instant_text(self.seconds, self.nanos))
    }
}

impl std::str::FromStr for JavaInstant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_instant(s).map(|(seconds, nanos)| JavaInstant { seconds, nanos })
    }
}

impl Serialize for JavaInstant {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(INSTANT, &self.to_string())
    }
}

impl<'de> Deserialize<'de> for JavaInstant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = d.deserialize_newtype_struct(INSTANT, TextVisitor)?;
        text.parse().map_err(de::Error::custom)
    }
}

/// A `java.math.BigDecimal`, held as its decimal text so that the scale
/// survives (`12.50` is not `12.5` to Java).
///
/// Kryo carries the unscaled value in binary: one of more than
/// [`MAX_DECIMAL_BITS`](super::MAX_DECIMAL_BITS) bits (39,457 digits) does
/// not decode to a `JavaBigDecimal`
/// ([`KryoErrorKind::TooLarge`](super::KryoErrorKind::TooLarge); a
/// [`KryoValue`](super::KryoValue) holds it) and does not encode from one.
///
/// ```
/// use delayq_codec::kryo::{from_slice, to_vec, JavaBigDecimal};
/// let price = JavaBigDecimal::new("12.50").unwrap();
/// let raw = to_vec(&price).unwrap();
/// assert!(raw.ends_with(&[0x03, 0x04, 0xe2, 0x04]));
/// assert_eq!(from_slice::<JavaBigDecimal>(&raw).unwrap().as_str(), "12.50");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JavaBigDecimal(String);

impl JavaBigDecimal {
    /// Checks and keeps the text (Java's `new BigDecimal(String)` syntax),
    /// as Java's `toString()` prints it.
    pub fn new(text: &str) -> Result<Self, String> {
        super::decimal::normalize(text).map(JavaBigDecimal)
    }

    /// The decimal text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Serialize for JavaBigDecimal {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(BIG_DECIMAL, &self.0)
    }
}

impl<'de> Deserialize<'de> for JavaBigDecimal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = d.deserialize_newtype_struct(BIG_DECIMAL, TextVisitor)?;
        JavaBigDecimal::new(&text).map_err(de::Error::custom)
    }
}

/// A Java `byte[]` (without it, a `Vec<u8>` is a `List<Byte>`).
///
/// ```
/// use delayq_codec::kryo::{to_vec, JavaBytes};
/// assert_eq!(to_vec(&JavaBytes(vec![1, 2, 0xff])).unwrap(), [0x01, 0x00, 0x5b, 0xc2, 0x04, 0x01, 0x02, 0xff]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct JavaBytes(pub Vec<u8>);

impl Serialize for JavaBytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Raw<'a>(&'a [u8]);
        impl Serialize for Raw<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        s.serialize_newtype_struct(BYTES, &Raw(&self.0))
    }
}

impl<'de> Deserialize<'de> for JavaBytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(out)
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Vec<u8>, D::Error> {
                d.deserialize_byte_buf(self)
            }
        }
        d.deserialize_newtype_struct(BYTES, V).map(JavaBytes)
    }
}

/// Text, directly or inside a newtype.
struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("text")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_string(self)
    }
}

/// Whether a serde newtype of this name carries the Java value's text
/// (`java.time` classes as their `toString()`, `BigInteger` in decimal):
/// the natural Rust types' mappings ([`crate::natural`]) write these.
pub(crate) fn is_text_newtype(name: &str) -> bool {
    name == BIG_INTEGER
        || (name != INSTANT && super::time::JavaTime::is_time_class(name) && super::class::is_final_jdk_class(name))
}
