//! serde → Kryo bytes in one pass, without building a [`KryoValue`](super::KryoValue)
//! tree first: what [`to_vec`](super::to_vec) tries before the tree.
//!
//! The tree path ([`ser`](super::ser) then [`tree`](super::tree)) stays the
//! definition of the bytes. This writer covers the shapes plain Rust types
//! have (primitives, options, strings, `byte[]`, unit enums, structs,
//! `JavaUuid`/`JavaDate`/`JavaInstant`/`JavaBigDecimal`/`JavaBytes`,
//! sequences and maps of those) and gives up, with an error, on anything
//! else: `KryoValue` fields, newtypes named after a JDK class other
//! than a collection's or a map's, collections inside collections or maps, and every case the tree path refuses. `to_vec` then takes the
//! tree path, so the bytes (or the error) are the tree's in every case.
//!
//! Two things Kryo decides only once a container is complete: the order
//! of a POJO's fields (by name, where serde gives declaration order) and a
//! collection's header (whether any element is null, their common class).
//! Both are written as they come and rearranged when the container ends.
//! Class names are written last of all: Kryo numbers them in the order the
//! bytes mention them, which a rearrangement changes, so until then a
//! class name is a reference beside the bytes.

use std::cell::Cell;

use serde::ser::{self, Impossible, Serialize};

use super::class::{self, Builtin};
use super::error::{KryoError, Result};
use super::java_type::Primitive;
use super::schema::field_order;
use super::ser::{is_optional_string, optional_class};
use super::types::{BIG_DECIMAL, BYTES, DATE, INSTANT, UUID};
use super::value_serde::KRYO_VALUE;
use super::write::Writer;

/// Encodes `value` as [`to_vec`](super::to_vec) does, or fails where this
/// writer does not follow the tree path (the caller then takes it).
pub(crate) fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    // The working buffers of the last call on this thread, if no call is
    // under way (a `Serialize` may encode another value inside its own).
    let mut enc = SPARE.with(Cell::take).unwrap_or_else(|| Box::new(Enc::new()));
    enc.clear();
    let result = value.serialize(S {
        enc: &mut enc,
        at: At::Root,
        named: None,
    });
    let out = result.map(|_| enc.finish());
    if enc.capacity() <= SPARE_BYTES {
        SPARE.with(|spare| spare.set(Some(enc)));
    }
    out
}

thread_local! {
    static SPARE: Cell<Option<Box<Enc>>> = const { Cell::new(None) };
}

/// Working buffers past this size are dropped after the call rather than
/// kept for the next one.
const SPARE_BYTES: usize = 64 * 1024;

fn give_up(what: &str) -> KryoError {
    KryoError::encode(format!("{what}: left to the tree path"))
}

/// Where a value is written.
#[derive(Clone, Copy)]
enum At {
    /// `writeClassAndObject` with no generic arguments: the payload itself.
    Root,
    /// A POJO field, whose declared type follows from its Rust type
    /// (`type_name`: for a `None`); `boxed` inside `Some`.
    Field { type_name: &'static str, boxed: bool },
    /// An element, map key or map value: its body only; the container adds
    /// the class or null marker once it knows all its items.
    Item,
}

/// What an item was, for its container.
#[derive(Clone, Copy)]
struct Meta {
    /// Its runtime class; `None` for null.
    class: Option<&'static str>,
    /// The class its Rust type declares, and whether that is final; `None`
    /// when the value does not say (a null).
    decl: Option<(&'static str, bool)>,
    /// An enum constant (its serializer writes null itself).
    is_enum: bool,
}

const NULL: Meta = Meta {
    class: None,
    decl: None,
    is_enum: false,
};

fn meta(class: &'static str, is_final: bool) -> Meta {
    Meta {
        class: Some(class),
        decl: Some((class, is_final)),
        is_enum: false,
    }
}

/// A place in the output: a byte offset and a count of class references.
#[derive(Clone, Copy)]
struct Mark {
    at: usize,
    refs: usize,
}

struct Item {
    mark: Mark,
    meta: Meta,
}

struct FieldAt {
    name: &'static str,
    mark: Mark,
}

struct Enc {
    w: Writer,
    /// Class names still to be written, at byte offsets of `w.out`, in order.
    refs: Vec<(usize, &'static str)>,
    /// The items of the open containers (a stack: inner ones end first).
    items: Vec<Item>,
    /// The fields of the open structs, likewise.
    fields: Vec<FieldAt>,
    /// The bytes and references being rearranged, and the order of fields.
    tail: Vec<u8>,
    tail_refs: Vec<(usize, &'static str)>,
    tail_from: Mark,
    order: Vec<usize>,
    /// The class names written so far, by name id.
    known: Vec<&'static str>,
}

impl Enc {
    fn new() -> Self {
        Enc {
            w: Writer::new(),
            refs: Vec::new(),
            items: Vec::new(),
            fields: Vec::new(),
            tail: Vec::new(),
            tail_refs: Vec::new(),
            tail_from: Mark { at: 0, refs: 0 },
            order: Vec::new(),
            known: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.w.out.clear();
        self.refs.clear();
        self.items.clear();
        self.fields.clear();
    }

    /// Roughly the bytes held.
    fn capacity(&self) -> usize {
        self.w.out.capacity()
            + self.tail.capacity()
            + 32 * (self.refs.capacity() + self.tail_refs.capacity())
            + 48 * (self.items.capacity() + self.fields.capacity())
            + 8 * self.order.capacity()
    }

    fn mark(&self) -> Mark {
        Mark {
            at: self.w.out.len(),
            refs: self.refs.len(),
        }
    }

    /// `writeClass`, the name deferred.
    fn class(&mut self, class: &'static str) -> Result<()> {
        match class::registered_id(class) {
            Some(id) => self.w.var_u32(id),
            None if super::is_java_class(class) || class == "[B" => self.refs.push((self.w.out.len(), class)),
            None => return Err(give_up("not a Java class name")),
        }
        Ok(())
    }

    /// Sets aside everything from `from` on, to be put back in pieces.
    fn take_tail(&mut self, from: Mark) {
        self.tail.clear();
        self.tail.extend_from_slice(&self.w.out[from.at..]);
        self.w.out.truncate(from.at);
        self.tail_refs.clear();
        self.tail_refs.extend(self.refs.drain(from.refs..));
        self.tail_from = from;
    }

    /// Puts back what was between `from` and `to`.
    fn put_back(&mut self, from: Mark, to: Mark) {
        let base = self.tail_from;
        let at = self.w.out.len();
        self.w
            .out
            .extend_from_slice(&self.tail[from.at - base.at..to.at - base.at]);
        for &(offset, name) in &self.tail_refs[from.refs - base.refs..to.refs - base.refs] {
            self.refs.push((offset - from.at + at, name));
        }
    }

    /// The bytes with the class names written in, numbered in order.
    fn finish(&mut self) -> Vec<u8> {
        let body = &self.w.out;
        let mut w = Writer::with_capacity(body.len() + self.refs.iter().map(|(_, name)| name.len() + 2).sum::<usize>());
        let known = &mut self.known;
        known.clear();
        let mut done = 0;
        for &(at, name) in &self.refs {
            w.bytes(&body[done..at]);
            done = at;
            w.u8(0x01);
            if let Some(id) = known.iter().position(|k| *k == name) {
                w.var_u32(id as u32);
                continue;
            }
            w.var_u32(known.len() as u32);
            known.push(name);
            if name.is_ascii() {
                w.ascii(name);
            } else {
                w.string(Some(name)).expect("a class name fits");
            }
        }
        w.bytes(&body[done..]);
        w.out
    }
}

/// Java's `floatToIntBits`: one NaN.
fn f32_bits(v: f32) -> f32 {
    if v.is_nan() {
        f32::NAN
    } else {
        v
    }
}

fn f64_bits(v: f64) -> f64 {
    if v.is_nan() {
        f64::NAN
    } else {
        v
    }
}

struct S<'e> {
    enc: &'e mut Enc,
    at: At,
    /// The outermost newtype named after a JDK collection or map class
    /// around this value: a collection or map takes that class.
    named: Option<&'static str>,
}

impl<'e> S<'e> {
    /// A primitive or its box, `body` writing its bytes.
    fn primitive(self, p: Primitive, body: impl FnOnce(&mut Writer)) -> Result<Meta> {
        let boxed = p.boxed();
        match self.at {
            At::Root => self.enc.class(boxed)?,
            At::Field { boxed: true, .. } => self.enc.w.u8(1),
            At::Field { boxed: false, .. } | At::Item => {}
        }
        body(&mut self.enc.w);
        Ok(meta(boxed, true))
    }

    /// A value of a final class whose serializer writes null itself
    /// (`String`, `byte[]`).
    fn self_null(self, class: &'static str, body: impl FnOnce(&mut Writer) -> Result<()>) -> Result<Meta> {
        if let At::Root = self.at {
            self.enc.class(class)?;
        }
        body(&mut self.enc.w)?;
        Ok(meta(class, true))
    }

    /// `JavaUuid`, `JavaDate`...: the value as the tree path makes it,
    /// framed as a value of that class.
    fn jdk<T: ?Sized + Serialize>(self, name: &'static str, value: &T) -> Result<Meta> {
        let value = super::ser::jdk_newtype(name, value)?;
        let is_final = class::is_final_jdk_class(name);
        match self.at {
            At::Root => self.enc.class(name)?,
            At::Field { .. } if is_final => {
                if !class::builtin(name).is_some_and(Builtin::accepts_null) {
                    self.enc.w.u8(1);
                }
            }
            At::Field { .. } => self.enc.class(name)?,
            At::Item => {}
        }
        super::tree::write_body(&mut self.enc.w, &value, None)?;
        Ok(meta(name, is_final))
    }

    fn null(self) -> Result<Meta> {
        match self.at {
            At::Root => self.enc.w.u8(0),
            At::Field { type_name, .. } => self.enc.w.u8(if is_optional_string(type_name) { 0x80 } else { 0 }),
            At::Item => {}
        }
        Ok(NULL)
    }

    /// The class a newtype around this collection or map names, if it
    /// names one of `kind`.
    fn named_as(&self, kind: Builtin) -> Option<&'static str> {
        self.named
            .filter(|name| class::builtin(name) == Some(kind))
            .map(class::concrete)
    }

    /// A collection or a map at the root or in a field: its class, then its
    /// body, with the field's generic arguments (`own`) in a field.
    fn container(self, class: &'static str) -> Result<(&'e mut Enc, bool)> {
        let own = match self.at {
            At::Root => false,
            At::Field { .. } => true,
            At::Item => return Err(give_up("a collection in a collection")),
        };
        self.enc.class(class)?;
        Ok((self.enc, own))
    }
}

impl<'e> ser::Serializer for S<'e> {
    type Ok = Meta;
    type Error = KryoError;
    type SerializeSeq = SeqS<'e>;
    type SerializeTuple = SeqS<'e>;
    type SerializeTupleStruct = SeqS<'e>;
    type SerializeTupleVariant = Impossible<Meta, KryoError>;
    type SerializeMap = MapS<'e>;
    type SerializeStruct = StructS<'e>;
    type SerializeStructVariant = Impossible<Meta, KryoError>;

    fn serialize_bool(self, v: bool) -> Result<Meta> {
        self.primitive(Primitive::Boolean, |w| w.bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Meta> {
        self.primitive(Primitive::Byte, |w| w.u8(v as u8))
    }
    fn serialize_i16(self, v: i16) -> Result<Meta> {
        self.primitive(Primitive::Short, |w| w.i16(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Meta> {
        self.primitive(Primitive::Int, |w| w.var_i32(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Meta> {
        self.primitive(Primitive::Long, |w| w.var_i64(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Meta> {
        self.serialize_i8(i8::try_from(v).map_err(|_| give_up("u8"))?)
    }
    fn serialize_u16(self, v: u16) -> Result<Meta> {
        self.serialize_i16(i16::try_from(v).map_err(|_| give_up("u16"))?)
    }
    fn serialize_u32(self, v: u32) -> Result<Meta> {
        self.serialize_i32(i32::try_from(v).map_err(|_| give_up("u32"))?)
    }
    fn serialize_u64(self, v: u64) -> Result<Meta> {
        self.serialize_i64(i64::try_from(v).map_err(|_| give_up("u64"))?)
    }
    fn serialize_i128(self, v: i128) -> Result<Meta> {
        self.serialize_i64(i64::try_from(v).map_err(|_| give_up("i128"))?)
    }
    fn serialize_u128(self, v: u128) -> Result<Meta> {
        self.serialize_i64(i64::try_from(v).map_err(|_| give_up("u128"))?)
    }
    fn serialize_f32(self, v: f32) -> Result<Meta> {
        self.primitive(Primitive::Float, |w| w.f32(f32_bits(v)))
    }
    fn serialize_f64(self, v: f64) -> Result<Meta> {
        self.primitive(Primitive::Double, |w| w.f64(f64_bits(v)))
    }
    fn serialize_char(self, v: char) -> Result<Meta> {
        let unit = u16::try_from(u32::from(v)).map_err(|_| give_up("a char outside the BMP"))?;
        self.primitive(Primitive::Char, |w| w.u16(unit))
    }
    fn serialize_str(self, v: &str) -> Result<Meta> {
        self.self_null("java.lang.String", |w| w.string(Some(v)))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Meta> {
        self.self_null(BYTES, |w| {
            w.var_u32(Writer::len_plus_one(v.len())?);
            w.bytes(v);
            Ok(())
        })
    }
    fn serialize_none(self) -> Result<Meta> {
        self.null()
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<Meta> {
        let at = match self.at {
            At::Field { type_name, .. } => At::Field { type_name, boxed: true },
            other => other,
        };
        value.serialize(S {
            enc: self.enc,
            at,
            named: self.named,
        })
    }
    fn serialize_unit(self) -> Result<Meta> {
        self.null()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Meta> {
        self.null()
    }
    fn serialize_unit_variant(self, name: &'static str, index: u32, _variant: &'static str) -> Result<Meta> {
        let ordinal = index.checked_add(1).ok_or_else(|| give_up("an enum ordinal"))?;
        match self.at {
            At::Root => self.enc.class(name)?,
            // A final class: a null marker unless its serializer (an enum's
            // unless the name is a JDK class's) writes null itself.
            At::Field { .. } => {
                if class::builtin(name).is_some_and(|b| !b.accepts_null()) {
                    self.enc.w.u8(1);
                }
            }
            At::Item => {}
        }
        self.enc.w.var_u32(ordinal);
        Ok(Meta {
            class: Some(name),
            decl: Some((name, true)),
            is_enum: true,
        })
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, name: &'static str, value: &T) -> Result<Meta> {
        match name {
            UUID | DATE | INSTANT | BIG_DECIMAL | BYTES => self.jdk(name, value),
            _ if super::types::is_text_newtype(name) => self.jdk(name, value),
            KRYO_VALUE => Err(give_up(name)),
            _ => match class::builtin(name) {
                Some(Builtin::Collection | Builtin::Map) => value.serialize(S {
                    named: self.named.or(Some(name)),
                    ..self
                }),
                Some(_) => Err(give_up(name)),
                None => value.serialize(self),
            },
        }
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<Meta> {
        Err(give_up(name))
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<SeqS<'e>> {
        let class = self.named_as(Builtin::Collection).unwrap_or("java.util.ArrayList");
        let (enc, own) = self.container(class)?;
        Ok(SeqS {
            start: enc.mark(),
            base: enc.items.len(),
            enc,
            own,
            type_name: "",
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqS<'e>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqS<'e>> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(give_up(name))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapS<'e>> {
        let class = self.named_as(Builtin::Map).unwrap_or("java.util.HashMap");
        let (enc, own) = self.container(class)?;
        Ok(MapS {
            start: enc.mark(),
            base: enc.items.len(),
            enc,
            own,
            key_type: "",
            value_type: "",
        })
    }
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<StructS<'e>> {
        let java = super::is_java_class(name);
        let is_final = !java || class::is_final_jdk_class(name);
        match self.at {
            At::Root => self.enc.class(name)?,
            At::Field { .. } if is_final => {
                // FieldSerializer does not write null itself: a marker.
                if !class::builtin(name).is_some_and(Builtin::accepts_null) {
                    self.enc.w.u8(1);
                }
            }
            At::Field { .. } => self.enc.class(name)?,
            At::Item => {}
        }
        Ok(StructS {
            start: self.enc.mark(),
            base: self.enc.fields.len(),
            enc: self.enc,
            meta: meta(name, is_final),
        })
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(give_up(name))
    }
}

/// The generic argument for values of one position (all elements, all
/// keys...): the first declared class, `Object` if another differs, else
/// what the Rust type name says (as the tree path's `common_type`).
fn common_type(items: impl Iterator<Item = Meta>, type_name: &str) -> (&'static str, bool) {
    let mut found: Option<(&'static str, bool)> = None;
    for decl in items.filter_map(|m| m.decl) {
        match found {
            None => found = Some(decl),
            Some((class, _)) if class != decl.0 => return ("java.lang.Object", false),
            Some(_) => {}
        }
    }
    found.unwrap_or(match optional_class(type_name) {
        Some(class) => (class, true),
        None => ("java.lang.Object", false),
    })
}

/// `writeObjectOrNull` of an item with the serializer of its final
/// declared class.
fn put_known(enc: &mut Enc, declared: &str, item: &Item, end: Mark, or_null: bool) {
    if item.meta.class.is_none() {
        enc.w.u8(if declared == "java.lang.String" { 0x80 } else { 0 });
        return;
    }
    let accepts = match class::builtin(declared) {
        Some(b) => b.accepts_null(),
        None => item.meta.is_enum,
    };
    if or_null && !accepts {
        enc.w.u8(1);
    }
    enc.put_back(item.mark, end);
}

/// `writeClassAndObject` of an item.
fn put_classed(enc: &mut Enc, item: &Item, end: Mark) -> Result<()> {
    match item.meta.class {
        None => enc.w.u8(0),
        Some(class) => {
            enc.class(class)?;
            enc.put_back(item.mark, end);
        }
    }
    Ok(())
}

/// Where each of `items` ends: the next one's start, the last at `end`.
fn ends(items: &[Item], end: Mark) -> impl Iterator<Item = Mark> + '_ {
    items.iter().skip(1).map(|i| i.mark).chain(std::iter::once(end))
}

struct SeqS<'e> {
    enc: &'e mut Enc,
    start: Mark,
    base: usize,
    own: bool,
    type_name: &'static str,
}

impl SeqS<'_> {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.type_name = std::any::type_name::<T>();
        let mark = self.enc.mark();
        let meta = value.serialize(S {
            enc: self.enc,
            at: At::Item,
            named: None,
        })?;
        self.enc.items.push(Item { mark, meta });
        Ok(())
    }

    /// `CollectionSerializer.write`, as the tree path's `write_collection`.
    fn finish(self) -> Result<Meta> {
        let enc = self.enc;
        let end = enc.mark();
        let items = std::mem::take(&mut enc.items);
        let mine = &items[self.base..];
        let result = write_collection(enc, mine, self.start, end, self.own, self.type_name);
        enc.items = items;
        enc.items.truncate(self.base);
        result.map(|()| NULL)
    }
}

fn write_collection(enc: &mut Enc, items: &[Item], start: Mark, end: Mark, own: bool, type_name: &str) -> Result<()> {
    if items.is_empty() {
        enc.w.u8(1);
        return Ok(());
    }
    let len = Writer::len_plus_one(items.len())?;
    let has_null = items.iter().any(|i| i.meta.class.is_none());
    enc.take_tail(start);
    if own {
        let (element, is_final) = common_type(items.iter().map(|i| i.meta), type_name);
        if is_final {
            enc.w.var_flag(has_null, len);
            for (item, end) in items.iter().zip(ends(items, end)) {
                put_known(enc, element, item, end, has_null);
            }
            return Ok(());
        }
    }
    let mut common: Option<&'static str> = None;
    for class in items.iter().filter_map(|i| i.meta.class) {
        match common {
            None => common = Some(class),
            Some(c) if c != class => {
                // Several classes: each element with its own.
                enc.w.var_flag(false, len);
                for (item, end) in items.iter().zip(ends(items, end)) {
                    put_classed(enc, item, end)?;
                }
                return Ok(());
            }
            Some(_) => {}
        }
    }
    if common.is_none() && own && items.len() > 1 {
        return Err(super::ser::unknown_nulls());
    }
    enc.w.var_flag(true, len);
    let Some(class) = common else {
        // All null.
        enc.w.u8(0);
        return Ok(());
    };
    enc.class(class)?;
    enc.w.bool(has_null);
    let accepts = class::builtin(class).is_some_and(Builtin::accepts_null) || items.iter().any(|i| i.meta.is_enum);
    for (item, end) in items.iter().zip(ends(items, end)) {
        if item.meta.class.is_none() {
            enc.w.u8(if class == "java.lang.String" { 0x80 } else { 0 });
            continue;
        }
        if has_null && !accepts {
            enc.w.u8(1);
        }
        enc.put_back(item.mark, end);
    }
    Ok(())
}

impl ser::SerializeSeq for SeqS<'_> {
    type Ok = Meta;
    type Error = KryoError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Meta> {
        self.finish()
    }
}

impl ser::SerializeTuple for SeqS<'_> {
    type Ok = Meta;
    type Error = KryoError;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Meta> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SeqS<'_> {
    type Ok = Meta;
    type Error = KryoError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.push(value)
    }
    fn end(self) -> Result<Meta> {
        self.finish()
    }
}

struct MapS<'e> {
    enc: &'e mut Enc,
    start: Mark,
    base: usize,
    own: bool,
    key_type: &'static str,
    value_type: &'static str,
}

impl MapS<'_> {
    fn push<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        let mark = self.enc.mark();
        let meta = value.serialize(S {
            enc: self.enc,
            at: At::Item,
            named: None,
        })?;
        self.enc.items.push(Item { mark, meta });
        Ok(())
    }
}

impl ser::SerializeMap for MapS<'_> {
    type Ok = Meta;
    type Error = KryoError;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<()> {
        self.key_type = std::any::type_name::<T>();
        self.push(key)
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<()> {
        self.value_type = std::any::type_name::<T>();
        self.push(value)
    }
    /// `MapSerializer.write`, as the tree path's `write_map`.
    fn end(self) -> Result<Meta> {
        let enc = self.enc;
        let end = enc.mark();
        let items = std::mem::take(&mut enc.items);
        let mine = &items[self.base..];
        let result = write_map(enc, mine, self.start, end, self.own, self.key_type, self.value_type);
        enc.items = items;
        enc.items.truncate(self.base);
        result.map(|()| NULL)
    }
}

fn write_map(
    enc: &mut Enc,
    parts: &[Item],
    start: Mark,
    end: Mark,
    own: bool,
    key_type: &str,
    value_type: &str,
) -> Result<()> {
    if !parts.len().is_multiple_of(2) {
        return Err(give_up("a key without its value"));
    }
    let len = Writer::len_plus_one(parts.len() / 2)?;
    let declared = own.then(|| {
        (
            common_type(parts.iter().step_by(2).map(|i| i.meta), key_type),
            common_type(parts.iter().skip(1).step_by(2).map(|i| i.meta), value_type),
        )
    });
    enc.take_tail(start);
    enc.w.var_u32(len);
    for (n, (part, end)) in parts.iter().zip(ends(parts, end)).enumerate() {
        let declared = declared.map(|(k, v)| if n % 2 == 0 { k } else { v });
        match declared {
            Some((class, true)) => put_known(enc, class, part, end, true),
            _ => put_classed(enc, part, end)?,
        }
    }
    Ok(())
}

struct StructS<'e> {
    enc: &'e mut Enc,
    start: Mark,
    base: usize,
    meta: Meta,
}

impl ser::SerializeStruct for StructS<'_> {
    type Ok = Meta;
    type Error = KryoError;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, key: &'static str, value: &T) -> Result<()> {
        let mark = self.enc.mark();
        self.enc.fields.push(FieldAt { name: key, mark });
        value.serialize(S {
            enc: self.enc,
            at: At::Field {
                type_name: std::any::type_name::<T>(),
                boxed: false,
            },
            named: None,
        })?;
        Ok(())
    }
    fn skip_field(&mut self, key: &'static str) -> Result<()> {
        Err(give_up(key))
    }
    /// The fields again, in Kryo's order, unless serde gave them in it.
    fn end(self) -> Result<Meta> {
        let enc = self.enc;
        let fields = &enc.fields[self.base..];
        if fields.windows(2).any(|f| field_order(f[0].name, f[1].name).is_gt()) {
            let end = enc.mark();
            let mut order = std::mem::take(&mut enc.order);
            order.clear();
            order.extend(0..fields.len());
            order.sort_by(|&a, &b| field_order(fields[a].name, fields[b].name));
            let fields = std::mem::take(&mut enc.fields);
            enc.take_tail(self.start);
            let mine = &fields[self.base..];
            for &i in &order {
                let to = mine.get(i + 1).map_or(end, |f| f.mark);
                enc.put_back(mine[i].mark, to);
            }
            enc.fields = fields;
            enc.order = order;
        }
        enc.fields.truncate(self.base);
        Ok(self.meta)
    }
}
