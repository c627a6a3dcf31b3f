//! [`SerializationCodec<T>`]: Redisson's `SerializationCodec` for serde types.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::error::{SerializationError, SerializationErrorKind};
use super::write::Classes;
use crate::kryo::value_serde::ValueDe;
use crate::kryo::{ser, KryoSchema};
use crate::{BoxError, Codec};

/// Redisson's `SerializationCodec` (Java's `ObjectOutputStream`), for serde
/// types.
///
/// A Rust type stands for a Java class as for [`KryoCodec`](crate::KryoCodec)
/// (a struct's serde name is its Java class, `Vec<T>` an `ArrayList`, maps
/// `HashMap`s, [`JavaUuid`](crate::kryo::JavaUuid) a `UUID`...). Java writes
/// field names and enum constant names, so decoding needs nothing more.
/// Encoding a POJO needs its class's `serialVersionUID`: give it with
/// [`with_serial_version_uid`](Self::with_serial_version_uid) or in a
/// [`KryoSchema`] ([`with_schema`](Self::with_schema), which also gives
/// fields their exact declared types).
///
/// ```
/// use delayq_codec::{Codec, SerializationCodec};
///
/// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
/// #[serde(rename = "compat.Order")]
/// struct Order { id: Option<String>, amount: i64, tags: Vec<String> }
///
/// let codec = SerializationCodec::<Order>::new().with_serial_version_uid("compat.Order", 1);
/// let order = Order { id: Some("o-1".into()), amount: 1234, tags: vec!["a".into(), "b".into()] };
/// let raw = codec.encode(&order).unwrap();
/// assert_eq!(&raw[..4], delayq_codec::serialization::MAGIC);
/// assert_eq!(codec.decode(&raw).unwrap(), order);
/// ```
pub struct SerializationCodec<T> {
    schema: Option<Arc<KryoSchema>>,
    uids: Arc<HashMap<String, i64>>,
    marker: PhantomData<fn() -> T>,
}

impl<T> SerializationCodec<T> {
    /// A codec for `T` with no POJO class described.
    ///
    /// ```
    /// use delayq_codec::{Codec, SerializationCodec};
    /// let codec = SerializationCodec::<String>::new();
    /// assert_eq!(codec.decode(&codec.encode(&"hi".to_string()).unwrap()).unwrap(), "hi");
    /// ```
    pub fn new() -> Self {
        SerializationCodec {
            schema: None,
            uids: Arc::default(),
            marker: PhantomData,
        }
    }

    /// Describes classes with a schema (shared with the other Java codecs):
    /// `serialVersionUID`s, fields' declared types, enum constants.
    ///
    /// ```
    /// use delayq_codec::kryo::KryoSchema;
    /// use delayq_codec::SerializationCodec;
    /// let schema = KryoSchema::from_json(r#"{"classes": {"compat.Order": {"serialVersionUID": 1,
    ///     "fields": {"id": "String", "amount": "long", "tags": "List<String>"}}}}"#).unwrap();
    /// let codec = SerializationCodec::<serde_json::Value>::new().with_schema(schema);
    /// # let _ = codec;
    /// ```
    pub fn with_schema(mut self, schema: KryoSchema) -> Self {
        self.schema = Some(Arc::new(schema));
        self
    }

    /// Gives a POJO class's `serialVersionUID` (the
    /// `private static final long serialVersionUID` of the Java class; Java
    /// refuses a stream whose number differs from its class's).
    ///
    /// ```
    /// use delayq_codec::SerializationCodec;
    /// let codec = SerializationCodec::<()>::new().with_serial_version_uid("com.shop.Order", 1);
    /// # let _ = codec;
    /// ```
    pub fn with_serial_version_uid(mut self, class: &str, uid: i64) -> Self {
        Arc::make_mut(&mut self.uids).insert(class.to_owned(), uid);
        self
    }

    fn classes(&self) -> Classes<'_> {
        Classes {
            schema: self.schema.as_deref(),
            uids: Some(&self.uids),
        }
    }
}

impl<T> Default for SerializationCodec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Clone for SerializationCodec<T> {
    fn clone(&self) -> Self {
        SerializationCodec {
            schema: self.schema.clone(),
            uids: self.uids.clone(),
            marker: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for SerializationCodec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SerializationCodec")
            .field("type", &std::any::type_name::<T>())
            .field("schema", &self.schema.is_some())
            .field("uids", &self.uids)
            .finish()
    }
}

impl<T> Codec<T> for SerializationCodec<T>
where
    T: Serialize + DeserializeOwned + 'static,
{
    fn name(&self) -> &'static str {
        "serialization"
    }

    fn encode(&self, value: &T) -> Result<Bytes, BoxError> {
        let value = ser::to_value(value).map_err(SerializationError::from)?;
        Ok(Bytes::from(super::encode_with(&value, self.classes())?))
    }

    fn decode(&self, raw: &[u8]) -> Result<T, BoxError> {
        let mut value = super::decode(raw)?;
        if let Some(schema) = &self.schema {
            super::schema::apply(&mut value, schema)?;
        }
        T::deserialize(ValueDe(value)).map_err(|e| {
            let e = SerializationError::from(e);
            let kind = match e.kind() {
                SerializationErrorKind::TooLarge => SerializationErrorKind::TooLarge,
                _ => SerializationErrorKind::SchemaMismatch,
            };
            Box::new(SerializationError::new(kind, None, e.message().to_owned())) as BoxError
        })
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        // What wrote it, when it is another Java codec (Kryo).
        (!raw.starts_with(&super::MAGIC))
            .then(|| crate::diagnose_java_binary(raw))
            .flatten()
    }
}
