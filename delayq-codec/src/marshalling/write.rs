//! Writing a [`KryoValue`] as `RiverMarshaller` (protocol 4, Redisson's
//! configuration) writes the Java value it stands for.

use std::collections::HashMap;

use num_bigint::{BigInt, Sign};

use super::error::{MarshallingError, Result};
use super::ids::{self, jdk};
use crate::java_hash::hash_capacity;
use crate::kryo::java_type::Primitive;
use crate::kryo::schema::ClassDef;
use crate::kryo::{decimal, KryoSchema, KryoValue, MAX_DEPTH};

mod collections;
mod objects;
mod wrapped;

/// Where `serialVersionUID`s and enum constant names come from.
pub(super) struct Names<'a> {
    pub(super) schema: Option<&'a KryoSchema>,
    /// Given directly (they win over the schema's).
    pub(super) uids: Option<&'a HashMap<String, i64>>,
}

impl Names<'_> {
    fn uid(&self, class: &str) -> Option<i64> {
        self.uids
            .and_then(|u| u.get(class).copied())
            .or_else(|| self.schema.and_then(|s| s.serial_version_uid(class)))
    }

    fn constant(&self, class: &str, ordinal: u32) -> Option<&str> {
        match self.schema?.get(class)? {
            ClassDef::Enum { constants } => constants.get(ordinal as usize).map(String::as_str),
            ClassDef::Pojo { .. } => None,
        }
    }
}

pub(super) fn encode(value: &KryoValue, names: &Names<'_>) -> Result<Vec<u8>> {
    // Java builds a TreeMap or TreeSet from the order written.
    use crate::jdk::sorted::{in_natural_order, JavaReads};
    let sorted = in_natural_order(value, JavaReads::InOrderWritten).map_err(MarshallingError::encode)?;
    let value = sorted.as_ref().unwrap_or(value);
    let mut w = Writer {
        out: vec![ids::VERSION],
        instance_seq: 0,
        class_seq: 0,
        classes: HashMap::new(),
        names: HashMap::new(),
        enums: HashMap::new(),
        depth: 0,
        lookup: names,
        capture: None,
    };
    w.value(value)?;
    Ok(w.out)
}

/// What a described class was described as (a second instance of the
/// class must agree, since River repeats the description by number).
#[derive(Debug, PartialEq)]
enum Described {
    Serial(Vec<(String, u8)>),
    Enum,
    /// An array class, described by its component.
    ArrayType,
    Externalizable,
}

struct Writer<'a> {
    out: Vec<u8>,
    /// Instances numbered so far (River's `instanceSeq`).
    instance_seq: usize,
    class_seq: usize,
    classes: HashMap<String, (usize, Described)>,
    /// Class and field names by instance number: the JVM interns them, so
    /// Java writes each once and repeats it by reference.
    names: HashMap<String, usize>,
    /// Enum constants are singletons: repeated by reference too.
    enums: HashMap<(String, String), usize>,
    depth: usize,
    lookup: &'a Names<'a>,
    /// `Some(None)`: the number of the next instance is wanted here.
    capture: Option<Option<usize>>,
}

/// The serial form of the JDK classes delayq writes (fields sorted by
/// name, as River describes them).
struct JdkClass {
    uid: i64,
    write_object: bool,
    fields: &'static [(&'static str, u8)],
    superclass: Option<&'static str>,
}

fn jdk_class(name: &str) -> Option<JdkClass> {
    let (uid, write_object, fields, superclass): (i64, bool, &'static [(&'static str, u8)], _) = match name {
        jdk::HASH_MAP => (
            jdk::HASH_MAP_UID,
            true,
            &[("loadFactor", ids::PRIM_FLOAT), ("threshold", ids::PRIM_INT)],
            None,
        ),
        jdk::LINKED_HASH_MAP => (
            jdk::LINKED_HASH_MAP_UID,
            false,
            &[("accessOrder", ids::PRIM_BOOLEAN)],
            Some(jdk::HASH_MAP),
        ),
        jdk::HASH_SET => (jdk::HASH_SET_UID, true, &[], None),
        jdk::LINKED_HASH_SET => (jdk::LINKED_HASH_SET_UID, false, &[], Some(jdk::HASH_SET)),
        jdk::DATE => (jdk::DATE_UID, true, &[], None),
        jdk::UUID => (
            jdk::UUID_UID,
            false,
            &[("leastSigBits", ids::PRIM_LONG), ("mostSigBits", ids::PRIM_LONG)],
            None,
        ),
        jdk::NUMBER => (jdk::NUMBER_UID, false, &[], None),
        jdk::BIG_DECIMAL => (
            jdk::BIG_DECIMAL_UID,
            true,
            &[("intVal", ids::OBJECT_CLASS), ("scale", ids::PRIM_INT)],
            Some(jdk::NUMBER),
        ),
        jdk::BIG_INTEGER => (
            jdk::BIG_INTEGER_UID,
            true,
            &[
                ("bitCount", ids::PRIM_INT),
                ("bitLength", ids::PRIM_INT),
                ("firstNonzeroByteNum", ids::PRIM_INT),
                ("lowestSetBit", ids::PRIM_INT),
                ("magnitude", ids::OBJECT_CLASS),
                ("signum", ids::PRIM_INT),
            ],
            Some(jdk::NUMBER),
        ),
        _ => {
            return objects::jdk_class(name)
                .or_else(|| wrapped::jdk_class(name))
                .or_else(|| collections::jdk_class(name))
        }
    };
    Some(JdkClass {
        uid,
        write_object,
        fields,
        superclass,
    })
}

fn prim_id(p: Primitive) -> u8 {
    match p {
        Primitive::Boolean => ids::PRIM_BOOLEAN,
        Primitive::Byte => ids::PRIM_BYTE,
        Primitive::Short => ids::PRIM_SHORT,
        Primitive::Int => ids::PRIM_INT,
        Primitive::Long => ids::PRIM_LONG,
        Primitive::Char => ids::PRIM_CHAR,
        Primitive::Float => ids::PRIM_FLOAT,
        Primitive::Double => ids::PRIM_DOUBLE,
    }
}

impl Writer<'_> {
    /// Numbers a new instance (River repeats an instance by its number).
    fn number(&mut self) {
        if self.capture == Some(None) {
            self.capture = Some(Some(self.instance_seq));
        }
        self.instance_seq += 1;
    }

    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.out.extend_from_slice(&v.to_be_bytes());
    }
    // Java's floatToIntBits/doubleToLongBits: one NaN.
    fn f32(&mut self, v: f32) {
        self.i32(if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() as i32 });
    }
    fn f64(&mut self, v: f64) {
        self.i64(if v.is_nan() {
            0x7ff8_0000_0000_0000
        } else {
            v.to_bits() as i64
        });
    }

    /// Modified UTF-8 of the UTF-16 units (`\0` as two bytes).
    fn utf(&mut self, s: &str) {
        for unit in s.encode_utf16() {
            match unit {
                0x01..=0x7f => self.out.push(unit as u8),
                0x00 | 0x80..=0x7ff => self
                    .out
                    .extend_from_slice(&[0xc0 | (unit >> 6) as u8 & 0x1f, 0x80 | unit as u8 & 0x3f]),
                _ => self.out.extend_from_slice(&[
                    0xe0 | (unit >> 12) as u8 & 0x0f,
                    0x80 | (unit >> 6) as u8 & 0x3f,
                    0x80 | unit as u8 & 0x3f,
                ]),
            }
        }
    }

    fn utf16_len(s: &str) -> Result<i32> {
        i32::try_from(s.encode_utf16().count())
            .map_err(|_| MarshallingError::encode("a string longer than Java's 2^31 - 1 characters"))
    }

    /// A String object (numbered, unless empty).
    fn string(&mut self, s: &str) -> Result<()> {
        let len = Self::utf16_len(s)?;
        match len {
            0 => {
                self.u8(ids::STRING_EMPTY);
                return Ok(());
            }
            1..=0x100 => {
                self.u8(ids::STRING_SMALL);
                self.u8(len as u8);
            }
            0x101..=0x10000 => {
                self.u8(ids::STRING_MEDIUM);
                self.u16(len as u16);
            }
            _ => {
                self.u8(ids::STRING_LARGE);
                self.i32(len);
            }
        }
        self.utf(s);
        self.number();
        Ok(())
    }

    /// River's `writeString`: an `int` length then the characters (not an object).
    fn counted_string(&mut self, s: &str) -> Result<()> {
        let len = Self::utf16_len(s)?;
        self.i32(len);
        self.utf(s);
        Ok(())
    }

    /// A class or field name: once, then by reference.
    fn name(&mut self, s: &str) -> Result<()> {
        if let Some(&index) = self.names.get(s) {
            self.repeat(
                index,
                [
                    ids::REPEAT_OBJECT_NEAR,
                    ids::REPEAT_OBJECT_NEARISH,
                    ids::REPEAT_OBJECT_FAR,
                ],
                self.instance_seq,
            );
            return Ok(());
        }
        if !s.is_empty() {
            self.names.insert(s.to_owned(), self.instance_seq);
        }
        // A name inside a class descriptor is not the object being written.
        let capture = self.capture.take();
        let written = self.string(s);
        self.capture = capture;
        written
    }

    /// A map key. A string key is written as an interned string (once,
    /// then by reference, sharing the JVM's pool with class and field
    /// names): Jackson interns the keys of the maps it builds, and Java
    /// source literals are interned, so that is what Java writes for the
    /// maps Redisson services usually hold (any form reads the same).
    fn key(&mut self, key: &KryoValue) -> Result<()> {
        match key {
            KryoValue::String(s) => self.name(s),
            other => self.value(other),
        }
    }

    /// A back-reference: relative when near, absolute when far.
    fn repeat(&mut self, index: usize, [near, nearish, far]: [u8; 3], seq: usize) {
        let diff = index as i64 - seq as i64;
        if diff >= -0x100 {
            self.u8(near);
            self.u8(diff as u8);
        } else if diff >= -0x10000 {
            self.u8(nearish);
            self.u16(diff as u16);
        } else {
            self.u8(far);
            self.i32(index as i32);
        }
    }

    /// Writes a repeat if `class` was described as `kind`; `Ok(false)` if
    /// it is new (and now numbered).
    fn known_class(&mut self, class: &str, kind: Described) -> Result<bool> {
        if let Some((index, described)) = self.classes.get(class) {
            if *described != kind {
                return Err(MarshallingError::encode(format!(
                    "{class} appears with two different descriptions ({described:?} and {kind:?}): River describes a \
                     class once per payload"
                )));
            }
            let index = *index;
            self.repeat(
                index,
                [ids::REPEAT_CLASS_NEAR, ids::REPEAT_CLASS_NEARISH, ids::REPEAT_CLASS_FAR],
                self.class_seq,
            );
            return Ok(true);
        }
        Ok(false)
    }

    /// A `Serializable` class descriptor (or its repeat), superclasses after.
    fn serial_class(
        &mut self,
        class: &str,
        uid: i64,
        write_object: bool,
        fields: &[(String, u8)],
        superclass: Option<&str>,
    ) -> Result<()> {
        if self.serial_class_head(class, uid, write_object, fields)? {
            return Ok(());
        }
        match superclass {
            None => self.u8(ids::OBJECT_CLASS),
            Some(superclass) => self.jdk_class(superclass)?,
        }
        Ok(())
    }

    /// A `Serializable` class descriptor without its superclass; `true`
    /// when it is a repeat (whose superclasses were described already).
    fn serial_class_head(
        &mut self,
        class: &str,
        uid: i64,
        write_object: bool,
        fields: &[(String, u8)],
    ) -> Result<bool> {
        if self.known_class(class, Described::Serial(fields.to_vec()))? {
            return Ok(true);
        }
        self.u8(if write_object {
            ids::WRITE_OBJECT_CLASS
        } else {
            ids::SERIALIZABLE_CLASS
        });
        self.name(class)?;
        self.i64(uid);
        self.classes
            .insert(class.to_owned(), (self.class_seq, Described::Serial(fields.to_vec())));
        self.class_seq += 1;
        self.i32(fields.len() as i32);
        for (name, ty) in fields {
            self.name(name)?;
            self.u8(*ty);
            self.u8(0); // not unshared
        }
        Ok(false)
    }

    fn jdk_class(&mut self, name: &str) -> Result<()> {
        let c = jdk_class(name).ok_or_else(|| MarshallingError::encode(format!("no serial form known for {name}")))?;
        let fields: Vec<(String, u8)> = c.fields.iter().map(|(n, t)| (n.to_string(), *t)).collect();
        self.serial_class(name, c.uid, c.write_object, &fields, c.superclass)
    }

    /// `ID_NEW_OBJECT`, the class, and the instance's number.
    fn new_jdk_object(&mut self, class: &str) -> Result<()> {
        self.u8(ids::NEW_OBJECT);
        self.jdk_class(class)?;
        self.number();
        Ok(())
    }

    /// A block of `writeObject`'s primitive data.
    fn block(&mut self, data: &[u8]) {
        self.u8(ids::START_BLOCK_SMALL);
        self.u8(data.len() as u8);
        self.out.extend_from_slice(data);
    }

    fn value(&mut self, value: &KryoValue) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(MarshallingError::encode(format!(
                "values nested deeper than {MAX_DEPTH} levels"
            )));
        }
        self.depth += 1;
        let written = self.value_inner(value);
        self.depth -= 1;
        written
    }

    fn value_inner(&mut self, value: &KryoValue) -> Result<()> {
        match value {
            KryoValue::Time(t) if self.sql_date(t)? => {}
            KryoValue::Time(_) => {
                let data = crate::jdk::time_ser::write(value, true)
                    .ok_or_else(|| {
                        MarshallingError::encode(format!(
                            "{}: River writes its Serializable form, which delayq does not write",
                            value.java_class().unwrap_or_default()
                        ))
                    })?
                    .map_err(MarshallingError::encode)?;
                self.time_ser(&data)?;
            }
            KryoValue::Collection { class, items } if class.starts_with('[') => self.array(class, items)?,
            KryoValue::EnumSet { element, items, .. } => self.enum_set(element, items)?,
            KryoValue::Wrapped { class, value: inner } if self.view(class, inner)? => {}
            KryoValue::Wrapped { class, value: inner } if self.wrapped(class, inner)? => {}
            KryoValue::Wrapped { .. } => {
                return Err(MarshallingError::encode(format!(
                    "{}: delayq reads it from River but does not write it",
                    value.java_class().unwrap_or_default()
                )))
            }
            KryoValue::Throwable { class, message, cause } => {
                self.throwable(class, message.as_deref(), cause.as_deref())?
            }
            KryoValue::Null => self.u8(ids::NULL),
            KryoValue::Boolean(b) => self.u8(if *b {
                ids::BOOLEAN_OBJECT_TRUE
            } else {
                ids::BOOLEAN_OBJECT_FALSE
            }),
            KryoValue::Byte(v) => {
                self.u8(ids::BYTE_OBJECT);
                self.u8(*v as u8);
            }
            KryoValue::Short(v) => {
                self.u8(ids::SHORT_OBJECT);
                self.u16(*v as u16);
            }
            KryoValue::Int(v) => {
                self.u8(ids::INTEGER_OBJECT);
                self.i32(*v);
            }
            KryoValue::Long(v) => {
                self.u8(ids::LONG_OBJECT);
                self.i64(*v);
            }
            KryoValue::Char(v) => {
                self.u8(ids::CHARACTER_OBJECT);
                self.u16(*v);
            }
            KryoValue::Float(v) => {
                self.u8(ids::FLOAT_OBJECT);
                self.f32(*v);
            }
            KryoValue::Double(v) => {
                self.u8(ids::DOUBLE_OBJECT);
                self.f64(*v);
            }
            KryoValue::String(s) => self.string(s)?,
            KryoValue::Bytes(b) => self.bytes(b)?,
            KryoValue::Uuid(u) => {
                self.new_jdk_object(jdk::UUID)?;
                self.i64(*u as u64 as i64);
                self.i64((u >> 64) as u64 as i64);
            }
            KryoValue::Date(ms) => {
                self.new_jdk_object(jdk::DATE)?;
                self.block(&ms.to_be_bytes());
                self.u8(ids::END_BLOCK_DATA);
            }
            KryoValue::Instant { seconds, nanos } => self.instant(*seconds, *nanos)?,
            KryoValue::BigInteger(bytes) => self.big_integer(bytes)?,
            KryoValue::BigDecimal { unscaled, scale } => {
                self.new_jdk_object(jdk::BIG_DECIMAL)?;
                self.big_integer(unscaled)?;
                self.i32(*scale);
                self.u8(ids::END_BLOCK_DATA);
            }
            KryoValue::Enum { class, ordinal, name } => self.enum_constant(class, *ordinal, name.as_deref())?,
            KryoValue::Collection { class, items } => self.collection(class, items)?,
            KryoValue::Map { class, entries } => self.map(class, entries)?,
            KryoValue::Object { class, fields } => self.object(class, fields)?,
        }
        Ok(())
    }

    fn bytes(&mut self, b: &[u8]) -> Result<()> {
        self.number();
        match b.len() {
            0 => {
                self.u8(ids::ARRAY_EMPTY);
                self.u8(ids::PRIM_BYTE);
                return Ok(());
            }
            n @ 1..=0x100 => {
                self.u8(ids::ARRAY_SMALL);
                self.u8(n as u8);
            }
            n @ 0x101..=0x10000 => {
                self.u8(ids::ARRAY_MEDIUM);
                self.u16(n as u16);
            }
            n => {
                let n =
                    i32::try_from(n).map_err(|_| MarshallingError::encode("a byte[] longer than Java's 2^31 - 1"))?;
                self.u8(ids::ARRAY_LARGE);
                self.i32(n);
            }
        }
        self.u8(ids::PRIM_BYTE);
        self.out.extend_from_slice(b);
        Ok(())
    }

    /// A `java.time` value's `writeReplace` form: the externalizable
    /// `java.time.Ser` with its data.
    fn time_ser(&mut self, data: &[u8]) -> Result<()> {
        self.u8(ids::NEW_OBJECT);
        if !self.known_class(jdk::TIME_SER, Described::Externalizable)? {
            self.u8(ids::EXTERNALIZABLE_CLASS);
            self.counted_string(jdk::TIME_SER)?;
            self.i64(jdk::TIME_SER_UID);
            self.classes
                .insert(jdk::TIME_SER.to_owned(), (self.class_seq, Described::Externalizable));
            self.class_seq += 1;
        }
        self.number();
        self.block(data);
        self.u8(ids::END_BLOCK_DATA);
        Ok(())
    }

    /// An array other than `byte[]`: its length form, its component class,
    /// its elements (booleans eight to a byte).
    fn array(&mut self, class: &str, items: &[KryoValue]) -> Result<()> {
        match items.len() {
            0 => self.u8(ids::ARRAY_EMPTY),
            n @ 1..=0x100 => {
                self.u8(ids::ARRAY_SMALL);
                self.u8(n as u8);
            }
            n @ 0x101..=0x10000 => {
                self.u8(ids::ARRAY_MEDIUM);
                self.u16(n as u16);
            }
            n => {
                let n =
                    i32::try_from(n).map_err(|_| MarshallingError::encode("an array longer than Java's 2^31 - 1"))?;
                self.u8(ids::ARRAY_LARGE);
                self.i32(n);
            }
        }
        self.component(class)?;
        let primitive = crate::kryo::java_type::array_element(class).and_then(Primitive::from_name);
        match primitive {
            Some(Primitive::Boolean) => {
                let mut packed = vec![0u8; items.len().div_ceil(8)];
                for (i, item) in items.iter().enumerate() {
                    match item {
                        KryoValue::Boolean(true) => packed[i / 8] |= 1 << (i % 8),
                        KryoValue::Boolean(false) => {}
                        other => return Err(MarshallingError::encode(format!("{other:?} in a boolean[]"))),
                    }
                }
                self.out.extend_from_slice(&packed);
                // A primitive array is numbered once written.
                self.number();
            }
            Some(p) => {
                for item in items {
                    self.primitive(p, item)?;
                }
                self.number();
            }
            None => {
                self.number();
                for item in items {
                    self.value(item)?;
                }
            }
        }
        Ok(())
    }

    /// `Instant` is written as its `writeReplace` form, the externalizable
    /// `java.time.Ser`.
    fn instant(&mut self, seconds: i64, nanos: u32) -> Result<()> {
        if nanos >= 1_000_000_000 {
            return Err(MarshallingError::encode(format!("an Instant with {nanos} nanoseconds")));
        }
        self.u8(ids::NEW_OBJECT);
        if !self.known_class(jdk::TIME_SER, Described::Externalizable)? {
            self.u8(ids::EXTERNALIZABLE_CLASS);
            self.counted_string(jdk::TIME_SER)?;
            self.i64(jdk::TIME_SER_UID);
            self.classes
                .insert(jdk::TIME_SER.to_owned(), (self.class_seq, Described::Externalizable));
            self.class_seq += 1;
        }
        self.number();
        let mut data = vec![jdk::TIME_SER_INSTANT];
        data.extend_from_slice(&seconds.to_be_bytes());
        data.extend_from_slice(&(nanos as i32).to_be_bytes());
        self.block(&data);
        self.u8(ids::END_BLOCK_DATA);
        Ok(())
    }

    /// `BigInteger.writeObject`: its serial fields (the cached ones unset),
    /// the magnitude as big-endian bytes.
    fn big_integer(&mut self, twos_complement: &[u8]) -> Result<()> {
        let (sign, magnitude) =
            BigInt::from_signed_bytes_be(&decimal::shortest(twos_complement.to_vec())).to_bytes_be();
        let (signum, magnitude) = match sign {
            Sign::Minus => (-1, magnitude),
            Sign::NoSign => (0, Vec::new()),
            Sign::Plus => (1, magnitude),
        };
        self.new_jdk_object(jdk::BIG_INTEGER)?;
        self.i32(-1); // bitCount
        self.i32(-1); // bitLength
        self.i32(-2); // firstNonzeroByteNum
        self.i32(-2); // lowestSetBit
        self.bytes(&magnitude)?;
        self.i32(signum);
        self.u8(ids::END_BLOCK_DATA);
        Ok(())
    }

    fn enum_constant(&mut self, class: &str, ordinal: Option<u32>, name: Option<&str>) -> Result<()> {
        let name = match (name, ordinal) {
            (Some(name), _) => name.to_owned(),
            (None, Some(ordinal)) => self.lookup.constant(class, ordinal).map(str::to_owned).ok_or_else(|| {
                MarshallingError::encode(format!(
                    "{class} constant {ordinal}: River writes an enum constant's name; describe the enum in the schema"
                ))
            })?,
            (None, None) => {
                return Err(MarshallingError::encode(format!(
                    "a {class} constant with neither name nor ordinal"
                )))
            }
        };
        let key = (class.to_owned(), name);
        if let Some(&index) = self.enums.get(&key) {
            self.repeat(
                index,
                [
                    ids::REPEAT_OBJECT_NEAR,
                    ids::REPEAT_OBJECT_NEARISH,
                    ids::REPEAT_OBJECT_FAR,
                ],
                self.instance_seq,
            );
            return Ok(());
        }
        self.u8(ids::NEW_OBJECT);
        if !self.known_class(class, Described::Enum)? {
            self.u8(ids::ENUM_TYPE_CLASS);
            self.counted_string(class)?;
            self.classes.insert(class.to_owned(), (self.class_seq, Described::Enum));
            self.class_seq += 1;
        }
        self.counted_string(&key.1)?;
        self.enums.insert(key, self.instance_seq);
        self.number();
        Ok(())
    }

    fn collection(&mut self, class: &str, items: &[KryoValue]) -> Result<()> {
        let tag = match class {
            c if c.starts_with("java.util.ImmutableCollections$List") => Some(1),
            c if c.starts_with("java.util.ImmutableCollections$Set") => Some(2),
            _ => None,
        };
        if let Some(tag) = tag {
            return self.coll_ser(tag, &items.iter().collect::<Vec<_>>(), false);
        }
        if let Some(id) = ids::cc_id_of(class) {
            self.number();
            self.collection_size(items.len())?;
            self.u8(id);
            return items.iter().try_for_each(|item| self.value(item));
        }
        match (class, items) {
            (jdk::HASH_SET | jdk::LINKED_HASH_SET, _) => {
                self.new_jdk_object(class)?;
                let (capacity, _) = hash_capacity(items.len());
                let mut data = capacity.to_be_bytes().to_vec();
                data.extend_from_slice(&0.75f32.to_bits().to_be_bytes());
                data.extend_from_slice(&(items.len() as i32).to_be_bytes());
                self.block(&data);
                items.iter().try_for_each(|item| self.value(item))?;
                self.u8(ids::END_BLOCK_DATA);
            }
            ("java.util.Collections$EmptyList", []) => self.u8(ids::EMPTY_LIST_OBJECT),
            ("java.util.Collections$EmptySet", []) => self.u8(ids::EMPTY_SET_OBJECT),
            ("java.util.Collections$SingletonList" | "java.util.Collections$SingletonSet", [item]) => {
                self.number();
                self.u8(if class.ends_with("List") {
                    ids::SINGLETON_LIST_OBJECT
                } else {
                    ids::SINGLETON_SET_OBJECT
                });
                self.value(item)?;
            }
            _ if self.other_collection(class, items)? => {}
            _ => {
                return Err(MarshallingError::encode(format!(
                    "a {class} of {} elements: delayq writes ArrayList, LinkedList, ArrayDeque, Vector, Stack, \
                     HashSet, LinkedHashSet, TreeSet, PriorityQueue, Arrays.asList, CopyOnWriteArrayList/Set, \
                     ConcurrentSkipListSet, EnumSet, List.of/Set.of and Collections' empty, singleton, unmodifiable \
                     and synchronized lists and sets with River",
                    items.len()
                )))
            }
        }
        Ok(())
    }

    fn map(&mut self, class: &str, entries: &[(KryoValue, KryoValue)]) -> Result<()> {
        if class.starts_with("java.util.ImmutableCollections$Map") {
            let items: Vec<&KryoValue> = entries.iter().flat_map(|(k, v)| [k, v]).collect();
            return self.coll_ser(3, &items, true);
        }
        if class == "java.util.EnumMap" {
            return self.enum_map(entries);
        }
        match (class, entries) {
            (jdk::HASH_MAP | jdk::LINKED_HASH_MAP, _) => {
                self.new_jdk_object(class)?;
                // HashMap's fields, then its writeObject data.
                let (buckets, threshold) = hash_capacity(entries.len());
                self.f32(0.75);
                self.i32(threshold);
                let mut data = buckets.to_be_bytes().to_vec();
                data.extend_from_slice(&(entries.len() as i32).to_be_bytes());
                self.block(&data);
                for (key, value) in entries {
                    self.key(key)?;
                    self.value(value)?;
                }
                self.u8(ids::END_BLOCK_DATA);
                if class == jdk::LINKED_HASH_MAP {
                    self.u8(0); // accessOrder: insertion order
                }
            }
            ("java.util.Collections$EmptyMap", []) => self.u8(ids::EMPTY_MAP_OBJECT),
            ("java.util.Collections$SingletonMap", [(key, value)]) => {
                self.number();
                self.u8(ids::SINGLETON_MAP_OBJECT);
                self.key(key)?;
                self.value(value)?;
            }
            _ if self.other_map(class, entries)? => {}
            _ => {
                return Err(MarshallingError::encode(format!(
                    "a {class} of {} entries: delayq writes HashMap, LinkedHashMap, TreeMap, Hashtable, \
                     ConcurrentSkipListMap, EnumMap, Map.of and Collections' empty, singleton, unmodifiable and \
                     synchronized maps with River",
                    entries.len()
                )))
            }
        }
        Ok(())
    }

    fn primitive(&mut self, p: Primitive, value: &KryoValue) -> Result<()> {
        match (p, value) {
            (Primitive::Boolean, KryoValue::Boolean(v)) => self.u8(u8::from(*v)),
            (Primitive::Byte, KryoValue::Byte(v)) => self.u8(*v as u8),
            (Primitive::Short, KryoValue::Short(v)) => self.u16(*v as u16),
            (Primitive::Int, KryoValue::Int(v)) => self.i32(*v),
            (Primitive::Long, KryoValue::Long(v)) => self.i64(*v),
            (Primitive::Char, KryoValue::Char(v)) => self.u16(*v),
            (Primitive::Float, KryoValue::Float(v)) => self.f32(*v),
            (Primitive::Double, KryoValue::Double(v)) => self.f64(*v),
            _ => return Err(MarshallingError::encode(format!("{value:?} for a {} field", p.name()))),
        }
        Ok(())
    }
}
