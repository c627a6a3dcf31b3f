//! Redisson's compression codecs — `LZ4Codec`, `LZ4CodecV2`, `SnappyCodecV2`
//! and `ZStdCodec` — as wrappers around any delayq codec.
//!
//! Each Java wrapper encodes a value with its inner codec (`Kryo5Codec`
//! unless the service passes another), then compresses those bytes:
//!
//! | Java codec | bytes | Rust |
//! | --- | --- | --- |
//! | `LZ4Codec` (lz4-java) | 4-byte big-endian length of the inner bytes, then an LZ4 block | [`Lz4Codec`], [`Compression::Lz4`] |
//! | `LZ4CodecV2` (commons-compress, Redisson 3.24+) | the same framing | [`Lz4V2Codec`], [`Compression::Lz4V2`] |
//! | `SnappyCodecV2` (snappy-java `Snappy.compress`) | a raw Snappy block: varint length, then literals and copies (no stream framing) | [`SnappyCodec`], [`Compression::Snappy`] |
//! | `ZStdCodec` (zstd-jni streams, Redisson 3.39+) | 4-byte big-endian length, then one Zstandard frame | [`ZstdCodec`], [`Compression::Zstd`] |
//!
//! The compressed bytes need not equal Java's (compressors differ); what
//! these wrappers write, every Redisson version that has the codec reads.
//! `LZ4CodecV2` before Redisson 4.5.0 reads a block only up to its first
//! back-reference (its decoder makes a single `read()` call on
//! commons-compress's stream, which returns one literal run or one match
//! per call), so it cannot read its own bytes once they compress; delayq
//! therefore writes `LZ4CodecV2` bytes as one literal run, which every
//! version reads, and reads any LZ4 block.
//!
//! Hostile bytes: the claimed size (length prefix or Snappy header) is
//! checked against a cap ([`DEFAULT_MAX_DECOMPRESSED`] unless set) and
//! against the most the compressed bytes can expand to, before anything is
//! allocated; the output must be exactly the claimed size (never cut or
//! padded); decoding is linear in its output, which the cap bounds.
//!
//! ```
//! use delayq_codec::compress::Lz4Codec;
//! use delayq_codec::Codec;
//!
//! // Java: new LZ4Codec().getValueEncoder().encode("order-42")
//! let java = [0, 0, 0, 9, 0x90, 0x03, b'o', b'r', b'd', b'e', b'r', b'-', b'4', b'2' | 0x80];
//! let codec = Lz4Codec::<String>::new();
//! assert_eq!(codec.decode(&java).unwrap(), "order-42");
//! let ours = codec.encode(&"order-42".to_string()).unwrap();
//! assert_eq!(codec.decode(&ours).unwrap(), "order-42");
//! ```

mod codec;
mod error;
mod frame;
mod lz4;
mod snappy;
mod zstd;

#[cfg(test)]
mod interop_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use std::fmt;

pub use self::codec::{Lz4Codec, Lz4V2Codec, SnappyCodec, ZstdCodec};
pub use self::error::{CompressError, CompressErrorKind};

/// The decompressed size the wrappers accept unless told otherwise (64 MiB):
/// a payload claiming more is refused before anything is allocated.
///
/// ```
/// assert_eq!(delayq_codec::compress::DEFAULT_MAX_DECOMPRESSED, 64 * 1024 * 1024);
/// ```
pub const DEFAULT_MAX_DECOMPRESSED: usize = 64 << 20;

/// One of Redisson's compression wrappers, at the byte level: compresses
/// an inner codec's bytes as the Java codec does, and decompresses them.
///
/// ```
/// use delayq_codec::compress::{Compression, DEFAULT_MAX_DECOMPRESSED};
///
/// let kryo = [0x03, b'h', b'i' | 0x80]; // Kryo5Codec's "hi"
/// for compression in Compression::ALL {
///     let raw = compression.compress(&kryo).unwrap();
///     assert!(compression.looks_like(&raw));
///     assert_eq!(compression.decompress(&raw, DEFAULT_MAX_DECOMPRESSED).unwrap(), kryo);
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// `LZ4Codec`: a 4-byte big-endian length, then an LZ4 block.
    Lz4,
    /// `LZ4CodecV2`: the same framing as `LZ4Codec`, written as one literal
    /// run (see the [module docs](self) for why).
    Lz4V2,
    /// `SnappyCodecV2`: a raw Snappy block.
    Snappy,
    /// `ZStdCodec`: a 4-byte big-endian length, then a Zstandard frame.
    Zstd,
}

impl Compression {
    /// Every wrapper, in the order auto-detection may try them.
    ///
    /// ```
    /// use delayq_codec::compress::Compression;
    /// assert_eq!(Compression::ALL.len(), 4);
    /// ```
    pub const ALL: [Compression; 4] = [
        Compression::Lz4,
        Compression::Lz4V2,
        Compression::Snappy,
        Compression::Zstd,
    ];

    /// The wrapper's short name, as the peers and the CLI spell it: `lz4`,
    /// `lz4v2`, `snappy` or `zstd`.
    ///
    /// ```
    /// use delayq_codec::compress::Compression;
    /// assert_eq!(Compression::Lz4V2.name(), "lz4v2");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Compression::Lz4 => "lz4",
            Compression::Lz4V2 => "lz4v2",
            Compression::Snappy => "snappy",
            Compression::Zstd => "zstd",
        }
    }

    /// The wrapper named `name` (as [`name`](Self::name) spells it).
    ///
    /// ```
    /// use delayq_codec::compress::Compression;
    /// assert_eq!(Compression::from_name("zstd"), Some(Compression::Zstd));
    /// assert_eq!(Compression::from_name("gzip"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Compression> {
        Compression::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The Java codec's class name (`LZ4Codec`, `LZ4CodecV2`,
    /// `SnappyCodecV2`, `ZStdCodec`, in `org.redisson.codec`).
    ///
    /// ```
    /// use delayq_codec::compress::Compression;
    /// assert_eq!(Compression::Snappy.java_codec(), "SnappyCodecV2");
    /// ```
    pub const fn java_codec(self) -> &'static str {
        match self {
            Compression::Lz4 => "LZ4Codec",
            Compression::Lz4V2 => "LZ4CodecV2",
            Compression::Snappy => "SnappyCodecV2",
            Compression::Zstd => "ZStdCodec",
        }
    }

    /// Compresses an inner codec's bytes into what the Java wrapper stores.
    ///
    /// Fails only for inner bytes over 2 GiB, which Java's `int` length
    /// cannot say ([`CompressErrorKind::Encode`]).
    ///
    /// ```
    /// use delayq_codec::compress::Compression;
    /// let raw = Compression::Lz4.compress(b"abcabcabcabcabcabc").unwrap();
    /// assert_eq!(raw[..4], [0, 0, 0, 18]); // the inner length, big-endian
    /// ```
    pub fn compress(self, inner: &[u8]) -> Result<Vec<u8>, CompressError> {
        match self {
            Compression::Lz4 => lz4::compress(inner),
            Compression::Lz4V2 => lz4::compress_literals(inner),
            Compression::Snappy => snappy::compress(inner),
            Compression::Zstd => zstd::compress(inner),
        }
    }

    /// Decompresses a wrapper's bytes into the inner codec's bytes,
    /// refusing (before allocating) a claimed size over `max_size`.
    ///
    /// The result is exactly the size the bytes claim, or an error: see
    /// [`CompressErrorKind`]. `Lz4` and `Lz4V2` read the same bytes.
    ///
    /// ```
    /// use delayq_codec::compress::{CompressErrorKind, Compression};
    ///
    /// // SnappyCodecV2's bytes of Kryo's "hi": length 3, a 3-byte literal.
    /// let raw = [0x03, 0x08, 0x03, b'h', b'i' | 0x80];
    /// assert_eq!(Compression::Snappy.decompress(&raw, 1024).unwrap(), [0x03, b'h', b'i' | 0x80]);
    /// let error = Compression::Snappy.decompress(&raw, 2).unwrap_err();
    /// assert_eq!(error.kind(), CompressErrorKind::TooLarge);
    /// ```
    pub fn decompress(self, raw: &[u8], max_size: usize) -> Result<Vec<u8>, CompressError> {
        match self {
            Compression::Lz4 | Compression::Lz4V2 => lz4::decompress(self, raw, max_size),
            Compression::Snappy => snappy::decompress(raw, max_size),
            Compression::Zstd => zstd::decompress(raw, max_size),
        }
    }

    /// A cheap check (no decompression) that `raw` could be this wrapper's
    /// bytes: the length prefix or header fits the compressed size, the
    /// format's magic number and first element are plausible.
    ///
    /// `true` is not proof (auto-detection confirms by decompressing);
    /// `false` means [`decompress`](Self::decompress) would fail. `Lz4` and
    /// `Lz4V2` bytes look the same.
    ///
    /// ```
    /// use delayq_codec::compress::Compression;
    /// let raw = Compression::Zstd.compress(b"hello").unwrap();
    /// assert!(Compression::Zstd.looks_like(&raw));
    /// assert!(!Compression::Lz4.looks_like(&raw));
    /// assert!(!Compression::Zstd.looks_like(b"hello"));
    /// ```
    pub fn looks_like(self, raw: &[u8]) -> bool {
        match self {
            Compression::Lz4 | Compression::Lz4V2 => lz4::looks_like(raw),
            Compression::Snappy => snappy::looks_like(raw),
            Compression::Zstd => zstd::looks_like(raw),
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
