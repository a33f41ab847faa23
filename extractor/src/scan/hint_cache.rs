//! [`hints::classify`] remembered for the `id class` strings a page repeats.

use super::word_hash;
use crate::hints;

/// [`hints::classify`] remembered for recent strings: a slot per hash of the string (the
/// last string of that hash wins), the strings themselves kept in one buffer.
#[derive(Default)]
pub(super) struct HintCache {
    /// [`HINT_CACHE_SLOTS`] slots once used.
    slots: Vec<HintSlot>,
    /// The strings of the slots, one after the other (and strings slots no longer hold).
    strings: String,
}

/// One string of [`HintCache`]: `strings[start..start + len]`, and its hint.
#[derive(Debug, Default, Clone, Copy)]
struct HintSlot {
    start: u32,
    /// 0 for an empty slot (no string classified is empty).
    len: u32,
    hint: hints::Hint,
}

/// Bytes of [`HintCache::strings`] before it is emptied with all slots (a page with
/// endless distinct classes).
const HINT_CACHE_BYTES: usize = 256 << 10;

impl HintCache {
    /// The hint of the non-empty string `id_class`, classified unless the slot of its hash
    /// holds it.
    pub(super) fn hint(&mut self, id_class: &str) -> hints::Hint {
        if self.slots.is_empty() {
            self.slots = vec![HintSlot::default(); HINT_CACHE_SLOTS];
        }
        let index = word_hash(id_class.as_bytes()) as usize % HINT_CACHE_SLOTS;
        let slot = self.slots[index];
        let held = self
            .strings
            .get(slot.start as usize..(slot.start + slot.len) as usize);
        if slot.len > 0 && held == Some(id_class) {
            return slot.hint;
        }
        if self.strings.len() + id_class.len() > HINT_CACHE_BYTES {
            self.strings.clear();
            self.slots.fill(HintSlot::default());
        }
        let hint = hints::classify(id_class);
        self.slots[index] = HintSlot {
            start: self.strings.len() as u32,
            len: id_class.len() as u32,
            hint,
        };
        self.strings.push_str(id_class);
        hint
    }
}

/// Slots of [`HintCache`].
const HINT_CACHE_SLOTS: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_cache_answers_as_classify() {
        let mut cache = HintCache::default();
        let strings: Vec<String> = (0..20_000)
            .map(|i| match i % 4 {
                0 => format!("post-{i} article-body "),
                1 => "sidebar widget ".to_string(),
                2 => format!("x{} ", "y".repeat(i % 300)),
                _ => format!("byline c{} ", i % 7),
            })
            .collect();
        for s in &strings {
            assert_eq!(cache.hint(s), hints::classify(s), "{s}");
        }
        // The string buffer was emptied on the way, and stays bounded.
        assert!(cache.strings.len() <= HINT_CACHE_BYTES);
    }
}
