//! The bounds of one offering script run, and the one chunker that applies
//! them: a bulk offer's chunks (`lua/offer_all.lua`, `delayed/offer.rs`)
//! and a run of joined offers (`lua/offer.lua`, `delayed/joined_offers.rs`)
//! hold Redis equally long at most.
//!
//! An element counts its payload plus a modern header
//! ([`MODERN_HEADER_LEN`], 17 bytes), whichever layout the queue writes (a
//! legacy header is one byte shorter): the bound is on what Redis copies
//! and hashes, which that overstates by at most a byte per element, and
//! where a chunk ends never depends on the format. Bulk offers always
//! counted so, and their chunk boundaries decide their publishes, which Java
//! sees: they split exactly where they did.

use crate::wire::format::MODERN_HEADER_LEN;

/// Most elements one offering script run adds. Its cost is mostly one
/// skiplist insert per element: measured with SLOWLOG on a timeout set of
/// 10,000,000 members on a loaded 2-core VM, 500 took 7 ms (median), 250
/// under 5 ms, half the 10 ms budget (BENCHMARKS.md, scenario 1b); the
/// per-script overhead stays a few percent of the elements' cost.
pub(crate) const MOST_OFFERS: usize = 250;

/// Most bytes one offering script run carries, counted as the module doc
/// says (a larger element goes alone): with 10 KB payloads copying and
/// hashing bytes is what costs, ~2 ms for 256 KiB on the same set.
pub(crate) const MOST_OFFER_BYTES: usize = 256 * 1024;

/// One offering run being filled: what it holds so far.
#[derive(Debug, Default)]
pub(crate) struct OfferRun {
    elements: usize,
    bytes: usize,
}

impl OfferRun {
    /// Takes the next element, of `payload` bytes, if it fits: within
    /// [`MOST_OFFERS`] and [`MOST_OFFER_BYTES`], and the first always does.
    /// Once one does not fit, the run is full.
    pub(super) fn take(&mut self, payload: usize) -> bool {
        let bytes = self.bytes + payload + MODERN_HEADER_LEN;
        if self.elements > 0 && (self.elements == MOST_OFFERS || bytes > MOST_OFFER_BYTES) {
            return false;
        }
        self.elements += 1;
        self.bytes = bytes;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many of these payload sizes one run takes.
    fn taken(sizes: impl IntoIterator<Item = usize>) -> usize {
        let mut run = OfferRun::default();
        sizes.into_iter().take_while(|&n| run.take(n)).count()
    }

    #[test]
    fn a_run_is_bounded_by_count_and_bytes_and_holds_at_least_one_element() {
        assert_eq!(taken(std::iter::repeat_n(10, 2_500)), MOST_OFFERS);
        assert_eq!(taken(std::iter::repeat_n(10, 100)), 100);
        let large = 10 * 1024;
        assert_eq!(
            taken(std::iter::repeat_n(large, 300)),
            MOST_OFFER_BYTES / (large + MODERN_HEADER_LEN)
        );
        assert_eq!(taken([2 << 20, 1]), 1, "too large: alone");
        assert_eq!(taken([1, 2 << 20]), 1, "too large: after the others");
        // Exactly at the bound still fits; a byte over does not.
        let exact = MOST_OFFER_BYTES / 2 - MODERN_HEADER_LEN;
        assert_eq!(taken([exact, exact, 0]), 2);
        assert_eq!(taken([exact, exact + 1]), 1);
    }
}
