//! `chrono` types ↔ `java.time` (feature `chrono`); see [`super`].

use ::chrono::{DateTime, Datelike, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, TimeZone, Timelike};
use serde::de::Error as _;
use serde::{Deserializer, Serializer};

use super::{de_time, java_duration, ser_time, wrong};
use crate::kryo::JavaTime;
use crate::kryo::{LocalDate, LocalDateTime, LocalTime, ZoneId, ZoneOffset};

fn date(v: &NaiveDate) -> LocalDate {
    LocalDate {
        year: v.year(),
        month: v.month() as u8,
        day: v.day() as u8,
    }
}

fn time(v: &NaiveTime) -> Result<LocalTime, String> {
    if v.nanosecond() >= 1_000_000_000 {
        return Err(format!("{v}: a leap second, which java.time has not"));
    }
    Ok(LocalTime {
        hour: v.hour() as u8,
        minute: v.minute() as u8,
        second: v.second() as u8,
        nano: v.nanosecond(),
    })
}

pub(super) fn date_time(v: &NaiveDateTime) -> Result<LocalDateTime, String> {
    Ok(LocalDateTime {
        date: date(&v.date()),
        time: time(&v.time())?,
    })
}

fn naive_date(d: LocalDate) -> Result<NaiveDate, String> {
    NaiveDate::from_ymd_opt(d.year, d.month.into(), d.day.into()).ok_or_else(|| format!("{d:?} is past chrono's dates"))
}

fn naive_time(t: LocalTime) -> Result<NaiveTime, String> {
    NaiveTime::from_hms_nano_opt(t.hour.into(), t.minute.into(), t.second.into(), t.nano)
        .ok_or_else(|| format!("{t:?} is no time of day"))
}

pub(super) fn naive(dt: LocalDateTime) -> Result<NaiveDateTime, String> {
    Ok(naive_date(dt.date)?.and_time(naive_time(dt.time)?))
}

fn with_offset(dt: LocalDateTime, offset: ZoneOffset) -> Result<DateTime<FixedOffset>, String> {
    let zone = FixedOffset::east_opt(offset.0).ok_or_else(|| format!("offset {}s", offset.0))?;
    zone.from_local_datetime(&naive(dt)?)
        .single()
        .ok_or_else(|| "a date-time past chrono's range".to_owned())
}

/// `NaiveDateTime` ↔ `java.time.LocalDateTime`.
pub mod local_date_time {
    use super::*;

    /// Writes a `java.time.LocalDateTime`.
    pub fn serialize<S: Serializer>(v: &NaiveDateTime, s: S) -> Result<S::Ok, S::Error> {
        ser_time(
            s,
            &JavaTime::LocalDateTime(date_time(v).map_err(serde::ser::Error::custom)?),
        )
    }

    /// Reads a `java.time.LocalDateTime`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<NaiveDateTime, D::Error> {
        match de_time(d, "java.time.LocalDateTime")? {
            JavaTime::LocalDateTime(dt) => naive(dt).map_err(D::Error::custom),
            other => Err(wrong(&other, "LocalDateTime")),
        }
    }

    crate::natural::option_of!(NaiveDateTime);
}

/// `NaiveDate` ↔ `java.time.LocalDate`.
pub mod local_date {
    use super::*;

    /// Writes a `java.time.LocalDate`.
    pub fn serialize<S: Serializer>(v: &NaiveDate, s: S) -> Result<S::Ok, S::Error> {
        ser_time(s, &JavaTime::LocalDate(date(v)))
    }

    /// Reads a `java.time.LocalDate`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<NaiveDate, D::Error> {
        match de_time(d, "java.time.LocalDate")? {
            JavaTime::LocalDate(v) => naive_date(v).map_err(D::Error::custom),
            other => Err(wrong(&other, "LocalDate")),
        }
    }

    crate::natural::option_of!(NaiveDate);
}

/// `NaiveTime` ↔ `java.time.LocalTime`.
pub mod local_time {
    use super::*;

    /// Writes a `java.time.LocalTime`.
    pub fn serialize<S: Serializer>(v: &NaiveTime, s: S) -> Result<S::Ok, S::Error> {
        ser_time(s, &JavaTime::LocalTime(time(v).map_err(serde::ser::Error::custom)?))
    }

    /// Reads a `java.time.LocalTime`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<NaiveTime, D::Error> {
        match de_time(d, "java.time.LocalTime")? {
            JavaTime::LocalTime(v) => naive_time(v).map_err(D::Error::custom),
            other => Err(wrong(&other, "LocalTime")),
        }
    }

    crate::natural::option_of!(NaiveTime);
}

fn offset_parts(v: &DateTime<FixedOffset>) -> Result<(LocalDateTime, ZoneOffset), String> {
    Ok((date_time(&v.naive_local())?, ZoneOffset(v.offset().local_minus_utc())))
}

/// `DateTime<FixedOffset>` ↔ `java.time.OffsetDateTime`.
pub mod offset_date_time {
    use super::*;

    /// Writes a `java.time.OffsetDateTime`.
    pub fn serialize<S: Serializer>(v: &DateTime<FixedOffset>, s: S) -> Result<S::Ok, S::Error> {
        let (dt, offset) = offset_parts(v).map_err(serde::ser::Error::custom)?;
        ser_time(s, &JavaTime::OffsetDateTime(dt, offset))
    }

    /// Reads a `java.time.OffsetDateTime`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<FixedOffset>, D::Error> {
        match de_time(d, "java.time.OffsetDateTime")? {
            JavaTime::OffsetDateTime(dt, offset) => with_offset(dt, offset).map_err(D::Error::custom),
            other => Err(wrong(&other, "OffsetDateTime")),
        }
    }

    crate::natural::option_of!(DateTime<FixedOffset>);
}

/// `DateTime<FixedOffset>` ↔ `java.time.ZonedDateTime`: read with the
/// offset the value carries (Kryo carries none for a region zone: a typed
/// error naming the chrono-tz mapping), written in its offset's zone; a
/// region read this way is not written back (the chrono-tz mapping keeps
/// it).
pub mod zoned_date_time {
    use super::*;

    /// Writes a `java.time.ZonedDateTime` whose zone is its offset.
    pub fn serialize<S: Serializer>(v: &DateTime<FixedOffset>, s: S) -> Result<S::Ok, S::Error> {
        let (dt, offset) = offset_parts(v).map_err(serde::ser::Error::custom)?;
        ser_time(s, &JavaTime::ZonedDateTime(dt, Some(offset), ZoneId::Offset(offset)))
    }

    /// Reads a `java.time.ZonedDateTime` at its offset.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<FixedOffset>, D::Error> {
        match de_time(d, "java.time.ZonedDateTime")? {
            JavaTime::ZonedDateTime(dt, Some(offset), _) => with_offset(dt, offset).map_err(D::Error::custom),
            other @ JavaTime::ZonedDateTime(..) => Err(D::Error::custom(format!(
                "{other}: a ZonedDateTime without its offset (Kryo writes none for a region zone); map the field \
                 to chrono::DateTime<chrono_tz::Tz> with delayq_codec::natural::chrono_tz::zoned_date_time \
                 (feature chrono-tz), which computes it"
            ))),
            other => Err(wrong(&other, "ZonedDateTime")),
        }
    }

    crate::natural::option_of!(DateTime<FixedOffset>);
}

/// `TimeDelta` (`chrono::Duration`) ↔ `java.time.Duration`.
pub mod duration {
    use super::*;

    /// Writes a `java.time.Duration`.
    pub fn serialize<S: Serializer>(v: &TimeDelta, s: S) -> Result<S::Ok, S::Error> {
        let nanos = i128::from(v.num_seconds()) * 1_000_000_000 + i128::from(v.subsec_nanos());
        ser_time(s, &java_duration(nanos))
    }

    /// Reads a `java.time.Duration`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TimeDelta, D::Error> {
        let t = de_time(d, "java.time.Duration")?;
        match t {
            JavaTime::Duration { seconds, nanos } => TimeDelta::new(seconds, nanos)
                .ok_or_else(|| D::Error::custom(format!("{t}: past chrono::TimeDelta's range"))),
            other => Err(wrong(&other, "Duration")),
        }
    }

    crate::natural::option_of!(TimeDelta);
}
