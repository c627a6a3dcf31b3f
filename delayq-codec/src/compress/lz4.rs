//! `LZ4Codec` and `LZ4CodecV2`: a 4-byte length, then an LZ4 block
//! (lz4-java's block for the first, commons-compress's for the second: the
//! same format).

use lz4_flex::block::{self, DecompressError};

use super::frame::{self, PREFIX};
use super::{CompressError, CompressErrorKind, Compression};

/// The most output one input byte can make: a match-length byte adds 255.
const MAX_RATIO: usize = 255;

/// `LZ4Codec`: lz4_flex's block, as lz4-java's fast compressor would write.
pub(super) fn compress(inner: &[u8]) -> Result<Vec<u8>, CompressError> {
    let bound = block::get_maximum_output_size(inner.len());
    let mut out = frame::prefixed(Compression::Lz4, inner.len(), bound)?;
    out.resize(PREFIX + bound, 0);
    let written = block::compress_into(inner, &mut out[PREFIX..])
        .map_err(|e| CompressError::new(Compression::Lz4, CompressErrorKind::Encode, None, e.to_string()))?;
    out.truncate(PREFIX + written);
    Ok(out)
}

/// `LZ4CodecV2`: the inner bytes as one literal run, the only LZ4 block
/// Redisson before 4.5.0 reads whole (its decoder stops at the first match).
pub(super) fn compress_literals(inner: &[u8]) -> Result<Vec<u8>, CompressError> {
    let len = inner.len();
    let mut out = frame::prefixed(Compression::Lz4V2, len, 1 + len / 255 + 1 + len)?;
    // The token's high nibble is the literal length (15: more bytes follow,
    // each adding up to 255; the last one below 255); no match follows.
    if len < 15 {
        out.push((len as u8) << 4);
    } else {
        out.push(0xf0);
        let mut rest = len - 15;
        while rest >= 255 {
            out.push(255);
            rest -= 255;
        }
        out.push(rest as u8);
    }
    out.extend_from_slice(inner);
    Ok(out)
}

/// Decompresses either codec's bytes into exactly the claimed length.
pub(super) fn decompress(compression: Compression, raw: &[u8], max_size: usize) -> Result<Vec<u8>, CompressError> {
    let (claimed, data) = frame::split_prefix(compression, raw)?;
    frame::check_claim(compression, claimed, data.len(), MAX_RATIO, max_size)?;
    let mut out = vec![0; claimed];
    let produced = block::decompress_into(data, &mut out).map_err(|e| {
        let (kind, message) = match e {
            DecompressError::OutputTooSmall { .. } => {
                return frame::length_mismatch(compression, claimed, "more");
            }
            DecompressError::LiteralOutOfBounds | DecompressError::ExpectedAnotherByte => (
                CompressErrorKind::Truncated,
                "the LZ4 block ends inside a sequence".to_owned(),
            ),
            e => (CompressErrorKind::Malformed, format!("invalid LZ4 block: {e}")),
        };
        CompressError::new(compression, kind, Some(PREFIX), message)
    })?;
    if produced != claimed {
        return Err(frame::length_mismatch(compression, claimed, &produced.to_string()));
    }
    Ok(out)
}

/// The prefix fits the block's size (an LZ4 block is at most
/// `n + n/255 + 16` bytes for `n` bytes out), and the block's sequences,
/// walked without writing anything, make exactly the claimed length with
/// offsets inside the output so far.
pub(super) fn looks_like(raw: &[u8]) -> bool {
    let Ok((claimed, data)) = frame::split_prefix(Compression::Lz4, raw) else {
        return false;
    };
    !data.is_empty() && data.len() <= claimed + claimed / 255 + 16 && walk(data) == Some(claimed)
}

/// The length an LZ4 block decompresses to, or `None` if it is not valid.
fn walk(block: &[u8]) -> Option<usize> {
    let mut at = 0;
    let mut out: usize = 0;
    // A length: the nibble, and if it is 15, bytes that add up to 255 each.
    let length = |nibble: u8, at: &mut usize| -> Option<usize> {
        let mut len = usize::from(nibble);
        if nibble == 15 {
            loop {
                let byte = *block.get(*at)?;
                *at += 1;
                len = len.checked_add(usize::from(byte))?;
                if byte != 255 {
                    break;
                }
            }
        }
        Some(len)
    };
    loop {
        let token = *block.get(at)?;
        at += 1;
        let literals = length(token >> 4, &mut at)?;
        at = at.checked_add(literals).filter(|&end| end <= block.len())?;
        out += literals;
        if at == block.len() {
            return Some(out);
        }
        let offset = usize::from(u16::from_le_bytes([*block.get(at)?, *block.get(at + 1)?]));
        at += 2;
        if offset == 0 || offset > out {
            return None;
        }
        out = out.checked_add(length(token & 0x0f, &mut at)? + 4)?;
    }
}
