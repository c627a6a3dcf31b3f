//! The bytes of a River stream, read big-endian from a slice that is never
//! trusted: every read checks what is left, every claimed length is checked
//! against it before anything is allocated.

use super::error::{MarshallingError, MarshallingErrorKind, Result};

pub(super) struct Input<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Input { buf, pos: 0 }
    }

    pub(super) fn pos(&self) -> usize {
        self.pos
    }

    pub(super) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(super) fn error(&self, kind: MarshallingErrorKind, message: impl Into<String>) -> MarshallingError {
        MarshallingError::new(kind, Some(self.pos), message)
    }

    /// An error at an earlier offset (where the value at fault started).
    pub(super) fn error_at(at: usize, kind: MarshallingErrorKind, message: impl Into<String>) -> MarshallingError {
        MarshallingError::new(kind, Some(at), message)
    }

    /// The bytes not read yet.
    pub(super) fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(
                MarshallingErrorKind::Truncated,
                format!(
                    "the payload ends inside a value ({n} bytes needed, {} left)",
                    self.remaining()
                ),
            ));
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub(super) fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub(super) fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub(super) fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub(super) fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// A count that each unit of takes at least `min_bytes` bytes: checked
    /// against the bytes left, so that nothing is allocated for a forged one.
    pub(super) fn check_count(&self, count: usize, min_bytes: usize, what: &str) -> Result<()> {
        if count.saturating_mul(min_bytes) > self.remaining() {
            return Err(self.error(
                MarshallingErrorKind::TooLarge,
                format!("{what} claims {count}, but only {} bytes are left", self.remaining()),
            ));
        }
        Ok(())
    }

    /// A non-negative `int` length.
    pub(super) fn length(&mut self, what: &str) -> Result<usize> {
        let at = self.pos;
        let n = self.i32()?;
        usize::try_from(n)
            .map_err(|_| Self::error_at(at, MarshallingErrorKind::Malformed, format!("negative {what} ({n})")))
    }

    /// `chars` UTF-16 code units in River's modified UTF-8 (Java's, with
    /// `\0` as two bytes and a character outside the BMP as two 3-byte
    /// surrogates; one-byte `\0` and overlong forms are read as Java does).
    pub(super) fn utf(&mut self, chars: usize) -> Result<String> {
        let start = self.pos;
        self.check_count(chars, 1, "a string")?;
        // ASCII, the usual case, is one byte a character as in UTF-8: copied whole.
        let bytes = &self.buf[start..start + chars];
        if bytes.is_ascii()
            && let Ok(text) = std::str::from_utf8(bytes)
        {
            self.pos += chars;
            return Ok(text.to_owned());
        }
        let mut units = Vec::with_capacity(chars);
        for _ in 0..chars {
            let a = self.u8()?;
            let unit = match a {
                0x00..=0x7f => u16::from(a),
                0xc0..=0xdf => {
                    let b = self.continuation()?;
                    u16::from(a & 0x1f) << 6 | b
                }
                0xe0..=0xef => {
                    let b = self.continuation()?;
                    let c = self.continuation()?;
                    u16::from(a & 0x0f) << 12 | b << 6 | c
                }
                _ => {
                    return Err(Self::error_at(
                        self.pos - 1,
                        MarshallingErrorKind::Malformed,
                        format!("byte {a:#04x} cannot start a character"),
                    ))
                }
            };
            units.push(unit);
        }
        // Java writes such a string (its chars need not pair up): valid
        // bytes, a value delayq cannot hold.
        String::from_utf16(&units).map_err(|_| {
            Self::error_at(
                start,
                MarshallingErrorKind::Unsupported,
                "a java.lang.String holding a lone UTF-16 surrogate, which Rust strings cannot hold",
            )
        })
    }

    fn continuation(&mut self) -> Result<u16> {
        let b = self.u8()?;
        if b & 0xc0 != 0x80 {
            return Err(Self::error_at(
                self.pos - 1,
                MarshallingErrorKind::Malformed,
                format!("byte {b:#04x} inside a character"),
            ));
        }
        Ok(u16::from(b & 0x3f))
    }

    /// Fails unless every byte was read.
    pub(super) fn finish(&self) -> Result<()> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error(
                MarshallingErrorKind::TrailingBytes,
                format!("{n} bytes left after the value"),
            )),
        }
    }
}
