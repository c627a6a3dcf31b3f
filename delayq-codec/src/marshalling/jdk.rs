//! Serializable instances as values: the JDK classes River writes through
//! their fields and `writeObject` methods become the values [`crate::jdk`]
//! reads them as (the same ones Kryo and Java serialization give); other
//! classes are POJOs, their fields named and typed by the stream's
//! descriptors.

use std::rc::Rc;

use super::arena::{Arena, Node, NodeId};
use super::class::Serial;
use super::error::{MarshallingError, MarshallingErrorKind as Kind, Result};
use super::input::Input;
use crate::jdk::{self, Fault, Graph, Shape};
use crate::kryo::KryoValue;

/// `writeObject`/`writeExternal` data: the bytes of its blocks, and the
/// objects between them, each in order.
#[derive(Debug, Default)]
pub(super) struct Custom {
    pub(super) bytes: Vec<u8>,
    pub(super) objects: Vec<NodeId>,
}

impl Custom {
    fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.objects.is_empty()
    }
}

/// The data one class of an instance's hierarchy wrote.
#[derive(Debug)]
pub(super) struct Level {
    pub(super) class: Rc<Serial>,
    /// Field values, in the descriptor's order.
    pub(super) values: Vec<NodeId>,
    pub(super) custom: Option<Custom>,
}

/// The arena as [`jdk::interpret`] sees it.
struct Nodes<'a> {
    arena: &'a mut Arena,
    at: usize,
}

impl Graph for Nodes<'_> {
    type Id = NodeId;

    fn leaf(&self, id: NodeId) -> Option<&KryoValue> {
        self.arena.value(id)
    }

    fn items(&self, id: NodeId) -> Option<(&str, &[NodeId])> {
        match self.arena.node(id) {
            Node::Collection { class, items } => Some((class, items)),
            _ => None,
        }
    }

    fn entries(&self, id: NodeId) -> Option<&[(NodeId, NodeId)]> {
        match self.arena.node(id) {
            Node::Map { entries, .. } => Some(entries),
            _ => None,
        }
    }

    fn class_of(&self, id: NodeId) -> Option<String> {
        match self.arena.node(id) {
            Node::Collection { class, .. } | Node::Map { class, .. } | Node::Object { class, .. } => {
                Some(class.to_string())
            }
            Node::Value(v) => v.java_class().map(str::to_owned),
            Node::Taken => None,
        }
    }

    // The arena counts a node's parents when a node is pushed.
    fn share(&mut self, _id: NodeId) {}

    fn add(&mut self, value: KryoValue) -> std::result::Result<NodeId, Fault> {
        self.arena
            .push(Node::Value(value), self.at)
            .map_err(|e| Fault::Malformed(e.message().to_owned()))
    }
}

/// A [`jdk::Fault`] as this codec's error.
pub(super) fn fault(why: Fault, at: Option<usize>) -> MarshallingError {
    match why {
        Fault::Unsupported(m) => MarshallingError::new(Kind::Unsupported, at, m),
        Fault::Malformed(m) => MarshallingError::new(Kind::Malformed, at, m),
    }
}

/// The instance of `class` whose hierarchy wrote `levels`.
pub(super) fn instance(arena: &mut Arena, class: &Serial, levels: Vec<Level>, at: usize) -> Result<NodeId> {
    let views: Vec<jdk::Level<'_, NodeId>> = levels
        .iter()
        .map(|l| jdk::Level {
            class: &l.class.name,
            fields: l
                .class
                .fields
                .iter()
                .map(|f| &*f.name)
                .zip(l.values.iter().copied())
                .collect(),
            custom: l.custom.as_ref().map(|c| jdk::Custom {
                bytes: c.bytes.clone(),
                objects: c.objects.clone(),
            }),
        })
        .collect();
    let shape = jdk::interpret(&mut Nodes { arena, at }, &class.name, &views).map_err(|f| fault(f, Some(at)))?;
    drop(views);
    let node = match shape {
        Shape::Value(v) => Node::Value(v),
        Shape::Collection { class, items } => Node::Collection {
            class: class.into(),
            items,
        },
        Shape::Map { class, entries } => Node::Map {
            class: class.into(),
            entries,
        },
        Shape::Pojo => pojo(class, levels).map_err(|(kind, message)| Input::error_at(at, kind, message))?,
    };
    arena.push(node, at)
}

/// A POJO: the fields of every class of its hierarchy, superclass first.
fn pojo(class: &Serial, levels: Vec<Level>) -> std::result::Result<Node, (Kind, String)> {
    let mut fields = Vec::new();
    for level in levels {
        if level.custom.as_ref().is_some_and(|c| !c.is_empty()) {
            return Err((
                Kind::Unsupported,
                format!(
                    "{}: custom writeObject data of {} (delayq reads it for the JDK classes its README lists)",
                    class.name, level.class.name
                ),
            ));
        }
        fields.extend(level.class.fields.iter().cloned().zip(level.values));
    }
    Ok(Node::Object {
        class: class.name.clone(),
        fields,
    })
}

/// `java.time.Ser`'s data (`Instant` and every other `java.time` value).
pub(super) fn time_ser(custom: &Custom) -> std::result::Result<KryoValue, (Kind, String)> {
    if !custom.objects.is_empty() {
        return Err((Kind::Malformed, "java.time.Ser data holding objects".to_owned()));
    }
    jdk::time_ser::read(&custom.bytes, true).map_err(|m| (Kind::Malformed, m))
}
