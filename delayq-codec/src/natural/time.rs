//! `time` types ↔ `java.time` (feature `time`); see [`super`].

use ::time::{Date, Duration, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};
use serde::de::Error as _;
use serde::{Deserializer, Serializer};

use super::{de_time, duration_nanos, java_duration, ser_time, wrong};
use crate::kryo::JavaTime;
use crate::kryo::{LocalDate, LocalDateTime, LocalTime, ZoneOffset};

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
