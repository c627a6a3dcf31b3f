//! Kryo's `Input`: varints, fixed-width numbers and strings, read from a
//! byte slice that is never trusted (every length is checked against what
//! is left; nesting is counted).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::serialization::embedded::Embedded;
use crate::serialization::{SerializationError, SerializationErrorKind};

use super::error::{KryoError, KryoErrorKind, Result};
use super::value::KryoValue;
use super::{MAX_ALL_NULL, MAX_DEPTH};
use crate::bounds::{self, max_value_bytes};

pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    depth: usize,
    /// Elements all-null collections may still claim in this payload (they
    /// take no bytes, so their count is bounded per payload, not by its size).
    nulls_left: u32,
    /// Bytes the decoded value may still take ([`max_value_bytes`]).
    value_left: usize,
    /// Class names by the name id Kryo gave them in this payload: ids
    /// 0, 1, 2... as Kryo numbers them, then any other (ids are the
    /// payload's to choose).
    names: Vec<Arc<str>>,
    other_names: HashMap<u32, Arc<str>>,
    /// The payload's Java serialization streams (one per `JavaSerializer`
    /// instance Redisson registers: each `Collections` view class, `EnumMap`,
    /// throwables), and each object read from them: its stream and end.
    java: Vec<(String, Embedded<'a>)>,
    java_ends: Vec<(usize, usize)>,
    /// The second reading of a payload with Java objects: their values, in
    /// order, with where each ends.
    java_values: VecDeque<(usize, KryoValue)>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            depth: 0,
            nulls_left: MAX_ALL_NULL,
            value_left: max_value_bytes(buf.len()),
            names: Vec::new(),
            other_names: HashMap::new(),
            java: Vec::new(),
            java_ends: Vec::new(),
            java_values: VecDeque::new(),
        }
    }

    /// Whether the bytes here are Kryo `JavaSerializer` data: the payload's
    /// Java stream starts here, or has started already.
    pub(super) fn at_java_object(&self, class: &str) -> bool {
        let key = java_stream(class);
        self.java.iter().any(|(k, _)| k == key)
            || !self.java_values.is_empty()
            || self.buf[self.pos..].starts_with(&crate::serialization::MAGIC)
    }

    /// An object written by Kryo's `JavaSerializer`: its value on the
    /// second reading; `Null` in its place on the first, which only reads
    /// it into the payload's Java stream.
    pub(super) fn java_serialized(&mut self, class: &str) -> Result<KryoValue> {
        if let Some((end, value)) = self.java_values.pop_front() {
            self.pos = end;
            self.charge(bounds::footprint(&value))?;
            return Ok(value);
        }
        let key = java_stream(class);
        let stream = match self.java.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                self.java.push((key.to_owned(), Embedded::new(self.buf)));
                self.java.len() - 1
            }
        };
        let end = self.java[stream].1.read(self.pos).map_err(|e| from_java(e, class))?;
        self.pos = end;
        self.java_ends.push((stream, end));
        Ok(KryoValue::Null)
    }

    /// Whether the first reading met Java objects.
    pub(super) fn has_java_objects(&self) -> bool {
        !self.java.is_empty()
    }

    /// The Java objects read on a first reading, as values with where each
    /// ends, in payload order; between them they take at most the
    /// payload's [`max_value_bytes`].
    pub(super) fn java_objects(&mut self) -> Result<VecDeque<(usize, KryoValue)>> {
        let mut left = max_value_bytes(self.buf.len());
        // Refused before any of them is built when all of them would not fit.
        let total = self
            .java
            .iter()
            .fold(0usize, |sum, (_, java)| sum.saturating_add(java.value_bytes()));
        if total > left {
            return Err(self.error(
                KryoErrorKind::TooLarge,
                format!(
                    "the Java objects inside (Kryo's JavaSerializer) would take {total} bytes, more than the {left} \
                     a payload of {} bytes may (256 per byte, plus 1 MiB)",
                    self.buf.len()
                ),
            ));
        }
        let mut streams = Vec::with_capacity(self.java.len());
        for (_, java) in self.java.drain(..) {
            let values = java.finish(left).map_err(|e| from_java(e, "a JavaSerializer object"))?;
            left = left.saturating_sub(values.iter().map(bounds::footprint).sum());
            streams.push(values.into_iter());
        }
        let mut out = VecDeque::with_capacity(self.java_ends.len());
        for (stream, end) in self.java_ends.drain(..) {
            let value = streams[stream].next().ok_or_else(|| {
                KryoError::new(KryoErrorKind::Malformed, Some(end), "a Java object without its value")
            })?;
            out.push_back((end, value));
        }
        Ok(out)
    }

    /// Starts a second reading with the values of the Java objects.
    pub(super) fn with_java_values(mut self, values: VecDeque<(usize, KryoValue)>) -> Self {
        self.java_values = values;
        self
    }

    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    pub(super) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(super) fn error(&self, kind: KryoErrorKind, message: impl Into<String>) -> KryoError {
        KryoError::new(kind, Some(self.pos), message)
    }

    pub(super) fn mismatch(&self, message: impl Into<String>) -> KryoError {
        self.error(KryoErrorKind::SchemaMismatch, message)
    }

    fn truncated(&self) -> KryoError {
        self.error(KryoErrorKind::Truncated, "the payload ends inside a value")
    }

    /// Fails unless every byte was read.
    pub(super) fn finish(&self) -> Result<()> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(self.error(
                KryoErrorKind::TrailingBytes,
                format!(
                    "{} bytes left after the value (does the schema or Rust type have every field of the Java class?)",
                    self.remaining()
                ),
            ))
        }
    }

    /// One more level of nesting; fails past [`MAX_DEPTH`].
    pub(super) fn enter(&mut self) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(
                KryoErrorKind::TooDeep,
                format!("values nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.depth -= 1;
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    pub(super) fn u8(&mut self) -> Result<u8> {
        let b = self.peek().ok_or_else(|| self.truncated())?;
        self.pos += 1;
        Ok(b)
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.truncated());
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(super) fn bool(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(self.error(KryoErrorKind::Malformed, format!("boolean byte {b:#04x}"))),
        }
    }

    pub(super) fn i16(&mut self) -> Result<i16> {
        Ok(i16::from_le_bytes(self.array()?))
    }

    pub(super) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    pub(super) fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    pub(super) fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }

    pub(super) fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    pub(super) fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// `readVarInt(true)`: up to 5 bytes, 7 bits each.
    pub(super) fn var_u32(&mut self) -> Result<u32> {
        let mut result: u32 = 0;
        for i in 0..5 {
            let b = self.u8()?;
            result |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(result);
            }
        }
        Err(self.error(KryoErrorKind::Malformed, "varint longer than 5 bytes"))
    }

    /// `readVarInt(false)`: zig-zag.
    pub(super) fn var_i32(&mut self) -> Result<i32> {
        let v = self.var_u32()?;
        Ok(((v >> 1) as i32) ^ -((v & 1) as i32))
    }

    /// `readVarLong(true)`: 8 bytes of 7 bits, then a 9th of 8 bits.
    pub(super) fn var_u64(&mut self) -> Result<u64> {
        let mut result: u64 = 0;
        for i in 0..8 {
            let b = self.u8()?;
            result |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(result);
            }
        }
        Ok(result | u64::from(self.u8()?) << 56)
    }

    /// `readVarLong(false)`: zig-zag.
    pub(super) fn var_i64(&mut self) -> Result<i64> {
        let v = self.var_u64()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    /// `readVarIntFlag`: the top bit of the first byte is a flag, then a
    /// varint with 6 bits in the first byte.
    pub(super) fn var_flag(&mut self) -> Result<(bool, u32)> {
        let first = self.u8()?;
        let flag = first & 0x80 != 0;
        let mut result = u32::from(first & 0x3f);
        if first & 0x40 != 0 {
            for i in 0..4 {
                let b = self.u8()?;
                result |= u32::from(b & 0x7f) << (6 + 7 * i);
                if b & 0x80 == 0 {
                    return Ok((flag, result));
                }
            }
            return Err(self.error(KryoErrorKind::Malformed, "varint longer than 5 bytes"));
        }
        Ok((flag, result))
    }

    /// A count of things that each take at least one byte: never more than
    /// what is left, so nothing is allocated for a forged length.
    pub(super) fn count(&mut self, n: u32, what: &str) -> Result<usize> {
        let n = n as usize;
        if n > self.remaining() {
            return Err(self.error(
                KryoErrorKind::TooLarge,
                format!("{what} of {n} is more than the {} bytes left", self.remaining()),
            ));
        }
        Ok(n)
    }

    /// The size of an all-null collection, taken from what this payload may
    /// still claim ([`MAX_ALL_NULL`] in all), its elements counted against
    /// the value's bytes before they are made.
    pub(super) fn all_null_count(&mut self, len: u32) -> Result<usize> {
        if len > self.nulls_left {
            return Err(self.error(
                KryoErrorKind::TooLarge,
                format!("all-null collections of more than {MAX_ALL_NULL} elements in one payload"),
            ));
        }
        self.charge((len as usize).saturating_mul(bounds::VALUE))?;
        self.nulls_left -= len;
        Ok(len as usize)
    }

    /// Counts `bytes` of the decoded value against [`max_value_bytes`],
    /// before they are allocated.
    pub(super) fn charge(&mut self, bytes: usize) -> Result<()> {
        match self.value_left.checked_sub(bytes) {
            Some(left) => {
                self.value_left = left;
                Ok(())
            }
            None => Err(self.error(
                KryoErrorKind::TooLarge,
                format!(
                    "the value would take more than {} bytes (256 per payload byte, plus 1 MiB)",
                    max_value_bytes(self.buf.len())
                ),
            )),
        }
    }

    /// `readString`: `None` for Java's null.
    pub(super) fn string(&mut self) -> Result<Option<String>> {
        let first = self.peek().ok_or_else(|| self.truncated())?;
        if first & 0x80 == 0 {
            return self.ascii().map(Some);
        }
        let (_, len) = self.var_flag()?;
        match len {
            0 => Ok(None),
            1 => Ok(Some(String::new())),
            n => {
                let chars = self.count(n - 1, "a string length")?;
                self.utf8_chars(chars).map(Some)
            }
        }
    }

    /// ASCII bytes up to and including one with the top bit set.
    fn ascii(&mut self) -> Result<String> {
        let start = self.pos;
        let end = self.buf[start..]
            .iter()
            .position(|b| b & 0x80 != 0)
            .ok_or_else(|| self.error(KryoErrorKind::Truncated, "an ASCII string without its last byte"))?;
        let mut text = self.buf[start..=start + end].to_vec();
        if let Some(last) = text.last_mut() {
            *last &= 0x7f;
        }
        self.pos = start + end + 1;
        // Every byte is below 0x80 now: ASCII, so UTF-8.
        Ok(String::from_utf8(text).expect("ASCII"))
    }

    /// `chars` UTF-16 code units, each written as 1 to 3 bytes (surrogates
    /// one by one, as Java's `String.charAt` gives them).
    fn utf8_chars(&mut self, chars: usize) -> Result<String> {
        // One byte per character when all are ASCII (Kryo writes strings
        // of one character, or over 32, this way).
        if let Some(bytes) = self.buf.get(self.pos..self.pos + chars)
            && bytes.is_ascii()
        {
            self.pos += chars;
            return Ok(String::from_utf8(bytes.to_vec()).expect("ASCII"));
        }
        let mut units: Vec<u16> = Vec::with_capacity(chars);
        for _ in 0..chars {
            let b = self.u8()?;
            let unit = match b >> 4 {
                0..=7 => u16::from(b),
                12 | 13 => {
                    let b2 = self.u8()?;
                    (u16::from(b & 0x1f) << 6) | u16::from(b2 & 0x3f)
                }
                14 => {
                    let rest = self.take(2)?;
                    (u16::from(b & 0x0f) << 12) | (u16::from(rest[0] & 0x3f) << 6) | u16::from(rest[1] & 0x3f)
                }
                _ => {
                    return Err(self.error(
                        KryoErrorKind::Malformed,
                        format!("byte {b:#04x} cannot start a character in Kryo's UTF-8"),
                    ))
                }
            };
            units.push(unit);
        }
        // Java writes such a string (its chars need not pair up): valid
        // bytes, a value delayq cannot hold.
        String::from_utf16(&units).map_err(|_| {
            self.error(
                KryoErrorKind::Unsupported,
                "a java.lang.String holding a lone UTF-16 surrogate, which Rust strings cannot hold",
            )
        })
    }

    /// Remembers the class name Kryo gave `id` in this payload.
    /// (Only for an id not [`known_name`](Self::known_name) yet.)
    pub(super) fn remember_name(&mut self, id: u32, name: Arc<str>) {
        if id as usize == self.names.len() {
            self.names.push(name);
        } else {
            self.other_names.insert(id, name);
        }
    }

    pub(super) fn known_name(&self, id: u32) -> Option<Arc<str>> {
        match self.names.get(id as usize) {
            Some(name) => Some(name.clone()),
            None => self.other_names.get(&id).cloned(),
        }
    }
}

/// Which of Redisson's `JavaSerializer` instances writes a class: each
/// `Collections` view class has its own, `EnumMap` one, throwables (and
/// any other class Kryo hands to Java serialization) one.
pub(super) fn java_stream(class: &str) -> &str {
    if class.starts_with("java.util.Collections$") || class == "java.util.EnumMap" {
        class
    } else {
        "java.lang.Throwable"
    }
}

/// An error of the Java serialization inside a Kryo payload, as Kryo's.
fn from_java(e: SerializationError, class: &str) -> KryoError {
    use SerializationErrorKind as S;
    let kind = match e.kind() {
        S::Truncated => KryoErrorKind::Truncated,
        S::TooLarge => KryoErrorKind::TooLarge,
        S::TooDeep => KryoErrorKind::TooDeep,
        S::Unsupported | S::Cyclic => KryoErrorKind::Unsupported,
        _ => KryoErrorKind::Malformed,
    };
    KryoError::new(
        kind,
        e.offset(),
        format!(
            "{} (Java serialization, Kryo's JavaSerializer): {}",
            super::class::shown(class),
            e.message()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_read_as_kryo_writes_them() {
        assert_eq!(Reader::new(&[0x54]).var_i64().unwrap(), 42);
        assert_eq!(Reader::new(&[0x01]).var_i64().unwrap(), -1);
        let max = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(Reader::new(&max).var_i64().unwrap(), i64::MAX);
        assert_eq!(Reader::new(&[0x0e]).var_i32().unwrap(), 7);
        assert_eq!(Reader::new(&[0x84]).var_flag().unwrap(), (true, 4));
        assert_eq!(Reader::new(&[0x43, 0x01]).var_flag().unwrap(), (false, 67));
    }

    #[test]
    fn strings_ascii_utf8_null_and_empty() {
        assert_eq!(Reader::new(b"order-4\xb2").string().unwrap().unwrap(), "order-42");
        assert_eq!(Reader::new(&[0x80]).string().unwrap(), None);
        assert_eq!(Reader::new(&[0x81]).string().unwrap().unwrap(), "");
        assert_eq!(Reader::new(&[0x82, b'x']).string().unwrap().unwrap(), "x");
        let rocket = [0x83, 0xed, 0xa0, 0xbd, 0xed, 0xba, 0x80];
        assert_eq!(Reader::new(&rocket).string().unwrap().unwrap(), "🚀");
    }

    #[test]
    fn class_name_ids_in_any_order() {
        // Kryo numbers names 0, 1, 2...; a payload may use any ids.
        let mut r = Reader::new(&[]);
        for (id, name) in [(3, "a"), (0, "b"), (1, "c")] {
            assert_eq!(r.known_name(id), None);
            r.remember_name(id, name.into());
        }
        assert_eq!(r.known_name(2), None);
        r.remember_name(2, "d".into());
        let names: Vec<_> = (0..5).map(|id| r.known_name(id)).collect();
        let want = [Some("b"), Some("c"), Some("d"), Some("a"), None];
        assert_eq!(names, want.map(|n| n.map(Arc::from)));
    }

    #[test]
    fn forged_lengths_and_cut_input_are_errors_not_allocations() {
        // A string claiming 2^31 characters in 5 bytes.
        let err = Reader::new(&[0xff, 0xff, 0xff, 0xff, 0x0f]).string().unwrap_err();
        assert_eq!(err.kind(), KryoErrorKind::TooLarge);
        assert_eq!(
            Reader::new(&[0x83, b'a', 0xc5]).string().unwrap_err().kind(),
            KryoErrorKind::Truncated
        );
        assert_eq!(
            Reader::new(&[0x83, b'a']).string().unwrap_err().kind(),
            KryoErrorKind::TooLarge
        );
        assert_eq!(
            Reader::new(b"abc").string().unwrap_err().kind(),
            KryoErrorKind::Truncated
        );
        // Java writes a lone surrogate; Rust cannot hold one.
        let lone = [0x82, 0xed, 0xa0, 0xbd];
        assert_eq!(
            Reader::new(&lone).string().unwrap_err().kind(),
            KryoErrorKind::Unsupported
        );
    }
}
