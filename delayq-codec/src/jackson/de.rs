//! Jackson-typed JSON → serde: the type information Redisson's
//! `JsonJacksonCodec` writes is taken off where the Rust type does not want
//! it, from the order-keeping, exact-number tree of [`parse`](super::parse).
//!
//! Type-directed: a Rust sequence accepts `["java.util.ArrayList",[…]]` or a
//! bare array, a struct or map accepts an object with or without `"@class"`,
//! a number or string accepts `["java.lang.Long",5]` or a bare value. Where
//! the Rust type says nothing (`deserialize_any`, e.g. a `serde_json::Value`
//! field), every `["a.b.C", value]` wrapper is removed and `"@class"` kept,
//! for an enum tagged with it (`#[serde(tag = "@class")]`, a field of an
//! interface type); `to_plain_json` removes both.
//!
//! Numbers go to the target as exactly as it holds them, or not at all:
//!
//! | target | JSON number |
//! | --- | --- |
//! | `String`, `&str` | its text as written (`123456789012345678901234567890`, `2.50`) |
//! | integers, `u128`, `i128` | its value, when an integer the type holds |
//! | `f64`, `f32` | the double (float) the text stands for, when the text is what that double prints as, to as many digits: `0.1`, `2.50`, `1.7954000001234567E9` |
//! | anything else (`serde_json::Value`; a tagged or untagged enum's content and a flattened struct, which serde buffers) | an `i64`, `u64` or `f64` as above |
//!
//! A number that would be rounded on the way (a `BigInteger` past 64 bits
//! into a `serde_json::Value`, `9007199254740993` or an `Instant`'s
//! nanoseconds into an `f64`) is a [`JacksonErrorKind::Inexact`] error,
//! which, like every error here, names the field it is in (`items[2].price`).
//! Objects give their properties in the order written; the target keeps it
//! or not (a `Vec<(String, V)>` does, a `BTreeMap` sorts).

use base64::Engine;
use serde::de::{self, DeserializeSeed, Visitor};

use super::error::{JacksonError, JacksonErrorKind};
use super::node::CLASS_PROPERTY;
use super::parse::Json;
use super::value::{is_type_id, time};
use crate::kryo::{JavaTime, KryoValue};

type Error = JacksonError;
type Result<T> = std::result::Result<T, Error>;

impl de::Error for JacksonError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        JacksonError::malformed(msg.to_string())
    }
}

/// A JSON value read with Jackson's type information in mind.
pub(crate) struct Typed(pub Json);

/// Whether `items` is a `["a.b.C", value]` wrapper.
fn is_wrapper(items: &[Json]) -> bool {
    items.len() == 2 && matches!(&items[0], Json::Str(id) if is_type_id(id))
}

/// The value inside a `["a.b.C", value]` wrapper, or the value itself.
fn unwrap_wrapper(json: Json) -> Json {
    match json {
        Json::Array(mut items) if is_wrapper(&items) => items.pop().expect("two items"),
        other => other,
    }
}

/// The value inside a wrapper only when it holds an array (a typed collection).
fn unwrap_collection(json: Json) -> Json {
    match json {
        Json::Array(mut items) if is_wrapper(&items) && matches!(items[1], Json::Array(_)) => {
            items.pop().expect("two items")
        }
        other => other,
    }
}

/// An object's properties without the `"@class"` one (also from a wrapper).
fn untyped_object(json: Json) -> std::result::Result<Vec<(String, Json)>, Json> {
    match unwrap_wrapper(json) {
        Json::Object(mut props) => {
            props.retain(|(name, _)| name != CLASS_PROPERTY);
            Ok(props)
        }
        other => Err(other),
    }
}

/// Removes all type information, for callers that want plain JSON.
pub(crate) fn strip(json: Json) -> Json {
    match unwrap_wrapper(json) {
        Json::Object(props) => Json::Object(
            props
                .into_iter()
                .filter(|(name, _)| name != CLASS_PROPERTY)
                .map(|(name, value)| (name, strip(value)))
                .collect(),
        ),
        Json::Array(items) => Json::Array(items.into_iter().map(strip).collect()),
        other => other,
    }
}

fn is_integer_text(text: &str) -> bool {
    !text.contains(['.', 'e', 'E'])
}

/// A decimal's sign, significant digits (no leading or trailing zeros) and
/// exponent, as `0.digits × 10^exponent`: `-0.0250` → `(true, "25", -1)`.
/// `None` for an exponent past `i64` (no float holds such a number).
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.strip_prefix('+').unwrap_or(e).parse::<i64>().ok()?),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_owned();
    if digits.is_empty() {
        return Some((negative, digits, 0));
    }
    let point = i64::try_from(int.len()).ok()? - i64::try_from(leading).ok()?;
    Some((negative, digits, exponent.checked_add(point)?))
}

/// Past this many significant digits no double or float prints exactly
/// (a double's exact expansion has at most 767), and the text is not
/// formatted again.
const MAX_FLOAT_DIGITS: usize = 800;

/// The float `text` stands for, when nothing is lost on the way: the float
/// prints back as the same number, either at its shortest (as Java 19+
/// and Rust print it) or to as many digits as `text` has (older Javas'
/// `Double.toString` sometimes wrote a digit more than needed).
fn exact_float<F>(text: &str) -> Option<F>
where
    F: std::str::FromStr + std::fmt::LowerExp + Copy,
    F: Into<f64>,
{
    let value: F = text.parse().ok()?;
    if !value.into().is_finite() {
        return None;
    }
    let wanted = decimal(text)?;
    if decimal(&format!("{value:e}")).as_ref() == Some(&wanted) {
        return Some(value);
    }
    let digits = wanted.1.len();
    if digits == 0 || digits > MAX_FLOAT_DIGITS {
        return None;
    }
    let printed = decimal(&format!("{value:.*e}", digits - 1))?;
    (printed == wanted).then_some(value)
}

fn inexact(text: &str, target: &str) -> Error {
    JacksonError::new(
        JacksonErrorKind::Inexact,
        None,
        format!(
            "{text} is not {target} exactly: read it into a String (its text) or an integer type that holds it, \
             or with jackson::decode_value"
        ),
    )
}

/// A number for a target that takes any number: an integer as `i64`,
/// `u64`, a decimal as the double it is exactly.
fn visit_number<'de, V: Visitor<'de>>(text: &str, visitor: V) -> Result<V::Value> {
    if is_integer_text(text) {
        if let Ok(i) = text.parse::<i64>() {
            return visitor.visit_i64(i);
        }
        if let Ok(u) = text.parse::<u64>() {
            return visitor.visit_u64(u);
        }
        return Err(inexact(text, "a 64-bit integer"));
    }
    match exact_float::<f64>(text) {
        Some(f) => visitor.visit_f64(f),
        None => Err(inexact(text, "a double")),
    }
}

/// A number for an integer target: up to 128 bits, the visitor checks its range.
fn visit_integer<'de, V: Visitor<'de>>(text: &str, visitor: V) -> Result<V::Value> {
    if is_integer_text(text) {
        if let Ok(i) = text.parse::<i64>() {
            return visitor.visit_i64(i);
        }
        if let Ok(u) = text.parse::<u64>() {
            return visitor.visit_u64(u);
        }
        if let Ok(i) = text.parse::<i128>() {
            return visitor.visit_i128(i);
        }
        if let Ok(u) = text.parse::<u128>() {
            return visitor.visit_u128(u);
        }
        return Err(inexact(text, "a 128-bit integer"));
    }
    visit_number(text, visitor)
}

impl<'de> de::Deserializer<'de> for Typed {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            Json::Null => visitor.visit_unit(),
            Json::Bool(b) => visitor.visit_bool(b),
            Json::Number(text) => visit_number(&text, visitor),
            Json::Str(s) => visitor.visit_string(s),
            Json::Array(items) => visit_seq(items, visitor),
            // "@class" stays for an internally tagged enum
            // (`#[serde(tag = "@class")]`: a field of an interface type).
            Json::Object(props) => visit_map(props, visitor),
        }
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            Json::Number(text) => visit_integer(&text, visitor),
            other => Typed(other).deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! { bool unit identifier }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            Json::Number(text) => match exact_float::<f64>(&text) {
                Some(f) => visitor.visit_f64(f),
                None => Err(inexact(&text, "a double")),
            },
            other => Typed(other).deserialize_any(visitor),
        }
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            Json::Number(text) => match exact_float::<f32>(&text) {
                Some(f) => visitor.visit_f32(f),
                None => Err(inexact(&text, "a float")),
            },
            other => Typed(other).deserialize_any(visitor),
        }
    }

    /// A number into a string is its text: every digit of a `BigInteger`,
    /// the scale of a `BigDecimal`.
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            Json::Number(text) => visitor.visit_str(&text),
            other => Typed(other).deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            // A Java byte[]: base64 text.
            Json::Str(text) => match base64::engine::general_purpose::STANDARD.decode(text.as_bytes()) {
                Ok(bytes) => visitor.visit_byte_buf(bytes),
                Err(e) => Err(JacksonError::malformed(format!("invalid base64 for byte[]: {e}"))),
            },
            other => Typed(other).deserialize_any(visitor),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Json::Null => visitor.visit_none(),
            json => visitor.visit_some(Typed(json)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    /// A newtype named after a `java.time` class, `BigDecimal` or
    /// `BigInteger` (a [natural](crate::natural) Rust type's) reads Java's
    /// text (`toString()`) when it asks for a string: `JavaTimeModule`'s
    /// `[2026,11,23]` as `2026-11-23`, a decimal's digits as written.
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value> {
        match natural_text(name, &self.0)? {
            Some(text) => visitor.visit_newtype_struct(JavaText { text, json: self.0 }),
            None => visitor.visit_newtype_struct(self),
        }
    }

    /// An array; or an object's properties in order, as `(name, value)`
    /// pairs (a `Vec<(String, V)>` keeps a `LinkedHashMap`'s order).
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_collection(self.0) {
            Json::Array(items) => visit_seq(items, visitor),
            json => match untyped_object(json) {
                Ok(props) => visit_pairs(props, visitor),
                Err(other) => Typed(other).deserialize_any(visitor),
            },
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match untyped_object(self.0) {
            Ok(props) => visit_map(props, visitor),
            Err(other) => Typed(other).deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_map(visitor)
    }

    /// A unit variant as its name (a Java enum constant), a variant with
    /// data as `{"Variant": data}`.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            Json::Str(variant) => visitor.visit_enum(Variant {
                name: variant,
                data: None,
            }),
            Json::Object(mut props) if props.len() == 1 => {
                let (name, data) = props.pop().expect("one property");
                visitor.visit_enum(Variant { name, data: Some(data) })
            }
            other => Err(JacksonError::malformed(format!(
                "an enum written as {} (a string or an object of one property is)",
                other.kind()
            ))),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }
}

/// Java's text for a value of `class`, when it is a class the natural Rust
/// types map (`None` otherwise, or for JSON that is no such value).
fn natural_text(class: &str, json: &Json) -> Result<Option<String>> {
    let json = match json {
        Json::Array(items) if is_wrapper(items) => &items[1],
        other => other,
    };
    let time_class = class == "java.time.Instant" || JavaTime::is_time_class(class);
    Ok(match (class, json) {
        ("java.math.BigDecimal" | "java.math.BigInteger", Json::Number(text)) => Some(text.to_string()),
        ("java.math.BigDecimal" | "java.math.BigInteger", Json::Str(text)) => Some(text.clone()),
        // ISO text: an ObjectMapper with timestamps off, or another format's.
        (_, Json::Str(text)) if time_class => Some(text.clone()),
        (_, Json::Number(_) | Json::Array(_)) if time_class => match time(class, json.clone())? {
            KryoValue::Time(t) => Some(t.to_string()),
            KryoValue::Instant { seconds, nanos } => Some(crate::kryo::instant_text(seconds, nanos)),
            _ => None,
        },
        _ => None,
    })
}

/// A natural type's value: its Java text for a string (what the mapping
/// asks for), the JSON as written for anything else.
struct JavaText {
    text: String,
    json: Json,
}

macro_rules! forward_to_typed {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
                de::Deserializer::$method(Typed(self.json), visitor)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for JavaText {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.text)
    }
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.text)
    }
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.text)
    }

    forward_to_typed! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128 deserialize_f32
        deserialize_f64 deserialize_char deserialize_bytes deserialize_byte_buf deserialize_option
        deserialize_unit deserialize_seq deserialize_map deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value> {
        Typed(self.json).deserialize_unit_struct(name, visitor)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value> {
        Typed(self.json).deserialize_newtype_struct(name, visitor)
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value> {
        Typed(self.json).deserialize_tuple(len, visitor)
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(self, name: &'static str, len: usize, visitor: V) -> Result<V::Value> {
        Typed(self.json).deserialize_tuple_struct(name, len, visitor)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        Typed(self.json).deserialize_struct(name, fields, visitor)
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        Typed(self.json).deserialize_enum(name, variants, visitor)
    }
}

fn visit_seq<'de, V: Visitor<'de>>(items: Vec<Json>, visitor: V) -> Result<V::Value> {
    let len = items.len();
    let mut access = SeqAccess {
        items: items.into_iter(),
        index: 0,
    };
    let value = visitor.visit_seq(&mut access)?;
    if access.items.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in the array"))
    }
}

fn visit_pairs<'de, V: Visitor<'de>>(props: Vec<(String, Json)>, visitor: V) -> Result<V::Value> {
    let len = props.len();
    let mut access = PairsAccess {
        props: props.into_iter(),
    };
    let value = visitor.visit_seq(&mut access)?;
    if access.props.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer properties in the object"))
    }
}

fn visit_map<'de, V: Visitor<'de>>(props: Vec<(String, Json)>, visitor: V) -> Result<V::Value> {
    visitor.visit_map(MapAccess {
        props: props.into_iter(),
        value: None,
    })
}

struct SeqAccess {
    items: std::vec::IntoIter<Json>,
    index: usize,
}

impl<'de> de::SeqAccess<'de> for SeqAccess {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.items.next() {
            Some(json) => {
                let index = self.index;
                self.index += 1;
                seed.deserialize(Typed(json))
                    .map(Some)
                    .map_err(|e| e.in_path(&format!("[{index}]")))
            }
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// An object's properties as a sequence of `(name, value)` pairs.
struct PairsAccess {
    props: std::vec::IntoIter<(String, Json)>,
}

impl<'de> de::SeqAccess<'de> for PairsAccess {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.props.next() {
            Some((name, json)) => {
                let path = name.clone();
                seed.deserialize(Pair(name, json))
                    .map(Some)
                    .map_err(|e| e.in_path(&path))
            }
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.props.len())
    }
}

/// One property as a two-element sequence.
struct Pair(String, Json);

impl<'de> de::Deserializer<'de> for Pair {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_seq(PairAccess {
            name: Some(self.0),
            value: Some(self.1),
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct PairAccess {
    name: Option<String>,
    value: Option<Json>,
}

impl<'de> de::SeqAccess<'de> for PairAccess {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if let Some(name) = self.name.take() {
            return seed.deserialize(Key(name)).map(Some);
        }
        match self.value.take() {
            Some(json) => seed.deserialize(Typed(json)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(usize::from(self.name.is_some()) + usize::from(self.value.is_some()))
    }
}

struct MapAccess {
    props: std::vec::IntoIter<(String, Json)>,
    value: Option<(String, Json)>,
}

impl<'de> de::MapAccess<'de> for MapAccess {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.props.next() {
            Some((name, json)) => {
                let key = seed.deserialize(Key(name.clone())).map_err(|e| e.in_path(&name))?;
                self.value = Some((name, json));
                Ok(Some(key))
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let (name, json) = self
            .value
            .take()
            .ok_or_else(|| JacksonError::malformed("map value without a key"))?;
        seed.deserialize(Typed(json)).map_err(|e| e.in_path(&name))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.props.len())
    }
}

/// A property name or map key: a string, or the number Jackson wrote as
/// text for a `Map<Long, V>` (`{"1": …}`).
struct Key(String);

impl<'de> de::Deserializer<'de> for Key {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_string(self.0)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.0.parse::<i128>().is_ok() || self.0.parse::<u128>().is_ok() {
            visit_integer(&self.0, visitor)
        } else {
            visitor.visit_string(self.0)
        }
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_enum(Variant {
            name: self.0,
            data: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool f32 f64 char str string bytes byte_buf option unit unit_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

/// An enum variant: its name, and its data unless it is a unit variant.
struct Variant {
    name: String,
    data: Option<Json>,
}

impl<'de> de::EnumAccess<'de> for Variant {
    type Error = Error;
    type Variant = VariantData;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, VariantData)> {
        let name = self.name.clone();
        let variant = seed.deserialize(Key(self.name))?;
        Ok((variant, VariantData { name, data: self.data }))
    }
}

struct VariantData {
    name: String,
    data: Option<Json>,
}

impl VariantData {
    fn data(self) -> Result<Typed> {
        match self.data {
            Some(json) => Ok(Typed(json)),
            None => Err(JacksonError::malformed(format!(
                "the enum variant {} without its data",
                self.name
            ))),
        }
    }
}

impl<'de> de::VariantAccess<'de> for VariantData {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        match self.data {
            None | Some(Json::Null) => Ok(()),
            Some(other) => Err(JacksonError::malformed(format!(
                "the unit variant {} with {} for data",
                self.name,
                other.kind()
            ))),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        let name = self.name.clone();
        seed.deserialize(self.data()?).map_err(|e| e.in_path(&name))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        let name = self.name.clone();
        de::Deserializer::deserialize_seq(self.data()?, visitor).map_err(|e| e.in_path(&name))
    }

    fn struct_variant<V: Visitor<'de>>(self, _fields: &'static [&'static str], visitor: V) -> Result<V::Value> {
        let name = self.name.clone();
        de::Deserializer::deserialize_map(self.data()?, visitor).map_err(|e| e.in_path(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float_is_exact_when_it_prints_back_as_the_same_number() {
        for (text, value) in [
            ("0.1", 0.1),
            ("2.50", 2.5),
            ("-0.0", -0.0),
            ("1E3", 1000.0),
            ("1.7954000001234567E9", 1.7954000001234567E9),
            // 2^60, every digit of it.
            ("1152921504606846976", 1152921504606846976.0),
            // Java 17's Double.toString of 2e23, 8.41e21 and the least
            // double: more digits than needed, still that double.
            ("1.9999999999999998E23", 2e23),
            ("8.409999999999999E21", 8.41e21),
            ("4.9E-324", 5e-324),
        ] {
            assert_eq!(exact_float::<f64>(text), Some(value), "{text}");
        }
        for text in [
            "9007199254740993",
            "123456789012345678901234567890",
            "1795400000.123456789",
            "0.10000000000000000001",
            "1e400",
            "1e-400",
            "1e99999999999999999999",
        ] {
            assert_eq!(exact_float::<f64>(text), None, "{text}");
        }
        assert_eq!(exact_float::<f32>("0.1"), Some(0.1f32));
        assert_eq!(exact_float::<f32>("16777217"), None);
    }

    #[test]
    fn decimals_normalize_to_digits_and_the_power_of_their_first() {
        assert_eq!(decimal("-0.0250"), Some((true, "25".into(), -1)));
        assert_eq!(decimal("2.50"), Some((false, "25".into(), 1)));
        assert_eq!(decimal("2.5e0"), Some((false, "25".into(), 1)));
        assert_eq!(decimal("1000"), Some((false, "1".into(), 4)));
        assert_eq!(decimal("1E+3"), Some((false, "1".into(), 4)));
        assert_eq!(decimal("0"), Some((false, "".into(), 0)));
        assert_eq!(decimal("0.000"), decimal("0e0"));
    }
}
