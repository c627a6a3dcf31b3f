//! The classes Kryo 5 (as Redisson's `Kryo5Codec()` configures it) writes
//! with a built-in serializer, their registration ids, and the JDK names
//! this module understands.

use std::borrow::Cow;

use super::java_type::Primitive;

/// Longest class name an error message repeats in full: a payload's class
/// name is as long as the payload says, and messages are copied at every
/// POJO level they pass through.
const SHOWN_NAME: usize = 200;

/// A class name for an error message: its first [`SHOWN_NAME`] characters.
pub(crate) fn shown(name: &str) -> Cow<'_, str> {
    match name.char_indices().nth(SHOWN_NAME) {
        Some((end, _)) => Cow::Owned(format!("{}… ({} bytes)", &name[..end], name.len())),
        None => Cow::Borrowed(name),
    }
}

/// A class with a serializer this module implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Builtin {
    /// `java.lang.Long` etc. (registered together with the primitive).
    Boxed(Primitive),
    String,
    /// `byte[]`.
    Bytes,
    Uuid,
    Date,
    Instant,
    BigDecimal,
    BigInteger,
    /// Anything `CollectionSerializer` writes.
    Collection,
    /// Anything `MapSerializer` writes.
    Map,
}

impl Builtin {
    /// Whether the serializer writes null itself (so `writeObjectOrNull`
    /// adds no null marker).
    pub(crate) fn accepts_null(self) -> bool {
        matches!(
            self,
            Builtin::String
                | Builtin::Bytes
                | Builtin::BigDecimal
                | Builtin::BigInteger
                | Builtin::Collection
                | Builtin::Map
        )
    }
}

/// The registration id (as written: id + 2) of the classes `new Kryo()`
/// registers: int, String, float, boolean, byte, char, short, long, double.
pub(crate) fn registered_id(name: &str) -> Option<u32> {
    Some(match name {
        "java.lang.Integer" => 2,
        "java.lang.String" => 3,
        "java.lang.Float" => 4,
        "java.lang.Boolean" => 5,
        "java.lang.Byte" => 6,
        "java.lang.Character" => 7,
        "java.lang.Short" => 8,
        "java.lang.Long" => 9,
        "java.lang.Double" => 10,
        _ => return None,
    })
}

/// The class of a written registration id.
pub(crate) fn registered_name(id: u32) -> Option<&'static str> {
    Some(match id {
        2 => "java.lang.Integer",
        3 => "java.lang.String",
        4 => "java.lang.Float",
        5 => "java.lang.Boolean",
        6 => "java.lang.Byte",
        7 => "java.lang.Character",
        8 => "java.lang.Short",
        9 => "java.lang.Long",
        10 => "java.lang.Double",
        _ => return None,
    })
}

const COLLECTIONS: &[&str] = &[
    "java.util.ArrayList",
    "java.util.LinkedList",
    "java.util.HashSet",
    "java.util.LinkedHashSet",
    "java.util.ArrayDeque",
    "java.util.Vector",
    "java.util.Stack",
    "java.util.Arrays$ArrayList",
    "java.util.concurrent.CopyOnWriteArrayList",
    "java.util.concurrent.CopyOnWriteArraySet",
    "java.util.concurrent.ConcurrentLinkedQueue",
    "java.util.concurrent.ConcurrentLinkedDeque",
    "java.util.concurrent.LinkedBlockingQueue",
    "java.util.concurrent.LinkedBlockingDeque",
    "java.util.concurrent.ConcurrentSkipListSet",
    // Declared types only (never a runtime class).
    "java.util.Collection",
    "java.util.List",
    "java.util.Set",
    "java.util.Queue",
    "java.util.Deque",
];

const MAPS: &[&str] = &[
    "java.util.HashMap",
    "java.util.LinkedHashMap",
    "java.util.Hashtable",
    "java.util.concurrent.ConcurrentHashMap",
    "java.util.Map",
];

/// The built-in serializer of a class name, if any.
pub(crate) fn builtin(name: &str) -> Option<Builtin> {
    Some(match name {
        "java.lang.Boolean" => Builtin::Boxed(Primitive::Boolean),
        "java.lang.Byte" => Builtin::Boxed(Primitive::Byte),
        "java.lang.Character" => Builtin::Boxed(Primitive::Char),
        "java.lang.Short" => Builtin::Boxed(Primitive::Short),
        "java.lang.Integer" => Builtin::Boxed(Primitive::Int),
        "java.lang.Long" => Builtin::Boxed(Primitive::Long),
        "java.lang.Float" => Builtin::Boxed(Primitive::Float),
        "java.lang.Double" => Builtin::Boxed(Primitive::Double),
        "java.lang.String" => Builtin::String,
        "[B" => Builtin::Bytes,
        "java.util.UUID" => Builtin::Uuid,
        "java.util.Date" => Builtin::Date,
        "java.time.Instant" => Builtin::Instant,
        "java.math.BigDecimal" => Builtin::BigDecimal,
        "java.math.BigInteger" => Builtin::BigInteger,
        n if COLLECTIONS.contains(&n) => Builtin::Collection,
        n if MAPS.contains(&n) => Builtin::Map,
        _ => return None,
    })
}

/// The class Java would have at run time for a value declared `name`
/// (an interface becomes its usual implementation).
pub(crate) fn concrete(name: &str) -> &str {
    match name {
        "java.util.Collection" | "java.util.List" | "java.lang.Iterable" => "java.util.ArrayList",
        "java.util.Set" => "java.util.HashSet",
        "java.util.Queue" | "java.util.Deque" => "java.util.ArrayDeque",
        "java.util.Map" => "java.util.HashMap",
        other => other,
    }
}

/// Whether the JDK declares the class `final` (Kryo then writes a value of
/// that declared type without its class).
pub(crate) fn is_final_jdk_class(name: &str) -> bool {
    // Kryo takes an array final when its element class is.
    if let Some(element) = super::java_type::array_element(name) {
        return super::java_type::Primitive::from_name(element).is_some() || is_final_jdk_class(element);
    }
    matches!(
        name,
        "java.lang.String"
            | "java.lang.Boolean"
            | "java.lang.Byte"
            | "java.lang.Character"
            | "java.lang.Short"
            | "java.lang.Integer"
            | "java.lang.Long"
            | "java.lang.Float"
            | "java.lang.Double"
            | "[B"
            | "java.util.UUID"
            | "java.util.Optional"
            | "java.util.Currency"
            | "java.util.Locale"
            | "java.net.URI"
            | "java.net.URL"
            | "java.lang.StringBuilder"
            | "java.lang.StringBuffer"
    ) || (name.starts_with("java.time.") && !name.contains("chrono") && name != "java.time.ZoneId")
}

/// The full name of a simple JDK class name (`List` → `java.util.List`).
pub(crate) fn full_name(simple: &str) -> &str {
    match simple {
        "String" | "Long" | "Integer" | "Short" | "Byte" | "Character" | "Boolean" | "Double" | "Float" | "Object" => {
            match simple {
                "String" => "java.lang.String",
                "Long" => "java.lang.Long",
                "Integer" => "java.lang.Integer",
                "Short" => "java.lang.Short",
                "Byte" => "java.lang.Byte",
                "Character" => "java.lang.Character",
                "Boolean" => "java.lang.Boolean",
                "Double" => "java.lang.Double",
                "Float" => "java.lang.Float",
                _ => "java.lang.Object",
            }
        }
        "List" => "java.util.List",
        "ArrayList" => "java.util.ArrayList",
        "LinkedList" => "java.util.LinkedList",
        "Set" => "java.util.Set",
        "HashSet" => "java.util.HashSet",
        "LinkedHashSet" => "java.util.LinkedHashSet",
        "Collection" => "java.util.Collection",
        "Map" => "java.util.Map",
        "HashMap" => "java.util.HashMap",
        "LinkedHashMap" => "java.util.LinkedHashMap",
        "UUID" => "java.util.UUID",
        "Date" => "java.util.Date",
        "Instant" => "java.time.Instant",
        "BigDecimal" => "java.math.BigDecimal",
        "BigInteger" => "java.math.BigInteger",
        other => other,
    }
}
