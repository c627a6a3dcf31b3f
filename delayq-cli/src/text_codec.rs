//! Values as text on the command line, encoded like the Java codec chosen.

use std::path::Path;

use bytes::Bytes;
use delayq::codec::jackson;
use delayq::codec::kryo::{JavaType, KryoSchema, KryoValue};
use delayq::{BoxError, Codec, LongCodec};

use crate::args::{CodecKind, OfferArgs};

/// A codec from command-line text to payload bytes and back.
pub(crate) struct TextCodec {
    kind: CodecKind,
    /// Java class of the value, for `jackson`.
    root_class: Option<String>,
    /// Java classes of nested objects by path, for `jackson`.
    classes: Vec<(String, String)>,
    /// POJO and enum classes, for `kryo`.
    kryo_schema: Option<KryoSchema>,
    /// The declared Java type of offered values, for `kryo` (else `Object`).
    java_type: Option<JavaType>,
}

impl TextCodec {
    pub(crate) fn new(kind: CodecKind) -> Self {
        TextCodec {
            kind,
            root_class: None,
            classes: Vec::new(),
            kryo_schema: None,
            java_type: None,
        }
    }

    /// A codec for reading, with `--kryo-schema` for `kryo`.
    pub(crate) fn reading(kind: CodecKind, kryo_schema: Option<&Path>) -> Result<Self, String> {
        let mut codec = TextCodec::new(kind);
        if let Some(path) = kryo_schema {
            if kind != CodecKind::Kryo {
                return Err("--kryo-schema only applies to --codec kryo".into());
            }
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            codec.kryo_schema = Some(KryoSchema::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?);
        }
        Ok(codec)
    }

    /// The codec of `delayq offer`'s arguments.
    pub(crate) fn for_offer(args: &OfferArgs) -> Result<Self, String> {
        if args.codec != CodecKind::Kryo {
            if args.java_type.is_some() {
                return Err("--java-type only applies to --codec kryo".into());
            }
            let mut codec = TextCodec::with_java_classes(args.codec, &args.java_class)?;
            if args.kryo_schema.is_some() {
                return Err("--kryo-schema only applies to --codec kryo".into());
            }
            codec.kryo_schema = None;
            return Ok(codec);
        }
        let mut codec = TextCodec::reading(args.codec, args.kryo_schema.as_deref())?;
        let schema = codec.kryo_schema.clone().unwrap_or_default();
        let text = match (args.java_class.as_slice(), &args.java_type) {
            ([], None) => None,
            ([class], None) if !class.contains('=') => {
                if codec.kryo_schema.is_none() {
                    return Err(format!(
                        "--java-class {class} with --codec kryo needs --kryo-schema FILE describing it"
                    ));
                }
                Some(class.clone())
            }
            ([], Some(java_type)) => Some(java_type.clone()),
            _ => return Err("--codec kryo takes one --java-class CLASS (no PATH=CLASS) or --java-type TYPE".into()),
        };
        if let Some(text) = text {
            codec.java_type = Some(
                schema
                    .parse_type(&text)
                    .map_err(|e| format!("--java-type/--java-class: {e}"))?,
            );
        }
        Ok(codec)
    }

    /// A command-line value as Kryo bytes.
    fn kryo_encode(&self, value: &str) -> Result<Bytes, BoxError> {
        let declared = self.java_type.clone().unwrap_or_else(JavaType::object);
        let json = match declared.class_name() {
            // Text as given (and a BigDecimal's scale exactly as written).
            "java.lang.String" | "java.lang.Character" | "java.math.BigDecimal" | "java.math.BigInteger" => {
                serde_json::Value::String(value.to_owned())
            }
            _ => serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned())),
        };
        let kryo = KryoValue::from_json(&json, &declared, self.kryo_schema.as_ref())?;
        Ok(Bytes::from(kryo.encode()?))
    }

    /// A codec with `--java-class` arguments: `CLASS` for the value, `PATH=CLASS` for nested objects.
    pub(crate) fn with_java_classes(kind: CodecKind, args: &[String]) -> Result<Self, String> {
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
            CodecKind::Kryo => "kryo",
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
            CodecKind::Kryo => self.kryo_encode(value),
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
            CodecKind::Kryo => Ok(KryoValue::decode(raw, self.kryo_schema.as_ref())?.to_json_text()),
        }
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        if self.kind == CodecKind::Kryo {
            return None;
        }
        // The library's own codecs know what Java-only payloads look like.
        Codec::<String>::diagnose(&delayq::StringCodec, raw)
    }
}

fn from_hex(text: &str) -> Result<Vec<u8>, BoxError> {
    let text = text.trim();
    if !text.len().is_multiple_of(2) {
        return Err(format!("{text:?} is not hex: odd number of digits").into());
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| format!("{text:?} is not hex").into()))
        .collect()
}
