//! The object graph a stream describes, as an arena of nodes, and its
//! materialisation into a [`KryoValue`] tree.
//!
//! Java's handles make the graph a DAG: an object written once may be
//! referenced many times (`Long.valueOf(1)` in two places, an enum
//! constant, a shared POJO). A tree copies each shared object once per
//! reference, and references to references double at each level, so each
//! node knows, when it is added, how many bytes and levels the tree it
//! stands for takes: a tree past
//! [`max_value_bytes`] or
//! [`MAX_DEPTH`] is refused before anything is copied. Cycles never reach
//! here: the reader refuses a reference to an object still being read.

use std::mem;
use std::rc::Rc;

use super::error::{Result, SerializationError, SerializationErrorKind as Kind};
use crate::bounds::{self, max_value_bytes};
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
/// (a node is moved into the tree from its last place, copied before), and
/// the bytes and height of the tree each stands for.
pub(crate) struct Arena {
    nodes: Vec<Node>,
    meta: Vec<Meta>,
}

#[derive(Debug, Clone, Copy)]
struct Meta {
    uses: u32,
    /// Height of the node's tree (a leaf is 1); 0 while pending.
    height: u32,
    /// Bytes of the node's tree, back-references expanded.
    bytes: usize,
    /// Where the node starts in the stream, for errors.
    offset: usize,
}

impl Arena {
    /// An arena for a payload of `len` bytes, with room for a node per 32
    /// bytes (up to 4096: past it, growing costs little by comparison).
    pub(crate) fn for_payload(len: usize) -> Self {
        let room = (len / 32).clamp(1, 4096);
        let mut nodes = Vec::with_capacity(room);
        let mut meta = Vec::with_capacity(room);
        nodes.push(Node::Leaf(KryoValue::Null));
        meta.push(Meta {
            uses: u32::MAX,
            height: 1,
            bytes: bounds::VALUE,
            offset: 0,
        });
        Arena { nodes, meta }
    }

    /// A node read from `offset`, placed once.
    pub(crate) fn add(&mut self, node: Node, offset: usize) -> NodeId {
        self.nodes.push(Node::Pending);
        self.meta.push(Meta {
            uses: 1,
            height: 0,
            bytes: 0,
            offset,
        });
        let id = self.nodes.len() - 1;
        self.set(id, node);
        id
    }

    /// A node whose handle is assigned before its content is read.
    pub(crate) fn reserve(&mut self, offset: usize) -> NodeId {
        self.add(Node::Pending, offset)
    }

    /// The node's content, once its children are all read.
    pub(crate) fn set(&mut self, id: NodeId, node: Node) {
        let meta = &self.meta;
        let child = |(bytes, height): (usize, u32), id: NodeId| {
            let m = meta[id];
            (bytes.saturating_add(m.bytes), height.max(m.height))
        };
        let (bytes, height) = match &node {
            Node::Leaf(value) => (bounds::footprint(value), 0),
            Node::Enum { class, name } => (bounds::VALUE + class.len() + name.len(), 0),
            Node::Collection { class, items } => items.iter().copied().fold((bounds::VALUE + class.len(), 0), child),
            Node::Map { class, entries } => entries
                .iter()
                .flat_map(|&(k, v)| [k, v])
                .fold((bounds::VALUE + class.len(), 0), child),
            Node::Object { class, fields } => fields.iter().fold((bounds::VALUE + class.len(), 0), |acc, f| {
                let (bytes, height) = child(acc, f.value);
                (bytes.saturating_add(bounds::field(&f.name, &f.declared)), height)
            }),
            Node::Pending => (0, 0),
        };
        let pending = matches!(node, Node::Pending);
        let meta = &mut self.meta[id];
        meta.bytes = bytes;
        meta.height = if pending { 0 } else { height.saturating_add(1) };
        self.nodes[id] = node;
    }

    pub(crate) fn get(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub(crate) fn offset(&self, id: NodeId) -> usize {
        self.meta[id].offset
    }

    /// The bytes of the tree `id` stands for, back-references expanded.
    pub(crate) fn tree_bytes(&self, id: NodeId) -> usize {
        self.meta[id].bytes
    }

    /// One more place holds `id` (a back-reference).
    pub(crate) fn reuse(&mut self, id: NodeId) {
        self.meta[id].uses = self.meta[id].uses.saturating_add(1);
    }

    /// The tree under `root`, read from `payload_len` bytes: refused
    /// before anything is copied if it would nest deeper than
    /// [`MAX_DEPTH`] or take more than [`max_value_bytes`].
    pub(crate) fn build(self, root: NodeId, payload_len: usize) -> Result<KryoValue> {
        self.build_within(root, max_value_bytes(payload_len), payload_len)
    }

    /// [`build`](Self::build) with what is left of the payload's
    /// `limit`, when other values of the payload take their share of it.
    pub(crate) fn build_within(mut self, root: NodeId, limit: usize, payload_len: usize) -> Result<KryoValue> {
        let Meta {
            height, bytes, offset, ..
        } = self.meta[root];
        if height as usize > MAX_DEPTH + 1 {
            return Err(SerializationError::at(
                Kind::TooDeep,
                offset,
                format!("values nested deeper than {MAX_DEPTH} levels (through back-references)"),
            ));
        }
        if bytes > limit {
            return Err(SerializationError::at(
                Kind::TooLarge,
                offset,
                format!(
                    "back-references would copy shared objects into a value of {bytes} bytes (at most {limit} \
                     left of the {} for a payload of {payload_len} bytes: 256 per byte, plus 1 MiB)",
                    max_value_bytes(payload_len)
                ),
            ));
        }
        self.node(root, false)
    }

    /// `shared`: an ancestor is being copied, not moved, so this node is
    /// copied too (each place that holds a node moves it once, last).
    fn node(&mut self, id: NodeId, shared: bool) -> Result<KryoValue> {
        let shared = shared || {
            let uses = &mut self.meta[id].uses;
            *uses = uses.saturating_sub(1);
            *uses > 0
        };
        let node = if shared {
            self.nodes[id].clone()
        } else {
            mem::replace(&mut self.nodes[id], Node::Pending)
        };
        Ok(match node {
            Node::Leaf(value) => value,
            Node::Enum { class, name } => KryoValue::Enum {
                class: class.to_string(),
                ordinal: None,
                name: Some(name),
            },
            Node::Collection { class, items } => KryoValue::Collection {
                class: class.to_string(),
                items: items.into_iter().map(|i| self.node(i, shared)).collect::<Result<_>>()?,
            },
            Node::Map { class, entries } => {
                let mut out = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    out.push((self.node(k, shared)?, self.node(v, shared)?));
                }
                KryoValue::Map {
                    class: class.to_string(),
                    entries: out,
                }
            }
            Node::Object { class, fields } => {
                let mut out = Vec::with_capacity(fields.len());
                for f in fields {
                    let value = self.node(f.value, shared)?;
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
                    self.meta[id].offset,
                    "an object used before it was read",
                ))
            }
        })
    }
}
