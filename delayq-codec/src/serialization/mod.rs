//! Redisson's `SerializationCodec`: Java's own serialization
//! (`ObjectOutputStream.writeObject`, stream protocol 2), read without any
//! Java class at hand and written byte for byte as Java writes it.
//!
//! Redisson's codec is the plain JDK stream in every version (3.x to 4.x):
//! `new ObjectOutputStream(out).writeObject(value)` to encode, an
//! `ObjectInputStream` (or, with a class loader or `allowedClasses`, a
//! subclass that only changes how classes are looked up) to decode. The
//! bytes start with [`MAGIC`].
//!
//! A stream describes itself: each class descriptor carries the class
//! name, its `serialVersionUID`, its flags and its fields' names and types,
//! so [`decode`] needs no schema. Values map to the one Java value model,
//! [`KryoValue`], as Kryo decoding gives them:
//!
//! | Java | [`KryoValue`] |
//! | --- | --- |
//! | `String`, boxed numbers, `Boolean`, `Character` | `String`, `Long`, `Int`, ..., `Char` |
//! | `byte[]` | `Bytes`; other arrays: `Collection` of class `[I`, `[Ljava.lang.String;`... |
//! | `UUID`, `Date`, `Instant`, `BigInteger`, `BigDecimal` | `Uuid`, `Date`, `Instant`, `BigInteger`, `BigDecimal` |
//! | other `java.time` values, `java.sql` dates | `Time` |
//! | `List.of`, `Set.of`, `Map.of`, `Collections` singletons and empties, other JDK collections | `Collection`, `Map` with Java's runtime class |
//! | `Collections` views, `Optional`, atomics, `Currency`, `Locale`, `URI`, `URL`, `BitSet`, `StringBuilder` | `Wrapped` |
//! | `EnumSet`, throwables | `EnumSet`, `Throwable` |
//! | `ArrayList`, `LinkedList`, `ArrayDeque`, `Vector`, `HashSet`, `LinkedHashSet`, `TreeSet` | `Collection` with that class |
//! | `HashMap`, `LinkedHashMap`, `Hashtable`, `TreeMap` | `Map` with that class |
//! | enum constant | `Enum` with its name (ordinal `None`; a schema gives it) |
//! | any other class | `Object`: its fields (superclasses' first), each declared as the stream declares it |
//!
//! Not read, with a [`SerializationErrorKind::Unsupported`] error naming
//! the class: custom `writeObject`/`writeExternal` data of other classes
//! (only their Java code knows it; skipping it would lose it), sorted
//! collections with a `Comparator`, JDK classes not listed above (never
//! read as a POJO of their private fields), `Class` objects, dynamic
//! proxies. An object graph with a
//! cycle (a list that contains itself) is a
//! [`SerializationErrorKind::Cyclic`] error: a value tree cannot hold it.
//!
//! [`encode`] writes strings, boxed numbers, `byte[]`, `UUID`, `Date`,
//! `Instant`, `BigInteger`, `BigDecimal`, enum constants, `ArrayList`,
//! `LinkedList`, `HashSet`, `LinkedHashSet`, `HashMap`, `LinkedHashMap` and
//! POJOs. A POJO's class descriptor needs its `serialVersionUID`, from a
//! [`KryoSchema`] (`"serialVersionUID": 1`); the schema also gives fields
//! their declared types, which Java writes in the descriptor. A POJO is
//! written as one class: superclasses' fields cannot be told apart in the
//! value model.
//!
//! Hostile bytes cost time and memory in proportion to their length: every
//! length is checked against the bytes left before anything is allocated,
//! nesting is capped at [`MAX_DEPTH`](crate::kryo::MAX_DEPTH), and the value,
//! objects shared through back-references copied, may take at most
//! [`max_value_bytes`](crate::bounds::max_value_bytes) (256 bytes per payload
//! byte, plus 1 MiB): past it, [`SerializationErrorKind::TooLarge`] before
//! anything is copied ([`bounds`](crate::bounds)).
//!
//! ```
//! use delayq_codec::kryo::KryoValue;
//! use delayq_codec::serialization::{decode, encode};
//!
//! // What Java's SerializationCodec writes for "order-42".
//! let raw = [0xac, 0xed, 0x00, 0x05, 0x74, 0x00, 0x08, b'o', b'r', b'd', b'e', b'r', b'-', b'4', b'2'];
//! assert_eq!(decode(&raw).unwrap(), KryoValue::String("order-42".into()));
//! assert_eq!(encode(&KryoValue::String("order-42".into()), None).unwrap(), raw);
//! ```

mod codec;
mod desc;
pub(crate) mod embedded;
mod error;
mod jdk;
mod kept;
mod read;
mod schema;
pub(crate) mod stream;
mod tree;
pub(crate) mod write;

pub use self::codec::SerializationCodec;
pub use self::error::{SerializationError, SerializationErrorKind};

use self::error::Result;
use self::read::Reader;
use self::stream::{Stream, TC_RESET};
use self::write::{Classes, Writer};
use crate::kryo::{KryoSchema, KryoValue};

/// The first bytes of every Java serialization stream: `STREAM_MAGIC`
/// (`0xACED`) then `STREAM_VERSION` (5).
///
/// ```
/// assert_eq!(delayq_codec::serialization::MAGIC, [0xac, 0xed, 0x00, 0x05]);
/// ```
pub const MAGIC: [u8; 4] = [0xac, 0xed, 0x00, 0x05];

/// Decodes what Redisson's `SerializationCodec` wrote, without a schema.
///
/// ```
/// use delayq_codec::kryo::KryoValue;
/// // java.lang.Boolean.TRUE
/// let raw = hex("aced0005737200116a6176612e6c616e672e426f6f6c65616ecd207280d59cfaee0200015a000576616c7565787001");
/// assert_eq!(delayq_codec::serialization::decode(&raw).unwrap(), KryoValue::Boolean(true));
/// # fn hex(s: &str) -> Vec<u8> { (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect() }
/// ```
pub fn decode(raw: &[u8]) -> Result<KryoValue, SerializationError> {
    let mut s = Stream::new(raw);
    let header = s.take(4, "the stream header").map_err(|e| {
        if MAGIC.starts_with(raw) {
            e
        } else {
            not_java_serialization()
        }
    })?;
    if header[..2] != MAGIC[..2] {
        return Err(not_java_serialization());
    }
    if header[2..] != MAGIC[2..] {
        return Err(SerializationError::at(
            SerializationErrorKind::Malformed,
            2,
            format!("stream version {}, not 5", u16::from_be_bytes([header[2], header[3]])),
        ));
    }
    let mut reader = Reader::new(s);
    while reader.s.peek() == Some(TC_RESET) {
        reader.s.u8("a reset")?;
        reader.reset();
    }
    let root = reader.content()?;
    if reader.s.remaining() > 0 {
        return Err(SerializationError::at(
            SerializationErrorKind::TrailingBytes,
            reader.s.pos(),
            format!("{} bytes after the object", reader.s.remaining()),
        ));
    }
    let value = reader.arena.build(root, raw.len())?;
    crate::jdk::finish(value).map_err(jdk::fault)
}

fn not_java_serialization() -> SerializationError {
    SerializationError::at(
        SerializationErrorKind::Malformed,
        0,
        "not Java serialization: no stream magic AC ED 00 05",
    )
}

/// [`decode`], then the schema's declared field types (`List<String>` where
/// the stream says `java.util.List`) and enum ordinals, which Kryo needs to
/// write the value again.
///
/// ```
/// use delayq_codec::kryo::{KryoSchema, KryoValue};
/// use delayq_codec::serialization::{decode_with_schema, encode};
///
/// let schema = KryoSchema::new().with_enum("compat.Event$Status", &["NEW", "PAID", "CANCELLED"]);
/// let paid = KryoValue::Enum { class: "compat.Event$Status".into(), ordinal: None, name: Some("PAID".into()) };
/// let raw = encode(&paid, None).unwrap();
/// let read = decode_with_schema(&raw, &schema).unwrap();
/// assert_eq!(read, KryoValue::Enum { class: "compat.Event$Status".into(), ordinal: Some(1), name: Some("PAID".into()) });
/// ```
pub fn decode_with_schema(raw: &[u8], schema: &KryoSchema) -> Result<KryoValue, SerializationError> {
    let mut value = decode(raw)?;
    schema::apply(&mut value, schema)?;
    Ok(value)
}

/// Encodes a value as `ObjectOutputStream.writeObject` does. POJOs need
/// their class's `serialVersionUID` from `schema`; enum constants known by
/// ordinal only need the schema's constant names.
///
/// ```
/// use delayq_codec::kryo::{JavaType, KryoField, KryoSchema, KryoValue};
/// use delayq_codec::serialization::{decode, encode, SerializationErrorKind};
///
/// let order = KryoValue::Object {
///     class: "compat.Order".into(),
///     fields: vec![KryoField::new("amount", JavaType::parse("long").unwrap(), KryoValue::Long(5))],
/// };
/// let error = encode(&order, None).unwrap_err();
/// assert_eq!(error.kind(), SerializationErrorKind::Encode);
/// assert!(error.message().contains("serialVersionUID"));
///
/// let schema = KryoSchema::new()
///     .with_class("compat.Order", &[("amount", "long")]).unwrap()
///     .with_serial_version_uid("compat.Order", 1).unwrap();
/// let raw = encode(&order, Some(&schema)).unwrap();
/// assert_eq!(decode(&raw).unwrap(), order);
/// ```
pub fn encode(value: &KryoValue, schema: Option<&KryoSchema>) -> Result<Vec<u8>, SerializationError> {
    encode_with(value, Classes { schema, uids: None })
}

fn encode_with(value: &KryoValue, classes: Classes<'_>) -> Result<Vec<u8>> {
    // Java builds a TreeMap or TreeSet from the order written.
    use crate::jdk::sorted::{in_natural_order, JavaReads};
    let sorted = in_natural_order(value, JavaReads::InOrderWritten).map_err(SerializationError::encode)?;
    let value = sorted.as_ref().unwrap_or(value);
    let mut writer = Writer::new(classes);
    writer.value(value)?;
    Ok(writer.finish())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod hostile;

#[cfg(test)]
mod proptests;
