//! What the JDK classes of Redisson payloads write, read back into the
//! value model: the fields of boxed numbers, `UUID`, `BigInteger` and
//! `BigDecimal`; the custom `writeObject` data of `Date`, the collections
//! and maps; `java.time.Ser`'s external form of `Instant`. Any other class
//! is a POJO: its fields, superclasses' first.

use std::rc::Rc;

use super::desc::ClassDesc;
use super::error::{shown, Result, SerializationError, SerializationErrorKind as Kind};
use super::read::{ClassData, Item};
use super::tree::{Arena, Field, Node, NodeId, NULL};
use crate::kryo::{JavaType, KryoValue};

/// The classes read by their custom data, for error messages.
pub(crate) const READ_CLASSES: &str = "HashMap, LinkedHashMap, Hashtable, TreeMap, ArrayList, LinkedList, \
    ArrayDeque, Vector, HashSet, LinkedHashSet, TreeSet, Date, Instant, BigInteger, BigDecimal";

/// The node for an object of class `desc`, from its classes' data.
pub(crate) fn interpret(arena: &mut Arena, desc: &ClassDesc, data: &[ClassData], at: usize) -> Result<Node> {
    let o = Obj {
        data,
        at,
        class: &desc.name,
    };
    let leaf = |v| Ok(Node::Leaf(v));
    match &*desc.name {
        "java.lang.Boolean" => leaf(KryoValue::Boolean(o.prim(arena, b'Z')? != 0)),
        "java.lang.Byte" => leaf(KryoValue::Byte(o.prim(arena, b'B')? as i8)),
        "java.lang.Character" => leaf(KryoValue::Char(o.prim(arena, b'C')? as u16)),
        "java.lang.Short" => leaf(KryoValue::Short(o.prim(arena, b'S')? as i16)),
        "java.lang.Integer" => leaf(KryoValue::Int(o.prim(arena, b'I')? as i32)),
        "java.lang.Long" => leaf(KryoValue::Long(o.prim(arena, b'J')?)),
        "java.lang.Float" => match o.leaf(arena, o.field("value", b'F')?)? {
            KryoValue::Float(f) => leaf(KryoValue::Float(*f)),
            _ => Err(o.bad("value")),
        },
        "java.lang.Double" => match o.leaf(arena, o.field("value", b'D')?)? {
            KryoValue::Double(f) => leaf(KryoValue::Double(*f)),
            _ => Err(o.bad("value")),
        },
        "java.util.UUID" => {
            let most = o.long(arena, "mostSigBits")? as u64;
            let least = o.long(arena, "leastSigBits")? as u64;
            leaf(KryoValue::Uuid((u128::from(most) << 64) | u128::from(least)))
        }
        "java.math.BigInteger" => leaf(KryoValue::BigInteger(o.big_integer(arena)?)),
        "java.math.BigDecimal" => {
            let scale = o.int(arena, "scale")?;
            let unscaled = match o.leaf(arena, o.field("intVal", b'L')?)? {
                KryoValue::BigInteger(b) => b.clone(),
                _ => return Err(o.bad("intVal")),
            };
            leaf(KryoValue::BigDecimal { unscaled, scale })
        }
        "java.util.Date" => leaf(KryoValue::Date(o.custom("java.util.Date")?.i64("the time")?)),
        "java.time.Ser" => instant(&o),
        "java.util.HashMap" | "java.util.LinkedHashMap" => map(&o, "java.util.HashMap", true),
        "java.util.Hashtable" => map(&o, "java.util.Hashtable", true),
        "java.util.TreeMap" => {
            o.no_comparator(arena, o.field("comparator", b'L')?)?;
            map(&o, "java.util.TreeMap", false)
        }
        "java.util.ArrayList" => {
            let size = o.int(arena, "size")?;
            let mut c = o.custom("java.util.ArrayList")?;
            c.i32("the capacity")?;
            collection(&o, c, size)
        }
        "java.util.LinkedList" | "java.util.ArrayDeque" => {
            let mut c = o.custom(&desc.name)?;
            let size = c.i32("the size")?;
            collection(&o, c, size)
        }
        "java.util.HashSet" | "java.util.LinkedHashSet" => {
            let mut c = o.custom("java.util.HashSet")?;
            c.i32("the capacity")?;
            c.f32("the load factor")?;
            let size = c.i32("the size")?;
            collection(&o, c, size)
        }
        "java.util.TreeSet" => {
            let mut c = o.custom("java.util.TreeSet")?;
            o.no_comparator(arena, c.object("the comparator")?)?;
            let size = c.i32("the size")?;
            collection(&o, c, size)
        }
        "java.util.Vector" => vector(arena, &o),
        _ => pojo(arena, &o),
    }
}

/// An object's classes' data, with the lookups the JDK classes need.
struct Obj<'x> {
    data: &'x [ClassData],
    at: usize,
    class: &'x Rc<str>,
}

impl<'x> Obj<'x> {
    fn bad(&self, what: &str) -> SerializationError {
        SerializationError::at(
            Kind::Malformed,
            self.at,
            format!("{} without its {what} as the JDK writes it", shown(self.class)),
        )
    }

    /// A field of the object's own class by name and type code.
    fn field(&self, name: &str, code: u8) -> Result<NodeId> {
        let own = self.data.last().ok_or_else(|| self.bad(name))?;
        own.desc
            .fields
            .iter()
            .position(|f| &*f.name == name && f.code == code)
            .and_then(|i| own.values.get(i).copied())
            .ok_or_else(|| self.bad(&format!("{name} field")))
    }

    fn leaf<'a>(&self, arena: &'a Arena, id: NodeId) -> Result<&'a KryoValue> {
        match arena.get(id) {
            Node::Leaf(v) if id != NULL => Ok(v),
            _ => Err(self.bad("field values")),
        }
    }

    /// The `value` field of a boxed primitive, widened.
    fn prim(&self, arena: &Arena, code: u8) -> Result<i64> {
        Ok(match self.leaf(arena, self.field("value", code)?)? {
            KryoValue::Boolean(b) => i64::from(*b),
            KryoValue::Byte(v) => i64::from(*v),
            KryoValue::Char(v) => i64::from(*v),
            KryoValue::Short(v) => i64::from(*v),
            KryoValue::Int(v) => i64::from(*v),
            KryoValue::Long(v) => *v,
            _ => return Err(self.bad("value")),
        })
    }

    fn long(&self, arena: &Arena, name: &str) -> Result<i64> {
        match self.leaf(arena, self.field(name, b'J')?)? {
            KryoValue::Long(v) => Ok(*v),
            _ => Err(self.bad(name)),
        }
    }

    fn int(&self, arena: &Arena, name: &str) -> Result<i32> {
        match self.leaf(arena, self.field(name, b'I')?)? {
            KryoValue::Int(v) => Ok(*v),
            _ => Err(self.bad(name)),
        }
    }

    /// `BigInteger`'s serial form (signum and big-endian magnitude) as two's
    /// complement, checked as `BigInteger.readObject` checks it.
    fn big_integer(&self, arena: &Arena) -> Result<Vec<u8>> {
        let signum = self.int(arena, "signum")?;
        let magnitude = match self.leaf(arena, self.field("magnitude", b'[')?)? {
            KryoValue::Bytes(b) => b.as_slice(),
            _ => return Err(self.bad("magnitude")),
        };
        let start = magnitude.iter().position(|&b| b != 0).unwrap_or(magnitude.len());
        let magnitude = &magnitude[start..];
        if !(-1..=1).contains(&signum) || magnitude.is_empty() != (signum == 0) {
            return Err(SerializationError::at(
                Kind::Malformed,
                self.at,
                format!("BigInteger: signum {signum} does not fit its magnitude"),
            ));
        }
        Ok(twos_complement(signum < 0, magnitude))
    }

    /// The custom data of one class of the chain.
    fn custom(&self, class: &str) -> Result<Cursor<'x>> {
        let data = self.data.iter().find(|d| &*d.desc.name == class);
        match data.and_then(|d| d.annotation.as_ref()) {
            Some((at, items)) => Ok(Cursor {
                items,
                item: 0,
                offset: 0,
                at: *at,
                class: self.class.to_string(),
            }),
            None => Err(self.bad("writeObject data")),
        }
    }

    /// TreeMap and TreeSet with a `Comparator` order by Java code delayq
    /// cannot run; only natural order is read.
    fn no_comparator(&self, arena: &Arena, id: NodeId) -> Result<()> {
        if id == NULL {
            return Ok(());
        }
        let comparator = match arena.get(id) {
            Node::Object { class, .. } => shown(class),
            _ => "a value".to_owned(),
        };
        Err(SerializationError::at(
            Kind::Unsupported,
            self.at,
            format!("{} ordered by a Comparator ({comparator})", shown(self.class)),
        ))
    }
}

/// Reads custom data: primitives from the block data, objects in order.
pub(crate) struct Cursor<'x> {
    items: &'x [Item],
    item: usize,
    offset: usize,
    at: usize,
    class: String,
}

impl Cursor<'_> {
    fn short(&self, what: &str) -> SerializationError {
        SerializationError::at(
            Kind::Malformed,
            self.at,
            format!("{}'s writeObject data ends before {what}", shown(&self.class)),
        )
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        match self.items.get(self.item) {
            Some(Item::Block(block)) if block.len() - self.offset >= N => {
                let mut out = [0; N];
                out.copy_from_slice(&block[self.offset..self.offset + N]);
                self.offset += N;
                if self.offset == block.len() {
                    self.item += 1;
                    self.offset = 0;
                }
                Ok(out)
            }
            _ => Err(self.short(what)),
        }
    }

    fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.bytes::<1>(what)?[0])
    }

    fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.bytes(what)?))
    }

    fn f32(&mut self, what: &str) -> Result<f32> {
        Ok(f32::from_bits(u32::from_be_bytes(self.bytes(what)?)))
    }

    fn i64(&mut self, what: &str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.bytes(what)?))
    }

    fn object(&mut self, what: &str) -> Result<NodeId> {
        match self.items.get(self.item) {
            Some(Item::Object(id)) => {
                self.item += 1;
                Ok(*id)
            }
            _ => Err(self.short(what)),
        }
    }

    /// How many objects are left (a claimed size is checked against it
    /// before anything is allocated).
    fn objects_left(&self) -> usize {
        self.items[self.item.min(self.items.len())..]
            .iter()
            .filter(|i| matches!(i, Item::Object(_)))
            .count()
    }

    fn size(&self, size: i32, per: usize, what: &str) -> Result<usize> {
        match usize::try_from(size) {
            Ok(n) if n.checked_mul(per).is_some_and(|total| total <= self.objects_left()) => Ok(n),
            _ => Err(SerializationError::at(
                Kind::Malformed,
                self.at,
                format!(
                    "{} claims {size} {what}, its data holds {} objects",
                    shown(&self.class),
                    self.objects_left()
                ),
            )),
        }
    }
}

fn collection(o: &Obj<'_>, mut c: Cursor<'_>, size: i32) -> Result<Node> {
    let size = c.size(size, 1, "elements")?;
    let mut items = Vec::with_capacity(size);
    for _ in 0..size {
        items.push(c.object("an element")?);
    }
    Ok(Node::Collection {
        class: o.class.clone(),
        items,
    })
}

/// HashMap and Hashtable write a capacity then the size; TreeMap the size.
fn map(o: &Obj<'_>, base: &str, capacity: bool) -> Result<Node> {
    let mut c = o.custom(base)?;
    if capacity {
        c.i32("the capacity")?;
    }
    let size = c.i32("the size")?;
    let size = c.size(size, 2, "entries")?;
    let mut entries = Vec::with_capacity(size);
    for _ in 0..size {
        entries.push((c.object("a key")?, c.object("a value")?));
    }
    Ok(Node::Map {
        class: o.class.clone(),
        entries,
    })
}

/// `java.time.Ser`: a type byte, then the value; type 2 is `Instant`.
fn instant(o: &Obj<'_>) -> Result<Node> {
    let mut c = o.custom("java.time.Ser")?;
    let kind = c.u8("the java.time type")?;
    if kind != 2 {
        const NAMES: [&str; 15] = [
            "?",
            "Duration",
            "Instant",
            "LocalDate",
            "LocalTime",
            "LocalDateTime",
            "ZonedDateTime",
            "ZoneRegion",
            "ZoneOffset",
            "OffsetTime",
            "OffsetDateTime",
            "Year",
            "YearMonth",
            "MonthDay",
            "Period",
        ];
        let name = NAMES.get(usize::from(kind)).unwrap_or(&"?");
        return Err(SerializationError::at(
            Kind::Unsupported,
            o.at,
            format!("java.time.{name} (java.time.Ser type {kind}): of java.time, only Instant is read"),
        ));
    }
    let seconds = c.i64("the seconds")?;
    let nanos = c.i32("the nanoseconds")?;
    match u32::try_from(nanos) {
        Ok(nanos) if nanos < 1_000_000_000 => Ok(Node::Leaf(KryoValue::Instant { seconds, nanos })),
        _ => Err(SerializationError::at(
            Kind::Malformed,
            o.at,
            format!("Instant: {nanos} nanoseconds"),
        )),
    }
}

/// Vector writes its fields (an `Object[]` and a count) through `putFields`.
fn vector(arena: &mut Arena, o: &Obj<'_>) -> Result<Node> {
    let count = o.int(arena, "elementCount")?;
    let items = match arena.get(o.field("elementData", b'[')?) {
        Node::Collection { items, .. } => items.clone(),
        _ => return Err(o.bad("elementData")),
    };
    let count = usize::try_from(count)
        .ok()
        .filter(|&n| n <= items.len())
        .ok_or_else(|| o.bad("elementCount within its elementData"))?;
    let items = items[..count].to_vec();
    for &item in &items {
        // Held by the array too.
        arena.reuse(item);
    }
    Ok(Node::Collection {
        class: o.class.clone(),
        items,
    })
}

/// Any other class: its fields, superclasses' first. Custom data only the
/// class's own Java code can read is refused, not skipped: a value
/// re-written without it would lose it.
fn pojo(arena: &Arena, o: &Obj<'_>) -> Result<Node> {
    let mut fields = Vec::new();
    for data in o.data {
        if let Some((at, items)) = &data.annotation {
            if !items.is_empty() {
                let whose = if data.desc.name == *o.class {
                    String::new()
                } else {
                    format!(" (the class of {})", shown(o.class))
                };
                return Err(SerializationError::at(
                    Kind::Unsupported,
                    *at,
                    format!(
                        "{}{whose} writes custom data (writeObject/writeExternal) that only its Java code \
                         can read; delayq reads classes whose data is their fields, and {READ_CLASSES}",
                        shown(&data.desc.name)
                    ),
                ));
            }
        }
        for (desc, &value) in data.desc.fields.iter().zip(&data.values) {
            let mut declared = desc.declared.clone();
            // A field holding a constant of its own declared enum: that
            // type is an enum, hence final (which Kryo's bytes depend on).
            if let Node::Enum { class, .. } = arena.get(value) {
                if **class == *declared.class_name() && !declared.is_final() {
                    declared = Rc::new(JavaType::final_class(class));
                }
            }
            fields.push(Field {
                name: desc.name.clone(),
                declared,
                value,
            });
        }
    }
    Ok(Node::Object {
        class: o.class.clone(),
        fields,
    })
}

/// Two's complement, shortest form, of a sign and a big-endian magnitude
/// without leading zeros.
pub(crate) fn twos_complement(negative: bool, magnitude: &[u8]) -> Vec<u8> {
    if magnitude.is_empty() {
        return vec![0];
    }
    let mut out = Vec::with_capacity(magnitude.len() + 1);
    out.push(0);
    out.extend_from_slice(magnitude);
    if negative {
        let mut carry = true;
        for b in out.iter_mut().rev() {
            let (v, c) = (!*b).overflowing_add(u8::from(carry));
            *b = v;
            carry = c;
        }
    }
    shortest(out)
}

/// The magnitude (big-endian, no leading zeros) and signum of a two's
/// complement number.
pub(crate) fn sign_magnitude(twos: &[u8]) -> (i32, Vec<u8>) {
    let negative = twos.first().is_some_and(|&b| b & 0x80 != 0);
    let mut bytes = twos.to_vec();
    if negative {
        let mut carry = true;
        for b in bytes.iter_mut().rev() {
            let (v, c) = (!*b).overflowing_add(u8::from(carry));
            *b = v;
            carry = c;
        }
    }
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let magnitude = bytes.split_off(start);
    let signum = if magnitude.is_empty() {
        0
    } else if negative {
        -1
    } else {
        1
    };
    (signum, magnitude)
}

/// Drops redundant sign bytes (Java's `BigInteger.toByteArray()` form).
pub(crate) fn shortest(bytes: Vec<u8>) -> Vec<u8> {
    let redundant = bytes
        .windows(2)
        .take_while(|w| (w[0] == 0 && w[1] & 0x80 == 0) || (w[0] == 0xff && w[1] & 0x80 != 0))
        .count();
    if bytes.is_empty() {
        return vec![0];
    }
    bytes[redundant..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_magnitude_both_ways() {
        for v in [
            0i128,
            1,
            -1,
            127,
            128,
            -128,
            -129,
            1250,
            -1250,
            i64::MIN as i128,
            i128::MAX,
            i128::MIN,
        ] {
            let twos = shortest(v.to_be_bytes().to_vec());
            let (signum, magnitude) = sign_magnitude(&twos);
            assert_eq!(signum, v.signum() as i32, "{v}");
            assert_eq!(
                magnitude,
                shortest(v.unsigned_abs().to_be_bytes().to_vec())
                    .into_iter()
                    .skip_while(|&b| b == 0)
                    .collect::<Vec<_>>(),
                "{v}"
            );
            assert_eq!(twos_complement(signum < 0, &magnitude), twos, "{v}");
        }
    }
}
