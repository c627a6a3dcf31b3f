//! A [`KryoSchema`] applied to a decoded value: a stream declares its
//! fields' erased types (`java.util.List`) and its enum constants' names;
//! the schema adds what other codecs need (`List<String>`, ordinals).

use super::error::{shown, Result, SerializationError, SerializationErrorKind as Kind};
use crate::kryo::schema::ClassDef;
use crate::kryo::{KryoSchema, KryoValue};

/// Gives `value`'s POJO fields the schema's declared types, and its enum
/// constants their ordinals. A field the schema types differently from the
/// stream (other than by generic arguments) is a mismatch.
pub(crate) fn apply(value: &mut KryoValue, schema: &KryoSchema) -> Result<()> {
    match value {
        KryoValue::Object { class, fields } => {
            if let Some(ClassDef::Pojo { fields: described, .. }) = schema.get(class) {
                for field in fields.iter_mut() {
                    let Some((_, ty)) = described.iter().find(|(n, _)| *n == field.name) else {
                        continue;
                    };
                    let same = ty.is_primitive() == field.declared.is_primitive()
                        && ty.class_name() == field.declared.class_name();
                    if !same {
                        return Err(SerializationError::new(
                            Kind::SchemaMismatch,
                            None,
                            format!(
                                "{}.{}: the schema says {ty}, the stream's class declares {}",
                                shown(class),
                                shown(&field.name),
                                field.declared
                            ),
                        ));
                    }
                    field.declared = ty.clone();
                }
            }
            for field in fields {
                apply(&mut field.value, schema)?;
            }
        }
        KryoValue::Enum {
            class,
            ordinal,
            name: Some(name),
        } if ordinal.is_none() => {
            if let Some(ClassDef::Enum { constants }) = schema.get(class) {
                let index = constants.iter().position(|c| c == name).ok_or_else(|| {
                    SerializationError::new(
                        Kind::SchemaMismatch,
                        None,
                        format!("{}.{}: no such constant in the schema", shown(class), shown(name)),
                    )
                })?;
                *ordinal = Some(index as u32);
            }
        }
        KryoValue::Collection { items, .. } => {
            for item in items {
                apply(item, schema)?;
            }
        }
        KryoValue::Map { entries, .. } => {
            for (k, v) in entries {
                apply(k, schema)?;
                apply(v, schema)?;
            }
        }
        _ => {}
    }
    Ok(())
}
