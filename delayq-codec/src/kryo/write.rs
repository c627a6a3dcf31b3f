//! Kryo's `Output`: the same encodings as [`read`](super::read), written
//! byte for byte as Java's Kryo 5 writes them.

use std::collections::HashMap;

pub(crate) struct Writer {
    pub out: Vec<u8>,
    /// Name ids of the classes already written by name in this payload.
    names: HashMap<String, u32>,
    /// The payload's Java serialization streams (Kryo's `JavaSerializer`:
    /// one per serializer instance, each object continuing its stream).
    java: Vec<(String, JavaStream)>,
    /// Whether a class in the default package (`Shade`) is written: a
    /// value read from Java says it is one; a Rust type's bare name is not.
    pub(super) bare_names: bool,
}

type JavaStream = crate::serialization::write::Writer<'static>;

impl Writer {
    pub(super) fn new() -> Self {
        Self::with_capacity(64)
    }

    pub(super) fn with_capacity(bytes: usize) -> Self {
        Writer {
            out: Vec::with_capacity(bytes),
            names: HashMap::new(),
            java: Vec::new(),
            bare_names: false,
        }
    }

    /// An object Kryo's `JavaSerializer` writes: Java serialization in
    /// the payload's stream `stream` (its header before its first object).
    pub(super) fn java_object(
        &mut self,
        stream: &str,
        value: &crate::kryo::KryoValue,
    ) -> Result<(), crate::serialization::SerializationError> {
        let i = match self.java.iter().position(|(k, _)| *k == stream) {
            Some(i) => i,
            None => {
                self.java.push((stream.to_owned(), JavaStream::new(Default::default())));
                self.java.len() - 1
            }
        };
        // Java's ObjectInputStream builds a TreeMap from the order written.
        use crate::jdk::sorted::{in_natural_order, JavaReads};
        let sorted = in_natural_order(value, JavaReads::InOrderWritten)
            .map_err(crate::serialization::SerializationError::encode)?;
        let java = &mut self.java[i].1;
        java.value(sorted.as_ref().unwrap_or(value))?;
        let bytes = java.take_written();
        self.out.extend_from_slice(&bytes);
        Ok(())
    }

    pub(super) fn u8(&mut self, b: u8) {
        self.out.push(b);
    }

    pub(super) fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }

    pub(super) fn bool(&mut self, v: bool) {
        self.out.push(u8::from(v));
    }

    pub(super) fn i16(&mut self, v: i16) {
        self.bytes(&v.to_le_bytes());
    }

    pub(super) fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }

    pub(super) fn i64(&mut self, v: i64) {
        self.bytes(&v.to_le_bytes());
    }

    pub(super) fn f32(&mut self, v: f32) {
        self.bytes(&v.to_le_bytes());
    }

    pub(super) fn f64(&mut self, v: f64) {
        self.bytes(&v.to_le_bytes());
    }

    /// `writeVarInt(v, true)`.
    pub(super) fn var_u32(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    /// `writeVarInt(v, false)`.
    pub(super) fn var_i32(&mut self, v: i32) {
        self.var_u32(((v << 1) ^ (v >> 31)) as u32);
    }

    /// `writeVarLong(v, true)`: the 9th byte, if any, keeps all 8 bits.
    pub(super) fn var_u64(&mut self, mut v: u64) {
        for _ in 0..8 {
            if v < 0x80 {
                self.out.push(v as u8);
                return;
            }
            self.out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    /// `writeVarLong(v, false)`.
    pub(super) fn var_i64(&mut self, v: i64) {
        self.var_u64(((v << 1) ^ (v >> 63)) as u64);
    }

    /// `writeVarIntFlag(flag, v, true)`.
    pub(super) fn var_flag(&mut self, flag: bool, v: u32) {
        let first = (v & 0x3f) as u8 | if flag { 0x80 } else { 0 };
        let rest = v >> 6;
        if rest == 0 {
            self.out.push(first);
        } else {
            self.out.push(first | 0x40);
            self.var_u32(rest);
        }
    }

    /// A collection or string length as Kryo writes it (`length + 1`).
    pub(super) fn len_plus_one(len: usize) -> Result<u32, super::KryoError> {
        u32::try_from(len)
            .ok()
            .and_then(|n| n.checked_add(1))
            .filter(|&n| n <= i32::MAX as u32)
            .ok_or_else(|| super::KryoError::encode(format!("{len} elements is more than a Java array can hold")))
    }

    /// `writeString`: `None` is Java's null.
    pub(super) fn string(&mut self, value: Option<&str>) -> Result<(), super::KryoError> {
        let Some(value) = value else {
            self.out.push(0x80);
            return Ok(());
        };
        // Java counts UTF-16 code units.
        let units = value.encode_utf16().count();
        if units == 0 {
            self.out.push(0x81);
        } else if units > 1 && units <= 32 && value.is_ascii() {
            self.bytes(value.as_bytes());
            *self.out.last_mut().expect("at least two bytes") |= 0x80;
        } else {
            self.var_flag(true, Self::len_plus_one(units)?);
            for unit in value.encode_utf16() {
                self.utf16_unit(unit);
            }
        }
        Ok(())
    }

    fn utf16_unit(&mut self, c: u16) {
        if c <= 0x7f {
            self.out.push(c as u8);
        } else if c > 0x7ff {
            self.out.push(0xe0 | (c >> 12 & 0x0f) as u8);
            self.out.push(0x80 | (c >> 6 & 0x3f) as u8);
            self.out.push(0x80 | (c & 0x3f) as u8);
        } else {
            self.out.push(0xc0 | (c >> 6 & 0x1f) as u8);
            self.out.push(0x80 | (c & 0x3f) as u8);
        }
    }

    /// `writeAscii`, as class names are written.
    pub(super) fn ascii(&mut self, value: &str) {
        match value.len() {
            0 => self.out.push(0x81),
            1 => {
                self.out.push(0x82);
                self.out.push(value.as_bytes()[0]);
            }
            _ => {
                self.bytes(value.as_bytes());
                *self.out.last_mut().expect("at least two bytes") |= 0x80;
            }
        }
    }

    /// `DefaultClassResolver.writeName`: `0x01`, the name id, and the name
    /// the first time this payload mentions the class.
    pub(super) fn class_name(&mut self, name: &str) -> Result<(), super::KryoError> {
        self.out.push(0x01);
        if let Some(&id) = self.names.get(name) {
            self.var_u32(id);
            return Ok(());
        }
        let id = self.names.len() as u32;
        self.names.insert(name.to_owned(), id);
        self.var_u32(id);
        if name.is_ascii() {
            self.ascii(name);
            Ok(())
        } else {
            self.string(Some(name))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(w: &Writer) -> String {
        w.out.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn varints_as_java_writes_them() {
        let mut w = Writer::new();
        w.var_i64(i64::MAX);
        assert_eq!(hex(&w), "feffffffffffffffff");
        let mut w = Writer::new();
        w.var_i64(1234);
        w.var_i32(7);
        w.var_flag(true, 4);
        w.var_flag(false, 67);
        assert_eq!(hex(&w), "a4130e844301");
        let mut w = Writer::new();
        w.var_u64(1_795_400_000_000);
        assert_eq!(hex(&w), "80c4b7b1a034");
    }

    #[test]
    fn strings_as_java_writes_them() {
        let cases: [(Option<&str>, &str); 6] = [
            (Some("order-42"), "6f726465722d34b2"),
            (Some("zażółć 🚀"), "8a7a61c5bcc3b3c582c48720eda0bdedba80"),
            (Some(""), "81"),
            (Some("x"), "8278"),
            (None, "80"),
            (Some("a"), "8261"),
        ];
        for (value, want) in cases {
            let mut w = Writer::new();
            w.string(value).unwrap();
            assert_eq!(hex(&w), want, "{value:?}");
        }
        // 33 ASCII characters are past Kryo's ASCII shortcut.
        let long = "a".repeat(33);
        let mut w = Writer::new();
        w.string(Some(&long)).unwrap();
        assert_eq!(w.out[..2], [0x80 | 34, b'a']);
    }
}
