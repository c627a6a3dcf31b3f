//! The length prefix that `LZ4Codec`, `LZ4CodecV2` and `ZStdCodec` put
//! before their data, and the checks every decoder makes on a claimed size
//! before it allocates.

use super::{CompressError, CompressErrorKind, Compression};

/// The prefix: the inner bytes' length as a big-endian Java `int`.
pub(super) const PREFIX: usize = 4;

/// Splits `raw` into the claimed inner length and the compressed data.
pub(super) fn split_prefix(compression: Compression, raw: &[u8]) -> Result<(usize, &[u8]), CompressError> {
    let Some((prefix, data)) = raw.split_first_chunk::<PREFIX>() else {
        return Err(CompressError::new(
            compression,
            CompressErrorKind::Truncated,
            Some(0),
            format!("{} bytes, fewer than the 4-byte length prefix", raw.len()),
        ));
    };
    let claimed = i32::from_be_bytes(*prefix);
    // Java reads an int: a negative length is refused by Java too.
    let claimed = usize::try_from(claimed).map_err(|_| {
        CompressError::new(
            compression,
            CompressErrorKind::LengthMismatch,
            Some(0),
            format!("negative length prefix {claimed}"),
        )
    })?;
    Ok((claimed, data))
}

/// Writes the prefix for `inner_len` bytes into a buffer with room for
/// `capacity` more.
pub(super) fn prefixed(compression: Compression, inner_len: usize, capacity: usize) -> Result<Vec<u8>, CompressError> {
    let len = java_int(compression, inner_len)?;
    let mut out = Vec::with_capacity(PREFIX + capacity);
    out.extend_from_slice(&len.to_be_bytes());
    Ok(out)
}

/// `len` as a Java `int` (array and buffer sizes), or an encoding error.
pub(super) fn java_int(compression: Compression, len: usize) -> Result<i32, CompressError> {
    i32::try_from(len).map_err(|_| {
        CompressError::new(
            compression,
            CompressErrorKind::Encode,
            None,
            format!("{len} inner bytes: over the 2 GiB a Java int can say"),
        )
    })
}

/// Checks a claimed decompressed size before anything is allocated for
/// it: at most `max_size`, and at most what `compressed_len` bytes of the
/// format can expand to (`max_ratio` output bytes per input byte).
pub(super) fn check_claim(
    compression: Compression,
    claimed: usize,
    compressed_len: usize,
    max_ratio: usize,
    max_size: usize,
) -> Result<(), CompressError> {
    if claimed > max_size {
        return Err(CompressError::new(
            compression,
            CompressErrorKind::TooLarge,
            Some(0),
            format!("claims {claimed} decompressed bytes, over the {max_size}-byte limit"),
        ));
    }
    let possible = compressed_len.saturating_mul(max_ratio);
    if claimed > possible {
        return Err(CompressError::new(
            compression,
            CompressErrorKind::LengthMismatch,
            Some(0),
            format!(
                "claims {claimed} decompressed bytes, but {compressed_len} compressed bytes make at most {possible}"
            ),
        ));
    }
    Ok(())
}

/// The error for data that decompresses to another size than claimed.
pub(super) fn length_mismatch(compression: Compression, claimed: usize, produced: &str) -> CompressError {
    CompressError::new(
        compression,
        CompressErrorKind::LengthMismatch,
        Some(0),
        format!("claims {claimed} decompressed bytes, but the data makes {produced}"),
    )
}
