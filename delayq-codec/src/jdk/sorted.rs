//! Java's sorted collections (`TreeMap`, `TreeSet`, `ConcurrentSkipListMap`,
//! `ConcurrentSkipListSet`) in their natural order before any codec writes
//! them. A value built in Rust holds its elements in any order; Java does
//! not check it everywhere: `TreeMap` and `TreeSet` read from Java
//! serialization or River build their tree from the order written, without
//! comparing (a tree out of order answers lookups wrongly, silently), and
//! a `ConcurrentSkipList*` refuses it. Kryo and Jackson add each element
//! with `compareTo`, which also merges two that compare equal.
//!
//! So every writer sorts by the order Java's `compareTo` gives where it is
//! known here (strings by UTF-16 code units, numbers, characters, booleans,
//! `BigInteger`, `BigDecimal` by value, enum constants by ordinal, dates,
//! `Instant`, `UUID`, `LocalDate`, `LocalTime`, `LocalDateTime`,
//! `Duration`), and refuses, naming the class: elements `compareTo` calls
//! equal (Java keeps one), a null or elements of two classes (Java's
//! `compareTo` throws), and, where Java trusts the order written,
//! elements whose order is not known here (a POJO's own `compareTo`).
//! `PriorityQueue` is not sorted: Java rebuilds its heap on reading.

use std::cmp::Ordering;

use num_bigint::BigInt;

use crate::kryo::{JavaTime, KryoValue};

/// Whether Java builds the collection from the order written (Java
/// serialization, River) or adds each element with `compareTo` (Kryo,
/// Jackson).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JavaReads {
    InOrderWritten,
    ByCompareTo,
}

fn is_sorted_class(class: &str) -> bool {
    matches!(
        class,
        "java.util.TreeMap"
            | "java.util.TreeSet"
            | "java.util.concurrent.ConcurrentSkipListMap"
            | "java.util.concurrent.ConcurrentSkipListSet"
    )
}

/// `value` with every sorted collection in it in natural order: `None` when
/// it is already (nothing is copied), or why it cannot be written.
pub(crate) fn in_natural_order(value: &KryoValue, reads: JavaReads) -> Result<Option<KryoValue>, String> {
    Ok(match value {
        KryoValue::Collection { class, items } => {
            let inner = each(items, reads)?;
            let sorted = if is_sorted_class(class) {
                sort(class, inner.as_deref().unwrap_or(items), |v| v, reads)?
            } else {
                None
            };
            sorted.or(inner).map(|items| KryoValue::Collection {
                class: class.clone(),
                items,
            })
        }
        KryoValue::Map { class, entries } => {
            let mut inner: Option<Vec<(KryoValue, KryoValue)>> = None;
            for (i, (k, v)) in entries.iter().enumerate() {
                let key = in_natural_order(k, reads)?;
                let value = in_natural_order(v, reads)?;
                if key.is_some() || value.is_some() {
                    let out = inner.get_or_insert_with(|| entries.clone());
                    if let Some(key) = key {
                        out[i].0 = key;
                    }
                    if let Some(value) = value {
                        out[i].1 = value;
                    }
                }
            }
            let sorted = if is_sorted_class(class) {
                sort(class, inner.as_deref().unwrap_or(entries), |(k, _)| k, reads)?
            } else {
                None
            };
            sorted.or(inner).map(|entries| KryoValue::Map {
                class: class.clone(),
                entries,
            })
        }
        KryoValue::Object { class, fields } => {
            let mut out = None;
            for (i, field) in fields.iter().enumerate() {
                if let Some(value) = in_natural_order(&field.value, reads)? {
                    out.get_or_insert_with(|| fields.clone())[i].value = value;
                }
            }
            out.map(|fields| KryoValue::Object {
                class: class.clone(),
                fields,
            })
        }
        KryoValue::Wrapped { class, value } => in_natural_order(value, reads)?.map(|value| KryoValue::Wrapped {
            class: class.clone(),
            value: Box::new(value),
        }),
        KryoValue::Throwable {
            class,
            message,
            cause: Some(cause),
        } => in_natural_order(cause, reads)?.map(|cause| KryoValue::Throwable {
            class: class.clone(),
            message: message.clone(),
            cause: Some(Box::new(cause)),
        }),
        _ => None,
    })
}

/// The elements with any sorted collection inside them sorted.
fn each(items: &[KryoValue], reads: JavaReads) -> Result<Option<Vec<KryoValue>>, String> {
    let mut out: Option<Vec<KryoValue>> = None;
    for (i, item) in items.iter().enumerate() {
        if let Some(item) = in_natural_order(item, reads)? {
            out.get_or_insert_with(|| items.to_vec())[i] = item;
        }
    }
    Ok(out)
}

/// The elements of a sorted collection in the order of their `key`:
/// `None` when they are in it already.
fn sort<T: Clone>(
    class: &str,
    items: &[T],
    key: impl Fn(&T) -> &KryoValue,
    reads: JavaReads,
) -> Result<Option<Vec<T>>, String> {
    if items.len() < 2 {
        if let Some(KryoValue::Null) = items.first().map(&key) {
            return Err(format!("a {class} holding a null: Java's natural order has none"));
        }
        return Ok(None);
    }
    let known = items
        .windows(2)
        .map(|w| compare(key(&w[0]), key(&w[1])))
        .collect::<Option<Vec<Ordering>>>();
    let Some(orders) = known else {
        return unknown(class, items.iter().map(&key), reads);
    };
    if orders.iter().all(|o| *o == Ordering::Less) {
        return Ok(None);
    }
    let mut sorted = items.to_vec();
    sorted.sort_by(|a, b| compare(key(a), key(b)).unwrap_or(Ordering::Equal));
    if let Some(w) = sorted
        .windows(2)
        .find(|w| compare(key(&w[0]), key(&w[1])) == Some(Ordering::Equal))
    {
        return Err(format!(
            "a {class} holding {} and {}, which compareTo calls equal: Java keeps only one",
            key(&w[0]).to_json_text(),
            key(&w[1]).to_json_text()
        ));
    }
    Ok(Some(sorted))
}

/// Elements whose order this module does not know: refused where Java
/// trusts the order written, or where no Java collection can hold them.
fn unknown<'a, T>(
    class: &str,
    mut keys: impl Iterator<Item = &'a KryoValue>,
    reads: JavaReads,
) -> Result<Option<Vec<T>>, String> {
    let first = keys.next().and_then(KryoValue::java_class);
    let mut classes = vec![first];
    for key in keys {
        let c = key.java_class();
        if !classes.contains(&c) {
            classes.push(c);
        }
    }
    match classes.as_slice() {
        [Some(_)] if reads == JavaReads::ByCompareTo => Ok(None),
        [Some(element)] => Err(format!(
            "a {class} of {element}, whose natural order (its compareTo) delayq does not know: Java builds the \
             {class} from the order written, without comparing"
        )),
        _ if classes.contains(&None) => Err(format!("a {class} holding a null: Java's natural order has none")),
        _ => Err(format!(
            "a {class} of elements of different classes ({}): Java's compareTo throws on them",
            classes.iter().flatten().copied().collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Java's `a.compareTo(b)`, when both are of one class whose natural order
/// is known here.
fn compare(a: &KryoValue, b: &KryoValue) -> Option<Ordering> {
    use KryoValue as V;
    Some(match (a, b) {
        (V::String(a), V::String(b)) => a.encode_utf16().cmp(b.encode_utf16()),
        (V::Char(a), V::Char(b)) => a.cmp(b),
        (V::Boolean(a), V::Boolean(b)) => a.cmp(b),
        (V::Byte(a), V::Byte(b)) => a.cmp(b),
        (V::Short(a), V::Short(b)) => a.cmp(b),
        (V::Int(a), V::Int(b)) => a.cmp(b),
        (V::Long(a), V::Long(b)) => a.cmp(b),
        (V::Float(a), V::Float(b)) => java_float_order(f64::from(*a), f64::from(*b)),
        (V::Double(a), V::Double(b)) => java_float_order(*a, *b),
        (V::Date(a), V::Date(b)) => a.cmp(b),
        (V::Instant { seconds: s1, nanos: n1 }, V::Instant { seconds: s2, nanos: n2 }) => (s1, n1).cmp(&(s2, n2)),
        // UUID.compareTo: the two halves as signed longs.
        (V::Uuid(a), V::Uuid(b)) => {
            let halves = |u: u128| ((u >> 64) as u64 as i64, u as u64 as i64);
            halves(*a).cmp(&halves(*b))
        }
        (V::BigInteger(a), V::BigInteger(b)) => BigInt::from_signed_bytes_be(a).cmp(&BigInt::from_signed_bytes_be(b)),
        (
            V::BigDecimal {
                unscaled: u1,
                scale: s1,
            },
            V::BigDecimal {
                unscaled: u2,
                scale: s2,
            },
        ) => decimal_order(u1, *s1, u2, *s2),
        (V::Enum { class: c1, .. }, V::Enum { class: c2, .. }) if c1 == c2 => ordinal(a)?.cmp(&ordinal(b)?),
        (V::Time(a), V::Time(b)) => match (a, b) {
            (JavaTime::LocalDate(a), JavaTime::LocalDate(b)) => a.cmp(b),
            (JavaTime::LocalTime(a), JavaTime::LocalTime(b)) => a.cmp(b),
            (JavaTime::LocalDateTime(a), JavaTime::LocalDateTime(b)) => a.cmp(b),
            (JavaTime::Duration { seconds: s1, nanos: n1 }, JavaTime::Duration { seconds: s2, nanos: n2 }) => {
                (s1, n1).cmp(&(s2, n2))
            }
            _ => return None,
        },
        _ => return None,
    })
}

/// An enum constant's ordinal: as read, or a JDK enum's by its name.
fn ordinal(constant: &KryoValue) -> Option<u32> {
    match constant {
        KryoValue::Enum {
            ordinal: Some(ordinal), ..
        } => Some(*ordinal),
        KryoValue::Enum {
            class,
            name: Some(name),
            ..
        } => super::enums::constants(class)?
            .iter()
            .position(|c| c == name)
            .map(|i| i as u32),
        _ => None,
    }
}

/// `Double.compare`: -0.0 before 0.0, every NaN equal and after +∞.
fn java_float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.total_cmp(&b),
    }
}

/// `BigDecimal.compareTo`: by value, whatever the scales (2.5 equals
/// 2.50). Compares digits, never scales a number up by its scale (a
/// scale of a billion would be a billion digits).
fn decimal_order(u1: &[u8], s1: i32, u2: &[u8], s2: i32) -> Ordering {
    let (a, b) = (BigInt::from_signed_bytes_be(u1), BigInt::from_signed_bytes_be(u2));
    let sign = a.sign().cmp(&b.sign());
    if sign != Ordering::Equal || a.sign() == num_bigint::Sign::NoSign {
        return sign;
    }
    let (da, db) = (a.magnitude().to_string(), b.magnitude().to_string());
    // The power of ten of the first digit.
    let (ea, eb) = (da.len() as i64 - i64::from(s1), db.len() as i64 - i64::from(s2));
    let magnitude = ea.cmp(&eb).then_with(|| {
        let width = da.len().max(db.len());
        format!("{da:0<width$}").cmp(&format!("{db:0<width$}"))
    });
    if a.sign() == num_bigint::Sign::Minus {
        magnitude.reverse()
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> (Vec<u8>, i32) {
        match KryoValue::big_decimal(text).unwrap() {
            KryoValue::BigDecimal { unscaled, scale } => (unscaled, scale),
            _ => unreachable!(),
        }
    }

    #[test]
    fn decimals_compare_by_value_whatever_their_scale() {
        let cmp = |a: &str, b: &str| {
            let ((u1, s1), (u2, s2)) = (dec(a), dec(b));
            decimal_order(&u1, s1, &u2, s2)
        };
        assert_eq!(cmp("2.5", "2.50"), Ordering::Equal);
        assert_eq!(cmp("2.5", "10"), Ordering::Less);
        assert_eq!(cmp("-2.5", "-10"), Ordering::Greater);
        assert_eq!(cmp("0.001", "0"), Ordering::Greater);
        assert_eq!(cmp("0E+5", "0.00"), Ordering::Equal);
        assert_eq!(cmp("1E+1000000000", "9"), Ordering::Greater);
        assert_eq!(cmp("123.45", "123.456"), Ordering::Less);
    }

    #[test]
    fn doubles_and_uuids_compare_as_java_does() {
        assert_eq!(java_float_order(-0.0, 0.0), Ordering::Less);
        assert_eq!(java_float_order(f64::NAN, f64::INFINITY), Ordering::Greater);
        // UUID halves are signed: 8000... is before 0000...
        let high = KryoValue::Uuid(1 << 127);
        assert_eq!(compare(&high, &KryoValue::Uuid(1)), Some(Ordering::Less));
    }
}
