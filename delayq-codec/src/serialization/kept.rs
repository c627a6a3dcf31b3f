//! Class descriptors kept from earlier payloads on this thread. Each
//! payload of a POJO describes its classes again, byte for byte the same
//! (the class, its fields' names and types, its superclasses): a
//! descriptor whose bytes match one read before, at the same handle, is
//! taken whole instead of being read again, with the handles and string
//! nodes its reading assigned.
//!
//! A descriptor may refer to handles assigned before it (a superclass or
//! a type signature an earlier descriptor gave): it is taken only where
//! each of those names what it named when it was read. One with a class
//! annotation is not kept, nor one longer than [`MAX_BYTES`]. The table holds at most
//! [`MAX_ENTRIES`] of them, and is emptied when full: a fixed bound
//! whatever the payloads. A match is checked on every byte, so a payload
//! reads exactly as it would without the table.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::desc::ClassDesc;

/// Descriptors kept per thread.
pub(crate) const MAX_ENTRIES: usize = 128;
/// The longest descriptor kept, in stream bytes.
pub(crate) const MAX_BYTES: usize = 1024;

/// A handle the descriptor's reading assigned.
#[derive(Debug)]
pub(crate) enum Assigned {
    Desc(Rc<ClassDesc>),
    /// A string (a field's type signature), `offset` bytes after the
    /// descriptor's start.
    Text {
        text: String,
        offset: usize,
    },
}

/// A descriptor read before.
#[derive(Debug)]
pub(crate) struct Kept {
    /// Its bytes, after the `TC_CLASSDESC` code to its end (superclasses included).
    pub(crate) bytes: Box<[u8]>,
    /// Class descriptors it nests, itself included.
    pub(crate) depth: usize,
    pub(crate) desc: Rc<ClassDesc>,
    pub(crate) handles: Vec<Assigned>,
    /// The handles assigned before it that it refers to, and what they named.
    pub(crate) before: Vec<(usize, Assigned)>,
}

thread_local! {
    static KEPT: RefCell<HashMap<Box<[u8]>, Rc<Kept>>> = RefCell::new(HashMap::new());
}

/// The key of a descriptor starting with `bytes`, read at handle `first`:
/// the handle, the class name and its `serialVersionUID`.
fn key(first: usize, bytes: &[u8]) -> Option<Vec<u8>> {
    let name_len = usize::from(u16::from_be_bytes([*bytes.first()?, *bytes.get(1)?]));
    let head = bytes.get(..2 + name_len + 8)?;
    let mut key = Vec::with_capacity(8 + head.len());
    key.extend_from_slice(&(first as u64).to_le_bytes());
    key.extend_from_slice(head);
    Some(key)
}

/// The descriptor kept for a stream whose next bytes are `rest`, at handle `first`.
pub(crate) fn find(first: usize, rest: &[u8]) -> Option<Rc<Kept>> {
    let key = key(first, rest)?;
    let kept = KEPT.with(|k| k.borrow().get(&key[..]).cloned())?;
    rest.starts_with(&kept.bytes).then_some(kept)
}

/// Keeps a descriptor read from `bytes` at handle `first`.
pub(crate) fn keep(first: usize, kept: Kept) {
    if kept.bytes.len() > MAX_BYTES {
        return;
    }
    let Some(key) = key(first, &kept.bytes) else {
        return;
    };
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        if k.len() >= MAX_ENTRIES {
            k.clear();
        }
        k.insert(key.into(), Rc::new(kept));
    });
}

/// How many descriptors this thread keeps.
#[cfg(test)]
pub(crate) fn count() -> usize {
    KEPT.with(|k| k.borrow().len())
}

/// Forgets this thread's descriptors.
#[cfg(test)]
pub(crate) fn clear() {
    KEPT.with(|k| k.borrow_mut().clear());
}
