//! Per-thread tables of the class names, field names and field types that
//! Java serialization and River repeat in every payload: each payload of a
//! POJO describes its classes anew, byte for byte the same, and reading
//! them was most of the allocations of a decode. A name or type read once
//! on a thread is shared (an `Rc`) by the payloads read after it.
//!
//! The tables are bounded whatever the payloads: at most [`MAX_ENTRIES`]
//! entries of at most [`MAX_KEY`] bytes each (longer keys are not kept); a
//! full table is emptied and starts again. A hostile stream of new names
//! costs one insertion per name read, as reading it does anyway.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::kryo::JavaType;

/// Entries per table.
pub(crate) const MAX_ENTRIES: usize = 512;
/// The longest key kept, in bytes.
pub(crate) const MAX_KEY: usize = 256;

thread_local! {
    /// Java serialization's names, by their modified UTF-8 bytes (which
    /// decode to one text, or fail to decode and are not kept).
    static ENCODED: RefCell<HashMap<Box<[u8]>, Rc<str>>> = RefCell::new(HashMap::new());
    /// Names by their text (River reads them as String objects first).
    static TEXTS: RefCell<HashSet<Rc<str>>> = RefCell::new(HashSet::new());
    /// Field types by their JVM signature (`Ljava/util/List;`).
    static SIGNATURES: RefCell<HashMap<Box<str>, Rc<JavaType>>> = RefCell::new(HashMap::new());
}

fn keep<K: std::hash::Hash + Eq, V>(table: &mut HashMap<K, V>, key: K, value: V) {
    if table.len() >= MAX_ENTRIES {
        table.clear();
    }
    table.insert(key, value);
}

/// The text whose modified UTF-8 bytes are `encoded`: decoded by `decode`
/// the first time, shared after.
pub(crate) fn decoded<E>(encoded: &[u8], decode: impl FnOnce(&[u8]) -> Result<String, E>) -> Result<Rc<str>, E> {
    if encoded.len() > MAX_KEY {
        return decode(encoded).map(Rc::from);
    }
    if let Some(found) = ENCODED.with(|t| t.borrow().get(encoded).cloned()) {
        return Ok(found);
    }
    let text: Rc<str> = decode(encoded)?.into();
    ENCODED.with(|t| keep(&mut t.borrow_mut(), encoded.into(), text.clone()));
    Ok(text)
}

/// `text`, shared.
pub(crate) fn text(text: &str) -> Rc<str> {
    if text.len() > MAX_KEY {
        return text.into();
    }
    TEXTS.with(|t| {
        let mut t = t.borrow_mut();
        if let Some(found) = t.get(text) {
            return found.clone();
        }
        if t.len() >= MAX_ENTRIES {
            t.clear();
        }
        let shared: Rc<str> = text.into();
        t.insert(shared.clone());
        shared
    })
}

/// The type `parse` makes of `signature`, parsed the first time, shared
/// after.
pub(crate) fn signature(signature: &str, parse: impl FnOnce() -> Option<JavaType>) -> Option<Rc<JavaType>> {
    if signature.len() > MAX_KEY {
        return parse().map(Rc::new);
    }
    if let Some(found) = SIGNATURES.with(|t| t.borrow().get(signature).cloned()) {
        return Some(found);
    }
    let ty = Rc::new(parse()?);
    SIGNATURES.with(|t| keep(&mut t.borrow_mut(), signature.into(), ty.clone()));
    Some(ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_share_what_they_keep_and_stay_bounded() {
        let a = decoded::<()>(b"compat.Order", |b| Ok(String::from_utf8(b.to_vec()).unwrap())).unwrap();
        let b = decoded::<()>(b"compat.Order", |_| panic!("decoded twice")).unwrap();
        assert!(Rc::ptr_eq(&a, &b));
        // A failed decoding is not kept.
        assert_eq!(decoded(b"\xc5", |_| Err("cut short")), Err("cut short"));
        assert_eq!(decoded(b"\xc5", |_| Err("again")), Err("again"));
        assert!(Rc::ptr_eq(&text("amount"), &text("amount")));
        for i in 0..3 * MAX_ENTRIES {
            text(&format!("field{i}"));
            decoded::<()>(format!("class{i}").as_bytes(), |b| {
                Ok(String::from_utf8(b.to_vec()).unwrap())
            })
            .unwrap();
        }
        assert!(TEXTS.with(|t| t.borrow().len()) <= MAX_ENTRIES);
        assert!(ENCODED.with(|t| t.borrow().len()) <= MAX_ENTRIES);
        let long = "x".repeat(MAX_KEY + 1);
        assert!(!Rc::ptr_eq(&text(&long), &text(&long)), "long keys are not kept");
        let list = signature("Ljava/util/List;", || JavaType::parse("java.util.List").ok()).unwrap();
        let again = signature("Ljava/util/List;", || panic!("parsed twice")).unwrap();
        assert!(Rc::ptr_eq(&list, &again));
    }
}
