//! Redisson's `MarshallingCodec`: JBoss Marshalling 2.0.11, River protocol
//! — Redisson's default codec from 3.13.0 to 3.18.x (deprecated later,
//! gone in 4.x), so every queue those versions wrote without naming a codec
//! holds River bytes. Read and written byte for byte as Java does.
//!
//! Redisson configures River with its defaults (protocol version 4, no
//! class or object table, a `SimpleClassResolver` that does not enforce
//! `serialVersionUID`s), and each value is one stream:
//!
//! - the version byte `0x04`, then one object;
//! - strings, boxed numbers and `byte[]` by one-byte ids (`0x3e` + length +
//!   modified UTF-8, `0x4c` + 8 bytes for a `Long`...); `ArrayList`,
//!   `LinkedList` and a few other collections by a size form and their
//!   collection id;
//! - other objects as `0x04`, a class descriptor (name, `serialVersionUID`,
//!   fields with names and primitive-or-`Object` types, superclass), then
//!   the fields' values, superclass first, and for classes with a
//!   `writeObject` method (`HashMap`, `HashSet`, `Date`, `BigDecimal`...)
//!   their custom data in blocks;
//! - strings, collections and objects are numbered as they appear, and
//!   written again as a back-reference to their number (class descriptors
//!   likewise): the JVM's interned field and class names are written once
//!   per payload, enum constants once per payload.
//!
//! Values are [`KryoValue`]s, the model every Java codec of this crate
//! shares, so that a value read here writes with Kryo and the reverse: JDK
//! types read as the same variants Kryo's decoding gives, POJOs as
//! [`KryoValue::Object`] with their fields named and declared from the
//! stream (River declares every non-primitive field `Object`: give a
//! [`KryoSchema`] to [`decode_with_schema`] to get the declared types Kryo
//! needs, and enum ordinals). Writing a POJO needs its `serialVersionUID`
//! (`"serialVersionUID"` in the schema).
//!
//! The JDK types POJOs carry read as Java serialization's do (the same
//! values: `java.time`, arrays, `List.of`, the `Collections` views,
//! `EnumSet`/`EnumMap`, atomics, `Locale`... see `crate::jdk`'s list in the
//! README). Not supported, refused with a [`MarshallingError`] of kind
//! [`Unsupported`](MarshallingErrorKind::Unsupported) that names it:
//! `Class` objects, proxies, externalizers, other `Externalizable`
//! classes, sorted collections with a comparator, `Collections.nCopies`,
//! JDK classes it does not know, and custom `writeObject` data of
//! application classes.
//!
//! Hostile bytes: every length is checked against the bytes left before
//! anything is allocated, nesting is capped at
//! [`MAX_DEPTH`](crate::kryo::MAX_DEPTH), a back-reference to an instance
//! still being read (a cycle) is refused, and the value may take at most
//! [`max_value_bytes`](crate::bounds::max_value_bytes) (256 bytes per
//! payload byte, plus 1 MiB), back-references expanded: a payload past it
//! is refused with [`MarshallingErrorKind::TooLarge`] before the value is
//! built ([`bounds`](crate::bounds)).
//!
//! ```
//! use delayq_codec::marshalling::{self, MarshallingErrorKind};
//!
//! // A list of "x" then 30 lists each holding the one inside it twice,
//! // the second time by back-reference: 2^30 strings from 190 bytes.
//! let mut raw = vec![0x04];
//! raw.extend([0x53, 0x02, 0x5a].repeat(30));
//! raw.extend([0x53, 0x01, 0x5a, 0x3e, 0x01, b'x']);
//! raw.extend((1..=30u8).flat_map(|k| [0x39, 0xff - k]));
//! let error = marshalling::decode(&raw).unwrap_err();
//! assert_eq!(error.kind(), MarshallingErrorKind::TooLarge);
//! ```

mod arena;
mod class;
mod detect;
mod error;
mod ids;
mod input;
mod jdk;
mod read;
mod schema;
mod typed;
mod write;

pub use self::error::{MarshallingError, MarshallingErrorKind};
pub use self::typed::MarshallingCodec;
use crate::kryo::{KryoSchema, KryoValue};

/// Decodes what Redisson's `MarshallingCodec` wrote, without a schema.
///
/// ```
/// use delayq_codec::kryo::KryoValue;
/// // Java: codec.getValueEncoder().encode("order-42")
/// let raw = b"\x04\x3e\x08order-42";
/// assert_eq!(delayq_codec::marshalling::decode(raw).unwrap(), KryoValue::String("order-42".into()));
/// ```
pub fn decode(raw: &[u8]) -> Result<KryoValue, MarshallingError> {
    read::decode(raw)
}

/// Decodes as [`decode`], then takes from `schema` the declared types of
/// POJO fields (River declares them all `Object`) and enum ordinals (River
/// writes names): what Kryo needs to write the value.
///
/// ```
/// use delayq_codec::kryo::{KryoSchema, KryoValue};
/// use delayq_codec::marshalling;
///
/// let schema = KryoSchema::new().with_enum("compat.Event$Status", &["NEW", "PAID", "CANCELLED"]);
/// let mut raw = vec![0x04, 0x04, 0x0c, 0, 0, 0, 19];
/// raw.extend_from_slice(b"compat.Event$Status");
/// raw.extend_from_slice(&[0, 0, 0, 4]);
/// raw.extend_from_slice(b"PAID");
/// let status = marshalling::decode_with_schema(&raw, &schema).unwrap();
/// assert_eq!(status, KryoValue::Enum {
///     class: "compat.Event$Status".into(), ordinal: Some(1), name: Some("PAID".into()),
/// });
/// assert_eq!(status.encode().unwrap(), [0x01, 0x00, 0x63, 0x6f, 0x6d, 0x70, 0x61, 0x74, 0x2e, 0x45, 0x76, 0x65,
///     0x6e, 0x74, 0x24, 0x53, 0x74, 0x61, 0x74, 0x75, 0xf3, 0x02]); // Kryo
/// ```
pub fn decode_with_schema(raw: &[u8], schema: &KryoSchema) -> Result<KryoValue, MarshallingError> {
    let mut value = read::decode(raw)?;
    schema::apply(&mut value, schema);
    Ok(value)
}

/// Encodes a value as Redisson's `MarshallingCodec` would. POJOs need
/// their `serialVersionUID` from `schema`; enum constants without a name
/// take it from the schema's constants.
///
/// `HashMap`s and `HashSet`s are written with the table size a
/// `new HashMap()` has after its puts (what Jackson and most code build);
/// Java writes the size its own map had, which only Java's `HashMap`
/// internals use (they recompute it on reading), so bytes may differ from a
/// map Java built otherwise (a copy constructor sizes to fit) and Java
/// reads both the same.
///
/// ```
/// use delayq_codec::kryo::{JavaType, KryoField, KryoSchema, KryoValue};
/// use delayq_codec::marshalling::{self, MarshallingErrorKind};
///
/// assert_eq!(marshalling::encode(&KryoValue::Long(42), None).unwrap(), [0x04, 0x4c, 0, 0, 0, 0, 0, 0, 0, 42]);
///
/// let order = KryoValue::Object {
///     class: "compat.Order".into(),
///     fields: vec![KryoField::new("amount", JavaType::parse("long").unwrap(), KryoValue::Long(5))],
/// };
/// let error = marshalling::encode(&order, None).unwrap_err();
/// assert_eq!(error.kind(), MarshallingErrorKind::Encode);
/// assert!(error.message().contains("compat.Order has no serialVersionUID"));
///
/// let schema = KryoSchema::from_json(r#"{"classes": {"compat.Order":
///     {"serialVersionUID": 1, "fields": {"amount": "long"}}}}"#).unwrap();
/// let raw = marshalling::encode(&order, Some(&schema)).unwrap();
/// assert_eq!(marshalling::decode(&raw).unwrap().field("amount"), Some(&KryoValue::Long(5)));
/// ```
pub fn encode(value: &KryoValue, schema: Option<&KryoSchema>) -> Result<Vec<u8>, MarshallingError> {
    write::encode(value, &write::Names { schema, uids: None })
}

/// Whether `raw` looks like a `MarshallingCodec` payload: River's version
/// byte `0x04`, then a first object whose form is plausible and whose
/// size agrees with the payload's where the form fixes it. Cheap (no
/// decoding); a payload it accepts may still fail to decode.
///
/// A 5-byte payload can be both a Kryo `Float` (`0x04` then 4 bytes) and a
/// River string of 2 to 3 bytes: this says `true` for such a string.
///
/// ```
/// use delayq_codec::marshalling::looks_like;
/// assert!(looks_like(b"\x04\x3e\x08order-42"));
/// assert!(!looks_like(b"\x03order-4\xb2")); // Kryo's "order-42"
/// assert!(!looks_like(b"{\"id\":1}"));
/// ```
pub fn looks_like(raw: &[u8]) -> bool {
    detect::looks_like(raw)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod hostile;

#[cfg(test)]
mod proptests;
