//! Banded tables: the layout that finds every stored fingerprint within
//! Hamming distance k with a few exact key lookups.
//!
//! The 64 bits are cut into disjoint bands that together cover all bits. If
//! there are at least k+1 bands, two fingerprints that differ in at most k
//! bits leave at least one band untouched (pigeonhole), so they share that
//! band's value. Storing each fingerprint in one table per band, keyed by the
//! band's value, and reading the k+1 tables of a query therefore returns every
//! fingerprint within distance k: no false negatives. A layout that breaks
//! this (too few bands, overlapping or missing bits) is refused.
//!
//! A band's table stores a fingerprint as its **member**: the bits outside
//! the band, packed into [`Band::member_bytes`] bytes (6 for a 16-bit
//! band), since the key already holds the band's own bits. A table is the
//! concatenation of its members in the order they were added
//! ([`Band::member`], [`Band::members`]).

use crate::reach::Probe;

/// One band: `bits` bits starting at bit `shift`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    pub shift: u32,
    pub bits: u32,
}

impl Band {
    pub fn value(&self, fp: u64) -> u64 {
        let mask = if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        };
        (fp >> self.shift) & mask
    }

    /// Bytes of a stored member: the bits outside the band, rounded up.
    pub fn member_bytes(&self) -> usize {
        (64 - self.bits.min(64) as usize).div_ceil(8)
    }

    /// The member of `fp` in this band's table: its bits below the band,
    /// then those above it shifted down, little endian.
    pub fn member(&self, fp: u64) -> Vec<u8> {
        let rest = self.rest(fp);
        rest.to_le_bytes()[..self.member_bytes()].to_vec()
    }

    /// The mask of the bits below the band.
    fn below(&self) -> u64 {
        u64::MAX.checked_shr(64 - self.shift).unwrap_or(0)
    }

    /// The bits of `fp` outside the band, as one number.
    fn rest(&self, fp: u64) -> u64 {
        let low = fp & self.below();
        let top = self.shift + self.bits;
        let high = if top >= 64 { 0 } else { fp >> top };
        low | high.checked_shl(self.shift).unwrap_or(0)
    }

    /// The fingerprints of a table stored under band value `value`;
    /// `None` when its length is not a whole number of members (not a
    /// table this layout wrote).
    pub fn members(&self, value: u64, table: &[u8]) -> Option<Vec<u64>> {
        let n = self.member_bytes();
        if n == 0 || !table.len().is_multiple_of(n) {
            return (table.is_empty()).then(Vec::new);
        }
        let low_mask = self.below();
        Some(
            table
                .chunks_exact(n)
                .map(|m| {
                    let mut b = [0u8; 8];
                    b[..n].copy_from_slice(m);
                    let rest = u64::from_le_bytes(b);
                    let high = (rest >> self.shift)
                        .checked_shl(self.shift + self.bits)
                        .unwrap_or(0);
                    (rest & low_mask) | (value << self.shift) | high
                })
                .collect(),
        )
    }
}

/// A layout that keeps the guarantee for distance `max_distance`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    max_distance: u32,
    bands: Vec<Band>,
}

/// Why a layout was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("{bands} bands cannot guarantee distance {k}: at least {} are needed", k + 1)]
    TooFewBands { bands: usize, k: u32 },
    #[error("band widths add up to {0} bits, not 64")]
    NotCovering(u32),
    #[error("a band of 0 bits")]
    EmptyBand,
}

impl Layout {
    /// Bands of the given widths, from bit 0 up.
    pub fn new(max_distance: u32, widths: &[u32]) -> Result<Layout, LayoutError> {
        if widths.contains(&0) {
            return Err(LayoutError::EmptyBand);
        }
        let total: u32 = widths.iter().sum();
        if total != 64 {
            return Err(LayoutError::NotCovering(total));
        }
        if widths.len() < max_distance as usize + 1 {
            return Err(LayoutError::TooFewBands {
                bands: widths.len(),
                k: max_distance,
            });
        }
        let mut shift = 0;
        let bands = widths
            .iter()
            .map(|&bits| {
                let b = Band { shift, bits };
                shift += bits;
                b
            })
            .collect();
        Ok(Layout {
            max_distance,
            bands,
        })
    }

    /// k+1 bands of (nearly) equal width for distance k.
    pub fn even(max_distance: u32) -> Result<Layout, LayoutError> {
        let n = max_distance + 1;
        if n > 64 {
            return Err(LayoutError::TooFewBands {
                bands: 64,
                k: max_distance,
            });
        }
        let widths: Vec<u32> = (0..n).map(|i| 64 / n + u32::from(i < 64 % n)).collect();
        Layout::new(max_distance, &widths)
    }

    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    pub fn bands(&self) -> &[Band] {
        &self.bands
    }

    /// The (band index, band value) pairs of a fingerprint: its table keys.
    pub fn keys(&self, fp: u64) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.bands
            .iter()
            .enumerate()
            .map(move |(i, b)| (i, b.value(fp)))
    }

    /// The keys a lookup reads: the fingerprint's own, then for every bit
    /// of `probe.flips` the key of its band with that bit flipped.
    pub fn lookup_keys(&self, probe: &Probe) -> impl Iterator<Item = (usize, u64)> + '_ {
        let (fp, flips) = (probe.fingerprint, probe.flips);
        let flipped = (0..64u32)
            .filter(move |bit| flips >> bit & 1 == 1)
            .filter_map(move |bit| {
                let i = self
                    .bands
                    .iter()
                    .position(|b| (b.shift..b.shift + b.bits).contains(&bit))?;
                Some((i, self.bands[i].value(fp ^ (1 << bit))))
            });
        self.keys(fp).chain(flipped)
    }

    /// Whether a lookup reads a key that `stored` is filed under.
    pub fn sees(&self, probe: &Probe, stored: u64) -> bool {
        self.lookup_keys(probe)
            .any(|(i, v)| self.bands[i].value(stored) == v)
    }
}

impl Default for Layout {
    /// k = 3, four bands of 16 bits.
    fn default() -> Self {
        Layout {
            max_distance: 3,
            bands: (0..4)
                .map(|i| Band {
                    shift: i * 16,
                    bits: 16,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_and_its_band_value_give_back_the_fingerprint() {
        let layouts = [
            Layout::default(),
            Layout::even(4).unwrap(),
            Layout::new(3, &[1, 20, 40, 3]).unwrap(),
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for layout in &layouts {
            for _ in 0..1000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let fps = [x, 0, u64::MAX, x.rotate_left(17)];
                for band in layout.bands() {
                    let table: Vec<u8> = fps.iter().flat_map(|&f| band.member(f)).collect();
                    assert_eq!(table.len(), fps.len() * band.member_bytes());
                    for (i, &fp) in fps.iter().enumerate() {
                        let back = band.members(
                            band.value(fp),
                            &table[i * band.member_bytes()..][..band.member_bytes()],
                        );
                        assert_eq!(back, Some(vec![fp]), "{band:?} {fp:016x}");
                    }
                }
            }
        }
        let band = Layout::default().bands()[1];
        assert_eq!(band.member_bytes(), 6);
        assert_eq!(band.members(7, &[]), Some(vec![]));
        assert_eq!(band.members(7, &[1, 2, 3]), None, "not a whole member");
    }

    #[test]
    fn refuses_layouts_that_lose_matches() {
        assert_eq!(Layout::new(3, &[16, 16, 16, 16]), Ok(Layout::default()));
        assert!(matches!(
            Layout::new(3, &[32, 32]),
            Err(LayoutError::TooFewBands { .. })
        ));
        assert!(matches!(
            Layout::new(3, &[24, 24, 24, 24]),
            Err(LayoutError::NotCovering(96))
        ));
        assert!(matches!(
            Layout::new(1, &[32, 0, 32]),
            Err(LayoutError::EmptyBand)
        ));
        let l = Layout::even(4).unwrap();
        assert_eq!(l.bands().iter().map(|b| b.bits).sum::<u32>(), 64);
        assert_eq!(l.bands().len(), 5);
    }

    #[test]
    fn a_probe_also_reads_its_flipped_keys() {
        let layout = Layout::default();
        let fp = 0x0123_4567_89ab_cdefu64;
        let probe = Probe {
            radius: 7,
            flips: (1 << 2) | (1 << 40),
            ..Probe::exact(&layout, fp)
        };
        let keys: Vec<(usize, u64)> = layout.lookup_keys(&probe).collect();
        assert_eq!(keys.len(), 6);
        assert_eq!(keys[4], (0, 0xcdef ^ 0b100));
        assert_eq!(keys[5], (2, 0x4567 ^ (1 << 8)));
        // Differs in every band: seen only through a flipped bit.
        let other = fp ^ (1 << 2) ^ (1 << 17) ^ (1 << 33) ^ (1 << 50) ^ (1 << 51);
        assert!(layout.sees(&probe, other));
        assert!(!layout.sees(&Probe::exact(&layout, fp), other));
        let other = fp ^ (1 << 3) ^ (1 << 17) ^ (1 << 33) ^ (1 << 50);
        assert!(!layout.sees(&probe, other));
    }

    #[test]
    fn every_pair_within_k_shares_a_band() {
        // Exhaustive over flips of up to 3 bits at spread positions.
        let layout = Layout::default();
        let fp = 0x0123_4567_89ab_cdefu64;
        for a in 0..64 {
            for b in (a..64).step_by(7) {
                for c in (b..64).step_by(13) {
                    let other = fp ^ (1 << a) ^ (1 << b) ^ (1 << c);
                    let shared = layout.keys(fp).zip(layout.keys(other)).any(|(x, y)| x == y);
                    assert!(shared, "flips {a} {b} {c}");
                }
            }
        }
    }
}
