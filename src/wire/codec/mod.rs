//! Codecs: how a value becomes the payload bytes Java's Redisson codec reads.
//!
//! | Rust codec | value type | Java side |
//! | --- | --- | --- |
//! | [`StringCodec`] | `String` | `StringCodec` (UTF-8) |
//! | [`LongCodec`] | `i64` | `LongCodec` (ASCII decimal) |
//! | [`BytesCodec`] | `Bytes` / `Vec<u8>` | `ByteArrayCodec` (raw bytes) |
//! | [`JsonCodec<T>`] | any `serde` type | `TypedJsonJacksonCodec(T.class)` (plain JSON) |
//! | [`JacksonCodec<T>`] | `serde` types named after their Java class | `JsonJacksonCodec` (JSON with `@class`) |
//! | [`KryoCodec<T>`] | `serde` types named after their Java class | `Kryo5Codec` (Redisson's default) |
//!
//! Untyped Kryo payloads (any queue, without Rust types) are
//! [`kryo::KryoValue`]s, with a [`kryo::KryoSchema`] for POJOs.

mod bytes;
pub mod jackson;
mod json;
pub mod kryo;
mod long;
mod string;

pub use self::bytes::BytesCodec;
pub use self::jackson::JacksonCodec;
pub use self::json::JsonCodec;
pub use self::kryo::KryoCodec;
pub use self::long::LongCodec;
pub use self::string::StringCodec;

use ::bytes::Bytes;

use crate::error::{BoxError, DecodeError, Error};

/// Turns values of type `T` into payload bytes and back.
///
/// Implement it to share a queue with a Java codec this crate does not ship.
/// Codecs are cheap to share: a queue holds its codec in an `Arc`.
///
/// ```
/// use bytes::Bytes;
/// use delayq::{BoxError, Codec};
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
}

/// Encodes `value`, mapping a failure to [`Error::Encode`].
pub fn encode<T, C: Codec<T> + ?Sized>(codec: &C, value: &T) -> Result<Bytes, Error> {
    codec.encode(value).map_err(|source| Error::Encode {
        codec: codec.name(),
        source,
    })
}

/// Decodes `raw`, mapping a failure to a [`DecodeError`] that keeps the bytes.
pub fn decode<T, C: Codec<T> + ?Sized>(codec: &C, raw: Bytes) -> Result<T, DecodeError> {
    match codec.decode(&raw) {
        Ok(value) => Ok(value),
        Err(source) => {
            let hint = codec.diagnose(&raw);
            let error = DecodeError::new(codec.name(), raw, source);
            Err(match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            })
        }
    }
}

/// Decodes every value of a batch that was removed from Redis in one call.
///
/// On a failure the error carries every raw value of the batch, so that none
/// of them is lost with the ones that did decode.
pub(crate) fn decode_batch<T, C: Codec<T> + ?Sized>(codec: &C, raw: Vec<Bytes>) -> Result<Vec<T>, DecodeError> {
    let mut values = Vec::with_capacity(raw.len());
    for item in &raw {
        match decode(codec, item.clone()) {
            Ok(value) => values.push(value),
            Err(error) => return Err(error.with_batch(raw)),
        }
    }
    Ok(values)
}

/// Decodes every value of a read that removed nothing.
pub(crate) fn decode_all<T, C: Codec<T> + ?Sized>(codec: &C, raw: Vec<Bytes>) -> Result<Vec<T>, DecodeError> {
    raw.into_iter().map(|item| decode(codec, item)).collect()
}

const JAVA_SERIALIZATION_HINT: &str = "Java serialization (SerializationCodec/MarshallingCodec): configure \
    StringCodec, LongCodec, ByteArrayCodec, TypedJsonJacksonCodec or JsonJacksonCodec on the Java side, with the \
    matching delayq codec";

const KRYO_HINT: &str = "Kryo, Redisson's default Kryo5Codec: read it with KryoCodec (on the command line: \
    use --codec kryo), no Java change needed";

/// Recognises payloads written by Java-only codecs, so that a decoding error
/// can say which codec wrote them and what to configure instead.
///
/// Kryo (Redisson's default `Kryo5Codec`: `writeClassAndObject`, references
/// off, registration not required) starts with the class: `0x01` then a name
/// id and the class name in Kryo's ASCII form (last character `| 0x80`) for
/// classes not registered, or `registration id + 2` for Kryo's built-in ones
/// (`0x03` String, `0x09` Long, `0x02` Integer, ...). Java serialization
/// starts with `AC ED 00 05`.
pub(crate) fn diagnose_java_binary(raw: &[u8]) -> Option<&'static str> {
    if raw.starts_with(&[0xac, 0xed, 0x00, 0x05]) {
        Some(JAVA_SERIALIZATION_HINT)
    } else if looks_like_kryo(raw) {
        Some(KRYO_HINT)
    } else {
        None
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

fn looks_like_kryo(raw: &[u8]) -> bool {
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
            .contains("Java serialization"));
    }

    #[test]
    fn text_json_and_numbers_are_not_mistaken_for_kryo() {
        for raw in [&b"hello"[..], b"42", b"-7", br#"{"id":1}"#, b"", b"\x01"] {
            assert_eq!(diagnose_java_binary(raw), None, "{raw:?}");
        }
    }
}
