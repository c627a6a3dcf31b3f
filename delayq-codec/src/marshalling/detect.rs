//! Whether bytes look like what Redisson's `MarshallingCodec` writes,
//! without decoding them: the version byte 4, then a plausible first object
//! whose size agrees with the payload's where River's form fixes it.

use super::ids;

pub(super) fn looks_like(raw: &[u8]) -> bool {
    let [ids::VERSION, lead, rest @ ..] = raw else {
        return false;
    };
    let be16 = |b: &[u8]| b.get(..2).map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])));
    let be32 = |b: &[u8]| {
        b.get(..4)
            .and_then(|b| usize::try_from(i32::from_be_bytes([b[0], b[1], b[2], b[3]])).ok())
    };
    // n characters of modified UTF-8 take n to 3n bytes.
    let chars_fit = |n: usize, bytes: usize| n <= bytes && bytes <= n * 3;
    match *lead {
        ids::NULL | ids::STRING_EMPTY | ids::BOOLEAN_OBJECT_TRUE | ids::BOOLEAN_OBJECT_FALSE => rest.is_empty(),
        ids::EMPTY_LIST_OBJECT | ids::EMPTY_SET_OBJECT | ids::EMPTY_MAP_OBJECT => rest.is_empty(),
        ids::BYTE_OBJECT => rest.len() == 1,
        ids::SHORT_OBJECT | ids::CHARACTER_OBJECT => rest.len() == 2,
        ids::INTEGER_OBJECT | ids::FLOAT_OBJECT => rest.len() == 4,
        ids::LONG_OBJECT | ids::DOUBLE_OBJECT => rest.len() == 8,
        ids::STRING_SMALL => match rest.split_first() {
            Some((&n, chars)) => chars_fit(if n == 0 { 0x100 } else { usize::from(n) }, chars.len()),
            None => false,
        },
        ids::STRING_MEDIUM => be16(rest).is_some_and(|n| chars_fit(if n == 0 { 0x10000 } else { n }, rest.len() - 2)),
        ids::STRING_LARGE => be32(rest).is_some_and(|n| n > 0 && chars_fit(n, rest.len() - 4)),
        ids::ARRAY_EMPTY => {
            matches!(rest, [c] if is_component(*c))
                || matches!(rest, [ids::OBJECT_ARRAY_TYPE_CLASS, _, ..])
                || serial_class_first(rest)
        }
        ids::ARRAY_SMALL => match rest.split_first() {
            Some((&n, rest)) => array_fits(if n == 0 { 0x100 } else { usize::from(n) }, rest),
            None => false,
        },
        ids::ARRAY_MEDIUM => be16(rest).is_some_and(|n| array_fits(if n == 0 { 0x10000 } else { n }, &rest[2..])),
        ids::UNMODIFIABLE_COLLECTION..=ids::UNMODIFIABLE_SORTED_MAP => !rest.is_empty(),
        ids::COLLECTION_EMPTY => {
            matches!(rest, [id] if is_collection_id(*id))
                // An EnumSet or EnumMap names its enum class after its id.
                || matches!(rest, [ids::CC_ENUM_SET_PROXY | ids::CC_ENUM_MAP, _, ..])
        }
        ids::COLLECTION_SMALL => {
            matches!(rest, [n, id, items @ ..] if is_collection_id(*id) && items.len() >= if *n == 0 { 0x100 } else { usize::from(*n) })
        }
        ids::COLLECTION_MEDIUM => be16(rest).is_some_and(|n| {
            rest.get(2).is_some_and(|id| is_collection_id(*id)) && rest.len() - 3 >= if n == 0 { 0x10000 } else { n }
        }),
        ids::SINGLETON_LIST_OBJECT | ids::SINGLETON_SET_OBJECT | ids::SINGLETON_MAP_OBJECT => !rest.is_empty(),
        ids::NEW_OBJECT => match rest {
            // A serializable class: its name as a String object, a
            // serialVersionUID, a field count, at least a superclass byte.
            [ids::SERIALIZABLE_CLASS | ids::WRITE_OBJECT_CLASS, ids::STRING_SMALL, n, tail @ ..] => {
                let n = usize::from(*n);
                tail.len() > n + 8 + 4 && is_class_name(&tail[..n])
            }
            // An enum or externalizable class: an int length, then the name
            // (an enum of the default package has no dot in it).
            [ids::ENUM_TYPE_CLASS | ids::EXTERNALIZABLE_CLASS, tail @ ..] => be32(tail).is_some_and(|n| {
                n < 0x10000 && tail.len() > 4 + n && (is_class_name(&tail[4..4 + n]) || is_simple_name(&tail[4..4 + n]))
            }),
            // Serializable JDK classes River names by id.
            [ids::CC_COPY_ON_WRITE_ARRAY_LIST | ids::CC_COPY_ON_WRITE_ARRAY_SET, _, ..] => true,
            _ => false,
        },
        _ => false,
    }
}

fn is_collection_id(id: u8) -> bool {
    ids::cc_collection(id).is_some()
        || ids::cc_map(id).is_some()
        || matches!(id, ids::CC_ENUM_SET_PROXY | ids::CC_ENUM_MAP)
}

/// A class id an array's component can be: a primitive, `String`,
/// `Object`, a boxed class, an array class.
fn is_component(id: u8) -> bool {
    (ids::STRING_CLASS..=0x31).contains(&id)
}

/// Whether `n` elements of the component first in `rest` fit the bytes
/// after it: exactly, for primitives (booleans eight to a byte); at least
/// a byte each, for objects.
fn array_fits(n: usize, rest: &[u8]) -> bool {
    let Some((&component, elements)) = rest.split_first() else {
        return false;
    };
    let size = match component {
        ids::PRIM_BOOLEAN => return elements.len() == n.div_ceil(8),
        ids::PRIM_BYTE => 1,
        ids::PRIM_SHORT | ids::PRIM_CHAR => 2,
        ids::PRIM_INT | ids::PRIM_FLOAT => 4,
        ids::PRIM_LONG | ids::PRIM_DOUBLE => 8,
        ids::OBJECT_ARRAY_TYPE_CLASS => return elements.len() > n,
        c if is_component(c) => return elements.len() >= n,
        // The component is a Serializable class (`BigDecimal[]`,
        // `Instant[]`): its descriptor, then the elements.
        ids::SERIALIZABLE_CLASS | ids::WRITE_OBJECT_CLASS => return serial_class_first(rest),
        _ => return false,
    };
    elements.len() == n * size
}

/// A serializable class descriptor first: its kind, its name as a short
/// string, a serialVersionUID and a field count after it.
fn serial_class_first(rest: &[u8]) -> bool {
    match rest {
        [ids::SERIALIZABLE_CLASS | ids::WRITE_OBJECT_CLASS, ids::STRING_SMALL, n, tail @ ..] => {
            let n = usize::from(*n);
            tail.len() >= n + 8 + 4 && is_class_name(&tail[..n])
        }
        _ => false,
    }
}

/// A class name without a package (`Shade`): a Java identifier.
fn is_simple_name(name: &[u8]) -> bool {
    name.first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_' || *b == b'$')
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$'))
}

/// `a.b.C` / `a.B$C`, ASCII.
fn is_class_name(name: &[u8]) -> bool {
    name.len() >= 3
        && name.contains(&b'.')
        && name
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'$'))
}
