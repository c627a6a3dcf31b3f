//! Codecs: how a value becomes the payload bytes Java's Redisson codec reads.
//!
//! | Rust codec | value type | Java side |
//! | --- | --- | --- |
//! | [`StringCodec`] | `String` | `StringCodec` (UTF-8) |
//! | [`LongCodec`] | `i64` | `LongCodec` (ASCII decimal) |
//! | [`BytesCodec`] | `Bytes` / `Vec<u8>` | `ByteArrayCodec` (raw bytes) |
//! | [`JsonCodec<T>`] | any `serde` type | `TypedJsonJacksonCodec(T.class)` (plain JSON) |
//!
//! Redisson's default codec (Kryo5) writes a Java-only binary format; configure
//! one of the codecs above on the Java side to share a queue.

mod bytes;
mod json;
mod long;
mod string;

pub use self::bytes::BytesCodec;
pub use self::json::JsonCodec;
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

/// Recognises Java-only binary payloads that a text codec fails on.
pub(crate) fn diagnose_java_binary(raw: &[u8]) -> Option<&'static str> {
    if raw.starts_with(&[0xac, 0xed, 0x00, 0x05]) {
        return Some(
            "Java serialization (SerializationCodec/MarshallingCodec): configure StringCodec, LongCodec, \
             ByteArrayCodec or a Jackson JSON codec on the Java side",
        );
    }
    None
}
