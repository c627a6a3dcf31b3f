//! What Java's `HashMap` (and the `HashSet` on one) holds after its puts,
//! which Java serialization and JBoss Marshalling both write.

/// The table size and resize threshold of a `new HashMap()` after `size`
/// puts, one at a time (what Jackson and most code build): 16 buckets,
/// doubled while more than 3/4 full; an empty map has no table yet
/// (threshold 0).
pub(crate) fn hash_capacity(size: usize) -> (i32, i32) {
    if size == 0 {
        return (16, 0);
    }
    let mut capacity: i64 = 16;
    while (size as i64) > capacity * 3 / 4 && capacity < 1 << 30 {
        capacity *= 2;
    }
    let threshold = if capacity >= 1 << 30 {
        i32::MAX as i64
    } else {
        capacity * 3 / 4
    };
    (capacity as i32, threshold as i32)
}
