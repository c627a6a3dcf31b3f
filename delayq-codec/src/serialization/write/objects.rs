//! The JDK objects that stand for one value but are not plain collections:
//! `Collections` views, `EnumSet`, `EnumMap`, `Locale`, `URL`,
//! `StringBuilder`/`StringBuffer` and throwables, written as their classes'
//! `writeObject`/`writeReplace` write them.

use super::*;
use crate::jdk::forms::{self, parse_locale, parse_url, THROWABLES};

const OBJECT_SIG: &str = "Ljava/lang/Object;";

/// The view classes written, with their serial form: `writeReplace` turns
/// a `RandomAccess` list's view into the plain list view (whose
/// `readResolve` turns it back). Each class of a chain declares one field
/// (or none) naming the collection it wraps.
fn view_desc(class: &str) -> Option<Desc> {
    let unmodifiable = || {
        desc(
            "java.util.Collections$UnmodifiableCollection",
            0x1942_0080_cb5e_f71e,
            SER,
            &[(b'L', "c", "Ljava/util/Collection;")],
            None,
        )
    };
    let synchronized = || {
        desc(
            "java.util.Collections$SynchronizedCollection",
            0x2a61_f84d_099c_99b5,
            SER_WRITE,
            &[(b'L', "c", "Ljava/util/Collection;"), (b'L', "mutex", OBJECT_SIG)],
            None,
        )
    };
    let list = [(b'L', "list", "Ljava/util/List;")];
    let sorted_set = [(b'L', "ss", "Ljava/util/SortedSet;")];
    let navigable_set = [(b'L', "ns", "Ljava/util/NavigableSet;")];
    let sorted_map = [(b'L', "sm", "Ljava/util/SortedMap;")];
    let navigable_map = [(b'L', "nm", "Ljava/util/NavigableMap;")];
    let unmodifiable_set = || {
        desc(
            "java.util.Collections$UnmodifiableSet",
            0x801d_92d1_8f9b_8055,
            SER,
            &[],
            Some(unmodifiable()),
        )
    };
    let unmodifiable_sorted_set = || {
        desc(
            "java.util.Collections$UnmodifiableSortedSet",
            0xbb98_248f_ebec_ef03,
            SER,
            &sorted_set,
            Some(unmodifiable_set()),
        )
    };
    let unmodifiable_navigable_set = || {
        desc(
            "java.util.Collections$UnmodifiableNavigableSet",
            0xac5a_33cb_9674_8287,
            SER,
            &navigable_set,
            Some(unmodifiable_sorted_set()),
        )
    };
    let unmodifiable_map = || {
        desc(
            "java.util.Collections$UnmodifiableMap",
            0xf1a5_a8fe_74f5_0742,
            SER,
            &[(b'L', "m", "Ljava/util/Map;")],
            None,
        )
    };
    let unmodifiable_sorted_map = || {
        desc(
            "java.util.Collections$UnmodifiableSortedMap",
            0x85c8_2928_d3a5_d70a,
            SER,
            &sorted_map,
            Some(unmodifiable_map()),
        )
    };
    let unmodifiable_navigable_map = || {
        desc(
            "java.util.Collections$UnmodifiableNavigableMap",
            0xbc94_3925_819d_6a1b,
            SER,
            &navigable_map,
            Some(unmodifiable_sorted_map()),
        )
    };
    let synchronized_set = || {
        desc(
            "java.util.Collections$SynchronizedSet",
            0x06c3_c279_02ee_df3c,
            SER,
            &[],
            Some(synchronized()),
        )
    };
    let synchronized_sorted_set = || {
        desc(
            "java.util.Collections$SynchronizedSortedSet",
            0x78ad_b138_4b50_312e,
            SER,
            &sorted_set,
            Some(synchronized_set()),
        )
    };
    let synchronized_map = || {
        desc(
            "java.util.Collections$SynchronizedMap",
            0x1b73_f909_4b4b_397b,
            SER_WRITE,
            &[(b'L', "m", "Ljava/util/Map;"), (b'L', "mutex", OBJECT_SIG)],
            None,
        )
    };
    let synchronized_sorted_map = || {
        desc(
            "java.util.Collections$SynchronizedSortedMap",
            0x85e6_b420_b72e_0c2f,
            SER,
            &sorted_map,
            Some(synchronized_map()),
        )
    };
    Some(match class {
        "java.util.Collections$UnmodifiableCollection" => unmodifiable(),
        "java.util.Collections$UnmodifiableList" | "java.util.Collections$UnmodifiableRandomAccessList" => desc(
            "java.util.Collections$UnmodifiableList",
            0xfc0f_2531_b5ec_8e10,
            SER,
            &list,
            Some(unmodifiable()),
        ),
        "java.util.Collections$UnmodifiableSet" => unmodifiable_set(),
        "java.util.Collections$UnmodifiableSortedSet" => unmodifiable_sorted_set(),
        "java.util.Collections$UnmodifiableNavigableSet" => unmodifiable_navigable_set(),
        // `emptySortedSet()`/`emptyNavigableSet()`: a view of an empty TreeSet.
        "java.util.Collections$UnmodifiableNavigableSet$EmptyNavigableSet" => desc(
            class,
            0xa8b0_fad0_de1d_e942,
            SER,
            &[],
            Some(unmodifiable_navigable_set()),
        ),
        "java.util.Collections$UnmodifiableMap" => unmodifiable_map(),
        "java.util.Collections$UnmodifiableSortedMap" => unmodifiable_sorted_map(),
        "java.util.Collections$UnmodifiableNavigableMap" => unmodifiable_navigable_map(),
        "java.util.Collections$UnmodifiableNavigableMap$EmptyNavigableMap" => desc(
            class,
            0xe0ec_54fe_7d1c_0d6c,
            SER,
            &[],
            Some(unmodifiable_navigable_map()),
        ),
        "java.util.Collections$SynchronizedCollection" => synchronized(),
        "java.util.Collections$SynchronizedList" | "java.util.Collections$SynchronizedRandomAccessList" => desc(
            "java.util.Collections$SynchronizedList",
            0x9463_efe3_8344_107c,
            SER,
            &list,
            Some(synchronized()),
        ),
        "java.util.Collections$SynchronizedSet" => synchronized_set(),
        "java.util.Collections$SynchronizedSortedSet" => synchronized_sorted_set(),
        "java.util.Collections$SynchronizedNavigableSet" => desc(
            class,
            0xb398_6dcd_38b0_4d9a,
            SER,
            &navigable_set,
            Some(synchronized_sorted_set()),
        ),
        "java.util.Collections$SynchronizedMap" => synchronized_map(),
        "java.util.Collections$SynchronizedSortedMap" => synchronized_sorted_map(),
        "java.util.Collections$SynchronizedNavigableMap" => desc(
            class,
            0x09b4_bd8b_2cd8_4ef7,
            SER,
            &navigable_map,
            Some(synchronized_sorted_map()),
        ),
        _ => return None,
    })
}

/// A throwable's class chain (each class's `serialVersionUID` and
/// superclass), for the JDK's common throwables.
fn throwable_chain(class: &str) -> Option<Desc> {
    let (uid, superclass) = forms::throwable_class(class)?;
    if superclass.is_none() {
        let fields = [
            (b'L', "cause", "Ljava/lang/Throwable;"),
            (b'L', "detailMessage", "Ljava/lang/String;"),
            (b'[', "stackTrace", "[Ljava/lang/StackTraceElement;"),
            (b'L', "suppressedExceptions", "Ljava/util/List;"),
        ];
        return Some(desc(class, uid, SER_WRITE, &fields, None));
    }
    let super_desc = match superclass {
        Some(s) => Some(throwable_chain(s)?),
        None => None,
    };
    Some(desc(class, uid, SER, &[], super_desc))
}

impl Writer<'_> {
    /// Writes `value` and gives the handle of the object it is (a view's
    /// fields refer to the collection it wraps by that handle).
    fn value_with_handle(&mut self, value: &KryoValue) -> Result<Option<u32>> {
        let before = self.capture.replace(None);
        let written = self.value(value);
        let captured = std::mem::replace(&mut self.capture, before).flatten();
        written?;
        Ok(captured)
    }

    /// A `Collections` view: its classes' fields, the wrapped collection
    /// once and then by reference; a synchronized view is its own lock.
    pub(super) fn view(&mut self, class: &str, inner: &KryoValue) -> Result<bool> {
        let Some(d) = view_desc(class) else { return Ok(false) };
        let own = self.object(&d)?;
        let inner_handle = self
            .value_with_handle(inner)?
            .ok_or_else(|| err(format!("{}: a view of {inner:?}, not of a collection", shown(class))))?;
        if d.name.contains("$Synchronized") {
            // mutex: the view itself (SynchronizedCollection/Map's writeObject).
            self.reference(own);
            self.end_custom();
        }
        // The root class's field holds the collection written above; each
        // subclass's own field (a list view's `list`, a sorted view's
        // `ss`/`sm`, a navigable one's `ns`/`nm`) names it again.
        let (mut with_fields, mut level) = (0, Some(&d));
        while let Some(l) = level {
            with_fields += usize::from(!l.fields.is_empty());
            level = l.super_desc.as_deref();
        }
        for _ in 1..with_fields {
            self.reference(inner_handle);
        }
        Ok(true)
    }

    /// `EnumSet.writeReplace`: its `SerializationProxy`, the element class
    /// and the constants as an `Enum[]`.
    pub(super) fn enum_set(&mut self, element: &str, items: &[KryoValue]) -> Result<()> {
        let fields = [
            (b'L', "elementType", "Ljava/lang/Class;"),
            (b'[', "elements", "[Ljava/lang/Enum;"),
        ];
        self.object(&desc(
            "java.util.EnumSet$SerializationProxy",
            0x0507_d3db_7654_cad1,
            SER,
            &fields,
            None,
        ))?;
        self.class_object(element)?;
        self.out.push(TC_ARRAY);
        self.class_desc(&desc("[Ljava.lang.Enum;", 0xa88d_ea2d_33d2_2f98, SER, &[], None))?;
        self.handle();
        let len = i32::try_from(items.len()).map_err(|_| err("an EnumSet larger than Java's int"))?;
        self.out.extend_from_slice(&len.to_be_bytes());
        for item in items {
            match item {
                KryoValue::Enum { class, .. } if class == element => self.value(item)?,
                other => return Err(err(format!("an EnumSet of {} holding {other:?}", shown(element)))),
            }
        }
        Ok(())
    }

    /// A `java.lang.Class` object of an enum class.
    fn class_object(&mut self, enum_class: &str) -> Result<()> {
        self.out.push(TC_CLASS);
        self.class_desc(&enum_desc(enum_class))?;
        self.handle();
        Ok(())
    }

    /// `EnumMap.writeObject`: the key class (a field), the size, the
    /// entries. The key class is the keys' own: an empty map has none.
    pub(super) fn enum_map(&mut self, entries: &[(KryoValue, KryoValue)]) -> Result<()> {
        let key_class =
            match entries.first() {
                Some((KryoValue::Enum { class, .. }, _)) => class.clone(),
                Some((other, _)) => return Err(err(format!("an EnumMap keyed by {other:?}"))),
                None => return Err(err(
                    "an empty java.util.EnumMap: its key class, which Java serialization writes, is not in the value",
                )),
            };
        let field = [(b'L', "keyType", "Ljava/lang/Class;")];
        self.object(&desc(
            "java.util.EnumMap",
            0x065d_7df7_be90_7ca1,
            SER_WRITE,
            &field,
            None,
        ))?;
        self.class_object(&key_class)?;
        let size = i32::try_from(entries.len()).map_err(|_| err("a map larger than Java's int"))?;
        self.data(&size.to_be_bytes());
        for (k, v) in entries {
            if !matches!(k, KryoValue::Enum { class, .. } if *class == key_class) {
                return Err(err(format!("an EnumMap of {} keyed by {k:?}", shown(&key_class))));
            }
            self.value(k)?;
            self.value(v)?;
        }
        self.end_custom();
        Ok(())
    }

    /// `Locale.writeObject`: its persistent fields from `toString()`'s text.
    pub(super) fn locale(&mut self, text: &str) -> Result<()> {
        let parts = parse_locale(text).ok_or_else(|| err(format!("{}: not a Locale's text", shown(text))))?;
        let s = "Ljava/lang/String;";
        let fields = [
            (b'I', "hashcode", ""),
            (b'L', "country", s),
            (b'L', "extensions", s),
            (b'L', "language", s),
            (b'L', "script", s),
            (b'L', "variant", s),
        ];
        self.object(&desc(
            "java.util.Locale",
            0x7ef8_1160_9c30_f9ec,
            SER_WRITE,
            &fields,
            None,
        ))?;
        self.out.extend_from_slice(&(-1i32).to_be_bytes());
        for part in [
            parts.country,
            parts.extensions,
            parts.language,
            parts.script,
            parts.variant,
        ] {
            self.string(part);
        }
        self.end_custom();
        Ok(())
    }

    /// `URL`'s fields (`defaultWriteObject`), from its external form.
    pub(super) fn url(&mut self, text: &str) -> Result<()> {
        let u = parse_url(text).ok_or_else(|| err(format!("{}: not a URL Java writes", shown(text))))?;
        let s = "Ljava/lang/String;";
        let fields = [
            (b'I', "hashCode", ""),
            (b'I', "port", ""),
            (b'L', "authority", s),
            (b'L', "file", s),
            (b'L', "host", s),
            (b'L', "protocol", s),
            (b'L', "ref", s),
        ];
        self.object(&desc("java.net.URL", 0x9625_3736_1afc_e472, SER_WRITE, &fields, None))?;
        self.out.extend_from_slice(&(-1i32).to_be_bytes());
        self.out.extend_from_slice(&u.port.to_be_bytes());
        for part in [u.authority, Some(u.file), Some(u.host), Some(u.protocol), u.reference] {
            match part {
                Some(p) => self.string(p),
                None => self.out.push(TC_NULL),
            }
        }
        self.end_custom();
        Ok(())
    }

    /// `StringBuilder.writeObject` (its length, then its `char[]`) and
    /// `StringBuffer`'s persistent fields (count, shared, value).
    pub(super) fn string_builder(&mut self, class: &str, text: &str) -> Result<()> {
        let mut units: Vec<KryoValue> = text.encode_utf16().map(KryoValue::Char).collect();
        let count = i32::try_from(units.len()).map_err(|_| err("a text longer than Java's int"))?;
        // The spare capacity `new StringBuilder(text)` has, which Java writes.
        units.resize(forms::builder_capacity(units.len()), KryoValue::Char(0));
        if class == "java.lang.StringBuilder" {
            self.object(&desc(class, 0x3cd5_fb14_5a4c_6acb, SER_WRITE, &[], None))?;
            self.data(&count.to_be_bytes());
            // The count's block before the array object.
            self.drain();
            self.array("[C", &units)?;
        } else {
            let fields = [(b'I', "count", ""), (b'Z', "shared", ""), (b'[', "value", "[C")];
            self.object(&desc(class, 0x2f07_07d9_eac8_ead3, SER_WRITE, &fields, None))?;
            self.out.extend_from_slice(&count.to_be_bytes());
            self.out.push(0);
            self.array("[C", &units)?;
        }
        self.end_custom();
        Ok(())
    }

    /// A throwable: its class chain, then `Throwable`'s fields (a missing
    /// cause is the throwable itself, as Java holds it; no stack trace; no
    /// suppressed exceptions).
    pub(super) fn throwable(&mut self, class: &str, message: Option<&str>, cause: Option<&KryoValue>) -> Result<()> {
        let d = throwable_chain(class).ok_or_else(|| {
            err(format!(
                "{}: its class chain's serialVersionUIDs are not known here; delayq writes {THROWABLES}",
                shown(class)
            ))
        })?;
        let own = self.object(&d)?;
        match cause {
            Some(c) => self.value(c)?,
            None => self.reference(own),
        }
        match message {
            Some(m) => self.string(m),
            None => self.out.push(TC_NULL),
        }
        self.array("[Ljava.lang.StackTraceElement;", &[])?;
        self.collection("java.util.Collections$EmptyList", &[])?;
        self.end_custom();
        Ok(())
    }
}
