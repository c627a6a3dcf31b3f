//! The object graph a stream describes, as an arena of nodes, and its
//! materialisation into a [`KryoValue`] tree.
//!
//! Java's handles make the graph a DAG: an object written once may be
//! referenced many times (`Long.valueOf(1)` in two places, an enum
//! constant, a shared POJO). A tree copies each shared object once per
//! reference, and references to references double at each level, so the
//! copies are paid from a budget linear in the input
//! ([`MAX_NODES_PER_BYTE`](super::MAX_NODES_PER_BYTE)). Cycles never reach
//! here: the reader refuses a reference to an object still being read.

use std::mem;
use std::rc::Rc;

use super::error::{Result, SerializationError, SerializationErrorKind as Kind};
use crate::kryo::{JavaType, KryoField, KryoValue, MAX_DEPTH};

pub(crate) type NodeId = usize;

/// The shared `null` node.
pub(crate) const NULL: NodeId = 0;

/// One object of the stream.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    /// A value without children (numbers, strings, `byte[]`, `UUID`...).
    Leaf(KryoValue),
    /// Class names are shared with the class descriptor: a stream of many
    /// objects of a class with a long name holds that name once.
    Enum {
        class: Rc<str>,
        name: String,
    },
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
        fields: Vec<Field>,
    },
    /// Its handle is assigned but it is still being read.
    Pending,
}

/// A field of a POJO node.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub(crate) name: Rc<str>,
    pub(crate) declared: Rc<JavaType>,
    pub(crate) value: NodeId,
}

/// Every node of one stream, with how many places in the graph hold each
/// (a node is moved into the tree from its last place, copied before).
pub(crate) struct Arena {
    nodes: Vec<Node>,
    uses: Vec<u32>,
    offsets: Vec<usize>,
}

impl Arena {
    pub(crate) fn new() -> Self {
        Arena {
            nodes: vec![Node::Leaf(KryoValue::Null)],
            uses: vec![u32::MAX],
            offsets: vec![0],
        }
    }

    /// A node read from `offset`, placed once.
    pub(crate) fn add(&mut self, node: Node, offset: usize) -> NodeId {
        self.nodes.push(node);
        self.uses.push(1);
        self.offsets.push(offset);
        self.nodes.len() - 1
    }

    /// A node whose handle is assigned before its content is read.
    pub(crate) fn reserve(&mut self, offset: usize) -> NodeId {
        self.add(Node::Pending, offset)
    }

    pub(crate) fn set(&mut self, id: NodeId, node: Node) {
        self.nodes[id] = node;
    }

    pub(crate) fn get(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub(crate) fn offset(&self, id: NodeId) -> usize {
        self.offsets[id]
    }

    /// One more place holds `id` (a back-reference).
    pub(crate) fn reuse(&mut self, id: NodeId) {
        self.uses[id] = self.uses[id].saturating_add(1);
    }

    /// The tree under `root`, copying shared nodes from `budget` (units: a
    /// node, or 64 bytes of text it holds).
    pub(crate) fn build(mut self, root: NodeId, budget: usize) -> Result<KryoValue> {
        let mut left = budget;
        self.node(root, 0, false, &mut left, budget)
    }

    /// `shared`: an ancestor is being copied, not moved, so this node is
    /// copied too (each place that holds a node moves it once, last).
    fn node(&mut self, id: NodeId, depth: usize, shared: bool, left: &mut usize, budget: usize) -> Result<KryoValue> {
        let at = self.offsets[id];
        if depth > MAX_DEPTH {
            return Err(SerializationError::at(
                Kind::TooDeep,
                at,
                format!("values nested deeper than {MAX_DEPTH} levels (through back-references)"),
            ));
        }
        let shared = shared || {
            let uses = &mut self.uses[id];
            *uses = uses.saturating_sub(1);
            *uses > 0
        };
        let node = if shared {
            self.nodes[id].clone()
        } else {
            mem::replace(&mut self.nodes[id], Node::Pending)
        };
        let cost = weight(&node);
        *left = left.checked_sub(cost).ok_or_else(|| {
            SerializationError::at(
                Kind::TooLarge,
                at,
                format!(
                    "back-references copy shared objects into more than {budget} nodes \
                     (the cap is linear in the payload's size)"
                ),
            )
        })?;
        Ok(match node {
            Node::Leaf(value) => value,
            Node::Enum { class, name } => KryoValue::Enum {
                class: class.to_string(),
                ordinal: None,
                name: Some(name),
            },
            Node::Collection { class, items } => KryoValue::Collection {
                class: class.to_string(),
                items: items
                    .into_iter()
                    .map(|i| self.node(i, depth + 1, shared, left, budget))
                    .collect::<Result<_>>()?,
            },
            Node::Map { class, entries } => {
                let mut out = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    out.push((
                        self.node(k, depth + 1, shared, left, budget)?,
                        self.node(v, depth + 1, shared, left, budget)?,
                    ));
                }
                KryoValue::Map {
                    class: class.to_string(),
                    entries: out,
                }
            }
            Node::Object { class, fields } => {
                let mut out = Vec::with_capacity(fields.len());
                for f in fields {
                    let value = self.node(f.value, depth + 1, shared, left, budget)?;
                    out.push(KryoField::new(&*f.name, (*f.declared).clone(), value));
                }
                KryoValue::Object {
                    class: class.to_string(),
                    fields: out,
                }
            }
            Node::Pending => {
                return Err(SerializationError::at(
                    Kind::Malformed,
                    at,
                    "an object used before it was read",
                ))
            }
        })
    }
}

/// What copying a node costs: one unit, plus one per 64 bytes of the text
/// and bytes it holds itself.
fn weight(node: &Node) -> usize {
    let text = match node {
        Node::Leaf(value) => match value {
            KryoValue::String(s) => s.len(),
            KryoValue::Bytes(b) | KryoValue::BigInteger(b) => b.len(),
            KryoValue::BigDecimal { unscaled, .. } => unscaled.len(),
            _ => 0,
        },
        Node::Enum { class, name } => class.len() + name.len(),
        Node::Collection { class, items } => class.len() + items.len() * mem::size_of::<NodeId>(),
        Node::Map { class, entries } => class.len() + entries.len() * 2 * mem::size_of::<NodeId>(),
        Node::Object { class, fields } => {
            class.len()
                + fields
                    .iter()
                    .map(|f| f.name.len() + f.declared.class_name().len())
                    .sum::<usize>()
        }
        Node::Pending => 0,
    };
    1 + text / 64
}
