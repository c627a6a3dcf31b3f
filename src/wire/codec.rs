//! Codecs: how a value becomes the payload bytes Java's Redisson codec reads.
//!
//! The codecs themselves are the [`delayq_codec`] crate (Redisson's value
//! formats, no Redis needed), re-exported here whole; this module adds how
//! a queue reports their failures: [`Error::Encode`], and a [`DecodeError`]
//! that keeps the raw bytes so that nothing is lost.
//!
//! | Rust codec | value type | Java side |
//! | --- | --- | --- |
//! | [`StringCodec`] | `String` | `StringCodec` (UTF-8) |
//! | [`LongCodec`] | `i64` | `LongCodec` (ASCII decimal) |
//! | [`BytesCodec`] | `Bytes` / `Vec<u8>` | `ByteArrayCodec` (raw bytes) |
//! | [`JsonCodec<T>`] | any `serde` type | `TypedJsonJacksonCodec(T.class)` (plain JSON) |
//! | [`JacksonCodec<T>`] | `serde` types named after their Java class | `JsonJacksonCodec` (JSON with `@class`) |
//! | [`KryoCodec<T>`] | `serde` types named after their Java class | `Kryo5Codec` (Redisson's default) |

pub use delayq_codec::*;

use ::bytes::Bytes;

use crate::error::{DecodeError, Error};

/// Encodes `value`, mapping a failure to [`Error::Encode`].
///
/// ```
/// use delayq::codec::{encode, LongCodec};
///
/// assert_eq!(encode(&LongCodec, &42).unwrap(), "42");
/// ```
pub fn encode<T, C: Codec<T> + ?Sized>(codec: &C, value: &T) -> Result<Bytes, Error> {
    codec.encode(value).map_err(|source| Error::Encode {
        codec: codec.name(),
        source,
    })
}

/// Decodes `raw`, mapping a failure to a [`DecodeError`] that keeps the bytes.
///
/// ```
/// use bytes::Bytes;
/// use delayq::codec::{decode, LongCodec};
///
/// let error = decode(&LongCodec, Bytes::from_static(b"x")).unwrap_err();
/// assert_eq!(error.raw().as_ref(), b"x");
/// ```
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kryo_decode_error_keeps_the_raw_bytes_and_its_kryo_source() {
        // A Kryo String cut before its last byte.
        let raw = Bytes::from_static(&[0x03, b'h', b'e']);
        let error = decode(&KryoCodec::<String>::new(), raw.clone()).unwrap_err();
        assert_eq!(error.raw(), &raw);
        let source = std::error::Error::source(&error).unwrap();
        assert_eq!(
            source.downcast_ref::<kryo::KryoError>().unwrap().kind(),
            kryo::KryoErrorKind::Truncated
        );
    }
}
