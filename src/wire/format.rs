//! The packed element: how one pending value is stored in the timeout set and
//! the pending list.
//!
//! Redisson packs every pending value with the Lua `struct` library before it
//! stores it, so that equal payloads stay distinct members of the timeout set.
//! Two layouts exist and both can be found in one queue during an upgrade:
//!
//! | [`Format`] | Redisson | Lua format | bytes |
//! | --- | --- | --- | --- |
//! | [`Format::Modern`] | 3.21.1 and later | `Bc0Lc0` | `0x08` · 8 random bytes · u64 LE payload length · payload |
//! | [`Format::Legacy`] | 3.21.0 and earlier | `dLc0` | f64 LE random id · u64 LE payload length · payload |
//!
//! The two are told apart by which layout's length field matches the total
//! length (see [`unpack`] for the one 17-byte overlap). The Lua side of the
//! same rule lives in `lua/lib/element.lua`; both are tested against the bytes
//! captured from real Redisson clients.

use byteorder::{ByteOrder, LittleEndian};
use bytes::{BufMut, Bytes, BytesMut};

/// Length of the random id in a [`Format::Modern`] element (Redisson always writes 8).
pub const MODERN_ID_LEN: usize = 8;
/// Bytes before the payload in a [`Format::Modern`] element.
pub const MODERN_HEADER_LEN: usize = 1 + MODERN_ID_LEN + 8;
/// Bytes before the payload in a [`Format::Legacy`] element.
pub const LEGACY_HEADER_LEN: usize = 8 + 8;

/// The packed-element layout a queue writes.
///
/// Every read path of this crate accepts both layouts, mixed in one queue;
/// the format only chooses what new offers write. Pick the one the Java fleet
/// sharing the queue reads: Java clients of one format cannot read the other.
///
/// ```
/// use delayq::format::Format;
/// assert_eq!(Format::default(), Format::Modern);
/// assert_eq!("legacy".parse::<Format>().unwrap(), Format::Legacy);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// `Bc0Lc0`, written by Redisson 3.21.1 and later (3.x and 4.x).
    #[default]
    Modern,
    /// `dLc0`, written by Redisson 3.21.0 and earlier.
    Legacy,
}

impl Format {
    /// The name used by the CLI and in docs: `modern` or `legacy`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Modern => "modern",
            Format::Legacy => "legacy",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "modern" | "bc0lc0" => Ok(Format::Modern),
            "legacy" | "dlc0" => Ok(Format::Legacy),
            other => Err(format!(
                "unknown element format `{other}` (expected `modern` or `legacy`)"
            )),
        }
    }
}

/// The random id that keeps equal payloads distinct.
///
/// ```
/// use delayq::format::{ElementId, Format};
/// let id = ElementId::random(Format::Legacy);
/// assert_eq!(id.format(), Format::Legacy);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ElementId {
    /// The 8 raw bytes of a [`Format::Modern`] element.
    Modern([u8; MODERN_ID_LEN]),
    /// The double of a [`Format::Legacy`] element (a Java `long` turned into a double by Lua).
    Legacy(f64),
}

impl ElementId {
    /// A fresh random id for `format`, drawn the way Redisson draws it.
    pub fn random(format: Format) -> Self {
        match format {
            Format::Modern => ElementId::Modern(fastrand::u64(..).to_le_bytes()),
            // Java sends a random long as decimal text; Lua's `tonumber` rounds it to a double.
            Format::Legacy => ElementId::Legacy(fastrand::i64(..) as f64),
        }
    }

    /// The 8 bytes the id takes in a packed element.
    pub fn to_bytes(&self) -> [u8; 8] {
        match self {
            ElementId::Modern(raw) => *raw,
            ElementId::Legacy(value) => value.to_le_bytes(),
        }
    }

    /// The format this id belongs to.
    pub fn format(&self) -> Format {
        match self {
            ElementId::Modern(_) => Format::Modern,
            ElementId::Legacy(_) => Format::Legacy,
        }
    }
}

/// An unpacked element: which layout it had, its id and its payload.
///
/// ```
/// use delayq::format::{pack_with_id, unpack, ElementId, Format};
/// let raw = pack_with_id(ElementId::Modern([1; 8]), b"x");
/// let element = unpack(&raw).unwrap();
/// assert_eq!((element.format(), element.payload), (Format::Modern, &b"x"[..]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Element<'a> {
    /// The random id.
    pub id: ElementId,
    /// The codec-encoded value.
    pub payload: &'a [u8],
}

impl Element<'_> {
    /// The layout the element was stored in.
    pub fn format(&self) -> Format {
        self.id.format()
    }
}

/// Packs `payload` with a fresh random id in `format`.
///
/// ```
/// use delayq::format::{pack, unpack, Format};
/// let packed = pack(Format::Modern, b"hello");
/// assert_eq!(packed.len(), 17 + 5);
/// assert_eq!(unpack(&packed).unwrap().payload, b"hello");
/// ```
pub fn pack(format: Format, payload: &[u8]) -> Bytes {
    pack_with_id(ElementId::random(format), payload)
}

/// Packs `payload` with the given id (the id decides the format).
pub fn pack_with_id(id: ElementId, payload: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(MODERN_HEADER_LEN + payload.len());
    match id {
        ElementId::Modern(raw) => {
            out.put_u8(MODERN_ID_LEN as u8);
            out.put_slice(&raw);
        }
        ElementId::Legacy(value) => out.put_f64_le(value),
    }
    out.put_u64_le(payload.len() as u64);
    out.put_slice(payload);
    out.freeze()
}

/// Why bytes are not a packed element of either format.
///
/// ```
/// use delayq::format::unpack;
/// assert_eq!(unpack(b"junk").unwrap_err().len, 4);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{len}-byte value is neither a modern (Bc0Lc0) nor a legacy (dLc0) packed element")]
pub struct Malformed {
    /// Length of the rejected value.
    pub len: usize,
}

/// Unpacks an element of either format.
///
/// A modern element is `0x08`, 8 id bytes, then a length that must equal the
/// remaining bytes; a legacy element is 8 id bytes, then such a length.
/// Exactly one shape satisfies both: 17 bytes `08 xx×7 01 00×8`, which is a
/// modern element with an empty payload (id ending in `01`) and a legacy one
/// whose payload is the single byte `00` (id starting with `08`). It is read
/// as modern, here and in the Lua scripts alike; every other element has one
/// reading only.
///
/// ```
/// use delayq::format::{unpack, Format};
/// // Captured from Redisson 4.7.0 (StringCodec, "hello").
/// let raw = [0x08, 0x50, 0x55, 0x2c, 0xd6, 0x41, 0x3e, 0x20, 0xb4,
///            5, 0, 0, 0, 0, 0, 0, 0, b'h', b'e', b'l', b'l', b'o'];
/// let element = unpack(&raw).unwrap();
/// assert_eq!(element.format(), Format::Modern);
/// assert_eq!(element.payload, b"hello");
/// ```
pub fn unpack(raw: &[u8]) -> Result<Element<'_>, Malformed> {
    let n = raw.len();
    if n >= MODERN_HEADER_LEN && raw[0] as usize == MODERN_ID_LEN {
        let len = LittleEndian::read_u64(&raw[1 + MODERN_ID_LEN..MODERN_HEADER_LEN]);
        if len == (n - MODERN_HEADER_LEN) as u64 {
            let mut id = [0u8; MODERN_ID_LEN];
            id.copy_from_slice(&raw[1..1 + MODERN_ID_LEN]);
            return Ok(Element {
                id: ElementId::Modern(id),
                payload: &raw[MODERN_HEADER_LEN..],
            });
        }
    }
    if n >= LEGACY_HEADER_LEN {
        let len = LittleEndian::read_u64(&raw[8..LEGACY_HEADER_LEN]);
        if len == (n - LEGACY_HEADER_LEN) as u64 {
            let id = LittleEndian::read_f64(&raw[..8]);
            return Ok(Element {
                id: ElementId::Legacy(id),
                payload: &raw[LEGACY_HEADER_LEN..],
            });
        }
    }
    Err(Malformed { len: n })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn modern_pack_matches_redisson_4_7_bytes() {
        // vq_string, "hello", captured from Redisson 4.7.0: id 50552cd6413e20b4.
        let id: [u8; 8] = hex("50552cd6413e20b4").try_into().unwrap();
        let packed = pack_with_id(ElementId::Modern(id), b"hello");
        assert_eq!(
            packed.as_ref(),
            hex("0850552cd6413e20b4050000000000000068656c6c6f").as_slice()
        );
    }

    #[test]
    fn modern_empty_payload_matches_redisson_bytes() {
        let id: [u8; 8] = hex("56705e63e3c4ecad").try_into().unwrap();
        let packed = pack_with_id(ElementId::Modern(id), b"");
        assert_eq!(packed.as_ref(), hex("0856705e63e3c4ecad0000000000000000").as_slice());
        assert_eq!(unpack(&packed).unwrap().payload, b"");
    }

    #[test]
    fn legacy_pack_matches_redisson_3_21_bytes() {
        // vq_long, "42", Redisson 3.21.0 sent random id -3020976592869188164 as text.
        let id = "-3020976592869188164".parse::<f64>().unwrap();
        let packed = pack_with_id(ElementId::Legacy(id), b"42");
        assert_eq!(packed.as_ref(), hex("715e4a1a55f6c4c302000000000000003432").as_slice());
        // Rust's i64 -> f64 rounds exactly as Lua's tonumber does.
        assert_eq!(-3020976592869188164i64 as f64, id);
    }

    #[test]
    fn legacy_empty_payload_unpacks() {
        let raw = hex("f175bb3be239d5430000000000000000");
        let element = unpack(&raw).unwrap();
        assert_eq!(element.format(), Format::Legacy);
        assert_eq!(element.payload, b"");
        assert_eq!(element.id, ElementId::Legacy(6118009178580043045i64 as f64));
    }

    #[test]
    fn both_formats_round_trip() {
        for format in [Format::Modern, Format::Legacy] {
            for payload in [&b""[..], b"x", &[0u8; 300][..]] {
                let packed = pack(format, payload);
                let element = unpack(&packed).unwrap();
                assert_eq!(element.format(), format);
                assert_eq!(element.payload, payload);
            }
        }
    }

    /// Whether `raw` satisfies the legacy layout's length rule.
    fn legacy_shaped(raw: &[u8]) -> bool {
        raw.len() >= LEGACY_HEADER_LEN && LittleEndian::read_u64(&raw[8..16]) == (raw.len() - LEGACY_HEADER_LEN) as u64
    }

    #[test]
    fn formats_overlap_only_in_the_documented_17_byte_shape() {
        for n in 0..600 {
            for last_id_byte in [0u8, 1, 8, 0xff] {
                let payload = vec![0u8; n];
                let mut id = [0x08u8; 8];
                id[7] = last_id_byte;
                let modern = pack_with_id(ElementId::Modern(id), &payload);
                let overlap = n == 0 && last_id_byte == 1;
                assert_eq!(
                    legacy_shaped(&modern),
                    overlap,
                    "payload length {n}, id byte {last_id_byte}"
                );
                assert_eq!(unpack(&modern).unwrap().format(), Format::Modern);
            }
            // A legacy element whose id starts with 0x08 reads as legacy unless it is the overlap.
            let payload = vec![0u8; n];
            let legacy = pack_with_id(
                ElementId::Legacy(f64::from_le_bytes([8, 1, 2, 3, 4, 5, 6, 0x43])),
                &payload,
            );
            let expected = if n == 1 { Format::Modern } else { Format::Legacy };
            assert_eq!(unpack(&legacy).unwrap().format(), expected, "payload length {n}");
        }
    }

    #[test]
    fn truncated_and_wrong_length_elements_are_malformed() {
        let good = pack(Format::Modern, b"payload");
        assert_eq!(unpack(&good[..good.len() - 1]), Err(Malformed { len: good.len() - 1 }));
        assert!(unpack(b"").is_err());
        assert!(unpack(b"not a packed element at all").is_err());
        let mut wrong_len = good.to_vec();
        wrong_len[9] = 99;
        assert!(unpack(&wrong_len).is_err());
        let legacy = pack(Format::Legacy, b"abc");
        let mut extra = legacy.to_vec();
        extra.push(0);
        assert!(unpack(&extra).is_err());
    }

    #[test]
    fn random_ids_differ() {
        let a = pack(Format::Modern, b"same");
        let b = pack(Format::Modern, b"same");
        assert_ne!(a, b);
        let c = pack(Format::Legacy, b"same");
        let d = pack(Format::Legacy, b"same");
        assert_ne!(c, d);
    }
}
