//! # link: one link found on a page, or one seed
//!
//! Owns [`Link`]: what the extractor core produces for every `<a href>` of
//! a page (`extractor::Article::outlinks`, by `extractor::links`) and what
//! `pipeline::UrlBatch` carries to the frontier, sent as it is; `crawler
//! seed` makes one per seed ([`Link::new`]). Consumes nothing, produces the
//! type; no I/O.
//!
//! Why a crate of its own: the type belongs both to the extractor's pure
//! core and to the message contract in `pipeline`. The extractor's worker
//! (its `worker` feature) depends on `pipeline`, so `pipeline` cannot
//! depend on the extractor (a cycle), and the extractor's core must not
//! depend on `pipeline` (it would link the broker and store clients). A
//! leaf both depend on keeps the graph acyclic and the core pure; the
//! extractor re-exports it as `extractor::Link`, `pipeline` as
//! `pipeline::Link`.

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use serde::{Deserialize, Serialize};

/// One link found on a page (or one seed): the extractor's outlinks
/// (`extractor::Article::outlinks`) are of this type, sent as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// Absolute, without fragment.
    pub url: String,
    /// `rel` has `nofollow` (or `ugc`/`sponsored`).
    #[serde(default)]
    pub nofollow: bool,
    /// The link text, whitespace collapsed and trimmed (empty for a seed).
    #[serde(default)]
    pub anchor: String,
}

impl Link {
    pub fn new(url: impl Into<String>) -> Self {
        Link {
            url: url.into(),
            nofollow: false,
            anchor: String::new(),
        }
    }
}
