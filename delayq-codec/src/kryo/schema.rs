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
/// (default 0 when absent) into their class descriptors.
///
/// List every field Kryo writes: all non-`static`, non-`transient` fields
/// of the class (their order in the file does not matter: Kryo sorts them
/// by name). A superclass other than `Object` is a class of the schema too,
/// named by `"extends"` (`{"extends": "com.shop.Order", "fields": {...}}`):
/// its fields, and its superclass's, are the subclass's as well, all sorted
/// together by name as Kryo 5's `FieldSerializer` sorts them (a field a
/// subclass redeclares comes before the one it hides). Types use Java
/// syntax (see [`JavaType::parse`]); a class of yours that is declared
/// `final` in Java needs `"final": true`, because Kryo then writes fields
/// of that type without the class name. `KryoSchema::from_class_files`
/// (feature `class-files`, so not linked here: it is not built without it)
/// builds all of it from the compiled classes.
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

/// A class's fields, with their declared types.
type Fields = Vec<(String, JavaType)>;

/// One described class.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ClassDef {
    /// Fields in Kryo's order, the superclasses' included.
    Pojo {
        fields: Vec<(String, JavaType)>,
        /// The fields the class declares itself, sorted by name.
        own: Vec<(String, JavaType)>,
        /// The superclass, when it is not `Object`.
        superclass: Option<String>,
        /// Why the superclasses' fields are missing (a superclass the
        /// schema does not describe, or a cycle): the class is not read.
        unresolved: Option<String>,
        /// Why Kryo's bytes for the class cannot be described (a field of a
        /// type delayq does not read, found in its class file): the class,
        /// and any class extending it, is not read.
        refused: Option<String>,
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
    #[serde(default)]
    extends: Option<String>,
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

impl ClassDef {
    pub(crate) fn pojo(
        mut own: Vec<(String, JavaType)>,
        superclass: Option<String>,
        is_final: bool,
        serial_version_uid: Option<i64>,
    ) -> Self {
        sort_fields(&mut own);
        ClassDef::Pojo {
            fields: own.clone(),
            own,
            superclass,
            unresolved: None,
            refused: None,
            is_final,
            serial_version_uid,
        }
    }

    /// Why a POJO class cannot be read, if its superclasses are not all known.
    pub(crate) fn unresolved(&self) -> Option<&str> {
        match self {
            ClassDef::Pojo { unresolved, .. } => unresolved.as_deref(),
            ClassDef::Enum { .. } => None,
        }
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
                    ClassDef::pojo(parsed, class.extends, class.is_final, class.serial_version_uid)
                }
                (None, Some(constants)) if class.extends.is_none() => ClassDef::Enum { constants },
                (None, Some(_)) => return Err(format!("Kryo schema: {name}: an enum extends no class")),
                _ => {
                    return Err(format!(
                        "Kryo schema: {name} needs exactly one of \"fields\" and \"enum\""
                    ))
                }
            };
            schema.insert(name, def);
        }
        schema.resolve();
        match schema
            .classes
            .iter()
            .find_map(|(name, def)| def.unresolved().map(|why| (name, why)))
        {
            Some((name, why)) => Err(format!("Kryo schema: {name}: {why}")),
            None => Ok(schema),
        }
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
        self.insert(name.to_owned(), ClassDef::pojo(parsed, None, false, None));
        self.resolve();
        Ok(self)
    }

    /// Makes a POJO class already added extend another of the schema: the
    /// superclass's fields (and its superclasses') become the class's too,
    /// in Kryo's order.
    ///
    /// ```
    /// use delayq_codec::kryo::{KryoSchema, KryoValue};
    ///
    /// let schema = KryoSchema::new()
    ///     .with_class("shop.Order", &[("id", "String"), ("amount", "long")]).unwrap()
    ///     .with_class("shop.RushOrder", &[("deadline", "long")]).unwrap()
    ///     .with_superclass("shop.RushOrder", "shop.Order").unwrap();
    /// // Kryo writes amount, deadline, id: all fields sorted by name.
    /// let mut raw = vec![0x01, 0x00];
    /// raw.extend_from_slice(b"shop.RushOrde");
    /// raw.extend_from_slice(&[b'r' | 0x80, 0x0a, 0x14, b'o', b'-', b'1' | 0x80]);
    /// let rush = KryoValue::decode(&raw, Some(&schema)).unwrap();
    /// assert_eq!(rush.to_json(), serde_json::json!({"amount": 5, "deadline": 10, "id": "o-1"}));
    /// assert!(KryoSchema::new().with_class("a.B", &[]).unwrap().with_superclass("a.B", "a.A").is_err());
    /// ```
    pub fn with_superclass(mut self, name: &str, superclass: &str) -> Result<Self, String> {
        if !matches!(self.classes.get(superclass), Some(ClassDef::Pojo { .. })) {
            return Err(format!("{superclass} is not a POJO class of this schema"));
        }
        match self.classes.get_mut(name) {
            Some(ClassDef::Pojo { superclass: s, .. }) => *s = Some(superclass.to_owned()),
            _ => return Err(format!("{name} is not a POJO class of this schema")),
        }
        self.resolve();
        match self.classes[name].unresolved() {
            Some(why) => Err(format!("{name}: {why}")),
            None => Ok(self),
        }
    }

    /// The superclass the schema gives a POJO class, if any (Java
    /// serialization and River describe each class of the chain).
    ///
    /// ```
    /// use delayq_codec::kryo::KryoSchema;
    /// let schema = KryoSchema::from_json(r#"{"classes": {"a.Base": {"fields": {"id": "long"}},
    ///     "a.Sub": {"extends": "a.Base", "fields": {}}}}"#).unwrap();
    /// assert_eq!(schema.superclass("a.Sub"), Some("a.Base"));
    /// assert_eq!(schema.superclass("a.Base"), None);
    /// ```
    pub fn superclass(&self, name: &str) -> Option<&str> {
        match self.classes.get(name) {
            Some(ClassDef::Pojo { superclass, .. }) => superclass.as_deref(),
            _ => None,
        }
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

    pub(crate) fn insert(&mut self, name: String, def: ClassDef) {
        self.classes.insert(name, def);
    }

    /// Gives each POJO class its superclasses' fields, then marks field
    /// types naming a final class or an enum of this schema as final.
    pub(crate) fn resolve(&mut self) {
        let chains: Vec<(String, Result<Fields, String>)> = self
            .classes
            .keys()
            .map(|name| (name.clone(), self.all_fields(name)))
            .collect();
        for (name, chain) in chains {
            if let Some(ClassDef::Pojo {
                fields,
                unresolved,
                own,
                ..
            }) = self.classes.get_mut(&name)
            {
                match chain {
                    Ok(all) => {
                        *fields = all;
                        *unresolved = None;
                    }
                    Err(why) => {
                        *fields = own.clone();
                        *unresolved = Some(why);
                    }
                }
            }
        }
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

    /// A POJO class's fields and its superclasses', in Kryo 5's order:
    /// `CachedFields` collects the class's declared fields, then each
    /// superclass's up to `Object`, and sorts them all by name with a
    /// stable sort (a redeclared name: the subclass's first).
    fn all_fields(&self, name: &str) -> Result<Fields, String> {
        let mut all = Vec::new();
        let mut seen = vec![name];
        let mut class = name;
        loop {
            let Some(ClassDef::Pojo {
                own,
                superclass,
                refused,
                ..
            }) = self.classes.get(class)
            else {
                return Err(format!(
                    "it extends {class}, which the schema does not describe as a POJO class"
                ));
            };
            match refused {
                Some(why) if class == name => return Err(why.clone()),
                Some(why) => return Err(format!("its superclass {class}: {why}")),
                None => {}
            }
            all.extend(own.iter().cloned());
            match superclass.as_deref() {
                None => break,
                Some(next) if seen.contains(&next) || seen.len() > super::MAX_DEPTH => {
                    return Err(format!("its superclasses go round in a cycle through {next}"))
                }
                Some(next) => {
                    seen.push(next);
                    class = next;
                }
            }
        }
        sort_fields(&mut all);
        Ok(all)
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
