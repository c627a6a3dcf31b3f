//! The typed wrappers: one per Java codec, generic over the inner codec
//! (Kryo unless given another, as Redisson's no-argument constructors).

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;

use super::{Compression, DEFAULT_MAX_DECOMPRESSED};
use crate::{BoxError, Codec, KryoCodec};

/// `lz4`, `lz4/jackson`, `snappy/string`...: the wrapper's name, then the
/// inner codec's unless it is Kryo (what the peers and the CLI call them).
fn wrapped_name(compression: Compression, inner: &'static str) -> &'static str {
    if inner == "kryo" {
        return compression.name();
    }
    // One leaked string per (wrapper, inner codec name) pair ever named.
    static NAMES: Mutex<Vec<(Compression, &'static str, &'static str)>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&(_, _, name)) = names.iter().find(|(c, i, _)| *c == compression && *i == inner) {
        return name;
    }
    let name: &'static str = Box::leak(format!("{}/{inner}", compression.name()).into_boxed_str());
    names.push((compression, inner, name));
    name
}

/// What to say about bytes that another wrapper wrote.
fn hint(compression: Compression) -> &'static str {
    match compression {
        Compression::Lz4 | Compression::Lz4V2 => {
            "LZ4Codec/LZ4CodecV2 (4-byte length, LZ4 block): read them with Lz4Codec (on the command line: --codec lz4)"
        }
        Compression::Snappy => "SnappyCodecV2: read them with SnappyCodec (on the command line: --codec snappy)",
        Compression::Zstd => "ZStdCodec: read them with ZstdCodec (on the command line: --codec zstd)",
    }
}

/// The hint for bytes this wrapper cannot decompress: another wrapper's,
/// or an uncompressed Java codec's.
fn diagnose_other(this: Compression, raw: &[u8], max_size: usize) -> Option<&'static str> {
    Compression::ALL
        .into_iter()
        .filter(|&c| c != this && c.looks_like(raw))
        .find(|c| c.decompress(raw, max_size).is_ok())
        .map(hint)
        .or_else(|| crate::diagnose_java_binary(raw))
}

macro_rules! wrapper {
    ($(#[$doc:meta])* $name:ident, $compression:expr_2021, $java:literal) => {
        $(#[$doc])*
        pub struct $name<T, C = KryoCodec<T>> {
            inner: C,
            max_size: usize,
            value: PhantomData<fn() -> T>,
        }

        impl<T> $name<T> {
            #[doc = concat!("The wrapper around Kryo, as Java's `new ", $java, "()`.")]
            ///
            /// ```
            #[doc = concat!("use delayq_codec::compress::", stringify!($name), ";")]
            /// use delayq_codec::Codec;
            #[doc = concat!("let codec = ", stringify!($name), "::<i64>::new();")]
            /// assert_eq!(codec.decode(&codec.encode(&42).unwrap()).unwrap(), 42);
            /// ```
            pub fn new() -> Self {
                $name {
                    inner: KryoCodec::new(),
                    max_size: DEFAULT_MAX_DECOMPRESSED,
                    value: PhantomData,
                }
            }
        }

        impl<T, C: Codec<T>> $name<T, C> {
            #[doc = concat!("The wrapper around `inner`, as Java's `new ", $java, "(innerCodec)`.")]
            ///
            /// ```
            #[doc = concat!("use delayq_codec::compress::", stringify!($name), ";")]
            /// use delayq_codec::{Codec, StringCodec};
            #[doc = concat!("let codec = ", stringify!($name), "::wrap(StringCodec);")]
            /// let raw = codec.encode(&"hi".to_string()).unwrap();
            /// assert_eq!(codec.decode(&raw).unwrap(), "hi");
            /// ```
            pub fn wrap(inner: C) -> Self {
                $name {
                    inner,
                    max_size: DEFAULT_MAX_DECOMPRESSED,
                    value: PhantomData,
                }
            }
        }

        impl<T, C> $name<T, C> {
            /// The same wrapper, refusing payloads that claim more than
            /// `max_size` decompressed bytes (default
            #[doc = "[`DEFAULT_MAX_DECOMPRESSED`](super::DEFAULT_MAX_DECOMPRESSED), 64 MiB)."]
            ///
            /// ```
            #[doc = concat!("use delayq_codec::compress::{", stringify!($name), ", CompressError, CompressErrorKind};")]
            /// use delayq_codec::Codec;
            #[doc = concat!("let raw = ", stringify!($name), "::<String>::new().encode(&\"x\".repeat(100)).unwrap();")]
            #[doc = concat!("let small = ", stringify!($name), "::<String>::new().with_max_size(64);")]
            /// let error = small.decode(&raw).unwrap_err();
            /// let error = error.downcast_ref::<CompressError>().unwrap();
            /// assert_eq!(error.kind(), CompressErrorKind::TooLarge);
            /// ```
            pub fn with_max_size(mut self, max_size: usize) -> Self {
                self.max_size = max_size;
                self
            }

            /// The most decompressed bytes a payload may claim.
            ///
            /// ```
            #[doc = concat!("use delayq_codec::compress::", stringify!($name), ";")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::<String>::new().max_size(), 64 << 20);")]
            /// ```
            pub fn max_size(&self) -> usize {
                self.max_size
            }

            /// The inner codec.
            ///
            /// ```
            #[doc = concat!("use delayq_codec::compress::", stringify!($name), ";")]
            /// use delayq_codec::{Codec, JsonCodec};
            #[doc = concat!("let codec = ", stringify!($name), "::wrap(JsonCodec::<Vec<i64>>::new());")]
            /// assert_eq!(codec.inner().name(), "json");
            /// ```
            pub fn inner(&self) -> &C {
                &self.inner
            }

            /// The byte-level wrapper this codec applies.
            ///
            /// ```
            #[doc = concat!("use delayq_codec::compress::{", stringify!($name), ", Compression};")]
            #[doc = concat!("assert_eq!(", stringify!($name), "::<String>::new().compression(), ", stringify!($compression), ");")]
            /// ```
            pub fn compression(&self) -> Compression {
                $compression
            }
        }

        impl<T> Default for $name<T> {
            fn default() -> Self {
                Self::new()
            }
        }

        impl<T, C: Clone> Clone for $name<T, C> {
            fn clone(&self) -> Self {
                $name {
                    inner: self.inner.clone(),
                    max_size: self.max_size,
                    value: PhantomData,
                }
            }
        }

        impl<T, C: fmt::Debug> fmt::Debug for $name<T, C> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("inner", &self.inner)
                    .field("max_size", &self.max_size)
                    .finish()
            }
        }

        impl<T: 'static, C: Codec<T>> Codec<T> for $name<T, C> {
            fn name(&self) -> &'static str {
                wrapped_name($compression, self.inner.name())
            }

            fn encode(&self, value: &T) -> Result<Bytes, BoxError> {
                let inner = self.inner.encode(value)?;
                Ok(Bytes::from($compression.compress(&inner)?))
            }

            /// Decompresses (a [`CompressError`](super::CompressError) if
            /// that fails), then decodes with the inner codec (its own error
            /// if that fails).
            fn decode(&self, raw: &[u8]) -> Result<T, BoxError> {
                self.inner.decode(&$compression.decompress(raw, self.max_size)?)
            }

            fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
                match $compression.decompress(raw, self.max_size) {
                    Ok(inner) => self.inner.diagnose(&inner),
                    Err(_) => diagnose_other($compression, raw, self.max_size),
                }
            }
        }
    };
}

wrapper! {
    /// Redisson's `LZ4Codec` (lz4-java): a 4-byte big-endian length of the
    /// inner bytes, then an LZ4 block. `T` is the value type, `C` the inner
    /// codec (Kryo by default, as in Java).
    ///
    /// ```
    /// use delayq_codec::compress::Lz4Codec;
    /// use delayq_codec::{Codec, JacksonCodec};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
    /// #[serde(rename = "compat.Order")]
    /// struct Order { id: Option<String>, amount: i64, tags: Vec<String> }
    ///
    /// let order = Order { id: Some("o-1".into()), amount: 1234, tags: vec!["a".into()] };
    /// // new LZ4Codec(): Kryo inside.
    /// let kryo = Lz4Codec::<Order>::new();
    /// assert_eq!(kryo.decode(&kryo.encode(&order).unwrap()).unwrap(), order);
    /// // new LZ4Codec(new JsonJacksonCodec()).
    /// let json = Lz4Codec::wrap(JacksonCodec::<Order>::new());
    /// assert_eq!(json.name(), "lz4/jackson");
    /// assert_eq!(json.decode(&json.encode(&order).unwrap()).unwrap(), order);
    /// ```
    Lz4Codec, Compression::Lz4, "LZ4Codec"
}

wrapper! {
    /// Redisson's `LZ4CodecV2` (commons-compress, Redisson 3.24+): the same
    /// bytes as [`LZ4Codec`](Lz4Codec), written as one literal run so that
    /// Redisson before 4.5.0, whose decoder stops at the first LZ4 match,
    /// reads them (the size does not shrink). Reads any LZ4 block.
    ///
    /// ```
    /// use delayq_codec::compress::Lz4V2Codec;
    /// use delayq_codec::Codec;
    ///
    /// // Java's new LZ4CodecV2() bytes of the String "order-42".
    /// let java = [0, 0, 0, 9, 0x90, 0x03, b'o', b'r', b'd', b'e', b'r', b'-', b'4', b'2' | 0x80];
    /// let codec = Lz4V2Codec::<String>::new();
    /// assert_eq!(codec.decode(&java).unwrap(), "order-42");
    /// assert_eq!(codec.encode(&"order-42".to_string()).unwrap(), &java[..]);
    /// ```
    Lz4V2Codec, Compression::Lz4V2, "LZ4CodecV2"
}

wrapper! {
    /// Redisson's `SnappyCodecV2` (snappy-java): a raw Snappy block of the
    /// inner bytes. `T` is the value type, `C` the inner codec (Kryo by
    /// default, as in Java).
    ///
    /// ```
    /// use delayq_codec::compress::SnappyCodec;
    /// use delayq_codec::Codec;
    ///
    /// // Java's new SnappyCodecV2() bytes of the Long 42.
    /// let codec = SnappyCodec::<i64>::new();
    /// assert_eq!(codec.decode(&[0x02, 0x04, 0x09, 0x54]).unwrap(), 42);
    /// ```
    SnappyCodec, Compression::Snappy, "SnappyCodecV2"
}

wrapper! {
    /// Redisson's `ZStdCodec` (zstd-jni, Redisson 3.39+): a 4-byte
    /// big-endian length of the inner bytes, then a Zstandard frame. `T` is
    /// the value type, `C` the inner codec (Kryo by default, as in Java).
    ///
    /// ```
    /// use delayq_codec::compress::ZstdCodec;
    /// use delayq_codec::{Codec, StringCodec};
    ///
    /// // Java's new ZStdCodec(StringCodec.INSTANCE) bytes of "hi".
    /// let java = [0, 0, 0, 2, 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0x10, 0x00, 0x00, b'h', b'i', 0x01, 0x00, 0x00];
    /// let codec = ZstdCodec::wrap(StringCodec);
    /// assert_eq!(codec.decode(&java).unwrap(), "hi");
    /// assert_eq!(codec.name(), "zstd/string");
    /// ```
    ZstdCodec, Compression::Zstd, "ZStdCodec"
}
