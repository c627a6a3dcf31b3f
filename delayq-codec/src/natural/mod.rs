//! Natural Rust types for Java's values: `#[serde(with = ...)]` mappings so
//! a Rust struct field of a Rust date, duration or number type reads and
//! writes the Java class a Java POJO declares, in Kryo, Java serialization,
//! River and Jackson.
//!
//! | Java field | Rust field | mapping |
//! | --- | --- | --- |
//! | `Duration` | `std::time::Duration` | [`duration`] (a negative Java `Duration` is refused) |
//! | `LocalDateTime`, `LocalDate`, `LocalTime` | `chrono::NaiveDateTime`, `NaiveDate`, `NaiveTime` | `chrono::local_date_time`, `local_date`, `local_time` (feature `chrono`) |
//! | `OffsetDateTime` | `chrono::DateTime<FixedOffset>` | `chrono::offset_date_time` |
//! | `ZonedDateTime` (region zone, `Europe/Paris`) | `chrono::DateTime<chrono_tz::Tz>` | `chrono_tz::zoned_date_time` (feature `chrono-tz`; the region kept both ways, see below) |
//! | `ZonedDateTime` | `chrono::DateTime<FixedOffset>` | `chrono::zoned_date_time` (the offset only, see below) |
//! | `Duration` | `chrono::TimeDelta` | `chrono::duration` |
//! | `LocalDateTime`, `LocalDate`, `LocalTime` | `time::PrimitiveDateTime`, `Date`, `Time` | `time::local_date_time`, `local_date`, `local_time` (feature `time`) |
//! | `OffsetDateTime` | `time::OffsetDateTime` | `time::offset_date_time` |
//! | `ZonedDateTime` (offset zone, `+05:30`) | `time::OffsetDateTime` | `time::zoned_date_time` (a region zone refused: `time` has no zone database) |
//! | `Duration` | `time::Duration` | `time::duration` |
//! | `BigDecimal` | `bigdecimal::BigDecimal` | `bigdecimal::big_decimal` (feature `bigdecimal`; scale kept) |
//! | `BigDecimal` | `rust_decimal::Decimal` | `rust_decimal::big_decimal` (feature `rust_decimal`; scale kept, a negative scale or more than 28 digits refused) |
//! | `BigInteger` | `num_bigint::BigInt` | `num_bigint::big_integer` (feature `num-bigint`) |
//!
//! Each mapping has an `option` module for an `Option` field (with
//! `#[serde(default)]`): a Java field that is null reads as `None`, and
//! `None` writes a null (`chrono::local_date_time::option`,
//! `bigdecimal::big_decimal::option`, ...).
//!
//! Each mapping writes a serde newtype named after the Java class holding
//! the value's Java text (`toString()`: ISO-8601 for `java.time`, exact
//! decimals), which the codecs turn into the Java object; other serde
//! formats (JSON) see that text. Jackson writes what Redisson's
//! `JsonJacksonCodec` writes for the class: a `java.time` value in
//! `JavaTimeModule`'s form with
//! [`Dialect::JavaTimeModule`](crate::jackson::Dialect) (`[2026,11,23]`,
//! `5400.500000000`), refused in the plain dialect as Java's plain Jackson
//! refuses it; a decimal as its digits (`["java.math.BigDecimal",2.50]`).
//! An `OffsetDateTime` or `ZonedDateTime` not at UTC is refused there:
//! `JavaTimeModule` writes its instant, and Java reads it back at UTC.
//!
//! A `ZonedDateTime` carries its zone's offset in Java serialization and
//! River, not in Kryo (Java computes it from its zone database). Three
//! mappings, by what the Rust field holds:
//!
//! - `chrono_tz::zoned_date_time` (feature `chrono-tz`):
//!   `DateTime<chrono_tz::Tz>` keeps the region both ways (`Europe/Paris`
//!   reads as `Europe/Paris` and is written as it; Java reads it back
//!   equal in Kryo, serialization and River). From Kryo, chrono-tz's zone
//!   database gives the offset Java's `ZonedDateTime.of` would: a gap's
//!   local time moved later by the gap, the earlier offset of an overlap
//!   (the later one is not in Kryo's bytes, so Java itself reads it back as
//!   the earlier). An offset zone, and a region chrono-tz does not know
//!   (named in the error), are refused.
//! - `chrono::zoned_date_time`: `DateTime<FixedOffset>` reads the offset
//!   (a region zone's offset from serialization or River; from Kryo, which
//!   has none, a typed error) and writes a `ZonedDateTime` in its offset's
//!   zone: a region read this way is not written back.
//! - `time::zoned_date_time`: `time::OffsetDateTime` for offset zones
//!   both ways; a region zone is refused with an error that names the
//!   chrono-tz mapping, as `time` has no zone database.
//!
//! In Jackson a region cannot pass (`JavaTimeModule` writes the instant,
//! Java reads it back at UTC): writing one is a typed error, and Java's
//! value (at `Z`) reads with the offset mappings.
//!
//! ```
//! use std::time::Duration;
//! use delayq_codec::kryo::{from_slice, to_vec};
//!
//! #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
//! #[serde(rename = "com.shop.Job")]
//! struct Job {
//!     #[serde(with = "delayq_codec::natural::duration")]
//!     timeout: Duration,
//!     // A Java field that may be null.
//!     #[serde(with = "delayq_codec::natural::duration::option", default)]
//!     grace: Option<Duration>,
//! }
//! let job = Job { timeout: Duration::from_millis(1500), grace: None };
//! let raw = to_vec(&job).unwrap();
//! assert_eq!(from_slice::<Job>(&raw).unwrap(), job);
//! // In JSON: Java's text, and null.
//! assert_eq!(serde_json::to_string(&job).unwrap(), r#"{"timeout":"PT1.5S","grace":null}"#);
//! ```

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;

use crate::kryo::JavaTime;

/// The `option` module of a mapping: the same for an `Option`, a null
/// Java field read as `None` and `None` written as a null.
macro_rules! option_of {
    ($t:ty) => {
        /// The same for an `Option` field (give it `#[serde(default)]` too):
        /// Java's null reads as `None`, and `None` writes a null.
        pub mod option {
            use super::*;

            struct Value<'a>(&'a $t);

            impl serde::Serialize for Value<'_> {
                fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    super::serialize(self.0, s)
                }
            }

            struct Read($t);

            impl<'de> serde::Deserialize<'de> for Read {
                fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                    super::deserialize(d).map(Read)
                }
            }

            /// Writes the value, or a null.
            pub fn serialize<S: Serializer>(v: &Option<$t>, s: S) -> Result<S::Ok, S::Error> {
                match v {
                    Some(v) => s.serialize_some(&Value(v)),
                    None => s.serialize_none(),
                }
            }

            /// Reads the value, or `None` for a null.
            pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<$t>, D::Error> {
                Ok(<Option<Read> as serde::Deserialize>::deserialize(d)?.map(|Read(v)| v))
            }
        }
    };
}
pub(crate) use option_of;

#[cfg(feature = "bigdecimal")]
pub mod bigdecimal;
#[cfg(feature = "chrono")]
pub mod chrono;
#[cfg(feature = "chrono-tz")]
pub mod chrono_tz;
#[cfg(feature = "num-bigint")]
pub mod num_bigint;
#[cfg(feature = "rust_decimal")]
pub mod rust_decimal;
#[cfg(feature = "time")]
pub mod time;

/// Writes a Java value as its class's newtype around its text.
pub(crate) fn ser_text<S: Serializer>(s: S, class: &'static str, text: &str) -> Result<S::Ok, S::Error> {
    s.serialize_newtype_struct(class, text)
}

pub(crate) fn ser_time<S: Serializer>(s: S, time: &JavaTime) -> Result<S::Ok, S::Error> {
    ser_text(s, time.java_class(), &time.to_string())
}

/// Reads the text of a Java value of `class` (a number as its digits).
pub(crate) fn de_text<'de, D: Deserializer<'de>>(d: D, class: &'static str) -> Result<String, D::Error> {
    d.deserialize_newtype_struct(class, Text)
}

/// Reads a `java.time` value of `class`.
pub(crate) fn de_time<'de, D: Deserializer<'de>>(d: D, class: &'static str) -> Result<JavaTime, D::Error> {
    let text = de_text(d, class)?;
    JavaTime::parse(class, &text).map_err(de::Error::custom)
}

struct Text;

impl<'de> Visitor<'de> for Text {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Java value's text")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

/// A Java `Duration` from seconds and nanoseconds of any sign (Java's
/// form: whole seconds rounded down, nanoseconds 0..1e9).
pub(crate) fn java_duration(total_nanos: i128) -> JavaTime {
    let billion = 1_000_000_000i128;
    JavaTime::Duration {
        seconds: total_nanos.div_euclid(billion) as i64,
        nanos: total_nanos.rem_euclid(billion) as u32,
    }
}

pub(crate) fn duration_nanos(time: &JavaTime) -> Option<i128> {
    match time {
        JavaTime::Duration { seconds, nanos } => Some(i128::from(*seconds) * 1_000_000_000 + i128::from(*nanos)),
        _ => None,
    }
}

pub(crate) fn wrong<E: de::Error>(time: &JavaTime, want: &str) -> E {
    E::custom(format!("a {} ({time}), not a {want}", time.java_class()))
}

/// `std::time::Duration` ↔ `java.time.Duration` (a negative one is refused).
pub mod duration {
    use std::time::Duration;

    use serde::de::Error as _;
    use serde::{Deserializer, Serializer};

    use super::*;

    /// Writes a `java.time.Duration`.
    pub fn serialize<S: Serializer>(v: &Duration, s: S) -> Result<S::Ok, S::Error> {
        ser_time(s, &java_duration(v.as_nanos() as i128))
    }

    /// Reads a `java.time.Duration`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let t = de_time(d, "java.time.Duration")?;
        let nanos = duration_nanos(&t).ok_or_else(|| wrong(&t, "Duration"))?;
        let nanos = u128::try_from(nanos)
            .map_err(|_| D::Error::custom(format!("a negative java.time.Duration ({t}) in a std::time::Duration")))?;
        Ok(Duration::new(
            (nanos / 1_000_000_000) as u64,
            (nanos % 1_000_000_000) as u32,
        ))
    }

    crate::natural::option_of!(Duration);
}

/// Decimal text of an unscaled integer (its digits, with a sign) and a
/// scale, as Java's `BigDecimal(String)` reads it back with that scale.
#[cfg(any(feature = "bigdecimal", feature = "rust_decimal"))]
pub(crate) fn decimal_text(digits: &str, scale: i64) -> String {
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d),
        None => ("", digits),
    };
    if scale <= 0 {
        return if scale == 0 {
            format!("{sign}{digits}")
        } else {
            format!("{sign}{digits}E+{}", -scale)
        };
    }
    let scale = scale as usize;
    if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        format!("{sign}{int}.{frac}")
    } else {
        format!("{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
    }
}
