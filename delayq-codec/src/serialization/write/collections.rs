//! The JDK's other collections: `ArrayDeque`, `Arrays.asList`, `Vector`
//! and `Stack`, `PriorityQueue`, `Hashtable` and the concurrent ones,
//! written as their classes' `writeObject` (or default form) writes them.

use super::*;
use crate::jdk::forms;

const OBJECT_ARRAY: &str = "[Ljava.lang.Object;";
const OBJECT_ARRAY_UID: u64 = 0x90ce_589f_1073_296c;
const COMPARATOR: (u8, &str, &str) = (b'L', "comparator", "Ljava/util/Comparator;");
const CONCURRENT_SKIP_LIST_MAP: &str = "java.util.concurrent.ConcurrentSkipListMap";
const COPY_ON_WRITE_ARRAY_LIST: &str = "java.util.concurrent.CopyOnWriteArrayList";

fn vector() -> Desc {
    let fields = [
        (b'I', "capacityIncrement", ""),
        (b'I', "elementCount", ""),
        (b'[', "elementData", "[Ljava/lang/Object;"),
    ];
    desc("java.util.Vector", 0xd997_7d5b_803b_af01, SER_WRITE, &fields, None)
}

fn size_of(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| err("a collection larger than Java's int"))
}

impl Writer<'_> {
    /// The collections of this module; `Ok(false)` for another class.
    pub(super) fn other_collection(&mut self, class: &str, items: &[KryoValue]) -> Result<bool> {
        let size = size_of(items.len())?;
        match class {
            // writeObject: the size, then the elements.
            "java.util.ArrayDeque" | COPY_ON_WRITE_ARRAY_LIST => {
                let uid = if class == COPY_ON_WRITE_ARRAY_LIST {
                    0x785d_9fd5_46ab_90c3
                } else {
                    0x207c_da2e_240d_a08b
                };
                self.object(&desc(class, uid, SER_WRITE, &[], None))?;
                self.data(&size.to_be_bytes());
                for item in items {
                    self.value(item)?;
                }
                self.end_custom();
            }
            "java.util.concurrent.CopyOnWriteArraySet" => {
                let field = [(b'L', "al", "Ljava/util/concurrent/CopyOnWriteArrayList;")];
                self.object(&desc(class, 0x4bbd_d092_9015_69d7, SER, &field, None))?;
                self.other_collection(COPY_ON_WRITE_ARRAY_LIST, items)?;
            }
            // Its array: Object[] (Java's is the caller's static type,
            // String[] for strings; Java reads either).
            "java.util.Arrays$ArrayList" => {
                let field = [(b'[', "a", "[Ljava/lang/Object;")];
                self.object(&desc(class, 0xd9a4_3cbe_cd88_06d2, SER, &field, None))?;
                self.object_array(items, items.len())?;
            }
            "java.util.Vector" | "java.util.Stack" => {
                // A Stack grows as it is pushed; a Vector is taken as
                // `new Vector<>(collection)` makes it, no spare room.
                let capacity = if class == "java.util.Stack" {
                    self.object(&desc(class, 0x10fe_2ac2_bb09_861d, SER, &[], Some(vector())))?;
                    forms::stack_capacity(items.len())
                } else {
                    self.object(&vector())?;
                    items.len()
                };
                self.out.extend_from_slice(&0i32.to_be_bytes());
                self.out.extend_from_slice(&size.to_be_bytes());
                self.object_array(items, capacity)?;
                self.end_custom();
            }
            // Natural order: the heap array as it is (readObject heapifies).
            "java.util.PriorityQueue" => {
                let fields = [(b'I', "size", ""), COMPARATOR];
                self.object(&desc(class, 0x94da_30b4_fb3f_82b1, SER_WRITE, &fields, None))?;
                self.out.extend_from_slice(&size.to_be_bytes());
                self.out.push(TC_NULL);
                // The queue's array length, at least 2.
                self.data(&size.saturating_add(1).max(2).to_be_bytes());
                for item in items {
                    self.value(item)?;
                }
                self.end_custom();
            }
            // Its map of element → Boolean.TRUE.
            "java.util.concurrent.ConcurrentSkipListSet" => {
                let field = [(b'L', "m", "Ljava/util/concurrent/ConcurrentNavigableMap;")];
                self.object(&desc(class, 0xdd98_5079_bdcf_f15b, SER, &field, None))?;
                let present = KryoValue::Boolean(true);
                self.skip_list_map(items.iter().map(|k| (k, &present)))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The maps of this module; `Ok(false)` for another class.
    pub(super) fn other_map(&mut self, class: &str, entries: &[(KryoValue, KryoValue)]) -> Result<bool> {
        match class {
            CONCURRENT_SKIP_LIST_MAP => self.skip_list_map(entries.iter().map(|(k, v)| (k, v)))?,
            "java.util.Hashtable" => {
                let fields = [(b'F', "loadFactor", ""), (b'I', "threshold", "")];
                self.object(&desc(class, 0x13bb_0f25_214a_e4b8, SER_WRITE, &fields, None))?;
                let (capacity, threshold) = forms::hashtable_capacity(entries.len());
                self.out.extend_from_slice(&LOAD_FACTOR.to_bits().to_be_bytes());
                self.out.extend_from_slice(&threshold.to_be_bytes());
                self.data(&capacity.to_be_bytes());
                self.data(&size_of(entries.len())?.to_be_bytes());
                for (k, v) in entries {
                    self.value(k)?;
                    self.value(v)?;
                }
                self.end_custom();
            }
            "java.util.concurrent.ConcurrentHashMap" => self.concurrent_hash_map(entries)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// An `Object[]` of the items, then `len - items` nulls.
    fn object_array(&mut self, items: &[KryoValue], len: usize) -> Result<()> {
        self.out.push(TC_ARRAY);
        self.class_desc(&desc(OBJECT_ARRAY, OBJECT_ARRAY_UID, SER, &[], None))?;
        self.object_handle();
        self.out.extend_from_slice(&size_of(len)?.to_be_bytes());
        for item in items {
            self.value(item)?;
        }
        for _ in items.len()..len {
            self.out.push(TC_NULL);
        }
        Ok(())
    }

    /// `ConcurrentSkipListMap.writeObject`: no comparator (natural order),
    /// the entries, a null key.
    fn skip_list_map<'v>(&mut self, entries: impl Iterator<Item = (&'v KryoValue, &'v KryoValue)>) -> Result<()> {
        self.object(&desc(
            CONCURRENT_SKIP_LIST_MAP,
            0x8846_75ae_0611_46a7,
            SER_WRITE,
            &[COMPARATOR],
            None,
        ))?;
        self.out.push(TC_NULL);
        for (k, v) in entries {
            self.value(k)?;
            self.value(v)?;
        }
        self.out.push(TC_NULL);
        self.end_custom();
        Ok(())
    }

    /// `ConcurrentHashMap.writeObject`: the 16 empty lock segments Java 7
    /// had (kept for its serial form), the entries, two nulls.
    fn concurrent_hash_map(&mut self, entries: &[(KryoValue, KryoValue)]) -> Result<()> {
        const SEGMENTS: i32 = 16;
        let fields = [
            (b'I', "segmentMask", ""),
            (b'I', "segmentShift", ""),
            (b'[', "segments", "[Ljava/util/concurrent/ConcurrentHashMap$Segment;"),
        ];
        self.object(&desc(
            "java.util.concurrent.ConcurrentHashMap",
            0x6499_de12_9d87_293d,
            SER_WRITE,
            &fields,
            None,
        ))?;
        self.out.extend_from_slice(&(SEGMENTS - 1).to_be_bytes());
        self.out.extend_from_slice(&28i32.to_be_bytes());
        self.out.push(TC_ARRAY);
        self.class_desc(&desc(
            "[Ljava.util.concurrent.ConcurrentHashMap$Segment;",
            0x5277_3f41_329b_3974,
            SER,
            &[],
            None,
        ))?;
        self.object_handle();
        self.out.extend_from_slice(&SEGMENTS.to_be_bytes());
        let lock = desc(
            "java.util.concurrent.locks.ReentrantLock",
            0x6655_a82c_2cc8_6aeb,
            SER,
            &[(b'L', "sync", "Ljava/util/concurrent/locks/ReentrantLock$Sync;")],
            None,
        );
        let segment = desc(
            "java.util.concurrent.ConcurrentHashMap$Segment",
            0x1f36_4c90_5893_293d,
            SER,
            &[(b'F', "loadFactor", "")],
            Some(lock),
        );
        let owned = desc(
            "java.util.concurrent.locks.AbstractOwnableSynchronizer",
            0x33df_afb9_ad6d_6fa9,
            SER,
            &[],
            None,
        );
        let queued = desc(
            "java.util.concurrent.locks.AbstractQueuedSynchronizer",
            0x6655_a843_753f_52e3,
            SER,
            &[(b'I', "state", "")],
            Some(owned),
        );
        let sync = desc(
            "java.util.concurrent.locks.ReentrantLock$Sync",
            0xb81e_a294_aa44_5a7c,
            SER,
            &[],
            Some(queued),
        );
        let nonfair = desc(
            "java.util.concurrent.locks.ReentrantLock$NonfairSync",
            0x6588_32e7_537b_bf0b,
            SER,
            &[],
            Some(sync),
        );
        for _ in 0..SEGMENTS {
            // The lock's data (its unlocked sync), then the segment's.
            self.object(&segment)?;
            self.object(&nonfair)?;
            self.out.extend_from_slice(&0i32.to_be_bytes());
            self.out.extend_from_slice(&LOAD_FACTOR.to_bits().to_be_bytes());
        }
        for (k, v) in entries {
            self.value(k)?;
            self.value(v)?;
        }
        self.out.push(TC_NULL);
        self.out.push(TC_NULL);
        self.end_custom();
        Ok(())
    }
}
