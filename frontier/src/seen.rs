//! The URL-seen set: an exact set of 64-bit URL hashes, stored as signed
//! integers (so small Redis sets stay compact intsets, 8 bytes a member),
//! grouped by the politeness shard of the URL's host
//! ([`pipeline::keys::Keys::seen`]), so that admitting a URL (adding it,
//! and queueing its task if it was new) is one step in one slot
//! ([`politeness::schedule::admit`]): a redelivered batch finds its URLs
//! seen and their tasks queued, never one without the other.
//!
//! Collisions: two distinct URLs share a 64-bit hash with probability about
//! n²/2⁶⁵; at a billion URLs that is about 2.7%, for one URL pair that would
//! be wrongly skipped.

/// The hash of a normalized URL, as the signed integer stored in Redis.
pub fn url_hash(normalized: &str) -> i64 {
    pipeline::keys::url_hash(normalized) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable() {
        let h = url_hash("http://example.com/");
        assert_eq!(h, url_hash("http://example.com/"));
        assert_ne!(h, url_hash("http://example.com/a"));
    }
}
