//! serde → Jackson-typed JSON, following Redisson's `JsonJacksonCodec`
//! (default typing `NON_FINAL`, type id in an `@class` property, sorted
//! properties, nulls left out).
//!
//! Java decides per *declared* type whether to write type information; Rust
//! values carry no declared Java type, so the rules below stand in for it:
//!
//! | Rust value | at the root (`Object`) | struct field | collection element / map value |
//! | --- | --- | --- | --- |
//! | struct named `a.b.C` (`#[serde(rename)]`) | `{"@class":"a.b.C",…}` | same | same |
//! | struct without a Java name | error | plain object (a `final` class) | plain object |
//! | `Vec`, slice, set | `["java.util.ArrayList",[…]]` | same | same |
//! | map | `{"@class":"java.util.HashMap",…}` | same | same |
//! | `i64`, `u64` | `["java.lang.Long",n]` | `n` (a `long` field) | `["java.lang.Long",n]` (`List<Long>`) |
//! | `i32` and smaller, `f64`, `bool`, `String` | plain (Jackson's "natural" types) | plain | plain |
//! | `f32` | `["java.lang.Float",x]` | plain | plain |
//! | `None` | `null` | left out | `null` |
//! | newtype struct named `a.b.C` | its value typed as `a.b.C` | same | same |
//!
//! A newtype named with a Java class overrides the defaults: `JavaLong` for
//! a boxed `Long` field, or your own `#[serde(rename = "java.util.LinkedList")]
//! struct Linked<T>(Vec<T>)` for another collection class.

use base64::Engine;
use serde::ser::{self, Serialize};

use super::error::JacksonError;
use super::node::Node;
use super::value_write::{write_natural, Dialect};
use crate::kryo::{JavaTime, JavaType, KryoValue};

pub(crate) const ARRAY_LIST: &str = "java.util.ArrayList";
pub(crate) const HASH_MAP: &str = "java.util.HashMap";
pub(crate) const LONG: &str = "java.lang.Long";
const FLOAT: &str = "java.lang.Float";
const BIG_INTEGER: &str = "java.math.BigInteger";

/// Where a value sits, which stands in for its declared Java type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// The whole payload: declared `Object`, so always typed.
    Root,
    /// A bean property: primitives and final classes are untyped.
    Field,
    /// An element of a collection or a map value: boxed types.
    Element,
}

/// Whether `name` is a Java class name (`a.b.C`, `a.B$C`, `[Ljava.lang.Object;`).
pub(crate) fn is_java_class(name: &str) -> bool {
    if name.starts_with('[') {
        return name.len() > 1;
    }
    let mut parts = 0;
    for part in name.split('.') {
        let mut chars = part.chars();
        match chars.next() {
            Some(c) if c.is_alphabetic() || c == '_' || c == '$' => {}
            _ => return false,
        }
        if !chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

impl ser::Error for JacksonError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        JacksonError::encode(msg.to_string())
    }
}

type Result<T> = std::result::Result<T, JacksonError>;

/// Serializes one value at a place.
#[derive(Clone, Copy)]
pub(crate) struct Ser {
    pub place: Place,
    /// Whether Java's `ObjectMapper` has `JavaTimeModule` (how `java.time` is written).
    pub dialect: Dialect,
}

fn typed(class: &str, node: Node) -> Node {
    Node::Typed(class.to_owned(), Box::new(node))
}

impl Ser {
    /// A serializer for a value inside this one.
    fn at(self, place: Place) -> Ser {
        Ser { place, ..self }
    }

    /// A value of a natural Rust type ([`crate::natural`]: a newtype named
    /// after its Java class around Java's text) as Jackson writes that
    /// class: `JavaTimeModule`'s forms for `java.time` (refused in the
    /// plain dialect, as Java's plain Jackson refuses them), a
    /// `BigDecimal`'s or `BigInteger`'s digits. `None` for other newtypes.
    fn natural(self, class: &str, text: &str) -> Result<Option<Node>> {
        let value = match class {
            "java.math.BigDecimal" => KryoValue::big_decimal(text),
            "java.math.BigInteger" => text
                .parse::<num_bigint::BigInt>()
                .map(|n| KryoValue::BigInteger(n.to_signed_bytes_be()))
                .map_err(|e| e.to_string()),
            "java.time.Instant" => match JavaTime::parse("java.sql.Timestamp", text) {
                Ok(JavaTime::SqlTimestamp { seconds, nanos }) => Ok(KryoValue::Instant { seconds, nanos }),
                Ok(_) => unreachable!("a timestamp parses to a timestamp"),
                Err(e) => Err(e),
            },
            c if JavaTime::is_time_class(c) => JavaTime::parse(c, text).map(KryoValue::Time),
            _ => return Ok(None),
        }
        .map_err(|e| JacksonError::encode(format!("{class} {text:?}: {e}")))?;
        let (declared, root) = match self.place {
            Place::Root => (JavaType::object(), true),
            Place::Field => (JavaType::final_class(class), false),
            Place::Element => (JavaType::object(), false),
        };
        write_natural(&value, &declared, root, self.dialect).map(Some)
    }

    fn integer(self, value: i128) -> Node {
        let long = i64::try_from(value).is_ok();
        match (self.place, long) {
            (Place::Field, _) => Node::Int(value),
            (_, true) => typed(LONG, Node::Int(value)),
            (_, false) => typed(BIG_INTEGER, Node::Int(value)),
        }
    }
}

impl ser::Serializer for Ser {
    type Ok = Node;
    type Error = JacksonError;
    type SerializeSeq = SeqSer;
    type SerializeTuple = SeqSer;
    type SerializeTupleStruct = SeqSer;
    type SerializeTupleVariant = VariantSer<SeqSer>;
    type SerializeMap = MapSer;
    type SerializeStruct = StructSer;
    type SerializeStructVariant = VariantSer<StructSer>;

    fn serialize_bool(self, v: bool) -> Result<Node> {
        Ok(Node::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Node> {
        Ok(Node::Int(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<Node> {
        Ok(Node::Int(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<Node> {
        Ok(Node::Int(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<Node> {
        Ok(self.integer(v.into()))
    }
    fn serialize_i128(self, v: i128) -> Result<Node> {
        Ok(self.integer(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Node> {
        Ok(Node::Int(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<Node> {
        Ok(Node::Int(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<Node> {
        Ok(Node::Int(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<Node> {
        Ok(self.integer(v.into()))
    }
    fn serialize_u128(self, v: u128) -> Result<Node> {
        let v = i128::try_from(v).map_err(|_| JacksonError::encode("integer too large for Java"))?;
        Ok(self.integer(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Node> {
        let node = Node::Float {
            value: v.into(),
            single: true,
        };
        Ok(if self.place == Place::Root {
            typed(FLOAT, node)
        } else {
            node
        })
    }
    fn serialize_f64(self, v: f64) -> Result<Node> {
        Ok(Node::Float {
            value: v,
            single: false,
        })
    }
    fn serialize_char(self, v: char) -> Result<Node> {
        Ok(Node::Str(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Node> {
        Ok(Node::Str(v.to_owned()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Node> {
        // A Java byte[]: Jackson writes base64, without type information.
        Ok(Node::Str(base64::engine::general_purpose::STANDARD.encode(v)))
    }
    fn serialize_none(self) -> Result<Node> {
        Ok(Node::Null)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Node> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Node> {
        Ok(Node::Null)
    }
    fn serialize_unit_struct(self, name: &'static str) -> Result<Node> {
        if is_java_class(name) {
            Ok(typed(name, Node::Object(Vec::new())))
        } else {
            Ok(Node::Null)
        }
    }
    fn serialize_unit_variant(self, name: &'static str, _index: u32, variant: &'static str) -> Result<Node> {
        // A Java enum constant; typed only where the declared type is Object.
        let node = Node::Str(variant.to_owned());
        Ok(if self.place == Place::Root && is_java_class(name) {
            typed(name, node)
        } else {
            node
        })
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, name: &'static str, value: &T) -> Result<Node> {
        let inner = value.serialize(self)?;
        if let Node::Str(text) = &inner
            && let Some(node) = self.natural(name, text)?
        {
            return Ok(node);
        }
        if !is_java_class(name) {
            return Ok(inner);
        }
        // The newtype names the Java class: replace any default typing with it.
        Ok(match inner {
            Node::Typed(_, node) => Node::Typed(name.to_owned(), node),
            node => typed(name, node),
        })
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Node> {
        let inner = value.serialize(self.at(Place::Field))?;
        Ok(Node::Object(vec![(variant.to_owned(), inner)]))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSer> {
        Ok(SeqSer {
            dialect: self.dialect,
            items: Vec::with_capacity(len.unwrap_or(0)),
            typed: true,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSer> {
        Ok(SeqSer {
            dialect: self.dialect,
            items: Vec::with_capacity(len),
            typed: false,
        })
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqSer> {
        Ok(SeqSer {
            dialect: self.dialect,
            items: Vec::with_capacity(len),
            typed: false,
        })
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSer<SeqSer>> {
        Ok(VariantSer {
            variant,
            inner: SeqSer {
                dialect: self.dialect,
                items: Vec::with_capacity(len),
                typed: false,
            },
        })
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapSer> {
        Ok(MapSer {
            dialect: self.dialect,
            entries: Vec::new(),
            key: None,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<StructSer> {
        let class = if is_java_class(name) {
            Some(name)
        } else if self.place == Place::Root {
            return Err(JacksonError::encode(format!(
                "`{name}` has no Java class name for \"@class\": add #[serde(rename = \"com.example.{name}\")] \
                 with the class Java reads it as"
            )));
        } else {
            None
        };
        Ok(StructSer {
            dialect: self.dialect,
            class,
            fields: Vec::with_capacity(len),
        })
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSer<StructSer>> {
        Ok(VariantSer {
            variant,
            inner: StructSer {
                dialect: self.dialect,
                class: None,
                fields: Vec::with_capacity(len),
            },
        })
    }
}

pub(crate) struct SeqSer {
    dialect: Dialect,
    items: Vec<Node>,
    /// A collection (typed as ArrayList) rather than a tuple (a plain array).
    typed: bool,
}

impl SeqSer {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.items.push(value.serialize(self.at(Place::Element))?);
        Ok(())
    }

    fn finish(self) -> Node {
        if self.typed {
            typed(ARRAY_LIST, Node::Array(self.items))
        } else {
            Node::Array(self.items)
        }
    }
}

impl SeqSer {
    fn at(&self, place: Place) -> Ser {
        Ser {
            place,
            dialect: self.dialect,
        }
    }
}

impl ser::SerializeSeq for SeqSer {
    type Ok = Node;
    type Error = JacksonError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Node> {
        Ok(self.finish())
    }
}

impl ser::SerializeTuple for SeqSer {
    type Ok = Node;
    type Error = JacksonError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Node> {
        Ok(self.finish())
    }
}

impl ser::SerializeTupleStruct for SeqSer {
    type Ok = Node;
    type Error = JacksonError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Node> {
        Ok(self.finish())
    }
}

pub(crate) struct MapSer {
    dialect: Dialect,
    entries: Vec<(String, Node)>,
    key: Option<String>,
}

impl MapSer {
    fn at(&self, place: Place) -> Ser {
        Ser {
            place,
            dialect: self.dialect,
        }
    }
}

impl ser::SerializeMap for MapSer {
    type Ok = Node;
    type Error = JacksonError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        let key = match key.serialize(self.at(Place::Field))? {
            Node::Str(s) => s,
            Node::Int(i) => i.to_string(),
            Node::Bool(b) => b.to_string(),
            other => {
                return Err(JacksonError::encode(format!(
                    "map keys must be strings or numbers, got {other:?}"
                )))
            }
        };
        self.key = Some(key);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        let key = self
            .key
            .take()
            .ok_or_else(|| JacksonError::encode("map value without a key"))?;
        self.entries.push((key, value.serialize(self.at(Place::Element))?));
        Ok(())
    }
    fn end(self) -> Result<Node> {
        // Jackson keeps a map's own order (Redisson does not sort map entries).
        Ok(typed(HASH_MAP, Node::Object(self.entries)))
    }
}

pub(crate) struct StructSer {
    dialect: Dialect,
    class: Option<&'static str>,
    fields: Vec<(String, Node)>,
}

impl StructSer {
    fn at(&self, place: Place) -> Ser {
        Ser {
            place,
            dialect: self.dialect,
        }
    }
}

impl ser::SerializeStruct for StructSer {
    type Ok = Node;
    type Error = JacksonError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        let node = value.serialize(self.at(Place::Field))?;
        // Include.NON_NULL: a null property is left out.
        if node != Node::Null {
            self.fields.push((key.to_owned(), node));
        }
        Ok(())
    }
    fn end(mut self) -> Result<Node> {
        // SORT_PROPERTIES_ALPHABETICALLY compares Java strings: UTF-16 code units.
        self.fields
            .sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
        let object = Node::Object(self.fields);
        Ok(match self.class {
            Some(class) => typed(class, object),
            None => object,
        })
    }
}

/// An enum variant with data, written as `{"Variant": data}`.
pub(crate) struct VariantSer<S> {
    variant: &'static str,
    inner: S,
}

impl ser::SerializeTupleVariant for VariantSer<SeqSer> {
    type Ok = Node;
    type Error = JacksonError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.inner.push(value)
    }
    fn end(self) -> Result<Node> {
        Ok(Node::Object(vec![(self.variant.to_owned(), self.inner.finish())]))
    }
}

impl ser::SerializeStructVariant for VariantSer<StructSer> {
    type Ok = Node;
    type Error = JacksonError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        ser::SerializeStruct::serialize_field(&mut self.inner, key, value)
    }
    fn end(self) -> Result<Node> {
        let variant = self.variant;
        Ok(Node::Object(vec![(
            variant.to_owned(),
            ser::SerializeStruct::end(self.inner)?,
        )]))
    }
}
