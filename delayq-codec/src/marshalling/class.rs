//! River's class descriptors and its class cache (classes are numbered in
//! the order the stream first describes them; later mentions repeat the
//! number).

use std::rc::Rc;

use crate::kryo::java_type::Primitive;
use crate::kryo::JavaType;

/// A class as a River stream describes it.
#[derive(Debug, Clone)]
pub(super) enum Class {
    /// A class River names by its one-byte id (`String`, `Object`, the
    /// primitives, boxed types, `byte[]`, JDK collections...).
    Predefined(u8),
    /// A `Serializable` class: its fields, and custom data if it has a
    /// `writeObject` method.
    Serializable(Rc<Serial>),
    /// An `Externalizable` class (its data is all custom).
    Externalizable(Rc<str>),
    /// An enum (instances are written by constant name).
    Enum(Rc<str>),
    /// A class no instance can be read with (plain, proxy, array): what it
    /// is, for errors.
    Other(Rc<str>),
}

impl Class {
    /// The Java name of the class, for errors and declared field types.
    pub(super) fn name(&self) -> Rc<str> {
        match self {
            Class::Predefined(id) => super::ids::predefined_class(*id).unwrap_or("?").into(),
            Class::Serializable(s) => s.name.clone(),
            Class::Externalizable(name) | Class::Enum(name) | Class::Other(name) => name.clone(),
        }
    }
}

/// A `Serializable` class descriptor.
#[derive(Debug)]
pub(super) struct Serial {
    pub(super) name: Rc<str>,
    /// Whether `writeObject` data follows the fields (`ID_WRITE_OBJECT_CLASS`).
    pub(super) write_object: bool,
    /// Its own fields, in stream order (River sorts them by name).
    pub(super) fields: Vec<Rc<FieldDesc>>,
    /// The nearest serializable superclass with anything to read (fields or
    /// custom data): reading an instance walks only those, so that a long
    /// chain of empty superclasses costs nothing per instance.
    pub(super) data_super: Option<Rc<Serial>>,
}

impl Serial {
    fn has_data(&self) -> bool {
        self.write_object || !self.fields.is_empty()
    }

    /// What `data_super` of a class with this superclass is.
    pub(super) fn data_super_of(superclass: Option<&Rc<Serial>>) -> Option<Rc<Serial>> {
        let superclass = superclass?;
        if superclass.has_data() {
            Some(superclass.clone())
        } else {
            superclass.data_super.clone()
        }
    }

    /// The classes whose data an instance holds, superclass first.
    pub(super) fn data_chain(self: &Rc<Self>) -> Vec<Rc<Serial>> {
        let mut chain = Vec::new();
        let mut next = if self.has_data() {
            Some(self.clone())
        } else {
            self.data_super.clone()
        };
        while let Some(class) = next {
            next = class.data_super.clone();
            chain.push(class);
        }
        chain.reverse();
        chain
    }
}

/// A field of a class descriptor.
#[derive(Debug)]
pub(super) struct FieldDesc {
    pub(super) name: Rc<str>,
    /// `Some` for a primitive field (written bare); `None` for an object.
    pub(super) primitive: Option<Primitive>,
    /// The declared type as the stream gives it (River writes `Object` for
    /// every non-primitive field).
    pub(super) declared: JavaType,
    /// `writeUnshared` fields may not be back-referenced.
    pub(super) unshared: bool,
}

/// The class cache: a slot is reserved when a descriptor starts (so that
/// numbers follow the stream's order) and filled when it is complete.
#[derive(Debug, Default)]
pub(super) struct Classes {
    slots: Vec<Option<Class>>,
}

impl Classes {
    pub(super) fn reserve(&mut self) -> usize {
        self.slots.push(None);
        self.slots.len() - 1
    }

    pub(super) fn push(&mut self, class: Class) {
        self.slots.push(Some(class));
    }

    pub(super) fn set(&mut self, index: usize, class: Class) {
        self.slots[index] = Some(class);
    }

    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// A described class; `Err` with why not.
    pub(super) fn get(&self, index: i64) -> Result<&Class, String> {
        match usize::try_from(index).ok().and_then(|i| self.slots.get(i)) {
            Some(Some(class)) => Ok(class),
            Some(None) => Err(format!("class {index} is referred to inside its own description")),
            None => Err(format!("no class {index} (only {} described)", self.slots.len())),
        }
    }

    pub(super) fn clear(&mut self) {
        self.slots.clear();
    }
}
