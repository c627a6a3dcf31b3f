//! Reads a stream into an [`Arena`]: contents, class descriptors, handles
//! and the custom data of classes with a `writeObject` method.
//!
//! Every length is checked against the bytes left before anything is
//! allocated; nesting is capped (values and superclass chains at
//! [`MAX_DEPTH`]); each handle is one table entry, so a back-reference costs
//! O(1) here (copies are paid in [`Arena::build`]).

use std::rc::Rc;

use super::desc::{primitive_name, primitive_size, shared_declared_type, ClassDesc, FieldDesc, Handle};
use super::error::{shown, Result, SerializationError, SerializationErrorKind as Kind};
use super::jdk;
use super::kept;
use super::stream::*;
use super::tree::{Arena, Node, NodeId, NULL};
use crate::kryo::java_type::Primitive;
use crate::kryo::{JavaType, KryoValue, MAX_DEPTH};

/// The custom data of one class of an object (`writeObject` after the
/// fields, or `writeExternal`): block data (consecutive records joined) and
/// objects, up to `TC_ENDBLOCKDATA`.
#[derive(Debug)]
pub(crate) enum Item {
    Block(Vec<u8>),
    Object(NodeId),
}

/// One class's part of an object: its field values, in its descriptor's
/// order, and its custom data when it has any.
#[derive(Debug)]
pub(crate) struct ClassData {
    pub(crate) desc: Rc<ClassDesc>,
    pub(crate) values: Vec<NodeId>,
    pub(crate) annotation: Option<(usize, Vec<Item>)>,
}

pub(crate) struct Reader<'a> {
    pub(crate) s: Stream<'a>,
    pub(crate) arena: Arena,
    handles: Vec<Handle>,
    /// Objects, arrays and enum constants open.
    depth: usize,
    /// Class descriptors open (a superclass is read inside its subclass).
    desc_depth: usize,
    /// While class descriptors are read, what says whether one can be
    /// kept for the next payloads ([`kept`]): the handles referred to,
    /// whether a class annotation held anything, the deepest descriptor
    /// nesting reached.
    refs: Vec<usize>,
    annotated: bool,
    deepest_desc: usize,
}

fn err(kind: Kind, at: usize, message: impl Into<String>) -> SerializationError {
    SerializationError::at(kind, at, message)
}

impl<'a> Reader<'a> {
    /// After the stream header.
    pub(crate) fn new(s: Stream<'a>) -> Self {
        Reader {
            arena: Arena::for_payload(s.remaining()),
            s,
            handles: Vec::new(),
            depth: 0,
            desc_depth: 0,
            refs: Vec::new(),
            annotated: false,
            deepest_desc: 0,
        }
    }

    /// `TC_RESET` between top-level objects: the handle table starts over.
    pub(crate) fn reset(&mut self) {
        self.handles.clear();
    }

    /// One object (`readObject`): null, a back-reference, a string, an
    /// object, an array or an enum constant.
    pub(crate) fn content(&mut self) -> Result<NodeId> {
        let at = self.s.pos();
        let tc = self.s.u8("an object")?;
        match tc {
            TC_NULL => Ok(NULL),
            TC_REFERENCE => self.reference(at),
            TC_STRING | TC_LONGSTRING => self.string(tc, at),
            TC_OBJECT | TC_ARRAY | TC_ENUM => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err(err(
                        Kind::TooDeep,
                        at,
                        format!("objects nested deeper than {MAX_DEPTH} levels"),
                    ));
                }
                let id = match tc {
                    TC_OBJECT => self.object(at),
                    TC_ARRAY => self.array(at),
                    _ => self.enum_constant(at),
                }?;
                self.depth -= 1;
                Ok(id)
            }
            TC_CLASS => self.class_object(at),
            TC_CLASSDESC | TC_PROXYCLASSDESC => Err(err(
                Kind::Unsupported,
                at,
                "a class descriptor written as a value (an ObjectStreamClass)",
            )),
            TC_EXCEPTION => Err(err(
                Kind::Unsupported,
                at,
                "an exception the writer hit while writing (TC_EXCEPTION)",
            )),
            TC_RESET => Err(err(Kind::Malformed, at, "a reset (TC_RESET) inside an object")),
            TC_BLOCKDATA | TC_BLOCKDATALONG | TC_ENDBLOCKDATA => Err(err(
                Kind::Malformed,
                at,
                format!("block data (type code {tc:#04x}) where an object belongs"),
            )),
            other => Err(err(Kind::Malformed, at, format!("unknown type code {other:#04x}"))),
        }
    }

    fn handle(&mut self, at: usize) -> Result<&Handle> {
        let handle = self.s.i32("a handle")? as u32;
        let index = handle.wrapping_sub(BASE_HANDLE) as usize;
        if self.desc_depth > 0 {
            self.refs.push(index);
        }
        self.handles
            .get(index)
            .ok_or_else(|| err(Kind::Malformed, at, format!("handle {handle:#x} was never assigned")))
    }

    fn reference(&mut self, at: usize) -> Result<NodeId> {
        match *self.handle(at)? {
            Handle::Node(id) => {
                if matches!(self.arena.get(id), Node::Pending) {
                    return Err(err(
                        Kind::Cyclic,
                        at,
                        format!(
                            "a reference to the object at byte {} while it is being read: the Java \
                             object graph has a cycle, which a value tree cannot hold",
                            self.arena.offset(id)
                        ),
                    ));
                }
                self.arena.reuse(id);
                Ok(id)
            }
            Handle::Desc(_) | Handle::PendingDesc => Err(err(
                Kind::Unsupported,
                at,
                "a class descriptor referenced as a value (an ObjectStreamClass)",
            )),
        }
    }

    fn string(&mut self, tc: u8, at: usize) -> Result<NodeId> {
        let text = if tc == TC_STRING {
            self.s.utf("a string")?
        } else {
            self.s.long_utf("a long string")?
        };
        let id = self.arena.add(Node::Leaf(KryoValue::String(text)), at);
        self.handles.push(Handle::Node(id));
        Ok(id)
    }

    /// The text of a string node (a field's type, an enum constant's name).
    fn text_of(&self, id: NodeId, at: usize, what: &str) -> Result<&str> {
        match self.arena.get(id) {
            Node::Leaf(KryoValue::String(s)) => Ok(s),
            _ => Err(err(Kind::Malformed, at, format!("{what} is not a string"))),
        }
    }

    /// A class descriptor where one is required.
    fn class_desc(&mut self, what: &str) -> Result<Rc<ClassDesc>> {
        let at = self.s.pos();
        self.class_desc_or_null()?
            .ok_or_else(|| err(Kind::Malformed, at, format!("{what} without a class descriptor")))
    }

    fn class_desc_or_null(&mut self) -> Result<Option<Rc<ClassDesc>>> {
        let at = self.s.pos();
        match self.s.u8("a class descriptor")? {
            TC_NULL => Ok(None),
            TC_REFERENCE => match self.handle(at)? {
                Handle::Desc(desc) => Ok(Some(desc.clone())),
                Handle::PendingDesc => Err(err(
                    Kind::Cyclic,
                    at,
                    "a class descriptor that names itself (or a subclass still being read) as its superclass",
                )),
                Handle::Node(_) => Err(err(
                    Kind::Malformed,
                    at,
                    "a reference to an object where a class descriptor belongs",
                )),
            },
            TC_CLASSDESC => self.new_class_desc(at).map(Some),
            TC_PROXYCLASSDESC => Err(err(Kind::Unsupported, at, "a dynamic proxy class (TC_PROXYCLASSDESC)")),
            other => Err(err(
                Kind::Malformed,
                at,
                format!("type code {other:#04x} where a class descriptor belongs"),
            )),
        }
    }

    /// A `TC_CLASSDESC` (its code read at `at`): the one kept from an
    /// earlier payload when the bytes are the same, else read and kept.
    fn new_class_desc(&mut self, at: usize) -> Result<Rc<ClassDesc>> {
        let start = self.s.pos();
        let first = self.handles.len();
        if let Some(kept) = kept::find(first, self.s.rest())
            && self.desc_depth + kept.depth <= MAX_DEPTH
            && self.same_before(&kept.before)
        {
            return Ok(self.replay(start, &kept));
        }
        let refs_start = self.refs.len();
        let outer_annotated = std::mem::replace(&mut self.annotated, false);
        let outer_deepest = std::mem::replace(&mut self.deepest_desc, self.desc_depth);
        let depth_before = self.desc_depth;
        let read = self.read_class_desc(at);
        if let Ok(desc) = &read
            && !self.annotated
        {
            self.keep(start, first, self.deepest_desc - depth_before, refs_start, desc);
        }
        self.annotated |= outer_annotated;
        self.deepest_desc = self.deepest_desc.max(outer_deepest);
        if self.desc_depth == 0 {
            self.refs.clear();
        }
        read
    }

    /// Whether the handles a kept descriptor refers to, assigned before
    /// it, name here what they named when it was read.
    fn same_before(&self, before: &[(usize, kept::Assigned)]) -> bool {
        before.iter().all(|(index, was)| match (self.handles.get(*index), was) {
            (Some(Handle::Desc(desc)), kept::Assigned::Desc(was)) => Rc::ptr_eq(desc, was),
            (Some(Handle::Node(id)), kept::Assigned::Text { text: was, .. }) => {
                matches!(self.arena.get(*id), Node::Leaf(KryoValue::String(text)) if text == was)
            }
            _ => false,
        })
    }

    /// What reading a kept descriptor did: the stream moves past it, its
    /// handles and string nodes are assigned again.
    fn replay(&mut self, start: usize, kept: &kept::Kept) -> Rc<ClassDesc> {
        self.s.seek(start + kept.bytes.len());
        for assigned in &kept.handles {
            let handle = match assigned {
                kept::Assigned::Desc(desc) => Handle::Desc(desc.clone()),
                kept::Assigned::Text { text, offset } => Handle::Node(
                    self.arena
                        .add(Node::Leaf(KryoValue::String(text.clone())), start + offset),
                ),
            };
            self.handles.push(handle);
        }
        self.deepest_desc = self.deepest_desc.max(self.desc_depth + kept.depth);
        if self.desc_depth > 0 {
            self.refs.extend(kept.before.iter().map(|(index, _)| *index));
        }
        kept.desc.clone()
    }

    /// Keeps the descriptor just read from `start`, whose handles start at
    /// `first` and whose references are `self.refs[refs_start..]`.
    fn keep(&self, start: usize, first: usize, depth: usize, refs_start: usize, desc: &Rc<ClassDesc>) {
        let bytes = self.s.since(start);
        if bytes.len() > kept::MAX_BYTES {
            return;
        }
        let assigned = |id: NodeId, offset: usize| match self.arena.get(id) {
            Node::Leaf(KryoValue::String(text)) => Some(kept::Assigned::Text {
                text: text.clone(),
                offset,
            }),
            _ => None,
        };
        let mut handles = Vec::with_capacity(self.handles.len() - first);
        for handle in &self.handles[first..] {
            handles.push(match handle {
                Handle::Desc(desc) => kept::Assigned::Desc(desc.clone()),
                Handle::Node(id) => match assigned(*id, self.arena.offset(*id) - start) {
                    Some(text) => text,
                    None => return,
                },
                Handle::PendingDesc => return,
            });
        }
        let mut before = Vec::new();
        for &index in self.refs[refs_start..].iter().filter(|&&i| i < first) {
            before.push((
                index,
                match &self.handles[index] {
                    Handle::Desc(desc) => kept::Assigned::Desc(desc.clone()),
                    Handle::Node(id) => match assigned(*id, 0) {
                        Some(text) => text,
                        None => return,
                    },
                    Handle::PendingDesc => return,
                },
            ));
        }
        kept::keep(
            first,
            kept::Kept {
                bytes: bytes.into(),
                depth,
                desc: desc.clone(),
                handles,
                before,
            },
        );
    }

    fn read_class_desc(&mut self, at: usize) -> Result<Rc<ClassDesc>> {
        self.desc_depth += 1;
        self.deepest_desc = self.deepest_desc.max(self.desc_depth);
        if self.desc_depth > MAX_DEPTH {
            return Err(err(
                Kind::TooDeep,
                at,
                format!("class descriptors nested deeper than {MAX_DEPTH} levels"),
            ));
        }
        let name = self.s.shared_utf("a class name")?;
        self.s.i64("a serialVersionUID")?;
        let handle = self.handles.len();
        self.handles.push(Handle::PendingDesc);
        let flags_at = self.s.pos();
        let flags = self.s.u8("class flags")?;
        if flags & SC_SERIALIZABLE != 0 && flags & SC_EXTERNALIZABLE != 0 {
            return Err(err(
                Kind::Malformed,
                flags_at,
                format!("{} is flagged both Serializable and Externalizable", shown(&name)),
            ));
        }
        let count_at = self.s.pos();
        let count = self.s.u16("a field count")? as i16;
        if count < 0 {
            return Err(err(Kind::Malformed, count_at, format!("negative field count {count}")));
        }
        // A field takes at least a type code and a name length.
        let count = self.s.claim(count as u64, 3, count_at, "a class's field list")?;
        let mut fields = Vec::with_capacity(count);
        for _ in 0..count {
            fields.push(self.field_desc()?);
        }
        // Class annotations: ObjectOutputStream writes none, a subclass may.
        self.annotation()?;
        let super_desc = self.class_desc_or_null()?;
        let chain_len = super_desc.as_ref().map_or(0, |s| s.chain_len) + 1;
        if chain_len > MAX_DEPTH {
            return Err(err(
                Kind::TooDeep,
                at,
                format!("{} has more than {MAX_DEPTH} superclasses", shown(&name)),
            ));
        }
        let desc = Rc::new(ClassDesc {
            name,
            flags,
            fields,
            super_desc,
            chain_len,
        });
        self.handles[handle] = Handle::Desc(desc.clone());
        self.desc_depth -= 1;
        Ok(desc)
    }

    fn field_desc(&mut self) -> Result<FieldDesc> {
        let at = self.s.pos();
        let code = self.s.u8("a field type code")?;
        let name = self.s.shared_utf("a field name")?;
        let declared = match primitive_name(code).and_then(Primitive::from_name) {
            Some(primitive) => Rc::new(JavaType::primitive(primitive)),
            None if code == b'L' || code == b'[' => {
                let sig_at = self.s.pos();
                let sig = self.type_string(sig_at)?;
                let sig = self.text_of(sig, sig_at, "a field type")?;
                shared_declared_type(code, sig).ok_or_else(|| {
                    err(
                        Kind::Malformed,
                        sig_at,
                        format!("field {}: bad type signature {:?}", shown(&name), shown(sig)),
                    )
                })?
            }
            None => {
                return Err(err(
                    Kind::Malformed,
                    at,
                    format!("field {}: unknown type code {code:#04x}", shown(&name)),
                ))
            }
        };
        Ok(FieldDesc { code, name, declared })
    }

    /// A field's JVM signature: a string, or a reference to one.
    fn type_string(&mut self, at: usize) -> Result<NodeId> {
        let id = match self.s.u8("a field type")? {
            tc @ (TC_STRING | TC_LONGSTRING) => self.string(tc, at)?,
            TC_REFERENCE => match *self.handle(at)? {
                Handle::Node(id) => id,
                _ => return Err(err(Kind::Malformed, at, "a field type that is not a string")),
            },
            other => {
                return Err(err(
                    Kind::Malformed,
                    at,
                    format!("type code {other:#04x} where a field type belongs"),
                ))
            }
        };
        Ok(id)
    }

    /// Custom data up to `TC_ENDBLOCKDATA`.
    fn annotation(&mut self) -> Result<(usize, Vec<Item>)> {
        let start = self.s.pos();
        let mut items = Vec::new();
        loop {
            let at = self.s.pos();
            let block = match self.s.peek() {
                None => {
                    return Err(err(
                        Kind::Truncated,
                        at,
                        "custom writeObject data without its end marker (TC_ENDBLOCKDATA)",
                    ))
                }
                Some(TC_ENDBLOCKDATA) => {
                    self.s.u8("end of block data")?;
                    self.annotated |= !items.is_empty();
                    return Ok((start, items));
                }
                Some(TC_BLOCKDATA) => {
                    self.s.u8("block data")?;
                    let len = self.s.u8("a block length")?;
                    self.s.take(usize::from(len), "block data")?
                }
                Some(TC_BLOCKDATALONG) => {
                    self.s.u8("block data")?;
                    let len_at = self.s.pos();
                    let len = self.s.i32("a block length")?;
                    if len < 0 {
                        return Err(err(Kind::Malformed, len_at, format!("negative block length {len}")));
                    }
                    let len = self.s.claim(len as u64, 1, len_at, "block data")?;
                    self.s.take(len, "block data")?
                }
                Some(_) => {
                    let id = self.content()?;
                    items.push(Item::Object(id));
                    continue;
                }
            };
            match items.last_mut() {
                Some(Item::Block(bytes)) => bytes.extend_from_slice(block),
                _ => items.push(Item::Block(block.to_vec())),
            }
        }
    }

    fn object(&mut self, at: usize) -> Result<NodeId> {
        let desc = self.class_desc("an object")?;
        if desc.is_enum() || desc.name.starts_with('[') {
            return Err(err(
                Kind::Malformed,
                at,
                format!("{} written as a plain object (TC_OBJECT)", shown(&desc.name)),
            ));
        }
        let id = self.arena.reserve(at);
        let handle = self.handles.len();
        self.handles.push(Handle::Node(id));
        let chain = desc.chain();
        let mut data = Vec::with_capacity(chain.len());
        for class in chain {
            let mut values = Vec::new();
            let mut annotation = None;
            if class.is_externalizable() {
                if !class.has_block_data() {
                    return Err(err(
                        Kind::Unsupported,
                        self.s.pos(),
                        format!(
                            "{} is Externalizable data in the old protocol 1, which only its own class can delimit",
                            shown(&class.name)
                        ),
                    ));
                }
                annotation = Some(self.annotation()?);
            } else if class.is_serializable() {
                values.reserve(class.fields.len());
                for field in &class.fields {
                    // A throwable without a cause holds itself as its cause
                    // (getCause() says null): not a cycle to refuse.
                    if crate::jdk::self_field_is_null(&class.name, &field.name) && self.refers_to(handle) {
                        self.s.take(5, "a reference")?;
                        values.push(NULL);
                        continue;
                    }
                    values.push(self.field_value(field.code)?);
                }
                if class.has_write_method() {
                    annotation = Some(self.annotation()?);
                }
            }
            data.push(ClassData {
                desc: class,
                values,
                annotation,
            });
        }
        let node = jdk::interpret(&mut self.arena, &desc, &data, at)?;
        self.arena.set(id, node);
        Ok(id)
    }

    /// Whether the next content is a back-reference to handle `handle`.
    fn refers_to(&self, handle: usize) -> bool {
        let rest = &self.s.rest();
        rest.first() == Some(&TC_REFERENCE)
            && rest.get(1..5).is_some_and(|h| {
                u32::from_be_bytes([h[0], h[1], h[2], h[3]]).wrapping_sub(BASE_HANDLE) as usize == handle
            })
    }

    /// `TC_CLASS`: a `java.lang.Class` object, held as a marked node
    /// ([`crate::jdk::class_mark`]) that `EnumSet`s and `EnumMap`s read
    /// their enum class from (a value refuses it).
    fn class_object(&mut self, at: usize) -> Result<NodeId> {
        let desc = self.class_desc("a class object")?;
        let id = self.arena.add(
            Node::Collection {
                class: crate::jdk::class_mark(&desc.name).into(),
                items: Vec::new(),
            },
            at,
        );
        self.handles.push(Handle::Node(id));
        Ok(id)
    }

    fn field_value(&mut self, code: u8) -> Result<NodeId> {
        let at = self.s.pos();
        let value = match code {
            b'B' => KryoValue::Byte(self.s.u8("a byte field")? as i8),
            b'C' => KryoValue::Char(self.s.u16("a char field")?),
            b'D' => KryoValue::Double(f64::from_bits(self.s.i64("a double field")? as u64)),
            b'F' => KryoValue::Float(f32::from_bits(self.s.i32("a float field")? as u32)),
            b'I' => KryoValue::Int(self.s.i32("an int field")?),
            b'J' => KryoValue::Long(self.s.i64("a long field")?),
            b'S' => KryoValue::Short(self.s.u16("a short field")? as i16),
            b'Z' => KryoValue::Boolean(self.s.u8("a boolean field")? != 0),
            _ => return self.content(),
        };
        Ok(self.arena.add(Node::Leaf(value), at))
    }

    fn array(&mut self, at: usize) -> Result<NodeId> {
        let desc = self.class_desc("an array")?;
        let element = match desc.name.as_bytes() {
            [b'[', code] if primitive_size(*code).is_some() => *code,
            [b'[', b'L' | b'[', ..] => b'L',
            _ => {
                return Err(err(
                    Kind::Malformed,
                    at,
                    format!("{} is not an array class", shown(&desc.name)),
                ))
            }
        };
        let id = self.arena.reserve(at);
        self.handles.push(Handle::Node(id));
        let len_at = self.s.pos();
        let len = self.s.i32("an array length")?;
        if len < 0 {
            return Err(err(Kind::Malformed, len_at, format!("negative array length {len}")));
        }
        let unit = primitive_size(element).unwrap_or(1) as u64;
        let len = self.s.claim(len as u64, unit, len_at, "an array")?;
        let node = if element == b'B' {
            Node::Leaf(KryoValue::Bytes(self.s.take(len, "byte[]")?.to_vec()))
        } else {
            let mut items = Vec::with_capacity(len);
            for _ in 0..len {
                items.push(self.field_value(element)?);
            }
            Node::Collection {
                class: desc.name.clone(),
                items,
            }
        };
        self.arena.set(id, node);
        Ok(id)
    }

    fn enum_constant(&mut self, at: usize) -> Result<NodeId> {
        let desc = self.class_desc("an enum constant")?;
        if !desc.is_enum() {
            return Err(err(
                Kind::Malformed,
                at,
                format!("{} written as an enum constant is no enum", shown(&desc.name)),
            ));
        }
        let id = self.arena.reserve(at);
        self.handles.push(Handle::Node(id));
        let name_at = self.s.pos();
        let name = match self.s.u8("an enum constant's name")? {
            tc @ (TC_STRING | TC_LONGSTRING) => {
                let name = self.string(tc, name_at)?;
                self.text_of(name, name_at, "an enum constant's name")?.to_owned()
            }
            other => {
                return Err(err(
                    Kind::Malformed,
                    name_at,
                    format!("type code {other:#04x} where an enum constant's name belongs"),
                ))
            }
        };
        let node = Node::Enum {
            class: desc.name.clone(),
            name,
        };
        self.arena.set(id, node);
        Ok(id)
    }
}
