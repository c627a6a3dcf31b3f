use bytes::Bytes;

use super::Codec;
use crate::BoxError;

/// A Java `long` as ASCII decimal, as Redisson's `LongCodec` writes it.
///
/// Decoding accepts exactly what `Long.toString` produces: an optional `-`
/// and digits, nothing else.
///
/// ```
/// use delayq_codec::{Codec, LongCodec};
/// assert_eq!(LongCodec.encode(&-7).unwrap().as_ref(), b"-7");
/// assert_eq!(LongCodec.decode(b"9007199254740993").unwrap(), 9007199254740993);
/// assert!(LongCodec.decode(b" 42").is_err());
/// assert!(LongCodec.decode(b"+42").is_err());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct LongCodec;

impl Codec<i64> for LongCodec {
    fn name(&self) -> &'static str {
        "long"
    }

    fn encode(&self, value: &i64) -> Result<Bytes, BoxError> {
        Ok(Bytes::from(value.to_string()))
    }

    fn decode(&self, raw: &[u8]) -> Result<i64, BoxError> {
        let text = std::str::from_utf8(raw)?;
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("{text:?} is not a decimal long").into());
        }
        Ok(text.parse::<i64>()?)
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        super::diagnose_java_binary(raw)
    }
}
