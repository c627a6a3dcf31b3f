//! Values as text on the command line, encoded like the Java codec chosen.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use delayq::codec::compress::DEFAULT_MAX_DECOMPRESSED;
use delayq::codec::detect::{self, Untyped};
use delayq::codec::kryo::{self, JavaType, KryoError, KryoSchema, KryoValue};
use delayq::codec::{jackson, marshalling, serialization, JavaObject};
use delayq::error::BoxError;
use delayq::{Codec, LongCodec};

use crate::args::{CodecArg, CodecKind, OfferArgs};

/// A codec from command-line text to payload bytes and back.
pub(crate) struct TextCodec {
    codec: CodecArg,
    /// Its name, as `--codec` spells it.
    name: &'static str,
    /// Java class of the value, for `jackson`.
    root_class: Option<String>,
    /// Java classes of values inside the value by path, for `jackson`.
    classes: Vec<(String, String)>,
    /// POJO and enum classes, for `kryo`.
    kryo_schema: Option<KryoSchema>,
    /// The declared Java type of offered values, for `kryo` (else `Object`).
    java_type: Option<JavaType>,
    /// The largest decompressed payload read (`--max-decompressed`).
    max_size: usize,
}

/// `--max-decompressed`, for every codec of the process.
static MAX_DECOMPRESSED: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_DECOMPRESSED);

/// Sets the largest decompressed payload any codec made afterwards reads.
pub(crate) fn set_max_decompressed(bytes: usize) {
    MAX_DECOMPRESSED.store(bytes, Ordering::Relaxed);
}

impl TextCodec {
    /// The class of a Java object in `raw` whose fields this codec could not
    /// read (a Kryo POJO the schema does not describe), for the tables.
    pub(crate) fn unread_class(&self, raw: &[u8]) -> Option<String> {
        self.java_object(raw).filter(|o| o.unread.is_some()).map(|o| o.class)
    }

    pub(crate) fn new(kind: CodecKind) -> Self {
        TextCodec::of(CodecArg::plain(kind))
    }

    pub(crate) fn of(codec: CodecArg) -> Self {
        TextCodec {
            codec,
            // One name per codec a command uses: `Codec::name` is `&'static str`.
            name: Box::leak(codec.to_string().into_boxed_str()),
            root_class: None,
            classes: Vec::new(),
            kryo_schema: None,
            java_type: None,
            max_size: MAX_DECOMPRESSED.load(Ordering::Relaxed),
        }
    }

    /// A codec for reading, with `--kryo-schema` for the Java object codecs.
    pub(crate) fn reading(arg: CodecArg, kryo_schema: Option<&Path>) -> Result<Self, String> {
        let mut codec = TextCodec::of(arg);
        if let Some(path) = kryo_schema {
            if !arg.is_java_binary() && arg.kind != CodecKind::Auto {
                return Err("--kryo-schema only applies to kryo, serialization, marshalling and auto".into());
            }
            codec.kryo_schema = Some(load_schema(path)?);
        }
        Ok(codec)
    }

    /// The same codec, with the Java classes of a schema read already.
    pub(crate) fn with_schema(mut self, schema: Option<KryoSchema>) -> Self {
        self.kryo_schema = schema;
        self
    }

    /// The same codec, with the Java classes of a schema file.
    pub(crate) fn with_schema_of(mut self, path: Option<&Path>) -> Result<Self, String> {
        if let Some(path) = path {
            self.kryo_schema = Some(load_schema(path)?);
        }
        Ok(self)
    }

    /// The codec of `delayq offer`'s arguments.
    pub(crate) fn for_offer(args: &OfferArgs) -> Result<Self, String> {
        TextCodec::for_values(
            args.codec,
            &args.java_class,
            args.java_type.as_deref(),
            args.kryo_schema.as_deref(),
        )
    }

    /// The codec of values offered from the command line (`delayq offer`,
    /// `delayq batch offer`): `--codec` with its `--java-class`,
    /// `--java-type` and `--kryo-schema`.
    pub(crate) fn for_values(
        arg: CodecArg,
        java_class: &[String],
        java_type: Option<&str>,
        kryo_schema: Option<&Path>,
    ) -> Result<Self, String> {
        if !arg.is_java_binary() {
            if java_type.is_some() {
                return Err("--java-type only applies to kryo, serialization and marshalling".into());
            }
            let mut codec = TextCodec::with_java_classes(arg, java_class)?;
            if kryo_schema.is_some() {
                return Err("--kryo-schema only applies to kryo, serialization and marshalling".into());
            }
            codec.kryo_schema = None;
            return Ok(codec);
        }
        let mut codec = TextCodec::reading(arg, kryo_schema)?;
        let schema = codec.kryo_schema.clone().unwrap_or_default();
        let text = match (java_class, java_type) {
            ([], None) => None,
            ([class], None) if !class.contains('=') => {
                if codec.kryo_schema.is_none() {
                    return Err(format!(
                        "--java-class {class} with --codec {arg} needs --kryo-schema FILE describing it"
                    ));
                }
                Some(class.clone())
            }
            ([], Some(java_type)) => Some(java_type.to_owned()),
            _ => {
                return Err(format!(
                    "--codec {arg} takes one --java-class CLASS (no PATH=CLASS) or --java-type TYPE"
                ))
            }
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

    /// A command-line value as a Java object (for Kryo, Java serialization
    /// and River).
    fn java_value(&self, value: &str) -> Result<KryoValue, BoxError> {
        let declared = self.java_type.clone().unwrap_or_else(JavaType::object);
        let json = match declared.class_name() {
            // Text as given (and a BigDecimal's scale exactly as written).
            "java.lang.String" | "java.lang.Character" | "java.math.BigDecimal" | "java.math.BigInteger" => {
                serde_json::Value::String(value.to_owned())
            }
            _ => serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_owned())),
        };
        Ok(KryoValue::from_json(&json, &declared, self.kryo_schema.as_ref())?)
    }

    /// A value read with another codec, written with this one (`migrate
    /// --from-codec A --to-codec B`). What cannot be carried over exactly is
    /// an error, so the element is left as it is and counted:
    ///
    /// - the same inner codec (only the compression changes): its bytes, as
    ///   they are;
    /// - one Java object codec to another (Kryo, serialization, River): the
    ///   object, with the schema's declared types, checked by reading the
    ///   new bytes back;
    /// - a Java `String` or number to `string`, `long` or `json`, any Java
    ///   object to plain `json`, Jackson to plain `json`;
    /// - text (`string`, `long`, `json`) to text, or to a Java codec as
    ///   `delayq offer` writes it;
    /// - never: Jackson to or from a Java object codec (Jackson's `@class`
    ///   typing and the Java codecs' classes do not map one to one), bytes
    ///   no codec read, a Kryo POJO the schema does not describe.
    pub(crate) fn encode_read(&self, read: &Detected) -> Result<Bytes, BoxError> {
        use CodecKind::*;
        let target = self.codec.kind;
        if read.kind == target {
            return self.wrap(read.inner.clone());
        }
        if target == Bytes {
            return self.wrap(read.inner.clone());
        }
        match (&read.value, target) {
            (Untyped::Java(value), Kryo | Serialization | Marshalling) => {
                let schema = self.kryo_schema.as_ref();
                // Each Java codec writes fields by their declared types,
                // which only the schema knows exactly (River declares every
                // object field `Object`, serialization erases generics).
                let mut value = value.clone();
                if let Some(schema) = schema {
                    value.adopt_schema(schema);
                }
                let inner = match target {
                    Kryo => value.encode()?,
                    Serialization => serialization::encode(&value, schema)?,
                    _ => marshalling::encode(&value, schema)?,
                };
                let written = self.wrap(inner)?;
                match self.read(&written)?.value {
                    Untyped::Java(back) if back.to_json() == value.to_json() => Ok(written),
                    _ => Err(format!(
                        "re-encoded as {} it would read back as another value: left as it is",
                        self.name
                    )
                    .into()),
                }
            }
            (Untyped::Java(KryoValue::String(text)), String | Json | Long) => self.encode(text),
            (Untyped::Java(value), String | Long) => match value {
                KryoValue::Long(_) | KryoValue::Int(_) | KryoValue::Short(_) | KryoValue::Byte(_) => {
                    self.encode(&value.to_json_text())
                }
                other => Err(format!(
                    "a {} is not {}: left as it is",
                    other.java_class().unwrap_or("null"),
                    self.name
                )
                .into()),
            },
            (Untyped::Java(value), Json) => self.encode(&value.to_json_text()),
            (Untyped::Json(json), Json) => self.encode(&json.to_string()),
            (Untyped::Text(text), String | Json | Long | Kryo | Serialization | Marshalling) => self.encode(text),
            (Untyped::Bytes(_), _) => Err(format!(
                "the payload does not read as {}: left as it is (a Kryo POJO needs --kryo-schema)",
                read.codec
            )
            .into()),
            _ => Err(format!(
                "{} values are not converted to {}: Jackson's typing and the Java codecs' classes do not map one \
                 to one; left as it is",
                read.codec, self.name
            )
            .into()),
        }
    }

    /// Compresses encoded bytes when the codec is a compression wrapper.
    fn wrap(&self, inner: Vec<u8>) -> Result<Bytes, BoxError> {
        Ok(Bytes::from(match self.codec.wrap {
            Some(wrap) => wrap.compress(&inner)?,
            None => inner,
        }))
    }

    /// Reads a payload without deciding how to print it: a Java object
    /// stays one (so `migrate` can write it with another Java codec).
    pub(crate) fn read(&self, raw: &[u8]) -> Result<Detected, BoxError> {
        let schema = self.kryo_schema.as_ref();
        if self.codec.kind == CodecKind::Auto {
            let found = detect::detect(raw, schema, self.max_size);
            // The detected name is a `--codec` name: it says the inner codec.
            let arg = crate::args::parse_read_codec(&found.codec)?;
            let inner = match arg.wrap {
                Some(wrap) => wrap.decompress(raw, self.max_size)?,
                None => raw.to_vec(),
            };
            return Ok(Detected {
                codec: found.codec,
                kind: arg.kind,
                inner,
                value: found.value,
            });
        }
        let inner = match self.codec.wrap {
            Some(wrap) => wrap.decompress(raw, self.max_size)?,
            None => raw.to_vec(),
        };
        let bytes = &inner[..];
        let value = match self.codec.kind {
            CodecKind::Auto => unreachable!("handled above"),
            CodecKind::Kryo => Untyped::Java(KryoValue::decode(bytes, schema)?),
            CodecKind::Serialization => Untyped::Java(serialization::decode(bytes)?),
            CodecKind::Marshalling => Untyped::Java(marshalling::decode(bytes)?),
            CodecKind::Jackson => Untyped::Json(jackson::to_plain_json(bytes)?),
            CodecKind::String => Untyped::Text(std::str::from_utf8(bytes)?.to_owned()),
            CodecKind::Long => Untyped::Text(LongCodec.decode(bytes)?.to_string()),
            CodecKind::Bytes => Untyped::Bytes(bytes.to_vec()),
            CodecKind::Json => {
                serde_json::from_slice::<serde::de::IgnoredAny>(bytes)?;
                Untyped::Text(std::str::from_utf8(bytes)?.to_owned())
            }
        };
        Ok(Detected {
            codec: self.name.to_owned(),
            kind: self.codec.kind,
            inner,
            value,
        })
    }

    /// A codec with `--java-class` arguments: `CLASS` for the value, `PATH=CLASS` for values inside it.
    pub(crate) fn with_java_classes(arg: CodecArg, args: &[String]) -> Result<Self, String> {
        let mut codec = TextCodec::of(arg);
        for arg in args {
            match arg.split_once('=') {
                Some((path, class)) => codec.classes.push((path.to_owned(), class.to_owned())),
                None if codec.root_class.is_none() => codec.root_class = Some(arg.clone()),
                None => return Err(format!("--java-class {arg}: the value's class was already given")),
            }
        }
        if arg.kind == CodecKind::Jackson && codec.root_class.is_none() {
            return Err(format!(
                "--codec {arg} needs --java-class with the Java class of the value (e.g. compat.Order)"
            ));
        }
        if arg.kind != CodecKind::Jackson && !args.is_empty() {
            return Err("--java-class only applies to jackson here".into());
        }
        Ok(codec)
    }

    /// The inner codec's bytes of a command-line value.
    fn encode_inner(&self, value: &str) -> Result<Vec<u8>, BoxError> {
        Ok(match self.codec.kind {
            CodecKind::String => value.as_bytes().to_vec(),
            CodecKind::Long => {
                let n: i64 = value
                    .trim()
                    .parse()
                    .map_err(|_| format!("{value:?} is not a 64-bit integer"))?;
                LongCodec.encode(&n)?.to_vec()
            }
            CodecKind::Bytes => from_hex(value)?,
            CodecKind::Json => {
                // Checked, then stored as written: same bytes, same property order.
                serde_json::from_str::<serde::de::IgnoredAny>(value)?;
                value.trim().as_bytes().to_vec()
            }
            CodecKind::Jackson => {
                let root = self.root_class.as_deref().ok_or("--codec jackson needs --java-class")?;
                let classes: Vec<(&str, &str)> = self.classes.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
                jackson::from_plain_json(value, root, &classes)?
            }
            CodecKind::Kryo => self.java_value(value)?.encode()?,
            CodecKind::Serialization => serialization::encode(&self.java_value(value)?, self.kryo_schema.as_ref())?,
            CodecKind::Marshalling => marshalling::encode(&self.java_value(value)?, self.kryo_schema.as_ref())?,
            CodecKind::Auto => return Err("--codec auto only reads: name the codec to write with".into()),
        })
    }
}

/// A payload as read: the codec that read it and its value.
pub(crate) struct Detected {
    /// The codec, as `--codec` spells it.
    pub(crate) codec: String,
    /// The codec inside any compression.
    pub(crate) kind: CodecKind,
    /// The payload's bytes inside any compression.
    pub(crate) inner: Vec<u8>,
    /// The value.
    pub(crate) value: Untyped,
}

impl Detected {
    /// The value as the CLI prints it: text as it is, bytes as hex, the rest as JSON.
    pub(crate) fn text(&self) -> String {
        self.value.to_display_text()
    }
}

impl Codec<String> for TextCodec {
    fn name(&self) -> &'static str {
        self.name
    }

    fn encode(&self, value: &String) -> Result<Bytes, BoxError> {
        let inner = self.encode_inner(value)?;
        self.wrap(inner)
    }

    fn decode(&self, raw: &[u8]) -> Result<String, BoxError> {
        Ok(self.read(raw)?.text())
    }

    fn diagnose(&self, raw: &[u8]) -> Option<&'static str> {
        if self.codec.is_java_binary() || self.codec.kind == CodecKind::Auto || self.codec.wrap.is_some() {
            return None;
        }
        // The library's own codecs know what Java-only payloads look like.
        Codec::<String>::diagnose(&delayq::StringCodec, raw)
    }

    fn decode_detected(&self, raw: &[u8]) -> (Result<String, BoxError>, Option<String>) {
        if self.codec.kind != CodecKind::Auto {
            return (self.decode(raw), None);
        }
        match self.read(raw) {
            Ok(read) => (Ok(read.text()), Some(read.codec)),
            Err(error) => (Err(error), None),
        }
    }

    fn detected_codec(&self, raw: &[u8]) -> Option<String> {
        (self.codec.kind == CodecKind::Auto).then(|| self.read(raw).map(|d| d.codec).unwrap_or_default())
    }

    /// A Java value's class; for a Kryo object the schema does not describe
    /// (detected, or refused by `--codec kryo`), its class and why its
    /// fields were not read.
    fn java_object(&self, raw: &[u8]) -> Option<JavaObject> {
        if !self.codec.is_java_binary() && self.codec.kind != CodecKind::Auto {
            return None;
        }
        let unread = |inner: &[u8], why: String| kryo::class_of(inner).map(|class| JavaObject::unread(class, why));
        match self.read(raw) {
            Ok(Detected {
                value: Untyped::Java(value),
                ..
            }) => value.java_class().map(JavaObject::read),
            Ok(Detected {
                kind: CodecKind::Kryo,
                value: Untyped::Bytes(_),
                inner,
                ..
            }) => match KryoValue::decode(&inner, self.kryo_schema.as_ref()) {
                Err(e) => unread(&inner, e.message().to_owned()),
                Ok(_) => None,
            },
            Err(error) if self.codec.kind == CodecKind::Kryo => {
                let inner = match self.codec.wrap {
                    Some(wrap) => wrap.decompress(raw, self.max_size).ok()?,
                    None => raw.to_vec(),
                };
                let why = match error.downcast_ref::<KryoError>() {
                    Some(e) => e.message().to_owned(),
                    None => error.to_string(),
                };
                unread(&inner, why)
            }
            _ => None,
        }
    }
}

/// A schema file (JSON), or the Java service's jar or classes folder
/// (`--kryo-schema-from app.jar`): a folder, or a file that is a zip.
pub(crate) fn load_schema(path: &Path) -> Result<KryoSchema, String> {
    use std::io::Read;
    let shown = path.display();
    let mut magic = [0; 4];
    let is_zip = std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"PK\x03\x04";
    if path.is_dir() || is_zip {
        return KryoSchema::from_class_files(path);
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    KryoSchema::from_json(&text).map_err(|e| format!("{shown}: {e}"))
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
