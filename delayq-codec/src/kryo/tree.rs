//! Kryo bytes ⇄ [`KryoValue`], following Kryo 5's serializers:
//! `writeClassAndObject` (class, then value), `writeObjectOrNull` (null
//! marker unless the serializer writes null itself), `FieldSerializer`
//! (fields by name, primitives bare, final types without their class),
//! `CollectionSerializer` and `MapSerializer` (with the generic types a
//! field declares).

use std::sync::Arc;

use super::class::{self, Builtin};
use super::error::{KryoError, KryoErrorKind, Result};
use super::java_type::{JavaType, Primitive};
use super::read::Reader;
use super::schema::{ClassDef, KryoSchema};
use super::value::{KryoField, KryoValue};
use super::write::Writer;
use crate::bounds;

pub(crate) fn decode(raw: &[u8], schema: Option<&KryoSchema>) -> Result<KryoValue> {
    let decoded = read_payload(Reader::new(raw), schema).and_then(|(value, mut r)| {
        if !r.has_java_objects() {
            return Ok(value);
        }
        // Java objects inside: read again with their values (the first
        // reading's value is dropped first: one value at a time is bounded).
        drop(value);
        let values = r.java_objects()?;
        read_payload(Reader::new(raw).with_java_values(values), schema).map(|(v, _)| v)
    });
    decoded.map_err(|error| match error.kind() {
        KryoErrorKind::Unsupported | KryoErrorKind::TooDeep => error,
        _ if reference_marker_after_class(raw) => error.with_note(
            "if the Java side uses Kryo5Codec(..., useReferences = true): a reference marker (1) follows \
             the class name here, and delayq reads Kryo5Codec's default, references off",
        ),
        _ => error,
    })
}

fn read_payload<'a>(mut r: Reader<'a>, schema: Option<&KryoSchema>) -> Result<(KryoValue, Reader<'a>)> {
    let value = read_classed(&mut r, schema, None)?;
    r.finish()?;
    Ok((value, r))
}

/// Whether the byte after the top-level class is Kryo's "new object"
/// reference marker, as `useReferences = true` writes before every object
/// that is not a string or a boxed number (only consulted once a decode failed).
fn reference_marker_after_class(raw: &[u8]) -> bool {
    let mut r = Reader::new(raw);
    match read_class(&mut r) {
        Ok(Some(class)) => {
            let simple = matches!(
                &*class,
                "java.lang.String"
                    | "java.lang.Long"
                    | "java.lang.Integer"
                    | "java.lang.Short"
                    | "java.lang.Byte"
                    | "java.lang.Double"
                    | "java.lang.Float"
                    | "java.lang.Boolean"
                    | "java.lang.Character"
            );
            !simple && raw.get(r.pos()) == Some(&1)
        }
        _ => false,
    }
}

/// A value with its sorted collections in Java's natural order (Java's
/// Kryo adds each element with `compareTo`).
fn natural(value: &KryoValue) -> Result<Option<KryoValue>> {
    use crate::jdk::sorted::{in_natural_order, JavaReads};
    in_natural_order(value, JavaReads::ByCompareTo).map_err(KryoError::encode)
}

pub(crate) fn encode(value: &KryoValue) -> Result<Vec<u8>> {
    let sorted = natural(value)?;
    let value = sorted.as_ref().unwrap_or(value);
    let mut w = Writer::new();
    w.bare_names = true;
    write_classed(&mut w, value, None)?;
    Ok(w.out)
}

/// [`encode`] of a value a Rust type made: its classes must be named as
/// Java's (a bare Rust type name is refused).
pub(crate) fn encode_serde(value: &KryoValue) -> Result<Vec<u8>> {
    let sorted = natural(value)?;
    let value = sorted.as_ref().unwrap_or(value);
    let mut w = Writer::new();
    write_classed(&mut w, value, None)?;
    Ok(w.out)
}

// ---------------------------------------------------------------- reading

/// `readClass`: `None` for null.
pub(crate) fn read_class(r: &mut Reader<'_>) -> Result<Option<Arc<str>>> {
    let at = r.pos();
    match r.var_u32()? {
        0 => Ok(None),
        1 => {
            let id = r.var_u32()?;
            if let Some(name) = r.known_name(id) {
                return Ok(Some(name));
            }
            let name: Arc<str> = r
                .string()?
                .ok_or_else(|| r.error(KryoErrorKind::Malformed, "a null class name"))?
                .into();
            r.remember_name(id, name.clone());
            Ok(Some(name))
        }
        id => match class::registered_name(id) {
            Some(name) => Ok(Some(name.into())),
            None => Err(KryoError::new(
                KryoErrorKind::Unsupported,
                Some(at),
                format!(
                    "class id {} is a registered class: the Java side registers classes (Redisson's \
                     Kryo5Codec(allowedClasses, useReferences) with a non-empty allowedClasses, which sets \
                     Kryo's registrationRequired); delayq reads the default Kryo5Codec() only",
                    id - 2
                ),
            )),
        },
    }
}

/// A value written with `writeClassAndObject`; `generics` are the generic
/// arguments its declaration gives (a POJO field's), if any.
pub(crate) fn read_classed(
    r: &mut Reader<'_>,
    schema: Option<&KryoSchema>,
    generics: Option<&[JavaType]>,
) -> Result<KryoValue> {
    match read_class(r)? {
        None => {
            r.charge(bounds::VALUE)?;
            Ok(KryoValue::Null)
        }
        Some(class) => read_body(r, schema, &class, generics),
    }
}

fn read_primitive(r: &mut Reader<'_>, p: Primitive) -> Result<KryoValue> {
    Ok(match p {
        Primitive::Boolean => KryoValue::Boolean(r.bool()?),
        Primitive::Byte => KryoValue::Byte(r.u8()? as i8),
        Primitive::Char => KryoValue::Char(r.u16()?),
        Primitive::Short => KryoValue::Short(r.i16()?),
        Primitive::Int => KryoValue::Int(r.var_i32()?),
        Primitive::Long => KryoValue::Long(r.var_i64()?),
        Primitive::Float => KryoValue::Float(r.f32()?),
        Primitive::Double => KryoValue::Double(r.f64()?),
    })
}

/// `length + 1` with 0 for null, then that many bytes.
fn read_sized_bytes(r: &mut Reader<'_>) -> Result<Option<Vec<u8>>> {
    match r.var_u32()? {
        0 => Ok(None),
        n => {
            let n = r.count(n - 1, "a byte length")?;
            r.charge(n)?;
            Ok(Some(r.take(n)?.to_vec()))
        }
    }
}

/// The value of a built-in class, after its class (or where a field's
/// declared type stands for it).
pub(crate) fn read_builtin(r: &mut Reader<'_>, b: Builtin) -> Result<KryoValue> {
    Ok(match b {
        Builtin::Boxed(p) => read_primitive(r, p)?,
        Builtin::String => match r.string()? {
            // Its bytes were in the payload: it takes no more than they did.
            Some(s) => {
                r.charge(s.len())?;
                KryoValue::String(s)
            }
            None => KryoValue::Null,
        },
        Builtin::Bytes => read_sized_bytes(r)?.map_or(KryoValue::Null, KryoValue::Bytes),
        Builtin::Uuid => {
            let most = r.i64()? as u64;
            let least = r.i64()? as u64;
            KryoValue::Uuid((u128::from(most) << 64) | u128::from(least))
        }
        Builtin::Date => KryoValue::Date(r.var_u64()? as i64),
        Builtin::Instant => {
            let seconds = r.var_u64()? as i64;
            let nanos = r.var_u32()?;
            if nanos >= 1_000_000_000 {
                return Err(r.error(KryoErrorKind::Malformed, format!("Instant with {nanos} nanoseconds")));
            }
            KryoValue::Instant { seconds, nanos }
        }
        Builtin::BigDecimal => match read_sized_bytes(r)? {
            None => KryoValue::Null,
            Some(bytes) if bytes.is_empty() => {
                return Err(r.error(KryoErrorKind::Malformed, "BigDecimal without digits"))
            }
            Some(bytes) => KryoValue::BigDecimal {
                unscaled: super::decimal::shortest(bytes),
                scale: r.var_i32()?,
            },
        },
        Builtin::BigInteger => match read_sized_bytes(r)? {
            None => KryoValue::Null,
            Some(bytes) if bytes.is_empty() => {
                return Err(r.error(KryoErrorKind::Malformed, "BigInteger without digits"))
            }
            Some(bytes) => KryoValue::BigInteger(bytes),
        },
        Builtin::Collection | Builtin::Map => unreachable!("containers are read by read_body"),
    })
}

/// The value of class `class` (its class already read or known).
pub(crate) fn read_body(
    r: &mut Reader<'_>,
    schema: Option<&KryoSchema>,
    class: &str,
    generics: Option<&[JavaType]>,
) -> Result<KryoValue> {
    r.enter()?;
    let builtin = class::builtin(class);
    // The value, and the class name a container or POJO keeps.
    r.charge(match builtin {
        Some(Builtin::Collection | Builtin::Map) | None => bounds::VALUE + class.len(),
        Some(_) => bounds::VALUE,
    })?;
    let value = match builtin {
        Some(Builtin::Collection) => read_collection(r, schema, class, generics, true, false),
        Some(Builtin::Map) => read_map(r, schema, class, generics, true, false),
        Some(b) => read_builtin(r, b),
        None => match super::jdk::special(class) {
            Some(kind) => super::jdk::read(r, schema, class, kind, generics),
            None => read_user(r, schema, class),
        },
    };
    r.leave();
    value
}

/// Why a class cannot be read, as an error.
pub(crate) fn unknown_class(r: &Reader<'_>, class: &str, schema: Option<&KryoSchema>) -> KryoError {
    if crate::jdk::is_jdk_class(class) {
        return r.error(
            KryoErrorKind::Unsupported,
            format!("{} is a JDK class delayq does not read from Kryo", class::shown(class)),
        );
    }
    let how = if schema.is_some() {
        "it is not in the Kryo schema: add it"
    } else {
        "POJOs and enums need a Kryo schema (--kryo-schema FILE) or a Rust type"
    };
    r.error(
        KryoErrorKind::UnknownClass,
        format!("unknown class {}: {how}", class::shown(class)),
    )
}

fn read_user(r: &mut Reader<'_>, schema: Option<&KryoSchema>, class: &str) -> Result<KryoValue> {
    match schema.and_then(|s| s.get(class)) {
        // Redisson writes throwables (and any class Kryo cannot) with Java serialization.
        None if r.at_java_object(class) => r.java_serialized(class),
        None => Err(unknown_class(r, class, schema)),
        Some(ClassDef::Enum { constants }) => {
            let at = r.pos();
            match r.var_u32()? {
                0 => Ok(KryoValue::Null),
                n => {
                    let ordinal = n - 1;
                    r.charge(constants.get(ordinal as usize).map_or(0, String::len))?;
                    let name = constants.get(ordinal as usize).cloned().ok_or_else(|| {
                        KryoError::new(
                            KryoErrorKind::SchemaMismatch,
                            Some(at),
                            format!(
                                "{class} has {} constants in the schema, not ordinal {ordinal}",
                                constants.len()
                            ),
                        )
                    })?;
                    Ok(KryoValue::Enum {
                        class: class.to_owned(),
                        ordinal: Some(ordinal),
                        name: Some(name),
                    })
                }
            }
        }
        Some(def @ ClassDef::Pojo { fields, .. }) => {
            if let Some(why) = def.unresolved() {
                return Err(r.mismatch(format!("{class} in the schema: {why}")));
            }
            r.charge(
                fields
                    .iter()
                    .map(|(name, declared)| bounds::field(name, declared))
                    .sum::<usize>(),
            )?;
            let mut out = Vec::with_capacity(fields.len());
            for (name, declared) in fields {
                let value = read_field(r, schema, declared)
                    .map_err(|e| KryoError::new(e.kind(), e.offset(), format!("{class}.{name}: {}", e.message())))?;
                out.push(KryoField::new(name.clone(), declared.clone(), value));
            }
            Ok(KryoValue::Object {
                class: class.to_owned(),
                fields: out,
            })
        }
    }
}

/// A POJO field of a declared type.
pub(crate) fn read_field(r: &mut Reader<'_>, schema: Option<&KryoSchema>, declared: &JavaType) -> Result<KryoValue> {
    match declared.as_primitive() {
        Some(p) => {
            r.charge(bounds::VALUE)?;
            read_primitive(r, p)
        }
        None if declared.is_final() => read_known(r, schema, declared, true),
        None => read_classed(r, schema, declared.generic_args()),
    }
}

/// Whether the serializer of a class writes null itself.
fn accepts_null(schema: Option<&KryoSchema>, class: &str) -> bool {
    match class::builtin(class) {
        Some(b) => b.accepts_null(),
        None => match super::jdk::special(class) {
            Some(kind) => kind.accepts_null(),
            None => matches!(schema.and_then(|s| s.get(class)), Some(ClassDef::Enum { .. })),
        },
    }
}

/// A value whose serializer is known from its declared (final) type,
/// written with `writeObjectOrNull` (`or_null`) or `writeObject`.
fn read_known(
    r: &mut Reader<'_>,
    schema: Option<&KryoSchema>,
    declared: &JavaType,
    or_null: bool,
) -> Result<KryoValue> {
    read_with_class(r, schema, declared.class_name(), declared.generic_args(), or_null)
}

pub(crate) fn read_with_class(
    r: &mut Reader<'_>,
    schema: Option<&KryoSchema>,
    class: &str,
    generics: Option<&[JavaType]>,
    or_null: bool,
) -> Result<KryoValue> {
    if or_null && !accepts_null(schema, class) {
        match r.u8()? {
            0 => {
                r.charge(bounds::VALUE)?;
                return Ok(KryoValue::Null);
            }
            1 => {}
            b => return Err(r.mismatch(format!("null marker {b:#04x} before a {}", class::shown(class)))),
        }
    }
    read_body(r, schema, class, generics)
}

/// `CollectionSerializer`: `can_be_null` is false for the immutable
/// collections (no null markers), `comparator` says a sorted collection's
/// comparator follows the size.
pub(crate) fn read_collection(
    r: &mut Reader<'_>,
    schema: Option<&KryoSchema>,
    class: &str,
    generics: Option<&[JavaType]>,
    can_be_null: bool,
    comparator: bool,
) -> Result<KryoValue> {
    let element = generics.and_then(|g| g.first());
    let nested = element.and_then(JavaType::generic_args);
    let final_element = element.filter(|e| e.is_final());
    let (flag, len) = if final_element.is_some() && !can_be_null {
        (false, r.var_u32()?)
    } else {
        r.var_flag()?
    };
    if len == 0 {
        return Ok(KryoValue::Null);
    }
    let len = len - 1;
    if comparator {
        super::jdk::no_comparator(r, class)?;
    }
    // An all-null collection is one byte for all its elements; every other
    // element takes at least one byte, so a size is checked against what is left.
    let same_class = if final_element.is_none() && flag && len > 0 {
        match read_class(r)? {
            None => {
                let len = r.all_null_count(len)?;
                return Ok(KryoValue::Collection {
                    class: class.to_owned(),
                    items: vec![KryoValue::Null; len],
                });
            }
            Some(c) => Some((c, can_be_null && r.bool()?)),
        }
    } else {
        None
    };
    let len = r.count(len, "a collection size")?;
    let mut items = Vec::with_capacity(len);
    match final_element {
        // The generic type names a final class: no classes, the flag says
        // whether any element is null.
        Some(element) => {
            for _ in 0..len {
                items.push(read_known(r, schema, element, flag)?);
            }
        }
        // Same class for all: the flag, the class once, a has-null byte.
        None if same_class.is_some() => {
            let (element_class, has_null) = same_class.expect("checked");
            for _ in 0..len {
                items.push(read_with_class(r, schema, &element_class, nested, has_null)?);
            }
        }
        None => {
            for _ in 0..len {
                items.push(read_classed(r, schema, nested)?);
            }
        }
    }
    Ok(KryoValue::Collection {
        class: class.to_owned(),
        items,
    })
}

/// `MapSerializer`: `can_be_null` is false for the immutable maps (no null
/// markers), `comparator` says a sorted map's comparator follows the size.
pub(crate) fn read_map(
    r: &mut Reader<'_>,
    schema: Option<&KryoSchema>,
    class: &str,
    generics: Option<&[JavaType]>,
    can_be_null: bool,
    comparator: bool,
) -> Result<KryoValue> {
    let len = match r.var_u32()? {
        0 => return Ok(KryoValue::Null),
        n => n - 1,
    };
    if comparator {
        super::jdk::no_comparator(r, class)?;
    }
    let len = r.count(len, "a map size")?;
    let (key, value) = match generics {
        Some([k, v]) => (Some(k), Some(v)),
        _ => (None, None),
    };
    let mut entries = Vec::with_capacity(len);
    for _ in 0..len {
        let k = read_entry_part(r, schema, key, can_be_null)?;
        let v = read_entry_part(r, schema, value, can_be_null)?;
        entries.push((k, v));
    }
    Ok(KryoValue::Map {
        class: class.to_owned(),
        entries,
    })
}

fn read_entry_part(
    r: &mut Reader<'_>,
    schema: Option<&KryoSchema>,
    declared: Option<&JavaType>,
    can_be_null: bool,
) -> Result<KryoValue> {
    match declared {
        Some(d) if d.is_final() => read_known(r, schema, d, can_be_null),
        Some(d) => read_classed(r, schema, d.generic_args()),
        None => read_classed(r, schema, None),
    }
}

// ---------------------------------------------------------------- writing

pub(crate) fn write_class(w: &mut Writer, class: &str) -> Result<()> {
    match class::registered_id(class) {
        Some(id) => {
            w.var_u32(id);
            Ok(())
        }
        None if super::is_java_class(class)
            || (w.bare_names && super::is_class_name(class))
            || super::java_type::array_element(class).is_some() =>
        {
            w.class_name(class)
        }
        None => Err(KryoError::encode(format!(
            "`{class}` is not a Java class name, and Kryo writes the class here: name the Rust type after its \
             Java class (#[serde(rename = \"com.example.{class}\")])"
        ))),
    }
}

/// `writeClassAndObject`.
pub(crate) fn write_classed(w: &mut Writer, value: &KryoValue, generics: Option<&[JavaType]>) -> Result<()> {
    let Some(class) = value.java_class() else {
        w.u8(0);
        return Ok(());
    };
    write_class(w, class)?;
    write_body(w, value, generics)
}

pub(super) fn write_body(w: &mut Writer, value: &KryoValue, generics: Option<&[JavaType]>) -> Result<()> {
    if let Some(written) = super::jdk::write(w, value, generics) {
        return written;
    }
    match value {
        KryoValue::Time(_) | KryoValue::Wrapped { .. } | KryoValue::EnumSet { .. } | KryoValue::Throwable { .. } => {
            return Err(KryoError::encode(format!(
                "{} is written by Kryo's JavaSerializer (Java serialization inside Kryo), which delayq does not write",
                value.java_class().unwrap_or_default()
            )))
        }
        KryoValue::Null => w.u8(0),
        KryoValue::Boolean(v) => w.bool(*v),
        KryoValue::Byte(v) => w.u8(*v as u8),
        KryoValue::Char(v) => w.u16(*v),
        KryoValue::Short(v) => w.i16(*v),
        KryoValue::Int(v) => w.var_i32(*v),
        KryoValue::Long(v) => w.var_i64(*v),
        // Java writes floatToIntBits: one NaN.
        KryoValue::Float(v) => w.f32(if v.is_nan() { f32::NAN } else { *v }),
        KryoValue::Double(v) => w.f64(if v.is_nan() { f64::NAN } else { *v }),
        KryoValue::String(s) => w.string(Some(s))?,
        KryoValue::Bytes(b) => {
            w.var_u32(Writer::len_plus_one(b.len())?);
            w.bytes(b);
        }
        KryoValue::Uuid(u) => {
            w.i64((u >> 64) as u64 as i64);
            w.i64(*u as u64 as i64);
        }
        KryoValue::Date(ms) => w.var_u64(*ms as u64),
        KryoValue::Instant { seconds, nanos } => {
            w.var_u64(*seconds as u64);
            w.var_u32(*nanos);
        }
        KryoValue::BigDecimal { unscaled, scale } => {
            let bytes = super::decimal::shortest(unscaled.clone());
            w.var_u32(Writer::len_plus_one(bytes.len())?);
            w.bytes(&bytes);
            w.var_i32(*scale);
        }
        KryoValue::BigInteger(bytes) => {
            let bytes = super::decimal::shortest(bytes.clone());
            w.var_u32(Writer::len_plus_one(bytes.len())?);
            w.bytes(&bytes);
        }
        KryoValue::Enum { class, ordinal, name } => w.var_u32(
            ordinal
                .ok_or_else(|| {
                    KryoError::encode(format!(
                        "{class}.{}: Kryo writes an enum constant's ordinal, which this value lacks (describe the enum in a schema)",
                        name.as_deref().unwrap_or("?")
                    ))
                })?
                .checked_add(1)
                .ok_or_else(|| KryoError::encode("enum ordinal too large"))?,
        ),
        KryoValue::Collection { items, .. } => write_collection(w, items, generics, true, false)?,
        KryoValue::Map { entries, .. } => write_map(w, entries, generics, true, false)?,
        KryoValue::Object { class, fields } => {
            // Kryo's order (by name), whatever order the value came in: a
            // POJO read from Java serialization lists its primitives first.
            let mut in_order: Vec<&KryoField> = fields.iter().collect();
            in_order.sort_by(|a, b| a.name.encode_utf16().cmp(b.name.encode_utf16()));
            for field in in_order {
                write_field(w, &field.declared, &field.value)
                    .map_err(|e| KryoError::encode(format!("{class}.{}: {}", field.name, e.message())))?;
            }
        }
    }
    Ok(())
}

/// Checks that a value fits a field's declared type before writing it
/// without its class.
fn check_known(declared: &JavaType, value: &KryoValue) -> Result<()> {
    let Some(class) = value.java_class() else {
        return Ok(());
    };
    let want = declared.class_name();
    let fits = class == want
        || matches!(
            (class::builtin(want), class::builtin(class)),
            (Some(Builtin::Collection), Some(Builtin::Collection)) | (Some(Builtin::Map), Some(Builtin::Map))
        );
    if fits {
        Ok(())
    } else {
        Err(KryoError::encode(format!(
            "a {class} where the Java type is {declared}"
        )))
    }
}

fn null_form(declared: &JavaType) -> u8 {
    // String's null is 0x80; every other serializer's null (or null marker) is 0.
    if declared.class_name() == "java.lang.String" {
        0x80
    } else {
        0
    }
}

/// `writeObjectOrNull` (`or_null`) or `writeObject` with the serializer of
/// a final declared type.
pub(crate) fn write_known(w: &mut Writer, declared: &JavaType, value: &KryoValue, or_null: bool) -> Result<()> {
    check_known(declared, value)?;
    if matches!(value, KryoValue::Null) {
        if !or_null {
            return Err(KryoError::encode(format!(
                "null where Java does not allow it ({declared})"
            )));
        }
        w.u8(null_form(declared));
        return Ok(());
    }
    let accepts = match class::builtin(declared.class_name()) {
        Some(b) => b.accepts_null(),
        None => match super::jdk::special(declared.class_name()) {
            Some(kind) => kind.accepts_null(),
            None => matches!(value, KryoValue::Enum { .. }),
        },
    };
    if or_null && !accepts {
        w.u8(1);
    }
    write_body(w, value, declared.generic_args())
}

fn write_field(w: &mut Writer, declared: &JavaType, value: &KryoValue) -> Result<()> {
    if let Some(p) = declared.as_primitive() {
        let fits = matches!(
            (p, value),
            (Primitive::Boolean, KryoValue::Boolean(_))
                | (Primitive::Byte, KryoValue::Byte(_))
                | (Primitive::Char, KryoValue::Char(_))
                | (Primitive::Short, KryoValue::Short(_))
                | (Primitive::Int, KryoValue::Int(_))
                | (Primitive::Long, KryoValue::Long(_))
                | (Primitive::Float, KryoValue::Float(_))
                | (Primitive::Double, KryoValue::Double(_))
        );
        if !fits {
            return Err(KryoError::encode(format!("{value:?} for a {} field", p.name())));
        }
        return write_body(w, value, None);
    }
    if declared.is_final() {
        write_known(w, declared, value, true)
    } else {
        write_classed(w, value, declared.generic_args())
    }
}

/// `CollectionSerializer` (see [`read_collection`] for the options).
pub(crate) fn write_collection(
    w: &mut Writer,
    items: &[KryoValue],
    generics: Option<&[JavaType]>,
    can_be_null: bool,
    comparator: bool,
) -> Result<()> {
    // A sorted collection's comparator: null, natural order.
    let header = |w: &mut Writer| {
        if comparator {
            w.u8(0);
        }
    };
    if items.is_empty() {
        w.u8(1);
        header(w);
        return Ok(());
    }
    let has_null = items.iter().any(|v| matches!(v, KryoValue::Null));
    if has_null && !can_be_null {
        return Err(KryoError::encode(
            "a null in a collection that holds none (List.of, Set.of)",
        ));
    }
    let len = Writer::len_plus_one(items.len())?;
    let element = generics.and_then(|g| g.first());
    let nested = element.and_then(JavaType::generic_args);
    if let Some(element) = element.filter(|e| e.is_final()) {
        if can_be_null {
            w.var_flag(has_null, len);
        } else {
            w.var_u32(len);
        }
        header(w);
        for item in items {
            write_known(w, element, item, has_null)?;
        }
        return Ok(());
    }
    let mut common: Option<&str> = None;
    let mut has_null = false;
    let mut mixed = false;
    for item in items {
        match item.java_class() {
            None => has_null = true,
            Some(c) if common.is_none() => common = Some(c),
            Some(c) if common != Some(c) => {
                mixed = true;
                break;
            }
            Some(_) => {}
        }
    }
    if mixed {
        w.var_flag(false, len);
        header(w);
        for item in items {
            write_classed(w, item, nested)?;
        }
        return Ok(());
    }
    w.var_flag(true, len);
    header(w);
    let Some(class) = common else {
        // All null.
        w.u8(0);
        return Ok(());
    };
    write_class(w, class)?;
    if can_be_null {
        w.bool(has_null);
    }
    let accepts = class::builtin(class).is_some_and(Builtin::accepts_null)
        || super::jdk::special(class).is_some_and(super::jdk::Special::accepts_null)
        || items.iter().any(|v| matches!(v, KryoValue::Enum { .. }));
    for item in items {
        if matches!(item, KryoValue::Null) {
            w.u8(if class == "java.lang.String" { 0x80 } else { 0 });
            continue;
        }
        if has_null && !accepts {
            w.u8(1);
        }
        write_body(w, item, nested)?;
    }
    Ok(())
}

/// `MapSerializer` (see [`read_map`] for the options).
pub(crate) fn write_map(
    w: &mut Writer,
    entries: &[(KryoValue, KryoValue)],
    generics: Option<&[JavaType]>,
    can_be_null: bool,
    comparator: bool,
) -> Result<()> {
    w.var_u32(Writer::len_plus_one(entries.len())?);
    if comparator {
        w.u8(0);
    }
    let (key, value) = match generics {
        Some([k, v]) => (Some(k), Some(v)),
        _ => (None, None),
    };
    for (k, v) in entries {
        write_entry_part(w, key, k, can_be_null)?;
        write_entry_part(w, value, v, can_be_null)?;
    }
    Ok(())
}

fn write_entry_part(w: &mut Writer, declared: Option<&JavaType>, value: &KryoValue, can_be_null: bool) -> Result<()> {
    match declared {
        Some(d) if d.is_final() => write_known(w, d, value, can_be_null),
        Some(d) => write_classed(w, value, d.generic_args()),
        None => write_classed(w, value, None),
    }
}
