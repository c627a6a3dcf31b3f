//! River's forms of `List.of`/`Set.of`/`Map.of` (`java.util.CollSer`), the
//! `Collections` views, `EnumSet`, `EnumMap`, and POJOs with superclasses.

use super::*;

/// `java.util.CollSer`, `List.of`'s (and `Set.of`'s, `Map.of`'s) serial form.
const COLL_SER: &str = "java.util.CollSer";
const COLL_SER_UID: i64 = 0x578e_abb6_3a1b_a811;
const SYNCHRONIZED_COLLECTION: &str = "java.util.Collections$SynchronizedCollection";

/// The serial form of the JDK classes this module writes as `Serializable`
/// objects (fields sorted by name, as River describes them).
pub(super) fn jdk_class(name: &str) -> Option<JdkClass> {
    let (uid, write_object, fields, superclass): (u64, bool, &'static [(&'static str, u8)], _) = match name {
        COLL_SER => (COLL_SER_UID as u64, true, &[("tag", ids::PRIM_INT)], None),
        SYNCHRONIZED_COLLECTION => (
            0x2a61_f84d_099c_99b5,
            true,
            &[("c", ids::OBJECT_CLASS), ("mutex", ids::OBJECT_CLASS)],
            None,
        ),
        "java.util.Collections$SynchronizedList" => (
            0x9463_efe3_8344_107c,
            false,
            &[("list", ids::OBJECT_CLASS)],
            Some(SYNCHRONIZED_COLLECTION),
        ),
        "java.util.Collections$SynchronizedSet" => (0x06c3_c279_02ee_df3c, false, &[], Some(SYNCHRONIZED_COLLECTION)),
        "java.util.Collections$SynchronizedMap" => (
            0x1b73_f909_4b4b_397b,
            true,
            &[("m", ids::OBJECT_CLASS), ("mutex", ids::OBJECT_CLASS)],
            None,
        ),
        _ => return None,
    };
    Some(JdkClass {
        uid: uid as i64,
        write_object,
        fields,
        superclass,
    })
}

/// A class of a POJO's chain: its name, `serialVersionUID` and fields.
type ChainLevel<'a> = (&'a str, i64, Vec<(String, u8)>);

impl Writer<'_> {
    /// Writes `value` and gives its instance number (to repeat it by).
    fn value_numbered(&mut self, value: &KryoValue) -> Result<Option<usize>> {
        let before = self.capture.replace(None);
        let written = self.value(value);
        let captured = std::mem::replace(&mut self.capture, before).flatten();
        written?;
        Ok(captured)
    }

    pub(super) fn repeat_object(&mut self, index: usize) {
        self.repeat(
            index,
            [
                ids::REPEAT_OBJECT_NEAR,
                ids::REPEAT_OBJECT_NEARISH,
                ids::REPEAT_OBJECT_FAR,
            ],
            self.instance_seq,
        );
    }

    /// A collection's size form (`COLLECTION_EMPTY`, `_SMALL`...).
    pub(super) fn collection_size(&mut self, n: usize) -> Result<()> {
        match n {
            0 => self.u8(ids::COLLECTION_EMPTY),
            n @ 1..=0x100 => {
                self.u8(ids::COLLECTION_SMALL);
                self.u8(n as u8);
            }
            n @ 0x101..=0x10000 => {
                self.u8(ids::COLLECTION_MEDIUM);
                self.u16(n as u16);
            }
            n => {
                self.u8(ids::COLLECTION_LARGE);
                self.i32(
                    i32::try_from(n).map_err(|_| MarshallingError::encode("a collection past 2^31 - 1 elements"))?,
                );
            }
        }
        Ok(())
    }

    /// An enum class's descriptor (or its repeat).
    fn enum_class(&mut self, class: &str) -> Result<()> {
        if !self.known_class(class, Described::Enum)? {
            self.u8(ids::ENUM_TYPE_CLASS);
            self.counted_string(class)?;
            self.classes.insert(class.to_owned(), (self.class_seq, Described::Enum));
            self.class_seq += 1;
        }
        Ok(())
    }

    /// `List.of`, `Set.of`, `Map.of` (tag 1, 2, 3): `CollSer`'s tag, then
    /// its `writeObject` data: the length and the elements (a map's keys
    /// and values in turn).
    pub(super) fn coll_ser(&mut self, tag: i32, items: &[&KryoValue], map: bool) -> Result<()> {
        self.new_jdk_object(COLL_SER)?;
        self.i32(tag);
        let len = i32::try_from(items.len()).map_err(|_| MarshallingError::encode("a collection past 2^31 - 1"))?;
        self.block(&len.to_be_bytes());
        for (i, item) in items.iter().enumerate() {
            if map && i % 2 == 0 {
                self.key(item)?;
            } else {
                self.value(item)?;
            }
        }
        self.u8(ids::END_BLOCK_DATA);
        Ok(())
    }

    /// The `Collections` views: the unmodifiable ones are River's own ids
    /// before the collection; the synchronized ones `Serializable` objects
    /// that are their own lock.
    pub(super) fn view(&mut self, class: &str, inner: &KryoValue) -> Result<bool> {
        let unmodifiable = match class {
            "java.util.Collections$UnmodifiableCollection" => Some(ids::UNMODIFIABLE_COLLECTION),
            "java.util.Collections$UnmodifiableList" | "java.util.Collections$UnmodifiableRandomAccessList" => {
                Some(ids::UNMODIFIABLE_LIST)
            }
            "java.util.Collections$UnmodifiableMap" => Some(0x7e),
            "java.util.Collections$UnmodifiableSet" => Some(0x7f),
            _ => None,
        };
        if let Some(id) = unmodifiable {
            self.u8(id);
            self.number();
            self.value(inner)?;
            return Ok(true);
        }
        let serial = match class {
            "java.util.Collections$SynchronizedList" | "java.util.Collections$SynchronizedRandomAccessList" => {
                "java.util.Collections$SynchronizedList"
            }
            "java.util.Collections$SynchronizedSet" | "java.util.Collections$SynchronizedMap" => class,
            SYNCHRONIZED_COLLECTION => class,
            _ => return Ok(false),
        };
        self.new_jdk_object(serial)?;
        let own = self.instance_seq - 1;
        let inner_index = self
            .value_numbered(inner)?
            .ok_or_else(|| MarshallingError::encode(format!("{class}: a view of {inner:?}, not of a collection")))?;
        // The mutex: the view itself; then SynchronizedList's own field.
        self.repeat_object(own);
        self.u8(ids::END_BLOCK_DATA);
        if serial.ends_with("List") {
            self.repeat_object(inner_index);
        }
        Ok(true)
    }

    /// An `EnumSet`: its size form, River's enum-set id, the element class,
    /// the constants.
    pub(super) fn enum_set(&mut self, element: &str, items: &[KryoValue]) -> Result<()> {
        self.collection_size(items.len())?;
        self.u8(ids::CC_ENUM_SET_PROXY);
        self.enum_class(element)?;
        self.number();
        for item in items {
            match item {
                KryoValue::Enum { class, .. } if class == element => self.value(item)?,
                other => {
                    return Err(MarshallingError::encode(format!(
                        "an EnumSet of {element} holding {other:?}"
                    )))
                }
            }
        }
        Ok(())
    }

    /// An `EnumMap`: its size form, River's id, the key class (its keys'
    /// own: an empty map has none to write), the entries.
    pub(super) fn enum_map(&mut self, entries: &[(KryoValue, KryoValue)]) -> Result<()> {
        let key_class = match entries.first() {
            Some((KryoValue::Enum { class, .. }, _)) => class.clone(),
            Some((other, _)) => return Err(MarshallingError::encode(format!("an EnumMap keyed by {other:?}"))),
            None => {
                return Err(MarshallingError::encode(
                    "an empty java.util.EnumMap: its key class, which River writes, is not in the value",
                ))
            }
        };
        self.collection_size(entries.len())?;
        self.u8(ids::CC_ENUM_MAP);
        self.number();
        self.enum_class(&key_class)?;
        for (k, v) in entries {
            if !matches!(k, KryoValue::Enum { class, .. } if *class == key_class) {
                return Err(MarshallingError::encode(format!(
                    "an EnumMap of {key_class} keyed by {k:?}"
                )));
            }
            self.value(k)?;
            self.value(v)?;
        }
        Ok(())
    }

    /// A POJO: its class chain as the schema gives it (`extends`), each
    /// class described with the fields it declares, sorted by name; the
    /// values superclass first, as Java writes them.
    pub(super) fn object(&mut self, class: &str, fields: &[crate::kryo::KryoField]) -> Result<()> {
        let Some(mut levels) = crate::jdk::fields_by_class(class, fields, self.lookup.schema) else {
            return Err(MarshallingError::encode(format!(
                "{class}: a superclass cycle in the schema"
            )));
        };
        let mut described = Vec::with_capacity(levels.len());
        for (level, level_fields) in &mut levels {
            let uid = self.lookup.uid(level).ok_or_else(|| {
                MarshallingError::encode(format!(
                    "{level} has no serialVersionUID: River writes it in the class descriptor; give it in the \
                     schema (\"serialVersionUID\") or the codec"
                ))
            })?;
            level_fields.sort_by(|a, b| a.name.encode_utf16().cmp(b.name.encode_utf16()));
            if let Some(pair) = level_fields.windows(2).find(|p| p[0].name == p[1].name) {
                return Err(MarshallingError::encode(format!(
                    "{level} has two fields named {}",
                    pair[0].name
                )));
            }
            let list: Vec<(String, u8)> = level_fields
                .iter()
                .map(|f| {
                    (
                        f.name.clone(),
                        f.declared.as_primitive().map_or(ids::OBJECT_CLASS, prim_id),
                    )
                })
                .collect();
            described.push((*level, uid, list));
        }
        self.u8(ids::NEW_OBJECT);
        self.pojo_class(&described)?;
        self.number();
        for (level, level_fields) in levels.iter().rev() {
            for field in level_fields {
                match field.declared.as_primitive() {
                    Some(p) => self.primitive(p, &field.value),
                    None => self.value(&field.value),
                }
                .map_err(|e| MarshallingError::encode(format!("{level}.{}: {}", field.name, e.message())))?;
            }
        }
        Ok(())
    }

    /// A POJO class chain's descriptors, the class first.
    fn pojo_class(&mut self, chain: &[ChainLevel<'_>]) -> Result<()> {
        let Some(((class, uid, fields), supers)) = chain.split_first() else {
            self.u8(ids::OBJECT_CLASS);
            return Ok(());
        };
        if self.serial_class_head(class, *uid, false, fields)? {
            return Ok(());
        }
        self.pojo_class(supers)
    }
}
