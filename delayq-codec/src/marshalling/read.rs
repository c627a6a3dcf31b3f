//! Reading a River stream (as `RiverUnmarshaller` does) into the arena: one
//! object after the protocol version byte.

use std::rc::Rc;

use super::arena::{Arena, Instances, Node, NodeId};
use super::class::{Class, Classes, FieldDesc, Serial};
use super::error::{MarshallingErrorKind as Kind, Result};
use super::ids::{self, jdk};
use super::input::Input;
use super::jdk::{Custom, Level};
use crate::kryo::java_type::Primitive;
use crate::kryo::{JavaType, KryoValue, MAX_DEPTH};

/// Decodes a whole payload: the version byte, one object, nothing after.
pub(super) fn decode(raw: &[u8]) -> Result<KryoValue> {
    let mut r = Reader {
        input: Input::new(raw),
        classes: Classes::default(),
        instances: Instances::default(),
        arena: Arena::for_payload(raw.len()),
        depth: 0,
    };
    let version = r.input.u8()?;
    if !(ids::MIN_VERSION..=ids::VERSION).contains(&version) {
        return Err(Input::error_at(
            0,
            Kind::UnknownId,
            format!(
                "protocol version {version} (Redisson's MarshallingCodec reads River {} to {})",
                ids::MIN_VERSION,
                ids::VERSION
            ),
        ));
    }
    let root = r.object(false)?;
    r.input.finish()?;
    let value = r.arena.build(root, raw.len())?;
    crate::jdk::finish(value).map_err(|f| super::jdk::fault(f, None))
}

pub(super) struct Reader<'a> {
    pub(super) input: Input<'a>,
    classes: Classes,
    instances: Instances,
    pub(super) arena: Arena,
    depth: usize,
}

/// The index a relative back-reference (`len - distance`) names.
fn relative(len: usize, distance: u32) -> i64 {
    len as i64 - i64::from(distance)
}

impl Reader<'_> {
    fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.input.error(
                Kind::TooDeep,
                format!("values or class descriptors nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn unsupported(&self, at: usize, what: impl std::fmt::Display) -> super::MarshallingError {
        Input::error_at(at, Kind::Unsupported, format!("{what}: delayq does not read it"))
    }

    fn push(&mut self, value: KryoValue, at: usize) -> Result<NodeId> {
        self.arena.push(Node::Value(value), at)
    }

    /// `readObject` (`unshared`: `readObjectUnshared`, for fields marked so).
    pub(super) fn object(&mut self, unshared: bool) -> Result<NodeId> {
        let lead = self.input.u8()?;
        self.object_from(lead, unshared)
    }

    fn object_from(&mut self, lead: u8, unshared: bool) -> Result<NodeId> {
        self.enter()?;
        let node = self.object_inner(lead, unshared);
        self.depth -= 1;
        node
    }

    fn object_inner(&mut self, mut lead: u8, unshared: bool) -> Result<NodeId> {
        let mut at = self.input.pos() - 1;
        // Cache resets, allowed between top-level objects only.
        while lead == ids::CLEAR_CLASS_CACHE || lead == ids::CLEAR_INSTANCE_CACHE {
            if self.depth > 1 {
                return Err(Input::error_at(at, Kind::Malformed, "a cache reset inside an object"));
            }
            if lead == ids::CLEAR_CLASS_CACHE {
                self.classes.clear();
            }
            self.instances.clear();
            lead = self.input.u8()?;
            at += 1;
        }
        let boxed = |r: &mut Self, v: KryoValue| r.push(v, at);
        match lead {
            ids::NULL => boxed(self, KryoValue::Null),
            ids::REPEAT_OBJECT_FAR => {
                let index = self.input.i32()?;
                self.repeat(i64::from(index), unshared, at)
            }
            ids::REPEAT_OBJECT_NEAR => {
                let b = self.input.u8()?;
                let index = relative(self.instances.len(), 0x100 - u32::from(b));
                self.repeat(index, unshared, at)
            }
            ids::REPEAT_OBJECT_NEARISH => {
                let s = self.input.u16()?;
                let index = relative(self.instances.len(), 0x10000 - u32::from(s));
                self.repeat(index, unshared, at)
            }
            ids::NEW_OBJECT | ids::NEW_OBJECT_UNSHARED => {
                if unshared != (lead == ids::NEW_OBJECT_UNSHARED) {
                    return Err(Input::error_at(
                        at,
                        Kind::Malformed,
                        "a shared object where an unshared one is due, or the reverse",
                    ));
                }
                let class_lead = self.input.u8()?;
                let class = self.class(class_lead)?;
                self.new_object(class, unshared, at)
            }
            ids::STRING_EMPTY => boxed(self, KryoValue::String(String::new())),
            ids::STRING_SMALL | ids::STRING_MEDIUM | ids::STRING_LARGE => {
                let chars = match lead {
                    ids::STRING_SMALL => usize::from(self.input.u8()?).wrapping_sub(1) % 0x100 + 1,
                    ids::STRING_MEDIUM => usize::from(self.input.u16()?).wrapping_sub(1) % 0x10000 + 1,
                    _ => match self.input.length("string length")? {
                        0 => return Err(Input::error_at(at, Kind::Malformed, "a large string of length 0")),
                        n => n,
                    },
                };
                let s = self.input.utf(chars)?;
                let node = self.push(KryoValue::String(s), at)?;
                // Strings are cached shared whatever the context asked.
                self.instances.push(node, false);
                Ok(node)
            }
            ids::ARRAY_EMPTY..=ids::ARRAY_LARGE_UNSHARED => self.array(lead, unshared, at),
            ids::PREDEFINED_OBJECT => Err(self.unsupported(
                at,
                "a predefined object (an object table, which Redisson does not configure)",
            )),
            ids::BOOLEAN_OBJECT_TRUE => boxed(self, KryoValue::Boolean(true)),
            ids::BOOLEAN_OBJECT_FALSE => boxed(self, KryoValue::Boolean(false)),
            ids::BYTE_OBJECT..=ids::DOUBLE_OBJECT => {
                let v = self.boxed_value(lead - ids::BYTE_OBJECT + 0x2a)?;
                boxed(self, v)
            }
            ids::COLLECTION_EMPTY..=ids::COLLECTION_LARGE_UNSHARED => self.collection(lead, unshared, at),
            ids::SINGLETON_LIST_OBJECT | ids::SINGLETON_SET_OBJECT | ids::SINGLETON_MAP_OBJECT => {
                let slot = self.instances.reserve();
                let class: Rc<str> = ids::predefined_class(lead).unwrap_or_default().into();
                let first = self.object(false)?;
                let node = if lead == ids::SINGLETON_MAP_OBJECT {
                    let value = self.object(false)?;
                    Node::Map {
                        class,
                        entries: vec![(first, value)],
                    }
                } else {
                    Node::Collection {
                        class,
                        items: vec![first],
                    }
                };
                let node = self.arena.push(node, at)?;
                self.instances.set(slot, node, unshared);
                Ok(node)
            }
            ids::EMPTY_LIST_OBJECT | ids::EMPTY_SET_OBJECT | ids::EMPTY_MAP_OBJECT => {
                let class = ids::predefined_class(lead).unwrap_or_default().to_owned();
                let value = if lead == ids::EMPTY_MAP_OBJECT {
                    KryoValue::Map {
                        class,
                        entries: Vec::new(),
                    }
                } else {
                    KryoValue::Collection {
                        class,
                        items: Vec::new(),
                    }
                };
                boxed(self, value)
            }
            ids::UNMODIFIABLE_COLLECTION..=ids::UNMODIFIABLE_SORTED_MAP => {
                let slot = self.instances.reserve();
                let inner = self.object(false)?;
                let name = ids::predefined_class(lead).unwrap_or_default();
                if matches!(self.arena.value(inner), Some(KryoValue::Null)) {
                    return Err(Input::error_at(at, Kind::Malformed, format!("{name} of null")));
                }
                // Collections.unmodifiableList of a RandomAccess list is its RandomAccess kind.
                let random_access = lead == ids::UNMODIFIABLE_LIST
                    && matches!(self.arena.node(inner), Node::Collection { class, .. }
                        if matches!(&**class, "java.util.ArrayList" | "java.util.Vector" | "java.util.Stack"
                            | "java.util.concurrent.CopyOnWriteArrayList" | "java.util.Arrays$ArrayList")
                            || class.starts_with("java.util.ImmutableCollections$List")
                            || class.ends_with("RandomAccessList"));
                let class = if random_access {
                    "java.util.Collections$UnmodifiableRandomAccessList"
                } else {
                    name
                };
                let node = self.arena.push(
                    Node::Collection {
                        class: crate::jdk::wrapped_mark(class).into(),
                        items: vec![inner],
                    },
                    at,
                )?;
                self.instances.set(slot, node, unshared);
                Ok(node)
            }
            0x77 | 0x79..=0x82 => Err(self.unsupported(at, ids::predefined_class(lead).unwrap_or("?"))),
            _ => match ids::predefined_class(lead) {
                // Java reads a class id here as the Class object itself.
                Some(name) => self.arena.push(
                    Node::Collection {
                        class: crate::jdk::class_mark(name).into(),
                        items: Vec::new(),
                    },
                    at,
                ),
                None => Err(Input::error_at(
                    at,
                    Kind::UnknownId,
                    format!("byte {lead:#04x} cannot start an object"),
                )),
            },
        }
    }

    fn repeat(&mut self, index: i64, unshared: bool, at: usize) -> Result<NodeId> {
        if unshared {
            return Err(Input::error_at(
                at,
                Kind::Malformed,
                "a back-reference where an unshared object is due",
            ));
        }
        self.instances
            .get(index)
            .map_err(|message| Input::error_at(at, Kind::BadReference, message))
    }

    /// A boxed value of the class with this id (`0x29` Boolean to `0x30` Double).
    fn boxed_value(&mut self, class_id: u8) -> Result<KryoValue> {
        let i = &mut self.input;
        Ok(match class_id {
            ids::BOOLEAN_CLASS => KryoValue::Boolean(i.u8()? != 0),
            0x2a => KryoValue::Byte(i.u8()? as i8),
            0x2b => KryoValue::Short(i.u16()? as i16),
            0x2c => KryoValue::Int(i.i32()?),
            0x2d => KryoValue::Long(i.i64()?),
            0x2e => KryoValue::Char(i.u16()?),
            0x2f => KryoValue::Float(f32::from_bits(i.i32()? as u32)),
            _ => KryoValue::Double(f64::from_bits(i.i64()? as u64)),
        })
    }

    /// A primitive field's value.
    fn primitive(&mut self, p: Primitive) -> Result<KryoValue> {
        self.boxed_value(match p {
            Primitive::Boolean => ids::BOOLEAN_CLASS,
            Primitive::Byte => 0x2a,
            Primitive::Short => 0x2b,
            Primitive::Int => 0x2c,
            Primitive::Long => 0x2d,
            Primitive::Char => 0x2e,
            Primitive::Float => 0x2f,
            Primitive::Double => ids::DOUBLE_CLASS,
        })
    }

    fn array(&mut self, lead: u8, unshared: bool, at: usize) -> Result<NodeId> {
        // Shared and unshared forms come in two runs of four.
        let form = (lead - ids::ARRAY_EMPTY) % 4;
        if unshared != (lead >= ids::ARRAY_EMPTY_UNSHARED) {
            return Err(Input::error_at(
                at,
                Kind::Malformed,
                "a shared array where an unshared one is due, or the reverse",
            ));
        }
        let len = match form {
            0 => 0,
            1 => usize::from(self.input.u8()?).wrapping_sub(1) % 0x100 + 1,
            2 => usize::from(self.input.u16()?).wrapping_sub(1) % 0x10000 + 1,
            _ => match self.input.length("array length")? {
                0 => return Err(Input::error_at(at, Kind::Malformed, "a large array of length 0")),
                n => n,
            },
        };
        let component = self.input.u8()?;
        if component == ids::PRIM_BYTE {
            let bytes = self.input.take(len)?.to_vec();
            let node = self.push(KryoValue::Bytes(bytes), at)?;
            self.instances.push(node, unshared);
            return Ok(node);
        }
        let primitive = ids::predefined_class(component).and_then(Primitive::from_name);
        if let Some(p) = primitive {
            // Booleans eight to a byte; the others their size each, big-endian.
            let size = match p {
                Primitive::Boolean => 0,
                Primitive::Char | Primitive::Short => 2,
                Primitive::Int | Primitive::Float => 4,
                _ => 8,
            };
            let bytes = if size == 0 {
                len.div_ceil(8)
            } else {
                len.saturating_mul(size)
            };
            if bytes > self.input.remaining() {
                return Err(self.input.error(
                    Kind::TooLarge,
                    format!(
                        "an array of {len} elements is more than the {} bytes left",
                        self.input.remaining()
                    ),
                ));
            }
            let mut items = Vec::with_capacity(len);
            if p == Primitive::Boolean {
                let packed = self.input.take(len.div_ceil(8))?;
                for i in 0..len {
                    let v = KryoValue::Boolean(packed[i / 8] & (1 << (i % 8)) != 0);
                    items.push(self.push(v, at)?);
                }
            } else {
                for _ in 0..len {
                    let v = self.primitive(p)?;
                    items.push(self.push(v, at)?);
                }
            }
            let class = format!("[{}", p.code() as char);
            let node = self.arena.push(
                Node::Collection {
                    class: class.into(),
                    items,
                },
                at,
            )?;
            // A primitive array is numbered once read.
            self.instances.push(node, unshared);
            return Ok(node);
        }
        let element = self.class(component)?;
        let element = element.name();
        let class = if element.starts_with('[') {
            format!("[{element}")
        } else {
            format!("[L{element};")
        };
        self.input.check_count(len, 1, "an array")?;
        let slot = self.instances.reserve();
        let mut items = Vec::with_capacity(len);
        for _ in 0..len {
            items.push(self.object(false)?);
        }
        let node = self.arena.push(
            Node::Collection {
                class: class.into(),
                items,
            },
            at,
        )?;
        self.instances.set(slot, node, unshared);
        Ok(node)
    }

    fn collection(&mut self, lead: u8, unshared: bool, at: usize) -> Result<NodeId> {
        let len = match (lead - ids::COLLECTION_EMPTY) % 4 {
            0 => 0,
            1 => usize::from(self.input.u8()?).wrapping_sub(1) % 0x100 + 1,
            2 => usize::from(self.input.u16()?).wrapping_sub(1) % 0x10000 + 1,
            _ => self.input.length("collection size")?,
        };
        let id = self.input.u8()?;
        if id == ids::CC_ENUM_SET_PROXY {
            let descriptor = self.input.u8()?;
            let element = self.class(descriptor)?.name();
            self.input.check_count(len, 1, "an EnumSet")?;
            let slot = self.instances.reserve();
            let mut items = Vec::with_capacity(len);
            for _ in 0..len {
                items.push(self.object(false)?);
            }
            let node = self.arena.push(
                Node::Collection {
                    class: crate::jdk::enum_set_mark(crate::jdk::enums::enum_set_class(&element, len), &element).into(),
                    items,
                },
                at,
            )?;
            self.instances.set(slot, node, unshared);
            return Ok(node);
        }
        if id == ids::CC_ENUM_MAP {
            self.input.check_count(len, 2, "an EnumMap")?;
            let slot = self.instances.reserve();
            let descriptor = self.input.u8()?;
            self.class(descriptor)?;
            let mut entries = Vec::with_capacity(len);
            for _ in 0..len {
                let key = self.object(false)?;
                entries.push((key, self.object(false)?));
            }
            let node = self.arena.push(
                Node::Map {
                    class: "java.util.EnumMap".into(),
                    entries,
                },
                at,
            )?;
            self.instances.set(slot, node, unshared);
            return Ok(node);
        }
        if let Some(class) = ids::cc_collection(id) {
            self.input.check_count(len, 1, class)?;
            let slot = self.instances.reserve();
            if id == ids::CC_TREE_SET {
                self.no_comparator(class, at)?;
            }
            let mut items = Vec::with_capacity(len);
            for _ in 0..len {
                items.push(self.object(false)?);
            }
            let node = self.arena.push(
                Node::Collection {
                    class: class.into(),
                    items,
                },
                at,
            )?;
            self.instances.set(slot, node, unshared);
            Ok(node)
        } else if let Some(class) = ids::cc_map(id) {
            self.input.check_count(len, 2, class)?;
            let slot = self.instances.reserve();
            if id == ids::CC_TREE_MAP {
                self.no_comparator(class, at)?;
            }
            let mut entries = Vec::with_capacity(len);
            for _ in 0..len {
                let key = self.object(false)?;
                entries.push((key, self.object(false)?));
            }
            let node = self.arena.push(
                Node::Map {
                    class: class.into(),
                    entries,
                },
                at,
            )?;
            self.instances.set(slot, node, unshared);
            Ok(node)
        } else {
            match ids::predefined_class(id) {
                Some(name) => Err(self.unsupported(at, name)),
                None => Err(Input::error_at(
                    self.input.pos() - 1,
                    Kind::UnknownId,
                    format!("byte {id:#04x} is not a collection id"),
                )),
            }
        }
    }

    /// A sorted collection's comparator, which must be null (natural order).
    fn no_comparator(&mut self, class: &str, at: usize) -> Result<()> {
        let comparator = self.object(false)?;
        match self.arena.value(comparator) {
            Some(KryoValue::Null) => Ok(()),
            _ => Err(self.unsupported(at, format!("a {class} with a comparator"))),
        }
    }

    /// A class descriptor (`lead` already read).
    fn class(&mut self, lead: u8) -> Result<Class> {
        self.enter()?;
        let class = self.class_inner(lead);
        self.depth -= 1;
        class
    }

    fn class_inner(&mut self, lead: u8) -> Result<Class> {
        let at = self.input.pos() - 1;
        let repeat = |r: &Self, index: i64| {
            r.classes
                .get(index)
                .cloned()
                .map_err(|message| Input::error_at(at, Kind::BadReference, message))
        };
        match lead {
            ids::REPEAT_CLASS_FAR => {
                let index = self.input.i32()?;
                repeat(self, i64::from(index))
            }
            ids::REPEAT_CLASS_NEAR => {
                let b = self.input.u8()?;
                repeat(self, relative(self.classes.len(), 0x100 - u32::from(b)))
            }
            ids::REPEAT_CLASS_NEARISH => {
                let s = self.input.u16()?;
                repeat(self, relative(self.classes.len(), 0x10000 - u32::from(s)))
            }
            ids::PLAIN_CLASS => {
                let name = self.counted_string("a class name")?;
                let class = Class::Other(format!("{name} (not serializable)").into());
                self.classes.push(class.clone());
                Ok(class)
            }
            ids::SERIALIZABLE_CLASS | ids::WRITE_OBJECT_CLASS => self.serial_class(lead == ids::WRITE_OBJECT_CLASS),
            ids::EXTERNALIZABLE_CLASS => {
                let name: Rc<str> = self.counted_string("a class name")?.into();
                let _uid = self.input.i64()?;
                let class = Class::Externalizable(name);
                self.classes.push(class.clone());
                Ok(class)
            }
            ids::ENUM_TYPE_CLASS => {
                let class = Class::Enum(self.counted_string("an enum class name")?.into());
                self.classes.push(class.clone());
                Ok(class)
            }
            ids::OBJECT_ARRAY_TYPE_CLASS => {
                let component = self.input.u8()?;
                let component = self.class(component)?;
                let name = component.name();
                let jvm = match Primitive::from_name(&name) {
                    Some(p) => format!("[{}", p.code() as char),
                    None if name.starts_with('[') => format!("[{name}"),
                    None => format!("[L{name};"),
                };
                let class = Class::Other(jvm.into());
                self.classes.push(class.clone());
                Ok(class)
            }
            ids::PROXY_CLASS => Err(self.unsupported(at, "a proxy class")),
            ids::EXTERNALIZER_CLASS => Err(self.unsupported(at, "a class with an externalizer")),
            id if ids::PREDEFINED_CLASSES.contains(&id) => {
                Err(self.unsupported(at, "a class of a class table (which Redisson does not configure)"))
            }
            id if ids::predefined_class(id).is_some() => Ok(Class::Predefined(id)),
            id => Err(Input::error_at(
                at,
                Kind::UnknownId,
                format!("byte {id:#04x} is not a class id"),
            )),
        }
    }

    /// A `Serializable` class descriptor: name, serialVersionUID, fields,
    /// superclass.
    fn serial_class(&mut self, write_object: bool) -> Result<Class> {
        let index = self.classes.reserve();
        let name = self.name_object("a class name")?;
        let _uid = self.input.i64()?;
        let count = self.input.length("field count")?;
        // A field takes at least 3 bytes: name, type, unshared flag.
        self.input.check_count(count, 3, "a class descriptor's field count")?;
        let mut fields = Vec::with_capacity(count);
        for _ in 0..count {
            let field_name = self.name_object("a field name")?;
            let type_lead = self.input.u8()?;
            let ty = self.class(type_lead)?;
            let unshared = self.input.u8()? != 0;
            let primitive = match ty {
                Class::Predefined(id) => ids::predefined_class(id).and_then(Primitive::from_name),
                _ => None,
            };
            let declared = match primitive {
                Some(p) => JavaType::primitive(p),
                None => JavaType::class(&ty.name(), Vec::new()),
            };
            fields.push(Rc::new(FieldDesc {
                name: field_name,
                primitive,
                declared,
                unshared,
            }));
        }
        let super_at = self.input.pos();
        let super_lead = self.input.u8()?;
        let superclass = match self.class(super_lead)? {
            Class::Serializable(s) => Some(s),
            Class::Predefined(ids::OBJECT_CLASS) | Class::Other(_) => None,
            other => {
                return Err(Input::error_at(
                    super_at,
                    Kind::Malformed,
                    format!("{name} cannot extend {}", other.name()),
                ))
            }
        };
        let serial = Rc::new(Serial {
            name,
            write_object,
            fields,
            data_super: Serial::data_super_of(superclass.as_ref()),
        });
        self.classes.set(index, Class::Serializable(serial.clone()));
        Ok(Class::Serializable(serial))
    }

    /// A class or field name, which protocol 4 writes as a (cached) String object.
    fn name_object(&mut self, what: &str) -> Result<Rc<str>> {
        let at = self.input.pos();
        let node = self.object(false)?;
        match self.arena.value(node) {
            // Shared with the payloads read before on this thread, which
            // name the same classes and fields.
            Some(KryoValue::String(s)) if !s.is_empty() => Ok(crate::interned::text(s)),
            _ => Err(Input::error_at(
                at,
                Kind::Malformed,
                format!("{what} that is not a non-empty string"),
            )),
        }
    }

    /// An `int` length then modified UTF-8 (enum names, some class names).
    fn counted_string(&mut self, what: &str) -> Result<String> {
        let chars = self.input.length(what)?;
        self.input.utf(chars)
    }

    fn new_object(&mut self, class: Class, unshared: bool, at: usize) -> Result<NodeId> {
        match class {
            Class::Serializable(s) => self.serial_object(&s, unshared, at),
            Class::Externalizable(name) if &*name == jdk::TIME_SER => {
                let slot = self.instances.reserve();
                let custom = self.custom_data()?;
                let value = super::jdk::time_ser(&custom).map_err(|(kind, m)| Input::error_at(at, kind, m))?;
                let node = self.push(value, at)?;
                self.instances.set(slot, node, unshared);
                Ok(node)
            }
            Class::Externalizable(name) => Err(self.unsupported(at, format!("{name} (an Externalizable class)"))),
            // Serializable JDK classes River names by id: their descriptors are implied.
            Class::Predefined(id @ (ids::CC_COPY_ON_WRITE_ARRAY_LIST | ids::CC_COPY_ON_WRITE_ARRAY_SET)) => {
                let list = id == ids::CC_COPY_ON_WRITE_ARRAY_LIST;
                let fields = if list {
                    Vec::new()
                } else {
                    vec![Rc::new(FieldDesc {
                        name: "al".into(),
                        primitive: None,
                        declared: JavaType::object(),
                        unshared: false,
                    })]
                };
                let serial = Rc::new(Serial {
                    name: ids::predefined_class(id).unwrap_or_default().into(),
                    write_object: list,
                    fields,
                    data_super: None,
                });
                self.serial_object(&serial, unshared, at)
            }
            Class::Enum(class) => {
                let name = self.counted_string("an enum constant name")?;
                let node = self.push(
                    KryoValue::Enum {
                        class: class.to_string(),
                        ordinal: None,
                        name: Some(name),
                    },
                    at,
                )?;
                self.instances.push(node, unshared);
                Ok(node)
            }
            // Protocol 1's forms, which the reader still takes.
            Class::Predefined(ids::STRING_CLASS) => {
                let s = self.counted_string("a string length")?;
                let node = self.push(KryoValue::String(s), at)?;
                self.instances.push(node, unshared);
                Ok(node)
            }
            Class::Predefined(ids::BYTE_ARRAY_CLASS) => {
                let len = self.input.length("array length")?;
                let bytes = self.input.take(len)?.to_vec();
                let node = self.push(KryoValue::Bytes(bytes), at)?;
                self.instances.push(node, unshared);
                Ok(node)
            }
            Class::Predefined(id @ ids::BOOLEAN_CLASS..=ids::DOUBLE_CLASS) => {
                let v = self.boxed_value(id)?;
                self.push(v, at)
            }
            other => Err(self.unsupported(at, format!("an instance of {}", other.name()))),
        }
    }

    fn serial_object(&mut self, class: &Rc<Serial>, unshared: bool, at: usize) -> Result<NodeId> {
        let slot = self.instances.reserve();
        let chain = class.data_chain();
        let mut levels = Vec::with_capacity(chain.len());
        for level in chain {
            let mut values = Vec::with_capacity(level.fields.len());
            for field in &level.fields {
                // A throwable without a cause is its own cause; a
                // synchronized view its own lock: null in a value.
                if crate::jdk::self_field_is_null(&level.name, &field.name)
                    && let Some(len) = self.refers_to(slot)
                {
                    self.input.take(len)?;
                    let null = self.push(KryoValue::Null, self.input.pos())?;
                    values.push(null);
                    continue;
                }
                let value = match field.primitive {
                    Some(p) => {
                        let field_at = self.input.pos();
                        let v = self.primitive(p)?;
                        self.push(v, field_at)?
                    }
                    None => self.object(field.unshared)?,
                };
                values.push(value);
            }
            let custom = if level.write_object {
                Some(self.custom_data()?)
            } else {
                None
            };
            levels.push(Level {
                class: level,
                values,
                custom,
            });
        }
        let node = super::jdk::instance(&mut self.arena, class, levels, at)?;
        self.instances.set(slot, node, unshared);
        Ok(node)
    }

    /// The length of a back-reference to instance `slot` if one is next.
    fn refers_to(&self, slot: usize) -> Option<usize> {
        let rest = self.input.rest();
        let (index, len) = match *rest.first()? {
            ids::REPEAT_OBJECT_NEAR => (relative(self.instances.len(), 0x100 - u32::from(*rest.get(1)?)), 2),
            ids::REPEAT_OBJECT_NEARISH => {
                let s = u16::from_be_bytes([*rest.get(1)?, *rest.get(2)?]);
                (relative(self.instances.len(), 0x10000 - u32::from(s)), 3)
            }
            ids::REPEAT_OBJECT_FAR => (
                i64::from(i32::from_be_bytes([
                    *rest.get(1)?,
                    *rest.get(2)?,
                    *rest.get(3)?,
                    *rest.get(4)?,
                ])),
                5,
            ),
            _ => return None,
        };
        (index == slot as i64).then_some(len)
    }

    /// `writeObject`/`writeExternal` data: blocks of bytes and objects, up
    /// to the end-of-data byte.
    fn custom_data(&mut self) -> Result<Custom> {
        let mut custom = Custom::default();
        loop {
            let lead = self.input.u8()?;
            let len = match lead {
                ids::END_BLOCK_DATA => return Ok(custom),
                ids::START_BLOCK_SMALL => usize::from(self.input.u8()?),
                ids::START_BLOCK_MEDIUM => usize::from(self.input.u16()?),
                ids::START_BLOCK_LARGE => self.input.length("block length")?,
                _ => {
                    custom.objects.push(self.object_from(lead, false)?);
                    continue;
                }
            };
            custom.bytes.extend_from_slice(self.input.take(len)?);
        }
    }
}
