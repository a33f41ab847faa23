//! The near-duplicate evaluation on real sites (issue 31): Debian's HTML
//! documentation packages and the news pages of `../shared/bench`, each
//! site served on a loopback host and again, byte for byte, on a mirror
//! host, crawled by the real crawler (`crawler run`, and the four workers
//! over RabbitMQ and Redis), and every verdict judged against labels made
//! without the crawler's help.
//!
//! - [`sites`]: the sites (`evaluation/neardup_sites/sites.tsv`), their
//!   pages, which are held aside, and the server of both copies.
//! - [`labels`]: each page's main text by another extractor
//!   (`evaluation/neardup_sites/label.py`: trafilatura, or the hand-cleaned
//!   text where the set has one), its word 3-shingles, the exact Jaccard
//!   similarity of two pages and every pair of pages at 0.8 or more.
//! - [`score`]: the verdicts of a crawl against the labels, per site and
//!   per kind, tuned beside held aside.
//!
//! ## What is scored
//!
//! A pair whose exact Jaccard similarity is at least [`FOUND_AT`] is a
//! near-duplicate that must be found (every mirror pair, and any two pages
//! of the sets whose texts are that close, unless a second extractor's
//! texts of the two, readability-lxml's, are under [`DISTINCT_BELOW`]: the
//! labels disagree, and one extractor's failure is no pair to find;
//! trafilatura took SQLite's release notes, each a different list of
//! changes, for one 31-word notice they all share); a verdict between two pages
//! under [`DISTINCT_BELOW`] is wrong; in between is not scored. A page is
//! a **listing** when its labelled text holds fewer than
//! [`LISTING_MAX_WORDS`] words or more than [`LISTING_LINK_SHARE`] of it
//! is link text: it must come out `article: false` and never be matched
//! (its mirror pair is not counted in recall).
//!
//! ## The held-aside part (fixed before any result was seen)
//!
//! Whole sites (`held aside` in `sites.tsv`: sqlalchemy, docbook-xsl, gne),
//! and in every other site the pages whose id `<site>:<path>` is held aside
//! by [`crate::split::held_aside`] (about one in three). A pair is held
//! aside when either page is. Tuning looks at the tuned column only; the
//! benchmark lists the wrong verdicts of the tuned part alone.

pub mod labels;
pub mod score;
pub mod sites;

/// An exact Jaccard similarity of word 3-shingles from which a pair is a
/// near-duplicate that must be found.
pub const FOUND_AT: f64 = 0.8;
/// Under this a pair is distinct: marking it is a wrong verdict.
pub const DISTINCT_BELOW: f64 = 0.5;
/// A page whose labelled text has fewer words is a listing (or empty).
pub const LISTING_MAX_WORDS: usize = 10;
/// A page whose labelled text is more than this share link text is a
/// listing.
pub const LISTING_LINK_SHARE: f64 = 0.5;
/// Two pages of one site whose labelled texts both have at least this many
/// words are "long same-subject pages" when a verdict joins them.
pub const LONG_WORDS: usize = 2_000;
