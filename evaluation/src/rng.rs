//! The seeded generator every evaluation draws from (PCG, `rand_pcg`), so
//! a run is repeated exactly from its printed seed.

pub use rand::{Rng, RngExt, SeedableRng};
pub type EvalRng = rand_pcg::Pcg64;

/// The generator for `seed`, split by `stream` (one per use, so adding a
/// draw in one place does not move the draws of another).
pub fn rng(seed: u64, stream: u64) -> EvalRng {
    EvalRng::seed_from_u64(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// One element of a non-empty slice.
pub fn pick<'a, T>(rng: &mut EvalRng, xs: &'a [T]) -> &'a T {
    &xs[rng.random_range(0..xs.len())]
}
