//! Maps keyed by the tokens this process hands out in sequence (a counter
//! per map): each value a worker handles enters two of them and leaves
//! again, so their hash is on the hot path. A token is no input from
//! outside, so it needs no keyed (DoS-resistant) hash: one multiply
//! spreads sequential tokens over the table, where SipHash cost a busy
//! worker about 20 ns a lookup.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map from a token (`u64`, handed out by this process) to `V`.
pub(crate) type TokenMap<V> = HashMap<u64, V, BuildHasherDefault<TokenHasher>>;

/// Fibonacci hashing of one `u64`: the high bits, which the table's
/// control bytes use, depend on every bit of the token.
#[derive(Default)]
pub(crate) struct TokenHasher(u64);

impl Hasher for TokenHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys reach here; anything else still hashes, a byte
        // at a time.
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, token: u64) {
        self.0 = (self.0 ^ token).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(26);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_tokens_spread_over_the_high_and_low_bits() {
        let hash = |token: u64| {
            let mut hasher = TokenHasher::default();
            hasher.write_u64(token);
            hasher.finish()
        };
        let (high, low): (std::collections::HashSet<u64>, std::collections::HashSet<u64>) =
            (0..1024).map(|t| (hash(t) >> 57, hash(t) & 1023)).unzip();
        assert_eq!(high.len(), 128, "every top-7-bit pattern is used");
        assert!(low.len() > 600, "low bits spread: {} of 1024", low.len());
        let mut map = TokenMap::default();
        for token in 0..10_000u64 {
            map.insert(token, token * 2);
        }
        assert!((0..10_000u64).all(|t| map.get(&t) == Some(&(t * 2))));
        assert_eq!(map.remove(&5), Some(10));
        assert_eq!(map.len(), 9_999);
    }
}
