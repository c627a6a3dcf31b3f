//! What a River stream holds, before it becomes a [`KryoValue`]: its
//! instances as nodes of an arena, and River's instance cache (instances
//! are numbered in stream order; a back-reference repeats a number).
//!
//! A back-reference makes a node a child of several parents, so the
//! stream is a DAG: a few bytes can stand for a tree exponentially larger.
//! Each node knows how many bytes and how many levels the tree it stands
//! for takes, so the tree is refused before anything is copied out of the
//! arena when it would take more than [`max_value_bytes`] or nest deeper
//! than [`MAX_DEPTH`].

use std::rc::Rc;

use super::class::FieldDesc;
use super::error::{MarshallingError, MarshallingErrorKind, Result};
use crate::bounds::{self, max_value_bytes};
use crate::kryo::{KryoField, KryoValue, MAX_DEPTH};

pub(super) type NodeId = usize;

/// The one `null` node: every null of a stream is a child of it, so a
/// stream of nulls costs the arena a child slot each, not a node.
const NULL: NodeId = 0;

#[derive(Debug)]
pub(super) enum Node {
    /// A value without children.
    Value(KryoValue),
    Collection {
        class: Rc<str>,
        items: Vec<NodeId>,
    },
    Map {
        class: Rc<str>,
        entries: Vec<(NodeId, NodeId)>,
    },
    Object {
        class: Rc<str>,
        fields: Vec<(Rc<FieldDesc>, NodeId)>,
    },
    /// Moved into the built value.
    Taken,
}

impl Node {
    fn for_each_child(&self, mut f: impl FnMut(NodeId)) {
        match self {
            Node::Value(_) | Node::Taken => {}
            Node::Collection { items, .. } => items.iter().copied().for_each(f),
            Node::Map { entries, .. } => entries.iter().for_each(|&(k, v)| {
                f(k);
                f(v);
            }),
            Node::Object { fields, .. } => fields.iter().for_each(|(_, v)| f(*v)),
        }
    }

    /// The bytes building the node itself takes in the value: its
    /// [`KryoValue`], its class name, its fields (names and declared
    /// types), its text; children apart.
    fn own_bytes(&self) -> usize {
        match self {
            Node::Value(v) => bounds::footprint(v),
            Node::Collection { class, .. } | Node::Map { class, .. } => bounds::VALUE + class.len(),
            Node::Object { class, fields } => {
                bounds::VALUE
                    + class.len()
                    + fields
                        .iter()
                        .map(|(f, _)| bounds::field(&f.name, &f.declared))
                        .sum::<usize>()
            }
            Node::Taken => 0,
        }
    }
}

/// What the arena knows of a node's tree.
#[derive(Debug, Clone, Copy)]
struct Meta {
    /// Bytes of the tree it stands for, back-references expanded.
    bytes: usize,
    /// Height of that tree (a leaf is 1).
    height: u32,
    /// How many parents (and the root) hold the node.
    uses: u32,
}

#[derive(Debug)]
pub(super) struct Arena {
    nodes: Vec<Node>,
    meta: Vec<Meta>,
}

impl Arena {
    /// An arena for a payload of `len` bytes, with room for a node per 16
    /// bytes (up to 4096: past it, growing costs little by comparison). A
    /// POJO of a few hundred bytes takes a few dozen nodes: a room of one
    /// per 4 bytes was a block large enough to make every decode pay
    /// glibc's consolidation of its small free blocks.
    pub(super) fn for_payload(len: usize) -> Self {
        let room = (len / 16).clamp(1, 4096);
        let mut nodes = Vec::with_capacity(room);
        let mut meta = Vec::with_capacity(room);
        nodes.push(Node::Value(KryoValue::Null));
        // Never taken: copied at each use (a null copies nothing).
        meta.push(Meta {
            bytes: bounds::VALUE,
            height: 1,
            uses: u32::MAX / 2,
        });
        Arena { nodes, meta }
    }

    /// Adds a node whose children are already in the arena; `at` is where
    /// it starts in the payload, for errors.
    pub(super) fn push(&mut self, node: Node, at: usize) -> Result<NodeId> {
        if matches!(node, Node::Value(KryoValue::Null)) {
            return Ok(NULL);
        }
        let mut bytes = node.own_bytes();
        let mut height = 0;
        node.for_each_child(|child| {
            let meta = &mut self.meta[child];
            bytes = bytes.saturating_add(meta.bytes);
            height = height.max(meta.height);
            meta.uses = meta.uses.saturating_add(1);
        });
        let height = height + 1;
        if height as usize > MAX_DEPTH {
            return Err(MarshallingError::new(
                MarshallingErrorKind::TooDeep,
                Some(at),
                format!("values nested deeper than {MAX_DEPTH} levels (back-references included)"),
            ));
        }
        self.nodes.push(node);
        self.meta.push(Meta { bytes, height, uses: 0 });
        Ok(self.nodes.len() - 1)
    }

    /// A node (the JDK classes read their parts' nodes).
    pub(super) fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// The value of a node without children (`None` for a collection, map
    /// or POJO).
    pub(super) fn value(&self, id: NodeId) -> Option<&KryoValue> {
        match &self.nodes[id] {
            Node::Value(v) => Some(v),
            _ => None,
        }
    }

    /// Builds the tree `root` stands for, if it takes at most
    /// [`max_value_bytes`] of the `payload_len` bytes it was read from:
    /// checked here, before anything is copied.
    pub(super) fn build(mut self, root: NodeId, payload_len: usize) -> Result<KryoValue> {
        let bytes = self.meta[root].bytes;
        let limit = max_value_bytes(payload_len);
        if bytes > limit {
            return Err(MarshallingError::new(
                MarshallingErrorKind::TooLarge,
                None,
                format!(
                    "back-references would make the value {bytes} bytes large (at most {limit} for a payload of \
                     {payload_len} bytes: 256 per byte, plus 1 MiB)"
                ),
            ));
        }
        let meta = &mut self.meta[root];
        meta.uses = meta.uses.saturating_add(1);
        Ok(self.take(root))
    }

    /// The node's value: moved out at its last use, copied before.
    fn take(&mut self, id: NodeId) -> KryoValue {
        let meta = &mut self.meta[id];
        meta.uses -= 1;
        if meta.uses > 0 {
            return self.copy(id);
        }
        match std::mem::replace(&mut self.nodes[id], Node::Taken) {
            Node::Value(v) => v,
            Node::Collection { class, items } => KryoValue::Collection {
                class: class.to_string(),
                items: items.into_iter().map(|i| self.take(i)).collect(),
            },
            Node::Map { class, entries } => KryoValue::Map {
                class: class.to_string(),
                entries: entries.into_iter().map(|(k, v)| (self.take(k), self.take(v))).collect(),
            },
            Node::Object { class, fields } => KryoValue::Object {
                class: class.to_string(),
                fields: fields
                    .into_iter()
                    .map(|(f, v)| KryoField::new(f.name.to_string(), f.declared.clone(), self.take(v)))
                    .collect(),
            },
            Node::Taken => unreachable!("a node is taken at its last use only"),
        }
    }

    fn copy(&self, id: NodeId) -> KryoValue {
        match &self.nodes[id] {
            Node::Value(v) => v.clone(),
            Node::Collection { class, items } => KryoValue::Collection {
                class: class.to_string(),
                items: items.iter().map(|&i| self.copy(i)).collect(),
            },
            Node::Map { class, entries } => KryoValue::Map {
                class: class.to_string(),
                entries: entries.iter().map(|&(k, v)| (self.copy(k), self.copy(v))).collect(),
            },
            Node::Object { class, fields } => KryoValue::Object {
                class: class.to_string(),
                fields: fields
                    .iter()
                    .map(|(f, v)| KryoField::new(f.name.to_string(), f.declared.clone(), self.copy(*v)))
                    .collect(),
            },
            Node::Taken => unreachable!("a node still used is not taken"),
        }
    }
}

/// A slot of the instance cache.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// Being read: a reference to it now would be a cycle.
    Pending,
    /// Written unshared: no reference may repeat it.
    Unshared,
    Done(NodeId),
}

/// River's instance cache.
#[derive(Debug, Default)]
pub(super) struct Instances {
    slots: Vec<Slot>,
}

impl Instances {
    /// Numbers an instance whose reading starts now.
    pub(super) fn reserve(&mut self) -> usize {
        self.slots.push(Slot::Pending);
        self.slots.len() - 1
    }

    pub(super) fn set(&mut self, index: usize, node: NodeId, unshared: bool) {
        self.slots[index] = if unshared { Slot::Unshared } else { Slot::Done(node) };
    }

    /// Numbers an instance read whole.
    pub(super) fn push(&mut self, node: NodeId, unshared: bool) {
        let index = self.reserve();
        self.set(index, node, unshared);
    }

    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The instance a back-reference names; `Err` with why not.
    pub(super) fn get(&self, index: i64) -> Result<NodeId, String> {
        match usize::try_from(index).ok().and_then(|i| self.slots.get(i)) {
            Some(Slot::Done(node)) => Ok(*node),
            Some(Slot::Pending) => Err(format!(
                "instance {index} is referred to while it is being read (a cycle, which a value cannot hold)"
            )),
            Some(Slot::Unshared) => Err(format!("instance {index} was written unshared and cannot be repeated")),
            None => Err(format!("no instance {index} (only {} so far)", self.slots.len())),
        }
    }

    pub(super) fn clear(&mut self) {
        self.slots.clear();
    }
}
