//! The JDK classes whose serialized form is known here, read from their
//! classes' fields and `writeObject` data into the value each stands for.

use super::{class_of_mark, enum_set_mark, throwable_mark, time_ser, wrapped_mark, Fault};
use crate::kryo::{decimal, JavaTime, KryoValue};

/// The object graph a codec read, as far as this module needs to see it.
pub(crate) trait Graph {
    /// A node of the graph.
    type Id: Copy + PartialEq;

    /// The value of a node without children (`Null` included).
    fn leaf(&self, id: Self::Id) -> Option<&KryoValue>;

    /// A collection node's class and items (arrays included).
    fn items(&self, id: Self::Id) -> Option<(&str, &[Self::Id])>;

    /// A map node's entries.
    fn entries(&self, id: Self::Id) -> Option<&[(Self::Id, Self::Id)]>;

    /// The class of a node with children (for messages).
    fn class_of(&self, id: Self::Id) -> Option<String>;

    /// Another place holds `id` now (a collection took an array's items).
    fn share(&mut self, id: Self::Id);

    /// A new node for a value computed from an object's fields.
    fn add(&mut self, value: KryoValue) -> Result<Self::Id, Fault>;
}

/// One class's part of an object, superclass first.
#[derive(Debug)]
pub(crate) struct Level<'a, Id> {
    pub(crate) class: &'a str,
    /// Its fields by name.
    pub(crate) fields: Vec<(&'a str, Id)>,
    /// Its `writeObject`/`writeExternal` data, if it wrote any.
    pub(crate) custom: Option<Custom<Id>>,
}

/// Custom data: the bytes of its blocks, joined, and its objects, in order.
#[derive(Debug, Default)]
pub(crate) struct Custom<Id> {
    pub(crate) bytes: Vec<u8>,
    pub(crate) objects: Vec<Id>,
}

/// What an object is, for the codec to build its node.
#[derive(Debug)]
pub(crate) enum Shape<Id> {
    Value(KryoValue),
    /// A collection (or a marked wrapper, throwable or enum set).
    Collection {
        class: String,
        items: Vec<Id>,
    },
    Map {
        class: String,
        entries: Vec<(Id, Id)>,
    },
    /// Not a JDK class with a known form: a POJO of its fields.
    Pojo,
}

fn malformed(message: impl Into<String>) -> Fault {
    Fault::Malformed(message.into())
}

/// Reads custom data: primitives from the bytes, objects in order.
struct Cursor<'a, Id> {
    class: &'a str,
    bytes: &'a [u8],
    pos: usize,
    objects: &'a [Id],
    next: usize,
}

impl<'a, Id: Copy> Cursor<'a, Id> {
    fn short(&self, what: &str) -> Fault {
        malformed(format!("{}'s writeObject data ends before {what}", self.class))
    }

    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Fault> {
        let bytes = self.bytes.get(self.pos..self.pos + N).ok_or_else(|| self.short(what))?;
        self.pos += N;
        let mut out = [0; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    fn i32(&mut self, what: &str) -> Result<i32, Fault> {
        Ok(i32::from_be_bytes(self.take(what)?))
    }

    fn i64(&mut self, what: &str) -> Result<i64, Fault> {
        Ok(i64::from_be_bytes(self.take(what)?))
    }

    fn object(&mut self, what: &str) -> Result<Id, Fault> {
        let id = *self.objects.get(self.next).ok_or_else(|| self.short(what))?;
        self.next += 1;
        Ok(id)
    }

    fn objects_left(&self) -> usize {
        self.objects.len() - self.next
    }

    /// A size that `per` objects each stand for, checked against the
    /// objects written (before anything is allocated for it).
    fn size(&self, size: i32, per: usize, what: &str) -> Result<usize, Fault> {
        match usize::try_from(size) {
            Ok(n) if n.checked_mul(per).is_some_and(|total| total <= self.objects_left()) => Ok(n),
            _ => Err(malformed(format!(
                "{} claims {size} {what}, its data holds {} objects",
                self.class,
                self.objects_left()
            ))),
        }
    }

    fn items(&mut self, n: usize) -> Vec<Id> {
        let items = self.objects[self.next..self.next + n].to_vec();
        self.next += n;
        items
    }

    fn pairs(&mut self, n: usize) -> Vec<(Id, Id)> {
        let pairs = self.objects[self.next..self.next + 2 * n]
            .chunks_exact(2)
            .map(|kv| (kv[0], kv[1]))
            .collect();
        self.next += 2 * n;
        pairs
    }
}

/// An object's levels, with the lookups the JDK classes need.
struct Obj<'a, 'l, G: Graph> {
    g: &'a mut G,
    class: &'l str,
    levels: &'l [Level<'l, G::Id>],
}

impl<'l, G: Graph> Obj<'_, 'l, G> {
    fn bad(&self, what: &str) -> Fault {
        malformed(format!("{} without its {what} as the JDK writes it", self.class))
    }

    /// A field by name, the most derived class's first.
    fn field(&self, name: &str) -> Result<G::Id, Fault> {
        self.levels
            .iter()
            .rev()
            .find_map(|l| l.fields.iter().find(|(n, _)| *n == name).map(|(_, id)| *id))
            .ok_or_else(|| self.bad(&format!("{name} field")))
    }

    fn leaf(&self, name: &str) -> Result<&KryoValue, Fault> {
        let id = self.field(name)?;
        self.g.leaf(id).ok_or_else(|| self.bad(name))
    }

    fn int(&self, name: &str) -> Result<i32, Fault> {
        match self.leaf(name)? {
            KryoValue::Int(v) => Ok(*v),
            _ => Err(self.bad(name)),
        }
    }

    fn long(&self, name: &str) -> Result<i64, Fault> {
        match self.leaf(name)? {
            KryoValue::Long(v) => Ok(*v),
            _ => Err(self.bad(name)),
        }
    }

    fn string(&self, name: &str) -> Result<Option<String>, Fault> {
        match self.leaf(name)? {
            KryoValue::String(s) => Ok(Some(s.clone())),
            KryoValue::Null => Ok(None),
            _ => Err(self.bad(name)),
        }
    }

    fn is_null(&self, id: G::Id) -> bool {
        matches!(self.g.leaf(id), Some(KryoValue::Null))
    }

    /// The custom data one class of the chain wrote.
    fn custom(&self, class: &str) -> Result<Cursor<'l, G::Id>, Fault> {
        let custom = self
            .levels
            .iter()
            .find(|l| l.class == class)
            .and_then(|l| l.custom.as_ref())
            .ok_or_else(|| self.bad(&format!("{class} writeObject data")))?;
        Ok(Cursor {
            class: self.class,
            bytes: &custom.bytes,
            pos: 0,
            objects: &custom.objects,
            next: 0,
        })
    }

    /// Sorted collections and maps with a `Comparator` order by Java code
    /// delayq cannot run; only natural order is read.
    fn no_comparator(&self, id: G::Id) -> Result<(), Fault> {
        if self.is_null(id) {
            return Ok(());
        }
        let comparator = self.g.class_of(id).unwrap_or_else(|| "a value".to_owned());
        Err(Fault::Unsupported(format!(
            "{} ordered by a Comparator ({comparator}): delayq reads natural order only",
            self.class
        )))
    }

    /// The items of an array (or collection) node, now also held by the
    /// object being read.
    fn items_of(&mut self, id: G::Id, what: &str) -> Result<Vec<G::Id>, Fault> {
        let items = match self.g.items(id) {
            Some((_, items)) => items.to_vec(),
            None => return Err(self.bad(what)),
        };
        for &item in &items {
            self.g.share(item);
        }
        Ok(items)
    }

    fn collection(&self, class: &str, items: Vec<G::Id>) -> Shape<G::Id> {
        Shape::Collection {
            class: class.to_owned(),
            items,
        }
    }

    fn wrapped(&self, class: &str, inner: G::Id) -> Shape<G::Id> {
        Shape::Collection {
            class: wrapped_mark(class),
            items: vec![inner],
        }
    }

    fn wrapped_value(&mut self, class: &str, value: KryoValue) -> Result<Shape<G::Id>, Fault> {
        let inner = self.g.add(value)?;
        Ok(self.wrapped(class, inner))
    }

    /// A `char[]` node's characters.
    fn chars(&self, id: G::Id, what: &str) -> Result<Vec<u16>, Fault> {
        let (_, items) = self.g.items(id).ok_or_else(|| self.bad(what))?;
        items
            .iter()
            .map(|&c| match self.g.leaf(c) {
                Some(KryoValue::Char(c)) => Ok(*c),
                _ => Err(self.bad(what)),
            })
            .collect()
    }

    fn text(&self, units: &[u16], what: &str) -> Result<String, Fault> {
        String::from_utf16(units).map_err(|_| {
            Fault::Unsupported(format!(
                "{} holding a lone UTF-16 surrogate in its {what}, which Rust strings cannot hold",
                self.class
            ))
        })
    }
}

/// Whether a list of this class is `RandomAccess` (the unmodifiable and
/// synchronized views of such a list are their `RandomAccess` kind).
fn random_access(class: &str) -> bool {
    matches!(
        class,
        "java.util.ArrayList"
            | "java.util.Vector"
            | "java.util.Stack"
            | "java.util.Arrays$ArrayList"
            | "java.util.concurrent.CopyOnWriteArrayList"
            | "java.util.ImmutableCollections$List12"
            | "java.util.ImmutableCollections$ListN"
            | "java.util.Collections$SingletonList"
            | "java.util.Collections$EmptyList"
    ) || class.ends_with("RandomAccessList")
}

/// The class of `List.of`/`Set.of`/`Map.of` of `n` elements, as
/// `CollSer.readResolve` builds it.
fn immutable_class(tag: i32, n: usize) -> Option<&'static str> {
    Some(match (tag & 0xff, n) {
        (1 | 4, 1 | 2) => "java.util.ImmutableCollections$List12",
        (1 | 4, _) => "java.util.ImmutableCollections$ListN",
        (2, 1 | 2) => "java.util.ImmutableCollections$Set12",
        (2, _) => "java.util.ImmutableCollections$SetN",
        (3, 1) => "java.util.ImmutableCollections$Map1",
        (3, _) => "java.util.ImmutableCollections$MapN",
        _ => return None,
    })
}

/// What the object of class `class`, whose classes wrote `levels`, stands
/// for.
pub(crate) fn interpret<G: Graph>(g: &mut G, class: &str, levels: &[Level<'_, G::Id>]) -> Result<Shape<G::Id>, Fault> {
    let mut o = Obj { g, class, levels };
    let value = |v| Ok(Shape::Value(v));
    match class {
        "java.lang.Boolean" => match o.leaf("value")? {
            KryoValue::Boolean(b) => value(KryoValue::Boolean(*b)),
            _ => Err(o.bad("value")),
        },
        "java.lang.Byte"
        | "java.lang.Character"
        | "java.lang.Short"
        | "java.lang.Integer"
        | "java.lang.Long"
        | "java.lang.Float"
        | "java.lang.Double" => {
            let v = o.leaf("value")?.clone();
            let fits = matches!(
                (class, &v),
                ("java.lang.Byte", KryoValue::Byte(_))
                    | ("java.lang.Character", KryoValue::Char(_))
                    | ("java.lang.Short", KryoValue::Short(_))
                    | ("java.lang.Integer", KryoValue::Int(_))
                    | ("java.lang.Long", KryoValue::Long(_))
                    | ("java.lang.Float", KryoValue::Float(_))
                    | ("java.lang.Double", KryoValue::Double(_))
            );
            if fits {
                value(v)
            } else {
                Err(o.bad("value"))
            }
        }
        "java.util.UUID" => {
            let most = o.long("mostSigBits")? as u64;
            let least = o.long("leastSigBits")? as u64;
            value(KryoValue::Uuid((u128::from(most) << 64) | u128::from(least)))
        }
        "java.math.BigInteger" => value(KryoValue::BigInteger(big_integer(&o)?)),
        "java.math.BigDecimal" => {
            let scale = o.int("scale")?;
            match o.leaf("intVal")? {
                KryoValue::BigInteger(unscaled) => value(KryoValue::BigDecimal {
                    unscaled: unscaled.clone(),
                    scale,
                }),
                _ => Err(o.bad("intVal")),
            }
        }
        "java.util.Date" | "java.sql.Date" | "java.sql.Time" | "java.sql.Timestamp" => {
            let mut c = o.custom("java.util.Date")?;
            let ms = c.i64("the time")?;
            value(match class {
                "java.util.Date" => KryoValue::Date(ms),
                "java.sql.Date" => KryoValue::Time(JavaTime::SqlDate(ms)),
                "java.sql.Time" => KryoValue::Time(JavaTime::SqlTime(ms)),
                _ => {
                    let nanos = u32::try_from(o.int("nanos")?)
                        .ok()
                        .filter(|n| *n < 1_000_000_000)
                        .ok_or_else(|| o.bad("nanos"))?;
                    KryoValue::Time(JavaTime::SqlTimestamp {
                        seconds: ms.div_euclid(1000),
                        nanos,
                    })
                }
            })
        }
        time_ser::CLASS => {
            let c = o.custom(time_ser::CLASS)?;
            if !c.objects.is_empty() {
                return Err(o.bad("external data"));
            }
            time_ser::read(c.bytes, false)
                .map(Shape::Value)
                .map_err(Fault::Malformed)
        }
        "java.util.HashMap" | "java.util.LinkedHashMap" | "java.util.Hashtable" => {
            let base = if class == "java.util.Hashtable" {
                "java.util.Hashtable"
            } else {
                "java.util.HashMap"
            };
            let mut c = o.custom(base)?;
            c.i32("the capacity")?;
            let size = c.i32("the size")?;
            let size = c.size(size, 2, "entries")?;
            Ok(Shape::Map {
                class: class.to_owned(),
                entries: c.pairs(size),
            })
        }
        "java.util.TreeMap" => {
            o.no_comparator(o.field("comparator")?)?;
            let mut c = o.custom(class)?;
            let size = c.i32("the size")?;
            let size = c.size(size, 2, "entries")?;
            Ok(Shape::Map {
                class: class.to_owned(),
                entries: c.pairs(size),
            })
        }
        "java.util.EnumMap" => {
            let mut c = o.custom(class)?;
            let size = c.i32("the size")?;
            let size = c.size(size, 2, "entries")?;
            Ok(Shape::Map {
                class: class.to_owned(),
                entries: c.pairs(size),
            })
        }
        "java.util.concurrent.ConcurrentSkipListMap" | "java.util.concurrent.ConcurrentHashMap" => {
            if class == "java.util.concurrent.ConcurrentSkipListMap" {
                o.no_comparator(o.field("comparator")?)?;
            }
            // Key, value, ... then a null key (ConcurrentHashMap: null, null).
            let c = o.custom(class)?;
            let end = if class.ends_with("ConcurrentHashMap") { 2 } else { 1 };
            let objects = c.objects;
            let pairs = objects
                .len()
                .checked_sub(end)
                .filter(|n| n % 2 == 0)
                .ok_or_else(|| o.bad("entries"))?;
            if !objects[pairs..].iter().all(|&id| o.is_null(id)) {
                return Err(o.bad("entries"));
            }
            Ok(Shape::Map {
                class: class.to_owned(),
                entries: objects[..pairs].chunks_exact(2).map(|kv| (kv[0], kv[1])).collect(),
            })
        }
        "java.util.HashSet" | "java.util.LinkedHashSet" => {
            let mut c = o.custom("java.util.HashSet")?;
            c.i32("the capacity")?;
            c.take::<4>("the load factor")?;
            let size = c.i32("the size")?;
            let size = c.size(size, 1, "elements")?;
            Ok(o.collection(class, c.items(size)))
        }
        "java.util.TreeSet" => {
            let mut c = o.custom(class)?;
            o.no_comparator(c.object("the comparator")?)?;
            let size = c.i32("the size")?;
            let size = c.size(size, 1, "elements")?;
            Ok(o.collection(class, c.items(size)))
        }
        "java.util.concurrent.ConcurrentSkipListSet" => {
            let map = o.field("m")?;
            let keys: Vec<G::Id> =
                o.g.entries(map)
                    .ok_or_else(|| o.bad("map"))?
                    .iter()
                    .map(|&(k, _)| k)
                    .collect();
            for &k in &keys {
                o.g.share(k);
            }
            Ok(o.collection(class, keys))
        }
        "java.util.concurrent.CopyOnWriteArraySet" => {
            let list = o.field("al")?;
            let items = o.items_of(list, "list")?;
            Ok(o.collection(class, items))
        }
        "java.util.ArrayList" => {
            let size = o.int("size")?;
            let mut c = o.custom(class)?;
            c.i32("the capacity")?;
            let size = c.size(size, 1, "elements")?;
            Ok(o.collection(class, c.items(size)))
        }
        "java.util.LinkedList" | "java.util.ArrayDeque" | "java.util.concurrent.CopyOnWriteArrayList" => {
            let mut c = o.custom(class)?;
            let size = c.i32("the size")?;
            let size = c.size(size, 1, "elements")?;
            Ok(o.collection(class, c.items(size)))
        }
        "java.util.PriorityQueue" => {
            o.no_comparator(o.field("comparator")?)?;
            let size = o.int("size")?;
            let mut c = o.custom(class)?;
            c.i32("the queue's length")?;
            let size = c.size(size, 1, "elements")?;
            Ok(o.collection(class, c.items(size)))
        }
        "java.util.Vector" | "java.util.Stack" => {
            let count = o.int("elementCount")?;
            let data = o.field("elementData")?;
            let mut items = o.items_of(data, "elementData")?;
            let count = usize::try_from(count)
                .ok()
                .filter(|&n| n <= items.len())
                .ok_or_else(|| o.bad("elementCount within its elementData"))?;
            items.truncate(count);
            Ok(o.collection(class, items))
        }
        "java.util.CollSer" => {
            let tag = o.int("tag")?;
            let mut c = o.custom(class)?;
            let len = c.i32("the length")?;
            let len = c.size(len, 1, "elements")?;
            let is_map = tag & 0xff == 3;
            if is_map && len % 2 != 0 {
                return Err(o.bad("entries"));
            }
            let class = immutable_class(tag, if is_map { len / 2 } else { len })
                .ok_or_else(|| malformed(format!("java.util.CollSer of unknown tag {tag}")))?;
            if is_map {
                Ok(Shape::Map {
                    class: class.to_owned(),
                    entries: c.pairs(len / 2),
                })
            } else {
                Ok(o.collection(class, c.items(len)))
            }
        }
        "java.util.Arrays$ArrayList" => {
            let array = o.field("a")?;
            let items = o.items_of(array, "array")?;
            Ok(o.collection(class, items))
        }
        "java.util.Collections$SingletonList" | "java.util.Collections$SingletonSet" => {
            let element = o.field("element")?;
            Ok(o.collection(class, vec![element]))
        }
        "java.util.Collections$SingletonMap" => Ok(Shape::Map {
            class: class.to_owned(),
            entries: vec![(o.field("k")?, o.field("v")?)],
        }),
        "java.util.Collections$EmptyList" | "java.util.Collections$EmptySet" => Ok(o.collection(class, Vec::new())),
        "java.util.Collections$EmptyMap" => Ok(Shape::Map {
            class: class.to_owned(),
            entries: Vec::new(),
        }),
        _ if class.starts_with("java.util.Collections$Unmodifiable")
            || class.starts_with("java.util.Collections$Synchronized")
            || class.starts_with("java.util.Collections$Checked") =>
        {
            let inner = ["list", "ns", "nm", "ss", "sm", "m", "c"]
                .iter()
                .find_map(|f| o.field(f).ok())
                .ok_or_else(|| o.bad("collection"))?;
            // readResolve makes a view of a RandomAccess list its RandomAccess kind.
            let inner_class = o.g.items(inner).map(|(c, _)| c.to_owned());
            let class = match class {
                "java.util.Collections$UnmodifiableList" | "java.util.Collections$SynchronizedList"
                    if inner_class.as_deref().is_some_and(random_access) =>
                {
                    class.replace("List", "RandomAccessList")
                }
                other => other.to_owned(),
            };
            Ok(o.wrapped(&class, inner))
        }
        "java.util.EnumSet$SerializationProxy" => {
            let element_type = o.field("elementType")?;
            let element = match o.g.items(element_type) {
                Some((mark, _)) => class_of_mark(mark).map(str::to_owned),
                None => None,
            }
            .ok_or_else(|| o.bad("elementType"))?;
            let elements = o.field("elements")?;
            let items = o.items_of(elements, "elements")?;
            let set = super::enums::enum_set_class(&element, items.len());
            Ok(Shape::Collection {
                class: enum_set_mark(set, &element),
                items,
            })
        }
        "java.util.concurrent.atomic.AtomicInteger"
        | "java.util.concurrent.atomic.AtomicLong"
        | "java.util.concurrent.atomic.AtomicReference" => {
            let inner = o.field("value")?;
            let fits = matches!(
                (class, o.g.leaf(inner)),
                ("java.util.concurrent.atomic.AtomicInteger", Some(KryoValue::Int(_)))
                    | ("java.util.concurrent.atomic.AtomicLong", Some(KryoValue::Long(_)))
                    | ("java.util.concurrent.atomic.AtomicReference", _)
            );
            if !fits {
                return Err(o.bad("value"));
            }
            Ok(o.wrapped(class, inner))
        }
        "java.util.concurrent.atomic.AtomicBoolean" => {
            let v = o.int("value")?;
            o.wrapped_value(class, KryoValue::Boolean(v != 0))
        }
        "java.util.BitSet" => {
            let bits = o.field("bits")?;
            match o.g.items(bits) {
                Some(("[J", _)) => Ok(o.wrapped(class, bits)),
                _ => Err(o.bad("bits")),
            }
        }
        "java.util.Currency" => {
            let code = o.field("currencyCode")?;
            match o.g.leaf(code) {
                Some(KryoValue::String(_)) => Ok(o.wrapped(class, code)),
                _ => Err(o.bad("currencyCode")),
            }
        }
        "java.net.URI" => {
            let text = o.field("string")?;
            match o.g.leaf(text) {
                Some(KryoValue::String(_)) => Ok(o.wrapped(class, text)),
                _ => Err(o.bad("string")),
            }
        }
        "java.util.Locale" => {
            let field = |name| o.string(name).map(Option::unwrap_or_default);
            let text = locale_text(
                &field("language")?,
                &field("country")?,
                &field("variant")?,
                &field("script")?,
                &field("extensions")?,
            );
            o.wrapped_value(class, KryoValue::String(text))
        }
        "java.net.URL" => {
            let protocol = o.string("protocol")?.ok_or_else(|| o.bad("protocol"))?;
            let authority = o.string("authority")?.unwrap_or_default();
            let file = o.string("file")?.unwrap_or_default();
            let reference = o.string("ref")?;
            // URL.toExternalForm (as URLStreamHandler writes it).
            let mut text = format!("{protocol}:");
            if !authority.is_empty() {
                text.push_str("//");
                text.push_str(&authority);
            }
            text.push_str(&file);
            if let Some(r) = reference {
                text.push('#');
                text.push_str(&r);
            }
            o.wrapped_value(class, KryoValue::String(text))
        }
        "java.lang.StringBuilder" => {
            let mut c = o.custom(class)?;
            let count = c.i32("the length")?;
            let chars = c.object("the characters")?;
            let units = o.chars(chars, "characters")?;
            let count = usize::try_from(count)
                .ok()
                .filter(|&n| n <= units.len())
                .ok_or_else(|| o.bad("length within its characters"))?;
            let text = o.text(&units[..count], "characters")?;
            o.wrapped_value(class, KryoValue::String(text))
        }
        "java.lang.StringBuffer" => {
            let count = o.int("count")?;
            let units = o.chars(o.field("value")?, "value")?;
            let count = usize::try_from(count)
                .ok()
                .filter(|&n| n <= units.len())
                .ok_or_else(|| o.bad("count within its value"))?;
            let text = o.text(&units[..count], "value")?;
            o.wrapped_value(class, KryoValue::String(text))
        }
        _ if levels.iter().any(|l| l.class == "java.lang.Throwable") => {
            let message = o.field("detailMessage")?;
            let cause = o.field("cause")?;
            Ok(Shape::Collection {
                class: throwable_mark(class),
                items: vec![message, cause],
            })
        }
        _ => Ok(Shape::Pojo),
    }
}

/// `BigInteger`'s serial form (signum and big-endian magnitude) as two's
/// complement, checked as `BigInteger.readObject` checks it.
fn big_integer<G: Graph>(o: &Obj<'_, '_, G>) -> Result<Vec<u8>, Fault> {
    let signum = o.int("signum")?;
    let magnitude = match o.leaf("magnitude")? {
        KryoValue::Bytes(b) => b.as_slice(),
        _ => return Err(o.bad("magnitude")),
    };
    let digits = &magnitude[magnitude.iter().position(|&b| b != 0).unwrap_or(magnitude.len())..];
    if !(-1..=1).contains(&signum) || digits.is_empty() != (signum == 0) {
        return Err(malformed(format!(
            "BigInteger: signum {signum} does not fit its magnitude"
        )));
    }
    Ok(twos_complement(signum < 0, digits))
}

/// Two's complement, shortest form, of a sign and a big-endian magnitude
/// without leading zeros.
pub(crate) fn twos_complement(negative: bool, magnitude: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(magnitude.len() + 1);
    out.push(0);
    out.extend_from_slice(magnitude);
    if negative {
        let mut carry = true;
        for b in out.iter_mut().rev() {
            let (v, c) = (!*b).overflowing_add(u8::from(carry));
            *b = v;
            carry = c;
        }
    }
    decimal::shortest(out)
}

/// `Locale.toString()`: `en_US`, `fr`, `zh_TW_#Hant`, `ja_JP_#u-ca-japanese`.
pub(crate) fn locale_text(language: &str, country: &str, variant: &str, script: &str, extensions: &str) -> String {
    let (l, r, v, s, e) = (
        !language.is_empty(),
        !country.is_empty(),
        !variant.is_empty(),
        !script.is_empty(),
        !extensions.is_empty(),
    );
    let mut out = language.to_owned();
    if r || (l && (v || s || e)) {
        out.push('_');
        out.push_str(country);
    }
    if v && (l || r) {
        out.push('_');
        out.push_str(variant);
    }
    if s && (l || r) {
        out.push_str("_#");
        out.push_str(script);
    }
    if e && (l || r) {
        out.push('_');
        if !s {
            out.push('#');
        }
        out.push_str(extensions);
    }
    out
}
