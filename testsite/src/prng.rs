//! A tiny deterministic pseudo-random generator (SplitMix64).
//!
//! The site must be byte-for-byte identical for a given seed on every machine
//! and every version of the dependencies, so it does not use `rand`.

/// SplitMix64: 64 bits of state, good statistical quality for generating text,
/// and trivially seedable from any `u64`.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    /// The running state; each call adds the golden-ratio increment.
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A generator for one named part of the site (`"article"`, 17), so that
    /// adding pages of one kind never changes the text of another kind.
    pub fn for_part(site_seed: u64, part: &str, index: u64) -> Self {
        let mut hash = site_seed ^ 0x51_7c_c1_b7_27_22_0a_95;
        for byte in part.bytes() {
            hash = mix(hash ^ u64::from(byte));
        }
        Self::new(mix(hash ^ mix(index)))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.state)
    }

    /// A number in `0..bound` (`bound` > 0). The modulo bias is irrelevant for
    /// bounds this small compared with 2^64.
    pub fn below(&mut self, bound: usize) -> usize {
        debug_assert!(bound > 0);
        (self.next_u64() % bound as u64) as usize
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }

    /// A random element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for upper in (1..items.len()).rev() {
            let other = self.below(upper + 1);
            items.swap(upper, other);
        }
    }
}

/// The SplitMix64 output function, also used to hash seeds together.
fn mix(mut value: u64) -> u64 {
    value = (value ^ (value >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    value ^ (value >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_different_part_different_sequence() {
        let first: Vec<u64> = {
            let mut rng = SplitMix64::for_part(7, "article", 3);
            (0..4).map(|_| rng.next_u64()).collect()
        };
        let again: Vec<u64> = {
            let mut rng = SplitMix64::for_part(7, "article", 3);
            (0..4).map(|_| rng.next_u64()).collect()
        };
        let other: Vec<u64> = {
            let mut rng = SplitMix64::for_part(7, "article", 4);
            (0..4).map(|_| rng.next_u64()).collect()
        };
        assert_eq!(first, again);
        assert_ne!(first, other);
    }
}
