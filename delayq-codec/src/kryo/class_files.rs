//! A [`KryoSchema`] built from the Java service's own compiled classes (a
//! jar, or a folder of `.class` files): the fields Kryo's `FieldSerializer`
//! writes, their declared types (generic signatures included), superclasses,
//! enum constants in ordinal order, `final` classes and `serialVersionUID`s.
//!
//! Kryo 5.6.2 (`CachedFields.rebuild`, as Redisson's `Kryo5Codec` leaves
//! its `FieldSerializerConfig`) writes every field of the class and its
//! superclasses but `static`, `transient` and synthetic ones (`this$0` of an
//! inner class), sorted by name; a field whose class is final is written
//! without its class. Enum constants are the class's `ACC_ENUM` fields, in
//! the order `javac` declares them, which is their ordinal order.

use std::fs;
use std::io::Read;
use std::path::Path;

use cafebabe::attributes::AttributeData;
use cafebabe::constant_pool::LiteralConstant;
use cafebabe::{ClassAccessFlags, FieldAccessFlags, ParseOptions};

use super::java_type::JavaType;
use super::schema::{ClassDef, KryoSchema};

/// The largest `.class` file read (a jar entry claims its size; a forged
/// one is not believed).
const MAX_CLASS_FILE: u64 = 16 << 20;

/// One class as its class file describes it.
struct Class {
    name: String,
    superclass: Option<String>,
    kind: Kind,
}

enum Kind {
    Enum(Vec<String>),
    Pojo {
        fields: Vec<(String, JavaType)>,
        is_final: bool,
        uid: Option<i64>,
        /// Why Kryo's bytes for it cannot be described.
        refused: Option<String>,
    },
}

impl KryoSchema {
    /// Builds a schema from compiled classes: a jar (or any zip) or a
    /// folder of `.class` files, searched through. Every class becomes a
    /// POJO class of the schema (with `extends`, `final` and
    /// `serialVersionUID` as its class file says) or an enum; interfaces,
    /// annotations and `module-info` are left out.
    ///
    /// A class Kryo's bytes cannot be described for — a field of a type
    /// [`JavaType`] does not read, a superclass outside the classes read
    /// (other than `Object`), a record — is kept, and reading it is an
    /// error that says why: never a value short of fields.
    ///
    /// Feature `class-files`.
    ///
    /// ```no_run
    /// use delayq_codec::kryo::{KryoSchema, KryoValue};
    ///
    /// let schema = KryoSchema::from_class_files("target/app.jar").unwrap();
    /// # let raw: Vec<u8> = Vec::new();
    /// let order = KryoValue::decode(&raw, Some(&schema)).unwrap();
    /// ```
    pub fn from_class_files(path: impl AsRef<Path>) -> Result<KryoSchema, String> {
        let path = path.as_ref();
        let mut files = Vec::new();
        if path.is_dir() {
            read_folder(path, &mut files)?;
        } else {
            read_jar(path, &mut files)?;
        }
        let mut classes = Vec::with_capacity(files.len());
        for (at, bytes) in &files {
            if let Some(class) = read_class(bytes).map_err(|e| format!("{at}: {e}"))? {
                classes.push(class);
            }
        }
        Ok(schema_of(classes))
    }
}

fn read_folder(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), String> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            read_folder(&path, out)?;
        } else if is_class_file(&path.to_string_lossy()) {
            let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            out.push((path.display().to_string(), bytes));
        }
    }
    Ok(())
}

fn read_jar(path: &Path, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), String> {
    let shown = path.display();
    let file = fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    let mut jar = zip::ZipArchive::new(file).map_err(|e| format!("{shown}: not a jar or folder of classes: {e}"))?;
    for i in 0..jar.len() {
        let mut entry = jar.by_index(i).map_err(|e| format!("{shown}: {e}"))?;
        let name = entry.name().map_err(|e| format!("{shown}: {e}"))?.into_owned();
        if !is_class_file(&name) || entry.is_dir() {
            continue;
        }
        let mut bytes = Vec::new();
        (&mut entry)
            .take(MAX_CLASS_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{shown}!{name}: {e}"))?;
        if bytes.len() as u64 > MAX_CLASS_FILE {
            return Err(format!(
                "{shown}!{name}: a class file of more than {MAX_CLASS_FILE} bytes"
            ));
        }
        out.push((format!("{shown}!{name}"), bytes));
    }
    Ok(())
}

fn is_class_file(name: &str) -> bool {
    name.ends_with(".class")
        && !name.ends_with("module-info.class")
        && !name.ends_with("package-info.class")
        // Multi-release jars: the base classes are the ones Java 8+ all read.
        && !name.starts_with("META-INF/")
}

/// A class file's class, or `None` for one that holds no values
/// (interfaces, annotations).
fn read_class(bytes: &[u8]) -> Result<Option<Class>, String> {
    let mut options = ParseOptions::default();
    options.parse_bytecode(false);
    let class = cafebabe::parse_class_with_options(bytes, &options).map_err(|e| format!("not a class file: {e}"))?;
    let flags = class.access_flags;
    if flags.intersects(ClassAccessFlags::INTERFACE | ClassAccessFlags::ANNOTATION | ClassAccessFlags::MODULE) {
        return Ok(None);
    }
    let name = java_name(&class.this_class.to_string());
    let superclass = class.super_class.as_ref().map(|s| java_name(&s.to_string()));
    if flags.contains(ClassAccessFlags::ENUM) && superclass.as_deref() == Some("java.lang.Enum") {
        let constants = class
            .fields
            .iter()
            .filter(|f| f.access_flags.contains(FieldAccessFlags::ENUM))
            .map(|f| f.name.to_string())
            .collect();
        return Ok(Some(Class {
            name,
            superclass: None,
            kind: Kind::Enum(constants),
        }));
    }
    let mut fields = Vec::new();
    let mut uid = None;
    let mut refused = None;
    if superclass.as_deref() == Some("java.lang.Record") {
        refused = Some("a record, which Kryo writes with its RecordSerializer: delayq does not read it".to_owned());
    }
    for field in &class.fields {
        let f = field.access_flags;
        if f.contains(FieldAccessFlags::STATIC) {
            if field.name == "serialVersionUID" {
                uid = field.attributes.iter().find_map(|a| match a.data {
                    AttributeData::ConstantValue(LiteralConstant::Long(v)) => Some(v),
                    _ => None,
                });
            }
            continue;
        }
        let synthetic =
            f.contains(FieldAccessFlags::SYNTHETIC) || field.attributes.iter().any(|a| a.name == "Synthetic");
        if synthetic || f.contains(FieldAccessFlags::TRANSIENT) {
            continue;
        }
        let signature = field
            .attributes
            .iter()
            .find_map(|a| match &a.data {
                AttributeData::Signature(s) => Some(s.to_string()),
                _ => None,
            })
            .unwrap_or_else(|| field.descriptor.to_string());
        match java_type_text(&signature).and_then(|text| JavaType::parse(&text)) {
            Ok(ty) => fields.push((field.name.to_string(), ty)),
            Err(e) => {
                refused.get_or_insert(format!("field {} ({signature}): {e}", field.name));
            }
        }
    }
    Ok(Some(Class {
        name,
        superclass: superclass.filter(|s| s != "java.lang.Object"),
        kind: Kind::Pojo {
            fields,
            is_final: flags.contains(ClassAccessFlags::FINAL),
            uid,
            refused,
        },
    }))
}

fn schema_of(classes: Vec<Class>) -> KryoSchema {
    let mut schema = KryoSchema::new();
    for class in classes {
        let def = match class.kind {
            Kind::Enum(constants) => ClassDef::Enum { constants },
            Kind::Pojo {
                fields,
                is_final,
                uid,
                refused: why,
            } => {
                let mut def = ClassDef::pojo(fields, class.superclass, is_final, uid);
                if let ClassDef::Pojo { refused, .. } = &mut def {
                    *refused = why;
                }
                def
            }
        };
        schema.insert(class.name, def);
    }
    schema.resolve();
    schema
}

/// `com/shop/Order$Line` → `com.shop.Order$Line`.
fn java_name(internal: &str) -> String {
    internal.replace('/', ".")
}

/// A field's JVM type signature (generic, or its descriptor) in Java
/// syntax: `Ljava/util/List<[J>;` → `java.util.List<long[]>`. A type
/// variable or a wildcard is `java.lang.Object` (Kryo writes such a field
/// with its class); `? extends T` is `T`.
fn java_type_text(signature: &str) -> Result<String, String> {
    let mut p = Signature {
        s: signature.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let text = p.field_type()?;
    if p.pos != p.s.len() {
        return Err(format!("bad type signature {signature:?}"));
    }
    Ok(text)
}

struct Signature<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl Signature<'_> {
    fn next(&mut self) -> Result<u8, String> {
        let b = *self.s.get(self.pos).ok_or("a type signature cut short")?;
        self.pos += 1;
        Ok(b)
    }

    fn field_type(&mut self) -> Result<String, String> {
        self.depth += 1;
        if self.depth > super::MAX_DEPTH {
            return Err("a type signature nested too deep".into());
        }
        let text = match self.next()? {
            b'B' => "byte".into(),
            b'C' => "char".into(),
            b'D' => "double".into(),
            b'F' => "float".into(),
            b'I' => "int".into(),
            b'J' => "long".into(),
            b'S' => "short".into(),
            b'Z' => "boolean".into(),
            b'[' => format!("{}[]", self.field_type()?),
            b'T' => {
                self.until(b';')?;
                "java.lang.Object".into()
            }
            b'L' => self.class_type()?,
            other => return Err(format!("byte {other:#04x} starts no type in a signature")),
        };
        self.depth -= 1;
        Ok(text)
    }

    /// After `L`: `pkg/Outer<args>.Inner<args>;`, the innermost's arguments kept.
    fn class_type(&mut self) -> Result<String, String> {
        let mut name = String::new();
        let mut args = Vec::new();
        loop {
            match self.next()? {
                b';' => break,
                b'/' => name.push('.'),
                b'.' => {
                    name.push('$');
                    args.clear();
                }
                b'<' => {
                    args.clear();
                    while self.s.get(self.pos) != Some(&b'>') {
                        args.push(match self.next()? {
                            b'*' => "java.lang.Object".into(),
                            b'-' => {
                                self.field_type()?;
                                "java.lang.Object".into()
                            }
                            b'+' => self.field_type()?,
                            _ => {
                                self.pos -= 1;
                                self.field_type()?
                            }
                        });
                    }
                    self.pos += 1;
                }
                b => name.push(b as char),
            }
        }
        Ok(if args.is_empty() {
            name
        } else {
            format!("{name}<{}>", args.join(", "))
        })
    }

    fn until(&mut self, end: u8) -> Result<(), String> {
        while self.next()? != end {}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_read_as_java_declares_them() {
        for (sig, text) in [
            ("J", "long"),
            ("[I", "int[]"),
            ("[Ljava/lang/String;", "java.lang.String[]"),
            ("Ljava/util/List<[J>;", "java.util.List<long[]>"),
            (
                "Ljava/util/Map<Ljava/lang/String;+Lcom/x/Y;>;",
                "java.util.Map<java.lang.String, com.x.Y>",
            ),
            ("Ljava/util/List<*>;", "java.util.List<java.lang.Object>"),
            (
                "Ljava/util/List<-Ljava/lang/Long;>;",
                "java.util.List<java.lang.Object>",
            ),
            ("TT;", "java.lang.Object"),
            ("Lcom/x/Outer<TT;>.Inner<TU;>;", "com.x.Outer$Inner<java.lang.Object>"),
            ("Lcom/x/Outer$Line;", "com.x.Outer$Line"),
        ] {
            assert_eq!(java_type_text(sig).unwrap(), text, "{sig}");
        }
        for bad in ["", "L", "Ljava/util/List<", "Q", "JJ", &"[".repeat(1000)] {
            assert!(java_type_text(bad).is_err(), "{bad}");
        }
    }
}
