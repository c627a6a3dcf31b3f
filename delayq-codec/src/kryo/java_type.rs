//! Java's declared types, as far as Kryo's bytes depend on them.
//!
//! Kryo writes a field or a generic collection element without its class
//! when the declared type is a `final` class (`String`, `Long`, `UUID`, an
//! enum...), and with its class otherwise (`Object`, `List`, `BigDecimal`,
//! most POJOs). Primitives (`long`) are written bare; boxed types (`Long`)
//! carry a null marker. Generic arguments (`List<String>`) tell the
//! collection's serializer the element type.

use std::fmt;

use super::class::{self, Builtin};

/// A Java primitive type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Primitive {
    Boolean,
    Byte,
    Char,
    Short,
    Int,
    Long,
    Float,
    Double,
}

impl Primitive {
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "boolean" => Primitive::Boolean,
            "byte" => Primitive::Byte,
            "char" => Primitive::Char,
            "short" => Primitive::Short,
            "int" => Primitive::Int,
            "long" => Primitive::Long,
            "float" => Primitive::Float,
            "double" => Primitive::Double,
            _ => return None,
        })
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Primitive::Boolean => "boolean",
            Primitive::Byte => "byte",
            Primitive::Char => "char",
            Primitive::Short => "short",
            Primitive::Int => "int",
            Primitive::Long => "long",
            Primitive::Float => "float",
            Primitive::Double => "double",
        }
    }

    /// The JVM type code (`I` for `int`).
    pub(crate) fn code(self) -> u8 {
        match self {
            Primitive::Boolean => b'Z',
            Primitive::Byte => b'B',
            Primitive::Char => b'C',
            Primitive::Short => b'S',
            Primitive::Int => b'I',
            Primitive::Long => b'J',
            Primitive::Float => b'F',
            Primitive::Double => b'D',
        }
    }

    pub(crate) fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            b'Z' => Primitive::Boolean,
            b'B' => Primitive::Byte,
            b'C' => Primitive::Char,
            b'S' => Primitive::Short,
            b'I' => Primitive::Int,
            b'J' => Primitive::Long,
            b'F' => Primitive::Float,
            b'D' => Primitive::Double,
            _ => return None,
        })
    }

    /// The wrapper class (`java.lang.Long` for `long`).
    pub(crate) fn boxed(self) -> &'static str {
        match self {
            Primitive::Boolean => "java.lang.Boolean",
            Primitive::Byte => "java.lang.Byte",
            Primitive::Char => "java.lang.Character",
            Primitive::Short => "java.lang.Short",
            Primitive::Int => "java.lang.Integer",
            Primitive::Long => "java.lang.Long",
            Primitive::Float => "java.lang.Float",
            Primitive::Double => "java.lang.Double",
        }
    }
}

/// The declared type of a Java field (or generic argument): a primitive,
/// or a class with its generic arguments and whether it is `final`.
///
/// Parse it from Java source syntax; simple names of `java.lang`,
/// `java.util`, `java.time` and `java.math` classes are understood, other
/// classes are written fully qualified. Whether a class of yours is `final`
/// changes the bytes, so say it (`final com.shop.Address`); enums and the
/// JDK's final classes are known.
///
/// ```
/// use delayq_codec::kryo::JavaType;
///
/// let tags = JavaType::parse("List<String>").unwrap();
/// assert_eq!(tags.to_string(), "java.util.List<java.lang.String>");
/// assert!(!tags.is_final());
/// assert!(JavaType::parse("Long").unwrap().is_final());
/// assert!(JavaType::parse("long").unwrap().is_primitive());
/// assert!(JavaType::parse("final com.shop.Address").unwrap().is_final());
/// assert!(JavaType::parse("Map<String,").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JavaType(pub(crate) Repr);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Repr {
    Primitive(Primitive),
    Class {
        name: String,
        args: Vec<JavaType>,
        is_final: bool,
    },
}

impl JavaType {
    /// `java.lang.Object`: anything, always written with its class.
    pub fn object() -> Self {
        JavaType::class("java.lang.Object", Vec::new())
    }

    pub(crate) fn primitive(p: Primitive) -> Self {
        JavaType(Repr::Primitive(p))
    }

    /// A class by its full name, `final` if the JDK class is; generic
    /// arguments in `args`.
    ///
    /// ```
    /// use delayq_codec::kryo::JavaType;
    /// let t = JavaType::class("java.util.Map", vec![JavaType::class("java.lang.String", vec![]), JavaType::object()]);
    /// assert_eq!(t, JavaType::parse("Map<String, Object>").unwrap());
    /// ```
    pub fn class(name: &str, args: Vec<JavaType>) -> Self {
        let is_final = class::is_final_jdk_class(name);
        JavaType(Repr::Class {
            name: name.to_owned(),
            args,
            is_final,
        })
    }

    /// A `final` class of yours (or an enum): written without its class name.
    ///
    /// ```
    /// use delayq_codec::kryo::JavaType;
    /// assert!(JavaType::final_class("com.shop.Address").is_final());
    /// ```
    pub fn final_class(name: &str) -> Self {
        JavaType(Repr::Class {
            name: name.to_owned(),
            args: Vec::new(),
            is_final: true,
        })
    }

    /// Parses Java source syntax: `long`, `Long`, `String`, `byte[]`,
    /// `List<String>`, `Map<String, List<Long>>`, `com.shop.Order`,
    /// `final com.shop.Address`.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.trim() == "[B" {
            return Ok(JavaType::class("[B", Vec::new()));
        }
        let mut p = Parser { text, pos: 0, depth: 0 };
        let ty = p.ty()?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(format!("{text:?}: unexpected {:?}", &text[p.pos..]));
        }
        Ok(ty)
    }

    /// Whether this is a primitive (`long`, `boolean`...).
    pub fn is_primitive(&self) -> bool {
        matches!(self.0, Repr::Primitive(_))
    }

    /// Whether Kryo writes values of this declared type without their class.
    pub fn is_final(&self) -> bool {
        match &self.0 {
            Repr::Primitive(_) => true,
            Repr::Class { is_final, .. } => *is_final,
        }
    }

    /// The class name (`java.lang.Long` for `long`).
    pub fn class_name(&self) -> &str {
        match &self.0 {
            Repr::Primitive(p) => p.boxed(),
            Repr::Class { name, .. } => name,
        }
    }

    pub(crate) fn args(&self) -> &[JavaType] {
        match &self.0 {
            Repr::Primitive(_) => &[],
            Repr::Class { args, .. } => args,
        }
    }

    pub(crate) fn as_primitive(&self) -> Option<Primitive> {
        match self.0 {
            Repr::Primitive(p) => Some(p),
            _ => None,
        }
    }

    pub(crate) fn set_final(&mut self, value: bool) {
        if let Repr::Class { is_final, .. } = &mut self.0 {
            *is_final = value;
        }
    }

    /// The built-in serializer for this declared class, if any.
    pub(crate) fn builtin(&self) -> Option<Builtin> {
        match &self.0 {
            Repr::Primitive(p) => Some(Builtin::Boxed(*p)),
            Repr::Class { name, .. } => class::builtin(name),
        }
    }

    /// What the generic machinery of Kryo sees for the element (collection)
    /// or the key and value (map) of a value declared with this type.
    pub(crate) fn generic_args(&self) -> Option<&[JavaType]> {
        let args = self.args();
        (!args.is_empty()).then_some(args)
    }

    /// Same type with every user class resolved as the schema says.
    pub(crate) fn map_classes(&mut self, f: &dyn Fn(&str) -> Option<bool>) {
        if let Repr::Class { name, args, is_final } = &mut self.0 {
            if let Some(fin) = f(name) {
                *is_final = fin || *is_final;
            }
            for arg in args {
                arg.map_classes(f);
            }
        }
    }
}

/// The JVM name of an array of `element` (`[I`, `[Ljava.lang.String;`, `[[I`).
pub(crate) fn array_of(element: &JavaType) -> String {
    match &element.0 {
        Repr::Primitive(p) => format!("[{}", p.code() as char),
        Repr::Class { name, .. } if name.starts_with('[') => format!("[{name}"),
        Repr::Class { name, .. } => format!("[L{name};"),
    }
}

/// The element type's name of an array class (`[I` → `int`,
/// `[Ljava.lang.String;` → `java.lang.String`, `[[I` → `[I`).
pub(crate) fn array_element(name: &str) -> Option<&str> {
    let rest = name.strip_prefix('[')?;
    if rest.starts_with('[') {
        return Some(rest);
    }
    if let Some(class) = rest.strip_prefix('L').and_then(|r| r.strip_suffix(';')) {
        return (!class.is_empty()).then_some(class);
    }
    let mut chars = rest.chars();
    let p = Primitive::from_code(chars.next()? as u8)?;
    chars.next().is_none().then_some(p.name())
}

impl fmt::Display for JavaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Primitive(p) => f.write_str(p.name()),
            Repr::Class { name, args, .. } => {
                if let Some(element) = array_element(name) {
                    let element = if element.starts_with('[') {
                        JavaType::class(element, Vec::new()).to_string()
                    } else {
                        element.to_owned()
                    };
                    return write!(f, "{element}[]");
                }
                f.write_str(name)?;
                if !args.is_empty() {
                    f.write_str("<")?;
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{a}")?;
                    }
                    f.write_str(">")?;
                }
                Ok(())
            }
        }
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    /// Type arguments open at `pos` (bounded: each level is a recursion).
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.text[self.pos..].starts_with(' ') {
            self.pos += 1;
        }
    }

    fn ident(&mut self) -> Result<&str, String> {
        self.skip_ws();
        let start = self.pos;
        let rest = &self.text[start..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '$')))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(format!("{:?}: expected a type at {:?}", self.text, rest));
        }
        self.pos += len;
        Ok(&self.text[start..start + len])
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.text[self.pos..].starts_with(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn ty(&mut self) -> Result<JavaType, String> {
        let mut name = self.ident()?.to_owned();
        let mut explicit_final = false;
        if name == "final" {
            explicit_final = true;
            name = self.ident()?.to_owned();
        }
        let mut args = Vec::new();
        if self.eat('<') {
            self.depth += 1;
            if self.depth > super::MAX_DEPTH {
                return Err(format!(
                    "{:?}: type arguments nested deeper than {} levels",
                    self.text.chars().take(40).collect::<String>(),
                    super::MAX_DEPTH
                ));
            }
            loop {
                args.push(self.ty()?);
                if self.eat(',') {
                    continue;
                }
                if self.eat('>') {
                    self.depth -= 1;
                    break;
                }
                return Err(format!("{:?}: expected ',' or '>'", self.text));
            }
        }
        let mut ty = if let Some(p) = Primitive::from_name(&name) {
            if !args.is_empty() {
                return Err(format!("{:?}: a primitive has no type arguments", self.text));
            }
            JavaType::primitive(p)
        } else {
            JavaType::class(class::full_name(&name), args)
        };
        while self.eat('[') {
            if !self.eat(']') {
                return Err(format!("{:?}: expected ']'", self.text));
            }
            ty = JavaType::class(&array_of(&ty), Vec::new());
        }
        if explicit_final {
            ty.set_final(true);
        }
        Ok(ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_java_declarations() {
        let t = JavaType::parse("Map<String, List<Long>>").unwrap();
        assert_eq!(
            t.to_string(),
            "java.util.Map<java.lang.String,java.util.List<java.lang.Long>>"
        );
        assert_eq!(JavaType::parse("byte[]").unwrap().to_string(), "byte[]");
        assert!(JavaType::parse("byte[]").unwrap().is_final());
        assert!(JavaType::parse("java.util.UUID").unwrap().is_final());
        assert!(!JavaType::parse("BigDecimal").unwrap().is_final());
        assert!(!JavaType::parse("com.shop.Order").unwrap().is_final());
        assert_eq!(JavaType::parse("int[]").unwrap().class_name(), "[I");
        assert_eq!(
            JavaType::parse("String[][]").unwrap().class_name(),
            "[[Ljava.lang.String;"
        );
        assert_eq!(
            JavaType::parse("List<long[]>").unwrap().to_string(),
            "java.util.List<long[]>"
        );
        assert!(JavaType::parse("int[]").unwrap().is_final());
        assert!(!JavaType::parse("Object[]").unwrap().is_final());
        assert!(JavaType::parse("int[").is_err());
        assert!(JavaType::parse("List<long>").is_ok());
        assert!(JavaType::parse("").is_err());
    }

    #[test]
    fn deep_type_arguments_are_an_error_not_a_stack_overflow() {
        let nested = |depth: usize| format!("{}Long{}", "List<".repeat(depth), ">".repeat(depth));
        assert!(JavaType::parse(&nested(crate::kryo::MAX_DEPTH)).is_ok());
        let err = JavaType::parse(&nested(1_000_000)).unwrap_err();
        assert!(err.contains("nested deeper than 100 levels"), "{err}");
    }
}
