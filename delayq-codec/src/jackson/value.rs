//! Jackson's JSON → the Java value model ([`KryoValue`]) the binary codecs
//! share, so a `JsonJacksonCodec` payload reads to the same value as the
//! same object written by Kryo, Java serialization or River.
//!
//! The JSON is parsed keeping what Java keeps: properties in their order (a
//! `LinkedHashMap`'s order is its value), numbers as their text (a
//! `BigInteger`'s every digit, a `BigDecimal`'s scale, an `Instant`'s
//! nanoseconds). Where Jackson writes no class (a `final` declared type: a
//! `LocalDate` field, an `int[]`, a `String`), a [`KryoSchema`]'s declared
//! field types say what the JSON stands for, as Java's own class does.
//!
//! Jackson's forms, with and without `JavaTimeModule` (timestamps, its
//! default, or ISO text):
//!
//! | Java | Jackson |
//! | --- | --- |
//! | `Long`, `BigInteger`, `BigDecimal`, `Date`, `Timestamp`, `UUID`, atomics | `["class", value]` |
//! | a `List`, a `Set`, `Object[]`, `long[]` in an `Object` slot | `["class", [...]]` |
//! | `EnumSet<E>` | `["java.util.EnumSet<E>", ["A", ...]]` |
//! | a map, a POJO, a throwable | `{"@class": "class", ...}` |
//! | `Instant`, `OffsetDateTime`, `ZonedDateTime`, `Duration` | seconds with nine decimals (`1795400000.123456789`) |
//! | `LocalDate`, `LocalTime`, `LocalDateTime`, `OffsetTime`, `YearMonth` | arrays (`[2026,11,23]`) |
//! | `Year` | a number; `MonthDay`, `Period`, `ZoneOffset`, `ZoneId` their text |
//!
//! JSON has no back-references: every value is built from bytes of its own,
//! and what a schema adds (a POJO's absent null fields) is counted against
//! [`max_value_bytes`](crate::bounds::max_value_bytes) as it is built.

use super::error::{JacksonError, JacksonErrorKind};
use super::parse::{self, Json};
use super::ser::is_java_class;
use crate::bounds::{self, VALUE};
use crate::jdk::{enums, is_jdk_class};
use crate::kryo::schema::ClassDef;
use crate::kryo::{
    JavaTime, JavaType, KryoField, KryoSchema, KryoValue, LocalDate, LocalDateTime, LocalTime, ZoneId, ZoneOffset,
    MAX_DEPTH,
};

type R<T> = Result<T, JacksonError>;

/// Reads a payload of Redisson's `JsonJacksonCodec` (with or without
/// `JavaTimeModule`) as the Java value it holds. POJOs whose fields Jackson
/// writes without their class (`java.time` values, arrays) need `schema`.
///
/// A value the JSON does not hold exactly is refused with
/// [`JacksonErrorKind::Unsupported`], naming its class: a `BitSet` (Jackson
/// writes its `empty` property only), a JDK class written as its getters, a
/// `TreeMap`/`TreeSet` whose order shows a comparator (Jackson does not
/// write it).
///
/// ```
/// use delayq_codec::jackson::decode_value;
/// use delayq_codec::kryo::KryoValue;
///
/// let exact = decode_value(br#"["java.math.BigDecimal",2.50]"#, None).unwrap();
/// assert_eq!(exact, KryoValue::big_decimal("2.50").unwrap());
/// let ordered = decode_value(br#"{"@class":"java.util.LinkedHashMap","z":1,"a":2}"#, None).unwrap();
/// assert_eq!(ordered.to_json_text(), r#"{"z":1,"a":2}"#);
/// ```
pub fn decode_value(raw: &[u8], schema: Option<&KryoSchema>) -> Result<KryoValue, JacksonError> {
    let json = parse::parse_payload(raw)?;
    let mut reader = Reader {
        schema,
        left: bounds::max_value_bytes(raw.len()),
    };
    reader.read(json, &JavaType::object(), 0)
}

struct Reader<'s> {
    schema: Option<&'s KryoSchema>,
    /// Bytes the value may still take.
    left: usize,
}

/// Whether a string is a Jackson type id: a class name, an array class
/// (`[J`, `[Ljava.lang.Object;`), or a class with its generic arguments
/// (`java.util.EnumSet<java.time.DayOfWeek>`).
pub(super) fn is_type_id(s: &str) -> bool {
    let (base, args) = split_generics(s);
    (base.len() > 1 && base.starts_with('[') || is_java_class(base)) && args.iter().all(|a| is_java_class(a))
}

/// `java.util.EnumMap<java.time.DayOfWeek,java.lang.Object>` → the class and
/// its arguments (top-level, not nested).
fn split_generics(id: &str) -> (&str, Vec<&str>) {
    match id.split_once('<') {
        Some((base, rest)) => match rest.strip_suffix('>') {
            Some(args) if !args.contains('<') => (base, args.split(',').map(str::trim).collect()),
            // Nested generics: the arguments are not needed (only EnumSet's and EnumMap's are read).
            Some(_) => (base, Vec::new()),
            None => (id, Vec::new()),
        },
        None => (id, Vec::new()),
    }
}

fn is_array_type(ty: &JavaType) -> bool {
    ty.class_name().starts_with('[')
}

pub(super) fn element_type(array_class: &str) -> JavaType {
    match crate::kryo::java_type::array_element(array_class) {
        Some(e) if e.starts_with('[') => JavaType::final_class(e),
        Some(e) => JavaType::parse(e).unwrap_or_else(|_| JavaType::object()),
        None => JavaType::object(),
    }
}

fn is_map_class(class: &str) -> bool {
    is_jdk_class(class)
        && (class.ends_with("Map")
            || class.ends_with("Map1")
            || class.ends_with("MapN")
            || matches!(class, "java.util.Hashtable" | "java.util.Properties"))
}

fn is_view(class: &str) -> bool {
    ["Unmodifiable", "Synchronized", "Checked"]
        .iter()
        .any(|v| class.starts_with(&format!("java.util.Collections${v}")))
}

/// Sorted collections whose order is their comparator's.
fn is_sorted_class(class: &str) -> bool {
    matches!(
        class,
        "java.util.TreeMap"
            | "java.util.TreeSet"
            | "java.util.concurrent.ConcurrentSkipListMap"
            | "java.util.concurrent.ConcurrentSkipListSet"
    )
}

/// Whether values are in their natural order, as far as it is known
/// (strings by UTF-16 units, numbers by value); `None` when it is not.
fn naturally_ordered(values: &[&KryoValue]) -> Option<bool> {
    let key = |v: &KryoValue| -> Option<(Option<Vec<u16>>, Option<i128>)> {
        match v {
            KryoValue::String(s) => Some((Some(s.encode_utf16().collect()), None)),
            KryoValue::Int(i) => Some((None, Some((*i).into()))),
            KryoValue::Long(i) => Some((None, Some((*i).into()))),
            _ => None,
        }
    };
    let keys = values.iter().map(|v| key(v)).collect::<Option<Vec<_>>>()?;
    Some(keys.windows(2).all(|w| w[0] <= w[1]))
}

fn number_text(json: &Json, class: &str) -> R<Box<str>> {
    match json {
        Json::Number(text) => Ok(text.clone()),
        other => Err(JacksonError::malformed(format!(
            "a {class} written as {}",
            other.kind()
        ))),
    }
}

fn is_integer_text(text: &str) -> bool {
    !text.contains(['.', 'e', 'E'])
}

fn string(json: Json, class: &str) -> R<String> {
    match json {
        Json::Str(s) => Ok(s),
        other => Err(JacksonError::malformed(format!(
            "a {class} written as {}",
            other.kind()
        ))),
    }
}

fn bad(class: &str, text: &str, why: impl std::fmt::Display) -> JacksonError {
    JacksonError::malformed(format!("{text:?} is not a {class}: {why}"))
}

/// `seconds.nanos` as `InstantSerializer` writes it: the integer part, and
/// nine decimals of nanoseconds (before 1970 too: `-1.000001000` is second
/// -1 plus 1000 ns, as Jackson joins the two).
fn seconds_and_nanos(text: &str, class: &str) -> R<(i64, u32)> {
    if text.contains(['e', 'E']) {
        return Err(bad(class, text, "an exponent"));
    }
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let seconds: i64 = int.parse().map_err(|e| bad(class, text, e))?;
    if frac.len() > 9 {
        return Err(bad(class, text, "more than nine decimals"));
    }
    let nanos = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().map_err(|e| bad(class, text, e))?
    };
    Ok((seconds, nanos))
}

/// A decimal number of seconds as its value (`DurationSerializer`:
/// `-1.500000000` is -2 s + 0.5 s).
fn decimal_seconds(text: &str, class: &str) -> R<(i64, u32)> {
    let (seconds, nanos) = seconds_and_nanos(text, class)?;
    if text.starts_with('-') && nanos > 0 {
        Ok((seconds - 1, 1_000_000_000 - nanos))
    } else {
        Ok((seconds, nanos))
    }
}

/// The UTC date-time of an instant.
fn utc(seconds: i64, nanos: u32, class: &str) -> R<LocalDateTime> {
    let text = match (KryoValue::Instant { seconds, nanos }).to_json() {
        serde_json::Value::String(s) => s,
        _ => unreachable!("an instant's JSON is its text"),
    };
    match JavaTime::parse("java.time.OffsetDateTime", &text) {
        Ok(JavaTime::OffsetDateTime(dt, _)) => Ok(dt),
        _ => Err(bad(class, &text, "out of range")),
    }
}

fn ints(items: &[Json], class: &str) -> R<Vec<i64>> {
    items
        .iter()
        .map(|i| match i {
            Json::Number(t) if is_integer_text(t) => t.parse().map_err(|e| bad(class, t, e)),
            other => Err(JacksonError::malformed(format!(
                "a {class} array holding {}",
                other.kind()
            ))),
        })
        .collect()
}

fn narrow<T: TryFrom<i64>>(v: i64, class: &str) -> R<T> {
    T::try_from(v).map_err(|_| JacksonError::malformed(format!("{v} is out of range in a {class}")))
}

fn local_time(parts: &[i64], class: &str) -> R<LocalTime> {
    let get = |i: usize| parts.get(i).copied().unwrap_or(0);
    Ok(LocalTime {
        hour: narrow(get(0), class)?,
        minute: narrow(get(1), class)?,
        second: narrow(get(2), class)?,
        nano: narrow(get(3), class)?,
    })
}

fn local_date(parts: &[i64], class: &str) -> R<LocalDate> {
    Ok(LocalDate {
        year: narrow(parts[0], class)?,
        month: narrow(parts[1], class)?,
        day: narrow(parts[2], class)?,
    })
}

/// A `java.time` value in `JavaTimeModule`'s timestamp form (or its ISO
/// text, when `WRITE_DATES_AS_TIMESTAMPS` is off).
pub(super) fn time(class: &str, json: Json) -> R<KryoValue> {
    let time = match (class, json) {
        ("java.time.Instant", Json::Number(t)) => {
            let (seconds, nanos) = seconds_and_nanos(&t, class)?;
            return Ok(KryoValue::Instant { seconds, nanos });
        }
        ("java.time.Instant", Json::Str(s)) => match JavaTime::parse("java.sql.Timestamp", &s) {
            Ok(JavaTime::SqlTimestamp { seconds, nanos }) => return Ok(KryoValue::Instant { seconds, nanos }),
            Ok(_) => unreachable!("a timestamp parses to a timestamp"),
            Err(e) => return Err(bad(class, &s, e)),
        },
        ("java.time.OffsetDateTime" | "java.time.ZonedDateTime", Json::Number(t)) => {
            // Written as the instant; Java reads it back at UTC.
            let (seconds, nanos) = seconds_and_nanos(&t, class)?;
            let dt = utc(seconds, nanos, class)?;
            if class == "java.time.OffsetDateTime" {
                JavaTime::OffsetDateTime(dt, ZoneOffset(0))
            } else {
                JavaTime::ZonedDateTime(dt, Some(ZoneOffset(0)), ZoneId::Offset(ZoneOffset(0)))
            }
        }
        ("java.time.Duration", Json::Number(t)) => {
            let (seconds, nanos) = decimal_seconds(&t, class)?;
            JavaTime::Duration { seconds, nanos }
        }
        ("java.time.Year", Json::Number(t)) => JavaTime::Year(t.parse().map_err(|e| bad(class, &t, e))?),
        ("java.time.LocalDate", Json::Array(items)) => {
            let p = ints(&items, class)?;
            if p.len() != 3 {
                return Err(JacksonError::malformed(format!("a LocalDate of {} numbers", p.len())));
            }
            JavaTime::LocalDate(local_date(&p, class)?)
        }
        ("java.time.LocalTime", Json::Array(items)) => {
            let p = ints(&items, class)?;
            if !(2..=4).contains(&p.len()) {
                return Err(JacksonError::malformed(format!("a LocalTime of {} numbers", p.len())));
            }
            JavaTime::LocalTime(local_time(&p, class)?)
        }
        ("java.time.LocalDateTime", Json::Array(items)) => {
            let p = ints(&items, class)?;
            if !(5..=7).contains(&p.len()) {
                return Err(JacksonError::malformed(format!(
                    "a LocalDateTime of {} numbers",
                    p.len()
                )));
            }
            JavaTime::LocalDateTime(LocalDateTime {
                date: local_date(&p[..3], class)?,
                time: local_time(&p[3..], class)?,
            })
        }
        ("java.time.OffsetTime", Json::Array(mut items)) => {
            let offset = match items.pop() {
                Some(Json::Str(o)) => o.parse::<ZoneOffset>().map_err(|e| bad(class, &o, e))?,
                _ => return Err(JacksonError::malformed("an OffsetTime array without its offset")),
            };
            let p = ints(&items, class)?;
            if !(2..=4).contains(&p.len()) {
                return Err(JacksonError::malformed(format!("an OffsetTime of {} numbers", p.len())));
            }
            JavaTime::OffsetTime(local_time(&p, class)?, offset)
        }
        ("java.time.YearMonth", Json::Array(items)) => {
            let p = ints(&items, class)?;
            if p.len() != 2 {
                return Err(JacksonError::malformed(format!("a YearMonth of {} numbers", p.len())));
            }
            JavaTime::YearMonth {
                year: narrow(p[0], class)?,
                month: narrow(p[1], class)?,
            }
        }
        (_, Json::Str(s)) => JavaTime::parse(class, &s).map_err(|e| bad(class, &s, e))?,
        // Date and Timestamp: milliseconds.
        ("java.sql.Timestamp" | "java.sql.Date" | "java.sql.Time", Json::Number(t)) if is_integer_text(&t) => {
            let ms: i64 = t.parse().map_err(|e| bad(class, &t, e))?;
            match class {
                "java.sql.Timestamp" => JavaTime::SqlTimestamp {
                    seconds: ms.div_euclid(1000),
                    nanos: (ms.rem_euclid(1000) * 1_000_000) as u32,
                },
                "java.sql.Date" => JavaTime::SqlDate(ms),
                _ => JavaTime::SqlTime(ms),
            }
        }
        (_, other) => {
            return Err(JacksonError::malformed(format!(
                "a {class} written as {}",
                other.kind()
            )))
        }
    };
    time.check()
        .map_err(|e| JacksonError::malformed(format!("a {class}: {e}")))?;
    Ok(KryoValue::Time(time))
}

impl Reader<'_> {
    fn charge(&mut self, bytes: usize) -> R<()> {
        match self.left.checked_sub(bytes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(JacksonError::new(
                JacksonErrorKind::TooLarge,
                None,
                "the value would take more memory than delayq_codec::bounds allows for a payload of this size",
            )),
        }
    }

    fn read(&mut self, json: Json, ty: &JavaType, depth: usize) -> R<KryoValue> {
        if depth > MAX_DEPTH {
            return Err(JacksonError::new(
                JacksonErrorKind::TooDeep,
                None,
                format!("values nested deeper than {MAX_DEPTH}"),
            ));
        }
        self.charge(VALUE)?;
        match json {
            Json::Null => Ok(KryoValue::Null),
            Json::Object(mut props)
                if props
                    .first()
                    .is_some_and(|(k, v)| k == "@class" && matches!(v, Json::Str(_))) =>
            {
                let Json::Str(class) = props.remove(0).1 else {
                    unreachable!("checked above")
                };
                self.typed_object(&class, props, ty, depth)
            }
            Json::Array(mut items)
                if items.len() == 2 && !is_array_type(ty) && matches!(&items[0], Json::Str(s) if is_type_id(s)) =>
            {
                let inner = items.pop().expect("two items");
                let Some(Json::Str(id)) = items.pop() else {
                    unreachable!("checked above")
                };
                self.typed(&id, inner, ty, depth)
            }
            json => self.bare(json, ty, depth),
        }
    }

    fn enum_constant(&self, class: &str, name: String) -> R<KryoValue> {
        let ordinal = match self.schema.and_then(|s| s.get(class)) {
            Some(ClassDef::Enum { constants }) => Some(
                constants
                    .iter()
                    .position(|c| *c == name)
                    .ok_or_else(|| JacksonError::malformed(format!("{name} is not a constant of {class}")))?
                    as u32,
            ),
            // A JDK enum's constants are known: another name is no value of it.
            _ => match enums::constants(class) {
                Some(constants) => Some(
                    constants
                        .iter()
                        .position(|c| *c == name)
                        .ok_or_else(|| JacksonError::malformed(format!("{name} is not a constant of {class}")))?
                        as u32,
                ),
                None => None,
            },
        };
        Ok(KryoValue::Enum {
            class: class.to_owned(),
            ordinal,
            name: Some(name),
        })
    }

    fn is_enum(&self, class: &str) -> bool {
        enums::constants(class).is_some()
            || matches!(self.schema.and_then(|s| s.get(class)), Some(ClassDef::Enum { .. }))
    }

    /// A `["class", value]` wrapper.
    fn typed(&mut self, id: &str, inner: Json, ty: &JavaType, depth: usize) -> R<KryoValue> {
        let (class, args) = split_generics(id);
        if class == "java.util.EnumSet" {
            let element = args.first().copied().unwrap_or("java.lang.Enum");
            let Json::Array(items) = inner else {
                return Err(JacksonError::malformed(format!(
                    "an EnumSet written as {}",
                    inner.kind()
                )));
            };
            let items = items
                .into_iter()
                .map(|i| self.enum_constant(element, string(i, element)?))
                .collect::<R<Vec<_>>>()?;
            // More than 64 constants in the set: its enum has more, so Java
            // holds a JumboEnumSet whether the enum is known here or not.
            let jumbo = items.len() > 64
                || enums::constants(element).is_some_and(|c| c.len() > 64)
                || matches!(self.schema.and_then(|s| s.get(element)), Some(ClassDef::Enum { constants }) if constants.len() > 64);
            return Ok(KryoValue::EnumSet {
                jumbo,
                element: element.to_owned(),
                items,
            });
        }
        if class.starts_with('[') {
            return self.array(class, inner, depth);
        }
        match inner {
            Json::Array(items)
                if !JavaTime::is_time_class(class) && class != "java.time.Instant" && !self.is_enum(class) =>
            {
                let element = ty.args().first().cloned().unwrap_or_else(JavaType::object);
                self.collection(class, items, &element, depth)
            }
            inner => self.bare(inner, &JavaType::class(class, Vec::new()), depth),
        }
    }

    fn collection(&mut self, class: &str, items: Vec<Json>, element: &JavaType, depth: usize) -> R<KryoValue> {
        let items = items
            .into_iter()
            .map(|i| self.read(i, element, depth + 1))
            .collect::<R<Vec<_>>>()?;
        if is_sorted_class(class) && naturally_ordered(&items.iter().collect::<Vec<_>>()) == Some(false) {
            return Err(JacksonError::unsupported(format!(
                "a {class} out of its elements' natural order had a comparator, which Jackson does not write \
                 (Java reads it back in natural order)"
            )));
        }
        if is_view(class) {
            let inner = if class.contains("Set") {
                "java.util.LinkedHashSet"
            } else {
                "java.util.ArrayList"
            };
            return Ok(KryoValue::Wrapped {
                class: class.to_owned(),
                value: Box::new(KryoValue::Collection {
                    class: inner.to_owned(),
                    items,
                }),
            });
        }
        Ok(KryoValue::Collection {
            class: class.to_owned(),
            items,
        })
    }

    /// A Java array of class `class` (`[J`, `[[I`, `[Ljava.lang.String;`).
    fn array(&mut self, class: &str, json: Json, depth: usize) -> R<KryoValue> {
        match (class, json) {
            ("[B", Json::Str(text)) => {
                use base64::Engine;
                self.charge(text.len())?;
                base64::engine::general_purpose::STANDARD
                    .decode(text.as_bytes())
                    .map(KryoValue::Bytes)
                    .map_err(|e| JacksonError::malformed(format!("a byte[] that is not base64: {e}")))
            }
            // Jackson writes a char[] as a string.
            ("[C", Json::Str(text)) => {
                let items: Vec<KryoValue> = text.encode_utf16().map(KryoValue::Char).collect();
                self.charge(items.len() * VALUE)?;
                Ok(KryoValue::Collection {
                    class: class.to_owned(),
                    items,
                })
            }
            (_, Json::Array(items)) => {
                let element = element_type(class);
                let items = items
                    .into_iter()
                    .map(|i| self.read(i, &element, depth + 1))
                    .collect::<R<Vec<_>>>()?;
                Ok(KryoValue::Collection {
                    class: class.to_owned(),
                    items,
                })
            }
            (_, other) => Err(JacksonError::malformed(format!(
                "a {class} written as {}",
                other.kind()
            ))),
        }
    }

    /// An object with `"@class"`: a map, a throwable or a POJO.
    fn typed_object(&mut self, id: &str, props: Vec<(String, Json)>, ty: &JavaType, depth: usize) -> R<KryoValue> {
        let (class, args) = split_generics(id);
        if is_map_class(class) {
            let (key, value) = match (args.as_slice(), ty.args()) {
                ([k, v], _) => (
                    JavaType::class(k, Vec::new()),
                    if *v == "java.lang.Object" {
                        JavaType::object()
                    } else {
                        JavaType::class(v, Vec::new())
                    },
                ),
                (_, [k, v]) => (k.clone(), v.clone()),
                _ => (JavaType::class("java.lang.String", Vec::new()), JavaType::object()),
            };
            return self.map(class, props, &key, &value, depth);
        }
        if props.iter().any(|(k, _)| k == "stackTrace") {
            return self.throwable(class, props, depth);
        }
        if class == "java.util.BitSet" {
            return Err(JacksonError::unsupported(
                "java.util.BitSet: Jackson writes a BitSet as a bean of its `empty` property, without its bits \
                 (Java reads back an empty BitSet)",
            ));
        }
        if is_jdk_class(class) {
            return Err(JacksonError::unsupported(format!(
                "{class} is a JDK class Jackson writes as its getters, which are not its value"
            )));
        }
        self.pojo(class, props, depth)
    }

    fn map_key(&self, key: String, ty: &JavaType) -> R<KryoValue> {
        let class = ty.class_name();
        Ok(match class {
            "java.lang.Integer" => KryoValue::Int(key.parse().map_err(|e| bad(class, &key, e))?),
            "java.lang.Long" => KryoValue::Long(key.parse().map_err(|e| bad(class, &key, e))?),
            _ if self.is_enum(class) => self.enum_constant(class, key)?,
            _ => KryoValue::String(key),
        })
    }

    fn map(
        &mut self,
        class: &str,
        props: Vec<(String, Json)>,
        key: &JavaType,
        value: &JavaType,
        depth: usize,
    ) -> R<KryoValue> {
        let mut entries = Vec::with_capacity(props.len());
        for (k, v) in props {
            self.charge(VALUE + k.len())?;
            entries.push((self.map_key(k, key)?, self.read(v, value, depth + 1)?));
        }
        if is_sorted_class(class)
            && naturally_ordered(&entries.iter().map(|(k, _)| k).collect::<Vec<_>>()) == Some(false)
        {
            return Err(JacksonError::unsupported(format!(
                "a {class} out of its keys' natural order had a comparator, which Jackson does not write (Java \
                 reads it back in natural order)"
            )));
        }
        if is_view(class) {
            return Ok(KryoValue::Wrapped {
                class: class.to_owned(),
                value: Box::new(KryoValue::Map {
                    class: "java.util.LinkedHashMap".into(),
                    entries,
                }),
            });
        }
        Ok(KryoValue::Map {
            class: class.to_owned(),
            entries,
        })
    }

    /// A throwable as Redisson's mix-in writes it: its class, message,
    /// cause, stack trace and suppressed ones; the value is the first three.
    fn throwable(&mut self, class: &str, props: Vec<(String, Json)>, depth: usize) -> R<KryoValue> {
        let (mut message, mut cause) = (None, None);
        for (name, value) in props {
            match (name.as_str(), value) {
                ("message", Json::Str(m)) => message = Some(m),
                ("message" | "cause", Json::Null) => {}
                ("cause", c @ Json::Object(_)) => {
                    cause = Some(Box::new(self.read(c, &JavaType::object(), depth + 1)?))
                }
                ("cause", _) => {
                    return Err(JacksonError::unsupported(format!(
                        "{class} whose cause is a reference to a throwable written before (@id)"
                    )))
                }
                _ => {}
            }
        }
        Ok(KryoValue::Throwable {
            class: class.to_owned(),
            message,
            cause,
        })
    }

    fn pojo(&mut self, class: &str, mut props: Vec<(String, Json)>, depth: usize) -> R<KryoValue> {
        props.retain(|(k, _)| k != "@id");
        let fields = match self.schema.and_then(|s| s.get(class)) {
            Some(ClassDef::Pojo {
                fields,
                unresolved,
                refused,
                ..
            }) => {
                if let Some(why) = refused.as_ref().or(unresolved.as_ref()) {
                    return Err(JacksonError::unsupported(format!("{class}: {why}")));
                }
                let mut out = Vec::with_capacity(fields.len());
                for (name, declared) in fields {
                    // The field, its name and its declared type's clone.
                    self.charge(bounds::field(name, declared))?;
                    let value = match props.iter().position(|(k, _)| k == name) {
                        Some(at) => self
                            .read(props.remove(at).1, declared, depth + 1)
                            .map_err(|e| e.within(class, name))?,
                        // Jackson leaves null fields out: the null is the
                        // schema's, not the payload's, and counted here.
                        None => {
                            self.charge(VALUE)?;
                            KryoValue::Null
                        }
                    };
                    out.push(KryoField::new(name.clone(), declared.clone(), value));
                }
                if let Some((extra, _)) = props.first() {
                    return Err(JacksonError::malformed(format!(
                        "{class} has no field {extra:?} in the schema"
                    )));
                }
                out
            }
            Some(ClassDef::Enum { .. }) => {
                return Err(JacksonError::malformed(format!(
                    "{class} is an enum, written as an object"
                )))
            }
            None => {
                let mut out = Vec::with_capacity(props.len());
                for (name, value) in props {
                    self.charge(bounds::field(&name, &JavaType::object()))?;
                    let value = self
                        .read(value, &JavaType::object(), depth + 1)
                        .map_err(|e| e.within(class, &name))?;
                    out.push(KryoField::new(name, JavaType::object(), value));
                }
                out
            }
        };
        Ok(KryoValue::Object {
            class: class.to_owned(),
            fields,
        })
    }

    /// A value Jackson wrote without its class: its declared type says what
    /// it is (`Object`: JSON's own types, as Jackson reads them untyped).
    fn bare(&mut self, json: Json, ty: &JavaType, depth: usize) -> R<KryoValue> {
        let class = ty.class_name();
        if let Json::Str(s) = &json {
            self.charge(s.len())?;
        }
        let wrapped = |class: &str, value: KryoValue| KryoValue::Wrapped {
            class: class.to_owned(),
            value: Box::new(value),
        };
        Ok(match class {
            "java.lang.Object" | "java.io.Serializable" | "java.lang.Comparable" => self.untyped(json, depth)?,
            "java.lang.Boolean" => match json {
                Json::Bool(b) => KryoValue::Boolean(b),
                other => {
                    return Err(JacksonError::malformed(format!(
                        "a boolean written as {}",
                        other.kind()
                    )))
                }
            },
            "java.lang.Integer" | "java.lang.Long" | "java.lang.Short" | "java.lang.Byte" => {
                let text = number_text(&json, class)?;
                let n: i64 = if is_integer_text(&text) {
                    text.parse().map_err(|e| bad(class, &text, e))?
                } else {
                    return Err(bad(class, &text, "not an integer"));
                };
                match class {
                    "java.lang.Integer" => KryoValue::Int(narrow(n, class)?),
                    "java.lang.Short" => KryoValue::Short(narrow(n, class)?),
                    "java.lang.Byte" => KryoValue::Byte(narrow(n, class)?),
                    _ => KryoValue::Long(n),
                }
            }
            "java.lang.Double" | "java.lang.Float" => {
                let text = match json {
                    Json::Number(t) => t.to_string(),
                    Json::Str(s) if matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") => {
                        s.replace("Infinity", "inf")
                    }
                    other => {
                        return Err(JacksonError::malformed(format!(
                            "a {class} written as {}",
                            other.kind()
                        )))
                    }
                };
                let v: f64 = text.parse().map_err(|e| bad(class, &text, e))?;
                if class == "java.lang.Float" {
                    KryoValue::Float(text.parse().map_err(|e| bad(class, &text, e))?)
                } else {
                    KryoValue::Double(v)
                }
            }
            "java.lang.Character" => {
                let s = string(json, class)?;
                let mut units = s.encode_utf16();
                match (units.next(), units.next()) {
                    (Some(c), None) => KryoValue::Char(c),
                    _ => return Err(bad(class, &s, "not one character")),
                }
            }
            "java.lang.String" => KryoValue::String(string(json, class)?),
            "java.math.BigInteger" => {
                let text = number_text(&json, class)?;
                if !is_integer_text(&text) {
                    return Err(bad(class, &text, "not an integer"));
                }
                let (bytes, _) = crate::kryo::decimal::parse(&text).map_err(JacksonError::unsupported)?;
                self.charge(bytes.len())?;
                KryoValue::BigInteger(bytes)
            }
            "java.math.BigDecimal" => {
                let text = number_text(&json, class)?;
                let (unscaled, scale) = crate::kryo::decimal::parse(&text).map_err(JacksonError::unsupported)?;
                self.charge(unscaled.len())?;
                KryoValue::BigDecimal { unscaled, scale }
            }
            "java.util.Date" => {
                let text = number_text(&json, class)?;
                KryoValue::Date(text.parse().map_err(|e| bad(class, &text, e))?)
            }
            "java.sql.Time" if matches!(json, Json::Str(_)) => {
                // `Time.toString()`: the time of day, in the writer's zone (taken as UTC).
                let s = string(json, class)?;
                let t: LocalTime = s.parse().map_err(|e| bad(class, &s, e))?;
                let ms = (i64::from(t.hour) * 3600 + i64::from(t.minute) * 60 + i64::from(t.second)) * 1000;
                KryoValue::Time(JavaTime::SqlTime(ms))
            }
            "java.util.UUID" => {
                let s = string(json, class)?;
                let hex: String = s.chars().filter(|c| *c != '-').collect();
                let groups: Vec<usize> = s.split('-').map(str::len).collect();
                if groups != [8, 4, 4, 4, 12] {
                    return Err(bad(class, &s, "not a UUID"));
                }
                KryoValue::Uuid(u128::from_str_radix(&hex, 16).map_err(|e| bad(class, &s, e))?)
            }
            "java.time.Instant" => time(class, json)?,
            c if JavaTime::is_time_class(c) => time(c, json)?,
            "java.util.concurrent.atomic.AtomicInteger" => wrapped(
                class,
                self.bare(json, &JavaType::class("java.lang.Integer", Vec::new()), depth)?,
            ),
            "java.util.concurrent.atomic.AtomicLong" => wrapped(
                class,
                self.bare(json, &JavaType::class("java.lang.Long", Vec::new()), depth)?,
            ),
            "java.util.concurrent.atomic.AtomicBoolean" => wrapped(
                class,
                self.bare(json, &JavaType::class("java.lang.Boolean", Vec::new()), depth)?,
            ),
            "java.util.concurrent.atomic.AtomicReference" => {
                let element = ty.args().first().cloned().unwrap_or_else(JavaType::object);
                wrapped(class, self.read(json, &element, depth + 1)?)
            }
            "java.util.Currency"
            | "java.util.Locale"
            | "java.net.URI"
            | "java.net.URL"
            | "java.lang.StringBuilder"
            | "java.lang.StringBuffer" => wrapped(class, KryoValue::String(string(json, class)?)),
            c if c.starts_with('[') => self.array(c, json, depth)?,
            c if self.is_enum(c) || (!is_jdk_class(c) && matches!(json, Json::Str(_)) && self.schema_knows_not(c)) => {
                self.enum_constant(c, string(json, c)?)?
            }
            c if matches!(self.schema.and_then(|s| s.get(c)), Some(ClassDef::Pojo { .. })) => match json {
                Json::Object(props) => self.pojo(c, props, depth)?,
                other => return Err(JacksonError::malformed(format!("a {c} written as {}", other.kind()))),
            },
            // A collection or map interface, or a class of the user's: JSON's own shapes.
            c if !is_jdk_class(c) || c.starts_with("java.util.") && !c.contains('$') && Self::shaped(&json) => {
                match json {
                    Json::Array(items) => {
                        let element = ty.args().first().cloned().unwrap_or_else(JavaType::object);
                        self.collection("java.util.ArrayList", items, &element, depth)?
                    }
                    Json::Object(props) => match ty.args() {
                        [k, v] => self.map("java.util.LinkedHashMap", props, k, v, depth)?,
                        _ if is_jdk_class(c) => self.map(
                            "java.util.LinkedHashMap",
                            props,
                            &JavaType::class("java.lang.String", Vec::new()),
                            &JavaType::object(),
                            depth,
                        )?,
                        _ => self.pojo(c, props, depth)?,
                    },
                    other => self.untyped(other, depth)?,
                }
            }
            c => {
                return Err(JacksonError::unsupported(format!(
                    "{c} is a JDK class delayq does not read from Jackson"
                )))
            }
        })
    }

    fn shaped(json: &Json) -> bool {
        matches!(json, Json::Array(_) | Json::Object(_))
    }

    /// A class the schema does not describe (a string for it is taken as an
    /// enum constant, as Jackson writes an enum).
    fn schema_knows_not(&self, class: &str) -> bool {
        self.schema.and_then(|s| s.get(class)).is_none()
    }

    /// JSON without a class where Java declares `Object`: JSON's scalars
    /// as Jackson reads them untyped. An array or an object there is a
    /// `final` class Jackson wrote without its class (`List.of`, `int[]`,
    /// a `LocalDate`'s `[2026,11,23]`, `Map.of`, a final POJO): the bytes do
    /// not say which, and Java's `JsonJacksonCodec` refuses them too.
    fn untyped(&mut self, json: Json, _depth: usize) -> R<KryoValue> {
        Ok(match json {
            Json::Array(_) | Json::Object(_) => {
                return Err(JacksonError::unsupported(format!(
                    "{} without its class where Java declares Object: Jackson writes a final class so \
                     (List.of, Set.of, Map.of, an array of a final type, a java.time value, a final POJO), and \
                     neither delayq nor Java's JsonJacksonCodec can tell which (jackson::to_plain_json reads it \
                     as plain JSON)",
                    json.kind()
                )))
            }
            Json::Null => KryoValue::Null,
            Json::Bool(b) => KryoValue::Boolean(b),
            Json::Str(s) => KryoValue::String(s),
            Json::Number(text) if is_integer_text(&text) => match text.parse::<i64>() {
                Ok(n) => i32::try_from(n).map_or(KryoValue::Long(n), KryoValue::Int),
                Err(_) => {
                    let (bytes, _) = crate::kryo::decimal::parse(&text).map_err(JacksonError::unsupported)?;
                    self.charge(bytes.len())?;
                    KryoValue::BigInteger(bytes)
                }
            },
            // Jackson reads an untyped decimal as a Double, as Java does here.
            Json::Number(text) => KryoValue::Double(text.parse().map_err(|e| bad("java.lang.Double", &text, e))?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(json: &str) -> JacksonError {
        decode_value(json.as_bytes(), None).expect_err(json)
    }

    #[test]
    fn type_ids_are_classes_arrays_or_classes_with_class_arguments() {
        for id in [
            "java.util.ArrayList",
            "[J",
            "[Ljava.lang.Object;",
            "java.util.EnumSet<java.time.DayOfWeek>",
        ] {
            assert!(is_type_id(id), "{id}");
        }
        for id in ["[", "ArrayList", "java.util.EnumSet<x>", "a b.C", ""] {
            assert!(!is_type_id(id), "{id}");
        }
        assert_eq!(
            split_generics("java.util.EnumMap<java.time.DayOfWeek, java.lang.Object>"),
            ("java.util.EnumMap", vec!["java.time.DayOfWeek", "java.lang.Object"])
        );
        assert_eq!(split_generics("a.B<c.D<e.F>>"), ("a.B", vec![]));
        assert_eq!(split_generics("a.B<c.D"), ("a.B<c.D", vec![]));
    }

    #[test]
    fn decimal_seconds_before_the_epoch_borrow_a_second() {
        assert_eq!(seconds_and_nanos("1.5", "t").unwrap(), (1, 500_000_000));
        assert_eq!(decimal_seconds("-1.000001000", "t").unwrap(), (-2, 999_999_000));
        assert_eq!(decimal_seconds("-1", "t").unwrap(), (-1, 0));
        for text in ["1e3", "1.0123456789", "x"] {
            assert!(seconds_and_nanos(text, "t").is_err(), "{text}");
        }
    }

    #[test]
    fn natural_order_is_utf_16_order_for_strings() {
        // U+1F600 is a surrogate pair (0xD83D...), before U+FFFF in UTF-16,
        // after it in UTF-8 and in Rust's str order.
        let (emoji, last) = (KryoValue::String("😀".into()), KryoValue::String("\u{ffff}".into()));
        assert_eq!(naturally_ordered(&[&emoji, &last]), Some(true));
        assert_eq!(naturally_ordered(&[&last, &emoji]), Some(false));
        assert_eq!(
            naturally_ordered(&[&KryoValue::Int(2), &KryoValue::Long(10)]),
            Some(true)
        );
        assert_eq!(naturally_ordered(&[&KryoValue::Null]), None);
        assert!(decode_value(r#"["java.util.TreeSet",["😀","\uffff"]]"#.as_bytes(), None).is_ok());
        assert_eq!(
            refused(r#"["java.util.TreeSet",["\uffff","😀"]]"#).kind(),
            JacksonErrorKind::Unsupported
        );
    }

    #[test]
    fn numbers_a_class_does_not_hold_are_refused_not_rounded() {
        for json in [
            r#"["java.math.BigInteger",1.0]"#,
            r#"["java.math.BigInteger",1E3]"#,
            r#"["java.lang.Long",9223372036854775808]"#,
            r#"["[J",[1.5]]"#,
        ] {
            assert_eq!(refused(json).kind(), JacksonErrorKind::Malformed, "{json}");
        }
        // Java's BigDecimal has no negative zero.
        assert_eq!(
            decode_value(br#"["java.math.BigDecimal",-0.0]"#, None).unwrap(),
            KryoValue::big_decimal("0.0").unwrap()
        );
    }

    #[test]
    fn an_enum_set_holds_only_its_enum_s_constants() {
        let days = decode_value(
            br#"["java.util.EnumSet<java.time.DayOfWeek>",["MONDAY","SUNDAY"]]"#,
            None,
        )
        .unwrap();
        let KryoValue::EnumSet { items, .. } = days else {
            panic!("{days:?}")
        };
        assert!(
            matches!(&items[1], KryoValue::Enum { ordinal: Some(6), .. }),
            "{items:?}"
        );
        let error = refused(r#"["java.util.EnumSet<java.time.DayOfWeek>",["FUNDAY"]]"#);
        assert_eq!(error.kind(), JacksonErrorKind::Malformed);
        assert!(error.message().contains("FUNDAY"), "{error}");
        assert_eq!(
            refused(r#"["java.util.EnumSet<java.time.DayOfWeek>",{}]"#).kind(),
            JacksonErrorKind::Malformed
        );
    }

    /// An enum of more than 64 constants is a `JumboEnumSet` in Java; a set
    /// of more than 64 says so even when the enum is not known here.
    #[test]
    fn an_enum_set_of_more_than_64_constants_is_a_jumbo_enum_set() {
        let names = |n: usize| (0..n).map(|i| format!("\"C{i}\"")).collect::<Vec<_>>().join(",");
        for (n, class) in [(65, "java.util.JumboEnumSet"), (3, "java.util.RegularEnumSet")] {
            let json = format!(r#"["java.util.EnumSet<com.shop.Big>",[{}]]"#, names(n));
            let set = decode_value(json.as_bytes(), None).unwrap();
            assert_eq!(set.java_class(), Some(class), "{n} constants");
        }
    }
}
