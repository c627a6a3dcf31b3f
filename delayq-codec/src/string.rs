use bytes::Bytes;

use super::Codec;
use crate::BoxError;

/// UTF-8 text, as Redisson's `StringCodec` writes it.
///
/// ```
/// use delayq_codec::{Codec, StringCodec};
/// let raw = StringCodec.encode(&"héllo ✓".to_string()).unwrap();
/// assert_eq!(raw.as_ref(), "héllo ✓".as_bytes());
/// assert!(StringCodec.decode(&[0xff, 0xfe]).is_err());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct StringCodec;

impl Codec<String> for StringCodec {
    fn name(&self) -> &'static str {
        "string"
    }

    fn encode(&self, value: &String) -> Result<Bytes, BoxError> {
        Ok(Bytes::copy_from_slice(value.as_bytes()))
    }

    fn decode(&self, raw: &[u8]) -> Result<String, BoxError> {
        Ok(std::str::from_utf8(raw)?.to_owned())
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        super::diagnose_java_binary(raw)
    }
}
