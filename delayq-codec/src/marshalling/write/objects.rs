//! River's forms of `List.of`/`Set.of`/`Map.of` (`java.util.CollSer`), the
//! `Collections` views, `EnumSet`, `EnumMap`, and POJOs with superclasses.

use super::*;

/// `java.util.CollSer`, `List.of`'s (and `Set.of`'s, `Map.of`'s) serial form.
const COLL_SER: &str = "java.util.CollSer";
const COLL_SER_UID: i64 = 0x578e_abb6_3a1b_a811;
const SYNCHRONIZED_COLLECTION: &str = "java.util.Collections$SynchronizedCollection";
const UNMODIFIABLE_COLLECTION: &str = "java.util.Collections$UnmodifiableCollection";
const UNMODIFIABLE_MAP: &str = "java.util.Collections$UnmodifiableMap";

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
        "java.util.Collections$SynchronizedSortedSet" => (
            0x78ad_b138_4b50_312e,
            false,
            &[("ss", ids::OBJECT_CLASS)],
            Some("java.util.Collections$SynchronizedSet"),
        ),
        "java.util.Collections$SynchronizedNavigableSet" => (
            0xb398_6dcd_38b0_4d9a,
            false,
            &[("ns", ids::OBJECT_CLASS)],
            Some("java.util.Collections$SynchronizedSortedSet"),
        ),
        "java.util.Collections$SynchronizedSortedMap" => (
            0x85e6_b420_b72e_0c2f,
            false,
            &[("sm", ids::OBJECT_CLASS)],
            Some("java.util.Collections$SynchronizedMap"),
        ),
        "java.util.Collections$SynchronizedNavigableMap" => (
            0x09b4_bd8b_2cd8_4ef7,
            false,
            &[("nm", ids::OBJECT_CLASS)],
            Some("java.util.Collections$SynchronizedSortedMap"),
        ),
        // The unmodifiable views River has no id for are `Serializable`
        // objects; their superclasses are described in full (River's ids
        // stand for objects, not for superclasses).
        UNMODIFIABLE_COLLECTION => (0x1942_0080_cb5e_f71e, false, &[("c", ids::OBJECT_CLASS)], None),
        "java.util.Collections$UnmodifiableSet" => (0x801d_92d1_8f9b_8055, false, &[], Some(UNMODIFIABLE_COLLECTION)),
        "java.util.Collections$UnmodifiableSortedSet" => (
            0xbb98_248f_ebec_ef03,
            false,
            &[("ss", ids::OBJECT_CLASS)],
            Some("java.util.Collections$UnmodifiableSet"),
        ),
        "java.util.Collections$UnmodifiableNavigableSet" => (
            0xac5a_33cb_9674_8287,
            false,
            &[("ns", ids::OBJECT_CLASS)],
            Some("java.util.Collections$UnmodifiableSortedSet"),
        ),
        "java.util.Collections$UnmodifiableNavigableSet$EmptyNavigableSet" => (
            0xa8b0_fad0_de1d_e942,
            false,
            &[],
            Some("java.util.Collections$UnmodifiableNavigableSet"),
        ),
        UNMODIFIABLE_MAP => (0xf1a5_a8fe_74f5_0742, false, &[("m", ids::OBJECT_CLASS)], None),
        "java.util.Collections$UnmodifiableSortedMap" => (
            0x85c8_2928_d3a5_d70a,
            false,
            &[("sm", ids::OBJECT_CLASS)],
            Some(UNMODIFIABLE_MAP),
        ),
        "java.util.Collections$UnmodifiableNavigableMap" => (
            0xbc94_3925_819d_6a1b,
            false,
            &[("nm", ids::OBJECT_CLASS)],
            Some("java.util.Collections$UnmodifiableSortedMap"),
        ),
        "java.util.Collections$UnmodifiableNavigableMap$EmptyNavigableMap" => (
            0xe0ec_54fe_7d1c_0d6c,
            false,
            &[],
            Some("java.util.Collections$UnmodifiableNavigableMap"),
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

    /// The `Collections` views: the unmodifiable ones River has an id for
    /// are that id before the collection; the others `Serializable`
    /// objects (a synchronized one its own lock) whose classes' fields all
    /// name the one collection.
    pub(super) fn view(&mut self, class: &str, inner: &KryoValue) -> Result<bool> {
        let unmodifiable = match class {
            UNMODIFIABLE_COLLECTION => Some(ids::UNMODIFIABLE_COLLECTION),
            "java.util.Collections$UnmodifiableList" | "java.util.Collections$UnmodifiableRandomAccessList" => {
                Some(ids::UNMODIFIABLE_LIST)
            }
            UNMODIFIABLE_MAP => Some(0x7e),
            "java.util.Collections$UnmodifiableSet" => Some(0x7f),
            "java.util.Collections$UnmodifiableSortedSet" => Some(0x80),
            "java.util.Collections$UnmodifiableSortedMap" => Some(ids::UNMODIFIABLE_SORTED_MAP),
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
            c if c.starts_with("java.util.Collections$Synchronized")
                || c.starts_with("java.util.Collections$UnmodifiableNavigable") =>
            {
                match jdk_class(c) {
                    Some(_) => c,
                    None => return Ok(false),
                }
            }
            _ => return Ok(false),
        };
        self.new_jdk_object(serial)?;
        let own = self.instance_seq - 1;
        let inner_index = self
            .value_numbered(inner)?
            .ok_or_else(|| MarshallingError::encode(format!("{class}: a view of {inner:?}, not of a collection")))?;
        // The root class's fields: the collection above, then a synchronized
        // view's mutex (the view itself) and its writeObject's end.
        let mut chain = vec![serial];
        while let Some(superclass) = jdk_class(chain[chain.len() - 1]).and_then(|c| c.superclass) {
            chain.push(superclass);
        }
        if serial.contains("$Synchronized") {
            self.repeat_object(own);
            self.u8(ids::END_BLOCK_DATA);
        }
        // Each subclass's own field (`list`, `ss`/`sm`, `ns`/`nm`): the same
        // collection again.
        let again = chain
            .iter()
            .filter(|c| jdk_class(c).is_some_and(|c| !c.fields.is_empty()))
            .count();
        for _ in 1..again {
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
