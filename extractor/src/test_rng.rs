//! A fixed, reproducible pseudo-random sequence for the tests that compare
//! a fast path with the code it replaces over generated input.

/// xorshift64*, from a fixed seed.
pub fn xorshift() -> impl FnMut() -> u64 {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// An element of `items`, drawn with `next` (one call of it).
pub fn pick<T: Copy>(next: &mut impl FnMut() -> u64, items: &[T]) -> T {
    items[(next() % items.len() as u64) as usize]
}
