//! The protocol's constants, and a bounds-checked reader of its primitives
//! (big-endian numbers, modified UTF-8).

use super::error::{Result, SerializationError, SerializationErrorKind as Kind};

// Type codes (Java Object Serialization Specification, section 6.4.2).
pub(crate) const TC_NULL: u8 = 0x70;
pub(crate) const TC_REFERENCE: u8 = 0x71;
pub(crate) const TC_CLASSDESC: u8 = 0x72;
pub(crate) const TC_OBJECT: u8 = 0x73;
pub(crate) const TC_STRING: u8 = 0x74;
pub(crate) const TC_ARRAY: u8 = 0x75;
pub(crate) const TC_CLASS: u8 = 0x76;
pub(crate) const TC_BLOCKDATA: u8 = 0x77;
pub(crate) const TC_ENDBLOCKDATA: u8 = 0x78;
pub(crate) const TC_RESET: u8 = 0x79;
pub(crate) const TC_BLOCKDATALONG: u8 = 0x7a;
pub(crate) const TC_EXCEPTION: u8 = 0x7b;
pub(crate) const TC_LONGSTRING: u8 = 0x7c;
pub(crate) const TC_PROXYCLASSDESC: u8 = 0x7d;
pub(crate) const TC_ENUM: u8 = 0x7e;

/// The first handle a stream assigns.
pub(crate) const BASE_HANDLE: u32 = 0x7e_0000;

// Class descriptor flags.
pub(crate) const SC_WRITE_METHOD: u8 = 0x01;
pub(crate) const SC_SERIALIZABLE: u8 = 0x02;
pub(crate) const SC_EXTERNALIZABLE: u8 = 0x04;
pub(crate) const SC_BLOCK_DATA: u8 = 0x08;
pub(crate) const SC_ENUM: u8 = 0x10;

/// The bytes of a payload, read front to back.
pub(crate) struct Stream<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Stream<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Stream { bytes, pos: 0 }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Goes on reading from `pos` (Java serialization inside a Kryo payload).
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.bytes.len());
    }

    /// The bytes read from `start` to here.
    pub(crate) fn since(&self, start: usize) -> &'a [u8] {
        &self.bytes[start.min(self.pos)..self.pos]
    }

    /// The bytes not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.bytes[self.pos..]
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(SerializationError::at(
                Kind::Truncated,
                self.pos,
                format!("{what}: {n} bytes needed, {} left", self.remaining()),
            ));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn i32(&mut self, what: &str) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn i64(&mut self, what: &str) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array(what)?))
    }

    /// Checks that `count` items of at least `unit` bytes each fit in the
    /// bytes left, before anything is allocated for them. `at` is where the
    /// count was read.
    pub(crate) fn claim(&self, count: u64, unit: u64, at: usize, what: &str) -> Result<usize> {
        match count.checked_mul(unit) {
            Some(n) if n <= self.remaining() as u64 => Ok(count as usize),
            _ => Err(SerializationError::at(
                Kind::TooLarge,
                at,
                format!("{what} claims {count} × {unit} bytes, only {} left", self.remaining()),
            )),
        }
    }

    /// `writeUTF`'s form: a 2-byte length, then modified UTF-8.
    pub(crate) fn utf(&mut self, what: &str) -> Result<String> {
        let at = self.pos;
        let len = self.u16(what)?;
        let len = self.claim(u64::from(len), 1, at, what)?;
        let start = self.pos;
        let bytes = self.take(len, what)?;
        modified_utf8(bytes, start)
    }

    /// [`utf`](Self::utf) for a class or field name, which every payload
    /// of a class repeats: shared with earlier payloads read on this
    /// thread ([`crate::interned`]).
    pub(crate) fn shared_utf(&mut self, what: &str) -> Result<std::rc::Rc<str>> {
        let at = self.pos;
        let len = self.u16(what)?;
        let len = self.claim(u64::from(len), 1, at, what)?;
        let start = self.pos;
        let bytes = self.take(len, what)?;
        crate::interned::decoded(bytes, |bytes| modified_utf8(bytes, start))
    }

    /// `TC_LONGSTRING`'s form: an 8-byte length, then modified UTF-8.
    pub(crate) fn long_utf(&mut self, what: &str) -> Result<String> {
        let at = self.pos;
        let len = self.i64(what)?;
        if len < 0 {
            return Err(SerializationError::at(
                Kind::Malformed,
                at,
                format!("{what}: negative length {len}"),
            ));
        }
        let len = self.claim(len as u64, 1, at, what)?;
        let start = self.pos;
        let bytes = self.take(len, what)?;
        modified_utf8(bytes, start)
    }
}

/// Java's modified UTF-8 (`DataInput.readUTF`): UTF-16 code units in one to
/// three bytes each, `U+0000` as `C0 80`, a character outside the BMP as two
/// 3-byte surrogates. Lone surrogates, which Java writes, have no Rust
/// form: `Unsupported`.
pub(crate) fn modified_utf8(bytes: &[u8], start: usize) -> Result<String> {
    if bytes.is_ascii() {
        // Every byte below 0x80 is one code unit (a raw 0 byte included, as
        // Java reads it), the same in UTF-8: copied whole.
        if let Ok(text) = std::str::from_utf8(bytes) {
            return Ok(text.to_owned());
        }
    }
    let bad =
        |i: usize, why: &str| SerializationError::at(Kind::Malformed, start + i, format!("modified UTF-8: {why}"));
    let mut units = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let cont = |k: usize| match bytes.get(i + k) {
            Some(&c) if c & 0xc0 == 0x80 => Ok(u16::from(c & 0x3f)),
            _ => Err(bad(i, "a multi-byte sequence is cut short")),
        };
        let (unit, len) = match b >> 4 {
            0..=7 => (u16::from(b), 1),
            12 | 13 => ((u16::from(b & 0x1f) << 6) | cont(1)?, 2),
            14 => ((u16::from(b & 0x0f) << 12) | (cont(1)? << 6) | cont(2)?, 3),
            _ => return Err(bad(i, &format!("byte {b:#04x} starts no character"))),
        };
        units.push(unit);
        i += len;
    }
    String::from_utf16(&units).map_err(|_| {
        SerializationError::at(
            Kind::Unsupported,
            start,
            "a java.lang.String holding a lone UTF-16 surrogate, which Rust strings cannot hold",
        )
    })
}

/// Encodes a string as modified UTF-8.
pub(crate) fn to_modified_utf8(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for unit in text.encode_utf16() {
        match unit {
            0x0001..=0x007f => out.push(unit as u8),
            0x0000 | 0x0080..=0x07ff => {
                out.push(0xc0 | (unit >> 6) as u8);
                out.push(0x80 | (unit & 0x3f) as u8);
            }
            _ => {
                out.push(0xe0 | (unit >> 12) as u8);
                out.push(0x80 | ((unit >> 6) & 0x3f) as u8);
                out.push(0x80 | (unit & 0x3f) as u8);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_utf8_both_ways() {
        for text in ["", "abc", "\0", "zażółć 🚀", "\u{7ff}\u{800}\u{ffff}"] {
            let bytes = to_modified_utf8(text);
            assert_eq!(modified_utf8(&bytes, 0).unwrap(), text);
        }
        assert_eq!(to_modified_utf8("\0"), [0xc0, 0x80]);
        assert_eq!(to_modified_utf8("🚀"), [0xed, 0xa0, 0xbd, 0xed, 0xba, 0x80]);
        // A cut sequence, a 4-byte UTF-8 lead.
        for bad in [&[0xc5][..], &[0xf0, 0x9f, 0x9a, 0x80]] {
            assert_eq!(modified_utf8(bad, 0).unwrap_err().kind(), Kind::Malformed);
        }
        // A lone high surrogate: Java writes one, Rust cannot hold it.
        assert_eq!(
            modified_utf8(&[0xed, 0xa0, 0xbd], 0).unwrap_err().kind(),
            Kind::Unsupported
        );
    }
}
