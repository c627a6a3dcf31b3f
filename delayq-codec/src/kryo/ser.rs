//! serde → [`KryoValue`], with each POJO field's declared Java type worked
//! out from its Rust type (rules on [`KryoCodec`](super::KryoCodec)).

use serde::ser::{self, Serialize};

use super::class::{self, Builtin};
use super::error::{KryoError, Result};
use super::java_type::{JavaType, Primitive};
use super::json::{parse_instant, parse_uuid};
use super::schema::sort_fields;
use super::types::{is_text_newtype, BIG_DECIMAL, BIG_INTEGER, BYTES, DATE, INSTANT, UUID};
use super::value::{KryoField, KryoValue};
use super::value_serde::{take_carried, KRYO_VALUE};

pub(crate) fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<KryoValue> {
    Ok(value.serialize(Ser)?.value)
}

/// The value of a newtype named after a JDK class (`JavaUuid`...), as this
/// path makes it.
pub(super) fn jdk_newtype<T: Serialize + ?Sized>(name: &'static str, value: &T) -> Result<KryoValue> {
    use serde::Serializer as _;
    Ok(Ser.serialize_newtype_struct(name, value)?.value)
}

/// What a Rust value says about the Java type it was declared with.
#[derive(Debug, Clone)]
pub(crate) enum Decl {
    /// A bare primitive (`i64` → `long`).
    Prim(Primitive),
    /// A declared type.
    Type(JavaType),
    /// Nothing (`None`): the Rust type name may still tell.
    Unknown,
}

pub(crate) struct Out {
    value: KryoValue,
    decl: Decl,
}

fn out(value: KryoValue, decl: Decl) -> Result<Out> {
    Ok(Out { value, decl })
}

/// Whether a Rust type name is an optional string (Java's null `String` is
/// written differently from every other null).
pub(super) fn is_optional_string(type_name: &str) -> bool {
    optional_class(type_name) == Some("java.lang.String")
}

/// The final Java class an `Option` of this Rust type stands for, known
/// from the type name alone (a `None` says nothing else): a string or a
/// boxed primitive. Sequences hand their elements by reference
/// (`&Option<String>`), so leading `&`s do not count.
pub(super) fn optional_class(type_name: &str) -> Option<&'static str> {
    let inner = type_name
        .trim_start_matches('&')
        .strip_prefix("core::option::Option<")
        .and_then(|s| s.strip_suffix('>'))?;
    Some(match inner {
        "alloc::string::String"
        | "&str"
        | "alloc::boxed::Box<str>"
        | "alloc::borrow::Cow<str>"
        | "alloc::sync::Arc<str>"
        | "alloc::rc::Rc<str>" => "java.lang.String",
        "bool" => "java.lang.Boolean",
        "i8" | "u8" => "java.lang.Byte",
        "i16" | "u16" => "java.lang.Short",
        "i32" | "u32" => "java.lang.Integer",
        "i64" | "u64" | "i128" | "u128" => "java.lang.Long",
        "f32" => "java.lang.Float",
        "f64" => "java.lang.Double",
        "char" => "java.lang.Character",
        _ => return None,
    })
}

/// A collection field of two or more nulls (or such a collection in a
/// field's maps and lists) whose element type neither an element nor the
/// Rust type name tells: Java writes one null per element when the declared
/// element class is final and a single null for all otherwise, and reads
/// the other form wrongly without an error.
pub(super) fn unknown_nulls() -> KryoError {
    KryoError::encode(
        "a collection in a field holding only nulls, of an element type the Rust type does not name \
         (Option<String>, Option<i64>...): its bytes depend on whether Java declares a final element class",
    )
}

/// [`unknown_nulls`] for a field's value: its collection and every
/// collection in its map values, keys and elements (Kryo passes a field's
/// declared generic types down to them), each against the element type
/// declared for it. A POJO inside has its own fields checked.
fn refuse_unknown_nulls(value: &KryoValue, declared: Option<&JavaType>) -> Result<()> {
    let args = declared.and_then(JavaType::generic_args);
    match value {
        KryoValue::Collection { items, .. } => {
            let element = args.and_then(|a| a.first());
            if element.is_none_or(|e| !e.is_final())
                && items.len() > 1
                && items.iter().all(|v| matches!(v, KryoValue::Null))
            {
                return Err(unknown_nulls());
            }
            items.iter().try_for_each(|i| refuse_unknown_nulls(i, element))
        }
        KryoValue::Map { entries, .. } => {
            let (key, value) = (args.and_then(|a| a.first()), args.and_then(|a| a.get(1)));
            entries.iter().try_for_each(|(k, v)| {
                refuse_unknown_nulls(k, key)?;
                refuse_unknown_nulls(v, value)
            })
        }
        _ => Ok(()),
    }
}

/// The declared type of a field or generic argument.
fn declared(decl: &Decl, type_name: &str, boxed: bool) -> JavaType {
    match decl {
        Decl::Prim(p) if boxed => JavaType::class(p.boxed(), Vec::new()),
        Decl::Prim(p) => JavaType::primitive(*p),
        Decl::Type(t) => t.clone(),
        Decl::Unknown => match optional_class(type_name) {
            Some(class) => JavaType::class(class, Vec::new()),
            None => JavaType::object(),
        },
    }
}

/// The generic argument for values of one position (all elements, all keys...).
fn common_type(decls: &[Decl], type_name: Option<&str>) -> JavaType {
    let mut found: Option<JavaType> = None;
    for d in decls {
        if matches!(d, Decl::Unknown) {
            continue;
        }
        let t = declared(d, "", true);
        match &found {
            None => found = Some(t),
            Some(f) if f.class_name() != t.class_name() => return JavaType::object(),
            Some(_) => {}
        }
    }
    found.unwrap_or_else(|| declared(&Decl::Unknown, type_name.unwrap_or(""), true))
}

pub(crate) struct Ser;

fn unsigned<T: TryInto<i64>>(v: T, what: &str) -> Result<i64> {
    v.try_into()
        .map_err(|_| KryoError::encode(format!("{what} out of Java's range")))
}

impl ser::Serializer for Ser {
    type Ok = Out;
    type Error = KryoError;
    type SerializeSeq = SeqSer;
    type SerializeTuple = SeqSer;
    type SerializeTupleStruct = SeqSer;
    type SerializeTupleVariant = ser::Impossible<Out, KryoError>;
    type SerializeMap = MapSer;
    type SerializeStruct = StructSer;
    type SerializeStructVariant = ser::Impossible<Out, KryoError>;

    fn serialize_bool(self, v: bool) -> Result<Out> {
        out(KryoValue::Boolean(v), Decl::Prim(Primitive::Boolean))
    }
    fn serialize_i8(self, v: i8) -> Result<Out> {
        out(KryoValue::Byte(v), Decl::Prim(Primitive::Byte))
    }
    fn serialize_i16(self, v: i16) -> Result<Out> {
        out(KryoValue::Short(v), Decl::Prim(Primitive::Short))
    }
    fn serialize_i32(self, v: i32) -> Result<Out> {
        out(KryoValue::Int(v), Decl::Prim(Primitive::Int))
    }
    fn serialize_i64(self, v: i64) -> Result<Out> {
        out(KryoValue::Long(v), Decl::Prim(Primitive::Long))
    }
    fn serialize_u8(self, v: u8) -> Result<Out> {
        let v = i8::try_from(v).map_err(|_| KryoError::encode(format!("{v} is out of Java byte's range")))?;
        self.serialize_i8(v)
    }
    fn serialize_u16(self, v: u16) -> Result<Out> {
        let v = i16::try_from(v).map_err(|_| KryoError::encode(format!("{v} is out of Java short's range")))?;
        self.serialize_i16(v)
    }
    fn serialize_u32(self, v: u32) -> Result<Out> {
        let v = i32::try_from(v).map_err(|_| KryoError::encode(format!("{v} is out of Java int's range")))?;
        self.serialize_i32(v)
    }
    fn serialize_u64(self, v: u64) -> Result<Out> {
        self.serialize_i64(unsigned(v, "u64")?)
    }
    fn serialize_i128(self, v: i128) -> Result<Out> {
        self.serialize_i64(unsigned(v, "i128")?)
    }
    fn serialize_u128(self, v: u128) -> Result<Out> {
        self.serialize_i64(unsigned(v, "u128")?)
    }
    fn serialize_f32(self, v: f32) -> Result<Out> {
        out(KryoValue::Float(v), Decl::Prim(Primitive::Float))
    }
    fn serialize_f64(self, v: f64) -> Result<Out> {
        out(KryoValue::Double(v), Decl::Prim(Primitive::Double))
    }
    fn serialize_char(self, v: char) -> Result<Out> {
        let unit = u16::try_from(u32::from(v))
            .map_err(|_| KryoError::encode(format!("{v:?} is outside the BMP: a Java char cannot hold it")))?;
        out(KryoValue::Char(unit), Decl::Prim(Primitive::Char))
    }
    fn serialize_str(self, v: &str) -> Result<Out> {
        out(
            KryoValue::String(v.to_owned()),
            Decl::Type(JavaType::class("java.lang.String", Vec::new())),
        )
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Out> {
        out(
            KryoValue::Bytes(v.to_vec()),
            Decl::Type(JavaType::class(BYTES, Vec::new())),
        )
    }
    fn serialize_none(self) -> Result<Out> {
        out(KryoValue::Null, Decl::Unknown)
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Out> {
        let inner = value.serialize(Ser)?;
        let decl = match inner.decl {
            Decl::Prim(p) => Decl::Type(JavaType::class(p.boxed(), Vec::new())),
            other => other,
        };
        out(inner.value, decl)
    }
    fn serialize_unit(self) -> Result<Out> {
        out(KryoValue::Null, Decl::Unknown)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Out> {
        out(KryoValue::Null, Decl::Unknown)
    }
    fn serialize_unit_variant(self, name: &'static str, index: u32, variant: &'static str) -> Result<Out> {
        out(
            KryoValue::Enum {
                class: name.to_owned(),
                ordinal: Some(index),
                name: Some(variant.to_owned()),
            },
            Decl::Type(JavaType::final_class(name)),
        )
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, name: &'static str, value: &T) -> Result<Out> {
        let inner = value.serialize(Ser)?;
        let java = |class: &str| Decl::Type(JavaType::class(class, Vec::new()));
        let bad = || KryoError::encode(format!("{name}: unexpected {:?}", inner.value));
        match (name, &inner.value) {
            (KRYO_VALUE, _) => {
                let value = take_carried().ok_or_else(|| KryoError::encode("a KryoValue lost on the way"))?;
                out(value, Decl::Type(JavaType::object()))
            }
            (UUID, KryoValue::String(s)) => out(KryoValue::Uuid(parse_uuid(s).map_err(KryoError::encode)?), java(UUID)),
            (DATE, KryoValue::Long(ms)) => out(KryoValue::Date(*ms), java(DATE)),
            (INSTANT, KryoValue::String(s)) => {
                let (seconds, nanos) = parse_instant(s).map_err(KryoError::encode)?;
                out(KryoValue::Instant { seconds, nanos }, java(INSTANT))
            }
            (BIG_DECIMAL, KryoValue::String(s)) => {
                out(KryoValue::big_decimal(s).map_err(KryoError::encode)?, java(BIG_DECIMAL))
            }
            (BYTES, KryoValue::Bytes(_)) => out(inner.value, java(BYTES)),
            (BIG_INTEGER, KryoValue::String(s)) => match super::decimal::parse(s) {
                Ok((unscaled, 0)) => out(KryoValue::BigInteger(unscaled), java(BIG_INTEGER)),
                _ => Err(KryoError::encode(format!("{s:?} is not an integer in decimal"))),
            },
            (name, KryoValue::String(s)) if is_text_newtype(name) => out(
                KryoValue::Time(super::time::JavaTime::parse(name, s).map_err(KryoError::encode)?),
                java(name),
            ),
            (BIG_INTEGER, _) => Err(bad()),
            (UUID | DATE | INSTANT | BIG_DECIMAL | BYTES, _) => Err(bad()),
            _ => match (class::builtin(name), inner.value.clone()) {
                // A newtype named after a collection or map class: that class.
                (Some(Builtin::Collection), KryoValue::Collection { items, .. }) => {
                    let args = inner.decl_args();
                    out(
                        KryoValue::Collection {
                            class: class::concrete(name).to_owned(),
                            items,
                        },
                        Decl::Type(JavaType::class(name, args)),
                    )
                }
                (Some(Builtin::Map), KryoValue::Map { entries, .. }) => {
                    let args = inner.decl_args();
                    out(
                        KryoValue::Map {
                            class: class::concrete(name).to_owned(),
                            entries,
                        },
                        Decl::Type(JavaType::class(name, args)),
                    )
                }
                (_, _) => Ok(inner),
            },
        }
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        _index: u32,
        variant: &'static str,
        _value: &T,
    ) -> Result<Out> {
        Err(no_data(name, variant))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSer> {
        Ok(SeqSer {
            items: Vec::with_capacity(len.unwrap_or(0)),
            type_name: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSer> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqSer> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(no_data(name, variant))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapSer> {
        Ok(MapSer {
            keys: Vec::new(),
            values: Vec::new(),
            key_type: None,
            value_type: None,
        })
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<StructSer> {
        Ok(StructSer {
            name,
            fields: Vec::with_capacity(len),
        })
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(no_data(name, variant))
    }
}

fn no_data(name: &str, variant: &str) -> KryoError {
    KryoError::encode(format!(
        "{name}::{variant} carries data: a Java enum constant cannot (only unit variants map to Java enums)"
    ))
}

impl Out {
    fn decl_args(&self) -> Vec<JavaType> {
        match &self.decl {
            Decl::Type(t) => t.args().to_vec(),
            _ => Vec::new(),
        }
    }
}

pub(crate) struct SeqSer {
    items: Vec<Out>,
    type_name: Option<&'static str>,
}

impl SeqSer {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.type_name = Some(std::any::type_name::<T>());
        self.items.push(value.serialize(Ser)?);
        Ok(())
    }

    fn finish(self) -> Result<Out> {
        let decls: Vec<Decl> = self.items.iter().map(|o| o.decl.clone()).collect();
        let element = common_type(&decls, self.type_name);
        out(
            KryoValue::Collection {
                class: "java.util.ArrayList".to_owned(),
                items: self.items.into_iter().map(|o| o.value).collect(),
            },
            Decl::Type(JavaType::class("java.util.List", vec![element])),
        )
    }
}

impl ser::SerializeSeq for SeqSer {
    type Ok = Out;
    type Error = KryoError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Out> {
        self.finish()
    }
}

impl ser::SerializeTuple for SeqSer {
    type Ok = Out;
    type Error = KryoError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Out> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SeqSer {
    type Ok = Out;
    type Error = KryoError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Out> {
        self.finish()
    }
}

pub(crate) struct MapSer {
    keys: Vec<Out>,
    values: Vec<Out>,
    key_type: Option<&'static str>,
    value_type: Option<&'static str>,
}

impl ser::SerializeMap for MapSer {
    type Ok = Out;
    type Error = KryoError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.key_type = Some(std::any::type_name::<T>());
        self.keys.push(key.serialize(Ser)?);
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.value_type = Some(std::any::type_name::<T>());
        self.values.push(value.serialize(Ser)?);
        Ok(())
    }
    fn end(self) -> Result<Out> {
        let key_decls: Vec<Decl> = self.keys.iter().map(|o| o.decl.clone()).collect();
        let value_decls: Vec<Decl> = self.values.iter().map(|o| o.decl.clone()).collect();
        let k = common_type(&key_decls, self.key_type);
        let v = common_type(&value_decls, self.value_type);
        out(
            KryoValue::Map {
                class: "java.util.HashMap".to_owned(),
                entries: self
                    .keys
                    .into_iter()
                    .map(|o| o.value)
                    .zip(self.values.into_iter().map(|o| o.value))
                    .collect(),
            },
            Decl::Type(JavaType::class("java.util.Map", vec![k, v])),
        )
    }
}

pub(crate) struct StructSer {
    name: &'static str,
    fields: Vec<(String, KryoField)>,
}

impl ser::SerializeStruct for StructSer {
    type Ok = Out;
    type Error = KryoError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        let o = value.serialize(Ser)?;
        let declared = declared(&o.decl, std::any::type_name::<T>(), false);
        refuse_unknown_nulls(&o.value, Some(&declared))?;
        self.fields
            .push((key.to_owned(), KryoField::new(key, declared, o.value)));
        Ok(())
    }
    fn skip_field(&mut self, key: &'static str) -> Result<()> {
        Err(KryoError::encode(format!(
            "{}.{key} was skipped (skip_serializing_if?): Kryo writes every field, without names",
            self.name
        )))
    }
    fn end(mut self) -> Result<Out> {
        sort_fields(&mut self.fields);
        let decl = if super::is_java_class(self.name) {
            JavaType::class(self.name, Vec::new())
        } else {
            JavaType::final_class(self.name)
        };
        out(
            KryoValue::Object {
                class: self.name.to_owned(),
                fields: self.fields.into_iter().map(|(_, f)| f).collect(),
            },
            Decl::Type(decl),
        )
    }
}
