//! River's one-byte ids (protocol version 4, JBoss Marshalling 2.0.11) and
//! the JDK classes whose serialized form delayq knows.

/// The protocol version Redisson's `MarshallingCodec` writes (River's
/// default); its reader takes 2 to 4.
pub(super) const VERSION: u8 = 4;
pub(super) const MIN_VERSION: u8 = 2;

// Objects.
pub(super) const NULL: u8 = 0x01;
pub(super) const REPEAT_OBJECT_FAR: u8 = 0x02;
pub(super) const PREDEFINED_OBJECT: u8 = 0x03;
pub(super) const NEW_OBJECT: u8 = 0x04;
pub(super) const NEW_OBJECT_UNSHARED: u8 = 0x05;
pub(super) const REPEAT_OBJECT_NEAR: u8 = 0x39;
pub(super) const REPEAT_OBJECT_NEARISH: u8 = 0x3a;

// Class descriptors.
pub(super) const REPEAT_CLASS_FAR: u8 = 0x06;
pub(super) const PLAIN_CLASS: u8 = 0x07;
pub(super) const PROXY_CLASS: u8 = 0x08;
pub(super) const SERIALIZABLE_CLASS: u8 = 0x09;
pub(super) const EXTERNALIZABLE_CLASS: u8 = 0x0a;
pub(super) const EXTERNALIZER_CLASS: u8 = 0x0b;
pub(super) const ENUM_TYPE_CLASS: u8 = 0x0c;
pub(super) const OBJECT_ARRAY_TYPE_CLASS: u8 = 0x0d;
/// `0x0e..=0x13`: classes of a class table (Redisson configures none).
pub(super) const PREDEFINED_CLASSES: std::ops::RangeInclusive<u8> = 0x0e..=0x13;
/// A serializable class with a `writeObject` method: custom data follows
/// its fields, up to [`END_BLOCK_DATA`].
pub(super) const WRITE_OBJECT_CLASS: u8 = 0x38;
pub(super) const REPEAT_CLASS_NEAR: u8 = 0x3b;
pub(super) const REPEAT_CLASS_NEARISH: u8 = 0x3c;

pub(super) const STRING_CLASS: u8 = 0x14;
pub(super) const CLASS_CLASS: u8 = 0x15;
pub(super) const OBJECT_CLASS: u8 = 0x16;
pub(super) const BYTE_ARRAY_CLASS: u8 = 0x19;

pub(super) const PRIM_BOOLEAN: u8 = 0x20;
pub(super) const PRIM_BYTE: u8 = 0x21;
pub(super) const PRIM_SHORT: u8 = 0x22;
pub(super) const PRIM_INT: u8 = 0x23;
pub(super) const PRIM_LONG: u8 = 0x24;
pub(super) const PRIM_CHAR: u8 = 0x25;
pub(super) const PRIM_FLOAT: u8 = 0x26;
pub(super) const PRIM_DOUBLE: u8 = 0x27;

pub(super) const BOOLEAN_CLASS: u8 = 0x29;
pub(super) const DOUBLE_CLASS: u8 = 0x30;

// Custom (`writeObject`, `writeExternal`) data.
pub(super) const START_BLOCK_SMALL: u8 = 0x32;
pub(super) const START_BLOCK_MEDIUM: u8 = 0x33;
pub(super) const START_BLOCK_LARGE: u8 = 0x34;
pub(super) const END_BLOCK_DATA: u8 = 0x35;
pub(super) const CLEAR_CLASS_CACHE: u8 = 0x36;
pub(super) const CLEAR_INSTANCE_CACHE: u8 = 0x37;

// Strings, arrays, boxed values.
pub(super) const STRING_EMPTY: u8 = 0x3d;
pub(super) const STRING_SMALL: u8 = 0x3e;
pub(super) const STRING_MEDIUM: u8 = 0x3f;
pub(super) const STRING_LARGE: u8 = 0x40;
pub(super) const ARRAY_EMPTY: u8 = 0x41;
pub(super) const ARRAY_SMALL: u8 = 0x42;
pub(super) const ARRAY_MEDIUM: u8 = 0x43;
pub(super) const ARRAY_LARGE: u8 = 0x44;
pub(super) const ARRAY_EMPTY_UNSHARED: u8 = 0x45;
pub(super) const ARRAY_LARGE_UNSHARED: u8 = 0x48;
pub(super) const BYTE_OBJECT: u8 = 0x49;
pub(super) const SHORT_OBJECT: u8 = 0x4a;
pub(super) const INTEGER_OBJECT: u8 = 0x4b;
pub(super) const LONG_OBJECT: u8 = 0x4c;
pub(super) const CHARACTER_OBJECT: u8 = 0x4d;
pub(super) const FLOAT_OBJECT: u8 = 0x4e;
pub(super) const DOUBLE_OBJECT: u8 = 0x4f;
pub(super) const BOOLEAN_OBJECT_TRUE: u8 = 0x50;
pub(super) const BOOLEAN_OBJECT_FALSE: u8 = 0x51;

// Collections River writes itself: a size form, then the collection's id.
pub(super) const COLLECTION_EMPTY: u8 = 0x52;
pub(super) const COLLECTION_SMALL: u8 = 0x53;
pub(super) const COLLECTION_MEDIUM: u8 = 0x54;
pub(super) const COLLECTION_LARGE: u8 = 0x55;
pub(super) const COLLECTION_LARGE_UNSHARED: u8 = 0x59;
pub(super) const CC_ARRAY_LIST: u8 = 0x5a;
pub(super) const CC_LINKED_LIST: u8 = 0x5b;
pub(super) const SINGLETON_LIST_OBJECT: u8 = 0x5c;
pub(super) const EMPTY_LIST_OBJECT: u8 = 0x5d;
pub(super) const CC_HASH_SET: u8 = 0x5e;
pub(super) const CC_LINKED_HASH_SET: u8 = 0x5f;
pub(super) const CC_TREE_SET: u8 = 0x60;
pub(super) const SINGLETON_SET_OBJECT: u8 = 0x61;
pub(super) const EMPTY_SET_OBJECT: u8 = 0x62;
pub(super) const CC_IDENTITY_HASH_MAP: u8 = 0x63;
pub(super) const CC_HASH_MAP: u8 = 0x64;
pub(super) const CC_HASHTABLE: u8 = 0x65;
pub(super) const CC_LINKED_HASH_MAP: u8 = 0x66;
pub(super) const CC_TREE_MAP: u8 = 0x67;
pub(super) const SINGLETON_MAP_OBJECT: u8 = 0x68;
pub(super) const EMPTY_MAP_OBJECT: u8 = 0x69;
pub(super) const CC_ENUM_SET_PROXY: u8 = 0x6a;
pub(super) const CC_ENUM_MAP: u8 = 0x6c;
pub(super) const CC_COPY_ON_WRITE_ARRAY_LIST: u8 = 0x73;
pub(super) const CC_COPY_ON_WRITE_ARRAY_SET: u8 = 0x74;
pub(super) const UNMODIFIABLE_COLLECTION: u8 = 0x7c;
pub(super) const UNMODIFIABLE_LIST: u8 = 0x7d;
pub(super) const UNMODIFIABLE_SORTED_MAP: u8 = 0x81;
pub(super) const CC_VECTOR: u8 = 0x75;
pub(super) const CC_STACK: u8 = 0x76;
pub(super) const CC_ARRAY_DEQUE: u8 = 0x78;

/// The Java class of a collection id (after a `COLLECTION_*` size form).
pub(super) fn cc_collection(id: u8) -> Option<&'static str> {
    Some(match id {
        CC_ARRAY_LIST => "java.util.ArrayList",
        CC_LINKED_LIST => "java.util.LinkedList",
        CC_HASH_SET => "java.util.HashSet",
        CC_LINKED_HASH_SET => "java.util.LinkedHashSet",
        CC_TREE_SET => "java.util.TreeSet",
        CC_VECTOR => "java.util.Vector",
        CC_STACK => "java.util.Stack",
        CC_ARRAY_DEQUE => "java.util.ArrayDeque",
        _ => return None,
    })
}

/// The Java class of a map id (after a `COLLECTION_*` size form).
pub(super) fn cc_map(id: u8) -> Option<&'static str> {
    Some(match id {
        CC_HASH_MAP => "java.util.HashMap",
        CC_LINKED_HASH_MAP => "java.util.LinkedHashMap",
        CC_HASHTABLE => "java.util.Hashtable",
        CC_IDENTITY_HASH_MAP => "java.util.IdentityHashMap",
        CC_TREE_MAP => "java.util.TreeMap",
        _ => return None,
    })
}

/// The collection id River writes a collection class with (what its
/// writer's table of known classes gives), if it has one.
pub(super) fn cc_id_of(class: &str) -> Option<u8> {
    Some(match class {
        "java.util.ArrayList" => CC_ARRAY_LIST,
        "java.util.LinkedList" => CC_LINKED_LIST,
        "java.util.Vector" => CC_VECTOR,
        "java.util.Stack" => CC_STACK,
        "java.util.ArrayDeque" => CC_ARRAY_DEQUE,
        _ => return None,
    })
}

/// The class a predefined class id stands for, where it is a class River
/// can name in a class descriptor without writing it out.
pub(super) fn predefined_class(id: u8) -> Option<&'static str> {
    Some(match id {
        STRING_CLASS => "java.lang.String",
        CLASS_CLASS => "java.lang.Class",
        OBJECT_CLASS => "java.lang.Object",
        0x17 => "java.lang.Enum",
        0x18 => "[Z",
        BYTE_ARRAY_CLASS => "[B",
        0x1a => "[S",
        0x1b => "[I",
        0x1c => "[J",
        0x1d => "[C",
        0x1e => "[F",
        0x1f => "[D",
        PRIM_BOOLEAN => "boolean",
        PRIM_BYTE => "byte",
        PRIM_SHORT => "short",
        PRIM_INT => "int",
        PRIM_LONG => "long",
        PRIM_CHAR => "char",
        PRIM_FLOAT => "float",
        PRIM_DOUBLE => "double",
        0x28 => "void",
        BOOLEAN_CLASS => "java.lang.Boolean",
        0x2a => "java.lang.Byte",
        0x2b => "java.lang.Short",
        0x2c => "java.lang.Integer",
        0x2d => "java.lang.Long",
        0x2e => "java.lang.Character",
        0x2f => "java.lang.Float",
        DOUBLE_CLASS => "java.lang.Double",
        0x31 => "java.lang.Void",
        SINGLETON_LIST_OBJECT => "java.util.Collections$SingletonList",
        EMPTY_LIST_OBJECT => "java.util.Collections$EmptyList",
        SINGLETON_SET_OBJECT => "java.util.Collections$SingletonSet",
        EMPTY_SET_OBJECT => "java.util.Collections$EmptySet",
        SINGLETON_MAP_OBJECT => "java.util.Collections$SingletonMap",
        EMPTY_MAP_OBJECT => "java.util.Collections$EmptyMap",
        0x6b => "java.util.EnumSet",
        0x6c => "java.util.EnumMap",
        0x6d => "java.util.AbstractCollection",
        0x6e => "java.util.AbstractSet",
        0x6f => "java.util.AbstractList",
        0x70 => "java.util.AbstractQueue",
        0x71 => "java.util.AbstractSequentialList",
        0x72 => "java.util.concurrent.ConcurrentHashMap",
        0x73 => "java.util.concurrent.CopyOnWriteArrayList",
        0x74 => "java.util.concurrent.CopyOnWriteArraySet",
        0x77 => "org.jboss.marshalling.Pair",
        0x79 => "java.util.Collections$ReverseComparator",
        0x7a => "java.util.Collections$ReverseComparator2",
        0x7b => "java.util.Collections$CopiesList",
        0x7c => "java.util.Collections$UnmodifiableCollection",
        0x7d => "java.util.Collections$UnmodifiableList",
        0x7e => "java.util.Collections$UnmodifiableMap",
        0x7f => "java.util.Collections$UnmodifiableSet",
        0x80 => "java.util.Collections$UnmodifiableSortedSet",
        0x81 => "java.util.Collections$UnmodifiableSortedMap",
        0x82 => "java.util.Collections$UnmodifiableMap$UnmodifiableEntrySet",
        id => return cc_collection(id).or_else(|| cc_map(id)),
    })
}

/// The JDK classes whose serialized form delayq reads and writes, with
/// their `serialVersionUID`s (part of each class's serialized form).
pub(super) mod jdk {
    pub(in crate::marshalling) const HASH_MAP: &str = "java.util.HashMap";
    pub(in crate::marshalling) const HASH_MAP_UID: i64 = 362498820763181265;
    pub(in crate::marshalling) const LINKED_HASH_MAP: &str = "java.util.LinkedHashMap";
    pub(in crate::marshalling) const LINKED_HASH_MAP_UID: i64 = 3801124242820219131;
    pub(in crate::marshalling) const HASH_SET: &str = "java.util.HashSet";
    pub(in crate::marshalling) const HASH_SET_UID: i64 = -5024744406713321676;
    pub(in crate::marshalling) const LINKED_HASH_SET: &str = "java.util.LinkedHashSet";
    pub(in crate::marshalling) const LINKED_HASH_SET_UID: i64 = -2851667679971038690;
    pub(in crate::marshalling) const DATE: &str = "java.util.Date";
    pub(in crate::marshalling) const DATE_UID: i64 = 7523967970034938905;
    pub(in crate::marshalling) const UUID: &str = "java.util.UUID";
    pub(in crate::marshalling) const UUID_UID: i64 = -4856846361193249489;
    pub(in crate::marshalling) const BIG_DECIMAL: &str = "java.math.BigDecimal";
    pub(in crate::marshalling) const BIG_DECIMAL_UID: i64 = 6108874887143696463;
    pub(in crate::marshalling) const BIG_INTEGER: &str = "java.math.BigInteger";
    pub(in crate::marshalling) const BIG_INTEGER_UID: i64 = -8287574255936472291;
    pub(in crate::marshalling) const NUMBER: &str = "java.lang.Number";
    pub(in crate::marshalling) const NUMBER_UID: i64 = -8742448824652078965;
    /// `java.time`'s externalizable serial form (`Instant` is written as one).
    pub(in crate::marshalling) const TIME_SER: &str = "java.time.Ser";
    pub(in crate::marshalling) const TIME_SER_UID: i64 = -7683839454370182990;
    /// `java.time.Ser`'s type byte for an `Instant`.
    pub(in crate::marshalling) const TIME_SER_INSTANT: u8 = 2;
}
