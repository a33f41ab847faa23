//! The frontier's URL normalization on arbitrary text.
//!
//! Input: one byte of flags (bit 0: resolve against a base, bit 1: sort the
//! query, bit 2: strip `ref*` and `sessionid` as a crawl may ask), then the
//! text, lossy UTF-8. With a base, the text's first line is the base and the
//! rest the link.
//!
//! Properties checked on every URL accepted: http(s), a host, no fragment, at
//! most `MAX_URL_BYTES` bytes, and normalization is idempotent (the normalized
//! URL normalizes to itself, without a base and with it as its own base).
#![no_main]

use frontier::normalize::{normalize_with, Rules};
use pipeline::messages::MAX_URL_BYTES;
use libfuzzer_sys::fuzz_target;
use url::Url;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let rules = Rules {
        strip_params: if flags & 4 != 0 {
            vec!["ref*".into(), "sessionid".into()]
        } else {
            Vec::new()
        },
        sort_query: flags & 2 != 0,
    };
    let (base, raw) = match text.split_once('\n') {
        Some((base, raw)) if flags & 1 != 0 => (Url::parse(base).ok(), raw),
        _ => (None, &*text),
    };
    let Ok(url) = normalize_with(raw, base.as_ref(), &rules) else {
        return;
    };
    assert!(matches!(url.scheme(), "http" | "https"), "{url}");
    assert!(url.host_str().is_some_and(|h| !h.is_empty()), "{url}");
    assert!(url.fragment().is_none(), "{url}");
    assert!(url.as_str().len() <= MAX_URL_BYTES, "{url}");
    let again = normalize_with(url.as_str(), None, &rules)
        .unwrap_or_else(|e| panic!("{url} normalized, then refused: {e}"));
    assert_eq!(url.as_str(), again.as_str(), "not idempotent for {raw:?}");
    let against_itself = normalize_with(url.as_str(), Some(&url), &rules)
        .unwrap_or_else(|e| panic!("{url} against itself refused: {e}"));
    assert_eq!(url.as_str(), against_itself.as_str());
});
