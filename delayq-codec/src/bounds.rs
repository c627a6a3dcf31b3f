//! How much memory decoding a payload may take: a bound linear in the
//! payload's (decompressed) size, checked before the value is built.
//!
//! A decoded [`KryoValue`] is a tree: every Java value in it is a 64-byte
//! [`KryoValue`] (a POJO field a 144-byte [`KryoField`]) plus the text and
//! bytes it owns. Java serialization and River share objects by
//! back-reference, so a few bytes can stand for a large tree (a list
//! holding the list before it twice, thirty times over, is 2^30 values;
//! a 2 KB LZ4 payload decompresses to half a megabyte of references). The
//! decoders of Kryo, Java serialization and River therefore count what the
//! value will take, in bytes, and refuse a payload whose value would take
//! more than [`max_value_bytes`] with a typed `TooLarge` error:
//!
//! - Java serialization and River read the payload into an arena first (each
//!   shared object once) and know the size of the tree each object stands for
//!   before anything is copied out of it;
//! - Kryo has no back-references; it counts each value as it reads it, and an
//!   all-null collection (its size alone, no bytes per element) counts its
//!   elements before they are made.
//!
//! A decode as a whole (the decompressed bytes, the decoder's own working
//! memory, and the value) allocates at most [`max_decode_bytes`]; the
//! `decode_alloc` test binary measures it with a counting allocator for
//! hostile payloads of each codec, inside the compression wrappers too.
//!
//! ```
//! use delayq_codec::bounds::{max_decode_bytes, max_value_bytes};
//!
//! // A 100 KB payload: its value takes at most 26.6 MB, the whole decode 52.2 MB.
//! assert_eq!(max_value_bytes(100_000), 256 * 100_000 + (1 << 20));
//! assert_eq!(max_decode_bytes(100_000), 512 * 100_000 + (2 << 20));
//! ```

use std::mem::size_of;

use crate::kryo::java_type::Repr;
use crate::kryo::{JavaTime, JavaType, KryoField, KryoValue, ZoneId};

/// Bytes a decoded value may take per byte of payload, beyond
/// [`VALUE_FLOOR`]: a one-byte Java `null` or `boolean` becomes a 64-byte
/// [`KryoValue`], a one-byte `boolean` field of a POJO a 144-byte
/// [`KryoField`] with its name, so real payloads take up to about 150; what
/// back-references add past 256 is refused.
///
/// ```
/// assert_eq!(delayq_codec::bounds::MAX_VALUE_BYTES_PER_BYTE, 256);
/// ```
pub const MAX_VALUE_BYTES_PER_BYTE: usize = 256;

/// What any value may take, however short its payload (1 MiB).
///
/// ```
/// assert_eq!(delayq_codec::bounds::VALUE_FLOOR, 1 << 20);
/// ```
pub const VALUE_FLOOR: usize = 1 << 20;

/// Bytes a whole decode may allocate per byte of (decompressed) payload,
/// beyond twice [`VALUE_FLOOR`]: the value, and as much again for the
/// decompressed bytes and the decoder's working memory (the arena of Java
/// serialization and River: a node per value read, a slot per reference).
///
/// ```
/// assert_eq!(delayq_codec::bounds::MAX_DECODE_BYTES_PER_BYTE, 512);
/// ```
pub const MAX_DECODE_BYTES_PER_BYTE: usize = 2 * MAX_VALUE_BYTES_PER_BYTE;

/// The most bytes the value decoded from a payload of `payload_len` bytes
/// (decompressed) may take: 256 per byte, plus 1 MiB.
///
/// ```
/// assert_eq!(delayq_codec::bounds::max_value_bytes(0), 1 << 20);
/// ```
pub fn max_value_bytes(payload_len: usize) -> usize {
    payload_len
        .saturating_mul(MAX_VALUE_BYTES_PER_BYTE)
        .saturating_add(VALUE_FLOOR)
}

/// The most bytes decoding a payload of `payload_len` bytes (decompressed)
/// may allocate in all: 512 per byte, plus 2 MiB.
///
/// ```
/// assert_eq!(delayq_codec::bounds::max_decode_bytes(1), 512 + (2 << 20));
/// ```
pub fn max_decode_bytes(payload_len: usize) -> usize {
    payload_len
        .saturating_mul(MAX_DECODE_BYTES_PER_BYTE)
        .saturating_add(2 * VALUE_FLOOR)
}

/// What one value takes inside its parent (or as the root).
pub(crate) const VALUE: usize = size_of::<KryoValue>();

/// What a POJO field takes besides its value, its name and its type's heap.
pub(crate) const FIELD: usize = size_of::<KryoField>() - VALUE;

/// What a value takes inside its parent (or as the root), children
/// included: its 64 bytes and what it owns.
pub(crate) fn footprint(value: &KryoValue) -> usize {
    VALUE
        + match value {
            KryoValue::Null
            | KryoValue::Boolean(_)
            | KryoValue::Byte(_)
            | KryoValue::Char(_)
            | KryoValue::Short(_)
            | KryoValue::Int(_)
            | KryoValue::Long(_)
            | KryoValue::Float(_)
            | KryoValue::Double(_)
            | KryoValue::Uuid(_)
            | KryoValue::Date(_)
            | KryoValue::Instant { .. } => 0,
            KryoValue::String(s) => s.len(),
            KryoValue::Bytes(b) | KryoValue::BigInteger(b) => b.len(),
            KryoValue::BigDecimal { unscaled, .. } => unscaled.len(),
            KryoValue::Enum { class, name, .. } => class.len() + name.as_ref().map_or(0, String::len),
            KryoValue::Collection { class, items } => class.len() + items.iter().map(footprint).sum::<usize>(),
            KryoValue::Map { class, entries } => {
                class.len() + entries.iter().map(|(k, v)| footprint(k) + footprint(v)).sum::<usize>()
            }
            KryoValue::Time(time) => match time {
                JavaTime::ZonedDateTime(_, _, ZoneId::Region(zone)) | JavaTime::ZoneRegion(zone) => zone.len(),
                _ => 0,
            },
            KryoValue::Wrapped { class, value } => class.len() + footprint(value),
            KryoValue::EnumSet { element, items, .. } => element.len() + items.iter().map(footprint).sum::<usize>(),
            KryoValue::Throwable { class, message, cause } => {
                class.len() + message.as_ref().map_or(0, String::len) + cause.as_deref().map_or(0, footprint)
            }
            KryoValue::Object { class, fields } => {
                class.len()
                    + fields
                        .iter()
                        .map(|f| field(&f.name, &f.declared) + footprint(&f.value))
                        .sum::<usize>()
            }
        }
}

/// A POJO field besides its value: the field, its name, its declared type.
pub(crate) fn field(name: &str, declared: &JavaType) -> usize {
    FIELD + name.len() + type_heap(declared)
}

/// The heap a declared type owns (a clone of it allocates as much).
pub(crate) fn type_heap(ty: &JavaType) -> usize {
    match &ty.0 {
        Repr::Primitive(_) => 0,
        Repr::Class { name, args, .. } => {
            name.len() + args.len() * size_of::<JavaType>() + args.iter().map(type_heap).sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound's arithmetic counts 64 bytes a value: a new variant that
    /// grows [`KryoValue`] grows every decoded value.
    #[test]
    fn a_value_is_64_bytes() {
        assert_eq!(VALUE, 64);
    }
}
