//! Objects as nodes: the JDK classes Java serialization carries become the
//! values [`crate::jdk`] reads them as (the same ones Kryo and River give);
//! any other class is a POJO, its fields superclasses' first.

use std::rc::Rc;

use super::desc::ClassDesc;
use super::error::{shown, Result, SerializationError, SerializationErrorKind as Kind};
use super::read::{ClassData, Item};
use super::tree::{Arena, Field, Node, NodeId};
use crate::jdk::{self, Custom, Fault, Graph, Level, Shape};
use crate::kryo::{JavaType, KryoValue};

/// The classes read by their custom data, for error messages.
pub(crate) const READ_CLASSES: &str = "the JDK's collections, maps, dates, java.time, numbers and the other \
    classes delayq-codec's README lists";

/// The arena as [`jdk::interpret`] sees it.
struct Nodes<'a> {
    arena: &'a mut Arena,
    at: usize,
}

impl Graph for Nodes<'_> {
    type Id = NodeId;

    fn leaf(&self, id: NodeId) -> Option<&KryoValue> {
        match self.arena.get(id) {
            Node::Leaf(v) => Some(v),
            _ => None,
        }
    }

    fn items(&self, id: NodeId) -> Option<(&str, &[NodeId])> {
        match self.arena.get(id) {
            Node::Collection { class, items } => Some((class, items)),
            _ => None,
        }
    }

    fn entries(&self, id: NodeId) -> Option<&[(NodeId, NodeId)]> {
        match self.arena.get(id) {
            Node::Map { entries, .. } => Some(entries),
            _ => None,
        }
    }

    fn class_of(&self, id: NodeId) -> Option<String> {
        match self.arena.get(id) {
            Node::Collection { class, .. }
            | Node::Map { class, .. }
            | Node::Object { class, .. }
            | Node::Enum { class, .. } => Some(class.to_string()),
            _ => None,
        }
    }

    fn share(&mut self, id: NodeId) {
        self.arena.reuse(id);
    }

    fn add(&mut self, value: KryoValue) -> std::result::Result<NodeId, Fault> {
        Ok(self.arena.add(Node::Leaf(value), self.at))
    }
}

/// The node for an object of class `desc`, from its classes' data.
pub(crate) fn interpret(arena: &mut Arena, desc: &ClassDesc, data: &[ClassData], at: usize) -> Result<Node> {
    let levels: Vec<Level<'_, NodeId>> = data
        .iter()
        .map(|d| Level {
            class: &d.desc.name,
            fields: d
                .desc
                .fields
                .iter()
                .map(|f| &*f.name)
                .zip(d.values.iter().copied())
                .collect(),
            custom: d.annotation.as_ref().map(|(_, items)| {
                let mut custom = Custom::default();
                for item in items {
                    match item {
                        Item::Block(bytes) => custom.bytes.extend_from_slice(bytes),
                        Item::Object(id) => custom.objects.push(*id),
                    }
                }
                custom
            }),
        })
        .collect();
    let shape = jdk::interpret(&mut Nodes { arena, at }, &desc.name, &levels).map_err(|fault| fault_at(fault, at))?;
    Ok(match shape {
        Shape::Value(v) => Node::Leaf(v),
        Shape::Collection { class, items } => Node::Collection {
            class: class.into(),
            items,
        },
        Shape::Map { class, entries } => Node::Map {
            class: class.into(),
            entries,
        },
        Shape::Pojo => return pojo(arena, &desc.name, data),
    })
}

/// A [`jdk::Fault`] at `at` as this codec's error.
pub(crate) fn fault_at(why: Fault, at: usize) -> SerializationError {
    let mut error = fault(why);
    error.set_offset(at);
    error
}

/// A [`jdk::Fault`] found in the value built (no offset) as this codec's error.
pub(crate) fn fault(fault: Fault) -> SerializationError {
    match fault {
        Fault::Unsupported(m) => SerializationError::new(Kind::Unsupported, None, m),
        Fault::Malformed(m) => SerializationError::new(Kind::Malformed, None, m),
    }
}

/// Any other class: its fields, superclasses' first. Custom data only the
/// class's own Java code can read is refused, not skipped: a value
/// re-written without it would lose it.
fn pojo(arena: &Arena, class: &Rc<str>, data: &[ClassData]) -> Result<Node> {
    let mut fields = Vec::new();
    for data in data {
        if let Some((at, items)) = &data.annotation
            && !items.is_empty()
        {
            let whose = if data.desc.name == *class {
                String::new()
            } else {
                format!(" (the class of {})", shown(class))
            };
            return Err(SerializationError::at(
                Kind::Unsupported,
                *at,
                format!(
                    "{}{whose} writes custom data (writeObject/writeExternal) that only its Java code \
                         can read; delayq reads classes whose data is their fields, and {READ_CLASSES}",
                    shown(&data.desc.name)
                ),
            ));
        }
        for (desc, &value) in data.desc.fields.iter().zip(&data.values) {
            let mut declared = desc.declared.clone();
            // A field holding a constant of its own declared enum: that
            // type is an enum, hence final (which Kryo's bytes depend on).
            if let Node::Enum { class, .. } = arena.get(value)
                && **class == *declared.class_name()
                && !declared.is_final()
            {
                declared = Rc::new(JavaType::final_class(class));
            }
            fields.push(Field {
                name: desc.name.clone(),
                declared,
                value,
            });
        }
    }
    Ok(Node::Object {
        class: class.clone(),
        fields,
    })
}

/// The magnitude (big-endian, no leading zeros) and signum of a two's
/// complement number.
pub(crate) fn sign_magnitude(twos: &[u8]) -> (i32, Vec<u8>) {
    let negative = twos.first().is_some_and(|&b| b & 0x80 != 0);
    let mut bytes = twos.to_vec();
    if negative {
        let mut carry = true;
        for b in bytes.iter_mut().rev() {
            let (v, c) = (!*b).overflowing_add(u8::from(carry));
            *b = v;
            carry = c;
        }
    }
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let magnitude = bytes.split_off(start);
    let signum = if magnitude.is_empty() {
        0
    } else if negative {
        -1
    } else {
        1
    };
    (signum, magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jdk::objects::twos_complement;
    use crate::kryo::decimal::shortest;

    #[test]
    fn sign_magnitude_both_ways() {
        for v in [
            0i128,
            1,
            -1,
            127,
            128,
            -128,
            -129,
            1250,
            -1250,
            i64::MIN as i128,
            i128::MAX,
            i128::MIN,
        ] {
            let twos = shortest(v.to_be_bytes().to_vec());
            let (signum, magnitude) = sign_magnitude(&twos);
            assert_eq!(signum, v.signum() as i32, "{v}");
            assert_eq!(
                magnitude,
                shortest(v.unsigned_abs().to_be_bytes().to_vec())
                    .into_iter()
                    .skip_while(|&b| b == 0)
                    .collect::<Vec<_>>(),
                "{v}"
            );
            assert_eq!(twos_complement(signum < 0, &magnitude), twos, "{v}");
        }
    }
}
