//! Redisson's default codec, `Kryo5Codec`: Kryo 5 binary, read and written
//! byte for byte as Java writes it, so a Rust service joins a Kryo queue
//! without any Java service changing.
//!
//! What Redisson's `new Kryo5Codec()` (the codec of every `Config` that never
//! sets one) writes for a value is Kryo's `writeClassAndObject` with
//! references off and registration not required:
//!
//! - the class: `0x00` for null, `0x01` + a name id + the class name the
//!   first time a payload mentions a class (later only the id), or a
//!   registration id for `Integer` `0x02`, `String` `0x03`, `Float` `0x04`,
//!   `Boolean` `0x05`, `Byte` `0x06`, `Character` `0x07`, `Short` `0x08`,
//!   `Long` `0x09`, `Double` `0x0a`;
//! - the value: zig-zag varints (`Integer`, `Long`), little-endian fixed
//!   width (`Short`, `Character`, `Float`, `Double`, `UUID`), strings as
//!   ASCII with the last byte's top bit set (2 to 32 ASCII characters) or
//!   a UTF-16 length and Java's UTF-8 (a character outside the BMP is two
//!   3-byte surrogates), POJOs as their fields sorted by name without
//!   names, collections and maps as a size then elements.
//!
//! Which bytes a field gets depends on its *declared* Java type: a
//! primitive `long` is a bare varint, a boxed `Long` has a null marker
//! first, a field of a `final` class (`String`, `UUID`, an enum) is written
//! without its class, anything else (`Object`, `List`, `BigDecimal`, most
//! POJOs) with it; a `List<String>` field's elements are written without
//! classes. Two ways to say what Java declared:
//!
//! - [`KryoCodec<T>`]: the Rust type stands for the Java class (rules on
//!   [`KryoCodec`]);
//! - [`KryoValue`] + [`KryoSchema`]: no Rust types; POJOs and enums are
//!   described in a JSON schema file (format on [`KryoSchema`], and in
//!   `compat/README.md`).
//!
//! The JDK types POJOs carry have Kryo serializers of their own, read and
//! written here: `java.time` and `java.sql` dates, arrays, `List.of` and
//! the `Collections` singletons and empties, natural-order sorted
//! collections, `EnumSet`, `Optional`, atomics, `BitSet`, `Currency`,
//! `Locale`, `URI`, `URL`, `StringBuilder`, JDK enums. What Redisson hands
//! to Kryo's `JavaSerializer` (the `Collections` views, `EnumMap`,
//! throwables) is Java serialization inside the payload: read, not written.
//!
//! Not supported, refused with a [`KryoError`] that says so: references
//! (`Kryo5Codec(..., useReferences = true)`), registered classes
//! (`Kryo5Codec(allowedClasses, ...)` with classes), sorted collections
//! with a `Comparator`, other JDK classes with serializers of their own,
//! and Java records.

pub(crate) mod class;
#[cfg(feature = "class-files")]
mod class_files;
mod de;
pub(crate) mod decimal;
mod error;
pub(crate) mod java_type;
mod jdk;
mod json;
pub(crate) use self::json::instant_text;
mod read;
pub(crate) mod schema;
pub(crate) mod ser;
mod ser_direct;
mod time;
mod tree;
mod types;
mod value;
pub(crate) mod value_serde;
mod write;

use std::marker::PhantomData;

use bytes::Bytes;
use serde::{de::DeserializeOwned, Serialize};

pub use self::decimal::MAX_DECIMAL_BITS;
pub use self::error::{KryoError, KryoErrorKind};
pub use self::java_type::JavaType;
pub use self::schema::KryoSchema;
pub use self::time::{JavaTime, LocalDate, LocalDateTime, LocalTime, ZoneId, ZoneOffset};
pub use self::types::{JavaBigDecimal, JavaBytes, JavaDate, JavaInstant, JavaUuid};
pub use self::value::{KryoField, KryoValue};
use super::Codec;
use crate::BoxError;

/// How deeply values may nest (collections in POJOs in maps...) before
/// decoding gives up with [`KryoErrorKind::TooDeep`] instead of exhausting
/// the stack.
pub const MAX_DEPTH: usize = 100;

/// How many elements the all-null collections of one payload may hold in
/// all (Kryo writes such a collection as its size alone, so its elements
/// take no bytes); past it, or past what the value may take
/// ([`max_value_bytes`](crate::bounds::max_value_bytes), 64 bytes a null),
/// decoding fails with [`KryoErrorKind::TooLarge`].
pub const MAX_ALL_NULL: u32 = 1 << 20;

/// Whether `name` looks like a Java class name in a package (`a.b.C`,
/// `a.B$C`): a Rust type's bare name (`Order`) is not taken for one.
pub(crate) fn is_java_class(name: &str) -> bool {
    name.contains('.') && is_class_name(name)
}

/// Whether `name` is a Java class name, the default package's included
/// (`Shade`): a value's class says it is one.
pub(crate) fn is_class_name(name: &str) -> bool {
    let mut parts = 0;
    for part in name.split('.') {
        let mut chars = part.chars();
        match chars.next() {
            Some(c) if c.is_alphabetic() || c == '_' || c == '$' => {}
            _ => return false,
        }
        if !chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            return false;
        }
        parts += 1;
    }
    parts >= 1
}

/// Redisson's default codec (`Kryo5Codec`), for serde types.
///
/// A Rust type stands for a Java class, declared the way
/// [`JacksonCodec`](crate::JacksonCodec) declares it:
///
/// - a struct's Java class is its serde name:
///   `#[serde(rename = "com.shop.Order")]`. Its fields are the Java fields
///   (all of them, superclasses' included, named as in Java: usually
///   `#[serde(rename_all = "camelCase")]`); their order does not matter.
///   A nested struct *without* a Java name stands for a `final` class
///   (written without its class name); the payload itself needs one;
/// - `i64`, `i32`, `i16`, `i8`, `f64`, `f32`, `bool`, `char` are the
///   primitives `long`, `int`, `short`, `byte`, `double`, `float`,
///   `boolean`, `char`; `Option<i64>` etc. are the boxed `Long`,
///   `Integer`...; at the root or in a collection they are always boxed;
/// - `String` and `Option<String>` are `String`;
/// - `Vec<T>` (and other sequences) is a `List<T>` holding an `ArrayList`;
///   maps are `Map<K, V>` holding a `HashMap`. A newtype named after a
///   collection or map class changes the class:
///   `#[serde(rename = "java.util.HashSet")] struct Tags(Vec<String>)`;
/// - a unit-only enum named after its Java enum is that enum; declare the
///   variants in the Java order (Kryo writes the ordinal);
/// - [`JavaUuid`], [`JavaDate`], [`JavaInstant`], [`JavaBigDecimal`],
///   [`JavaBytes`] are `UUID`, `Date`, `Instant`, `BigDecimal`, `byte[]`;
/// - a [`KryoValue`] field is an `Object` field: any value, class written.
///
/// ```
/// use delayq_codec::{Codec, KryoCodec};
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// #[serde(rename = "compat.Order")]
/// struct Order { id: Option<String>, amount: i64, tags: Vec<String> }
///
/// // What Java's Kryo5Codec wrote for new Order("o-1", 1234, List.of("a", "b")) in an ArrayList.
/// let mut java = vec![0x01, 0x00];
/// java.extend_from_slice(b"compat.Orde");
/// java.extend_from_slice(&[b'r' | 0x80, 0xa4, 0x13, b'o', b'-', b'1' | 0x80, 0x01, 0x01]);
/// java.extend_from_slice(b"java.util.ArrayLis");
/// java.extend_from_slice(&[b't' | 0x80, 0x03, 0x82, b'a', 0x82, b'b']);
///
/// let codec = KryoCodec::<Order>::new();
/// let order = codec.decode(&java).unwrap();
/// assert_eq!(order, Order { id: Some("o-1".into()), amount: 1234, tags: vec!["a".into(), "b".into()] });
/// assert_eq!(codec.encode(&order).unwrap().as_ref(), java);
/// ```
///
/// Where a Rust type cannot say what Java declared (a field declared
/// `List<Object>` holding strings, a `List<String>` whose elements are all
/// `null`...), use a [`KryoValue`] field, or [`KryoValue`] with a
/// [`KryoSchema`] for the whole payload.
pub struct KryoCodec<T>(PhantomData<fn() -> T>);

impl<T> KryoCodec<T> {
    /// A Kryo codec for `T`.
    pub fn new() -> Self {
        KryoCodec(PhantomData)
    }
}

impl<T> Default for KryoCodec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for KryoCodec<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for KryoCodec<T> {}

impl<T> std::fmt::Debug for KryoCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KryoCodec<{}>", std::any::type_name::<T>())
    }
}

impl<T> Codec<T> for KryoCodec<T>
where
    T: Serialize + DeserializeOwned + 'static,
{
    fn name(&self) -> &'static str {
        "kryo"
    }

    fn encode(&self, value: &T) -> Result<Bytes, BoxError> {
        Ok(Bytes::from(to_vec(value)?))
    }

    fn decode(&self, raw: &[u8]) -> Result<T, BoxError> {
        Ok(from_slice(raw)?)
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        diagnose(raw)
    }
}

/// Encodes a value as Redisson's `Kryo5Codec()` would (rules on [`KryoCodec`]).
///
/// ```
/// assert_eq!(delayq_codec::kryo::to_vec(&42i64).unwrap(), [0x09, 0x54]);
/// assert_eq!(delayq_codec::kryo::to_vec("hi").unwrap(), [0x03, b'h', b'i' | 0x80]);
/// ```
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, KryoError> {
    // The one-pass writer covers the usual shapes; the tree path defines
    // the bytes and takes every value the writer leaves (and every error).
    ser_direct::to_vec(value).or_else(|_| tree_to_vec(value))
}

/// [`to_vec`] through a [`KryoValue`] tree.
pub(crate) fn tree_to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, KryoError> {
    tree::encode_serde(&ser::to_value(value)?)
}

/// Decodes a `Kryo5Codec()` payload into a Rust type (rules on [`KryoCodec`]).
///
/// ```
/// let n: i64 = delayq_codec::kryo::from_slice(&[0x09, 0x54]).unwrap();
/// assert_eq!(n, 42);
/// ```
pub fn from_slice<T: DeserializeOwned>(raw: &[u8]) -> Result<T, KryoError> {
    de::from_slice(raw)
}

/// The class a `Kryo5Codec()` payload names first (the value's class),
/// read without reading the value: what a tool can show of a POJO whose
/// fields need a schema (Kryo writes field values only, without names or
/// types). `None` for null, or bytes that do not start with a class.
///
/// ```
/// let mut raw = vec![0x01, 0x00];
/// raw.extend_from_slice(b"com.shop.Orde");
/// raw.push(b'r' | 0x80);
/// raw.extend_from_slice(&[0xa4, 0x13]);
/// assert_eq!(delayq_codec::kryo::class_of(&raw).as_deref(), Some("com.shop.Order"));
/// assert_eq!(delayq_codec::kryo::class_of(&[0x09, 0x54]).as_deref(), Some("java.lang.Long"));
/// assert_eq!(delayq_codec::kryo::class_of(&[0x00]), None);
/// ```
pub fn class_of(raw: &[u8]) -> Option<String> {
    let mut reader = read::Reader::new(raw);
    tree::read_class(&mut reader)
        .ok()
        .flatten()
        .map(|name| name.to_string())
}

/// What other codecs' errors say about what this codec cannot read.
pub(crate) fn diagnose(raw: &[u8]) -> Option<&'static str> {
    if raw.first().is_some_and(|&id| (11..0x80).contains(&id)) {
        Some(REGISTERED_HINT)
    } else {
        None
    }
}

const REGISTERED_HINT: &str = "a class id Redisson's default Kryo5Codec() never writes: the Java side \
    registers classes (Kryo5Codec(allowedClasses, useReferences)), which delayq does not read";
#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod direct_proptests;
