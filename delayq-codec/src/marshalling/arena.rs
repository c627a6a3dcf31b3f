//! What a River stream holds, before it becomes a [`KryoValue`]: its
//! instances as nodes of an arena, and River's instance cache (instances
//! are numbered in stream order; a back-reference repeats a number).
//!
//! A back-reference makes a node a child of several parents, so the
//! stream is a DAG: a few bytes can stand for a tree exponentially larger.
//! Each node knows the size and height of the tree it stands for, so the
//! tree is refused before it is built when it would be too large
//! ([`MAX_EXPANSION`](super::MAX_EXPANSION)) or too deep
//! ([`MAX_DEPTH`]).

use std::rc::Rc;

use super::class::FieldDesc;
use super::error::{MarshallingError, MarshallingErrorKind, Result};
use crate::kryo::{KryoField, KryoValue, MAX_DEPTH};

pub(super) type NodeId = usize;

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
    fn children(&self) -> Vec<NodeId> {
        match self {
            Node::Value(_) | Node::Taken => Vec::new(),
            Node::Collection { items, .. } => items.clone(),
            Node::Map { entries, .. } => entries.iter().flat_map(|&(k, v)| [k, v]).collect(),
            Node::Object { fields, .. } => fields.iter().map(|&(_, v)| v).collect(),
        }
    }

    /// What building the node itself costs: one unit, plus one per byte of
    /// text it owns (class names, field names, strings, byte arrays).
    fn own_size(&self) -> usize {
        1 + match self {
            Node::Value(v) => text_size(v),
            Node::Collection { class, .. } | Node::Map { class, .. } => class.len(),
            Node::Object { class, fields } => class.len() + fields.iter().map(|(f, _)| f.name.len() + 1).sum::<usize>(),
            Node::Taken => 0,
        }
    }
}

fn text_size(v: &KryoValue) -> usize {
    match v {
        KryoValue::String(s) => s.len(),
        KryoValue::Bytes(b) | KryoValue::BigInteger(b) | KryoValue::BigDecimal { unscaled: b, .. } => b.len(),
        KryoValue::Enum { class, name, .. } => class.len() + name.as_ref().map_or(0, String::len),
        _ => 0,
    }
}

#[derive(Debug, Default)]
pub(super) struct Arena {
    nodes: Vec<Node>,
    /// Units of the tree each node stands for, back-references expanded.
    sizes: Vec<usize>,
    /// Height of that tree (a leaf is 1).
    heights: Vec<usize>,
    /// How many parents (and the root) hold the node.
    uses: Vec<u32>,
}

impl Arena {
    /// Adds a node whose children are already in the arena; `at` is where
    /// it starts in the payload, for errors.
    pub(super) fn push(&mut self, node: Node, at: usize) -> Result<NodeId> {
        let mut size = node.own_size();
        let mut height = 0;
        for child in node.children() {
            size = size.saturating_add(self.sizes[child]);
            height = height.max(self.heights[child]);
            self.uses[child] = self.uses[child].saturating_add(1);
        }
        let height = height + 1;
        if height > MAX_DEPTH {
            return Err(MarshallingError::new(
                MarshallingErrorKind::TooDeep,
                Some(at),
                format!("values nested deeper than {MAX_DEPTH} levels (back-references included)"),
            ));
        }
        self.nodes.push(node);
        self.sizes.push(size);
        self.heights.push(height);
        self.uses.push(0);
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

    /// Builds the tree `root` stands for, if it is at most `limit` units.
    pub(super) fn build(mut self, root: NodeId, limit: usize) -> Result<KryoValue> {
        let size = self.sizes[root];
        if size > limit {
            return Err(MarshallingError::new(
                MarshallingErrorKind::TooLarge,
                None,
                format!(
                    "back-references would make the value {size} units large (at most {limit} for this payload; a \
                     unit is a value or a byte of its text)"
                ),
            ));
        }
        self.uses[root] = self.uses[root].saturating_add(1);
        Ok(self.take(root))
    }

    /// The node's value: moved out at its last use, copied before.
    fn take(&mut self, id: NodeId) -> KryoValue {
        self.uses[id] -= 1;
        if self.uses[id] > 0 {
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
