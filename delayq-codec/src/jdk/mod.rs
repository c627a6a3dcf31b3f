//! What the JDK's classes write when Java serializes them, shared by the two
//! codecs that carry Java's serialized form: Java serialization
//! ([`crate::serialization`]) and JBoss Marshalling River
//! ([`crate::marshalling`]). Both describe an object as its classes' fields
//! and `writeObject` data; this module turns those of JDK classes into the
//! value each stands for, so the two codecs (and Kryo, which shares the
//! value model) give the same [`KryoValue`]s.
//!
//! A JDK class this module does not know is never read as a POJO of its
//! private fields (what Java holds is not what its fields say: an
//! `AtomicInteger` is not `{"value": 7}`, a `Locale` is not its six
//! fields): [`finish`] refuses it, naming the class.

pub(crate) mod enums;
pub(crate) mod forms;
pub(crate) mod objects;
pub(crate) mod sorted;
pub(crate) mod time_ser;

pub(crate) use self::objects::{interpret, locale_text, Custom, Graph, Level, Shape};

use crate::kryo::KryoValue;

/// Why a JDK object's data could not be read.
#[derive(Debug)]
pub(crate) enum Fault {
    /// Valid data delayq does not read (a comparator, a class of the JDK it
    /// does not know...).
    Unsupported(String),
    /// Data no JDK writes.
    Malformed(String),
}

/// Fields that hold the object itself by default, which a value tree reads
/// as null: a throwable without a cause is its own cause (`getCause()`
/// says null), a synchronized view without a lock locks itself.
pub(crate) fn self_field_is_null(class: &str, field: &str) -> bool {
    matches!(
        (class, field),
        ("java.lang.Throwable", "cause")
            | ("java.util.Collections$SynchronizedCollection", "mutex")
            | ("java.util.Collections$SynchronizedMap", "mutex")
    )
}

/// Whether a class is the JDK's: what its fields hold is its own business.
pub(crate) fn is_jdk_class(name: &str) -> bool {
    ["java.", "javax.", "jdk.", "sun.", "com.sun."]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The codecs' arenas hold wrapped values, throwables, enum sets and class
/// objects as collections whose class carries this mark (a character no
/// Java class name has), turned into their own variants by [`finish`].
const MARK: char = '\0';

/// The marked class of a [`KryoValue::Wrapped`] (items: the value).
pub(crate) fn wrapped_mark(class: &str) -> String {
    format!("{MARK}W{class}")
}

/// The marked class of a [`KryoValue::Throwable`] (items: message, cause).
pub(crate) fn throwable_mark(class: &str) -> String {
    format!("{MARK}T{class}")
}

/// The marked class of a [`KryoValue::EnumSet`] (items: the constants).
pub(crate) fn enum_set_mark(class: &str, element: &str) -> String {
    format!("{MARK}E{class}{MARK}{element}")
}

/// The marked class of a `java.lang.Class` object (no items).
pub(crate) fn class_mark(name: &str) -> String {
    format!("{MARK}C{name}")
}

/// The class a `java.lang.Class` object's mark names.
pub(crate) fn class_of_mark(class: &str) -> Option<&str> {
    class.strip_prefix(MARK)?.strip_prefix('C')
}

/// Turns marked collections into their variants, fills in the ordinals of
/// the JDK's enums, and refuses a JDK class read as a POJO (and a `Class`
/// object, which has no value form).
pub(crate) fn finish(value: KryoValue) -> Result<KryoValue, Fault> {
    Ok(match value {
        KryoValue::Collection { class, items } => {
            let items = items.into_iter().map(finish).collect::<Result<Vec<_>, _>>()?;
            match class.strip_prefix(MARK) {
                Some(marked) => unmark(marked, items)?,
                None => KryoValue::Collection { class, items },
            }
        }
        KryoValue::Map { class, entries } => KryoValue::Map {
            class,
            entries: entries
                .into_iter()
                .map(|(k, v)| Ok((finish(k)?, finish(v)?)))
                .collect::<Result<_, Fault>>()?,
        },
        KryoValue::Object { class, .. } if is_jdk_class(&class) => {
            return Err(Fault::Unsupported(format!(
                "{} is a JDK class delayq does not read: its private fields are not its value",
                crate::kryo::class::shown(&class)
            )))
        }
        KryoValue::Object { class, fields } => KryoValue::Object {
            class,
            fields: fields
                .into_iter()
                .map(|mut f| {
                    f.value = finish(f.value)?;
                    Ok(f)
                })
                .collect::<Result<_, Fault>>()?,
        },
        KryoValue::Enum {
            class,
            ordinal: None,
            name: Some(name),
        } => KryoValue::Enum {
            ordinal: enums::ordinal(&class, &name),
            class,
            name: Some(name),
        },
        other => other,
    })
}

fn unmark(marked: &str, mut items: Vec<KryoValue>) -> Result<KryoValue, Fault> {
    let bad = || Fault::Malformed(format!("a {} without its parts", marked.get(1..).unwrap_or("")));
    let (kind, class) = marked.split_at(marked.len().min(1));
    Ok(match kind {
        "W" if items.len() == 1 => KryoValue::Wrapped {
            class: class.to_owned(),
            value: Box::new(items.pop().ok_or_else(bad)?),
        },
        "T" if items.len() == 2 => {
            let cause = items.pop().ok_or_else(bad)?;
            let message = match items.pop().ok_or_else(bad)? {
                KryoValue::String(s) => Some(s),
                KryoValue::Null => None,
                _ => return Err(Fault::Malformed(format!("{class} whose message is not a string"))),
            };
            KryoValue::Throwable {
                class: class.to_owned(),
                message,
                cause: (cause != KryoValue::Null).then(|| Box::new(cause)),
            }
        }
        "E" => {
            let (class, element) = class.split_once(MARK).ok_or_else(bad)?;
            KryoValue::EnumSet {
                jumbo: class == "java.util.JumboEnumSet",
                element: element.to_owned(),
                items,
            }
        }
        "C" => {
            return Err(Fault::Unsupported(format!(
                "a java.lang.Class object ({})",
                crate::kryo::class::shown(class)
            )))
        }
        _ => return Err(bad()),
    })
}

/// Each class of a POJO's chain with the fields it declares.
pub(crate) type Levels<'a, 'f> = Vec<(&'a str, Vec<&'f crate::kryo::KryoField>)>;

/// A POJO's fields by the class that declares them, as Java serialization
/// and River describe an object: the class chain the schema gives
/// (`extends`), the class first; each superclass takes the fields its
/// schema entry declares (the last of that name: a subclass's own field of
/// the same name comes first), the class the rest, in their order. `None`
/// on a superclass cycle or a chain deeper than [`crate::kryo::MAX_DEPTH`].
pub(crate) fn fields_by_class<'a, 'f>(
    class: &'a str,
    fields: &'f [crate::kryo::KryoField],
    schema: Option<&'a crate::kryo::KryoSchema>,
) -> Option<Levels<'a, 'f>> {
    use crate::kryo::schema::ClassDef;
    let mut chain = vec![class];
    while let Some(s) = schema.and_then(|schema| schema.superclass(chain[chain.len() - 1])) {
        if chain.contains(&s) || chain.len() > crate::kryo::MAX_DEPTH {
            return None;
        }
        chain.push(s);
    }
    let mut claimed = vec![false; fields.len()];
    let mut levels = Vec::with_capacity(chain.len());
    for &level in chain.iter().skip(1) {
        let own: &[(String, crate::kryo::JavaType)] = match schema.and_then(|s| s.get(level)) {
            Some(ClassDef::Pojo { own, .. }) => own,
            _ => &[],
        };
        let mut mine = Vec::new();
        for (name, _) in own {
            if let Some(i) = (0..fields.len())
                .rev()
                .find(|&i| !claimed[i] && fields[i].name == *name)
            {
                claimed[i] = true;
                mine.push(&fields[i]);
            }
        }
        levels.push((level, mine));
    }
    let rest = fields
        .iter()
        .zip(&claimed)
        .filter(|(_, c)| !**c)
        .map(|(f, _)| f)
        .collect();
    levels.insert(0, (class, rest));
    Some(levels)
}
