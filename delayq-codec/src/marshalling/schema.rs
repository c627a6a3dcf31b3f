//! What a schema adds to a value read from River: River declares every
//! non-primitive field `Object` and names enum constants without their
//! ordinals; Kryo needs both. The schema's declared field types and enum
//! constants fill them in, so that the value writes with Kryo as Java's
//! Kryo would.

use crate::kryo::schema::ClassDef;
use crate::kryo::{KryoSchema, KryoValue};

pub(super) fn apply(value: &mut KryoValue, schema: &KryoSchema) {
    match value {
        KryoValue::Object { class, fields } => {
            if let Some(ClassDef::Pojo { fields: declared, .. }) = schema.get(class) {
                for field in fields.iter_mut() {
                    if let Some((_, ty)) = declared.iter().find(|(name, _)| *name == field.name) {
                        field.declared = ty.clone();
                    }
                }
            }
            for field in fields {
                apply(&mut field.value, schema);
            }
        }
        KryoValue::Enum {
            class,
            ordinal: ordinal @ None,
            name: Some(name),
        } => {
            if let Some(ClassDef::Enum { constants }) = schema.get(class) {
                *ordinal = constants.iter().position(|c| c == name).map(|i| i as u32);
            }
        }
        KryoValue::Collection { items, .. } => items.iter_mut().for_each(|item| apply(item, schema)),
        KryoValue::Map { entries, .. } => {
            for (key, value) in entries {
                apply(key, schema);
                apply(value, schema);
            }
        }
        _ => {}
    }
}
