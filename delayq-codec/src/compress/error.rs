//! What can go wrong compressing or decompressing a wrapper's bytes.

use std::fmt;

use super::Compression;

/// Why a compression wrapper's bytes could not be decompressed, or inner
/// bytes could not be compressed.
///
/// The typed wrappers ([`Lz4Codec`](super::Lz4Codec), ...) return it boxed
/// (an inner codec's own error comes through unchanged); downcast it to
/// inspect it:
///
/// ```
/// use delayq_codec::compress::{CompressErrorKind, Compression, DEFAULT_MAX_DECOMPRESSED};
///
/// // LZ4Codec's framing: a 4-byte length (here 9), then the block; the block is cut short.
/// let error = Compression::Lz4.decompress(&[0, 0, 0, 9, 0x90, 0x03], DEFAULT_MAX_DECOMPRESSED).unwrap_err();
/// assert_eq!(error.kind(), CompressErrorKind::Truncated);
/// assert_eq!(error.compression(), Compression::Lz4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressError {
    compression: Compression,
    kind: CompressErrorKind,
    offset: Option<usize>,
    message: String,
}

/// The kind of a [`CompressError`].
///
/// ```
/// use delayq_codec::compress::{CompressErrorKind, Compression};
///
/// // A length prefix of 1 GiB: refused before anything is allocated.
/// let error = Compression::Zstd.decompress(&[0x40, 0, 0, 0, 0x28, 0xb5, 0x2f, 0xfd], 64 << 20).unwrap_err();
/// assert_eq!(error.kind(), CompressErrorKind::TooLarge);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompressErrorKind {
    /// The bytes end before the length prefix, the frame header or the
    /// compressed data does.
    Truncated,
    /// The decompressed size (claimed by the length prefix or the Snappy
    /// header) is over the cap ([`DEFAULT_MAX_DECOMPRESSED`](super::DEFAULT_MAX_DECOMPRESSED)
    /// unless set); nothing was allocated for it.
    TooLarge,
    /// The claimed decompressed size disagrees with what the data
    /// decompresses to, or is more than data of that size can produce
    /// (a forged length): never answered with cut or padded bytes.
    LengthMismatch,
    /// Bytes that are not data of the format: a bad offset, a bad magic
    /// number or block, a checksum mismatch, bytes after the frame.
    Malformed,
    /// Valid data of a kind Redisson never writes and delayq does not read
    /// (a zstd dictionary, a zstd window over the limit).
    Unsupported,
    /// Inner bytes Java cannot read back once compressed (over 2 GiB: the
    /// length prefix is a Java `int`). Encoding only.
    Encode,
}

impl CompressError {
    pub(crate) fn new(
        compression: Compression,
        kind: CompressErrorKind,
        offset: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        CompressError {
            compression,
            kind,
            offset,
            message: message.into(),
        }
    }

    /// Which wrapper's bytes these were.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// What went wrong.
    pub fn kind(&self) -> CompressErrorKind {
        self.kind
    }

    /// Where in the raw bytes (byte offset), when known.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The message without the codec and the offset.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.compression.java_codec(), self.message)?;
        match self.offset {
            Some(offset) => write!(f, " (at byte {offset})"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for CompressError {}
