//! [`JavaTime`]: the `java.time` values (and `java.sql`'s dates) as their
//! fields, the same whichever codec carried them, with Java's `toString()`
//! text both ways.

use std::fmt;

/// A `java.time.LocalDate`: a year (proleptic, may be negative), a month
/// (1-12) and a day of the month.
///
/// ```
/// use delayq_codec::kryo::LocalDate;
/// let d: LocalDate = "2026-11-23".parse().unwrap();
/// assert_eq!((d.year, d.month, d.day), (2026, 11, 23));
/// assert_eq!(LocalDate { year: -44, month: 3, day: 15 }.to_string(), "-0044-03-15");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalDate {
    /// The year (`-999999999` to `999999999`).
    pub year: i32,
    /// The month, 1 to 12.
    pub month: u8,
    /// The day of the month, 1 to 31.
    pub day: u8,
}

/// A `java.time.LocalTime`.
///
/// ```
/// use delayq_codec::kryo::LocalTime;
/// let t: LocalTime = "02:13:20.123456789".parse().unwrap();
/// assert_eq!(t.nano, 123_456_789);
/// assert_eq!(LocalTime { hour: 10, minute: 15, second: 0, nano: 0 }.to_string(), "10:15");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalTime {
    /// 0 to 23.
    pub hour: u8,
    /// 0 to 59.
    pub minute: u8,
    /// 0 to 59.
    pub second: u8,
    /// 0 to 999,999,999.
    pub nano: u32,
}

/// A `java.time.LocalDateTime`.
///
/// ```
/// use delayq_codec::kryo::LocalDateTime;
/// let t: LocalDateTime = "2026-11-23T02:13:20.5".parse().unwrap();
/// assert_eq!(t.to_string(), "2026-11-23T02:13:20.500");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalDateTime {
    /// The date.
    pub date: LocalDate,
    /// The time of day.
    pub time: LocalTime,
}

/// A `java.time.ZoneOffset`: seconds east of UTC (-18:00 to +18:00).
///
/// ```
/// use delayq_codec::kryo::ZoneOffset;
/// assert_eq!(ZoneOffset(19_800).to_string(), "+05:30");
/// assert_eq!(ZoneOffset(0).to_string(), "Z");
/// assert_eq!("-08:00".parse::<ZoneOffset>().unwrap(), ZoneOffset(-28_800));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ZoneOffset(pub i32);

/// The zone of a `java.time.ZonedDateTime`: a fixed offset or a region of
/// the time-zone database (`Europe/Paris`).
///
/// ```
/// use delayq_codec::kryo::{ZoneId, ZoneOffset};
/// assert_eq!("Europe/Paris".parse::<ZoneId>().unwrap(), ZoneId::Region("Europe/Paris".into()));
/// assert_eq!("+02:00".parse::<ZoneId>().unwrap(), ZoneId::Offset(ZoneOffset(7200)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ZoneId {
    /// A `java.time.ZoneOffset`.
    Offset(ZoneOffset),
    /// A `java.time.ZoneRegion`, by its id.
    Region(String),
}

/// A `java.time` value (or a `java.sql` date), as Java holds it. Its JSON
/// and text form is Java's `toString()` (ISO-8601).
///
/// ```
/// use delayq_codec::kryo::{JavaTime, KryoValue};
/// let due = JavaTime::parse("java.time.LocalDateTime", "2026-11-23T02:13:20.123456789").unwrap();
/// assert_eq!(due.java_class(), "java.time.LocalDateTime");
/// assert_eq!(KryoValue::Time(due).to_json(), serde_json::json!("2026-11-23T02:13:20.123456789"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JavaTime {
    /// `java.time.LocalDate`.
    LocalDate(LocalDate),
    /// `java.time.LocalTime`.
    LocalTime(LocalTime),
    /// `java.time.LocalDateTime`.
    LocalDateTime(LocalDateTime),
    /// `java.time.OffsetDateTime`.
    OffsetDateTime(LocalDateTime, ZoneOffset),
    /// `java.time.OffsetTime`.
    OffsetTime(LocalTime, ZoneOffset),
    /// `java.time.ZonedDateTime`: the local date-time, its offset and its
    /// zone. Kryo writes no offset (Java derives it from the zone's rules,
    /// which only Java has): read from Kryo with a region zone, the offset
    /// is `None`, and the text leaves it out (`2026-11-23T02:13:20[Europe/Paris]`).
    ZonedDateTime(LocalDateTime, Option<ZoneOffset>, ZoneId),
    /// `java.time.Duration`: `seconds` (may be negative) plus `nanos`.
    Duration {
        /// Whole seconds.
        seconds: i64,
        /// Nanoseconds to add, 0 to 999,999,999.
        nanos: u32,
    },
    /// `java.time.Period`.
    Period {
        /// Years.
        years: i32,
        /// Months.
        months: i32,
        /// Days.
        days: i32,
    },
    /// `java.time.Year`.
    Year(i32),
    /// `java.time.YearMonth`.
    YearMonth {
        /// The year.
        year: i32,
        /// The month, 1 to 12.
        month: u8,
    },
    /// `java.time.MonthDay`.
    MonthDay {
        /// The month, 1 to 12.
        month: u8,
        /// The day, 1 to 31.
        day: u8,
    },
    /// A `java.time.ZoneId` that is a region (its class is
    /// `java.time.ZoneRegion`).
    ZoneRegion(String),
    /// `java.time.ZoneOffset`.
    ZoneOffset(ZoneOffset),
    /// `java.sql.Timestamp`: an instant with nanoseconds.
    SqlTimestamp {
        /// Seconds since the Unix epoch.
        seconds: i64,
        /// Nanoseconds in the second.
        nanos: u32,
    },
    /// `java.sql.Date`: milliseconds since the epoch (midnight in the
    /// writer's zone).
    SqlDate(i64),
    /// `java.sql.Time`: milliseconds since the epoch.
    SqlTime(i64),
}

impl JavaTime {
    /// The Java class (`ZoneId`s that are regions: `java.time.ZoneRegion`).
    pub fn java_class(&self) -> &'static str {
        match self {
            JavaTime::LocalDate(_) => "java.time.LocalDate",
            JavaTime::LocalTime(_) => "java.time.LocalTime",
            JavaTime::LocalDateTime(_) => "java.time.LocalDateTime",
            JavaTime::OffsetDateTime(..) => "java.time.OffsetDateTime",
            JavaTime::OffsetTime(..) => "java.time.OffsetTime",
            JavaTime::ZonedDateTime(..) => "java.time.ZonedDateTime",
            JavaTime::Duration { .. } => "java.time.Duration",
            JavaTime::Period { .. } => "java.time.Period",
            JavaTime::Year(_) => "java.time.Year",
            JavaTime::YearMonth { .. } => "java.time.YearMonth",
            JavaTime::MonthDay { .. } => "java.time.MonthDay",
            JavaTime::ZoneRegion(_) => "java.time.ZoneRegion",
            JavaTime::ZoneOffset(_) => "java.time.ZoneOffset",
            JavaTime::SqlTimestamp { .. } => "java.sql.Timestamp",
            JavaTime::SqlDate(_) => "java.sql.Date",
            JavaTime::SqlTime(_) => "java.sql.Time",
        }
    }

    /// The value of a `java.time` (or `java.sql` date) class from its
    /// `toString()` text: `parse("java.time.Duration", "PT1H30M")`. A
    /// `java.time.ZoneId` is a region or an offset, as its text says.
    pub fn parse(class: &str, text: &str) -> Result<JavaTime, String> {
        let bad = |what: &str| format!("{text:?} is not a {what}");
        Ok(match class {
            "java.time.LocalDate" => JavaTime::LocalDate(text.parse()?),
            "java.time.LocalTime" => JavaTime::LocalTime(text.parse()?),
            "java.time.LocalDateTime" => JavaTime::LocalDateTime(text.parse()?),
            "java.time.OffsetDateTime" => {
                let (dt, offset) = split_offset(text).ok_or_else(|| bad("OffsetDateTime"))?;
                JavaTime::OffsetDateTime(dt.parse()?, offset.parse()?)
            }
            "java.time.OffsetTime" => {
                let (t, offset) = split_offset(text).ok_or_else(|| bad("OffsetTime"))?;
                JavaTime::OffsetTime(t.parse()?, offset.parse()?)
            }
            "java.time.ZonedDateTime" => {
                let (rest, zone) = match text.strip_suffix(']').and_then(|t| t.split_once('[')) {
                    Some((rest, zone)) => (rest, Some(zone)),
                    None => (text, None),
                };
                match (split_offset(rest), zone) {
                    (Some((dt, offset)), zone) => {
                        let offset: ZoneOffset = offset.parse()?;
                        let zone = match zone {
                            Some(zone) => zone.parse()?,
                            None => ZoneId::Offset(offset),
                        };
                        JavaTime::ZonedDateTime(dt.parse()?, Some(offset), zone)
                    }
                    (None, Some(zone)) => JavaTime::ZonedDateTime(rest.parse()?, None, zone.parse()?),
                    (None, None) => return Err(bad("ZonedDateTime")),
                }
            }
            "java.time.Duration" => {
                let (seconds, nanos) = parse_duration(text).ok_or_else(|| bad("Duration"))?;
                JavaTime::Duration { seconds, nanos }
            }
            "java.time.Period" => {
                let (years, months, days) = parse_period(text).ok_or_else(|| bad("Period"))?;
                JavaTime::Period { years, months, days }
            }
            "java.time.Year" => JavaTime::Year(text.parse().map_err(|_| bad("Year"))?),
            "java.time.YearMonth" => {
                let (year, month) = text.rsplit_once('-').ok_or_else(|| bad("YearMonth"))?;
                let month = two_digits(month)
                    .filter(|m| (1..=12).contains(m))
                    .ok_or_else(|| bad("YearMonth"))?;
                JavaTime::YearMonth {
                    year: parse_year(year).ok_or_else(|| bad("YearMonth"))?,
                    month,
                }
            }
            "java.time.MonthDay" => {
                let md = text.strip_prefix("--").ok_or_else(|| bad("MonthDay"))?;
                let (m, d) = md.split_once('-').ok_or_else(|| bad("MonthDay"))?;
                match (two_digits(m), two_digits(d)) {
                    (Some(month @ 1..=12), Some(day @ 1..=31)) => JavaTime::MonthDay { month, day },
                    _ => return Err(bad("MonthDay")),
                }
            }
            "java.time.ZoneId" | "java.time.ZoneRegion" => match text.parse::<ZoneId>()? {
                ZoneId::Offset(o) => JavaTime::ZoneOffset(o),
                ZoneId::Region(r) => JavaTime::ZoneRegion(r),
            },
            "java.time.ZoneOffset" => JavaTime::ZoneOffset(text.parse()?),
            "java.sql.Timestamp" => {
                let (seconds, nanos) = super::json::parse_instant(text)?;
                JavaTime::SqlTimestamp { seconds, nanos }
            }
            "java.sql.Date" | "java.sql.Time" => {
                let (seconds, nanos) = super::json::parse_instant(text)?;
                let ms = seconds
                    .checked_mul(1000)
                    .and_then(|ms| ms.checked_add(i64::from(nanos / 1_000_000)))
                    .ok_or_else(|| bad("date"))?;
                if class == "java.sql.Date" {
                    JavaTime::SqlDate(ms)
                } else {
                    JavaTime::SqlTime(ms)
                }
            }
            other => return Err(format!("{other} is not a java.time class delayq knows")),
        })
    }

    /// Whether `class` is one of the classes [`JavaTime`] holds (or
    /// `java.time.ZoneId`, which a region or an offset is).
    pub fn is_time_class(class: &str) -> bool {
        matches!(
            class,
            "java.time.LocalDate"
                | "java.time.LocalTime"
                | "java.time.LocalDateTime"
                | "java.time.OffsetDateTime"
                | "java.time.OffsetTime"
                | "java.time.ZonedDateTime"
                | "java.time.Duration"
                | "java.time.Period"
                | "java.time.Year"
                | "java.time.YearMonth"
                | "java.time.MonthDay"
                | "java.time.ZoneId"
                | "java.time.ZoneRegion"
                | "java.time.ZoneOffset"
                | "java.sql.Timestamp"
                | "java.sql.Date"
                | "java.sql.Time"
        )
    }

    /// Checks the fields are in Java's ranges (what Java's factories
    /// check): a value read from bytes is refused, not built, otherwise.
    pub(crate) fn check(&self) -> Result<(), String> {
        let fine = match self {
            JavaTime::LocalDate(d) => d.is_valid(),
            JavaTime::LocalTime(t) => t.is_valid(),
            JavaTime::LocalDateTime(dt) => dt.date.is_valid() && dt.time.is_valid(),
            JavaTime::OffsetDateTime(dt, o) => dt.date.is_valid() && dt.time.is_valid() && o.is_valid(),
            JavaTime::OffsetTime(t, o) => t.is_valid() && o.is_valid(),
            JavaTime::ZonedDateTime(dt, o, z) => {
                dt.date.is_valid()
                    && dt.time.is_valid()
                    && o.is_none_or(|o| o.is_valid())
                    && match z {
                        ZoneId::Offset(zo) => zo.is_valid(),
                        ZoneId::Region(r) => is_zone_region(r),
                    }
            }
            JavaTime::Duration { nanos, .. } | JavaTime::SqlTimestamp { nanos, .. } => *nanos < 1_000_000_000,
            JavaTime::Period { .. } | JavaTime::SqlDate(_) | JavaTime::SqlTime(_) => true,
            JavaTime::Year(y) => YEARS.contains(y),
            JavaTime::YearMonth { year, month } => YEARS.contains(year) && (1..=12).contains(month),
            JavaTime::MonthDay { month, day } => (1..=12).contains(month) && *day >= 1 && *day <= days_in(*month, 2000),
            JavaTime::ZoneRegion(r) => is_zone_region(r),
            JavaTime::ZoneOffset(o) => o.is_valid(),
        };
        if fine {
            Ok(())
        } else {
            Err(format!("{self:?} is not a valid {}", self.java_class()))
        }
    }
}

const YEARS: std::ops::RangeInclusive<i32> = -999_999_999..=999_999_999;

fn days_in(month: u8, year: i32) -> u8 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// What `ZoneId.of` accepts as a region id (the rest of its check is the
/// zone database, which only Java has).
fn is_region_id(id: &str) -> bool {
    id.len() >= 2
        && id.starts_with(|c: char| c.is_ascii_alphabetic())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '~' | '/' | '.' | '_' | '+' | '-'))
}

/// A region named by a prefix and an offset (`ZoneId.of("GMT+2")`), as
/// Java stores it (`GMT+02:00`; `GMT` for a zero offset): `None` if `id`
/// has no such prefix, an error if what follows it is no offset.
fn prefixed_offset_id(id: &str) -> Option<Result<String, String>> {
    let (prefix, rest) = ["UTC", "GMT", "UT"]
        .into_iter()
        .find_map(|p| id.strip_prefix(p).map(|rest| (p, rest)))?;
    if rest.is_empty() {
        return Some(Ok(id.to_owned()));
    }
    if !rest.starts_with(['+', '-']) {
        return None;
    }
    // ZoneOffset.of also takes a one-digit hour (`+2`).
    let rest = match rest.as_bytes() {
        [sign, d] if d.is_ascii_digit() => format!("{}0{}", char::from(*sign), char::from(*d)),
        _ => rest.to_owned(),
    };
    Some(rest.parse::<ZoneOffset>().map(|o| {
        if o.0 == 0 {
            prefix.to_owned()
        } else {
            format!("{prefix}{o}")
        }
    }))
}

/// The offset of a region whose id fixes it, for all time: `UTC`, `GMT`,
/// `UT` and those with an offset (`GMT+02:00`), and the zone database's
/// `Etc/` zones of a fixed offset (`Etc/UTC`, `Etc/GMT-3`, which is
/// +03:00: POSIX signs). `None` for any other region, whose offset only
/// Java's zone rules give.
pub(crate) fn fixed_region_offset(id: &str) -> Option<ZoneOffset> {
    if let Some(Ok(java)) = prefixed_offset_id(id) {
        if java != id {
            return None;
        }
        let offset = id.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        return if offset.is_empty() {
            Some(ZoneOffset(0))
        } else {
            offset.parse().ok()
        };
    }
    let etc = id.strip_prefix("Etc/")?;
    if matches!(
        etc,
        "UTC" | "UCT" | "GMT" | "GMT0" | "GMT+0" | "GMT-0" | "Greenwich" | "Universal" | "Zulu"
    ) {
        return Some(ZoneOffset(0));
    }
    let (sign, hours) = match etc.strip_prefix("GMT")?.split_at_checked(1)? {
        ("+", h) => (-1, h),
        ("-", h) => (1, h),
        _ => return None,
    };
    let hours: i32 = hours.parse().ok().filter(|_| !hours.starts_with('0'))?;
    // The zone database has Etc/GMT-14 to Etc/GMT+12.
    let fits = if sign < 0 { hours <= 12 } else { hours <= 14 };
    fits.then_some(ZoneOffset(sign * hours * 3600))
}

/// A region id Java can hold: a zone database name, or a prefixed offset
/// in Java's own form.
fn is_zone_region(id: &str) -> bool {
    match prefixed_offset_id(id) {
        Some(java) => java.is_ok_and(|java| java == id),
        None => is_region_id(id),
    }
}

impl LocalDate {
    fn is_valid(&self) -> bool {
        YEARS.contains(&self.year)
            && (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= days_in(self.month, self.year)
    }
}

impl LocalTime {
    fn is_valid(&self) -> bool {
        self.hour < 24 && self.minute < 60 && self.second < 60 && self.nano < 1_000_000_000
    }
}

impl ZoneOffset {
    fn is_valid(&self) -> bool {
        self.0.abs() <= 18 * 3600
    }
}

/// A year as `LocalDate.toString()` writes it: at least four digits, a
/// sign before negative years and before years past 9999.
fn write_year(f: &mut fmt::Formatter<'_>, year: i32, plus_above_9999: bool) -> fmt::Result {
    if year.unsigned_abs() < 1000 {
        if year < 0 {
            write!(f, "-{:04}", year.unsigned_abs())
        } else {
            write!(f, "{year:04}")
        }
    } else if year > 9999 && plus_above_9999 {
        write!(f, "+{year}")
    } else {
        write!(f, "{year}")
    }
}

impl fmt::Display for LocalDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_year(f, self.year, true)?;
        write!(f, "-{:02}-{:02}", self.month, self.day)
    }
}

/// Fractions of a second as Java prints them: 3, 6 or 9 digits.
fn write_nanos(f: &mut fmt::Formatter<'_>, nano: u32) -> fmt::Result {
    if nano == 0 {
        Ok(())
    } else if nano.is_multiple_of(1_000_000) {
        write!(f, ".{:03}", nano / 1_000_000)
    } else if nano.is_multiple_of(1000) {
        write!(f, ".{:06}", nano / 1000)
    } else {
        write!(f, ".{nano:09}")
    }
}

impl fmt::Display for LocalTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}", self.hour, self.minute)?;
        if self.second > 0 || self.nano > 0 {
            write!(f, ":{:02}", self.second)?;
            write_nanos(f, self.nano)?;
        }
        Ok(())
    }
}

impl fmt::Display for LocalDateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}T{}", self.date, self.time)
    }
}

impl fmt::Display for ZoneOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("Z");
        }
        let abs = self.0.unsigned_abs();
        let sign = if self.0 < 0 { '-' } else { '+' };
        write!(f, "{sign}{:02}:{:02}", abs / 3600, abs / 60 % 60)?;
        if !abs.is_multiple_of(60) {
            write!(f, ":{:02}", abs % 60)?;
        }
        Ok(())
    }
}

impl fmt::Display for ZoneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZoneId::Offset(o) => o.fmt(f),
            ZoneId::Region(r) => f.write_str(r),
        }
    }
}

impl fmt::Display for JavaTime {
    /// Java's `toString()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JavaTime::LocalDate(d) => d.fmt(f),
            JavaTime::LocalTime(t) => t.fmt(f),
            JavaTime::LocalDateTime(dt) => dt.fmt(f),
            JavaTime::OffsetDateTime(dt, o) => write!(f, "{dt}{o}"),
            JavaTime::OffsetTime(t, o) => write!(f, "{t}{o}"),
            JavaTime::ZonedDateTime(dt, o, zone) => {
                write!(f, "{dt}")?;
                if let Some(o) = o {
                    write!(f, "{o}")?;
                }
                if o.is_none() || *zone != ZoneId::Offset(o.unwrap_or_default()) {
                    write!(f, "[{zone}]")?;
                }
                Ok(())
            }
            JavaTime::Duration { seconds, nanos } => write_duration(f, *seconds, *nanos),
            JavaTime::Period { years, months, days } => {
                if (*years, *months, *days) == (0, 0, 0) {
                    return f.write_str("P0D");
                }
                f.write_str("P")?;
                if *years != 0 {
                    write!(f, "{years}Y")?;
                }
                if *months != 0 {
                    write!(f, "{months}M")?;
                }
                if *days != 0 {
                    write!(f, "{days}D")?;
                }
                Ok(())
            }
            JavaTime::Year(y) => write!(f, "{y}"),
            JavaTime::YearMonth { year, month } => {
                write_year(f, *year, false)?;
                write!(f, "-{month:02}")
            }
            JavaTime::MonthDay { month, day } => write!(f, "--{month:02}-{day:02}"),
            JavaTime::ZoneRegion(r) => f.write_str(r),
            JavaTime::ZoneOffset(o) => o.fmt(f),
            JavaTime::SqlTimestamp { seconds, nanos } => f.write_str(&super::json::instant_text(*seconds, *nanos)),
            JavaTime::SqlDate(ms) | JavaTime::SqlTime(ms) => f.write_str(&super::json::date_text(*ms)),
        }
    }
}

/// `Duration.toString()`: `PT8H6M12.345S`, `PT-1.5S`, `PT0S`.
fn write_duration(f: &mut fmt::Formatter<'_>, seconds: i64, nanos: u32) -> fmt::Result {
    if seconds == 0 && nanos == 0 {
        return f.write_str("PT0S");
    }
    let total = if seconds < 0 && nanos > 0 { seconds + 1 } else { seconds };
    let hours = total / 3600;
    let minutes = (total % 3600) / 60;
    let secs = total % 60;
    let mut out = String::from("PT");
    if hours != 0 {
        out.push_str(&format!("{hours}H"));
    }
    if minutes != 0 {
        out.push_str(&format!("{minutes}M"));
    }
    if secs == 0 && nanos == 0 && out.len() > 2 {
        return f.write_str(&out);
    }
    if seconds < 0 && nanos > 0 && secs == 0 {
        out.push_str("-0");
    } else {
        out.push_str(&secs.to_string());
    }
    if nanos > 0 {
        let fraction = if seconds < 0 { 1_000_000_000 - nanos } else { nanos };
        let digits = format!("{fraction:09}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    out.push('S');
    f.write_str(&out)
}

/// `PT…` back to seconds and nanos (hours, minutes and seconds, each
/// optional and signed; days as `P2DT…` too).
fn parse_duration(text: &str) -> Option<(i64, u32)> {
    let (negate, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let rest = rest.strip_prefix(['P', 'p'])?;
    let (days, time) = match rest.split_once(['T', 't']) {
        Some((days, time)) => (days, time),
        None => (rest, ""),
    };
    let mut total_nanos: i128 = 0;
    if !days.is_empty() {
        let n: i128 = days.strip_suffix(['D', 'd'])?.parse().ok()?;
        total_nanos += n * 86_400 * 1_000_000_000;
    }
    let mut time = time;
    let mut any = !days.is_empty();
    for (unit, scale) in [('H', 3600i128), ('M', 60)] {
        if let Some(i) = time.find([unit, unit.to_ascii_lowercase()]) {
            let n: i128 = time[..i].parse().ok()?;
            total_nanos += n * scale * 1_000_000_000;
            time = &time[i + 1..];
            any = true;
        }
    }
    if let Some(s) = time.strip_suffix(['S', 's']) {
        let negative = s.starts_with('-');
        let (whole, fraction) = s.split_once(['.', ',']).unwrap_or((s, ""));
        let whole: i128 = whole.parse().ok()?;
        let mut nanos: i128 = 0;
        if !fraction.is_empty() {
            if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            nanos = format!("{fraction:0<9}").parse().ok()?;
        }
        total_nanos += whole * 1_000_000_000 + if negative { -nanos } else { nanos };
        any = true;
    } else if !time.is_empty() {
        return None;
    }
    if !any {
        return None;
    }
    if negate {
        total_nanos = -total_nanos;
    }
    let seconds = i64::try_from(total_nanos.div_euclid(1_000_000_000)).ok()?;
    Some((seconds, total_nanos.rem_euclid(1_000_000_000) as u32))
}

/// `P1Y2M3D` (weeks as `P2W` too).
fn parse_period(text: &str) -> Option<(i32, i32, i32)> {
    let rest = text.strip_prefix(['P', 'p'])?;
    let (mut years, mut months, mut days) = (0i32, 0i32, 0i32);
    let mut rest = rest;
    let mut any = false;
    for unit in ['Y', 'M', 'W', 'D'] {
        if let Some(i) = rest.find([unit, unit.to_ascii_lowercase()]) {
            let n: i32 = rest[..i].parse().ok()?;
            match unit {
                'Y' => years = n,
                'M' => months = n,
                'W' => days = days.checked_add(n.checked_mul(7)?)?,
                _ => days = days.checked_add(n)?,
            }
            rest = &rest[i + 1..];
            any = true;
        }
    }
    (any && rest.is_empty()).then_some((years, months, days))
}

fn two_digits(s: &str) -> Option<u8> {
    (s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

fn parse_year(s: &str) -> Option<i32> {
    let digits = s.trim_start_matches(['+', '-']);
    if digits.len() < 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A date-time's text and its offset (`Z`, `+01:00`, `-05:30:15`).
fn split_offset(text: &str) -> Option<(&str, &str)> {
    if let Some(rest) = text.strip_suffix(['Z', 'z']) {
        return Some((rest, "Z"));
    }
    // The last sign after the time's colon (a date's '-' comes before 'T').
    let start = text.find(['T', 't']).map_or(0, |t| t + 1);
    let i = text[start..].rfind(['+', '-'])? + start;
    Some((&text[..i], &text[i..]))
}

impl std::str::FromStr for LocalDate {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a LocalDate like 2026-11-23");
        let (rest, day) = s.rsplit_once('-').ok_or_else(bad)?;
        let (year, month) = rest.rsplit_once('-').ok_or_else(bad)?;
        let date = LocalDate {
            year: parse_year(year).ok_or_else(bad)?,
            month: two_digits(month).ok_or_else(bad)?,
            day: two_digits(day).ok_or_else(bad)?,
        };
        date.is_valid().then_some(date).ok_or_else(bad)
    }
}

impl std::str::FromStr for LocalTime {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a LocalTime like 02:13:20.123");
        let (hms, fraction) = s.split_once(['.', ',']).unwrap_or((s, ""));
        let mut parts = hms.split(':');
        let hour = two_digits(parts.next().ok_or_else(bad)?).ok_or_else(bad)?;
        let minute = two_digits(parts.next().ok_or_else(bad)?).ok_or_else(bad)?;
        let second = match parts.next() {
            Some(sec) => two_digits(sec).ok_or_else(bad)?,
            None if fraction.is_empty() => 0,
            None => return Err(bad()),
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        let nano = if fraction.is_empty() {
            0
        } else if fraction.len() <= 9 && fraction.bytes().all(|b| b.is_ascii_digit()) {
            format!("{fraction:0<9}").parse().map_err(|_| bad())?
        } else {
            return Err(bad());
        };
        let time = LocalTime {
            hour,
            minute,
            second,
            nano,
        };
        time.is_valid().then_some(time).ok_or_else(bad)
    }
}

impl std::str::FromStr for LocalDateTime {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (date, time) = s
            .split_once(['T', 't', ' '])
            .ok_or_else(|| format!("{s:?} is not a LocalDateTime like 2026-11-23T02:13:20"))?;
        Ok(LocalDateTime {
            date: date.parse()?,
            time: time.parse()?,
        })
    }
}

impl std::str::FromStr for ZoneOffset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a ZoneOffset like +02:00 or Z");
        if s == "Z" || s == "z" {
            return Ok(ZoneOffset(0));
        }
        let sign = match s.as_bytes().first() {
            Some(b'+') => 1,
            Some(b'-') => -1,
            _ => return Err(bad()),
        };
        let digits: String = s[1..].chars().filter(|c| *c != ':').collect();
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let (h, m, sec) = match digits.len() {
            2 => (&digits[0..2], "0", "0"),
            4 => (&digits[0..2], &digits[2..4], "0"),
            6 => (&digits[0..2], &digits[2..4], &digits[4..6]),
            _ => return Err(bad()),
        };
        let num = |t: &str| t.parse::<i32>().map_err(|_| bad());
        let (h, m, sec) = (num(h)?, num(m)?, num(sec)?);
        if m > 59 || sec > 59 {
            return Err(bad());
        }
        let offset = ZoneOffset(sign * (h * 3600 + m * 60 + sec));
        offset.is_valid().then_some(offset).ok_or_else(bad)
    }
}

impl std::str::FromStr for ZoneId {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "Z" || s.starts_with(['+', '-']) {
            return s.parse().map(ZoneId::Offset);
        }
        if let Some(id) = prefixed_offset_id(s) {
            return id.map(ZoneId::Region);
        }
        if is_region_id(s) {
            Ok(ZoneId::Region(s.to_owned()))
        } else {
            Err(format!("{s:?} is not a zone id like Europe/Paris or +02:00"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(class: &str, text: &str) {
        let t = JavaTime::parse(class, text).unwrap_or_else(|e| panic!("{class} {text}: {e}"));
        assert_eq!(t.to_string(), text, "{class}");
        assert_eq!(t.java_class(), class.replace("ZoneId", "ZoneRegion"));
        t.check().unwrap();
    }

    #[test]
    fn java_to_string_forms_both_ways() {
        // Texts as Java 17's toString() prints them.
        round_trip("java.time.LocalDate", "2026-11-23");
        round_trip("java.time.LocalDate", "-0044-03-15");
        round_trip("java.time.LocalDate", "+12345-01-01");
        round_trip("java.time.LocalTime", "02:13:20.123456789");
        round_trip("java.time.LocalTime", "10:15");
        round_trip("java.time.LocalTime", "02:13:20.000005");
        round_trip("java.time.LocalTime", "02:13:20.120");
        round_trip("java.time.LocalDateTime", "2026-11-23T02:13:20.123456789");
        round_trip("java.time.OffsetDateTime", "2026-11-23T02:13:20.123456789+02:00");
        round_trip("java.time.OffsetTime", "02:13:20-05:30");
        round_trip("java.time.OffsetTime", "23:59Z");
        round_trip(
            "java.time.ZonedDateTime",
            "2026-11-23T02:13:20.123456789+01:00[Europe/Paris]",
        );
        round_trip("java.time.ZonedDateTime", "2026-11-23T02:13:20.123456789Z");
        round_trip("java.time.ZonedDateTime", "2026-11-23T02:13:20.123456789[Europe/Paris]");
        round_trip("java.time.Duration", "PT1H30M0.5S");
        round_trip("java.time.Duration", "PT-1.5S");
        round_trip("java.time.Duration", "PT0S");
        round_trip("java.time.Duration", "PT36H");
        round_trip("java.time.Duration", "PT-0.5S");
        round_trip("java.time.Period", "P1Y2M3D");
        round_trip("java.time.Period", "P-10D");
        round_trip("java.time.Period", "P18M");
        round_trip("java.time.Year", "2026");
        round_trip("java.time.YearMonth", "2026-11");
        round_trip("java.time.MonthDay", "--02-29");
        round_trip("java.time.ZoneId", "Europe/Paris");
        // ZoneId.of("GMT+2") and its kin: a region named by a prefix and an offset.
        round_trip("java.time.ZoneId", "GMT+02:00");
        round_trip("java.time.ZoneId", "UTC-05:30");
        round_trip("java.time.ZoneId", "UT+01:02:03");
        round_trip("java.time.ZonedDateTime", "2026-11-23T02:13:20+02:00[GMT+02:00]");
        for (given, java) in [
            ("GMT+2", "GMT+02:00"),
            ("UTC-0530", "UTC-05:30"),
            ("GMT+0", "GMT"),
            ("UT", "UT"),
        ] {
            assert_eq!(JavaTime::parse("java.time.ZoneId", given).unwrap().to_string(), java);
        }
        // Redisson 4.7.0 Kryo5Codec of ZoneId.of("GMT+2").
        let java = (0..62)
            .step_by(2)
            .map(|i| {
                u8::from_str_radix(
                    &"01006a6176612e74696d652e5a6f6e65526567696fee474d542b30323a30b0"[i..i + 2],
                    16,
                )
                .unwrap()
            })
            .collect::<Vec<u8>>();
        let zone = crate::kryo::KryoValue::decode(&java, None).unwrap();
        assert_eq!(zone.to_json(), serde_json::json!("GMT+02:00"));
        assert_eq!(zone.encode().unwrap(), java);
        for bad in ["GMT+19", "GMT+02:60", "GMT+", "UTC+2:00"] {
            let refused = JavaTime::parse("java.time.ZoneId", bad).and_then(|t| t.check());
            assert!(refused.is_err(), "{bad}: {refused:?}");
        }
        // Regions whose ids fix their offset, as Java reads them from Kryo
        // (which writes no offset): UTC, GMT+02:00, Etc/GMT-3.
        for (region, offset) in [
            ("UTC", Some(0)),
            ("GMT", Some(0)),
            ("UT+01:02:03", Some(3723)),
            ("GMT+02:00", Some(7200)),
            ("Etc/UTC", Some(0)),
            ("Etc/GMT-3", Some(10_800)),
            ("Etc/GMT+12", Some(-43_200)),
            ("Etc/GMT+13", None),
            ("Etc/GMT-03", None),
            ("GMT+2", None),
            ("Europe/Paris", None),
            ("Etc/Unknown", None),
        ] {
            assert_eq!(fixed_region_offset(region), offset.map(ZoneOffset), "{region}");
        }
        round_trip("java.time.ZoneOffset", "+05:30");
        round_trip("java.time.ZoneOffset", "Z");
        round_trip("java.sql.Timestamp", "2026-11-23T02:13:20.123456789Z");
    }

    #[test]
    fn durations_as_java_holds_them() {
        let d = |text| match JavaTime::parse("java.time.Duration", text).unwrap() {
            JavaTime::Duration { seconds, nanos } => (seconds, nanos),
            other => panic!("{other:?}"),
        };
        assert_eq!(d("PT-1.5S"), (-2, 500_000_000));
        assert_eq!(d("PT1H30M0.5S"), (5400, 500_000_000));
        assert_eq!(d("P2DT1S"), (172_801, 0));
    }

    #[test]
    fn out_of_range_fields_are_refused() {
        for (class, text) in [
            ("java.time.LocalDate", "2026-02-30"),
            ("java.time.LocalTime", "24:00"),
            ("java.time.ZoneOffset", "+19:00"),
            ("java.time.MonthDay", "--13-01"),
            ("java.time.Duration", "P"),
        ] {
            assert!(JavaTime::parse(class, text).is_err(), "{class} {text}");
        }
        let bad = JavaTime::LocalTime(LocalTime {
            hour: 25,
            minute: 0,
            second: 0,
            nano: 0,
        });
        assert!(bad.check().is_err());
    }
}
