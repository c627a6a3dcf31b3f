//! `time` types ↔ `java.time` (feature `time`); see [`super`].

use ::time::{Date, Duration, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};
use serde::de::Error as _;
use serde::{Deserializer, Serializer};

use super::{de_time, duration_nanos, java_duration, ser_time, wrong};
use crate::kryo::JavaTime;
use crate::kryo::{LocalDate, LocalDateTime, LocalTime, ZoneId, ZoneOffset};

fn date(v: &Date) -> LocalDate {
    LocalDate {
        year: v.year(),
        month: u8::from(v.month()),
        day: v.day(),
    }
}

fn time(v: &Time) -> LocalTime {
    LocalTime {
        hour: v.hour(),
        minute: v.minute(),
        second: v.second(),
        nano: v.nanosecond(),
    }
}

fn to_date(d: LocalDate) -> Result<Date, String> {
    let month = Month::try_from(d.month).map_err(|e| e.to_string())?;
    Date::from_calendar_date(d.year, month, d.day).map_err(|e| format!("{d:?}: {e}"))
}

fn to_time(t: LocalTime) -> Result<Time, String> {
    Time::from_hms_nano(t.hour, t.minute, t.second, t.nano).map_err(|e| format!("{t:?}: {e}"))
}

fn to_primitive(dt: LocalDateTime) -> Result<PrimitiveDateTime, String> {
    Ok(PrimitiveDateTime::new(to_date(dt.date)?, to_time(dt.time)?))
}

/// `PrimitiveDateTime` ↔ `java.time.LocalDateTime`.
pub mod local_date_time {
    use super::*;

    /// Writes a `java.time.LocalDateTime`.
    pub fn serialize<S: Serializer>(v: &PrimitiveDateTime, s: S) -> Result<S::Ok, S::Error> {
        let dt = LocalDateTime {
            date: date(&v.date()),
            time: time(&v.time()),
        };
        ser_time(s, &JavaTime::LocalDateTime(dt))
    }

    /// Reads a `java.time.LocalDateTime`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PrimitiveDateTime, D::Error> {
        match de_time(d, "java.time.LocalDateTime")? {
            JavaTime::LocalDateTime(dt) => to_primitive(dt).map_err(D::Error::custom),
            other => Err(wrong(&other, "LocalDateTime")),
        }
    }

    crate::natural::option_of!(PrimitiveDateTime);
}

/// `Date` ↔ `java.time.LocalDate`.
pub mod local_date {
    use super::*;

    /// Writes a `java.time.LocalDate`.
    pub fn serialize<S: Serializer>(v: &Date, s: S) -> Result<S::Ok, S::Error> {
        ser_time(s, &JavaTime::LocalDate(date(v)))
    }

    /// Reads a `java.time.LocalDate`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Date, D::Error> {
        match de_time(d, "java.time.LocalDate")? {
            JavaTime::LocalDate(v) => to_date(v).map_err(D::Error::custom),
            other => Err(wrong(&other, "LocalDate")),
        }
    }

    crate::natural::option_of!(Date);
}

/// `Time` ↔ `java.time.LocalTime`.
pub mod local_time {
    use super::*;

    /// Writes a `java.time.LocalTime`.
    pub fn serialize<S: Serializer>(v: &Time, s: S) -> Result<S::Ok, S::Error> {
        ser_time(s, &JavaTime::LocalTime(time(v)))
    }

    /// Reads a `java.time.LocalTime`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        match de_time(d, "java.time.LocalTime")? {
            JavaTime::LocalTime(v) => to_time(v).map_err(D::Error::custom),
            other => Err(wrong(&other, "LocalTime")),
        }
    }

    crate::natural::option_of!(Time);
}

/// `OffsetDateTime` ↔ `java.time.OffsetDateTime`.
pub mod offset_date_time {
    use super::*;

    /// Writes a `java.time.OffsetDateTime`.
    pub fn serialize<S: Serializer>(v: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
        let dt = LocalDateTime {
            date: date(&v.date()),
            time: time(&v.time()),
        };
        ser_time(s, &JavaTime::OffsetDateTime(dt, ZoneOffset(v.offset().whole_seconds())))
    }

    /// Reads a `java.time.OffsetDateTime`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OffsetDateTime, D::Error> {
        match de_time(d, "java.time.OffsetDateTime")? {
            JavaTime::OffsetDateTime(dt, offset) => {
                let offset = UtcOffset::from_whole_seconds(offset.0).map_err(D::Error::custom)?;
                Ok(to_primitive(dt).map_err(D::Error::custom)?.assume_offset(offset))
            }
            other => Err(wrong(&other, "OffsetDateTime")),
        }
    }

    crate::natural::option_of!(OffsetDateTime);
}

/// `OffsetDateTime` ↔ `java.time.ZonedDateTime` in an offset zone
/// (`ZoneOffset`: `+05:30`, `Z`).
///
/// The `time` crate has no zone database, so a `ZonedDateTime` in a
/// region zone (`Europe/Paris`) is refused with an error that says so:
/// map such a field to `chrono::DateTime<chrono_tz::Tz>` with
/// `delayq_codec::natural::chrono_tz::zoned_date_time` (feature `chrono-tz`),
/// which keeps the region. Written: a `ZonedDateTime` in its offset's zone.
///
/// ```
/// use delayq_codec::kryo::{from_slice, to_vec};
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// #[serde(rename = "com.shop.Call")]
/// struct Call {
///     #[serde(with = "delayq_codec::natural::time::zoned_date_time")]
///     at: time::OffsetDateTime,
/// }
/// let at = time::Date::from_calendar_date(2026, time::Month::November, 23)
///     .unwrap()
///     .with_hms(9, 30, 0)
///     .unwrap()
///     .assume_offset(time::UtcOffset::from_hms(5, 30, 0).unwrap());
/// let call = Call { at };
/// assert_eq!(from_slice::<Call>(&to_vec(&call).unwrap()).unwrap(), call);
/// assert_eq!(serde_json::to_string(&call).unwrap(), r#"{"at":"2026-11-23T09:30+05:30"}"#);
/// ```
pub mod zoned_date_time {
    use super::*;

    /// Writes a `java.time.ZonedDateTime` whose zone is its offset.
    pub fn serialize<S: Serializer>(v: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
        let dt = LocalDateTime {
            date: date(&v.date()),
            time: time(&v.time()),
        };
        let offset = ZoneOffset(v.offset().whole_seconds());
        ser_time(s, &JavaTime::ZonedDateTime(dt, Some(offset), ZoneId::Offset(offset)))
    }

    /// Reads a `java.time.ZonedDateTime` in an offset zone; a region zone
    /// is an error.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OffsetDateTime, D::Error> {
        match de_time(d, "java.time.ZonedDateTime")? {
            // In an offset zone the offset is the zone's.
            JavaTime::ZonedDateTime(dt, _, ZoneId::Offset(zone)) => {
                let offset = UtcOffset::from_whole_seconds(zone.0).map_err(D::Error::custom)?;
                Ok(to_primitive(dt).map_err(D::Error::custom)?.assume_offset(offset))
            }
            other @ JavaTime::ZonedDateTime(..) => Err(D::Error::custom(format!(
                "{other}: a ZonedDateTime in a region zone, which time::OffsetDateTime (no zone database) \
                 cannot keep; map the field to chrono::DateTime<chrono_tz::Tz> with \
                 delayq_codec::natural::chrono_tz::zoned_date_time (feature chrono-tz)"
            ))),
            other => Err(wrong(&other, "ZonedDateTime")),
        }
    }

    crate::natural::option_of!(OffsetDateTime);
}

/// `time::Duration` ↔ `java.time.Duration`.
pub mod duration {
    use super::*;

    /// Writes a `java.time.Duration`.
    pub fn serialize<S: Serializer>(v: &Duration, s: S) -> Result<S::Ok, S::Error> {
        let nanos = i128::from(v.whole_seconds()) * 1_000_000_000 + i128::from(v.subsec_nanoseconds());
        ser_time(s, &java_duration(nanos))
    }

    /// Reads a `java.time.Duration`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let t = de_time(d, "java.time.Duration")?;
        let nanos = duration_nanos(&t).ok_or_else(|| wrong(&t, "Duration"))?;
        let seconds = nanos / 1_000_000_000;
        let rest = (nanos % 1_000_000_000) as i32;
        Ok(Duration::new(seconds as i64, rest))
    }

    crate::natural::option_of!(Duration);
}
