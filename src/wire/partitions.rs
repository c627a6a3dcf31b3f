//! The layout of a partitioned queue: its partitions' names, how they are
//! spread over Redis Cluster's hash slots, and how a key picks a partition.
//!
//! A partitioned queue `Q` of N partitions is N ordinary Redisson queues
//! whose names (no braces) hash to different slots, plus one hash in `Q`'s
//! own slot, `delayq_partitions:{Q}`, that stores the layout:
//!
//! | field | value |
//! | --- | --- |
//! | `version` | `1` |
//! | `count` | N |
//! | `names` | the partitions' names, one a line, partition 0 first |
//! | `hash` | `crc32` (how a partition key picks a partition) |
//! | `created` | ms since the epoch, on the creating client's clock |
//! | `generation` | 1 at creation (absent means 1), one more at each re-partition |
//! | `retired` | names of earlier generations' partitions still read, one a line (absent or empty: none) |
//!
//! Partition i is the first of `Q#i`, `Q#i.1`, `Q#i.2`, … whose slot lies in
//! the middle half of slice i of the 16,384 slots (`[i·16384/N,
//! (i+1)·16384/N)`, a quarter of it left at each end, so that any rounding
//! of an even split's ends agrees), so with N equal
//! to the number of primaries of an evenly split Cluster each partition
//! lands on its own primary. Generation g > 1 (after re-partitions) names
//! its partitions `Q#i~g`, `Q#i~g.1`, … the same way, so they never reuse an
//! earlier generation's. The names are stored, and every reader (Rust, the
//! CLI, a Java service reading the hash) uses the stored ones.
//!
//! A re-partition stores a new generation's names; the old ones become
//! `retired`: nothing is offered to them any more, takes and workers still
//! read them until they are empty and retired for good (see
//! [`Client::repartition`](crate::Client::repartition)).
//!
//! A partition key's partition is `CRC-32(key bytes) mod N`, CRC-32 being
//! the IEEE one of zlib and Java's `java.util.zip.CRC32`, so a Java producer
//! routes as delayq does:
//! `Math.floorMod(crc.getValue(), n)` after `crc.update(key.getBytes(UTF_8))`.

use crate::error::Error;

/// Most partitions a partitioned queue may have: 16 slots each at least.
pub const MAX_PARTITIONS: usize = 1024;

/// Redis Cluster's hash slots.
pub(crate) const SLOTS: u32 = 16_384;

/// The version of the stored layout this code writes and reads.
pub(crate) const LAYOUT_VERSION: u32 = 1;

/// The name of the key hash, as stored.
pub(crate) const KEY_HASH: &str = "crc32";

/// Most retired partitions a layout keeps: re-partitions past it wait
/// until earlier ones are drained and retired.
pub const MAX_RETIRED: usize = 4 * MAX_PARTITIONS;

/// How many candidate names a partition's search tries before giving up
/// (about 1,000 are needed on average with 1,024 partitions).
const MOST_CANDIDATES: usize = 1_000_000;

/// CRC-16/XMODEM, Redis Cluster's key hash.
fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in bytes {
        crc ^= (byte as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The Redis Cluster slot of a key without a hash tag (no braces).
pub(crate) fn slot_of(name: &str) -> u16 {
    (crc16(name.as_bytes()) as u32 % SLOTS) as u16
}

/// CRC-32 (IEEE 802.3, reflected, as zlib and `java.util.zip.CRC32`).
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    let mut crc: u32 = 0xFFFF_FFFF;
    for &byte in bytes {
        crc ^= byte as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The partition of `key` among `count`: `CRC-32(key) mod count`.
pub(crate) fn partition_for_key(key: &[u8], count: usize) -> usize {
    (crc32(key) as u64 % count.max(1) as u64) as usize
}

/// Refuses a logical name that cannot be partitioned: empty, with braces (a
/// hash tag would pin every partition to one slot), or with a line break
/// (names are stored one a line).
pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    let invalid = |reason: &str| {
        Err(Error::InvalidQueueName {
            name: name.to_owned(),
            reason: reason.to_owned(),
        })
    };
    if name.is_empty() {
        return invalid("the name is empty");
    }
    if name.contains(['{', '}']) {
        return invalid("a partitioned queue's name has no braces: a hash tag would put every partition in one slot");
    }
    if name.contains(['\n', '\r']) {
        return invalid("a partitioned queue's name has no line breaks");
    }
    Ok(())
}

/// Refuses a count of 0 or over [`MAX_PARTITIONS`].
pub(crate) fn check_count(count: usize) -> Result<(), Error> {
    if count == 0 || count > MAX_PARTITIONS {
        return Err(Error::InvalidArgument(format!(
            "a partitioned queue has 1 to {MAX_PARTITIONS} partitions, not {count}"
        )));
    }
    Ok(())
}

/// Slice `i` of the slots split in `count`: `[i·16384/count, (i+1)·16384/count)`.
fn slice(i: usize, count: usize) -> (u16, u16) {
    let at = |i: usize| (i as u64 * SLOTS as u64 / count as u64) as u16;
    (at(i), at(i + 1))
}

/// The names of `count` partitions of `name`, each in its slice of the slots
/// (see the module docs).
pub(crate) fn partition_names(name: &str, count: usize) -> Result<Vec<String>, Error> {
    partition_names_of(name, count, 1)
}

/// The names of generation `generation`'s `count` partitions of `name`.
pub(crate) fn partition_names_of(name: &str, count: usize, generation: u32) -> Result<Vec<String>, Error> {
    check_name(name)?;
    check_count(count)?;
    (0..count)
        .map(|i| {
            // The middle half of slice i: a slot there lies in part i of
            // any even split, whichever way it rounds the parts' ends
            // (`redis-cli --cluster create` gives 0-5460, 5461-10922, 10923-16383).
            let (low, high) = slice(i, count);
            let quarter = (high - low) / 4;
            let (low, high) = (low + quarter, high - quarter);
            let base = match generation {
                0 | 1 => format!("{name}#{i}"),
                g => format!("{name}#{i}~{g}"),
            };
            (0..MOST_CANDIDATES)
                .map(|n| match n {
                    0 => base.clone(),
                    n => format!("{base}.{n}"),
                })
                .find(|candidate| (low..high).contains(&slot_of(candidate)))
                .ok_or_else(|| Error::InvalidArgument(format!("no name for partition {i} of {name:?} in its slots")))
        })
        .collect()
}

/// A partitioned queue's layout, as stored in `delayq_partitions:{Q}`: the
/// logical name, its partitions' names (partition 0 first) and when it was
/// created. What [`PartitionedQueue::layout`](crate::PartitionedQueue::layout)
/// and `delayq partition show` give.
///
/// ```
/// use delayq::PartitionLayout;
/// let layout = PartitionLayout::plan("orders", 3)?;
/// assert_eq!(layout.count(), 3);
/// assert!(layout.names()[0].starts_with("orders#0")); // orders#0, orders#0.1, ...: the first in its slots
/// // Partition i's slot lies in slice i of the 16,384 slots.
/// assert!(layout.slot(2) >= 2 * 16_384 / 3);
/// // Each key always goes to the same partition: CRC-32 of its bytes mod 3.
/// assert_eq!(layout.partition_for_key(b"customer-42"), layout.partition_for_key(b"customer-42"));
/// # Ok::<(), delayq::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionLayout {
    queue: String,
    names: Vec<String>,
    created_ms: u64,
    generation: u32,
    retired: Vec<String>,
}

impl PartitionLayout {
    /// The layout [`Client::create_partitioned_queue`](crate::Client::create_partitioned_queue)
    /// stores for `queue` with `count` partitions (nothing is read or
    /// written here). Fails with [`Error::InvalidQueueName`] for a name with
    /// braces, and [`Error::InvalidArgument`] for a count of 0 or over
    /// [`MAX_PARTITIONS`].
    pub fn plan(queue: &str, count: usize) -> Result<PartitionLayout, Error> {
        Ok(PartitionLayout {
            queue: queue.to_owned(),
            names: partition_names(queue, count)?,
            created_ms: 0,
            generation: 1,
            retired: Vec::new(),
        })
    }

    /// The next generation's layout with `count` partitions: this one's
    /// partitions join its retired ones.
    pub(crate) fn next(&self, count: usize) -> Result<PartitionLayout, Error> {
        let generation = self.generation + 1;
        let mut retired = self.retired.clone();
        retired.extend(self.names.iter().cloned());
        if retired.len() > MAX_RETIRED {
            return Err(Error::InvalidArgument(format!(
                "partitioned queue {:?} would keep {} retired partitions, over {MAX_RETIRED}: retire the drained ones first",
                self.queue,
                retired.len()
            )));
        }
        Ok(PartitionLayout {
            queue: self.queue.clone(),
            names: partition_names_of(&self.queue, count, generation)?,
            created_ms: self.created_ms,
            generation,
            retired,
        })
    }

    /// The layout read back from its stored fields (`names` one a line).
    pub(crate) fn from_stored(queue: &str, count: usize, names: &str, created_ms: u64) -> Result<Self, Error> {
        Self::from_stored_generation(queue, count, names, created_ms, 1, "")
    }

    /// The layout read back from its stored fields, a re-partitioned one's
    /// too (`retired` one a line, empty for none).
    pub(crate) fn from_stored_generation(
        queue: &str,
        count: usize,
        names: &str,
        created_ms: u64,
        generation: u32,
        retired: &str,
    ) -> Result<Self, Error> {
        let names: Vec<String> = names.split('\n').map(str::to_owned).collect();
        let retired: Vec<String> = retired
            .split('\n')
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
            .collect();
        if names.len() != count || names.iter().any(|n| n.is_empty()) {
            return Err(Error::Protocol(format!(
                "the stored layout of partitioned queue {queue:?} names {} partitions for a count of {count}",
                names.len()
            )));
        }
        Ok(PartitionLayout {
            queue: queue.to_owned(),
            names,
            created_ms,
            generation: generation.max(1),
            retired,
        })
    }

    /// The names as stored: one a line.
    pub(crate) fn joined_names(&self) -> String {
        self.names.join("\n")
    }

    /// The retired names as stored: one a line.
    pub(crate) fn joined_retired(&self) -> String {
        self.retired.join("\n")
    }

    /// Every partition that is read: the current ones, then the retired.
    pub fn all_names(&self) -> impl Iterator<Item = &String> {
        self.names.iter().chain(&self.retired)
    }

    /// Its generation: 1 at creation, one more at each re-partition.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// The partitions of earlier generations that are still read (takes and
    /// workers drain them; nothing is offered to them): empty unless a
    /// re-partition's old partitions have not been retired for good yet
    /// ([`Client::retire_partitions`](crate::Client::retire_partitions)).
    pub fn retired(&self) -> &[String] {
        &self.retired
    }

    /// The logical queue's name.
    pub fn queue(&self) -> &str {
        &self.queue
    }

    /// How many partitions it has (fixed at creation; changed only by a
    /// re-partition, which makes a new generation).
    pub fn count(&self) -> usize {
        self.names.len()
    }

    /// The partitions' names, partition 0 first: each an ordinary Redisson
    /// queue that a Java client reads and writes by this name.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The Redis Cluster slot of a partition named `name` (a retired one's
    /// too: partition names have no hash tag).
    pub fn slot_of_name(name: &str) -> u16 {
        slot_of(name)
    }

    /// The Redis Cluster slot of partition `i` (its name has no hash tag).
    ///
    /// # Panics
    ///
    /// If `i` is not below [`count`](Self::count).
    pub fn slot(&self, i: usize) -> u16 {
        slot_of(&self.names[i])
    }

    /// The partition a value with partition key `key` goes to:
    /// `CRC-32(key) mod count` (CRC-32/IEEE, as `java.util.zip.CRC32`).
    pub fn partition_for_key(&self, key: &[u8]) -> usize {
        partition_for_key(key, self.count())
    }

    /// When the layout was stored (the creating client's clock); `None`
    /// for a [`plan`](Self::plan), or a stored time that is not one.
    pub fn created(&self) -> Option<std::time::SystemTime> {
        (self.created_ms > 0).then(|| std::time::UNIX_EPOCH + std::time::Duration::from_millis(self.created_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crcs_match_the_reference_values() {
        // The check values of CRC-16/XMODEM and CRC-32/ISO-HDLC.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // Redis's own example: the slot of "foo" is 12182.
        assert_eq!(slot_of("foo"), 12182);
        for name in ["orders#0", "orders#1.7", "q", "ünïcode#3"] {
            assert_eq!(slot_of(name), fred::util::redis_keyslot(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn names_lie_in_their_slices_and_differ() {
        for count in [1, 2, 3, 6, 10, 100, 1024] {
            let names = partition_names("orders", count).unwrap();
            assert_eq!(names.len(), count);
            for (i, name) in names.iter().enumerate() {
                let slot = slot_of(name) as usize;
                assert!(
                    slot >= i * 16384 / count && slot < (i + 1) * 16384 / count,
                    "{name} {slot}"
                );
                assert!(name.starts_with(&format!("orders#{i}")));
            }
        }
    }

    #[test]
    fn bad_names_and_counts_are_refused() {
        assert!(matches!(
            partition_names("{t}q", 3),
            Err(Error::InvalidQueueName { .. })
        ));
        assert!(matches!(partition_names("", 3), Err(Error::InvalidQueueName { .. })));
        assert!(matches!(partition_names("q", 0), Err(Error::InvalidArgument(_))));
        assert!(matches!(partition_names("q", 1025), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn a_new_generation_has_new_names_in_the_same_slices_and_retires_the_old() {
        let first = PartitionLayout::plan("orders", 3).unwrap();
        let second = first.next(5).unwrap();
        assert_eq!((second.generation(), second.count()), (2, 5));
        assert_eq!(second.retired(), first.names());
        for (i, name) in second.names().iter().enumerate() {
            assert!(name.starts_with(&format!("orders#{i}~2")), "{name}");
            let slot = slot_of(name) as usize;
            assert!(slot >= i * 16384 / 5 && slot < (i + 1) * 16384 / 5, "{name} {slot}");
            assert!(!first.names().contains(name));
        }
        let third = second.next(5).unwrap();
        assert_eq!(third.retired().len(), 8);
        assert!(third.names().iter().all(|n| !second.names().contains(n)));
        let stored =
            PartitionLayout::from_stored_generation("orders", 5, &third.joined_names(), 0, 3, &third.joined_retired())
                .unwrap();
        assert_eq!(stored, third);
    }

    #[test]
    fn keys_route_by_crc32() {
        assert_eq!(partition_for_key(b"123456789", 1000), (0xCBF4_3926u64 % 1000) as usize);
        let layout = PartitionLayout::plan("q", 7).unwrap();
        let joined = layout.joined_names();
        assert_eq!(PartitionLayout::from_stored("q", 7, &joined, 0).unwrap(), layout);
        assert!(PartitionLayout::from_stored("q", 6, &joined, 0).is_err());
    }
}
