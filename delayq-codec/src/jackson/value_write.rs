//! The Java value model ([`KryoValue`]) → Jackson's JSON, as Redisson's
//! `JsonJacksonCodec` writes the same object, so Java reads it back equal.
//!
//! Which values carry their class follows Redisson's typing: every value
//! whose declared type is not `final` (the payload itself is declared
//! `Object`), and `Long`s and `UUID`s always; Jackson's natural types
//! (`String`, `Integer`, `Double`, `Boolean`) never. A POJO field's declared
//! type is its [`KryoField::declared`](crate::kryo::KryoField).

use super::error::JacksonError;
use super::node::Node;
use super::value::element_type;
use crate::kryo::decimal;
use crate::kryo::{JavaTime, JavaType, KryoValue, LocalDateTime, LocalTime, ZoneId, ZoneOffset};

type R<T> = Result<T, JacksonError>;

/// Which `ObjectMapper` the Java side's `JsonJacksonCodec` has.
///
/// ```
/// use delayq_codec::jackson::Dialect;
/// assert_ne!(Dialect::Plain, Dialect::JavaTimeModule);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// `new JsonJacksonCodec()`: no `java.time` support (Java refuses to
    /// write or read a `java.time` value).
    Plain,
    /// An `ObjectMapper` with `JavaTimeModule` registered, its defaults
    /// kept: dates as timestamps (arrays, and seconds with nine decimals).
    JavaTimeModule,
}

/// Writes a value as Redisson's `JsonJacksonCodec` (with `dialect`'s
/// `ObjectMapper`) would, for Java to read back equal.
///
/// Refused with [`JacksonErrorKind::Encode`](super::JacksonErrorKind::Encode):
/// what Java cannot read back equal from Jackson's bytes (a `BitSet`, an
/// `Optional`, `java.time` values without `JavaTimeModule`, or as the
/// payload itself, where Jackson writes them without their class).
///
/// ```
/// use delayq_codec::jackson::{decode_value, encode_value, Dialect};
/// use delayq_codec::kryo::KryoValue;
///
/// let price = KryoValue::big_decimal("2.50").unwrap();
/// let json = encode_value(&price, Dialect::Plain).unwrap();
/// assert_eq!(json, br#"["java.math.BigDecimal",2.50]"#);
/// assert_eq!(decode_value(&json, None).unwrap(), price);
/// ```
pub fn encode_value(value: &KryoValue, dialect: Dialect) -> Result<Vec<u8>, JacksonError> {
    // Sorted collections in natural order, as Java writes them (Java's
    // Jackson adds each element with compareTo).
    use crate::jdk::sorted::{in_natural_order, JavaReads};
    let sorted = in_natural_order(value, JavaReads::ByCompareTo).map_err(JacksonError::encode)?;
    let value = sorted.as_ref().unwrap_or(value);
    let node = Writer {
        dialect,
        ids: std::cell::Cell::new(0),
    }
    .write(value, &JavaType::object(), true)?;
    let mut out = Vec::new();
    node.write(&mut out);
    Ok(out)
}

/// One value of a natural Rust type (the serde path) in a slot of type
/// `declared` (`root`: the payload itself).
pub(super) fn write_natural(value: &KryoValue, declared: &JavaType, root: bool, dialect: Dialect) -> R<Node> {
    Writer {
        dialect,
        ids: std::cell::Cell::new(0),
    }
    .write(value, declared, root)
}

struct Writer {
    dialect: Dialect,
    /// The last `@id` given to a throwable.
    ids: std::cell::Cell<i64>,
}

fn typed(class: &str, node: Node) -> Node {
    Node::Typed(class.to_owned(), Box::new(node))
}

/// `BigDecimal.toPlainString()`, which Jackson writes.
fn plain_decimal(unscaled: &[u8], scale: i32) -> R<String> {
    let digits = decimal::to_decimal_digits(unscaled).map_err(|e| JacksonError::encode(e.to_string()))?;
    let (sign, digits) = match digits.strip_prefix('-') {
        Some(d) => ("-", d.to_owned()),
        None => ("", digits),
    };
    Ok(if scale <= 0 {
        if digits == "0" {
            format!("{sign}0")
        } else {
            format!("{sign}{digits}{}", "0".repeat(scale.unsigned_abs() as usize))
        }
    } else {
        let scale = scale as usize;
        let padded = format!("{digits:0>width$}", width = scale + 1);
        let (int, frac) = padded.split_at(padded.len() - scale);
        format!("{sign}{int}.{frac}")
    })
}

/// Jackson's seconds with nine decimals: the second and its nanoseconds
/// joined (`InstantSerializer`).
fn seconds_text(seconds: i64, nanos: u32) -> String {
    format!("{seconds}.{nanos:09}")
}

fn time_parts(t: &LocalTime) -> Vec<Node> {
    let mut parts = vec![Node::Int(t.hour.into()), Node::Int(t.minute.into())];
    if t.second > 0 || t.nano > 0 {
        parts.push(Node::Int(t.second.into()));
    }
    if t.nano > 0 {
        parts.push(Node::Int(t.nano.into()));
    }
    parts
}

fn date_time_parts(dt: &LocalDateTime) -> Vec<Node> {
    let mut parts = vec![
        Node::Int(dt.date.year.into()),
        Node::Int(dt.date.month.into()),
        Node::Int(dt.date.day.into()),
    ];
    parts.extend(time_parts(&dt.time));
    parts
}

/// Seconds since the epoch of a date-time at an offset.
fn epoch_seconds(dt: &LocalDateTime, offset_seconds: i32) -> R<i64> {
    let text = format!("{dt}Z");
    match JavaTime::parse("java.sql.Timestamp", &text) {
        Ok(JavaTime::SqlTimestamp { seconds, .. }) => Ok(seconds - i64::from(offset_seconds)),
        _ => Err(JacksonError::encode(format!("{text} is out of range"))),
    }
}

impl Writer {
    /// `root`: the payload itself, where Java reads only what carries its class.
    fn write(&self, value: &KryoValue, declared: &JavaType, root: bool) -> R<Node> {
        let slot_typed = !declared.is_final() || declared.class_name() == "java.lang.Object";
        Ok(match value {
            KryoValue::Null => Node::Null,
            KryoValue::Boolean(b) => Node::Bool(*b),
            KryoValue::Byte(v) => Node::Int((*v).into()),
            KryoValue::Short(v) => Node::Int((*v).into()),
            KryoValue::Int(v) => Node::Int((*v).into()),
            KryoValue::Long(v) if declared.is_primitive() => Node::Int((*v).into()),
            KryoValue::Long(v) => typed("java.lang.Long", Node::Int((*v).into())),
            KryoValue::Float(v) => {
                let node = Node::Float {
                    value: (*v).into(),
                    single: true,
                };
                if root {
                    typed("java.lang.Float", node)
                } else {
                    node
                }
            }
            KryoValue::Double(v) => Node::Float {
                value: *v,
                single: false,
            },
            // A char may be a lone surrogate: written as its escape, as Java does.
            KryoValue::Char(c) => Node::Utf16(vec![*c]),
            KryoValue::String(s) => Node::Str(s.clone()),
            KryoValue::Bytes(b) => {
                use base64::Engine;
                Node::Str(base64::engine::general_purpose::STANDARD.encode(b))
            }
            KryoValue::Uuid(_) => {
                let text = match value.to_json() {
                    serde_json::Value::String(s) => s,
                    _ => unreachable!("a UUID's JSON is its text"),
                };
                typed("java.util.UUID", Node::Str(text))
            }
            KryoValue::Date(ms) => typed("java.util.Date", Node::Int((*ms).into())),
            KryoValue::BigInteger(b) => typed(
                "java.math.BigInteger",
                Node::Number(decimal::to_decimal_digits(b).map_err(|e| JacksonError::encode(e.to_string()))?),
            ),
            KryoValue::BigDecimal { unscaled, scale } => {
                if *scale < 0 {
                    return Err(JacksonError::encode(format!(
                        "java.math.BigDecimal {} (scale {scale}): Jackson writes it as a plain number, and Java \
                         reads it back with scale 0, another BigDecimal",
                        value.to_json_text()
                    )));
                }
                typed("java.math.BigDecimal", Node::Number(plain_decimal(unscaled, *scale)?))
            }
            KryoValue::Instant { seconds, nanos } => {
                self.time_module("java.time.Instant", root)?;
                let node = Node::Number(seconds_text(*seconds, *nanos));
                if slot_typed {
                    typed("java.time.Instant", node)
                } else {
                    node
                }
            }
            // Where the slot is not final (a List<Object>'s element), Java
            // writes each java.time value with its class, and reads it only so.
            KryoValue::Time(t) => match self.time(t, declared, root)? {
                node @ Node::Typed(..) => node,
                node if slot_typed => typed(t.java_class(), node),
                node => node,
            },
            // A constant where Object (or another non-final type) is
            // declared carries its class; Java reads a bare name as a String.
            // The payload itself goes bare, as Java writes it.
            KryoValue::Enum {
                class,
                name: Some(name),
                ..
            } if slot_typed && !root && declared.class_name() != class => typed(class, Node::Str(name.clone())),
            KryoValue::Enum { name: Some(name), .. } => Node::Str(name.clone()),
            KryoValue::Enum { class, .. } => {
                return Err(JacksonError::encode(format!(
                    "a constant of {class} known by its ordinal only: Jackson writes its name"
                )))
            }
            KryoValue::EnumSet { element, items, .. } => {
                let items = items
                    .iter()
                    .map(|i| self.write(i, &JavaType::final_class(element), false))
                    .collect::<R<Vec<_>>>()?;
                typed(&format!("java.util.EnumSet<{element}>"), Node::Array(items))
            }
            KryoValue::Collection { class, items } if class.starts_with('[') => {
                let element = element_type(class);
                let array = if class == "[C" {
                    let units: Vec<u16> = items
                        .iter()
                        .map(|i| match i {
                            KryoValue::Char(c) => Ok(*c),
                            _ => Err(JacksonError::encode("a char[] holding something else than chars")),
                        })
                        .collect::<R<_>>()?;
                    Node::Utf16(units)
                } else {
                    Node::Array(
                        items
                            .iter()
                            .map(|i| self.write(i, &element, false))
                            .collect::<R<Vec<_>>>()?,
                    )
                };
                // An array in an Object slot carries its class (Jackson leaves
                // it out for final elements, and Java then cannot read it).
                if slot_typed {
                    typed(class, array)
                } else {
                    array
                }
            }
            KryoValue::Collection { class, items } => {
                let element = declared.args().first().cloned().unwrap_or_else(JavaType::object);
                let items = items
                    .iter()
                    .map(|i| self.write(i, &element, false))
                    .collect::<R<Vec<_>>>()?;
                typed(class, Node::Array(items))
            }
            KryoValue::Map { class, entries } => self.map(class, entries, declared)?,
            KryoValue::Object { class, fields } => {
                let mut props = Vec::with_capacity(fields.len());
                for f in fields {
                    let node = self
                        .write(&f.value, &f.declared, false)
                        .map_err(|e| e.within(class, &f.name))?;
                    if node != Node::Null {
                        props.push((f.name.clone(), node));
                    }
                }
                props.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
                if slot_typed {
                    typed(class, Node::Object(props))
                } else {
                    Node::Object(props)
                }
            }
            KryoValue::Wrapped { class, value: inner } => match class.as_str() {
                "java.util.concurrent.atomic.AtomicInteger"
                | "java.util.concurrent.atomic.AtomicLong"
                | "java.util.concurrent.atomic.AtomicBoolean" => {
                    let node = match inner.as_ref() {
                        KryoValue::Long(v) => Node::Int((*v).into()),
                        other => self.write(other, &JavaType::object(), false)?,
                    };
                    typed(class, node)
                }
                "java.util.concurrent.atomic.AtomicReference" => {
                    let element = declared.args().first().cloned().unwrap_or_else(JavaType::object);
                    self.write(inner, &element, root)?
                }
                "java.util.Currency"
                | "java.util.Locale"
                | "java.net.URI"
                | "java.net.URL"
                | "java.lang.StringBuilder"
                | "java.lang.StringBuffer"
                    if !slot_typed =>
                {
                    self.write(inner, &JavaType::final_class("java.lang.String"), false)?
                }
                _ if class.starts_with("java.util.Collections$Checked")
                    || class == "java.util.Collections$UnmodifiableCollection" =>
                {
                    return Err(JacksonError::encode(format!(
                        "{class}: Java's Jackson cannot construct it, and refuses what it writes itself"
                    )))
                }
                _ if class.starts_with("java.util.Collections$") => match inner.as_ref() {
                    KryoValue::Map { entries, .. } => self.map(class, entries, declared)?,
                    KryoValue::Collection { items, .. } => {
                        let element = declared.args().first().cloned().unwrap_or_else(JavaType::object);
                        let items = items
                            .iter()
                            .map(|i| self.write(i, &element, false))
                            .collect::<R<Vec<_>>>()?;
                        typed(class, Node::Array(items))
                    }
                    _ => return Err(JacksonError::encode(format!("a {class} that holds no collection"))),
                },
                _ => {
                    return Err(JacksonError::encode(format!(
                        "{class}: Java's JsonJacksonCodec does not read it back equal from what Jackson writes \
                         (a BitSet's bits, an Optional, a Currency, Locale, URI or StringBuilder where Object is \
                         declared come back as something else)"
                    )))
                }
            },
            KryoValue::Throwable { class, message, cause } => {
                // As Redisson's mix-in writes it, with an empty stack trace
                // (not part of the value) and an object id of its own.
                self.ids.set(self.ids.get() + 1);
                let mut props = vec![("@id".to_owned(), Node::Int(self.ids.get().into()))];
                if let Some(cause) = cause {
                    props.push(("cause".into(), self.write(cause, &JavaType::object(), false)?));
                }
                if let Some(m) = message {
                    props.push(("localizedMessage".into(), Node::Str(m.clone())));
                    props.push(("message".into(), Node::Str(m.clone())));
                }
                props.push(("stackTrace".into(), Node::Array(Vec::new())));
                props.push((
                    "suppressed".into(),
                    typed("[Ljava.lang.Throwable;", Node::Array(Vec::new())),
                ));
                typed(class, Node::Object(props))
            }
        })
    }

    fn map(&self, class: &str, entries: &[(KryoValue, KryoValue)], declared: &JavaType) -> R<Node> {
        let value_type = match declared.args() {
            [_, v] => v.clone(),
            _ => JavaType::object(),
        };
        let mut id = class.to_owned();
        if class == "java.util.EnumMap" {
            match entries.first() {
                Some((KryoValue::Enum { class: key, .. }, _)) => {
                    id = format!("java.util.EnumMap<{key},java.lang.Object>")
                }
                _ => {
                    return Err(JacksonError::encode(
                        "an empty java.util.EnumMap: Jackson needs its key class, which the value does not hold",
                    ))
                }
            }
        }
        let mut props = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            let key = match k {
                KryoValue::String(s) => s.clone(),
                KryoValue::Enum { name: Some(n), .. } => n.clone(),
                KryoValue::Int(i) => i.to_string(),
                KryoValue::Long(i) => i.to_string(),
                other => {
                    return Err(JacksonError::encode(format!(
                        "a {class} key {}: Jackson writes keys as text, which Java reads back as Strings",
                        other.to_json_text()
                    )))
                }
            };
            props.push((key, self.write(v, &value_type, false)?));
        }
        Ok(typed(&id, Node::Object(props)))
    }

    fn time_module(&self, class: &str, root: bool) -> R<()> {
        if self.dialect == Dialect::Plain {
            return Err(JacksonError::encode(format!(
                "{class} without JavaTimeModule: Java's plain JsonJacksonCodec neither writes nor reads it"
            )));
        }
        if root {
            return Err(JacksonError::encode(format!(
                "{class} as the payload itself: JavaTimeModule writes it without its class, and Java reads it \
                 back as a number or a list, or not at all"
            )));
        }
        Ok(())
    }

    fn time(&self, t: &JavaTime, declared: &JavaType, root: bool) -> R<Node> {
        let class = t.java_class();
        Ok(match t {
            JavaTime::SqlTimestamp { seconds, nanos } => {
                if nanos % 1_000_000 != 0 {
                    return Err(JacksonError::encode(
                        "a java.sql.Timestamp with nanoseconds: Jackson writes its milliseconds only",
                    ));
                }
                let ms = seconds
                    .checked_mul(1000)
                    .and_then(|ms| ms.checked_add(i64::from(nanos / 1_000_000)))
                    .ok_or_else(|| JacksonError::encode("a java.sql.Timestamp out of range"))?;
                typed(class, Node::Int(ms.into()))
            }
            JavaTime::SqlDate(ms) => typed(class, Node::Int((*ms).into())),
            JavaTime::SqlTime(ms) => {
                // `Time.toString()` in UTC (the zone the reading JVM is taken to have).
                let s = ms.div_euclid(1000).rem_euclid(86_400);
                if ms.rem_euclid(1000) != 0 || ms.div_euclid(1000) != s {
                    return Err(JacksonError::encode(
                        "a java.sql.Time off 1970-01-01 or with milliseconds: Jackson writes its time of day only",
                    ));
                }
                typed(
                    class,
                    Node::Str(format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)),
                )
            }
            _ => {
                self.time_module(class, root)?;
                match t {
                    JavaTime::LocalDate(d) => Node::Array(vec![
                        Node::Int(d.year.into()),
                        Node::Int(d.month.into()),
                        Node::Int(d.day.into()),
                    ]),
                    JavaTime::LocalTime(lt) => Node::Array(time_parts(lt)),
                    JavaTime::LocalDateTime(dt) => Node::Array(date_time_parts(dt)),
                    JavaTime::OffsetTime(lt, o) => {
                        let mut parts = time_parts(lt);
                        parts.push(Node::Str(o.to_string()));
                        Node::Array(parts)
                    }
                    JavaTime::OffsetDateTime(dt, o) | JavaTime::ZonedDateTime(dt, Some(o), _) => {
                        // Jackson writes the instant, and Java reads it back at UTC:
                        // equals() holds only for values at UTC already.
                        let at_utc = match t {
                            JavaTime::ZonedDateTime(_, _, zone) => *zone == ZoneId::Offset(ZoneOffset(0)),
                            _ => o.0 == 0,
                        };
                        if !at_utc {
                            return Err(JacksonError::encode(format!(
                                "{t} ({class}): JavaTimeModule writes its instant, and Java reads it back at UTC, \
                                 which equals() tells apart"
                            )));
                        }
                        Node::Number(seconds_text(epoch_seconds(dt, o.0)?, dt.time.nano))
                    }
                    JavaTime::ZonedDateTime(_, None, zone) => {
                        return Err(JacksonError::encode(format!(
                            "a java.time.ZonedDateTime in {zone} without its offset (read from Kryo): its instant \
                             is not known"
                        )))
                    }
                    JavaTime::Duration { seconds, nanos } => {
                        let text = if *seconds < 0 && *nanos > 0 {
                            // The decimal value: -2 s + 0.5 s is -1.5.
                            let whole = seconds + 1;
                            let frac = 1_000_000_000 - nanos;
                            if whole == 0 {
                                format!("-0.{frac:09}")
                            } else {
                                format!("{whole}.{frac:09}")
                            }
                        } else {
                            seconds_text(*seconds, *nanos)
                        };
                        Node::Number(text)
                    }
                    JavaTime::Year(y) => Node::Int((*y).into()),
                    JavaTime::YearMonth { year, month } => {
                        Node::Array(vec![Node::Int((*year).into()), Node::Int((*month).into())])
                    }
                    JavaTime::ZoneRegion(r) if declared.class_name() == "java.time.ZoneId" || !declared.is_final() => {
                        typed("java.time.ZoneId", Node::Str(r.clone()))
                    }
                    other => Node::Str(other.to_string()),
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jackson::JacksonErrorKind;

    fn unscaled(n: i64) -> Vec<u8> {
        num_bigint::BigInt::from(n).to_signed_bytes_be()
    }

    #[test]
    fn plain_decimals_are_bigdecimal_to_plain_string() {
        for (n, scale, text) in [
            (250, 2, "2.50"),
            (5, 3, "0.005"),
            (-5, 3, "-0.005"),
            (12, -2, "1200"),
            (0, -3, "0"),
            (0, 2, "0.00"),
            (-7, 0, "-7"),
        ] {
            assert_eq!(plain_decimal(&unscaled(n), scale).unwrap(), text, "{n} scale {scale}");
        }
    }

    #[test]
    fn times_drop_zero_seconds_and_nanoseconds_as_jackson_does() {
        let t = |hour, minute, second, nano| LocalTime {
            hour,
            minute,
            second,
            nano,
        };
        let ints = |parts: Vec<Node>| -> Vec<i128> {
            parts
                .into_iter()
                .map(|n| match n {
                    Node::Int(i) => i,
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        assert_eq!(ints(time_parts(&t(10, 0, 0, 0))), [10, 0]);
        assert_eq!(ints(time_parts(&t(10, 0, 5, 0))), [10, 0, 5]);
        assert_eq!(ints(time_parts(&t(10, 0, 0, 1))), [10, 0, 0, 1]);
        assert_eq!(seconds_text(1_795_400_000, 1), "1795400000.000000001");
    }

    /// As Java's Jackson writes a `List<Object>` of them (checked in
    /// jshell): each with its class, which Java needs to read it back (a
    /// bare "MONDAY" is a String to Java).
    #[test]
    fn java_time_and_enums_in_an_object_slot_carry_their_class() {
        let list = KryoValue::Collection {
            class: "java.util.ArrayList".into(),
            items: vec![
                KryoValue::Time(JavaTime::parse("java.time.LocalDate", "2026-11-23").unwrap()),
                KryoValue::Time(JavaTime::parse("java.time.Duration", "PT3S").unwrap()),
                KryoValue::Instant { seconds: 5, nanos: 1 },
                KryoValue::Time(JavaTime::parse("java.time.MonthDay", "--11-23").unwrap()),
                KryoValue::Enum {
                    class: "java.time.DayOfWeek".into(),
                    ordinal: Some(0),
                    name: Some("MONDAY".into()),
                },
            ],
        };
        let json = encode_value(&list, Dialect::JavaTimeModule).unwrap();
        assert_eq!(
            std::str::from_utf8(&json).unwrap(),
            r#"["java.util.ArrayList",[["java.time.LocalDate",[2026,11,23]],["java.time.Duration",3.000000000],["java.time.Instant",5.000000001],["java.time.MonthDay","--11-23"],["java.time.DayOfWeek","MONDAY"]]]"#
        );
        assert_eq!(crate::jackson::decode_value(&json, None).unwrap(), list);
    }

    #[test]
    fn java_time_without_the_module_and_optionals_are_refused() {
        let list = |item: KryoValue| KryoValue::Collection {
            class: "java.util.ArrayList".into(),
            items: vec![item],
        };
        let instant = KryoValue::Instant { seconds: 0, nanos: 0 };
        let error = encode_value(&list(instant), Dialect::Plain).unwrap_err();
        assert_eq!(error.kind(), JacksonErrorKind::Encode);
        assert!(error.message().contains("java.time.Instant"), "{error}");
    }

    /// A lone surrogate in a `char` or `char[]` is written as the escape
    /// Java's Jackson writes (checked with Redisson 4.7.0's
    /// `JsonJacksonCodec`), never as U+FFFD, which Java would read as
    /// another char.
    #[test]
    fn lone_surrogates_in_chars_are_written_as_java_writes_them() {
        let chars = |units: &[u16]| KryoValue::Collection {
            class: "[C".into(),
            items: units.iter().map(|u| KryoValue::Char(*u)).collect(),
        };
        for (value, java) in [
            (KryoValue::Char(0xd83d), r#""\uD83D""#),
            // With its class, so that Java reads a char[] back.
            (chars(&[0xd83d, 0xde00, 0xdc00]), r#"["[C","\uD83D\uDE00\uDC00"]"#),
            (KryoValue::String("\u{1f600}".into()), r#""\uD83D\uDE00""#),
        ] {
            let json = encode_value(&value, Dialect::Plain).unwrap();
            assert_eq!(std::str::from_utf8(&json).unwrap(), java, "{value:?}");
        }
    }
}
