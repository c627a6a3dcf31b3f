//! Values as text on the command line, encoded like the Java codec chosen.

use bytes::Bytes;
use delayq::codec::jackson;
use delayq::{BoxError, Codec, LongCodec};

use crate::args::CodecKind;

/// A codec from command-line text to payload bytes and back.
pub struct TextCodec {
    kind: CodecKind,
    /// Java class of the value, for `jackson`.
    root_class: Option<String>,
    /// Java classes of nested objects by path, for `jackson`.
    classes: Vec<(String, String)>,
}

impl TextCodec {
    pub fn new(kind: CodecKind) -> Self {
        TextCodec {
            kind,
            root_class: None,
            classes: Vec::new(),
        }
    }

    /// A codec with `--java-class` arguments: `CLASS` for the value, `PATH=CLASS` for nested objects.
    pub fn with_java_classes(kind: CodecKind, args: &[String]) -> Result<Self, String> {
        let mut codec = TextCodec::new(kind);
        for arg in args {
            match arg.split_once('=') {
                Some((path, class)) => codec.classes.push((path.to_owned(), class.to_owned())),
                None if codec.root_class.is_none() => codec.root_class = Some(arg.clone()),
                None => return Err(format!("--java-class {arg}: the value's class was already given")),
            }
        }
        if kind == CodecKind::Jackson && codec.root_class.is_none() {
            return Err(
                "--codec jackson needs --java-class with the Java class of the value (e.g. compat.Order)".into(),
            );
        }
        if kind != CodecKind::Jackson && !args.is_empty() {
            return Err("--java-class only applies to --codec jackson".into());
        }
        Ok(codec)
    }
}

impl Codec<String> for TextCodec {
    fn name(&self) -> &'static str {
        match self.kind {
            CodecKind::String => "string",
            CodecKind::Long => "long",
            CodecKind::Bytes => "bytes",
            CodecKind::Json => "json",
            CodecKind::Jackson => "jackson",
        }
    }

    fn encode(&self, value: &String) -> Result<Bytes, BoxError> {
        match self.kind {
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
            CodecKind::Jackson => {
                let plain: serde_json::Value = serde_json::from_str(value)?;
                let root = self.root_class.as_deref().ok_or("--codec jackson needs --java-class")?;
                let classes: Vec<(&str, &str)> = self.classes.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
                Ok(Bytes::from(jackson::from_plain_json(&plain, root, &classes)?))
            }
        }
    }

    fn decode(&self, raw: &[u8]) -> Result<String, BoxError> {
        match self.kind {
            CodecKind::String => Ok(std::str::from_utf8(raw)?.to_owned()),
            CodecKind::Long => Ok(LongCodec.decode(raw)?.to_string()),
            CodecKind::Bytes => Ok(raw.iter().map(|b| format!("{b:02x}")).collect()),
            CodecKind::Json => {
                serde_json::from_slice::<serde::de::IgnoredAny>(raw)?;
                Ok(std::str::from_utf8(raw)?.to_owned())
            }
            CodecKind::Jackson => Ok(serde_json::to_string(&jackson::to_plain_json(raw)?)?),
        }
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        // The library's own codecs know what Java-only payloads look like.
        Codec::<String>::diagnose(&delayq::StringCodec, raw)
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
