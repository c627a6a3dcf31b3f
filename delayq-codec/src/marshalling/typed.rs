//! [`MarshallingCodec<T>`]: River for serde types, through the value model.

use std::collections::HashMap;
use std::marker::PhantomData;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::MarshallingError;
use super::write::{self, Names};
use crate::kryo::value_serde::ValueDe;
use crate::kryo::{ser, KryoSchema};
use crate::{BoxError, Codec};

/// Redisson's `MarshallingCodec` (JBoss Marshalling River, Redisson's
/// default codec from 3.13.0 to 3.18.x), for serde types.
///
/// Rust types stand for Java classes as for [`KryoCodec`](crate::KryoCodec)
/// (a struct's serde name is its Java class, unit-only enums are Java
/// enums, [`JavaUuid`](crate::kryo::JavaUuid) is a `UUID`...). River names
/// fields and enum constants in its bytes, so decoding needs no more; to
/// encode a POJO it also writes the class's `serialVersionUID`, which you
/// give with [`with_serial_version_uid`](Self::with_serial_version_uid) or
/// a [`KryoSchema`].
///
/// ```
/// use delayq_codec::{Codec, MarshallingCodec};
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// #[serde(rename = "compat.Order")]
/// struct Order { id: Option<String>, amount: i64, tags: Vec<String> }
///
/// let codec = MarshallingCodec::<Order>::new().with_serial_version_uid("compat.Order", 1);
/// let order = Order { id: Some("o-1".into()), amount: 1234, tags: vec!["a".into(), "b".into()] };
/// let raw = codec.encode(&order).unwrap();
/// assert_eq!(&raw[..4], [0x04, 0x04, 0x09, 0x3e]); // version 4, new object, serializable class, name
/// assert_eq!(codec.decode(&raw).unwrap(), order);
/// ```
pub struct MarshallingCodec<T> {
    schema: Option<KryoSchema>,
    uids: HashMap<String, i64>,
    _type: PhantomData<fn() -> T>,
}

impl<T> MarshallingCodec<T> {
    /// A River codec for `T`.
    pub fn new() -> Self {
        MarshallingCodec {
            schema: None,
            uids: HashMap::new(),
            _type: PhantomData,
        }
    }

    /// Takes `serialVersionUID`s (and enum constants, for values that carry
    /// only an ordinal) from a schema.
    ///
    /// ```
    /// use delayq_codec::{kryo::KryoSchema, MarshallingCodec};
    /// let schema = KryoSchema::from_json(r#"{"classes": {"compat.Order":
    ///     {"serialVersionUID": 1, "fields": {"id": "String"}}}}"#).unwrap();
    /// let codec = MarshallingCodec::<String>::new().with_schema(schema);
    /// # let _ = codec;
    /// ```
    pub fn with_schema(mut self, schema: KryoSchema) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The `serialVersionUID` of a POJO class (wins over the schema's).
    ///
    /// ```
    /// let codec = delayq_codec::MarshallingCodec::<String>::new().with_serial_version_uid("compat.Order", 1);
    /// # let _ = codec;
    /// ```
    pub fn with_serial_version_uid(mut self, class: &str, uid: i64) -> Self {
        self.uids.insert(class.to_owned(), uid);
        self
    }
}

impl<T> Default for MarshallingCodec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for MarshallingCodec<T> {
    fn clone(&self) -> Self {
        MarshallingCodec {
            schema: self.schema.clone(),
            uids: self.uids.clone(),
            _type: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for MarshallingCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MarshallingCodec<{}>", std::any::type_name::<T>())
    }
}

impl<T> MarshallingCodec<T>
where
    T: Serialize + DeserializeOwned,
{
    fn encode_value(&self, value: &T) -> Result<Vec<u8>, MarshallingError> {
        let value = ser::to_value(value)?;
        write::encode(
            &value,
            &Names {
                schema: self.schema.as_ref(),
                uids: Some(&self.uids),
            },
        )
    }

    fn decode_value(&self, raw: &[u8]) -> Result<T, MarshallingError> {
        let value = super::decode(raw)?;
        Ok(T::deserialize(ValueDe(value))?)
    }
}

impl<T> Codec<T> for MarshallingCodec<T>
where
    T: Serialize + DeserializeOwned + 'static,
{
    fn name(&self) -> &'static str {
        "marshalling"
    }

    fn encode(&self, value: &T) -> Result<Bytes, BoxError> {
        Ok(Bytes::from(self.encode_value(value)?))
    }

    fn decode(&self, raw: &[u8]) -> Result<T, BoxError> {
        Ok(self.decode_value(raw)?)
    }
}
