//! Jackson-typed JSON → serde: the type information Redisson's
//! `JsonJacksonCodec` writes is taken off where the Rust type does not want it.
//!
//! Type-directed: a Rust sequence accepts `["java.util.ArrayList",[…]]` or a
//! bare array, a struct or map accepts an object with or without `"@class"`,
//! a number or string accepts `["java.lang.Long",5]` or a bare value. Where
//! the Rust type says nothing (`deserialize_any`, e.g. a `serde_json::Value`
//! field), every `"@class"` and every `["a.b.C", value]` wrapper is removed.

use base64::Engine;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::{Map, Value};

use super::node::CLASS_PROPERTY;
use super::ser::is_java_class;

type Error = serde_json::Error;
type Result<T> = std::result::Result<T, Error>;

/// A JSON value read with Jackson's type information in mind.
pub(crate) struct Typed(pub Value);

/// The value inside a `["a.b.C", value]` wrapper, or the value itself.
fn unwrap_wrapper(value: Value) -> Value {
    match value {
        Value::Array(mut items) if items.len() == 2 && items[0].as_str().is_some_and(is_java_class) => {
            items.pop().unwrap()
        }
        other => other,
    }
}

/// The value inside a wrapper only when it holds an array (a typed collection).
fn unwrap_collection(value: Value) -> Value {
    match value {
        Value::Array(items)
            if items.len() == 2 && items[0].as_str().is_some_and(is_java_class) && items[1].is_array() =>
        {
            unwrap_wrapper(Value::Array(items))
        }
        other => other,
    }
}

/// An object's properties without the `"@class"` one (also from a wrapper).
fn untyped_object(value: Value) -> std::result::Result<Map<String, Value>, Value> {
    match unwrap_wrapper(value) {
        Value::Object(mut map) => {
            map.remove(CLASS_PROPERTY);
            Ok(map)
        }
        other => Err(other),
    }
}

/// Removes all type information, for callers that want plain JSON.
pub(crate) fn strip(value: Value) -> Value {
    match unwrap_wrapper(value) {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| k != CLASS_PROPERTY)
                .map(|(k, v)| (k, strip(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip).collect()),
        other => other,
    }
}

macro_rules! scalar {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            unwrap_wrapper(self.0).$method(visitor)
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Typed {
    type Error = Error;

    scalar! {
        deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_string
        deserialize_unit deserialize_identifier
    }

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            Value::Object(map) => visit_map(map, visitor),
            Value::Array(items) => visit_seq(items, visitor),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_wrapper(self.0) {
            // A Java byte[]: base64 text.
            Value::String(text) => match base64::engine::general_purpose::STANDARD.decode(text.as_bytes()) {
                Ok(bytes) => visitor.visit_byte_buf(bytes),
                Err(e) => Err(de::Error::custom(format!("invalid base64 for byte[]: {e}"))),
            },
            Value::Array(items) => visit_seq(items, visitor),
            other => other.deserialize_bytes(visitor),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            value => visitor.visit_some(Typed(value)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, _name: &'static str, visitor: V) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match unwrap_collection(self.0) {
            Value::Array(items) => visit_seq(items, visitor),
            other => other.deserialize_seq(visitor),
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
            Ok(map) => visit_map(map, visitor),
            Err(other) => other.deserialize_map(visitor),
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

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        unwrap_wrapper(self.0).deserialize_enum(name, variants, visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }
}

fn visit_seq<'de, V: Visitor<'de>>(items: Vec<Value>, visitor: V) -> Result<V::Value> {
    let len = items.len();
    let mut access = SeqAccess {
        items: items.into_iter(),
    };
    let value = visitor.visit_seq(&mut access)?;
    if access.items.len() == 0 {
        Ok(value)
    } else {
        Err(de::Error::invalid_length(len, &"fewer elements in the array"))
    }
}

fn visit_map<'de, V: Visitor<'de>>(map: Map<String, Value>, visitor: V) -> Result<V::Value> {
    visitor.visit_map(MapAccess {
        entries: map.into_iter(),
        value: None,
    })
}

struct SeqAccess {
    items: std::vec::IntoIter<Value>,
}

impl<'de> de::SeqAccess<'de> for SeqAccess {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.items.next() {
            Some(value) => seed.deserialize(Typed(value)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct MapAccess {
    entries: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl<'de> de::MapAccess<'de> for MapAccess {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.entries.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(key.into_deserializer()).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("map value without a key"))?;
        seed.deserialize(Typed(value))
    }
}
