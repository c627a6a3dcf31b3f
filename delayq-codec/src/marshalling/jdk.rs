//! Serializable instances as values: the JDK classes River writes through
//! their `writeObject` methods (`HashMap`, `HashSet`, `Date`, `BigDecimal`...)
//! become the same [`KryoValue`]s Kryo's decoding gives; other classes are
//! POJOs, their fields named and typed by the stream's descriptors.

use std::rc::Rc;

use num_bigint::{BigInt, Sign};

use super::arena::{Arena, Node, NodeId};
use super::class::Serial;
use super::error::{MarshallingErrorKind as Kind, Result};
use super::ids::jdk;
use super::input::Input;
use crate::kryo::{decimal, KryoValue};

/// `writeObject`/`writeExternal` data: the bytes of its blocks, and the
/// objects between them, each in order.
#[derive(Debug, Default)]
pub(super) struct Custom {
    pub(super) bytes: Vec<u8>,
    pub(super) objects: Vec<NodeId>,
}

impl Custom {
    fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.objects.is_empty()
    }

    fn int_at(&self, offset: usize) -> Option<i32> {
        let b = self.bytes.get(offset..offset + 4)?;
        Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

/// The data one class of an instance's hierarchy wrote.
#[derive(Debug)]
pub(super) struct Level {
    pub(super) class: Rc<Serial>,
    /// Field values, in the descriptor's order.
    pub(super) values: Vec<NodeId>,
    pub(super) custom: Option<Custom>,
}

type Fault = (Kind, String);

fn malformed(message: impl Into<String>) -> Fault {
    (Kind::Malformed, message.into())
}

/// The instance of `class` whose hierarchy wrote `levels`.
pub(super) fn instance(arena: &mut Arena, class: &Serial, levels: Vec<Level>, at: usize) -> Result<NodeId> {
    let node = interpret(arena, class, levels).map_err(|(kind, message)| Input::error_at(at, kind, message))?;
    arena.push(node, at)
}

fn interpret(arena: &Arena, class: &Serial, levels: Vec<Level>) -> Result<Node, Fault> {
    let name = &*class.name;
    let value = match name {
        jdk::HASH_MAP | jdk::LINKED_HASH_MAP => {
            // HashMap's data: buckets, size, then the entries.
            let custom = custom_of(&levels, jdk::HASH_MAP)?;
            return Ok(Node::Map {
                class: class.name.clone(),
                entries: entries(custom, custom.int_at(4), name)?,
            });
        }
        jdk::TREE_MAP => {
            let level = level_of(&levels, jdk::TREE_MAP)?;
            if level
                .values
                .iter()
                .any(|&v| !matches!(arena.value(v), Some(KryoValue::Null)))
            {
                return Err((
                    Kind::Unsupported,
                    format!("{name} with a comparator: delayq does not read it"),
                ));
            }
            let custom = custom_of(&levels, jdk::TREE_MAP)?;
            return Ok(Node::Map {
                class: class.name.clone(),
                entries: entries(custom, custom.int_at(0), name)?,
            });
        }
        jdk::HASH_SET | jdk::LINKED_HASH_SET => {
            // HashSet's data: capacity, load factor, size, then the elements.
            let custom = custom_of(&levels, jdk::HASH_SET)?;
            return Ok(Node::Collection {
                class: class.name.clone(),
                items: items(custom.int_at(8), &custom.objects, name)?,
            });
        }
        jdk::TREE_SET => {
            // The comparator, the size, then the elements.
            let custom = custom_of(&levels, jdk::TREE_SET)?;
            let (&comparator, elements) = custom
                .objects
                .split_first()
                .ok_or_else(|| malformed(format!("{name} without its comparator")))?;
            if !matches!(arena.value(comparator), Some(KryoValue::Null)) {
                return Err((
                    Kind::Unsupported,
                    format!("{name} with a comparator: delayq does not read it"),
                ));
            }
            return Ok(Node::Collection {
                class: class.name.clone(),
                items: items(custom.int_at(0), elements, name)?,
            });
        }
        jdk::DATE => {
            let custom = custom_of(&levels, jdk::DATE)?;
            match (<[u8; 8]>::try_from(custom.bytes.as_slice()), custom.objects.is_empty()) {
                (Ok(ms), true) => KryoValue::Date(i64::from_be_bytes(ms)),
                _ => return Err(malformed(format!("{name} whose data is not one long"))),
            }
        }
        jdk::UUID => {
            let most = long_field(arena, &levels, "mostSigBits", name)?;
            let least = long_field(arena, &levels, "leastSigBits", name)?;
            KryoValue::Uuid(u128::from(most as u64) << 64 | u128::from(least as u64))
        }
        jdk::BIG_INTEGER => KryoValue::BigInteger(big_integer(arena, &levels)?),
        jdk::BIG_DECIMAL => {
            let int_val = field(&levels, "intVal").ok_or_else(|| malformed("BigDecimal without intVal"))?;
            let Some(KryoValue::BigInteger(unscaled)) = arena.value(int_val) else {
                return Err(malformed("a BigDecimal whose intVal is not a BigInteger"));
            };
            let scale = match field(&levels, "scale").and_then(|v| arena.value(v)) {
                Some(KryoValue::Int(scale)) => *scale,
                _ => return Err(malformed("a BigDecimal whose scale is not an int")),
            };
            KryoValue::BigDecimal {
                unscaled: unscaled.clone(),
                scale,
            }
        }
        _ => return pojo(class, levels),
    };
    Ok(Node::Value(value))
}

/// A POJO: the fields of every class of its hierarchy, superclass first.
fn pojo(class: &Serial, levels: Vec<Level>) -> Result<Node, Fault> {
    let mut fields = Vec::new();
    for level in levels {
        if level.custom.as_ref().is_some_and(|c| !c.is_empty()) {
            return Err((
                Kind::Unsupported,
                format!(
                    "{}: custom writeObject data of {} (delayq reads it for the JDK's collections, maps, Date, \
                     BigDecimal and BigInteger only)",
                    class.name, level.class.name
                ),
            ));
        }
        fields.extend(level.class.fields.iter().cloned().zip(level.values));
    }
    Ok(Node::Object {
        class: class.name.clone(),
        fields,
    })
}

fn level_of<'a>(levels: &'a [Level], class: &str) -> Result<&'a Level, Fault> {
    levels
        .iter()
        .find(|l| &*l.class.name == class)
        .ok_or_else(|| malformed(format!("no {class} data in its instance")))
}

fn custom_of<'a>(levels: &'a [Level], class: &str) -> Result<&'a Custom, Fault> {
    level_of(levels, class)?
        .custom
        .as_ref()
        .ok_or_else(|| malformed(format!("{class} written without its writeObject data")))
}

/// A field by name, in any class of the hierarchy.
fn field(levels: &[Level], name: &str) -> Option<NodeId> {
    levels.iter().find_map(|l| {
        l.class
            .fields
            .iter()
            .position(|f| &*f.name == name)
            .and_then(|i| l.values.get(i).copied())
    })
}

fn long_field(arena: &Arena, levels: &[Level], name: &str, class: &str) -> Result<i64, Fault> {
    match field(levels, name).and_then(|v| arena.value(v)) {
        Some(KryoValue::Long(v)) => Ok(*v),
        _ => Err(malformed(format!("{class} without a long {name}"))),
    }
}

fn count(size: Option<i32>, found: usize, class: &str) -> Result<(), Fault> {
    match size {
        Some(size) if usize::try_from(size) == Ok(found) => Ok(()),
        Some(size) => Err(malformed(format!(
            "{class} of size {size} with {found} elements written"
        ))),
        None => Err(malformed(format!("{class} without its size"))),
    }
}

fn entries(custom: &Custom, size: Option<i32>, class: &str) -> Result<Vec<(NodeId, NodeId)>, Fault> {
    if !custom.objects.len().is_multiple_of(2) {
        return Err(malformed(format!("{class} with a key without its value")));
    }
    count(size, custom.objects.len() / 2, class)?;
    Ok(custom.objects.chunks_exact(2).map(|kv| (kv[0], kv[1])).collect())
}

fn items(size: Option<i32>, elements: &[NodeId], class: &str) -> Result<Vec<NodeId>, Fault> {
    count(size, elements.len(), class)?;
    Ok(elements.to_vec())
}

/// Java's `BigInteger` serial form (sign and magnitude) as two's complement.
fn big_integer(arena: &Arena, levels: &[Level]) -> Result<Vec<u8>, Fault> {
    let signum = match field(levels, "signum").and_then(|v| arena.value(v)) {
        Some(KryoValue::Int(s @ -1..=1)) => *s,
        _ => return Err(malformed("a BigInteger whose signum is not -1, 0 or 1")),
    };
    let magnitude = match field(levels, "magnitude").and_then(|v| arena.value(v)) {
        Some(KryoValue::Bytes(m)) => m,
        _ => return Err(malformed("a BigInteger whose magnitude is not a byte[]")),
    };
    let digits = &magnitude[magnitude.iter().position(|&b| b != 0).unwrap_or(magnitude.len())..];
    if digits.is_empty() != (signum == 0) {
        return Err(malformed("a BigInteger whose signum and magnitude disagree"));
    }
    let sign = match signum {
        -1 => Sign::Minus,
        0 => Sign::NoSign,
        _ => Sign::Plus,
    };
    Ok(decimal::shortest(
        BigInt::from_bytes_be(sign, digits).to_signed_bytes_be(),
    ))
}

/// The bounds of `java.time.Instant`, in seconds.
const INSTANT_SECONDS: std::ops::RangeInclusive<i64> = -31_557_014_167_219_200..=31_556_889_864_403_199;

/// `java.time.Ser`'s data: a type byte, then the value (an `Instant` only).
pub(super) fn time_ser(custom: &Custom) -> Result<KryoValue, Fault> {
    let Some((&kind, rest)) = custom.bytes.split_first() else {
        return Err(malformed("java.time.Ser without data"));
    };
    if kind != jdk::TIME_SER_INSTANT {
        let what = match kind {
            1 => "Duration",
            3 => "LocalDate",
            4 => "LocalTime",
            5 => "LocalDateTime",
            6 => "ZonedDateTime",
            7 => "ZoneRegion",
            8 => "ZoneOffset",
            9 => "OffsetTime",
            10 => "OffsetDateTime",
            11 => "Year",
            12 => "YearMonth",
            13 => "MonthDay",
            14 => "Period",
            _ => return Err(malformed(format!("java.time.Ser of unknown type {kind}"))),
        };
        return Err((
            Kind::Unsupported,
            format!("java.time.{what}: delayq reads java.time.Instant only"),
        ));
    }
    if rest.len() != 12 || !custom.objects.is_empty() {
        return Err(malformed("a java.time.Instant whose data is not a long and an int"));
    }
    let seconds = i64::from_be_bytes(rest[..8].try_into().unwrap_or_default());
    let nanos = i32::from_be_bytes(rest[8..].try_into().unwrap_or_default());
    // As Instant.ofEpochSecond: nanoseconds outside the second carry over.
    let seconds = seconds.checked_add(i64::from(nanos).div_euclid(1_000_000_000));
    let nanos = i64::from(nanos).rem_euclid(1_000_000_000) as u32;
    match seconds {
        Some(seconds) if INSTANT_SECONDS.contains(&seconds) => Ok(KryoValue::Instant { seconds, nanos }),
        _ => Err(malformed("a java.time.Instant out of Instant's range")),
    }
}
