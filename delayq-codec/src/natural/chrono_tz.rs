//! `chrono::DateTime<chrono_tz::Tz>` ↔ `java.time.ZonedDateTime` in a
//! region zone (feature `chrono-tz`); see [`super`].

use ::chrono::{DateTime, Offset, TimeDelta, TimeZone};
use ::chrono_tz::Tz;
use serde::de::Error as _;
use serde::{Deserializer, Serializer};

use super::chrono::{date_time, naive};
use super::{de_time, ser_time, wrong};
use crate::kryo::JavaTime;
use crate::kryo::{LocalDateTime, ZoneId, ZoneOffset};

/// The value Java holds for a local date-time in a region: at `offset`
/// when the bytes carry one (Java serialization and River), which must be
/// one the zone gives that local time; without one (Kryo), as
/// `ZonedDateTime.of` computes it: the earlier offset in an overlap, and
/// in a gap the local time moved later by the gap's length.
fn zoned(dt: LocalDateTime, offset: Option<ZoneOffset>, region: &str) -> Result<DateTime<Tz>, String> {
    let tz: Tz = region
        .parse()
        .map_err(|_| format!("the zone region {region:?} is not in chrono-tz's zone database"))?;
    let local = naive(dt)?;
    let candidates = tz.from_local_datetime(&local);
    match offset {
        Some(offset) => candidates
            .earliest()
            .into_iter()
            .chain(candidates.latest())
            .find(|c| c.offset().fix().local_minus_utc() == offset.0)
            .ok_or_else(|| {
                format!(
                    "{local} at {offset} in {region}: chrono-tz's zone database gives that local time no such \
                     offset"
                )
            }),
        None => match candidates.earliest() {
            Some(earlier) => Ok(earlier),
            None => {
                // A gap: the instant is the local time at the offset before
                // the transition, which is in force 18 hours (java.time's
                // largest offset) before the local time read as UTC.
                let probe = local - TimeDelta::hours(18);
                let before = tz.offset_from_utc_datetime(&probe).fix();
                let instant = local - TimeDelta::seconds(before.local_minus_utc().into());
                Ok(tz.from_utc_datetime(&instant))
            }
        },
    }
}

/// `DateTime<chrono_tz::Tz>` ↔ `java.time.ZonedDateTime`, the region kept
/// both ways (`Europe/Paris` stays `Europe/Paris`).
///
/// Read: a `ZonedDateTime` in a region zone chrono-tz knows, at the offset
/// the bytes carry (Java serialization, River) or, from Kryo (which writes
/// none), the offset Java's `ZonedDateTime.of` computes. A region chrono-tz
/// does not know (`GMT+02:00`) is an error naming it; an offset zone
/// (`+01:00`, `Z`, and every `ZonedDateTime` of Jackson's `JavaTimeModule`,
/// which writes only the instant) is an error too: map such a field with
/// [`chrono::zoned_date_time`](super::chrono::zoned_date_time).
///
/// The offsets are chrono-tz's copy of the IANA database: where a zone's
/// rules changed between it and the JVM's copy, a carried offset it does
/// not give is refused, and one computed for Kryo follows it.
///
/// Written: the local date-time, its offset and its region; Jackson refuses
/// it (typed error), as `JavaTimeModule` writes only the instant and Java
/// reads it back at UTC.
///
/// ```
/// use chrono::TimeZone;
/// use delayq_codec::kryo::{from_slice, to_vec};
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// #[serde(rename = "com.shop.Meeting")]
/// struct Meeting {
///     #[serde(with = "delayq_codec::natural::chrono_tz::zoned_date_time")]
///     at: chrono::DateTime<chrono_tz::Tz>,
/// }
/// let at = chrono_tz::Europe::Paris.with_ymd_and_hms(2026, 11, 23, 9, 30, 0).unwrap();
/// let meeting = Meeting { at };
/// let back: Meeting = from_slice(&to_vec(&meeting).unwrap()).unwrap();
/// assert_eq!(back.at.timezone(), chrono_tz::Europe::Paris);
/// assert_eq!(back, meeting);
/// // In JSON: Java's text.
/// assert_eq!(
///     serde_json::to_string(&meeting).unwrap(),
///     r#"{"at":"2026-11-23T09:30+01:00[Europe/Paris]"}"#
/// );
/// ```
pub mod zoned_date_time {
    use super::*;

    /// Writes a `java.time.ZonedDateTime` in the value's region.
    pub fn serialize<S: Serializer>(v: &DateTime<Tz>, s: S) -> Result<S::Ok, S::Error> {
        let dt = date_time(&v.naive_local()).map_err(serde::ser::Error::custom)?;
        let offset = ZoneOffset(v.offset().fix().local_minus_utc());
        let zone = ZoneId::Region(v.timezone().name().to_owned());
        ser_time(s, &JavaTime::ZonedDateTime(dt, Some(offset), zone))
    }

    /// Reads a `java.time.ZonedDateTime` in a region zone.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Tz>, D::Error> {
        match de_time(d, "java.time.ZonedDateTime")? {
            JavaTime::ZonedDateTime(dt, offset, ZoneId::Region(region)) => {
                zoned(dt, offset, &region).map_err(D::Error::custom)
            }
            other @ JavaTime::ZonedDateTime(..) => Err(D::Error::custom(format!(
                "{other}: a ZonedDateTime in an offset zone, which chrono_tz::Tz (regions only) does not hold; \
                 map the field with delayq_codec::natural::chrono::zoned_date_time (DateTime<FixedOffset>)"
            ))),
            other => Err(wrong(&other, "ZonedDateTime")),
        }
    }

    crate::natural::option_of!(DateTime<Tz>);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn java_text(v: &DateTime<Tz>) -> String {
        let offset = ZoneOffset(v.offset().fix().local_minus_utc());
        let zone = ZoneId::Region(v.timezone().name().to_owned());
        JavaTime::ZonedDateTime(date_time(&v.naive_local()).unwrap(), Some(offset), zone).to_string()
    }

    /// Without an offset (Kryo), the value `ZonedDateTime.of` gives: Java's
    /// output in jshell, for gaps of 30 minutes, one hour and a whole day
    /// (Samoa skipped 2011-12-30) and an overlap of 30 minutes.
    #[test]
    fn without_an_offset_the_value_is_zoned_date_time_of() {
        for (local, region, java) in [
            (
                "2026-10-04T02:15",
                "Australia/Lord_Howe",
                "2026-10-04T02:45+11:00[Australia/Lord_Howe]",
            ),
            (
                "2026-03-08T02:30",
                "America/New_York",
                "2026-03-08T03:30-04:00[America/New_York]",
            ),
            (
                "2011-12-30T12:00",
                "Pacific/Apia",
                "2011-12-31T12:00+14:00[Pacific/Apia]",
            ),
            (
                "2026-04-05T01:45",
                "Australia/Lord_Howe",
                "2026-04-05T01:45+11:00[Australia/Lord_Howe]",
            ),
        ] {
            let got = zoned(local.parse().unwrap(), None, region).unwrap();
            assert_eq!(java_text(&got), java, "{local} {region}");
        }
    }
}
