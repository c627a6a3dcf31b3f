//! The JDK collections River writes as their `Serializable` form (it has
//! no id of its own for them, or Java's River writes them so): `TreeMap`
//! and `TreeSet` (natural order), `Hashtable`, `PriorityQueue`,
//! `Arrays.asList`, `ConcurrentSkipListMap/Set` and `CopyOnWriteArrayList/Set`.

use super::*;
use crate::jdk::forms;

const O: u8 = ids::OBJECT_CLASS;
const SKIP_LIST_MAP: &str = "java.util.concurrent.ConcurrentSkipListMap";

/// The serial form of the classes this module writes.
pub(super) fn jdk_class(name: &str) -> Option<JdkClass> {
    let (uid, write_object, fields): (u64, bool, &'static [(&'static str, u8)]) = match name {
        "java.util.TreeMap" => (0x0cc1_f63e_2d25_6ae6, true, &[("comparator", O)]),
        "java.util.TreeSet" => (0xdd98_5093_95ed_875b, true, &[]),
        "java.util.Hashtable" => (
            0x13bb_0f25_214a_e4b8,
            true,
            &[("loadFactor", ids::PRIM_FLOAT), ("threshold", ids::PRIM_INT)],
        ),
        "java.util.PriorityQueue" => (
            0x94da_30b4_fb3f_82b1,
            true,
            &[("comparator", O), ("size", ids::PRIM_INT)],
        ),
        "java.util.Arrays$ArrayList" => (0xd9a4_3cbe_cd88_06d2, false, &[("a", O)]),
        SKIP_LIST_MAP => (0x8846_75ae_0611_46a7, true, &[("comparator", O)]),
        "java.util.concurrent.ConcurrentSkipListSet" => (0xdd98_5079_bdcf_f15b, false, &[("m", O)]),
        _ => return None,
    };
    Some(JdkClass {
        uid: uid as i64,
        write_object,
        fields,
        superclass: None,
    })
}

fn size_of(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| MarshallingError::encode("a collection past 2^31 - 1 elements"))
}

impl Writer<'_> {
    /// The collections of this module; `Ok(false)` for another class.
    pub(super) fn other_collection(&mut self, class: &str, items: &[KryoValue]) -> Result<bool> {
        let size = size_of(items.len())?;
        match class {
            // Natural order: a null comparator, the size, the elements.
            "java.util.TreeSet" => {
                self.new_jdk_object(class)?;
                self.u8(ids::NULL);
                self.block(&size.to_be_bytes());
                items.iter().try_for_each(|item| self.value(item))?;
                self.u8(ids::END_BLOCK_DATA);
            }
            // The heap array as it is (readObject heapifies), its length at least 2.
            "java.util.PriorityQueue" => {
                self.new_jdk_object(class)?;
                self.u8(ids::NULL);
                self.i32(size);
                self.block(&size.saturating_add(1).max(2).to_be_bytes());
                items.iter().try_for_each(|item| self.value(item))?;
                self.u8(ids::END_BLOCK_DATA);
            }
            // Its array as Object[] (Java's is the caller's static type).
            "java.util.Arrays$ArrayList" => {
                self.new_jdk_object(class)?;
                self.array("[Ljava.lang.Object;", items)?;
            }
            // River names the class by its id; writeObject's size and elements.
            "java.util.concurrent.CopyOnWriteArrayList" => {
                self.u8(ids::NEW_OBJECT);
                self.u8(ids::CC_COPY_ON_WRITE_ARRAY_LIST);
                self.number();
                self.block(&size.to_be_bytes());
                items.iter().try_for_each(|item| self.value(item))?;
                self.u8(ids::END_BLOCK_DATA);
            }
            // By its id too; its one field, the list.
            "java.util.concurrent.CopyOnWriteArraySet" => {
                self.u8(ids::NEW_OBJECT);
                self.u8(ids::CC_COPY_ON_WRITE_ARRAY_SET);
                self.number();
                self.other_collection("java.util.concurrent.CopyOnWriteArrayList", items)?;
            }
            // Its map of element → Boolean.TRUE.
            "java.util.concurrent.ConcurrentSkipListSet" => {
                self.new_jdk_object(class)?;
                let present = KryoValue::Boolean(true);
                self.skip_list_map(items.iter().map(|k| (k, &present)))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The maps of this module; `Ok(false)` for another class.
    pub(super) fn other_map(&mut self, class: &str, entries: &[(KryoValue, KryoValue)]) -> Result<bool> {
        let size = size_of(entries.len())?;
        match class {
            "java.util.TreeMap" => {
                self.new_jdk_object(class)?;
                self.u8(ids::NULL);
                self.block(&size.to_be_bytes());
                for (k, v) in entries {
                    self.key(k)?;
                    self.value(v)?;
                }
                self.u8(ids::END_BLOCK_DATA);
            }
            "java.util.Hashtable" => {
                self.new_jdk_object(class)?;
                let (capacity, threshold) = forms::hashtable_capacity(entries.len());
                self.f32(0.75);
                self.i32(threshold);
                let mut data = capacity.to_be_bytes().to_vec();
                data.extend_from_slice(&size.to_be_bytes());
                self.block(&data);
                for (k, v) in entries {
                    self.key(k)?;
                    self.value(v)?;
                }
                self.u8(ids::END_BLOCK_DATA);
            }
            SKIP_LIST_MAP => self.skip_list_map(entries.iter().map(|(k, v)| (k, v)))?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `ConcurrentSkipListMap.writeObject`: no comparator (natural order),
    /// the entries, a null key.
    fn skip_list_map<'v>(&mut self, entries: impl Iterator<Item = (&'v KryoValue, &'v KryoValue)>) -> Result<()> {
        self.new_jdk_object(SKIP_LIST_MAP)?;
        self.u8(ids::NULL);
        for (k, v) in entries {
            self.key(k)?;
            self.value(v)?;
        }
        self.u8(ids::NULL);
        self.u8(ids::END_BLOCK_DATA);
        Ok(())
    }
}
