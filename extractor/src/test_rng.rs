//! The seeded generator of the tests that compare a fast path with the code it replaces
//! over generated input: PCG (`rand_pcg`), as in `evaluation::rng`. That crate depends on
//! this one, so these unit tests cannot use it; they draw from the same generator.

use rand::{Rng, SeedableRng};

/// The seed every test starts from: a failure repeats.
const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// The generator's `u64`s, one per call, from [`SEED`].
pub fn sequence() -> impl FnMut() -> u64 {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(SEED);
    move || rng.next_u64()
}

/// An element of `items`, drawn with `next` (one call of it).
pub fn pick<T: Copy>(next: &mut impl FnMut() -> u64, items: &[T]) -> T {
    items[(next() % items.len() as u64) as usize]
}

/// A string of fewer than `max` elements of `items` (chars or pieces of text), drawn with
/// `next`: first its length, then each element.
pub fn string<T: Copy>(next: &mut impl FnMut() -> u64, items: &[T], max: u64) -> String
where
    String: FromIterator<T>,
{
    let len = next() % max;
    (0..len).map(|_| pick(next, items)).collect()
}
