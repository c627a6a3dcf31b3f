//! [`KryoSchema`]: the Java classes behind POJO and enum payloads.

use std::collections::HashMap;

use serde::Deserialize;

use super::java_type::JavaType;

/// Describes Java classes Kryo writes without names: for each POJO class
/// its fields with their declared Java types, for each enum its constants in
/// ordinal order. With it, [`KryoValue`](super::KryoValue) reads and writes
/// POJOs without Rust types.
///
/// The file format (JSON), documented in `compat/README.md`:
///
/// ```json
/// {
///   "classes": {
///     "compat.Order": {"fields": {"id": "String", "amount": "long", "tags": "List<String>"}},
///     "compat.Event$Status": {"enum": ["NEW", "PAID", "CANCELLED"]},
///     "com.shop.Address": {"final": true, "fields": {"city": "String"}},
///     "com.shop.Invoice": {"serialVersionUID": 1, "fields": {"total": "BigDecimal"}}
///   }
/// }
/// ```
///
/// One schema serves every Java codec: Kryo reads `fields` and `final`;
/// Java serialization and JBoss Marshalling also write `serialVersionUID`
/// (default 0 when absent) into their class descriptors. Fields are those
/// of the class itself: superclasses other than `Object` are not described.
///
/// List every field Kryo writes: all non-`static`, non-`transient` fields
/// of the class and its superclasses (their order in the file does not
/// matter: Kryo sorts them by name). Types use Java syntax (see
/// [`JavaType::parse`]); a class of yours that is declared `final` in Java
/// needs `"final": true`, because Kryo then writes fields of that type
/// without the class name.
///
/// ```
/// use delayq_codec::kryo::{KryoSchema, KryoValue};
///
/// let schema = KryoSchema::from_json(r#"{"classes": {"compat.Order": {"fields":
///     {"id": "String", "amount": "long", "tags": "List<String>"}}}}"#).unwrap();
/// let mut raw = vec![0x01, 0x00];
/// raw.extend_from_slice(b"compat.Orde");
/// raw.extend_from_slice(&[b'r' | 0x80, 0xa4, 0x13, b'o', b'-', b'1' | 0x80, 0x01, 0x01]);
/// raw.extend_from_slice(b"java.util.ArrayLis");
/// raw.extend_from_slice(&[b't' | 0x80, 0x03, 0x82, b'a', 0x82, b'b']);
/// let order = KryoValue::decode(&raw, Some(&schema)).unwrap();
/// assert_eq!(order.to_json(), serde_json::json!({"amount": 1234, "id": "o-1", "tags": ["a", "b"]}));
/// assert_eq!(order.encode().unwrap(), raw);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KryoSchema {
    classes: HashMap<String, ClassDef>,
}

/// One described class.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClassDef {
    /// Fields in Kryo's order.
    Pojo {
        fields: Vec<(String, JavaType)>,
        is_final: bool,
        /// Java's `serialVersionUID`, which Java serialization and JBoss
        /// Marshalling write in a class descriptor (Kryo ignores it).
        serial_version_uid: Option<i64>,
    },
    /// Constant names by ordinal.
    Enum { constants: Vec<String> },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    classes: HashMap<String, FileClass>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileClass {
    #[serde(default)]
    fields: Option<HashMap<String, String>>,
    #[serde(default, rename = "enum")]
    constants: Option<Vec<String>>,
    #[serde(default, rename = "final")]
    is_final: bool,
    #[serde(default, rename = "serialVersionUID")]
    serial_version_uid: Option<i64>,
}

/// Kryo's field order: by name, comparing UTF-16 code units as Java's
/// `String.compareTo` does.
pub(crate) fn sort_fields<T>(fields: &mut [(String, T)]) {
    fields.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
}

/// The order [`sort_fields`] gives two names (ASCII names compare as bytes,
/// the same order, without going through UTF-16).
pub(crate) fn field_order(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

impl KryoSchema {
    /// A schema that describes no class.
    ///
    /// ```
    /// assert!(delayq_codec::kryo::KryoSchema::new().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether no class is described.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// Reads the JSON format above.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let file: File = serde_json::from_str(text).map_err(|e| format!("Kryo schema: {e}"))?;
        let mut schema = KryoSchema::new();
        for (name, class) in file.classes {
            let def = match (class.fields, class.constants) {
                (Some(fields), None) => {
                    let mut parsed = Vec::with_capacity(fields.len());
                    for (field, ty) in fields {
                        let ty = JavaType::parse(&ty).map_err(|e| format!("Kryo schema: {name}.{field}: {e}"))?;
                        parsed.push((field, ty));
                    }
                    ClassDef::Pojo {
                        fields: parsed,
                        is_final: class.is_final,
                        serial_version_uid: class.serial_version_uid,
                    }
                }
                (None, Some(constants)) => ClassDef::Enum { constants },
                _ => {
                    return Err(format!(
                        "Kryo schema: {name} needs exactly one of \"fields\" and \"enum\""
                    ))
                }
            };
            schema.insert(name, def);
        }
        schema.resolve();
        Ok(schema)
    }

    /// Adds a POJO class: its fields (any order) with Java types.
    ///
    /// ```
    /// use delayq_codec::kryo::KryoSchema;
    /// let schema = KryoSchema::new().with_class("compat.Order", &[("id", "String"), ("amount", "long")]).unwrap();
    /// assert!(!schema.is_empty());
    /// ```
    pub fn with_class(mut self, name: &str, fields: &[(&str, &str)]) -> Result<Self, String> {
        let mut parsed = Vec::new();
        for (field, ty) in fields {
            parsed.push((
                field.to_string(),
                JavaType::parse(ty).map_err(|e| format!("{name}.{field}: {e}"))?,
            ));
        }
        self.insert(
            name.to_owned(),
            ClassDef::Pojo {
                fields: parsed,
                is_final: false,
                serial_version_uid: None,
            },
        );
        self.resolve();
        Ok(self)
    }

    /// Sets the `serialVersionUID` of a POJO class already added, which
    /// Java serialization and JBoss Marshalling write (Kryo does not).
    ///
    /// ```
    /// use delayq_codec::kryo::KryoSchema;
    /// let schema = KryoSchema::new()
    ///     .with_class("compat.Order", &[("id", "String")]).unwrap()
    ///     .with_serial_version_uid("compat.Order", 1).unwrap();
    /// assert_eq!(schema.serial_version_uid("compat.Order"), Some(1));
    /// ```
    pub fn with_serial_version_uid(mut self, name: &str, uid: i64) -> Result<Self, String> {
        match self.classes.get_mut(name) {
            Some(ClassDef::Pojo { serial_version_uid, .. }) => {
                *serial_version_uid = Some(uid);
                Ok(self)
            }
            _ => Err(format!("{name} is not a POJO class of this schema")),
        }
    }

    /// The `serialVersionUID` the schema gives a POJO class, if any.
    pub fn serial_version_uid(&self, name: &str) -> Option<i64> {
        match self.classes.get(name) {
            Some(ClassDef::Pojo { serial_version_uid, .. }) => *serial_version_uid,
            _ => None,
        }
    }

    /// Adds an enum with its constants in ordinal order.
    ///
    /// ```
    /// use delayq_codec::kryo::KryoSchema;
    /// let schema = KryoSchema::new().with_enum("compat.Event$Status", &["NEW", "PAID"]);
    /// assert!(!schema.is_empty());
    /// ```
    pub fn with_enum(mut self, name: &str, constants: &[&str]) -> Self {
        self.insert(
            name.to_owned(),
            ClassDef::Enum {
                constants: constants.iter().map(|c| c.to_string()).collect(),
            },
        );
        self.resolve();
        self
    }

    fn insert(&mut self, name: String, mut def: ClassDef) {
        if let ClassDef::Pojo { fields, .. } = &mut def {
            sort_fields(fields);
        }
        self.classes.insert(name, def);
    }

    /// Marks field types naming a final class or an enum of this schema as final.
    fn resolve(&mut self) {
        let finals: HashMap<String, bool> = self
            .classes
            .iter()
            .map(|(name, def)| {
                let fin = match def {
                    ClassDef::Pojo { is_final, .. } => *is_final,
                    ClassDef::Enum { .. } => true,
                };
                (name.clone(), fin)
            })
            .collect();
        for def in self.classes.values_mut() {
            if let ClassDef::Pojo { fields, .. } = def {
                for (_, ty) in fields {
                    ty.map_classes(&|name| finals.get(name).copied());
                }
            }
        }
    }

    pub(crate) fn get(&self, class: &str) -> Option<&ClassDef> {
        self.classes.get(class)
    }

    /// Parses a Java type ([`JavaType::parse`]), taking this schema's final
    /// classes and enums as final.
    ///
    /// ```
    /// use delayq_codec::kryo::KryoSchema;
    /// let schema = KryoSchema::new().with_enum("shop.Status", &["NEW"]);
    /// assert!(schema.parse_type("shop.Status").unwrap().is_final());
    /// assert!(!schema.parse_type("shop.Order").unwrap().is_final());
    /// ```
    pub fn parse_type(&self, text: &str) -> Result<JavaType, String> {
        let mut ty = JavaType::parse(text)?;
        ty.map_classes(&|name| match self.classes.get(name) {
            Some(ClassDef::Pojo { is_final, .. }) => Some(*is_final),
            Some(ClassDef::Enum { .. }) => Some(true),
            None => None,
        });
        Ok(ty)
    }
}
