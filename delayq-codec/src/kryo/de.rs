//! Kryo bytes → serde, driven by the Rust type: where Kryo wrote no class
//! (POJO fields, elements of a generic collection of a final type), the
//! Rust type says what Java declared (rules on
//! [`KryoCodec`](super::KryoCodec)).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer as _, IntoDeserializer, Visitor};

use super::class::{self, Builtin};
use super::error::{KryoError, KryoErrorKind, Result};
use super::java_type::Primitive;
use super::read::Reader;
use super::schema::field_order;
use super::tree;
use super::types::{BIG_DECIMAL, BIG_INTEGER, BYTES, DATE, INSTANT, UUID};
use super::value::KryoValue;
use super::value_serde::{carry, ValueDe, KRYO_VALUE};

pub(crate) fn from_slice<T: DeserializeOwned>(raw: &[u8]) -> Result<T> {
    let mut r = Reader::new(raw);
    let value = T::deserialize(De::new(&mut r, Slot::Classed { generics: false }));
    let value = value.map_err(|e| match e.offset() {
        Some(_) => e,
        None => KryoError::new(e.kind(), Some(r.pos()), e.message()),
    })?;
    r.finish()?;
    Ok(value)
}

/// How the value at hand was written.
#[derive(Clone, Debug)]
enum Slot {
    /// `writeClassAndObject`: its class first. `generics`: the declaration
    /// gave generic arguments (the Rust types stand for them).
    Classed { generics: bool },
    /// A POJO field; `boxed` inside an `Option` (a primitive gets a marker).
    Field { boxed: bool },
    /// An element, key or value whose declared (generic) type is the Rust
    /// type: written without class if that is final (`or_null`: with
    /// `writeObjectOrNull`), else with its class.
    Generic { or_null: bool },
    /// An element of a collection whose elements all have `class`.
    Same {
        class: Arc<str>,
        or_null: bool,
        generics: bool,
    },
    /// The first element of a generic collection: its header flag means
    /// "has nulls" if the element type is final, "same class" otherwise.
    Pending { flag: bool },
    /// An element of an all-null collection.
    Null,
}

/// What the first element of a generic collection decided.
#[derive(Clone, Debug)]
enum Mode {
    Final { or_null: bool },
    Same { class: Arc<str>, or_null: bool },
    Classed,
    AllNull,
}

/// How a value of a final Java type is framed at this slot.
enum Path {
    /// Bare (a primitive field).
    Bare,
    /// After a null marker when the flag says so.
    Marked(bool),
    /// Class first (or known from the collection).
    Classed,
}

pub(crate) struct De<'a, 'r> {
    r: &'r mut Reader<'a>,
    slot: Slot,
    decided: Option<&'r mut Option<Mode>>,
}

impl<'a, 'r> De<'a, 'r> {
    fn new(r: &'r mut Reader<'a>, slot: Slot) -> Self {
        De { r, slot, decided: None }
    }

    fn null_error(&self) -> KryoError {
        self.r.mismatch("Java wrote null where the Rust type has no Option")
    }

    /// Settles a pending collection element: `final_type` if the Rust call
    /// stands for a final Java class.
    fn resolve(&mut self, final_type: bool) -> Result<()> {
        let Slot::Pending { flag } = self.slot else {
            return Ok(());
        };
        let mode = if final_type {
            Mode::Final { or_null: flag }
        } else if flag {
            match tree::read_class(self.r)? {
                None => Mode::AllNull,
                Some(class) => Mode::Same {
                    class,
                    or_null: self.r.bool()?,
                },
            }
        } else {
            Mode::Classed
        };
        self.slot = slot_of(&mode);
        if let Some(decided) = self.decided.take() {
            *decided = Some(mode);
        }
        Ok(())
    }

    /// How a final-type value is framed here (after `resolve(true)`).
    fn path(&self) -> Path {
        match self.slot {
            Slot::Field { boxed: false } => Path::Bare,
            Slot::Field { boxed: true } => Path::Marked(true),
            Slot::Generic { or_null } => Path::Marked(or_null),
            _ => Path::Classed,
        }
    }

    /// Reads a null marker if there is one; null is an error here.
    fn marker(&mut self, present: bool) -> Result<()> {
        if present {
            match self.r.u8()? {
                1 => {}
                0 => return Err(self.null_error()),
                b => return Err(self.r.mismatch(format!("null marker {b:#04x}"))),
            }
        }
        Ok(())
    }

    /// For values written with their class: the class (read, or known from
    /// the collection), `None` for null.
    fn class_here(&mut self) -> Result<Option<Arc<str>>> {
        match self.slot.clone() {
            Slot::Same { class, or_null, .. } => {
                if or_null && !accepts_null(&class) {
                    match self.r.u8()? {
                        0 => return Ok(None),
                        1 => {}
                        b => return Err(self.r.mismatch(format!("null marker {b:#04x}"))),
                    }
                }
                Ok(Some(class))
            }
            Slot::Null => Ok(None),
            _ => tree::read_class(self.r),
        }
    }

    fn generics_here(&self) -> bool {
        match self.slot {
            Slot::Classed { generics } | Slot::Same { generics, .. } => generics,
            Slot::Field { .. } | Slot::Generic { .. } | Slot::Pending { .. } => true,
            Slot::Null => false,
        }
    }

    /// A class-written value: its class, non-null.
    fn required_class(&mut self) -> Result<Arc<str>> {
        if matches!(self.slot, Slot::Field { .. } | Slot::Generic { .. }) {
            // A non-final declared type: written with its class.
            let generics = self.generics_here();
            self.slot = Slot::Classed { generics };
        }
        match self.class_here()? {
            Some(c) => Ok(c),
            None => Err(self.null_error()),
        }
    }

    /// A whole class-written value as a tree (no Rust type to follow).
    fn classed_value(&mut self) -> Result<KryoValue> {
        if matches!(self.slot, Slot::Field { .. } | Slot::Generic { .. }) {
            // Declared `Object`: no generic arguments.
            self.slot = Slot::Classed { generics: false };
        }
        match self.class_here()? {
            None => Ok(KryoValue::Null),
            Some(class) => tree::read_body(self.r, None, &class, None),
        }
    }

    /// A scalar of a final Java type, framed as this slot frames it.
    fn scalar<V: Visitor<'a>>(mut self, p: Primitive, v: V) -> Result<V::Value> {
        self.resolve(true)?;
        match self.path() {
            Path::Bare => visit_primitive(self.r, p, v),
            Path::Marked(m) => {
                self.marker(m)?;
                visit_primitive(self.r, p, v)
            }
            Path::Classed => {
                let value = self.classed_value()?;
                forward(value, v, |d, v| d.deserialize_any(v))
            }
        }
    }

    fn string<V: Visitor<'a>>(mut self, v: V) -> Result<V::Value> {
        self.resolve(true)?;
        match self.path() {
            Path::Classed => {
                let value = self.classed_value()?;
                forward(value, v, |d, v| d.deserialize_any(v))
            }
            _ => match self.r.string()? {
                Some(s) => v.visit_string(s),
                None => Err(self.null_error()),
            },
        }
    }

    fn seq<V: Visitor<'a>>(mut self, v: V) -> Result<V::Value> {
        self.resolve(false)?;
        let generics = self.generics_here();
        let class = self.required_class()?;
        if class::builtin(&class) != Some(Builtin::Collection) {
            let value = tree::read_body(self.r, None, &class, None)?;
            return de::Deserializer::deserialize_any(ValueDe(value), v);
        }
        let (flag, len) = self.r.var_flag()?;
        if len == 0 {
            return Err(self.null_error());
        }
        let len = len - 1;
        let mode = if generics {
            None
        } else if flag && len > 0 {
            Some(match tree::read_class(self.r)? {
                None => Mode::AllNull,
                Some(class) => Mode::Same {
                    class,
                    or_null: self.r.bool()?,
                },
            })
        } else {
            Some(Mode::Classed)
        };
        // Elements take a byte or more each, except in an all-null collection.
        let len = match mode {
            Some(Mode::AllNull) => self.r.all_null_count(len)?,
            // A generic collection's first element may turn out all-null too.
            None if flag && len as usize > self.r.remaining() => self.r.all_null_count(len)?,
            _ => self.r.count(len, "a collection size")?,
        };
        self.r.enter()?;
        let value = v.visit_seq(Seq {
            r: &mut *self.r,
            left: len,
            flag,
            generics,
            mode,
        });
        self.r.leave();
        value
    }

    fn map<V: Visitor<'a>>(mut self, v: V) -> Result<V::Value> {
        self.resolve(false)?;
        let generics = self.generics_here();
        let class = self.required_class()?;
        if class::builtin(&class) != Some(Builtin::Map) {
            return Err(self
                .r
                .mismatch(format!("a {} where the Rust type is a map", class::shown(&class))));
        }
        self.map_body(generics, v)
    }

    fn map_body<V: Visitor<'a>>(self, generics: bool, v: V) -> Result<V::Value> {
        let len = match self.r.var_u32()? {
            0 => return Err(self.null_error()),
            n => self.r.count(n - 1, "a map size")?,
        };
        self.r.enter()?;
        let value = v.visit_map(Entries {
            r: &mut *self.r,
            left: len,
            generics,
        });
        self.r.leave();
        value
    }

    fn fields<V: Visitor<'a>>(self, fields: &'static [&'static str], v: V) -> Result<V::Value> {
        self.r.enter()?;
        let value = v.visit_map(Fields {
            r: &mut *self.r,
            names: kryo_order(fields).iter(),
        });
        self.r.leave();
        value
    }
}

/// A struct's fields in Kryo's order (by name), worked out once per
/// struct: `fields` is a `static` serde makes per type, so the sorted
/// copies kept are as many as the program has struct types.
fn kryo_order(fields: &'static [&'static str]) -> &'static [&'static str] {
    type Orders = RwLock<HashMap<(usize, usize), &'static [&'static str]>>;
    static ORDERS: OnceLock<Orders> = OnceLock::new();
    if fields.windows(2).all(|f| field_order(f[0], f[1]).is_le()) {
        return fields;
    }
    let key = (fields.as_ptr() as usize, fields.len());
    let orders = ORDERS.get_or_init(Orders::default);
    if let Some(order) = orders.read().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return order;
    }
    let mut order = fields.to_vec();
    order.sort_by(|a, b| field_order(a, b));
    let order: &'static [&'static str] = Vec::leak(order);
    orders
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(key)
        .or_insert(order)
}

fn slot_of(mode: &Mode) -> Slot {
    match mode {
        Mode::Final { or_null } => Slot::Generic { or_null: *or_null },
        Mode::Same { class, or_null } => Slot::Same {
            class: class.clone(),
            or_null: *or_null,
            generics: true,
        },
        Mode::Classed => Slot::Classed { generics: true },
        Mode::AllNull => Slot::Null,
    }
}

fn accepts_null(class: &str) -> bool {
    // Enums also write their own null (ordinal 0); a Rust enum's class is
    // not built in, and its null is the same single 0x00 byte either way.
    class::builtin(class).is_some_and(Builtin::accepts_null)
}

fn visit_primitive<'a, V: Visitor<'a>>(r: &mut Reader<'a>, p: Primitive, v: V) -> Result<V::Value> {
    match p {
        Primitive::Boolean => v.visit_bool(r.bool()?),
        Primitive::Byte => v.visit_i8(r.u8()? as i8),
        Primitive::Short => v.visit_i16(r.i16()?),
        Primitive::Int => v.visit_i32(r.var_i32()?),
        Primitive::Long => v.visit_i64(r.var_i64()?),
        Primitive::Float => v.visit_f32(r.f32()?),
        Primitive::Double => v.visit_f64(r.f64()?),
        Primitive::Char => {
            let unit = r.u16()?;
            match char::from_u32(u32::from(unit)) {
                Some(c) => v.visit_char(c),
                None => Err(r.error(KryoErrorKind::Malformed, "a lone UTF-16 surrogate in a char")),
            }
        }
    }
}

/// Hands a tree to a visitor through [`ValueDe`].
fn forward<'a, V: Visitor<'a>>(
    value: KryoValue,
    v: V,
    f: impl FnOnce(ValueDe, V) -> Result<V::Value>,
) -> Result<V::Value> {
    f(ValueDe(value), v)
}

macro_rules! scalars {
    ($($method:ident => $p:expr_2021,)*) => {$(
        fn $method<V: Visitor<'a>>(self, v: V) -> Result<V::Value> {
            self.scalar($p, v)
        }
    )*};
}

impl<'a> de::Deserializer<'a> for De<'a, '_> {
    type Error = KryoError;

    scalars! {
        deserialize_bool => Primitive::Boolean,
        deserialize_i8 => Primitive::Byte,
        deserialize_u8 => Primitive::Byte,
        deserialize_i16 => Primitive::Short,
        deserialize_u16 => Primitive::Short,
        deserialize_i32 => Primitive::Int,
        deserialize_u32 => Primitive::Int,
        deserialize_i64 => Primitive::Long,
        deserialize_u64 => Primitive::Long,
        deserialize_i128 => Primitive::Long,
        deserialize_u128 => Primitive::Long,
        deserialize_f32 => Primitive::Float,
        deserialize_f64 => Primitive::Double,
        deserialize_char => Primitive::Char,
    }

    fn deserialize_str<V: Visitor<'a>>(self, v: V) -> Result<V::Value> {
        self.string(v)
    }

    fn deserialize_string<V: Visitor<'a>>(self, v: V) -> Result<V::Value> {
        self.string(v)
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, v: V) -> Result<V::Value> {
        self.string(v)
    }

    fn deserialize_bytes<V: Visitor<'a>>(mut self, v: V) -> Result<V::Value> {
        self.resolve(true)?;
        match self.path() {
            Path::Classed => {
                let value = self.classed_value()?;
                forward(value, v, |d, v| d.deserialize_any(v))
            }
            _ => match self.r.var_u32()? {
                0 => Err(self.null_error()),
                n => {
                    let n = self.r.count(n - 1, "a byte length")?;
                    v.visit_bytes(self.r.take(n)?)
                }
            },
        }
    }

    fn deserialize_byte_buf<V: Visitor<'a>>(self, v: V) -> Result<V::Value> {
        self.deserialize_bytes(v)
    }

    fn deserialize_option<V: Visitor<'a>>(mut self, v: V) -> Result<V::Value> {
        if matches!(self.slot, Slot::Pending { .. }) {
            // Options in a generic collection: taken for a final element type.
            self.resolve(true)?;
        }
        let null = match &self.slot {
            Slot::Null => return v.visit_none(),
            Slot::Field { .. } => matches!(self.r.peek(), Some(0x00 | 0x80)),
            Slot::Generic { or_null } => *or_null && matches!(self.r.peek(), Some(0x00 | 0x80)),
            Slot::Classed { .. } => self.r.peek() == Some(0x00),
            Slot::Same { class, or_null, .. } => {
                let null_byte = if &**class == "java.lang.String" { 0x80 } else { 0x00 };
                *or_null && self.r.peek() == Some(null_byte)
            }
            Slot::Pending { .. } => unreachable!("resolved above"),
        };
        if self.r.peek().is_none() {
            return Err(self
                .r
                .error(KryoErrorKind::Truncated, "the payload ends inside a value"));
        }
        if null {
            self.r.u8()?;
            return v.visit_none();
        }
        if let Slot::Field { .. } = self.slot {
            self.slot = Slot::Field { boxed: true };
        }
        v.visit_some(self)
    }

    fn deserialize_unit<V: Visitor<'a>>(mut self, v: V) -> Result<V::Value> {
        self.resolve(false)?;
        let _ = self.classed_value()?;
        v.visit_unit()
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(self, _name: &'static str, v: V) -> Result<V::Value> {
        self.deserialize_unit(v)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(mut self, name: &'static str, v: V) -> Result<V::Value> {
        match name {
            KRYO_VALUE => {
                self.resolve(false)?;
                let value = self.classed_value()?;
                carry(value);
                v.visit_str(KRYO_VALUE)
            }
            UUID | INSTANT => {
                self.resolve(true)?;
                let builtin = if name == UUID { Builtin::Uuid } else { Builtin::Instant };
                let value = match self.path() {
                    Path::Bare => {
                        self.marker(true)?;
                        tree::read_builtin(self.r, builtin)?
                    }
                    Path::Marked(m) => {
                        self.marker(m)?;
                        tree::read_builtin(self.r, builtin)?
                    }
                    Path::Classed => self.classed_value()?,
                };
                check_class(&value, name, self.r)?;
                de::Deserializer::deserialize_newtype_struct(ValueDe(value), name, v)
            }
            BYTES => {
                self.resolve(true)?;
                let value = match self.path() {
                    Path::Classed => self.classed_value()?,
                    _ => tree::read_builtin(self.r, Builtin::Bytes)?,
                };
                if value == KryoValue::Null {
                    return Err(self.null_error());
                }
                check_class(&value, name, self.r)?;
                de::Deserializer::deserialize_newtype_struct(ValueDe(value), name, v)
            }
            _ if super::types::is_text_newtype(name) && name != BIG_INTEGER => {
                // A final java.time class: a null marker, no class, in a field.
                self.resolve(true)?;
                let value = match self.path() {
                    Path::Bare => {
                        self.marker(true)?;
                        tree::read_body(self.r, None, name, None)?
                    }
                    Path::Marked(m) => {
                        self.marker(m)?;
                        tree::read_body(self.r, None, name, None)?
                    }
                    Path::Classed => self.classed_value()?,
                };
                check_class(&value, name, self.r)?;
                de::Deserializer::deserialize_newtype_struct(ValueDe(value), name, v)
            }
            DATE | BIG_DECIMAL | BIG_INTEGER => {
                self.resolve(false)?;
                let class = self.required_class()?;
                let value = tree::read_body(self.r, None, &class, None)?;
                check_class(&value, name, self.r)?;
                de::Deserializer::deserialize_newtype_struct(ValueDe(value), name, v)
            }
            _ => v.visit_newtype_struct(self),
        }
    }

    fn deserialize_seq<V: Visitor<'a>>(self, v: V) -> Result<V::Value> {
        self.seq(v)
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, v: V) -> Result<V::Value> {
        self.seq(v)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(self, _name: &'static str, _len: usize, v: V) -> Result<V::Value> {
        self.seq(v)
    }

    fn deserialize_map<V: Visitor<'a>>(self, v: V) -> Result<V::Value> {
        self.map(v)
    }

    fn deserialize_struct<V: Visitor<'a>>(
        mut self,
        name: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value> {
        let named = super::is_java_class(name);
        self.resolve(!named)?;
        let path = if named { Path::Classed } else { self.path() };
        match path {
            // A final class (a Rust struct without a Java name): no class,
            // a null marker (FieldSerializer does not write null itself).
            Path::Bare => {
                self.marker(true)?;
                self.fields(fields, v)
            }
            Path::Marked(m) => {
                self.marker(m)?;
                self.fields(fields, v)
            }
            Path::Classed => {
                let generics = self.generics_here();
                let class = self.required_class()?;
                if class::builtin(&class) == Some(Builtin::Map) {
                    return self.map_body(generics, v);
                }
                if class::builtin(&class).is_some() || (named && *class != *name) {
                    return Err(self.r.error(
                        KryoErrorKind::UnknownClass,
                        format!("a {} where the Rust type expects {name}", class::shown(&class)),
                    ));
                }
                self.fields(fields, v)
            }
        }
    }

    fn deserialize_enum<V: Visitor<'a>>(
        mut self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value> {
        self.resolve(true)?;
        if let Path::Classed = self.path() {
            let class = self.required_class()?;
            if super::is_java_class(name) && *class != *name {
                return Err(self.r.error(
                    KryoErrorKind::UnknownClass,
                    format!("a {} where the Rust type expects the enum {name}", class::shown(&class)),
                ));
            }
        }
        let at = self.r.pos();
        let ordinal = match self.r.var_u32()? {
            0 => return Err(self.null_error()),
            n => n - 1,
        };
        if ordinal as usize >= variants.len() {
            return Err(KryoError::new(
                KryoErrorKind::SchemaMismatch,
                Some(at),
                format!("{name} has {} variants, Java wrote ordinal {ordinal}", variants.len()),
            ));
        }
        v.visit_enum(ordinal.into_deserializer())
    }

    fn deserialize_any<V: Visitor<'a>>(mut self, v: V) -> Result<V::Value> {
        self.resolve(false)?;
        let value = self.classed_value()?;
        forward(value, v, |d, v| d.deserialize_any(v))
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, v: V) -> Result<V::Value> {
        self.deserialize_any(v)
    }
}

fn check_class(value: &KryoValue, want: &str, r: &Reader<'_>) -> Result<()> {
    match value.java_class() {
        Some(class) if class != want => Err(r.error(
            KryoErrorKind::UnknownClass,
            format!("a {} where the Rust type expects {want}", class::shown(class)),
        )),
        _ => Ok(()),
    }
}

struct Seq<'a, 'r> {
    r: &'r mut Reader<'a>,
    left: usize,
    flag: bool,
    generics: bool,
    mode: Option<Mode>,
}

impl<'a> de::SeqAccess<'a> for Seq<'a, '_> {
    type Error = KryoError;

    fn next_element_seed<T: DeserializeSeed<'a>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let de = match &self.mode {
            Some(mode) => {
                let mut slot = slot_of(mode);
                if let Slot::Same { generics, .. } | Slot::Classed { generics } = &mut slot {
                    *generics = self.generics;
                }
                De::new(&mut *self.r, slot)
            }
            None => De {
                r: &mut *self.r,
                slot: Slot::Pending { flag: self.flag },
                decided: Some(&mut self.mode),
            },
        };
        seed.deserialize(de).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

struct Entries<'a, 'r> {
    r: &'r mut Reader<'a>,
    left: usize,
    generics: bool,
}

impl Entries<'_, '_> {
    fn slot(&self) -> Slot {
        if self.generics {
            Slot::Generic { or_null: true }
        } else {
            Slot::Classed { generics: false }
        }
    }
}

impl<'a> de::MapAccess<'a> for Entries<'a, '_> {
    type Error = KryoError;

    fn next_key_seed<K: DeserializeSeed<'a>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let slot = self.slot();
        seed.deserialize(De::new(&mut *self.r, slot)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value> {
        let slot = self.slot();
        seed.deserialize(De::new(&mut *self.r, slot))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

struct Fields<'a, 'r> {
    r: &'r mut Reader<'a>,
    names: std::slice::Iter<'static, &'static str>,
}

impl<'a> de::MapAccess<'a> for Fields<'a, '_> {
    type Error = KryoError;

    fn next_key_seed<K: DeserializeSeed<'a>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.names.next() {
            Some(name) => seed
                .deserialize(de::value::BorrowedStrDeserializer::<KryoError>::new(name))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(De::new(&mut *self.r, Slot::Field { boxed: false }))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.names.len())
    }
}
