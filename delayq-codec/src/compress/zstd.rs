//! `ZStdCodec`: a 4-byte length, then one Zstandard frame (zstd-jni's
//! `ZstdOutputStream`: no content size, no checksum, a 2 MiB window, the
//! data block then an empty last block).

use std::io::Read;

use ruzstd::decoding::errors::FrameDecoderError;
use ruzstd::decoding::{FrameDecoder, StreamingDecoder};
use ruzstd::encoding::{compress_to_vec, CompressionLevel};

use super::frame::{self, PREFIX};
use super::{CompressError, CompressErrorKind, Compression};

const ZSTD: Compression = Compression::Zstd;

const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The most output one input byte can make: a block makes at most 128 KiB
/// and takes at least 4 bytes (a 3-byte header, an RLE byte).
const MAX_RATIO: usize = 32 * 1024;

/// The largest window a frame may ask for whatever its length (the decoder
/// reserves the window up front). A window beyond both this and the claimed
/// length is refused: zstd-jni's default writes 2 MiB, its highest levels 8 MiB.
const WINDOW_ALWAYS_ALLOWED: usize = 8 << 20;

pub(super) fn compress(inner: &[u8]) -> Result<Vec<u8>, CompressError> {
    let mut out = frame::prefixed(ZSTD, inner.len(), 0)?;
    out.extend_from_slice(&compress_to_vec(inner, CompressionLevel::Fastest));
    Ok(out)
}

fn error(kind: CompressErrorKind, offset: usize, message: impl Into<String>) -> CompressError {
    CompressError::new(ZSTD, kind, Some(offset), message)
}

pub(super) fn decompress(raw: &[u8], max_size: usize) -> Result<Vec<u8>, CompressError> {
    let (claimed, data) = frame::split_prefix(ZSTD, raw)?;
    frame::check_claim(ZSTD, claimed, data.len(), MAX_RATIO, max_size)?;
    match data.get(..4) {
        None => {
            return Err(error(
                CompressErrorKind::Truncated,
                PREFIX,
                "the bytes end inside the zstd magic number",
            ))
        }
        Some(magic) if magic != MAGIC => {
            return Err(error(
                CompressErrorKind::Malformed,
                PREFIX,
                format!("not a zstd frame (starts {magic:02x?})"),
            ))
        }
        Some(_) => {}
    }
    // Frame header descriptor: the low 2 bits flag a dictionary id; bit 3
    // is reserved, a frame with it set must not be read (libzstd refuses it).
    if data.get(4).is_some_and(|fhd| fhd & 0b11 != 0) {
        return Err(error(
            CompressErrorKind::Unsupported,
            PREFIX + 4,
            "a frame compressed with a dictionary (ZStdCodec never uses one)",
        ));
    }
    if data.get(4).is_some_and(|fhd| fhd & 0b1000 != 0) {
        return Err(error(
            CompressErrorKind::Malformed,
            PREFIX + 4,
            "the zstd frame header's reserved bit is set",
        ));
    }

    let mut source = data;
    let mut decoder = FrameDecoder::new();
    decoder.set_max_window_size(claimed.max(WINDOW_ALWAYS_ALLOWED) as u64);
    let mut stream = match StreamingDecoder::new_with_decoder(&mut source, &mut decoder) {
        Ok(stream) => stream,
        Err(FrameDecoderError::WindowSizeTooBig { requested, .. }) => {
            return Err(error(
                CompressErrorKind::Unsupported,
                PREFIX + 5,
                format!("a {requested}-byte window for {claimed} bytes"),
            ))
        }
        Err(e) => {
            let kind = if source.is_empty() {
                CompressErrorKind::Truncated
            } else {
                CompressErrorKind::Malformed
            };
            return Err(error(kind, PREFIX, format!("bad zstd frame header: {e}")));
        }
    };
    // One byte past the claim tells a longer frame from an exact one.
    let mut out = Vec::with_capacity(claimed + 1);
    let read = (&mut stream).take(claimed as u64 + 1).read_to_end(&mut out);
    let at = PREFIX + data.len() - source.len();
    if let Err(e) = read {
        let kind = if source.is_empty() {
            CompressErrorKind::Truncated
        } else {
            CompressErrorKind::Malformed
        };
        return Err(error(kind, at, format!("invalid zstd frame: {e}")));
    }
    if out.len() != claimed {
        let produced = if out.len() > claimed {
            "more".to_owned()
        } else {
            out.len().to_string()
        };
        return Err(frame::length_mismatch(ZSTD, claimed, &produced));
    }
    if let (Some(stored), Some(computed)) = (decoder.get_checksum_from_data(), decoder.get_calculated_checksum())
        && stored != computed
    {
        return Err(error(
            CompressErrorKind::Malformed,
            at,
            "the zstd frame's checksum does not match",
        ));
    }
    if !source.is_empty() {
        return Err(error(
            CompressErrorKind::Malformed,
            at,
            format!("{} bytes after the zstd frame", source.len()),
        ));
    }
    Ok(out)
}

/// The prefix fits the frame's size, the frame has zstd's magic number and
/// a header with its reserved bit clear and no dictionary.
pub(super) fn looks_like(raw: &[u8]) -> bool {
    let Ok((claimed, data)) = frame::split_prefix(ZSTD, raw) else {
        return false;
    };
    data.len() >= 5 && data[..4] == MAGIC && data[4] & 0b1011 == 0 && claimed <= data.len().saturating_mul(MAX_RATIO)
}
