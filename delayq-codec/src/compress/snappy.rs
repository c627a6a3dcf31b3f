//! `SnappyCodecV2`: snappy-java's `Snappy.compress`, a raw Snappy block
//! (the decompressed length as a varint, then literals and copies; not the
//! framed stream format, so no magic number).

use super::frame;
use super::{CompressError, CompressErrorKind, Compression};

/// The most output one input byte can make: a 3-byte copy makes 64.
const MAX_RATIO: usize = 22;

const SNAPPY: Compression = Compression::Snappy;

pub(super) fn compress(inner: &[u8]) -> Result<Vec<u8>, CompressError> {
    // snappy-java's Snappy.uncompress returns a Java byte[].
    frame::java_int(SNAPPY, inner.len())?;
    snap::raw::Encoder::new()
        .compress_vec(inner)
        .map_err(|e| CompressError::new(SNAPPY, CompressErrorKind::Encode, None, e.to_string()))
}

/// The header: the decompressed length (a varint of at most 5 bytes, at
/// most `u32::MAX`) and where the data starts; `None` if cut short or bad.
fn header(raw: &[u8]) -> Option<(usize, usize)> {
    let mut value: u64 = 0;
    for (i, &byte) in raw.iter().take(5).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return u32::try_from(value).ok().map(|v| (v as usize, i + 1));
        }
    }
    None
}

pub(super) fn decompress(raw: &[u8], max_size: usize) -> Result<Vec<u8>, CompressError> {
    let (claimed, start) = header(raw).ok_or_else(|| {
        let (kind, what) = if raw.len() < 5 && raw.iter().all(|b| b & 0x80 != 0) {
            (CompressErrorKind::Truncated, "the bytes end inside the length header")
        } else {
            (CompressErrorKind::Malformed, "the length header is over 32 bits")
        };
        CompressError::new(SNAPPY, kind, Some(0), what)
    })?;
    frame::check_claim(SNAPPY, claimed, raw.len() - start, MAX_RATIO, max_size)?;
    let mut out = vec![0; claimed];
    let produced = snap::raw::Decoder::new().decompress(raw, &mut out).map_err(|e| {
        let kind = match e {
            snap::Error::HeaderMismatch { .. } | snap::Error::CopyWrite { .. } => CompressErrorKind::LengthMismatch,
            snap::Error::Literal { len, src_len, .. } if len > src_len => CompressErrorKind::Truncated,
            snap::Error::Literal { .. } => CompressErrorKind::LengthMismatch,
            snap::Error::CopyRead { .. } => CompressErrorKind::Truncated,
            _ => CompressErrorKind::Malformed,
        };
        CompressError::new(SNAPPY, kind, Some(start), format!("invalid Snappy block: {e}"))
    })?;
    if produced != claimed {
        return Err(frame::length_mismatch(SNAPPY, claimed, &produced.to_string()));
    }
    Ok(out)
}

/// The header fits the data's size, and the block's elements, walked
/// without writing anything, make exactly the claimed length with copies
/// inside the output so far.
pub(super) fn looks_like(raw: &[u8]) -> bool {
    let Some((claimed, start)) = header(raw) else {
        return false;
    };
    let data = &raw[start..];
    claimed <= data.len().saturating_mul(MAX_RATIO) && walk(data, claimed)
}

/// Whether a Snappy block's elements make exactly `claimed` bytes.
fn walk(data: &[u8], claimed: usize) -> bool {
    let mut at = 0;
    let mut out: usize = 0;
    // `n` little-endian bytes at `at`.
    let le = |at: usize, n: usize| -> Option<usize> {
        let bytes = data.get(at..at + n)?;
        Some(bytes.iter().rev().fold(0, |acc, &b| acc << 8 | usize::from(b)))
    };
    while let Some(&tag) = data.get(at) {
        at += 1;
        let (len, offset) = match tag & 0b11 {
            // A literal: its length - 1 in the tag's top 6 bits, or (60..=63)
            // in the next 1 to 4 bytes.
            0 => {
                let len = match usize::from(tag >> 2) {
                    n @ 0..=59 => n + 1,
                    n => {
                        let Some(len) = le(at, n - 59) else { return false };
                        at += n - 59;
                        len.saturating_add(1)
                    }
                };
                if len > data.len() - at {
                    return false;
                }
                at += len;
                (len, None)
            }
            // Copies: 4-11 bytes with an 11-bit offset, 1-64 with 16 or 32 bits.
            1 => {
                let Some(low) = le(at, 1) else { return false };
                at += 1;
                (
                    usize::from((tag >> 2) & 0b111) + 4,
                    Some(usize::from(tag >> 5) << 8 | low),
                )
            }
            kind => {
                let n = if kind == 2 { 2 } else { 4 };
                let Some(offset) = le(at, n) else { return false };
                at += n;
                (usize::from(tag >> 2) + 1, Some(offset))
            }
        };
        if offset.is_some_and(|offset| offset == 0 || offset > out) {
            return false;
        }
        match out.checked_add(len) {
            Some(sum) if sum <= claimed => out = sum,
            _ => return false,
        }
    }
    out == claimed
}
