//! Redisson's value formats in Rust: the bytes a Java service's Redisson
//! codec writes into Redis, read and written without Redis and without an
//! async runtime.
//!
//! Any program that reads or writes values a Redisson client shares — an
//! `RBucket`, an `RMap`, an `RQueue`, or the payloads of an `RDelayedQueue`
//! (what the [`delayq`](https://docs.rs/delayq) crate builds on) — can use it.
//!
//! | Rust codec | value type | Java side |
//! | --- | --- | --- |
//! | [`StringCodec`] | `String` | `StringCodec` (UTF-8) |
//! | [`LongCodec`] | `i64` | `LongCodec` (ASCII decimal) |
//! | [`BytesCodec`] | `Bytes` / `Vec<u8>` | `ByteArrayCodec` (raw bytes) |
//! | [`JsonCodec<T>`] | any `serde` type | `TypedJsonJacksonCodec(T.class)` (plain JSON) |
//! | [`JacksonCodec<T>`] | `serde` types named after their Java class | `JsonJacksonCodec` (JSON with `@class`) |
//! | [`KryoCodec<T>`] | `serde` types named after their Java class | `Kryo5Codec` (Redisson's default) |
//! | [`Lz4Codec<T, C>`], [`Lz4V2Codec`], [`SnappyCodec`], [`ZstdCodec`] | `C`'s (Kryo by default) | `LZ4Codec`, `LZ4CodecV2`, `SnappyCodecV2`, `ZStdCodec` around `C`'s Java codec ([`compress`]) |
//! | [`MarshallingCodec<T>`] | `serde` types named after their Java class | `MarshallingCodec` (JBoss Marshalling River; the default of 3.13.0-3.18.x) |
//! | [`SerializationCodec<T>`] | `serde` types named after their Java class | `SerializationCodec` (Java's `ObjectOutputStream`) |
//!
//! Untyped Kryo payloads (without Rust types) are [`kryo::KryoValue`]s, with
//! a [`kryo::KryoSchema`] for POJOs.
//!
//! ```
//! use delayq_codec::{Codec, KryoCodec};
//!
//! // What Java's `bucket.set("hello")` writes with Redisson's default codec.
//! let java_bytes = [0x03, b'h', b'e', b'l', b'l', b'o' | 0x80];
//! let codec = KryoCodec::<String>::new();
//! assert_eq!(codec.decode(&java_bytes).unwrap(), "hello");
//! assert_eq!(codec.encode(&"hello".to_string()).unwrap(), &java_bytes[..]);
//! ```
//!
//! Every decoder costs time in proportion to its input, or is capped (see
//! [`kryo::MAX_DECIMAL_BITS`] and [`kryo::MAX_ALL_NULL`]), and memory in
//! proportion to it ([`bounds`]: a decoded value takes at most 256 bytes per
//! payload byte, plus 1 MiB, checked before it is built): a small hostile
//! payload cannot stall or exhaust the program that reads it.

#![warn(missing_docs, unreachable_pub, missing_debug_implementations)]

pub mod bounds;
mod bytes;
pub mod compress;
pub mod detect;
mod interned;
pub mod jackson;
mod java_hash;
mod jdk;
mod json;
pub mod kryo;
mod long;
pub mod marshalling;
pub mod natural;
pub mod serialization;
mod string;
#[cfg(test)]
pub(crate) mod test_support;

pub use self::bytes::BytesCodec;
pub use self::compress::{Lz4Codec, Lz4V2Codec, SnappyCodec, ZstdCodec};
pub use self::jackson::JacksonCodec;
pub use self::json::JsonCodec;
pub use self::kryo::KryoCodec;
pub use self::long::LongCodec;
pub use self::marshalling::MarshallingCodec;
pub use self::serialization::SerializationCodec;
pub use self::string::StringCodec;

/// The README's examples, compiled with the doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

use ::bytes::Bytes;

/// The error a codec returns: any error, boxed (a codec's own error type
/// stays reachable through `downcast_ref`).
///
/// ```
/// let error: delayq_codec::BoxError = "not a number".into();
/// assert_eq!(error.to_string(), "not a number");
/// ```
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Turns values of type `T` into payload bytes and back.
///
/// Implement it to share a queue with a Java codec this crate does not ship.
/// Codecs are cheap to share: a queue holds its codec in an `Arc`.
///
/// ```
/// use bytes::Bytes;
/// use delayq_codec::{BoxError, Codec};
///
/// /// Upper-cases on the way in, as some legacy Java producer did.
/// struct Shouting;
///
/// impl Codec<String> for Shouting {
///     fn name(&self) -> &'static str { "shouting" }
///     fn encode(&self, value: &String) -> Result<Bytes, BoxError> {
///         Ok(Bytes::from(value.to_uppercase()))
///     }
///     fn decode(&self, raw: &[u8]) -> Result<String, BoxError> {
///         Ok(std::str::from_utf8(raw)?.to_owned())
///     }
/// }
///
/// assert_eq!(Shouting.encode(&"hi".to_string()).unwrap(), "HI");
/// ```
pub trait Codec<T>: Send + Sync + 'static {
    /// A short name for errors and the CLI (`string`, `long`, ...).
    fn name(&self) -> &'static str;

    /// Encodes a value into payload bytes.
    fn encode(&self, value: &T) -> Result<Bytes, BoxError>;

    /// Decodes payload bytes; on failure the caller keeps the raw bytes.
    fn decode(&self, raw: &[u8]) -> Result<T, BoxError>;

    /// Recognises payloads written by a codec this one cannot read (for
    /// example Redisson's Kryo default) so the error can say how to fix it.
    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        let _ = raw;
        None
    }

    /// For a codec that reads several formats (auto-detection, as the
    /// CLI's and dashboard's `--codec auto`): the name of the codec that
    /// wrote `raw` (`lz4/kryo`, `serialization`...). `None` for a codec of
    /// one format.
    fn detected_codec(&self, raw: &[u8]) -> Option<String> {
        let _ = raw;
        None
    }

    /// [`decode`](Self::decode) and [`detected_codec`](Self::detected_codec)
    /// together: a codec that detects reads the payload once (a page of
    /// large compressed values is not decompressed twice).
    fn decode_detected(&self, raw: &[u8]) -> (Result<T, BoxError>, Option<String>) {
        (self.decode(raw), self.detected_codec(raw))
    }

    /// For tools that show payloads (the dashboard): the Java object in
    /// `raw`, as far as this codec can tell: its class, and whether its
    /// content was read. A Kryo POJO without a schema names its class
    /// though its fields cannot be read. `None` (the default) for a codec
    /// of no Java objects, or bytes that hold none.
    fn java_object(&self, raw: &[u8]) -> Option<JavaObject> {
        let _ = raw;
        None
    }
}

/// A payload's Java object as a codec sees it ([`Codec::java_object`]):
/// its class, and why its content was not read, if it was not.
///
/// ```
/// use delayq_codec::JavaObject;
/// let order = JavaObject::unread("com.shop.Order", "its fields need a Kryo schema");
/// assert_eq!(order.class, "com.shop.Order");
/// assert!(order.unread.is_some());
/// assert_eq!(JavaObject::read("java.util.ArrayList").unread, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct JavaObject {
    /// The class (`com.shop.Order`, `java.util.ArrayList`).
    pub class: String,
    /// Why the codec did not read what the object holds (a Kryo POJO's
    /// fields without a schema); `None` when it read the whole value.
    pub unread: Option<String>,
}

impl JavaObject {
    /// An object the codec read whole.
    pub fn read(class: impl Into<String>) -> Self {
        JavaObject {
            class: class.into(),
            unread: None,
        }
    }

    /// An object whose class is known but whose content was not read, and why.
    pub fn unread(class: impl Into<String>, why: impl Into<String>) -> Self {
        JavaObject {
            class: class.into(),
            unread: Some(why.into()),
        }
    }
}

const JAVA_SERIALIZATION_HINT: &str = "Java serialization, Redisson's SerializationCodec: read it with \
    SerializationCodec (on the command line: --codec serialization)";

const MARSHALLING_HINT: &str = "JBoss Marshalling, Redisson's MarshallingCodec (the default of 3.13.0 to \
    3.18.x): read it with MarshallingCodec (on the command line: --codec marshalling)";

const KRYO_HINT: &str = "Kryo, Redisson's default Kryo5Codec: read it with KryoCodec (on the command line: \
    use --codec kryo), no Java change needed";

/// Recognises payloads written by Java-only codecs, so that a decoding error
/// can say which codec wrote them and what to read them with (the text
/// codecs' [`Codec::diagnose`] answer with it; `--codec auto` in the CLI
/// needs no hint).
///
/// Kryo (Redisson's default `Kryo5Codec`: `writeClassAndObject`, references
/// off, registration not required) starts with the class: `0x01` then a name
/// id and the class name in Kryo's ASCII form (last character `| 0x80`) for
/// classes not registered, or `registration id + 2` for Kryo's built-in ones
/// (`0x03` String, `0x09` Long, `0x02` Integer, ...). Java serialization
/// starts with `AC ED 00 05`; JBoss Marshalling with River's version byte
/// ([`marshalling::looks_like`]). A compressed payload names its wrapper.
pub fn diagnose_java_binary(raw: &[u8]) -> Option<&'static str> {
    if raw.starts_with(&serialization::MAGIC) {
        Some(JAVA_SERIALIZATION_HINT)
    } else if looks_like_kryo(raw) {
        Some(KRYO_HINT)
    } else if marshalling::looks_like(raw) {
        Some(MARSHALLING_HINT)
    } else {
        compress::Compression::ALL
            .into_iter()
            .find(|wrap| wrap.looks_like(raw))
            .map(|wrap| match wrap {
                compress::Compression::Lz4 | compress::Compression::Lz4V2 => {
                    "compressed by Redisson's LZ4Codec or LZ4CodecV2: read it with Lz4Codec (--codec lz4, or lz4/INNER)"
                }
                compress::Compression::Snappy => {
                    "compressed by Redisson's SnappyCodecV2: read it with SnappyCodec (--codec snappy, or snappy/INNER)"
                }
                _ => "compressed by Redisson's ZStdCodec: read it with ZstdCodec (--codec zstd, or zstd/INNER)",
            })
    }
}

/// Kryo's ASCII string: 2 to 32 ASCII bytes, the last with its top bit set.
fn kryo_ascii(bytes: &[u8], valid: impl Fn(u8) -> bool) -> bool {
    match bytes.split_last() {
        Some((&last, init)) if last >= 0x80 => valid(last & 0x7f) && init.iter().all(|&b| b < 0x80 && valid(b)),
        _ => false,
    }
}

/// Whether `bytes` is exactly one Kryo unsigned varint.
fn kryo_varint(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes.len() <= 10
        && bytes[..bytes.len() - 1].iter().all(|b| b & 0x80 != 0)
        && bytes[bytes.len() - 1] & 0x80 == 0
}

pub(crate) fn looks_like_kryo(raw: &[u8]) -> bool {
    let class_char = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'$' | b'[' | b';');
    match raw {
        // An unregistered class, written by name: 0x01, name id, class name.
        [0x01, 0x00, rest @ ..] => {
            let end = rest.iter().position(|&b| b >= 0x80).map(|i| i + 1).unwrap_or(0);
            end >= 2 && kryo_ascii(&rest[..end], class_char) && rest[..end].contains(&b'.')
        }
        // java.lang.String: empty, 1 character, 2-32 ASCII, or a flagged length then UTF-8.
        [0x03, 0x81] => true,
        [0x03, rest @ ..] if !rest.is_empty() => {
            kryo_ascii(rest, |b| (0x20..0x7f).contains(&b)) || (rest[0] & 0x80 != 0 && rest.len() >= 2)
        }
        // java.lang.Integer / java.lang.Long: one zig-zag varint.
        [0x02 | 0x09, rest @ ..] => kryo_varint(rest),
        // java.lang.Boolean.
        [0x05, 0x00 | 0x01] => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kryo_payloads_are_recognised() {
        // Byte layouts from Kryo 5's Output and DefaultClassResolver, as Kryo5Codec writes them.
        let hello = [0x03, b'h', b'e', b'l', b'l', b'o' | 0x80];
        let single_char = [0x03, 0x82, b'x'];
        let empty = [0x03, 0x81];
        let long_42 = [0x09, 0x54];
        let long_big = [0x09, 0xfe, 0xff, 0xff, 0xff, 0x0f];
        let mut pojo = vec![0x01, 0x00];
        pojo.extend_from_slice(b"compat.Orde");
        pojo.push(b'r' | 0x80);
        pojo.extend_from_slice(&[0x02, 0x87]);
        for raw in [&hello[..], &single_char, &empty, &long_42, &long_big, &pojo] {
            let hint = diagnose_java_binary(raw).unwrap_or_else(|| panic!("{raw:02x?} not recognised"));
            assert!(
                hint.contains("KryoCodec") && hint.contains("use --codec kryo"),
                "{hint}"
            );
        }
        assert!(diagnose_java_binary(&[0xac, 0xed, 0x00, 0x05, 0x74])
            .unwrap()
            .contains("--codec serialization"));
        // River's String "hi" (version 4, ID_STRING_SMALL, length 2).
        let river = marshalling::encode(&kryo::KryoValue::String("hi".into()), None).unwrap();
        assert!(diagnose_java_binary(&river).unwrap().contains("--codec marshalling"));
        let lz4 = compress::Compression::Lz4.compress(&[0x03, b'h', b'i' | 0x80]).unwrap();
        assert!(diagnose_java_binary(&lz4).unwrap().contains("--codec lz4"));
    }

    #[test]
    fn text_json_and_numbers_are_not_mistaken_for_kryo() {
        for raw in [&b"hello"[..], b"42", b"-7", br#"{"id":1}"#, b"", b"\x01"] {
            assert_eq!(diagnose_java_binary(raw), None, "{raw:?}");
        }
    }
}
