//! The JDK classes Kryo 5 (as Redisson's `Kryo5Codec` configures it)
//! writes with serializers of their own: `java.time` and `java.sql` dates,
//! arrays, the immutable, singleton, empty and sorted collections,
//! `EnumSet`, `Optional`, the atomics, `BitSet`, text-like classes, JDK
//! enums, and the classes Redisson hands to Kryo's `JavaSerializer` (Java
//! serialization inside the Kryo payload).

use super::class::{self, shown};
use super::error::{KryoError, KryoErrorKind, Result};
use super::java_type::{array_element, JavaType, Primitive};
use super::read::Reader;
use super::schema::{ClassDef, KryoSchema};
use super::time::{JavaTime, LocalDate, LocalDateTime, LocalTime, ZoneId, ZoneOffset};
use super::tree;
use super::value::KryoValue;
use super::write::Writer;

/// A JDK class with a serializer of its own here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    /// A `java.time` class (by its serializer).
    Time(TimeKind),
    /// `java.sql.Date`, `Time`, `Timestamp` (Kryo's `DateSerializer`:
    /// milliseconds only).
    SqlDate,
    /// A JDK enum (`DayOfWeek`, `Month`...): the ordinal.
    JdkEnum,
    /// An array other than `byte[]`.
    Array,
    /// `List.of`, `Set.of`, `Map.of`: no null markers.
    Immutable {
        map: bool,
    },
    /// `TreeMap`, `TreeSet`, `ConcurrentSkipListMap`, `PriorityQueue`: the
    /// comparator after the size.
    Sorted {
        map: bool,
    },
    /// `Collections.emptyList()`, `emptySet()`, `emptyMap()`.
    Empty {
        map: bool,
    },
    /// `Collections.singletonList`, `singleton`, `singletonMap`.
    Singleton {
        map: bool,
    },
    EnumSet,
    Optional,
    AtomicInteger,
    AtomicLong,
    AtomicBoolean,
    AtomicReference,
    /// One string: `StringBuilder`, `StringBuffer`, `Currency` (their
    /// serializers write null themselves).
    Text,
    /// One string: `URI`, `URL` (a null has a marker before).
    Link,
    Locale,
    BitSet,
    /// Written by Kryo's `JavaSerializer`: Java serialization.
    JavaSerialized,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeKind {
    Duration,
    LocalDate,
    LocalTime,
    LocalDateTime,
    ZoneOffset,
    ZoneId,
    OffsetTime,
    OffsetDateTime,
    ZonedDateTime,
    Year,
    YearMonth,
    MonthDay,
    Period,
}

impl Special {
    /// Whether the serializer writes null itself (`writeObjectOrNull`
    /// then adds no null marker).
    pub(crate) fn accepts_null(self) -> bool {
        matches!(
            self,
            Special::JdkEnum | Special::Array | Special::Immutable { .. } | Special::Sorted { .. } | Special::Text
        )
    }
}

/// The special serializer of a class, if it has one here.
pub(crate) fn special(name: &str) -> Option<Special> {
    use TimeKind::*;
    Some(match name {
        "java.time.Duration" => Special::Time(Duration),
        "java.time.LocalDate" => Special::Time(LocalDate),
        "java.time.LocalTime" => Special::Time(LocalTime),
        "java.time.LocalDateTime" => Special::Time(LocalDateTime),
        "java.time.ZoneOffset" => Special::Time(ZoneOffset),
        "java.time.ZoneId" | "java.time.ZoneRegion" => Special::Time(ZoneId),
        "java.time.OffsetTime" => Special::Time(OffsetTime),
        "java.time.OffsetDateTime" => Special::Time(OffsetDateTime),
        "java.time.ZonedDateTime" => Special::Time(ZonedDateTime),
        "java.time.Year" => Special::Time(Year),
        "java.time.YearMonth" => Special::Time(YearMonth),
        "java.time.MonthDay" => Special::Time(MonthDay),
        "java.time.Period" => Special::Time(Period),
        "java.sql.Date" | "java.sql.Time" | "java.sql.Timestamp" => Special::SqlDate,
        "java.util.ImmutableCollections$List12"
        | "java.util.ImmutableCollections$ListN"
        | "java.util.ImmutableCollections$SubList"
        | "java.util.ImmutableCollections$Set12"
        | "java.util.ImmutableCollections$SetN" => Special::Immutable { map: false },
        "java.util.ImmutableCollections$Map1" | "java.util.ImmutableCollections$MapN" => {
            Special::Immutable { map: true }
        }
        "java.util.TreeSet" | "java.util.PriorityQueue" => Special::Sorted { map: false },
        "java.util.TreeMap" | "java.util.concurrent.ConcurrentSkipListMap" => Special::Sorted { map: true },
        "java.util.Collections$EmptyList" | "java.util.Collections$EmptySet" => Special::Empty { map: false },
        "java.util.Collections$EmptyMap" => Special::Empty { map: true },
        "java.util.Collections$SingletonList" | "java.util.Collections$SingletonSet" => {
            Special::Singleton { map: false }
        }
        "java.util.Collections$SingletonMap" => Special::Singleton { map: true },
        "java.util.RegularEnumSet" | "java.util.JumboEnumSet" => Special::EnumSet,
        "java.util.Optional" => Special::Optional,
        "java.util.concurrent.atomic.AtomicInteger" => Special::AtomicInteger,
        "java.util.concurrent.atomic.AtomicLong" => Special::AtomicLong,
        "java.util.concurrent.atomic.AtomicBoolean" => Special::AtomicBoolean,
        "java.util.concurrent.atomic.AtomicReference" => Special::AtomicReference,
        "java.lang.StringBuilder" | "java.lang.StringBuffer" | "java.util.Currency" => Special::Text,
        "java.net.URI" | "java.net.URL" => Special::Link,
        "java.util.Locale" => Special::Locale,
        "java.util.BitSet" => Special::BitSet,
        "java.util.EnumMap" => Special::JavaSerialized,
        _ if crate::jdk::enums::constants(name).is_some() => Special::JdkEnum,
        _ if name.starts_with('[') && name != "[B" && array_element(name).is_some() => Special::Array,
        _ if name.starts_with("java.util.Collections$Unmodifiable")
            || name.starts_with("java.util.Collections$Synchronized")
            || name.starts_with("java.util.Collections$Checked") =>
        {
            Special::JavaSerialized
        }
        _ => return None,
    })
}

/// Whether a declared element type is final for Kryo (its class is
/// written once, or not at all).
fn is_final(schema: Option<&KryoSchema>, class: &str) -> bool {
    Primitive::from_name(class).is_some()
        || class::is_final_jdk_class(class)
        || match schema.and_then(|s| s.get(class)) {
            Some(ClassDef::Pojo { is_final, .. }) => *is_final,
            Some(ClassDef::Enum { .. }) => true,
            None => false,
        }
}

fn read_time(r: &mut Reader<'_>, kind: TimeKind) -> Result<JavaTime> {
    use TimeKind as K;
    Ok(match kind {
        K::Duration => {
            let seconds = r.i64()?;
            let nanos = r.var_u32()?;
            // As Duration.ofSeconds(seconds, nanos): whole seconds carry over.
            let seconds = seconds
                .checked_add(i64::from(nanos / 1_000_000_000))
                .ok_or_else(|| r.error(KryoErrorKind::Malformed, "a Duration out of range"))?;
            JavaTime::Duration {
                seconds,
                nanos: nanos % 1_000_000_000,
            }
        }
        K::LocalDate => JavaTime::LocalDate(date(r)?),
        K::LocalTime => JavaTime::LocalTime(time(r)?),
        K::LocalDateTime => JavaTime::LocalDateTime(date_time(r)?),
        K::ZoneOffset => JavaTime::ZoneOffset(offset(r)?),
        K::ZoneId => match zone(r)? {
            ZoneId::Offset(o) => JavaTime::ZoneOffset(o),
            ZoneId::Region(id) => JavaTime::ZoneRegion(id),
        },
        K::OffsetTime => {
            let t = time(r)?;
            JavaTime::OffsetTime(t, offset(r)?)
        }
        K::OffsetDateTime => {
            let dt = date_time(r)?;
            JavaTime::OffsetDateTime(dt, offset(r)?)
        }
        K::ZonedDateTime => {
            let dt = date_time(r)?;
            match zone(r)? {
                ZoneId::Offset(o) => JavaTime::ZonedDateTime(dt, Some(o), ZoneId::Offset(o)),
                // Java computes the offset from the zone's rules; a few
                // regions' ids fix it.
                ZoneId::Region(id) => {
                    let offset = super::time::fixed_region_offset(&id);
                    JavaTime::ZonedDateTime(dt, offset, ZoneId::Region(id))
                }
            }
        }
        K::Year => JavaTime::Year(r.var_u32()? as i32),
        K::YearMonth => {
            let year = r.var_u32()? as i32;
            JavaTime::YearMonth { year, month: r.u8()? }
        }
        K::MonthDay => {
            let month = r.u8()?;
            JavaTime::MonthDay { month, day: r.u8()? }
        }
        K::Period => {
            let years = r.var_u32()? as i32;
            let months = r.var_u32()? as i32;
            JavaTime::Period {
                years,
                months,
                days: r.var_u32()? as i32,
            }
        }
    })
}

fn date(r: &mut Reader<'_>) -> Result<LocalDate> {
    let year = r.var_u32()? as i32;
    let month = r.u8()?;
    let day = r.u8()?;
    Ok(LocalDate { year, month, day })
}

/// `LocalTimeSerializer`: a negative (complemented) byte ends it.
fn time(r: &mut Reader<'_>) -> Result<LocalTime> {
    let mut t = LocalTime {
        hour: 0,
        minute: 0,
        second: 0,
        nano: 0,
    };
    let hour = r.u8()? as i8;
    if hour < 0 {
        t.hour = !hour as u8;
        return Ok(t);
    }
    t.hour = hour as u8;
    let minute = r.u8()? as i8;
    if minute < 0 {
        t.minute = !minute as u8;
        return Ok(t);
    }
    t.minute = minute as u8;
    let second = r.u8()? as i8;
    if second < 0 {
        t.second = !second as u8;
        return Ok(t);
    }
    t.second = second as u8;
    t.nano = r.var_u32()?;
    Ok(t)
}

fn date_time(r: &mut Reader<'_>) -> Result<LocalDateTime> {
    Ok(LocalDateTime {
        date: date(r)?,
        time: time(r)?,
    })
}

/// Quarter hours in a byte, or 127 and the seconds.
fn offset(r: &mut Reader<'_>) -> Result<ZoneOffset> {
    let quarters = r.u8()? as i8;
    Ok(ZoneOffset(if quarters == 127 {
        r.i32()?
    } else {
        i32::from(quarters) * 900
    }))
}

fn zone(r: &mut Reader<'_>) -> Result<ZoneId> {
    let id = r
        .string()?
        .ok_or_else(|| r.error(KryoErrorKind::Malformed, "a null zone id"))?;
    id.parse().map_err(|e: String| r.error(KryoErrorKind::Malformed, e))
}

fn string(r: &mut Reader<'_>) -> Result<KryoValue> {
    Ok(r.string()?.map_or(KryoValue::Null, KryoValue::String))
}

/// The value of a class with a [`Special`] serializer.
pub(crate) fn read(
    r: &mut Reader<'_>,
    schema: Option<&KryoSchema>,
    class: &str,
    kind: Special,
    generics: Option<&[JavaType]>,
) -> Result<KryoValue> {
    let wrapped = |value: KryoValue| KryoValue::Wrapped {
        class: class.to_owned(),
        value: Box::new(value),
    };
    Ok(match kind {
        Special::Time(t) => {
            let at = r.pos();
            let time = read_time(r, t)?;
            time.check()
                .map_err(|e| KryoError::new(KryoErrorKind::Malformed, Some(at), e))?;
            KryoValue::Time(time)
        }
        Special::SqlDate => {
            let ms = r.var_u64()? as i64;
            KryoValue::Time(match class {
                "java.sql.Date" => JavaTime::SqlDate(ms),
                "java.sql.Time" => JavaTime::SqlTime(ms),
                _ => JavaTime::SqlTimestamp {
                    seconds: ms.div_euclid(1000),
                    nanos: ms.rem_euclid(1000) as u32 * 1_000_000,
                },
            })
        }
        Special::JdkEnum => {
            let at = r.pos();
            match r.var_u32()? {
                0 => KryoValue::Null,
                n => {
                    let name = crate::jdk::enums::name(class, n - 1).ok_or_else(|| {
                        KryoError::new(
                            KryoErrorKind::Malformed,
                            Some(at),
                            format!("{class} has no constant of ordinal {}", n - 1),
                        )
                    })?;
                    KryoValue::Enum {
                        class: class.to_owned(),
                        ordinal: Some(n - 1),
                        name: Some(name.to_owned()),
                    }
                }
            }
        }
        Special::Array => read_array(r, schema, class)?,
        Special::Immutable { map: false } => tree::read_collection(r, schema, class, generics, false, false)?,
        Special::Immutable { map: true } => tree::read_map(r, schema, class, generics, false, false)?,
        Special::Sorted { map: false } => tree::read_collection(r, schema, class, generics, true, true)?,
        Special::Sorted { map: true } => tree::read_map(r, schema, class, generics, true, true)?,
        Special::Empty { map: false } => KryoValue::Collection {
            class: class.to_owned(),
            items: Vec::new(),
        },
        Special::Empty { map: true } => KryoValue::Map {
            class: class.to_owned(),
            entries: Vec::new(),
        },
        Special::Singleton { map: false } => KryoValue::Collection {
            class: class.to_owned(),
            items: vec![tree::read_classed(r, schema, None)?],
        },
        Special::Singleton { map: true } => {
            let key = tree::read_classed(r, schema, None)?;
            let value = tree::read_classed(r, schema, None)?;
            KryoValue::Map {
                class: class.to_owned(),
                entries: vec![(key, value)],
            }
        }
        Special::EnumSet => {
            let element = tree::read_class(r)?
                .ok_or_else(|| r.error(KryoErrorKind::Malformed, "an EnumSet without its enum class"))?;
            let len = r.var_u32()?;
            let len = r.count(len, "an EnumSet size")?;
            let mut items = Vec::with_capacity(len);
            for _ in 0..len {
                let item = tree::read_body(r, schema, &element, None)?;
                if !matches!(item, KryoValue::Enum { .. }) {
                    return Err(r.mismatch(format!("{} in an EnumSet is no enum", shown(&element))));
                }
                items.push(item);
            }
            KryoValue::EnumSet {
                jumbo: class == "java.util.JumboEnumSet",
                element: element.to_string(),
                items,
            }
        }
        Special::Optional | Special::AtomicReference => wrapped(tree::read_classed(r, schema, None)?),
        Special::AtomicInteger => wrapped(KryoValue::Int(r.i32()?)),
        Special::AtomicLong => wrapped(KryoValue::Long(r.i64()?)),
        Special::AtomicBoolean => wrapped(KryoValue::Boolean(r.bool()?)),
        Special::Text | Special::Link => match string(r)? {
            KryoValue::Null => KryoValue::Null,
            text => wrapped(text),
        },
        Special::Locale => {
            let mut part = || r.string().map(Option::unwrap_or_default);
            let (language, country, variant) = (part()?, part()?, part()?);
            wrapped(KryoValue::String(crate::jdk::locale_text(
                &language, &country, &variant, "", "",
            )))
        }
        Special::BitSet => {
            let len = r.var_u32()?;
            let len = r.count(len, "a BitSet's words")?;
            let mut words = Vec::with_capacity(len);
            for _ in 0..len {
                words.push(KryoValue::Long(r.i64()?));
            }
            wrapped(KryoValue::Collection {
                class: "[J".into(),
                items: words,
            })
        }
        Special::JavaSerialized => r.java_serialized(class)?,
    })
}

/// An array other than `byte[]` (Kryo's array serializers).
fn read_array(r: &mut Reader<'_>, schema: Option<&KryoSchema>, class: &str) -> Result<KryoValue> {
    let len = match r.var_u32()? {
        0 => return Ok(KryoValue::Null),
        n => n - 1,
    };
    let element = array_element(class).ok_or_else(|| r.error(KryoErrorKind::Malformed, "not an array class"))?;
    // Every element takes at least one byte, except in an array of
    // arrays or nulls, whose elements take one byte each too.
    let len = r.count(len, "an array length")?;
    let mut items = Vec::with_capacity(len);
    match Primitive::from_name(element) {
        Some(p) => {
            for _ in 0..len {
                items.push(match p {
                    Primitive::Boolean => KryoValue::Boolean(r.bool()?),
                    Primitive::Byte => KryoValue::Byte(r.u8()? as i8),
                    Primitive::Char => KryoValue::Char(r.u16()?),
                    Primitive::Short => KryoValue::Short(r.i16()?),
                    Primitive::Int => KryoValue::Int(r.var_i32()?),
                    Primitive::Long => KryoValue::Long(r.var_i64()?),
                    Primitive::Float => KryoValue::Float(r.f32()?),
                    Primitive::Double => KryoValue::Double(r.f64()?),
                });
            }
        }
        None if element == "java.lang.String" => {
            for _ in 0..len {
                items.push(string(r)?);
            }
        }
        None if is_final(schema, element) => {
            for _ in 0..len {
                items.push(tree::read_with_class(r, schema, element, None, true)?);
            }
        }
        None => {
            for _ in 0..len {
                items.push(tree::read_classed(r, schema, None)?);
            }
        }
    }
    Ok(KryoValue::Collection {
        class: class.to_owned(),
        items,
    })
}

/// A sorted collection's comparator, which must be null (natural order).
pub(crate) fn no_comparator(r: &mut Reader<'_>, class: &str) -> Result<()> {
    let at = r.pos();
    match tree::read_class(r)? {
        None => Ok(()),
        Some(comparator) => Err(KryoError::new(
            KryoErrorKind::Unsupported,
            Some(at),
            format!(
                "{class} ordered by a Comparator ({}): delayq reads natural order only",
                shown(&comparator)
            ),
        )),
    }
}

fn write_date(w: &mut Writer, d: &LocalDate) {
    w.var_u32(d.year as u32);
    w.u8(d.month);
    w.u8(d.day);
}

fn write_time(w: &mut Writer, t: &LocalTime) {
    if t.nano == 0 {
        if t.second == 0 {
            if t.minute == 0 {
                w.u8(!t.hour);
            } else {
                w.u8(t.hour);
                w.u8(!t.minute);
            }
        } else {
            w.u8(t.hour);
            w.u8(t.minute);
            w.u8(!t.second);
        }
    } else {
        w.u8(t.hour);
        w.u8(t.minute);
        w.u8(t.second);
        w.var_u32(t.nano);
    }
}

fn write_offset(w: &mut Writer, o: ZoneOffset) {
    if o.0 % 900 == 0 {
        w.u8((o.0 / 900) as i8 as u8);
    } else {
        w.u8(127);
        w.bytes(&o.0.to_le_bytes());
    }
}

fn write_time_value(w: &mut Writer, time: &JavaTime) -> Result<()> {
    time.check().map_err(KryoError::encode)?;
    match time {
        JavaTime::Duration { seconds, nanos } => {
            w.i64(*seconds);
            w.var_u32(*nanos);
        }
        JavaTime::LocalDate(d) => write_date(w, d),
        JavaTime::LocalTime(t) => write_time(w, t),
        JavaTime::LocalDateTime(dt) => {
            write_date(w, &dt.date);
            write_time(w, &dt.time);
        }
        JavaTime::ZoneOffset(o) => write_offset(w, *o),
        JavaTime::ZoneRegion(id) => w.string(Some(id))?,
        JavaTime::OffsetTime(t, o) => {
            write_time(w, t);
            write_offset(w, *o);
        }
        JavaTime::OffsetDateTime(dt, o) => {
            write_date(w, &dt.date);
            write_time(w, &dt.time);
            write_offset(w, *o);
        }
        JavaTime::ZonedDateTime(dt, _, zone) => {
            write_date(w, &dt.date);
            write_time(w, &dt.time);
            w.string(Some(&zone.to_string()))?;
        }
        JavaTime::Year(y) => w.var_u32(*y as u32),
        JavaTime::YearMonth { year, month } => {
            w.var_u32(*year as u32);
            w.u8(*month);
        }
        JavaTime::MonthDay { month, day } => {
            w.u8(*month);
            w.u8(*day);
        }
        JavaTime::Period { years, months, days } => {
            w.var_u32(*years as u32);
            w.var_u32(*months as u32);
            w.var_u32(*days as u32);
        }
        JavaTime::SqlDate(ms) | JavaTime::SqlTime(ms) => w.var_u64(*ms as u64),
        JavaTime::SqlTimestamp { seconds, nanos } => {
            // Kryo's DateSerializer keeps milliseconds (as Java's Kryo does).
            let ms = seconds
                .checked_mul(1000)
                .and_then(|ms| ms.checked_add(i64::from(nanos / 1_000_000)))
                .ok_or_else(|| KryoError::encode("a Timestamp out of range"))?;
            w.var_u64(ms as u64);
        }
    }
    Ok(())
}

/// `Locale.toString()` back to language, country and variant (Kryo keeps
/// no script or extensions).
fn locale_parts(text: &str) -> Result<(&str, &str, &str)> {
    if text.contains('#') {
        return Err(KryoError::encode(format!(
            "Locale {text}: Kryo writes language, country and variant only"
        )));
    }
    let mut parts = text.splitn(3, '_');
    Ok((
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    ))
}

/// Writes a value whose class has a [`Special`] serializer; `None` for
/// any other value.
pub(crate) fn write(w: &mut Writer, value: &KryoValue, generics: Option<&[JavaType]>) -> Option<Result<()>> {
    let class = value.java_class()?;
    // Throwables: Redisson hands them to Kryo's JavaSerializer.
    let kind = match value {
        KryoValue::Throwable { .. } => Special::JavaSerialized,
        _ => special(class)?,
    };
    Some(write_special(w, value, class, kind, generics))
}

fn write_special(
    w: &mut Writer,
    value: &KryoValue,
    class: &str,
    kind: Special,
    generics: Option<&[JavaType]>,
) -> Result<()> {
    let mismatch = || KryoError::encode(format!("{value:?} is not a {class} Kryo can write"));
    match (kind, value) {
        (Special::Time(_) | Special::SqlDate, KryoValue::Time(t)) => write_time_value(w, t)?,
        (Special::JdkEnum, KryoValue::Enum { ordinal, name, .. }) => {
            let ordinal = ordinal
                .or_else(|| name.as_deref().and_then(|n| crate::jdk::enums::ordinal(class, n)))
                .ok_or_else(mismatch)?;
            w.var_u32(ordinal + 1);
        }
        (Special::Array, KryoValue::Collection { items, .. }) => write_array(w, class, items)?,
        (Special::Immutable { .. }, KryoValue::Collection { items, .. }) => {
            tree::write_collection(w, items, generics, false, false)?
        }
        (Special::Immutable { .. }, KryoValue::Map { entries, .. }) => {
            tree::write_map(w, entries, generics, false, false)?
        }
        (Special::Sorted { .. }, KryoValue::Collection { items, .. }) => {
            tree::write_collection(w, items, generics, true, true)?
        }
        (Special::Sorted { .. }, KryoValue::Map { entries, .. }) => tree::write_map(w, entries, generics, true, true)?,
        (Special::Empty { .. }, KryoValue::Collection { items, .. }) if items.is_empty() => {}
        (Special::Empty { .. }, KryoValue::Map { entries, .. }) if entries.is_empty() => {}
        (Special::Singleton { .. }, KryoValue::Collection { items, .. }) if items.len() == 1 => {
            tree::write_classed(w, &items[0], None)?
        }
        (Special::Singleton { .. }, KryoValue::Map { entries, .. }) if entries.len() == 1 => {
            tree::write_classed(w, &entries[0].0, None)?;
            tree::write_classed(w, &entries[0].1, None)?;
        }
        (Special::EnumSet, KryoValue::EnumSet { element, items, .. }) => {
            tree::write_class(w, element)?;
            w.var_u32(u32::try_from(items.len()).map_err(|_| mismatch())?);
            for item in items {
                match item {
                    KryoValue::Enum { ordinal, name, .. } => {
                        let ordinal = ordinal
                            .or_else(|| name.as_deref().and_then(|n| crate::jdk::enums::ordinal(element, n)))
                            .ok_or_else(|| {
                                KryoError::encode(format!(
                                    "{element}.{}: Kryo writes an enum constant's ordinal, which this value lacks \
                                     (describe the enum in a schema)",
                                    name.as_deref().unwrap_or("?")
                                ))
                            })?;
                        w.var_u32(ordinal + 1);
                    }
                    _ => return Err(mismatch()),
                }
            }
        }
        (Special::Optional | Special::AtomicReference, KryoValue::Wrapped { value, .. }) => {
            tree::write_classed(w, value, None)?
        }
        (Special::AtomicInteger, KryoValue::Wrapped { value, .. }) => match **value {
            KryoValue::Int(v) => w.bytes(&v.to_le_bytes()),
            _ => return Err(mismatch()),
        },
        (Special::AtomicLong, KryoValue::Wrapped { value, .. }) => match **value {
            KryoValue::Long(v) => w.i64(v),
            _ => return Err(mismatch()),
        },
        (Special::AtomicBoolean, KryoValue::Wrapped { value, .. }) => match **value {
            KryoValue::Boolean(v) => w.bool(v),
            _ => return Err(mismatch()),
        },
        (Special::Text | Special::Link, KryoValue::Wrapped { value, .. }) => match &**value {
            KryoValue::String(s) => w.string(Some(s))?,
            _ => return Err(mismatch()),
        },
        (Special::Locale, KryoValue::Wrapped { value, .. }) => match &**value {
            KryoValue::String(s) => {
                let (language, country, variant) = locale_parts(s)?;
                w.string(Some(language))?;
                w.string(Some(country))?;
                w.string(Some(variant))?;
            }
            _ => return Err(mismatch()),
        },
        (Special::BitSet, KryoValue::Wrapped { value, .. }) => match &**value {
            KryoValue::Collection { items, .. } => {
                // BitSet.toLongArray(): no trailing zero words.
                let words: Vec<i64> = items
                    .iter()
                    .map(|i| match i {
                        KryoValue::Long(v) => Ok(*v),
                        _ => Err(mismatch()),
                    })
                    .collect::<Result<_>>()?;
                let used = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
                w.var_u32(used as u32);
                for word in &words[..used] {
                    w.i64(*word);
                }
            }
            _ => return Err(mismatch()),
        },
        (Special::JavaSerialized, _) => w.java_object(super::read::java_stream(class), value).map_err(|e| {
            KryoError::encode(format!(
                "{class} (Java serialization inside Kryo, as Kryo's JavaSerializer writes it): {}",
                e.message()
            ))
        })?,
        _ => return Err(mismatch()),
    }
    Ok(())
}

fn write_array(w: &mut Writer, class: &str, items: &[KryoValue]) -> Result<()> {
    let element = array_element(class).ok_or_else(|| KryoError::encode(format!("{class} is no array class")))?;
    w.var_u32(Writer::len_plus_one(items.len())?);
    let bad = |item: &KryoValue| {
        KryoValue::java_class(item).map_or_else(
            || KryoError::encode(format!("a null in a {element}[]")),
            |c| KryoError::encode(format!("a {c} in a {element}[]")),
        )
    };
    match Primitive::from_name(element) {
        Some(p) => {
            for item in items {
                match (p, item) {
                    (Primitive::Boolean, KryoValue::Boolean(v)) => w.bool(*v),
                    (Primitive::Byte, KryoValue::Byte(v)) => w.u8(*v as u8),
                    (Primitive::Char, KryoValue::Char(v)) => w.u16(*v),
                    (Primitive::Short, KryoValue::Short(v)) => w.i16(*v),
                    (Primitive::Int, KryoValue::Int(v)) => w.var_i32(*v),
                    (Primitive::Long, KryoValue::Long(v)) => w.var_i64(*v),
                    (Primitive::Float, KryoValue::Float(v)) => w.f32(*v),
                    (Primitive::Double, KryoValue::Double(v)) => w.f64(*v),
                    _ => return Err(bad(item)),
                }
            }
        }
        None if element == "java.lang.String" => {
            for item in items {
                match item {
                    KryoValue::String(s) => w.string(Some(s))?,
                    KryoValue::Null => w.string(None)?,
                    _ => return Err(bad(item)),
                }
            }
        }
        None if class::is_final_jdk_class(element) || element.starts_with('[') => {
            let declared = JavaType::class(element, Vec::new());
            for item in items {
                tree::write_known(w, &declared, item, true)?;
            }
        }
        None => {
            for item in items {
                tree::write_classed(w, item, None)?;
            }
        }
    }
    Ok(())
}
