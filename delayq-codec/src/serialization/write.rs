//! Writes a [`KryoValue`] as `ObjectOutputStream.writeObject` does, byte
//! for byte where Java's output depends on the value alone.
//!
//! Java shares objects through handles, and so does this writer where the
//! sharing is certain: class descriptors and field type strings (interned
//! by the JDK), enum constants, and the boxed values every autoboxing
//! returns from its cache (`Boolean`, `Byte`, `Character` up to 127,
//! `Short`/`Integer`/`Long` in -128..=127), and `BigInteger`s of -16..=16
//! inside a `BigDecimal` (its `writeObject` takes `BigInteger.valueOf`'s
//! constants). Equal strings are written each time (Java shares them only
//! when they are the same object, which a value tree cannot say).
//!
//! Where Java's bytes depend on an object's history rather than its value,
//! this writer writes what a collection filled one element at a time holds:
//! a `HashMap`'s or `HashSet`'s capacity is the smallest power of two from
//! 16 that holds its size at load factor 0.75 (a map copied with
//! `new HashMap<>(map)` has a smaller table); Java reads either.

use std::collections::HashMap;

use super::desc::signature;
use super::error::{shown, Result, SerializationError};
use super::jdk::sign_magnitude;
use super::stream::*;
use crate::java_hash::hash_capacity;
use crate::kryo::schema::ClassDef;
use crate::kryo::{JavaTime, JavaType, KryoField, KryoSchema, KryoValue, MAX_DEPTH};

mod collections;
mod objects;

/// Where POJO classes' `serialVersionUID`s, declared field types and enum
/// constant names come from.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Classes<'s> {
    pub(crate) schema: Option<&'s KryoSchema>,
    pub(crate) uids: Option<&'s HashMap<String, i64>>,
}

impl Classes<'_> {
    fn uid(&self, class: &str) -> Option<i64> {
        self.uids
            .and_then(|u| u.get(class).copied())
            .or_else(|| self.schema.and_then(|s| s.serial_version_uid(class)))
    }

    fn field_type(&self, class: &str, field: &str) -> Option<&JavaType> {
        match self.schema?.get(class)? {
            ClassDef::Pojo { fields, .. } => fields.iter().find(|(n, _)| n == field).map(|(_, t)| t),
            ClassDef::Enum { .. } => None,
        }
    }

    fn constant(&self, class: &str, ordinal: u32) -> Option<&str> {
        match self.schema?.get(class)? {
            ClassDef::Enum { constants } => constants.get(ordinal as usize).map(String::as_str),
            ClassDef::Pojo { .. } => None,
        }
    }
}

/// A descriptor's fields: type code, name, JVM signature (objects only),
/// in the stream's order.
type Fields = Vec<(u8, String, String)>;

/// A class descriptor to write.
struct Desc {
    name: String,
    uid: i64,
    flags: u8,
    fields: Fields,
    super_desc: Option<Box<Desc>>,
}

fn desc(name: &str, uid: u64, flags: u8, fields: &[(u8, &str, &str)], super_desc: Option<Desc>) -> Desc {
    Desc {
        name: name.to_owned(),
        uid: uid as i64,
        flags,
        fields: fields
            .iter()
            .map(|&(c, n, s)| (c, n.to_owned(), s.to_owned()))
            .collect(),
        super_desc: super_desc.map(Box::new),
    }
}

const SER: u8 = SC_SERIALIZABLE;
const SER_WRITE: u8 = SC_SERIALIZABLE | SC_WRITE_METHOD;

// The JDK's serialVersionUIDs (stable since Java 1.1-1.5).
fn number() -> Desc {
    desc("java.lang.Number", 0x86ac_951d_0b94_e08b, SER, &[], None)
}

fn boxed(class: &str, code: u8) -> Desc {
    let (uid, number_super) = match class {
        "java.lang.Boolean" => (0xcd20_7280_d59c_faee, false),
        "java.lang.Character" => (0x348b_47d9_6b1a_2678, false),
        "java.lang.Byte" => (0x9c4e_6084_ee50_f51c, true),
        "java.lang.Short" => (0x684d_3713_3460_da52, true),
        "java.lang.Integer" => (0x12e2_a0a4_f781_8738, true),
        "java.lang.Long" => (0x3b8b_e490_cc8f_23df, true),
        "java.lang.Float" => (0xdaed_c9a2_db3c_f0ec, true),
        _ => (0x80b3_c24a_296b_fb04, true), // java.lang.Double
    };
    let field = [(code, "value", "")];
    desc(class, uid, SER, &field, number_super.then(number))
}

fn byte_array() -> Desc {
    desc("[B", 0xacf3_17f8_0608_54e0, SER, &[], None)
}

fn big_integer() -> Desc {
    let fields = [
        (b'I', "bitCount", ""),
        (b'I', "bitLength", ""),
        (b'I', "firstNonzeroByteNum", ""),
        (b'I', "lowestSetBit", ""),
        (b'I', "signum", ""),
        (b'[', "magnitude", "[B"),
    ];
    desc(
        "java.math.BigInteger",
        0x8cfc_9f1f_a93b_fb1d,
        SER_WRITE,
        &fields,
        Some(number()),
    )
}

fn hash_map() -> Desc {
    let fields = [(b'F', "loadFactor", ""), (b'I', "threshold", "")];
    desc("java.util.HashMap", 0x0507_dac1_c316_60d1, SER_WRITE, &fields, None)
}

fn hash_set() -> Desc {
    desc("java.util.HashSet", 0xba44_8595_96b8_b734, SER_WRITE, &[], None)
}

/// The enum class's descriptor (Java writes the enum type's, never a
/// constant body's).
fn enum_desc(class: &str) -> Desc {
    let enum_base = desc("java.lang.Enum", 0, SER | SC_ENUM, &[], None);
    desc(class, 0, SER | SC_ENUM, &[], Some(enum_base))
}

/// Objects Java writes once and then refers to.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Shared {
    Boxed(&'static str, i64),
    Enum(String, String),
    BigIntegerConstant(i64),
}

/// `java.util` collections and maps this writer writes.
pub(crate) const WRITTEN_CLASSES: &str = "collections java.util.ArrayList, LinkedList, ArrayDeque, Vector, \
    Stack, PriorityQueue, Arrays.asList, HashSet, LinkedHashSet, TreeSet, List.of/Set.of, EnumSet, \
    CopyOnWriteArrayList/Set, ConcurrentSkipListSet and Collections' singletons, empties, unmodifiable and \
    synchronized views (sorted and navigable ones too); maps java.util.HashMap, LinkedHashMap, TreeMap, Hashtable, EnumMap, Map.of, \
    ConcurrentHashMap, ConcurrentSkipListMap and the same views";

const MAX_BLOCK: usize = 1024;
const LOAD_FACTOR: f32 = 0.75;

pub(crate) struct Writer<'s> {
    out: Vec<u8>,
    next_handle: u32,
    /// Class name → handle and field list (one descriptor per class).
    descs: HashMap<String, (u32, Fields)>,
    type_strings: HashMap<String, u32>,
    shared: HashMap<Shared, u32>,
    /// Custom data not yet written as a block record.
    block: Vec<u8>,
    classes: Classes<'s>,
    depth: usize,
    /// `Some(None)`: the handle of the next object started is wanted here.
    capture: Option<Option<u32>>,
}

fn err(message: impl Into<String>) -> SerializationError {
    SerializationError::encode(message)
}

impl<'s> Writer<'s> {
    pub(crate) fn new(classes: Classes<'s>) -> Self {
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&super::MAGIC);
        Writer {
            out,
            next_handle: 0,
            descs: HashMap::new(),
            type_strings: HashMap::new(),
            shared: HashMap::new(),
            block: Vec::new(),
            classes,
            depth: 0,
            capture: None,
        }
    }

    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.drain();
        self.out
    }

    /// The bytes written since the last call (the stream's header first),
    /// for a stream that goes on with more objects later: Kryo's
    /// `JavaSerializer` writes one object at a time into one stream.
    pub(crate) fn take_written(&mut self) -> Vec<u8> {
        self.drain();
        std::mem::take(&mut self.out)
    }

    /// A new object's handle (not a descriptor's or a type string's).
    fn object_handle(&mut self) -> u32 {
        let h = self.handle();
        if self.capture == Some(None) {
            self.capture = Some(Some(h));
        }
        h
    }

    fn handle(&mut self) -> u32 {
        let h = BASE_HANDLE + self.next_handle;
        self.next_handle += 1;
        h
    }

    fn reference(&mut self, handle: u32) {
        self.out.push(TC_REFERENCE);
        self.out.extend_from_slice(&handle.to_be_bytes());
    }

    /// `writeUTF`: class and field names.
    fn utf(&mut self, text: &str) -> Result<()> {
        let bytes = to_modified_utf8(text);
        let len = u16::try_from(bytes.len())
            .map_err(|_| err(format!("{}: longer than writeUTF's 65535 bytes", shown(text))))?;
        self.out.extend_from_slice(&len.to_be_bytes());
        self.out.extend_from_slice(&bytes);
        Ok(())
    }

    /// A `String` object (always a new one: see the module docs).
    fn string(&mut self, text: &str) {
        let bytes = to_modified_utf8(text);
        match u16::try_from(bytes.len()) {
            Ok(len) => {
                self.out.push(TC_STRING);
                self.out.extend_from_slice(&len.to_be_bytes());
            }
            Err(_) => {
                self.out.push(TC_LONGSTRING);
                self.out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
            }
        }
        self.handle();
        self.out.extend_from_slice(&bytes);
    }

    fn type_string(&mut self, signature: &str) {
        if let Some(&h) = self.type_strings.get(signature) {
            return self.reference(h);
        }
        let h = BASE_HANDLE + self.next_handle;
        self.string(signature);
        self.type_strings.insert(signature.to_owned(), h);
    }

    fn class_desc(&mut self, d: &Desc) -> Result<()> {
        if let Some((h, fields)) = self.descs.get(&d.name) {
            if *fields != d.fields {
                return Err(err(format!(
                    "two objects of class {} with different fields: Java writes one class descriptor per class",
                    shown(&d.name)
                )));
            }
            let h = *h;
            self.reference(h);
            return Ok(());
        }
        self.out.push(TC_CLASSDESC);
        self.utf(&d.name)?;
        self.out.extend_from_slice(&d.uid.to_be_bytes());
        let h = self.handle();
        self.descs.insert(d.name.clone(), (h, d.fields.clone()));
        self.out.push(d.flags);
        let count =
            u16::try_from(d.fields.len()).map_err(|_| err(format!("{}: more than 65535 fields", shown(&d.name))))?;
        self.out.extend_from_slice(&count.to_be_bytes());
        for (code, name, sig) in &d.fields {
            self.out.push(*code);
            self.utf(name)?;
            if !sig.is_empty() {
                self.type_string(sig);
            }
        }
        self.out.push(TC_ENDBLOCKDATA);
        match &d.super_desc {
            Some(s) => self.class_desc(s),
            None => {
                self.out.push(TC_NULL);
                Ok(())
            }
        }
    }

    /// `TC_OBJECT`, its class, its handle.
    fn object(&mut self, d: &Desc) -> Result<u32> {
        self.out.push(TC_OBJECT);
        self.class_desc(d)?;
        Ok(self.object_handle())
    }

    /// Custom data (`writeInt` inside `writeObject`): buffered, written as
    /// block records of at most 1024 bytes before the next object.
    fn data(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.block.len() == MAX_BLOCK {
                self.drain();
            }
            self.block.push(b);
        }
    }

    fn drain(&mut self) {
        if self.block.is_empty() {
            return;
        }
        match u8::try_from(self.block.len()) {
            Ok(len) => self.out.extend_from_slice(&[TC_BLOCKDATA, len]),
            Err(_) => {
                self.out.push(TC_BLOCKDATALONG);
                self.out.extend_from_slice(&(self.block.len() as i32).to_be_bytes());
            }
        }
        self.out.append(&mut self.block);
    }

    /// The end of a class's custom data.
    fn end_custom(&mut self) {
        self.drain();
        self.out.push(TC_ENDBLOCKDATA);
    }

    pub(crate) fn value(&mut self, value: &KryoValue) -> Result<()> {
        self.drain();
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(err(format!("values nested deeper than {MAX_DEPTH} levels")));
        }
        match value {
            KryoValue::Time(t) => self.time(value, t)?,
            KryoValue::Wrapped { class, value } => self.wrapped(class, value)?,
            KryoValue::EnumSet { element, items, .. } => self.enum_set(element, items)?,
            KryoValue::Throwable { class, message, cause } => {
                self.throwable(class, message.as_deref(), cause.as_deref())?
            }
            KryoValue::Null => self.out.push(TC_NULL),
            KryoValue::Boolean(b) => self.boxed("java.lang.Boolean", b'Z', &[u8::from(*b)], Some(i64::from(*b)))?,
            KryoValue::Byte(v) => self.boxed("java.lang.Byte", b'B', &v.to_be_bytes(), Some(i64::from(*v)))?,
            KryoValue::Char(c) => {
                let cached = (*c <= 127).then_some(i64::from(*c));
                self.boxed("java.lang.Character", b'C', &c.to_be_bytes(), cached)?
            }
            KryoValue::Short(v) => self.boxed("java.lang.Short", b'S', &v.to_be_bytes(), small(i64::from(*v)))?,
            KryoValue::Int(v) => self.boxed("java.lang.Integer", b'I', &v.to_be_bytes(), small(i64::from(*v)))?,
            KryoValue::Long(v) => self.boxed("java.lang.Long", b'J', &v.to_be_bytes(), small(*v))?,
            KryoValue::Float(f) => self.boxed("java.lang.Float", b'F', &java_float(*f).to_be_bytes(), None)?,
            KryoValue::Double(f) => self.boxed("java.lang.Double", b'D', &java_double(*f).to_be_bytes(), None)?,
            KryoValue::String(s) => self.string(s),
            KryoValue::Bytes(b) => self.byte_array(b)?,
            KryoValue::Uuid(u) => {
                let fields = [(b'J', "leastSigBits", ""), (b'J', "mostSigBits", "")];
                self.object(&desc("java.util.UUID", 0xbc99_03f7_986d_852f, SER, &fields, None))?;
                self.out.extend_from_slice(&(*u as u64).to_be_bytes());
                self.out.extend_from_slice(&((*u >> 64) as u64).to_be_bytes());
            }
            KryoValue::Date(ms) => {
                self.object(&desc("java.util.Date", 0x686a_8101_4b59_7419, SER_WRITE, &[], None))?;
                self.data(&ms.to_be_bytes());
                self.end_custom();
            }
            KryoValue::Instant { seconds, nanos } => {
                // Instant.writeReplace: java.time.Ser, Externalizable, protocol 2.
                let flags = SC_EXTERNALIZABLE | SC_BLOCK_DATA;
                self.object(&desc("java.time.Ser", 0x955d_84ba_1b22_48b2, flags, &[], None))?;
                self.data(&[2]);
                self.data(&seconds.to_be_bytes());
                self.data(&(*nanos as i32).to_be_bytes());
                self.end_custom();
            }
            KryoValue::BigInteger(b) => {
                self.big_integer(b)?;
            }
            KryoValue::BigDecimal { unscaled, scale } => self.big_decimal(unscaled, *scale)?,
            KryoValue::Enum { class, ordinal, name } => self.enum_constant(class, *ordinal, name.as_deref())?,
            KryoValue::Collection { class, items } => self.collection(class, items)?,
            KryoValue::Map { class, entries } => self.map(class, entries)?,
            KryoValue::Object { class, fields } => self.pojo(class, fields)?,
        }
        self.depth -= 1;
        Ok(())
    }

    fn boxed(&mut self, class: &'static str, code: u8, bytes: &[u8], cached: Option<i64>) -> Result<()> {
        let key = cached.map(|v| Shared::Boxed(class, v));
        if let Some(&h) = key.as_ref().and_then(|k| self.shared.get(k)) {
            self.reference(h);
            return Ok(());
        }
        let h = self.object(&boxed(class, code))?;
        self.out.extend_from_slice(bytes);
        if let Some(key) = key {
            self.shared.insert(key, h);
        }
        Ok(())
    }

    fn byte_array(&mut self, bytes: &[u8]) -> Result<()> {
        let len = i32::try_from(bytes.len()).map_err(|_| err("a byte[] longer than Java's arrays"))?;
        self.out.push(TC_ARRAY);
        self.class_desc(&byte_array())?;
        self.object_handle();
        self.out.extend_from_slice(&len.to_be_bytes());
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    /// `BigInteger.writeObject`: legacy fields -1, -1, -2, -2, then signum
    /// and magnitude.
    fn big_integer(&mut self, twos: &[u8]) -> Result<u32> {
        let (signum, magnitude) = sign_magnitude(twos);
        let h = self.object(&big_integer())?;
        for v in [-1i32, -1, -2, -2, signum] {
            self.out.extend_from_slice(&v.to_be_bytes());
        }
        self.byte_array(&magnitude)?;
        self.end_custom();
        Ok(h)
    }

    fn big_decimal(&mut self, unscaled: &[u8], scale: i32) -> Result<()> {
        let fields = [(b'I', "scale", ""), (b'L', "intVal", "Ljava/math/BigInteger;")];
        self.object(&desc(
            "java.math.BigDecimal",
            0x54c7_1557_f981_284f,
            SER_WRITE,
            &fields,
            Some(number()),
        ))?;
        self.out.extend_from_slice(&scale.to_be_bytes());
        let constant = match unscaled {
            [b] if (-16..=16).contains(&(*b as i8)) => Some(Shared::BigIntegerConstant(i64::from(*b as i8))),
            _ => None,
        };
        match constant.as_ref().and_then(|k| self.shared.get(k)) {
            Some(&h) => self.reference(h),
            None => {
                let h = self.big_integer(unscaled)?;
                if let Some(key) = constant {
                    self.shared.insert(key, h);
                }
            }
        }
        self.end_custom();
        Ok(())
    }

    fn enum_constant(&mut self, class: &str, ordinal: Option<u32>, name: Option<&str>) -> Result<()> {
        let name = match (name, ordinal) {
            (Some(name), _) => name.to_owned(),
            (None, Some(o)) => self.classes.constant(class, o).map(str::to_owned).ok_or_else(|| {
                err(format!(
                    "{} constant #{o} has no name: Java serialization writes names; give the enum's \
                     constants in the schema ({{\"enum\": [...]}})",
                    shown(class)
                ))
            })?,
            (None, None) => return Err(err(format!("{} constant with neither name nor ordinal", shown(class)))),
        };
        let key = Shared::Enum(class.to_owned(), name.clone());
        if let Some(&h) = self.shared.get(&key) {
            self.reference(h);
            return Ok(());
        }
        self.out.push(TC_ENUM);
        self.class_desc(&enum_desc(class))?;
        let h = self.handle();
        self.string(&name);
        self.shared.insert(key, h);
        Ok(())
    }

    /// `java.time` values (through `java.time.Ser`) and `java.sql` dates.
    fn time(&mut self, value: &KryoValue, time: &JavaTime) -> Result<()> {
        let date = || desc("java.util.Date", 0x686a_8101_4b59_7419, SER_WRITE, &[], None);
        let (class, uid, ms, nanos) = match time {
            JavaTime::SqlDate(ms) => ("java.sql.Date", 0x14fa_4668_3f35_6697, *ms, None),
            JavaTime::SqlTime(ms) => ("java.sql.Time", 0x7489_4a0d_d932_c471, *ms, None),
            JavaTime::SqlTimestamp { seconds, nanos } => {
                let ms = seconds
                    .checked_mul(1000)
                    .ok_or_else(|| err("a Timestamp out of range"))?;
                ("java.sql.Timestamp", 0x2618_d5c8_0153_bf65, ms, Some(*nanos))
            }
            _ => {
                let data = crate::jdk::time_ser::write(value, false)
                    .unwrap_or_else(|| Err(format!("{time:?} has no java.time.Ser form")))
                    .map_err(err)?;
                self.object(&desc(
                    crate::jdk::time_ser::CLASS,
                    crate::jdk::time_ser::UID as u64,
                    SC_EXTERNALIZABLE | SC_BLOCK_DATA,
                    &[],
                    None,
                ))?;
                self.data(&data);
                self.end_custom();
                return Ok(());
            }
        };
        let fields: &[(u8, &str, &str)] = if nanos.is_some() { &[(b'I', "nanos", "")] } else { &[] };
        self.object(&desc(class, uid, SER, fields, Some(date())))?;
        self.data(&ms.to_be_bytes());
        self.end_custom();
        if let Some(nanos) = nanos {
            self.out.extend_from_slice(&(nanos as i32).to_be_bytes());
        }
        Ok(())
    }

    /// The JDK objects that stand for one value.
    fn wrapped(&mut self, class: &str, inner: &KryoValue) -> Result<()> {
        let one = |code: u8, name: &'static str, sig: &'static str| [(code, name, sig)];
        match (class, inner) {
            ("java.util.concurrent.atomic.AtomicInteger", KryoValue::Int(v)) => {
                self.object(&desc(
                    class,
                    0x563f_5ecc_8c6c_168a,
                    SER,
                    &one(b'I', "value", ""),
                    Some(number()),
                ))?;
                self.out.extend_from_slice(&v.to_be_bytes());
            }
            ("java.util.concurrent.atomic.AtomicLong", KryoValue::Long(v)) => {
                self.object(&desc(
                    class,
                    0x1ac0_fab4_7700_1718,
                    SER,
                    &one(b'J', "value", ""),
                    Some(number()),
                ))?;
                self.out.extend_from_slice(&v.to_be_bytes());
            }
            ("java.util.concurrent.atomic.AtomicBoolean", KryoValue::Boolean(v)) => {
                self.object(&desc(class, 0x4098_b70a_4f3f_fc33, SER, &one(b'I', "value", ""), None))?;
                self.out.extend_from_slice(&i32::from(*v).to_be_bytes());
            }
            ("java.util.concurrent.atomic.AtomicReference", v) => {
                let field = one(b'L', "value", "Ljava/lang/Object;");
                self.object(&desc(class, 0xe657_71d4_5578_54c6, SER, &field, None))?;
                self.value(v)?;
            }
            ("java.util.Currency", KryoValue::String(code)) => {
                let field = one(b'L', "currencyCode", "Ljava/lang/String;");
                self.object(&desc(class, 0xfdcd_934a_5911_a91f, SER, &field, None))?;
                self.string(code);
            }
            ("java.net.URI", KryoValue::String(text)) => {
                let field = one(b'L', "string", "Ljava/lang/String;");
                self.object(&desc(class, 0xac01_782e_439e_49ab, SER_WRITE, &field, None))?;
                self.string(text);
                self.end_custom();
            }
            ("java.util.BitSet", KryoValue::Collection { class: words, .. }) if words == "[J" => {
                let field = one(b'[', "bits", "[J");
                self.object(&desc(class, 0x6efd_887e_3934_ab21, SER_WRITE, &field, None))?;
                self.value(inner)?;
                self.end_custom();
            }
            ("java.util.Locale", KryoValue::String(text)) => self.locale(text)?,
            ("java.net.URL", KryoValue::String(text)) => self.url(text)?,
            ("java.lang.StringBuilder" | "java.lang.StringBuffer", KryoValue::String(text)) => {
                self.string_builder(class, text)?
            }
            _ if self.view(class, inner)? => {}
            _ => return Err(unwritable(class)),
        }
        Ok(())
    }

    /// An array: `TC_ARRAY`, its class, its length, its elements.
    fn array(&mut self, class: &str, items: &[KryoValue]) -> Result<()> {
        // A class described already is written as a reference, without
        // its UID: hashed once per class, however many arrays of it.
        let uid = if self.descs.contains_key(class) {
            0
        } else {
            array_uid(class)
        };
        self.out.push(TC_ARRAY);
        self.class_desc(&desc(class, uid, SER, &[], None))?;
        self.object_handle();
        let len = i32::try_from(items.len()).map_err(|_| err("an array larger than Java's int"))?;
        self.out.extend_from_slice(&len.to_be_bytes());
        let code = class.as_bytes()[1];
        for item in items {
            match primitive_bytes(code, item) {
                Some(Ok(bytes)) => self.out.extend_from_slice(&bytes),
                Some(Err(())) => return Err(err(format!("{item:?} in a {}", shown(class)))),
                None => self.value(item)?,
            }
        }
        Ok(())
    }

    fn collection(&mut self, class: &str, items: &[KryoValue]) -> Result<()> {
        if class.starts_with('[') {
            return self.array(class, items);
        }
        let size = i32::try_from(items.len()).map_err(|_| err("a collection larger than Java's int"))?;
        let tag = match class {
            c if c.starts_with("java.util.ImmutableCollections$List") => Some(1),
            c if c.starts_with("java.util.ImmutableCollections$Set") => Some(2),
            _ => None,
        };
        if let Some(tag) = tag {
            return self.coll_ser(tag, size, items.iter());
        }
        match class {
            "java.util.Collections$SingletonList" | "java.util.Collections$SingletonSet" if items.len() == 1 => {
                let uid = if class.ends_with("List") {
                    0x2aef_2910_3ca7_9b97
                } else {
                    0x2c52_4198_29c0_b1bf
                };
                let field = [(b'L', "element", "Ljava/lang/Object;")];
                self.object(&desc(class, uid, SER, &field, None))?;
                return self.value(&items[0]);
            }
            "java.util.Collections$EmptyList" | "java.util.Collections$EmptySet" if items.is_empty() => {
                let uid = if class.ends_with("List") {
                    0x7ab8_17b4_3ca7_9ede
                } else {
                    0x15f5_721d_b403_cb28
                };
                self.object(&desc(class, uid, SER, &[], None))?;
                return Ok(());
            }
            "java.util.TreeSet" => {
                self.object(&desc(class, 0xdd98_5093_95ed_875b, SER_WRITE, &[], None))?;
                // The comparator: natural order.
                self.out.push(TC_NULL);
                self.data(&size.to_be_bytes());
                for item in items {
                    self.value(item)?;
                }
                self.end_custom();
                return Ok(());
            }
            _ => {}
        }
        match class {
            "java.util.ArrayList" => {
                let fields = [(b'I', "size", "")];
                self.object(&desc(class, 0x7881_d21d_99c7_619d, SER_WRITE, &fields, None))?;
                self.out.extend_from_slice(&size.to_be_bytes());
                self.data(&size.to_be_bytes());
            }
            "java.util.LinkedList" => {
                self.object(&desc(class, 0x0c29_535d_4a60_8822, SER_WRITE, &[], None))?;
                self.data(&size.to_be_bytes());
            }
            "java.util.HashSet" | "java.util.LinkedHashSet" => {
                if class == "java.util.HashSet" {
                    self.object(&hash_set())?;
                } else {
                    self.object(&desc(class, 0xd86c_d75a_95dd_2a1e, SER, &[], Some(hash_set())))?;
                }
                let (capacity, _) = hash_capacity(items.len());
                self.data(&capacity.to_be_bytes());
                self.data(&LOAD_FACTOR.to_bits().to_be_bytes());
                self.data(&size.to_be_bytes());
            }
            _ if self.other_collection(class, items)? => return Ok(()),
            _ => return Err(unwritable(class)),
        }
        for item in items {
            self.value(item)?;
        }
        self.end_custom();
        Ok(())
    }

    /// `List.of`, `Set.of`, `Map.of`: `java.util.CollSer` with their tag
    /// (1 list, 2 set, 3 map) and their elements (a map's keys and values
    /// in turn).
    fn coll_ser<'v>(&mut self, tag: i32, len: i32, items: impl Iterator<Item = &'v KryoValue>) -> Result<()> {
        let field = [(b'I', "tag", "")];
        self.object(&desc(
            "java.util.CollSer",
            0x578e_abb6_3a1b_a811,
            SER_WRITE,
            &field,
            None,
        ))?;
        self.out.extend_from_slice(&tag.to_be_bytes());
        self.data(&len.to_be_bytes());
        for item in items {
            self.value(item)?;
        }
        self.end_custom();
        Ok(())
    }

    fn map(&mut self, class: &str, entries: &[(KryoValue, KryoValue)]) -> Result<()> {
        let size = i32::try_from(entries.len()).map_err(|_| err("a map larger than Java's int"))?;
        if class.starts_with("java.util.ImmutableCollections$Map") {
            let len = size.checked_mul(2).ok_or_else(|| err("a map larger than Java's int"))?;
            return self.coll_ser(3, len, entries.iter().flat_map(|(k, v)| [k, v]));
        }
        match class {
            "java.util.Collections$SingletonMap" if entries.len() == 1 => {
                let fields = [(b'L', "k", "Ljava/lang/Object;"), (b'L', "v", "Ljava/lang/Object;")];
                self.object(&desc(class, 0x9f23_0991_717f_6b91, SER, &fields, None))?;
                self.value(&entries[0].0)?;
                return self.value(&entries[0].1);
            }
            "java.util.EnumMap" => return self.enum_map(entries),
            "java.util.Collections$EmptyMap" if entries.is_empty() => {
                self.object(&desc(class, 0x5936_1485_5adc_e7d0, SER, &[], None))?;
                return Ok(());
            }
            "java.util.TreeMap" => {
                let field = [(b'L', "comparator", "Ljava/util/Comparator;")];
                self.object(&desc(class, 0x0cc1_f63e_2d25_6ae6, SER_WRITE, &field, None))?;
                self.out.push(TC_NULL);
                self.data(&size.to_be_bytes());
                for (k, v) in entries {
                    self.value(k)?;
                    self.value(v)?;
                }
                self.end_custom();
                return Ok(());
            }
            _ => {}
        }
        match class {
            "java.util.HashMap" => self.object(&hash_map())?,
            "java.util.LinkedHashMap" => {
                let fields = [(b'Z', "accessOrder", "")];
                self.object(&desc(class, 0x34c0_4e5c_106c_c0fb, SER, &fields, Some(hash_map())))?
            }
            _ if self.other_map(class, entries)? => return Ok(()),
            _ => return Err(unwritable(class)),
        };
        // HashMap's part: fields, then capacity, size and the entries.
        let (capacity, threshold) = hash_capacity(entries.len());
        self.out.extend_from_slice(&LOAD_FACTOR.to_bits().to_be_bytes());
        self.out.extend_from_slice(&threshold.to_be_bytes());
        self.data(&capacity.to_be_bytes());
        self.data(&size.to_be_bytes());
        for (k, v) in entries {
            self.value(k)?;
            self.value(v)?;
        }
        self.end_custom();
        if class == "java.util.LinkedHashMap" {
            // accessOrder: insertion order.
            self.out.push(0);
        }
        Ok(())
    }

    fn pojo(&mut self, class: &str, fields: &[KryoField]) -> Result<()> {
        // The class first, then its superclasses, each with its fields.
        let Some(levels) = crate::jdk::fields_by_class(class, fields, self.classes.schema) else {
            return Err(err(format!("{}: a superclass cycle in the schema", shown(class))));
        };
        // Descriptors, the superclass's inside its subclass's.
        let mut lists = Vec::with_capacity(levels.len());
        let mut super_desc = None;
        for (level, level_fields) in levels.iter().rev() {
            let uid = self.classes.uid(level).ok_or_else(|| {
                err(format!(
                    "{0}: no serialVersionUID, which Java serialization writes in the class descriptor: give it \
                     in the schema ({{\"classes\": {{\"{0}\": {{\"serialVersionUID\": 1, \"fields\": {{...}}}}}}}}) \
                     or with SerializationCodec::with_serial_version_uid",
                    shown(level)
                ))
            })?;
            let list = self.level_fields(level, level_fields)?;
            super_desc = Some(Desc {
                name: (*level).to_owned(),
                uid,
                flags: SER,
                fields: list
                    .iter()
                    .map(|(c, n, s, _)| (*c, (*n).to_owned(), s.clone()))
                    .collect(),
                super_desc: super_desc.map(Box::new),
            });
            lists.push((*level, list));
        }
        self.object(&super_desc.expect("a class"))?;
        // Values: the superclass's first.
        for (level, list) in lists {
            for (code, name, _, value) in list {
                match primitive_bytes(code, value) {
                    Some(Ok(bytes)) => self.out.extend_from_slice(&bytes),
                    Some(Err(())) => {
                        return Err(err(format!(
                            "{}.{}: {} does not fit the primitive field ({})",
                            shown(level),
                            shown(name),
                            value.java_class().unwrap_or("null"),
                            code as char
                        )))
                    }
                    None => self.value(value)?,
                }
            }
        }
        Ok(())
    }

    /// One class's fields in `ObjectStreamClass`'s order (primitives first,
    /// then by name), with their type codes and signatures.
    fn level_fields<'f>(
        &self,
        class: &str,
        fields: &[&'f KryoField],
    ) -> Result<Vec<(u8, &'f str, String, &'f KryoValue)>> {
        let mut list: Vec<(u8, &str, String, &KryoValue)> = Vec::with_capacity(fields.len());
        for f in fields {
            let declared = self.classes.field_type(class, &f.name).unwrap_or(&f.declared);
            let (code, sig) = signature(declared);
            list.push((code, &f.name, sig, &f.value));
        }
        list.sort_by(|a, b| {
            let prim = |c: u8| c != b'L' && c != b'[';
            prim(b.0)
                .cmp(&prim(a.0))
                .then_with(|| a.1.encode_utf16().cmp(b.1.encode_utf16()))
        });
        if let Some(w) = list.windows(2).find(|w| w[0].1 == w[1].1) {
            return Err(err(format!("{}: field {} twice", shown(class), shown(w[0].1))));
        }
        Ok(list)
    }
}

fn unwritable(class: &str) -> SerializationError {
    err(format!(
        "{}: delayq writes these {WRITTEN_CLASSES} in Java serialization",
        shown(class)
    ))
}

/// The `serialVersionUID` Java computes for an array class (arrays declare
/// none): the first 8 bytes, little-endian, of the SHA-1 of the class name
/// (as `writeUTF` writes it) and its modifiers, `public final abstract` for
/// an array of a public class. Java does not check an array's UID when it
/// reads one, so an array of a non-public class (whose modifiers differ)
/// still reads; only its bytes differ from Java's.
fn array_uid(class: &str) -> u64 {
    use sha1::{Digest, Sha1};
    const PUBLIC_FINAL_ABSTRACT: i32 = 0x0411;
    let name = to_modified_utf8(class);
    let mut sha = Sha1::new();
    // A longer name is refused when the descriptor writes it.
    sha.update(u16::try_from(name.len()).unwrap_or(u16::MAX).to_be_bytes());
    sha.update(&name);
    sha.update(PUBLIC_FINAL_ABSTRACT.to_be_bytes());
    let hash = sha.finalize();
    u64::from_le_bytes(hash[..8].try_into().expect("a SHA-1 has 20 bytes"))
}

/// The boxed values autoboxing shares (`valueOf`'s cache).
fn small(v: i64) -> Option<i64> {
    (-128..=127).contains(&v).then_some(v)
}

/// `Float.floatToIntBits`: every NaN as the canonical one.
fn java_float(f: f32) -> u32 {
    if f.is_nan() {
        0x7fc0_0000
    } else {
        f.to_bits()
    }
}

fn java_double(f: f64) -> u64 {
    if f.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        f.to_bits()
    }
}

/// The bytes of a primitive field (`None`: an object field; `Err`: a value
/// that does not fit).
fn primitive_bytes(code: u8, value: &KryoValue) -> Option<Result<Vec<u8>, ()>> {
    let int = || -> Result<i64, ()> {
        match value {
            KryoValue::Byte(v) => Ok(i64::from(*v)),
            KryoValue::Short(v) => Ok(i64::from(*v)),
            KryoValue::Int(v) => Ok(i64::from(*v)),
            KryoValue::Long(v) => Ok(*v),
            _ => Err(()),
        }
    };
    Some(match code {
        b'Z' => match value {
            KryoValue::Boolean(b) => Ok(vec![u8::from(*b)]),
            _ => Err(()),
        },
        b'C' => match value {
            KryoValue::Char(c) => Ok(c.to_be_bytes().to_vec()),
            _ => Err(()),
        },
        b'B' => int()
            .and_then(|v| i8::try_from(v).map_err(|_| ()))
            .map(|v| v.to_be_bytes().to_vec()),
        b'S' => int()
            .and_then(|v| i16::try_from(v).map_err(|_| ()))
            .map(|v| v.to_be_bytes().to_vec()),
        b'I' => int()
            .and_then(|v| i32::try_from(v).map_err(|_| ()))
            .map(|v| v.to_be_bytes().to_vec()),
        b'J' => int().map(|v| v.to_be_bytes().to_vec()),
        b'F' => match value {
            KryoValue::Float(f) => Ok(java_float(*f).to_be_bytes().to_vec()),
            KryoValue::Double(d) if (*d as f32) as f64 == *d => Ok(java_float(*d as f32).to_be_bytes().to_vec()),
            _ => Err(()),
        },
        b'D' => match value {
            KryoValue::Double(d) => Ok(java_double(*d).to_be_bytes().to_vec()),
            KryoValue::Float(f) => Ok(java_double(f64::from(*f)).to_be_bytes().to_vec()),
            _ => Err(()),
        },
        _ => return None,
    })
}
