//! Values as text on the command line, encoded like the Java codec chosen.

use bytes::Bytes;
use delayq::{BoxError, Codec, LongCodec};

use crate::args::CodecKind;

/// A codec from command-line text to payload bytes and back.
pub struct TextCodec(pub CodecKind);

impl Codec<String> for TextCodec {
    fn name(&self) -> &'static str {
        match self.0 {
            CodecKind::String => "string",
            CodecKind::Long => "long",
            CodecKind::Bytes => "bytes",
            CodecKind::Json => "json",
        }
    }

    fn encode(&self, value: &String) -> Result<Bytes, BoxError> {
        match self.0 {
            CodecKind::String => Ok(Bytes::copy_from_slice(value.as_bytes())),
            CodecKind::Long => {
                let n: i64 = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("{value:?} is not a 64-bit integer"))?;
                LongCodec.encode(&n)
            }
            CodecKind::Bytes => from_hex(value).map(Bytes::from),
            CodecKind::Json => {
                // Checked, then stored as written: same bytes, same property order.
                serde_json::from_str::<serde::de::IgnoredAny>(value)?;
                Ok(Bytes::copy_from_slice(value.trim().as_bytes()))
            }
        }
    }

    fn decode(&self, raw: &[u8]) -> Result<String, BoxError> {
        match self.0 {
            CodecKind::String => Ok(std::str::from_utf8(raw)?.to_owned()),
            CodecKind::Long => Ok(LongCodec.decode(raw)?.to_string()),
            CodecKind::Bytes => Ok(raw.iter().map(|b| format!("{b:02x}")).collect()),
            CodecKind::Json => {
                serde_json::from_slice::<serde::de::IgnoredAny>(raw)?;
                Ok(std::str::from_utf8(raw)?.to_owned())
            }
        }
    }
}

fn from_hex(text: &str) -> Result<Vec<u8>, BoxError> {
    let text = text.trim();
    if text.len() % 2 != 0 {
        return Err(format!("{text:?} is not hex: odd number of digits").into());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| format!("{text:?} is not hex").into()))
        .collect()
}
