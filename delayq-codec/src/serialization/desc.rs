//! Class descriptors as a stream declares them, and the handle table.

use std::rc::Rc;

use super::stream::{SC_BLOCK_DATA, SC_ENUM, SC_EXTERNALIZABLE, SC_SERIALIZABLE, SC_WRITE_METHOD};
use super::tree::NodeId;
use crate::kryo::JavaType;

/// A `TC_CLASSDESC`: the class, how its data is written, its serializable
/// fields (primitives first, then by name, as `ObjectStreamClass` orders
/// them) and its superclass.
#[derive(Debug)]
pub(crate) struct ClassDesc {
    pub(crate) name: Rc<str>,
    pub(crate) flags: u8,
    pub(crate) fields: Vec<FieldDesc>,
    pub(crate) super_desc: Option<Rc<ClassDesc>>,
    /// This class and its superclasses: at most `MAX_DEPTH`, so reading an
    /// object walks a bounded chain however the descriptors were built.
    pub(crate) chain_len: usize,
}

/// A field of a [`ClassDesc`].
#[derive(Debug)]
pub(crate) struct FieldDesc {
    /// `B C D F I J S Z` for primitives, `L` or `[` for objects and arrays.
    pub(crate) code: u8,
    pub(crate) name: Rc<str>,
    pub(crate) declared: Rc<JavaType>,
}

impl ClassDesc {
    /// The class's chain, superclass first (the order of its data).
    pub(crate) fn chain(self: &Rc<Self>) -> Vec<Rc<ClassDesc>> {
        let mut chain = Vec::with_capacity(self.chain_len);
        let mut next = Some(self.clone());
        while let Some(desc) = next {
            next = desc.super_desc.clone();
            chain.push(desc);
        }
        chain.reverse();
        chain
    }

    pub(crate) fn is_enum(&self) -> bool {
        self.flags & SC_ENUM != 0
    }

    pub(crate) fn is_externalizable(&self) -> bool {
        self.flags & SC_EXTERNALIZABLE != 0
    }

    pub(crate) fn has_block_data(&self) -> bool {
        self.flags & SC_BLOCK_DATA != 0
    }

    pub(crate) fn is_serializable(&self) -> bool {
        self.flags & SC_SERIALIZABLE != 0
    }

    pub(crate) fn has_write_method(&self) -> bool {
        self.flags & SC_WRITE_METHOD != 0
    }
}

/// What a handle names.
#[derive(Debug)]
pub(crate) enum Handle {
    Desc(Rc<ClassDesc>),
    /// A class descriptor still being read (its superclass may not name it).
    PendingDesc,
    /// An object, string, array or enum constant (the node says whether it
    /// is still being read).
    Node(NodeId),
}

/// The size of a primitive field or array element by its type code.
pub(crate) fn primitive_size(code: u8) -> Option<usize> {
    Some(match code {
        b'B' | b'Z' => 1,
        b'C' | b'S' => 2,
        b'I' | b'F' => 4,
        b'J' | b'D' => 8,
        _ => return None,
    })
}

/// The Java name of a primitive type code.
pub(crate) fn primitive_name(code: u8) -> Option<&'static str> {
    Some(match code {
        b'B' => "byte",
        b'C' => "char",
        b'D' => "double",
        b'F' => "float",
        b'I' => "int",
        b'J' => "long",
        b'S' => "short",
        b'Z' => "boolean",
        _ => return None,
    })
}

/// The declared type of an object field from its JVM signature
/// (`Ljava/util/List;` → `java.util.List`, `[B` → `byte[]`).
pub(crate) fn declared_type(code: u8, signature: &str) -> Option<JavaType> {
    let name = match code {
        b'L' => signature.strip_prefix('L')?.strip_suffix(';')?.replace('/', "."),
        b'[' if signature.len() >= 2 && signature.starts_with('[') => signature.replace('/', "."),
        _ => return None,
    };
    (!name.is_empty()).then(|| JavaType::class(&name, Vec::new()))
}

/// [`declared_type`], shared with the fields of other payloads read on
/// this thread that declare the same signature ([`crate::interned`]).
pub(crate) fn shared_declared_type(code: u8, signature: &str) -> Option<Rc<JavaType>> {
    if signature.as_bytes().first() != Some(&code) {
        return declared_type(code, signature).map(Rc::new);
    }
    crate::interned::signature(signature, || declared_type(code, signature))
}

/// The JVM signature of a declared type (`java.util.List<String>` →
/// `Ljava/util/List;`), with its type code.
pub(crate) fn signature(declared: &JavaType) -> (u8, String) {
    if let Some(code) = primitive_code(declared) {
        return (code, String::new());
    }
    let name = declared.class_name();
    if name.starts_with('[') {
        (b'[', name.replace('.', "/"))
    } else {
        (b'L', format!("L{};", name.replace('.', "/")))
    }
}

/// The type code of a primitive declared type.
pub(crate) fn primitive_code(declared: &JavaType) -> Option<u8> {
    if !declared.is_primitive() {
        return None;
    }
    Some(match declared.to_string().as_str() {
        "byte" => b'B',
        "char" => b'C',
        "double" => b'D',
        "float" => b'F',
        "int" => b'I',
        "long" => b'J',
        "short" => b'S',
        _ => b'Z',
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_both_ways() {
        for (code, sig, shown) in [
            (b'L', "Ljava/util/List;", "java.util.List"),
            (b'L', "Lcompat/Event$Status;", "compat.Event$Status"),
            (b'[', "[B", "byte[]"),
            (b'[', "[Ljava/lang/String;", "java.lang.String[]"),
        ] {
            let t = declared_type(code, sig).unwrap();
            assert_eq!(t.to_string(), shown);
            assert_eq!(signature(&t), (code, sig.to_owned()));
        }
        assert_eq!(declared_type(b'L', "java/util/List"), None);
        assert_eq!(declared_type(b'L', "L;"), None);
        assert_eq!(signature(&JavaType::parse("long").unwrap()), (b'J', String::new()));
        assert_eq!(
            signature(&JavaType::parse("List<String>").unwrap()).1,
            "Ljava/util/List;"
        );
    }
}
