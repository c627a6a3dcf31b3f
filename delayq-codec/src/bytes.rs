use bytes::Bytes;

use super::Codec;
use crate::BoxError;

/// Raw bytes, as Redisson's `ByteArrayCodec` writes them. Never fails.
///
/// ```
/// use bytes::Bytes;
/// use delayq_codec::{BytesCodec, Codec};
/// let raw = Codec::<Bytes>::encode(&BytesCodec, &Bytes::from_static(&[0xde, 0xad])).unwrap();
/// assert_eq!(raw.as_ref(), &[0xde, 0xad]);
/// let back: Vec<u8> = BytesCodec.decode(&raw).unwrap();
/// assert_eq!(back, vec![0xde, 0xad]);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct BytesCodec;

impl Codec<Bytes> for BytesCodec {
    fn name(&self) -> &'static str {
        "bytes"
    }

    fn encode(&self, value: &Bytes) -> Result<Bytes, BoxError> {
        Ok(value.clone())
    }

    fn decode(&self, raw: &[u8]) -> Result<Bytes, BoxError> {
        Ok(Bytes::copy_from_slice(raw))
    }
}

impl Codec<Vec<u8>> for BytesCodec {
    fn name(&self) -> &'static str {
        "bytes"
    }

    fn encode(&self, value: &Vec<u8>) -> Result<Bytes, BoxError> {
        Ok(Bytes::copy_from_slice(value))
    }

    fn decode(&self, raw: &[u8]) -> Result<Vec<u8>, BoxError> {
        Ok(raw.to_vec())
    }
}
