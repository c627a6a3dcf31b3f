//! [`KryoValue`] ⇄ JSON, for tools and the CLI.
//!
//! | Java | JSON |
//! | --- | --- |
//! | `null` | `null` |
//! | `Boolean` | `true` / `false` |
//! | `Byte`, `Short`, `Integer`, `Long`, `BigInteger` | number (a `BigInteger` beyond 64 bits: string in `to_json`, every digit as a number in [`KryoValue::to_json_text`]) |
//! | `Float`, `Double` | number (`"NaN"`, `"Infinity"`, `"-Infinity"` as strings) |
//! | `BigDecimal` | number; [`KryoValue::to_json_text`] keeps its exact digits (`12.50`) |
//! | `BigInteger`, `BigDecimal` beyond [`MAX_DECIMAL_BITS`](super::MAX_DECIMAL_BITS) | hexadecimal string: `"-0x1f…"`, `"0x4e2… scale 2"` (unscaled value and scale) |
//! | `Character`, `String` | string (a `char` that is a lone UTF-16 surrogate: its escape, `"\\uD83D"`) |
//! | `byte[]` | hex string (`"0102ff"`) |
//! | `UUID` | string (`"123e4567-e89b-12d3-a456-426614174000"`) |
//! | `Date` | string in the shape Jackson writes it (`"2026-11-23T02:13:20.000+00:00"`; the year as ISO-8601 prints it: `"+10000-01-01T00:00:00.000+00:00"`, `"-0001-…"`) |
//! | `Instant` | ISO-8601 string as `Instant.toString()` (`"2026-11-23T02:13:20.123Z"`) |
//! | other `java.time` values, `java.sql` dates ([`JavaTime`](super::JavaTime)) | string, Java's `toString()` (`"2026-11-23T02:13:20.123456789"`, `"PT1H30M"`, `"Europe/Paris"`) |
//! | `Optional`, atomics, `Currency`, `Locale`, `URI`, `URL`, `StringBuilder`, `Collections` views | the value they hold (`Optional.empty()`: `null`) |
//! | `BitSet` | array of its set bits (`[1, 3, 64]`) |
//! | `EnumSet` | array of constant names |
//! | throwable | `{"class": …, "message": …, "cause": …}` |
//! | enum | the constant's name (its ordinal, a number, without a schema) |
//! | collection | array |
//! | map | object (non-string keys as their JSON text; a collection, map or POJO key inside two such keys as its class in brackets, `"<java.util.HashMap>"`) |
//! | POJO | object of its fields |
//!
//! The other way ([`KryoValue::from_json`]) needs the Java type: numbers
//! become the declared boxed type (`Long` where the type says `Object`),
//! arrays `ArrayList`s and objects `HashMap`s unless the type or schema says
//! otherwise; dates and `BigDecimal`s also accept strings (a string keeps a
//! `BigDecimal`'s scale exactly: `"12.50"`), and `BigInteger`s and
//! `BigDecimal`s the hexadecimal strings above.

use serde_json::{Map, Number, Value};

use super::class::{self, Builtin};
use super::decimal;
use super::java_type::{JavaType, Primitive};
use super::schema::{ClassDef, KryoSchema};
use super::value::{KryoField, KryoValue};

impl KryoValue {
    /// The value as JSON (table in the module docs).
    ///
    /// ```
    /// use delayq_codec::kryo::KryoValue;
    /// assert_eq!(KryoValue::Uuid(0x123e4567_e89b_12d3_a456_426614174000).to_json(),
    ///            serde_json::json!("123e4567-e89b-12d3-a456-426614174000"));
    /// ```
    pub fn to_json(&self) -> Value {
        self.json(0)
    }

    /// `keys`: how many non-string map keys written as JSON text hold this
    /// value (each such key escapes the text inside it once more).
    fn json(&self, keys: usize) -> Value {
        match self {
            KryoValue::Null => Value::Null,
            KryoValue::Boolean(b) => Value::Bool(*b),
            KryoValue::Byte(v) => Value::from(*v),
            KryoValue::Short(v) => Value::from(*v),
            KryoValue::Int(v) => Value::from(*v),
            KryoValue::Long(v) => Value::from(*v),
            KryoValue::Char(c) => Value::String(char_text(*c)),
            KryoValue::Float(f) => float(f64::from(*f), f.to_string()),
            KryoValue::Double(f) => float(*f, f.to_string()),
            KryoValue::String(s) => Value::String(s.clone()),
            KryoValue::Bytes(b) => Value::String(hex(b)),
            KryoValue::Uuid(u) => Value::String(uuid_text(*u)),
            KryoValue::Date(ms) => Value::String(date_text(*ms)),
            KryoValue::Instant { seconds, nanos } => Value::String(instant_text(*seconds, *nanos)),
            KryoValue::BigDecimal { unscaled, scale } => match decimal::format(unscaled, *scale) {
                Ok(text) => match text.parse::<f64>().ok().and_then(Number::from_f64) {
                    Some(n) if *scale > 0 => Value::Number(n),
                    _ => integer_or_text(text),
                },
                Err(_) => Value::String(decimal::hex_form(unscaled, Some(*scale))),
            },
            KryoValue::BigInteger(b) => match decimal::to_decimal_digits(b) {
                Ok(text) => integer_or_text(text),
                Err(_) => Value::String(decimal::hex_form(b, None)),
            },
            KryoValue::Enum { ordinal, name, .. } => match (name, ordinal) {
                (Some(name), _) => Value::String(name.clone()),
                (None, Some(ordinal)) => Value::from(*ordinal),
                (None, None) => Value::Null,
            },
            KryoValue::Collection { items, .. } => Value::Array(items.iter().map(|i| i.json(keys)).collect()),
            KryoValue::Map { entries, .. } => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (key_text(k, keys), v.json(keys)))
                    .collect::<Map<_, _>>(),
            ),
            KryoValue::Object { fields, .. } => {
                Value::Object(fields.iter().map(|f| (f.name.clone(), f.value.json(keys))).collect())
            }
            KryoValue::Time(t) => Value::String(t.to_string()),
            KryoValue::Wrapped { class, value } => match bit_set_words(class, value) {
                Some(words) => Value::Array(set_bits(words).map(Value::from).collect()),
                None => value.json(keys),
            },
            KryoValue::EnumSet { items, .. } => Value::Array(items.iter().map(|i| i.json(keys)).collect()),
            KryoValue::Throwable { class, message, cause } => {
                let mut object = Map::new();
                object.insert("class".into(), Value::String(class.clone()));
                object.insert("message".into(), message.clone().map_or(Value::Null, Value::String));
                object.insert("cause".into(), cause.as_ref().map_or(Value::Null, |c| c.json(keys)));
                Value::Object(object)
            }
        }
    }

    /// The value as JSON text, in Kryo's order, with `BigDecimal`s exactly
    /// as Java prints them.
    ///
    /// ```
    /// use delayq_codec::kryo::KryoValue;
    /// let v = KryoValue::Collection { class: "java.util.ArrayList".into(),
    ///     items: vec![KryoValue::big_decimal("12.50").unwrap(), KryoValue::Null] };
    /// assert_eq!(v.to_json_text(), "[12.50,null]");
    /// ```
    pub fn to_json_text(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            // Every digit, as a JSON number (to_json gives a string past 64 bits).
            KryoValue::BigInteger(b) => match decimal::to_decimal_digits(b) {
                Ok(text) => out.push_str(&text),
                Err(_) => out.push_str(&Value::String(decimal::hex_form(b, None)).to_string()),
            },
            KryoValue::Wrapped { class, value } if bit_set_words(class, value).is_none() => value.write_json(out),
            KryoValue::EnumSet { items, .. } => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            KryoValue::Throwable { class, message, cause } => {
                out.push_str("{\"class\":");
                out.push_str(&Value::String(class.clone()).to_string());
                out.push_str(",\"message\":");
                out.push_str(&message.clone().map_or(Value::Null, Value::String).to_string());
                out.push_str(",\"cause\":");
                match cause {
                    Some(cause) => cause.write_json(out),
                    None => out.push_str("null"),
                }
                out.push('}');
            }
            KryoValue::BigDecimal { unscaled, scale } => match decimal::format(unscaled, *scale) {
                // JSON has no exponent sign '+': "1E+3" is written "1E3".
                Ok(text) => out.push_str(&text.replace("E+", "E")),
                Err(_) => out.push_str(&Value::String(decimal::hex_form(unscaled, Some(*scale))).to_string()),
            },
            KryoValue::Collection { items, .. } => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            KryoValue::Map { entries, .. } => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(key_text(k, 0)).to_string());
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
            KryoValue::Object { fields, .. } => {
                out.push('{');
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(f.name.clone()).to_string());
                    out.push(':');
                    f.value.write_json(out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_json().to_string()),
        }
    }

    /// Builds the value Java would hold for `json` given its declared Java
    /// type; POJOs and enums need `schema`.
    ///
    /// ```
    /// use delayq_codec::kryo::{JavaType, KryoValue};
    /// let ty = JavaType::parse("Long").unwrap();
    /// let v = KryoValue::from_json(&serde_json::json!(42), &ty, None).unwrap();
    /// assert_eq!(v.encode().unwrap(), [0x09, 0x54]);
    /// ```
    pub fn from_json(json: &Value, declared: &JavaType, schema: Option<&KryoSchema>) -> Result<KryoValue, String> {
        from_json(json, declared, schema, 0)
    }
}

/// A `BitSet`'s words (`long[]`), if this wrapped value is one.
fn bit_set_words<'a>(class: &str, value: &'a KryoValue) -> Option<&'a [KryoValue]> {
    match value {
        KryoValue::Collection { items, .. } if class == "java.util.BitSet" => Some(items),
        _ => None,
    }
}

/// The indexes of a `BitSet`'s set bits, as `toString()` lists them.
fn set_bits(words: &[KryoValue]) -> impl Iterator<Item = u64> + '_ {
    words.iter().enumerate().flat_map(|(i, word)| {
        let bits = match word {
            KryoValue::Long(w) => *w as u64,
            _ => 0,
        };
        (0..64u64)
            .filter(move |b| bits & (1 << b) != 0)
            .map(move |b| i as u64 * 64 + b)
    })
}

fn float(v: f64, text: String) -> Value {
    if v.is_nan() {
        Value::String("NaN".into())
    } else if v.is_infinite() {
        Value::String(if v > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        // Through the shortest text, so that 0.1f prints as 0.1.
        text.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or(Value::Null, Value::Number)
    }
}

fn integer_or_text(text: String) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        Value::from(i)
    } else if let Ok(u) = text.parse::<u64>() {
        Value::from(u)
    } else {
        match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) if !text.chars().all(|c| c.is_ascii_digit() || c == '-') => Value::Number(n),
            _ => Value::String(text),
        }
    }
}

/// How many collection, map or POJO keys may hold one another as JSON text.
/// Each level escapes the text of the levels inside it once more (a `"`
/// becomes `\"`, then `\\\"`...): without a bound, map keys nested k deep
/// take 2^k times their own size.
const KEY_TEXT_NESTING: usize = 2;

/// A map key as a JSON object key: strings as they are, anything else as
/// its JSON text; a collection, map or POJO key inside
/// [`KEY_TEXT_NESTING`] such keys as its class in brackets.
fn key_text(key: &KryoValue, keys: usize) -> String {
    let composite = matches!(
        key,
        KryoValue::Collection { .. } | KryoValue::Map { .. } | KryoValue::Object { .. }
    );
    if composite && keys >= KEY_TEXT_NESTING {
        return format!("<{}>", key.java_class().unwrap_or_default());
    }
    match key.json(keys + 1) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

fn from_hex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return Err(format!("{text:?} is not hex"));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| format!("{text:?} is not hex")))
        .collect()
}

pub(crate) fn uuid_text(u: u128) -> String {
    let h = format!("{u:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

pub(crate) fn parse_uuid(text: &str) -> Result<u128, String> {
    let parts: Vec<&str> = text.split('-').collect();
    let lens: Vec<usize> = parts.iter().map(|p| p.len()).collect();
    if lens != [8, 4, 4, 4, 12] {
        return Err(format!("{text:?} is not a UUID"));
    }
    u128::from_str_radix(&parts.concat(), 16).map_err(|_| format!("{text:?} is not a UUID"))
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `yyyy-MM-ddTHH:mm:ss` in the proleptic Gregorian calendar, the year as
/// java.time's ISO-8601 prints it ([`java_year`]).
fn clock_text(seconds: i64) -> String {
    let (y, rest) = clock_parts(seconds);
    format!("{}{rest}", java_year(y))
}

/// The year and the `-MM-DDTHH:MM:SS` after it.
fn clock_parts(seconds: i64) -> (i64, String) {
    let (y, mo, d) = civil_from_days(seconds.div_euclid(86_400));
    let s = seconds.rem_euclid(86_400);
    (
        y,
        format!("-{mo:02}-{d:02}T{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60),
    )
}

/// A year as java.time prints it: four digits at least, a sign before
/// negative years and `+` after 9999.
fn java_year(y: i64) -> String {
    match y {
        -999..0 => format!("-{:04}", -y),
        10_000.. => format!("+{y}"),
        _ => format!("{y:04}"),
    }
}

/// A `char` as JSON text: a lone UTF-16 surrogate, which no JSON string
/// holds, as its escape `\uD83D` (six characters, so no other `char`).
fn char_text(unit: u16) -> String {
    match char::from_u32(u32::from(unit)) {
        Some(c) => c.to_string(),
        None => format!("\\u{unit:04X}"),
    }
}

/// The surrogate a `\uD83D` text of [`char_text`] stands for.
fn escaped_surrogate(text: &str) -> Option<u16> {
    let hex = text
        .strip_prefix("\\u")
        .filter(|h| h.len() == 4 && h.bytes().all(|b| b.is_ascii_hexdigit()))?;
    u16::from_str_radix(hex, 16)
        .ok()
        .filter(|u| (0xD800..=0xDFFF).contains(u))
}

/// `java.util.Date` in the shape Jackson writes it (`StdDateFormat`, UTC),
/// with java.time's ISO-8601 calendar and year (`+10000`, `0000`,
/// `-0001`): `StdDateFormat` itself prints dates before 1582-10-15 in the
/// Julian calendar (and year 0 as `+0000`), which no java.time text
/// shares and which would read back as another instant.
pub(crate) fn date_text(ms: i64) -> String {
    format!("{}.{:03}+00:00", clock_text(ms.div_euclid(1000)), ms.rem_euclid(1000))
}

/// `Instant.toString()`: fractions in groups of three digits.
pub(crate) fn instant_text(seconds: i64, nanos: u32) -> String {
    let fraction = if nanos == 0 {
        String::new()
    } else if nanos.is_multiple_of(1_000_000) {
        format!(".{:03}", nanos / 1_000_000)
    } else if nanos.is_multiple_of(1000) {
        format!(".{:06}", nanos / 1000)
    } else {
        format!(".{nanos:09}")
    };
    let (y, rest) = clock_parts(seconds);
    format!("{}{rest}{fraction}Z", java_year(y))
}

/// ISO-8601 `yyyy-MM-ddTHH:mm:ss[.fraction](Z|±HH:MM|±HHMM)` to (seconds, nanos).
pub(crate) fn parse_instant(text: &str) -> Result<(i64, u32), String> {
    let bad = || format!("{text:?} is not an ISO-8601 time like 2026-11-23T02:13:20.123Z");
    // A year of four digits, or signed and up to ten (java.time's range).
    let signed = usize::from(text.starts_with(['+', '-']));
    let digits = text[signed..].bytes().take_while(u8::is_ascii_digit).count();
    if !(4..=10).contains(&digits) || (digits > 4 && signed == 0) {
        return Err(bad());
    }
    let num = |s: &str| s.parse::<i64>().map_err(|_| bad());
    let y = num(&text[..signed + digits])?;
    let text = &text[signed + digits - 4..];
    let b = text.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let (mo, d) = (num(&text[5..7])?, num(&text[8..10])?);
    let (h, mi, s) = (num(&text[11..13])?, num(&text[14..16])?, num(&text[17..19])?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return Err(bad());
    }
    let mut rest = &text[19..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return Err(bad());
        }
        nanos = frac[..digits].parse::<u32>().map_err(|_| bad())? * 10u32.pow(9 - digits as u32);
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() >= 5 && matches!(rest.as_bytes()[0], b'+' | b'-') => {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            let digits: String = rest[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 {
                return Err(bad());
            }
            sign * (num(&digits[0..2])? * 3600 + num(&digits[2..4])? * 60)
        }
        _ => return Err(bad()),
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    Ok((days * 86_400 + h * 3600 + mi * 60 + s - offset, nanos))
}

const MAX_JSON_DEPTH: usize = super::MAX_DEPTH;

fn from_json(
    json: &Value,
    declared: &JavaType,
    schema: Option<&KryoSchema>,
    depth: usize,
) -> Result<KryoValue, String> {
    if depth > MAX_JSON_DEPTH {
        return Err(format!("JSON nested deeper than {MAX_JSON_DEPTH} levels"));
    }
    if json.is_null() {
        return if declared.is_primitive() {
            Err(format!("null for a primitive {declared}"))
        } else {
            Ok(KryoValue::Null)
        };
    }
    let name = declared.class_name();
    let mismatch = || format!("{json} is not a {declared}");
    if name == "java.lang.Object" {
        return untyped(json, schema, depth);
    }
    match declared.builtin() {
        Some(Builtin::Boxed(p)) => number(json, p).ok_or_else(mismatch),
        Some(Builtin::String) => json
            .as_str()
            .map(|s| KryoValue::String(s.to_owned()))
            .ok_or_else(mismatch),
        Some(Builtin::Bytes) => from_hex(json.as_str().ok_or_else(mismatch)?).map(KryoValue::Bytes),
        Some(Builtin::Uuid) => parse_uuid(json.as_str().ok_or_else(mismatch)?).map(KryoValue::Uuid),
        Some(Builtin::Date) => match json {
            Value::String(s) => {
                let (seconds, nanos) = parse_instant(s)?;
                Ok(KryoValue::Date(seconds * 1000 + i64::from(nanos / 1_000_000)))
            }
            _ => json.as_i64().map(KryoValue::Date).ok_or_else(mismatch),
        },
        Some(Builtin::Instant) => {
            let (seconds, nanos) = parse_instant(json.as_str().ok_or_else(mismatch)?)?;
            Ok(KryoValue::Instant { seconds, nanos })
        }
        Some(Builtin::BigDecimal) => match json {
            Value::String(s) => match decimal::parse_hex_form(s) {
                Some(parsed) => parsed.map(|(unscaled, scale)| KryoValue::BigDecimal {
                    unscaled: decimal::shortest(unscaled),
                    scale,
                }),
                None => KryoValue::big_decimal(s),
            },
            Value::Number(n) => KryoValue::big_decimal(&n.to_string()),
            _ => Err(mismatch()),
        },
        Some(Builtin::BigInteger) => {
            if let Some(parsed) = json.as_str().and_then(decimal::parse_hex_form) {
                let (bytes, scale) = parsed?;
                if scale != 0 {
                    return Err(mismatch());
                }
                return Ok(KryoValue::BigInteger(decimal::shortest(bytes)));
            }
            let text = match json {
                Value::String(s) => s.clone(),
                Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
                _ => return Err(mismatch()),
            };
            let (bytes, scale) = decimal::parse(&text)?;
            if scale != 0 || text.contains(['.', 'e', 'E']) {
                return Err(mismatch());
            }
            Ok(KryoValue::BigInteger(bytes))
        }
        Some(Builtin::Collection) => {
            let items = json.as_array().ok_or_else(mismatch)?;
            let element = declared.args().first().cloned().unwrap_or_else(JavaType::object);
            Ok(KryoValue::Collection {
                class: class::concrete(name).to_owned(),
                items: items
                    .iter()
                    .map(|i| from_json(i, &element, schema, depth + 1))
                    .collect::<Result<_, _>>()?,
            })
        }
        Some(Builtin::Map) => {
            let object = json.as_object().ok_or_else(mismatch)?;
            let (key, value) = match declared.args() {
                [k, v] => (k.clone(), v.clone()),
                _ => (JavaType::class("java.lang.String", Vec::new()), JavaType::object()),
            };
            let mut entries = Vec::with_capacity(object.len());
            for (k, v) in object {
                let k = if key.class_name() == "java.lang.String" || key.class_name() == "java.lang.Object" {
                    KryoValue::String(k.clone())
                } else {
                    let parsed: Value = serde_json::from_str(k).unwrap_or_else(|_| Value::String(k.clone()));
                    from_json(&parsed, &key, schema, depth + 1)?
                };
                entries.push((k, from_json(v, &value, schema, depth + 1)?));
            }
            Ok(KryoValue::Map {
                class: class::concrete(name).to_owned(),
                entries,
            })
        }
        None => user(json, name, schema, depth),
    }
}

fn number(json: &Value, p: Primitive) -> Option<KryoValue> {
    Some(match p {
        Primitive::Boolean => KryoValue::Boolean(json.as_bool()?),
        Primitive::Byte => KryoValue::Byte(i8::try_from(json.as_i64()?).ok()?),
        Primitive::Short => KryoValue::Short(i16::try_from(json.as_i64()?).ok()?),
        Primitive::Int => KryoValue::Int(i32::try_from(json.as_i64()?).ok()?),
        Primitive::Long => KryoValue::Long(json.as_i64()?),
        Primitive::Float => KryoValue::Float(json.as_f64()? as f32),
        Primitive::Double => KryoValue::Double(json.as_f64()?),
        Primitive::Char => {
            let text = json.as_str()?;
            let units: Vec<u16> = text.encode_utf16().collect();
            match units[..] {
                [c] => KryoValue::Char(c),
                _ => KryoValue::Char(escaped_surrogate(text)?),
            }
        }
    })
}

/// JSON without a Java type: Java's natural classes.
fn untyped(json: &Value, schema: Option<&KryoSchema>, depth: usize) -> Result<KryoValue, String> {
    Ok(match json {
        Value::Null => KryoValue::Null,
        Value::Bool(b) => KryoValue::Boolean(*b),
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => KryoValue::Long(i),
            (None, Some(f)) if n.is_f64() => KryoValue::Double(f),
            _ => KryoValue::BigInteger(decimal::parse(&n.to_string())?.0),
        },
        Value::String(s) => KryoValue::String(s.clone()),
        Value::Array(_) => from_json(json, &JavaType::class("java.util.ArrayList", Vec::new()), schema, depth)?,
        Value::Object(_) => from_json(json, &JavaType::class("java.util.HashMap", Vec::new()), schema, depth)?,
    })
}

fn user(json: &Value, class: &str, schema: Option<&KryoSchema>, depth: usize) -> Result<KryoValue, String> {
    let def = schema
        .and_then(|s| s.get(class))
        .ok_or_else(|| format!("{class} is not described by the Kryo schema (--kryo-schema FILE)"))?;
    match def {
        ClassDef::Enum { constants } => {
            let ordinal = match json {
                Value::String(s) => constants
                    .iter()
                    .position(|c| c == s)
                    .ok_or_else(|| format!("{s:?} is not a constant of {class} ({})", constants.join(", ")))?,
                _ => json
                    .as_u64()
                    .filter(|&o| (o as usize) < constants.len())
                    .ok_or_else(|| format!("{json} is not a constant of {class}"))? as usize,
            };
            Ok(KryoValue::Enum {
                class: class.to_owned(),
                ordinal: Some(ordinal as u32),
                name: Some(constants[ordinal].clone()),
            })
        }
        ClassDef::Pojo { fields, .. } => {
            let object = json
                .as_object()
                .ok_or_else(|| format!("{json} is not an object for {class}"))?;
            if let Some(extra) = object.keys().find(|k| !fields.iter().any(|(f, _)| f == *k)) {
                return Err(format!("{class} has no field {extra:?} in the Kryo schema"));
            }
            let mut out = Vec::with_capacity(fields.len());
            for (name, declared) in fields {
                let value = match object.get(name) {
                    Some(v) => from_json(v, declared, schema, depth + 1).map_err(|e| format!("{class}.{name}: {e}"))?,
                    None if declared.is_primitive() => {
                        return Err(format!("{class}.{name} ({declared}) is missing"));
                    }
                    None => KryoValue::Null,
                };
                out.push(KryoField::new(name.clone(), declared.clone(), value));
            }
            Ok(KryoValue::Object {
                class: class.to_owned(),
                fields: out,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_as_jackson_and_java_print_them() {
        assert_eq!(date_text(1_795_400_000_000), "2026-11-23T02:13:20.000+00:00");
        assert_eq!(instant_text(1_795_400_000, 123_000_000), "2026-11-23T02:13:20.123Z");
        assert_eq!(instant_text(0, 0), "1970-01-01T00:00:00Z");
        assert_eq!(instant_text(-1, 1000), "1969-12-31T23:59:59.000001Z");
        assert_eq!(
            parse_instant("2026-11-23T02:13:20.123Z").unwrap(),
            (1_795_400_000, 123_000_000)
        );
        assert_eq!(
            parse_instant("2026-11-23T03:13:20.000+01:00").unwrap(),
            (1_795_400_000, 0)
        );
        assert!(parse_instant("2026-13-23T02:13:20Z").is_err());
        // Years as `Instant.toString()` prints them (Java's output).
        for (s, text) in [
            (31_556_889_864_403_199, "+1000000000-12-31T23:59:59Z"),
            (253_402_300_800, "+10000-01-01T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
            (-62_167_219_200, "0000-01-01T00:00:00Z"),
            (-62_167_219_201, "-0001-12-31T23:59:59Z"),
            (-377_705_116_801, "-10000-12-31T23:59:59Z"),
            (-31_557_014_167_219_200, "-1000000000-01-01T00:00:00Z"),
        ] {
            assert_eq!(instant_text(s, 0), text);
            assert_eq!(parse_instant(text).unwrap(), (s, 0), "{text}");
        }
        assert_eq!(
            instant_text(31_556_889_864_403_199, 999_999_999),
            "+1000000000-12-31T23:59:59.999999999Z"
        );
        for s in [-86_400 * 800_000i64, -1, 0, 59, 951_782_400, 4_102_444_800] {
            assert_eq!(parse_instant(&instant_text(s, 5)).unwrap(), (s, 5), "{s}");
        }
    }

    /// `java.time` values outside years 0000–9999 show as their
    /// `toString()` (Java's output in jshell), and read back.
    #[test]
    fn java_time_years_outside_0000_to_9999_print_as_to_string() {
        for (class, text) in [
            ("java.time.LocalDateTime", "+10000-01-01T00:00"),
            ("java.time.LocalDateTime", "-0001-12-31T23:59:59.000005"),
            ("java.time.LocalDate", "0000-01-01"),
            ("java.time.OffsetDateTime", "-10000-01-01T00:00+02:00"),
            ("java.time.ZonedDateTime", "+10000-06-01T12:00+02:00[Europe/Paris]"),
            ("java.time.YearMonth", "10000-01"),
            ("java.time.YearMonth", "-0001-01"),
        ] {
            let value = KryoValue::Time(crate::kryo::JavaTime::parse(class, text).unwrap());
            assert_eq!(value.to_json(), Value::String(text.into()), "{class}");
        }
    }

    /// A `java.util.Date` (and `java.sql` dates) outside years 0000–9999
    /// shows its year as java.time's ISO-8601 does (`Instant.toString()`
    /// of the same milliseconds in jshell: `+10000-…`, `-0001-…`), and the
    /// text reads back to the same milliseconds.
    #[test]
    fn a_date_s_year_outside_0000_to_9999_prints_as_java_time_does() {
        for (ms, text) in [
            (253_402_300_800_005, "+10000-01-01T00:00:00.005+00:00"),
            (-62_167_219_199_995, "0000-01-01T00:00:00.005+00:00"),
            (-62_198_755_199_995, "-0001-01-01T00:00:00.005+00:00"),
            (-99_999_999_998_995, "-1199-02-15T14:13:21.005+00:00"),
            (-62_135_596_799_995, "0001-01-01T00:00:00.005+00:00"),
        ] {
            let date = KryoValue::Date(ms);
            assert_eq!(date.to_json(), Value::String(text.into()), "{ms}");
            let sql = KryoValue::Time(crate::kryo::JavaTime::SqlDate(ms));
            assert_eq!(sql.to_json(), Value::String(text.into()), "{ms}");
            assert_eq!(parse_instant(text).unwrap(), (ms.div_euclid(1000), 5_000_000), "{text}");
        }
    }

    /// A lone UTF-16 surrogate cannot be JSON text: it shows as its
    /// `\uD83D` escape, which reads back as that char (not U+FFFD).
    #[test]
    fn a_lone_surrogate_char_shows_escaped_and_reads_back() {
        for declared in ["char", "Character"] {
            let declared = JavaType::parse(declared).unwrap();
            for unit in [0xD83Du16, 0xDC00, 0xDFFF] {
                let json = KryoValue::Char(unit).to_json();
                assert_eq!(json, Value::String(format!("\\u{unit:04X}")));
                assert_eq!(
                    KryoValue::from_json(&json, &declared, None).unwrap(),
                    KryoValue::Char(unit)
                );
            }
            let plain = KryoValue::from_json(&Value::String("\\u0041".into()), &declared, None);
            assert!(plain.is_err(), "only a surrogate is escaped: {plain:?}");
            assert_eq!(KryoValue::Char(0x41).to_json(), Value::String("A".into()));
        }
    }

    #[test]
    fn uuids_and_hex() {
        let u = parse_uuid("123e4567-e89b-12d3-a456-426614174000").unwrap();
        assert_eq!(uuid_text(u), "123e4567-e89b-12d3-a456-426614174000");
        assert!(parse_uuid("123e4567").is_err());
        assert_eq!(from_hex("0102ff").unwrap(), vec![1, 2, 255]);
        assert!(from_hex("0g").is_err());
    }
}
