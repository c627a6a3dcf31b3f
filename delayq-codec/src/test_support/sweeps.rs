//! Damaged payloads for the "never panics, always a typed error" sweeps:
//! every cut, and single edits.

/// Every proper prefix of `raw` with its length, shortest first.
pub(crate) fn truncations(raw: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    (0..raw.len()).map(move |len| (len, &raw[..len]))
}

/// One edit of a payload, at a position [`Edit::apply`] is given.
#[derive(Debug, Clone)]
pub(crate) enum Edit {
    /// The byte there set to this one.
    Set(u8),
    /// The byte there XORed with this one made odd: always another byte.
    Flip(u8),
    /// This byte inserted there.
    Insert(u8),
    /// The byte there removed.
    Remove,
    /// Everything from there on removed.
    Truncate,
    /// These bytes inserted there.
    Splice(Vec<u8>),
    /// This byte appended (the position does not matter).
    Push(u8),
}

impl Edit {
    /// Edits `raw` at `at`: a byte's index, or up to `raw.len()` for the
    /// edits that insert or cut.
    pub(crate) fn apply(self, raw: &mut Vec<u8>, at: usize) {
        match self {
            Edit::Set(byte) => raw[at] = byte,
            Edit::Flip(byte) => raw[at] ^= byte | 1,
            Edit::Insert(byte) => raw.insert(at, byte),
            Edit::Remove => {
                raw.remove(at);
            }
            Edit::Truncate => raw.truncate(at),
            Edit::Splice(bytes) => raw.splice(at..at, bytes).for_each(drop),
            Edit::Push(byte) => raw.push(byte),
        }
    }
}
