//! Java serialization inside a Kryo payload: Redisson's `Kryo5Codec` writes
//! the `Collections` views, `EnumMap` and throwables with Kryo's
//! `JavaSerializer`, which keeps one `ObjectOutputStream` per payload. The
//! first such object starts the stream (its magic first); later ones go on
//! with it (no magic, back-references to the first ones' classes), with
//! Kryo bytes between them.

use super::error::{Result, SerializationError, SerializationErrorKind as Kind};
use super::read::Reader;
use super::stream::Stream;
use super::tree::{Node, NodeId};
use super::{jdk, MAGIC};
use crate::kryo::KryoValue;

/// The one Java stream of a Kryo payload.
pub(crate) struct Embedded<'a> {
    reader: Reader<'a>,
    roots: Vec<NodeId>,
    payload: usize,
}

impl<'a> Embedded<'a> {
    /// For the whole Kryo payload (offsets are the payload's).
    pub(crate) fn new(payload: &'a [u8]) -> Self {
        Embedded {
            reader: Reader::new(Stream::new(payload)),
            roots: Vec::new(),
            payload: payload.len(),
        }
    }

    /// Reads the stream's next object, which starts at `pos` (after the
    /// stream header, the first time); returns where it ends.
    pub(crate) fn read(&mut self, pos: usize) -> Result<usize> {
        self.reader.s.seek(pos);
        if self.roots.is_empty() {
            let header = self.reader.s.take(4, "the stream header")?;
            if header != MAGIC {
                return Err(SerializationError::at(
                    Kind::Malformed,
                    pos,
                    "Kryo's JavaSerializer data without the Java serialization magic AC ED 00 05",
                ));
            }
        }
        let root = self.reader.content()?;
        self.roots.push(root);
        Ok(self.reader.s.pos())
    }

    /// The bytes the objects read will take, known before they are built.
    pub(crate) fn value_bytes(&self) -> usize {
        self.roots
            .iter()
            .fold(0, |sum, &id| sum.saturating_add(self.reader.arena.tree_bytes(id)))
    }

    /// The objects read, in order, taking at most `limit` bytes (what the
    /// payload's bound leaves them).
    pub(crate) fn finish(mut self, limit: usize) -> Result<Vec<KryoValue>> {
        let all = self.reader.arena.add(
            Node::Collection {
                class: "".into(),
                items: std::mem::take(&mut self.roots),
            },
            0,
        );
        match self.reader.arena.build_within(all, limit, self.payload)? {
            KryoValue::Collection { items, .. } => items
                .into_iter()
                .map(|v| crate::jdk::finish(v).map_err(jdk::fault))
                .collect(),
            _ => unreachable!("the roots were added as a collection"),
        }
    }
}
