//! [`KryoValue`] inside serde types: a `KryoValue` field is a Java `Object`
//! field (any value, written with its class), and a `KryoValue` can be read
//! into any serde type.
//!
//! The Kryo serializer and deserializer hand a `KryoValue` over unchanged
//! (through a per-thread slot, announced by a newtype name only this module
//! uses); other serde formats see the value's JSON form.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};
use serde::Deserialize;

use super::decimal::BeyondDecimal;
use super::error::{KryoError, KryoErrorKind};
use super::json::{instant_text, uuid_text};
use super::types::{BIG_DECIMAL, BYTES, DATE, INSTANT, UUID};
use super::value::KryoValue;

/// The newtype name that carries a `KryoValue` through serde.
pub(crate) const KRYO_VALUE: &str = "$delayq::KryoValue";

thread_local! {
    static CARRIED: RefCell<Option<KryoValue>> = const { RefCell::new(None) };
}

pub(crate) fn carry(value: KryoValue) {
    CARRIED.with(|c| *c.borrow_mut() = Some(value));
}

pub(crate) fn take_carried() -> Option<KryoValue> {
    CARRIED.with(|c| c.borrow_mut().take())
}

struct Carrier<'a>(&'a KryoValue);

impl Serialize for Carrier<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        carry(self.0.clone());
        self.0.to_json().serialize(s)
    }
}

/// As a Kryo field: an `Object` field holding exactly this value. In other
/// formats: its JSON form (see the `json` table).
impl Serialize for KryoValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(KRYO_VALUE, &Carrier(self))
    }
}

/// From Kryo: the value as Java wrote it. From other formats: the natural
/// Java classes (`Long`, `Double`, `String`, `ArrayList`, `HashMap`).
impl<'de> Deserialize<'de> for KryoValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_newtype_struct(KRYO_VALUE, ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = KryoValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<KryoValue, E> {
        Ok(KryoValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<KryoValue, E> {
        Ok(KryoValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<KryoValue, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<KryoValue, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<KryoValue, E> {
        Ok(KryoValue::Boolean(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<KryoValue, E> {
        Ok(KryoValue::Long(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<KryoValue, E> {
        Ok(match i64::try_from(v) {
            Ok(v) => KryoValue::Long(v),
            Err(_) => KryoValue::BigInteger(super::decimal::integer_bytes(i128::from(v))),
        })
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<KryoValue, E> {
        Ok(KryoValue::Double(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<KryoValue, E> {
        if v == KRYO_VALUE
            && let Some(value) = take_carried()
        {
            return Ok(value);
        }
        Ok(KryoValue::String(v.to_owned()))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<KryoValue, E> {
        Ok(KryoValue::Bytes(v.to_vec()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<KryoValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(AnySeed)? {
            items.push(item);
        }
        Ok(KryoValue::Collection {
            class: "java.util.ArrayList".into(),
            items,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KryoValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key_seed(AnySeed)? {
            entries.push((k, map.next_value_seed(AnySeed)?));
        }
        Ok(KryoValue::Map {
            class: "java.util.HashMap".into(),
            entries,
        })
    }
}

/// A nested value of another format.
struct AnySeed;

impl<'de> DeserializeSeed<'de> for AnySeed {
    type Value = KryoValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<KryoValue, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// Reads a [`KryoValue`] as a serde type, leniently: any integer class
/// feeds any Rust integer it fits, and so on.
pub(crate) struct ValueDe(pub KryoValue);

impl ValueDe {
    /// The plain form of a value wrapped in one of the Java newtypes.
    fn inner_of(value: KryoValue) -> Result<KryoValue, KryoError> {
        Ok(match value {
            KryoValue::Uuid(u) => KryoValue::String(uuid_text(u)),
            KryoValue::Date(ms) => KryoValue::Long(ms),
            KryoValue::Instant { seconds, nanos } => KryoValue::String(instant_text(seconds, nanos)),
            KryoValue::BigDecimal { unscaled, scale } => {
                KryoValue::String(super::decimal::format(&unscaled, scale).map_err(too_large)?)
            }
            other => other,
        })
    }
}

impl<'de> Deserializer<'de> for ValueDe {
    type Error = KryoError;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, KryoError> {
        match self.0 {
            KryoValue::Null => v.visit_unit(),
            KryoValue::Boolean(b) => v.visit_bool(b),
            KryoValue::Byte(n) => v.visit_i8(n),
            KryoValue::Short(n) => v.visit_i16(n),
            KryoValue::Int(n) => v.visit_i32(n),
            KryoValue::Long(n) => v.visit_i64(n),
            KryoValue::Float(f) => v.visit_f32(f),
            KryoValue::Double(f) => v.visit_f64(f),
            KryoValue::Char(c) => match char::from_u32(u32::from(c)) {
                Some(c) => v.visit_char(c),
                None => Err(de::Error::custom("a lone UTF-16 surrogate in a char")),
            },
            KryoValue::String(s) => v.visit_string(s),
            KryoValue::Bytes(b) => v.visit_byte_buf(b),
            KryoValue::BigInteger(b) => {
                let text = super::decimal::to_decimal_digits(&b).map_err(too_large)?;
                match text.parse::<i64>() {
                    Ok(n) => v.visit_i64(n),
                    Err(_) => v.visit_string(text),
                }
            }
            KryoValue::Enum { ordinal, name, .. } => match (name, ordinal) {
                (Some(name), _) => v.visit_string(name),
                (None, Some(ordinal)) => v.visit_u32(ordinal),
                (None, None) => Err(de::Error::custom("an enum constant with neither name nor ordinal")),
            },
            KryoValue::Collection { items, .. } => {
                v.visit_seq(de::value::SeqDeserializer::new(items.into_iter().map(ValueDe)))
            }
            KryoValue::Map { entries, .. } => v.visit_map(de::value::MapDeserializer::new(
                entries.into_iter().map(|(k, val)| (ValueDe(k), ValueDe(val))),
            )),
            KryoValue::Object { fields, .. } => v.visit_map(de::value::MapDeserializer::new(
                fields
                    .into_iter()
                    .map(|f| (ValueDe(KryoValue::String(f.name)), ValueDe(f.value))),
            )),
            KryoValue::Time(t) => v.visit_string(t.to_string()),
            KryoValue::Wrapped { value, .. } => ValueDe(*value).deserialize_any(v),
            KryoValue::EnumSet { items, .. } => {
                v.visit_seq(de::value::SeqDeserializer::new(items.into_iter().map(ValueDe)))
            }
            KryoValue::Throwable { class, message, cause } => {
                let entries = [
                    ("class", KryoValue::String(class)),
                    ("message", message.map_or(KryoValue::Null, KryoValue::String)),
                    ("cause", cause.map_or(KryoValue::Null, |c| *c)),
                ];
                v.visit_map(de::value::MapDeserializer::new(
                    entries
                        .into_iter()
                        .map(|(k, val)| (ValueDe(KryoValue::String(k.into())), ValueDe(val))),
                ))
            }
            other @ (KryoValue::Uuid(_)
            | KryoValue::Date(_)
            | KryoValue::Instant { .. }
            | KryoValue::BigDecimal { .. }) => ValueDe(Self::inner_of(other)?).deserialize_any(v),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, KryoError> {
        match self.0 {
            KryoValue::Null => v.visit_none(),
            other => v.visit_some(ValueDe(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, v: V) -> Result<V::Value, KryoError> {
        match name {
            KRYO_VALUE => {
                carry(self.0);
                v.visit_str(KRYO_VALUE)
            }
            UUID | DATE | INSTANT | BIG_DECIMAL | BYTES => v.visit_newtype_struct(ValueDe(Self::inner_of(self.0)?)),
            _ => v.visit_newtype_struct(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, KryoError> {
        let index = match &self.0 {
            // By name when the payload named it (Java serialization,
            // River) and the Rust enum has it; else by ordinal (Kryo).
            KryoValue::Enum { ordinal, name, .. } => match (
                name.as_deref().and_then(|n| variants.iter().position(|x| *x == n)),
                ordinal,
            ) {
                (Some(i), _) => i as u32,
                (None, Some(ordinal)) => *ordinal,
                (None, None) => return Err(de::Error::unknown_variant(name.as_deref().unwrap_or("?"), variants)),
            },
            KryoValue::String(s) => variants
                .iter()
                .position(|x| x == s)
                .ok_or_else(|| de::Error::unknown_variant(s, variants))? as u32,
            other => return Err(de::Error::custom(format!("{other:?} is not an enum constant"))),
        };
        if index as usize >= variants.len() {
            return Err(de::Error::custom(format!(
                "ordinal {index} is past the Rust enum's variants"
            )));
        }
        v.visit_enum(index.into_deserializer())
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, v: V) -> Result<V::Value, KryoError> {
        self.deserialize_any(v)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// A number Java sent that is too large to hand over as decimal text.
fn too_large(e: BeyondDecimal) -> KryoError {
    KryoError::new(KryoErrorKind::TooLarge, None, e.to_string())
}

impl<'de> IntoDeserializer<'de, KryoError> for ValueDe {
    type Deserializer = ValueDe;
    fn into_deserializer(self) -> ValueDe {
        self
    }
}
