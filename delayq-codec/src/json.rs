use std::marker::PhantomData;

use bytes::Bytes;
use serde::{de::DeserializeOwned, Serialize};

use super::Codec;
use crate::BoxError;

/// Plain JSON through `serde_json`, as Java's `TypedJsonJacksonCodec(T.class)`
/// reads and writes it (no type information in the JSON).
///
/// ```
/// use delayq_codec::{Codec, JsonCodec};
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// struct Order { id: String, amount: i64 }
///
/// let codec = JsonCodec::<Order>::new();
/// let order = Order { id: "o-1".into(), amount: 1234 };
/// let raw = codec.encode(&order).unwrap();
/// assert_eq!(raw.as_ref(), br#"{"id":"o-1","amount":1234}"#);
/// assert_eq!(codec.decode(&raw).unwrap(), order);
/// ```
pub struct JsonCodec<T>(PhantomData<fn() -> T>);

impl<T> JsonCodec<T> {
    /// A JSON codec for `T`.
    pub fn new() -> Self {
        JsonCodec(PhantomData)
    }
}

impl<T> Default for JsonCodec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for JsonCodec<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for JsonCodec<T> {}

impl<T> std::fmt::Debug for JsonCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JsonCodec<{}>", std::any::type_name::<T>())
    }
}

impl<T> Codec<T> for JsonCodec<T>
where
    T: Serialize + DeserializeOwned + 'static,
{
    fn name(&self) -> &'static str {
        "json"
    }

    fn encode(&self, value: &T) -> Result<Bytes, BoxError> {
        Ok(Bytes::from(serde_json::to_vec(value)?))
    }

    fn decode(&self, raw: &[u8]) -> Result<T, BoxError> {
        Ok(serde_json::from_slice(raw)?)
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        super::diagnose_java_binary(raw)
    }
}
