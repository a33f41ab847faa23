//! A generated, linked news site served on 127.0.0.1, for the crawler's
//! tests and benchmarks. Nothing here sends traffic anywhere: the server only
//! answers, and every outside link points at the reserved `.invalid` domain.
//!
//! The site is deterministic from [`SiteConfig::seed`]; [`Site::pages`]
//! describes every served path with what a test should expect of it
//! ([`PageSpec`]: kind, status, links as written, original of a duplicate,
//! expected body text and true encoding).
//!
//! # Map of the site
//!
//! | Path | Kind | What it tests |
//! |---|---|---|
//! | `/`, `/list/N` | Index | a link tree: every page within depth 3 of `/`; ~20 headlines per page, pagination, `?sort=latest`, fragments |
//! | `/article/N` | Article | English news page, UTF-8, 300–800 word body in `<article>`/`<div class="content">`, nav, sidebar, share bar, footer |
//! | `/zh/N` | ZhArticle | Chinese news page in GBK (`charset=gbk` header and meta), `作者：`, `2019年02月20日 02:26` |
//! | `/lie/...` | Lie | declared charsets that lie (GBK sent as utf-8/latin1, UTF-8 with meta gb2312 or windows-1252, undeclared) |
//! | `/mirror/N` | Mirror | article N's body in a different template (near-duplicate) |
//! | `/copy/N` | Copy | byte-identical to article N |
//! | `/edit/N` | Edit | article N with one or two body words changed |
//! | same-topic pairs | Article | two articles sharing title words, not duplicates ([`PageSpec::same_topic_as`]) |
//! | `/private/N` | Private | disallowed by robots.txt, linked from the index |
//! | `/r/N`, `/r/outside`, `/r/absolute`, `/loop/a` ↔ `/loop/b` | Redirect | 301 to an article, off-site and absolute redirects, a loop |
//! | `/error/404`, `/error/500`, `/error/503`, `/error/429` | Error | errors, with `Retry-After` for 503 and 429 |
//! | `/file.pdf` | NonHtml | `application/pdf` |
//! | `/sitemap.xml`, `/sitemap-articles.xml`, `/sitemap-zh.xml` | NonHtml | a sitemap index and two sitemaps (not linked) |
//! | `/about` | About | a small page |
//! | `/robots.txt` | Robots | configurable ([`SiteConfig::robots_txt`]) |
//! | `/hostile/drip`, `/slow-headers`, `/bomb`, `/huge`, `/endless` | Hostile | one byte per second; no answer; a gzip bomb (≥ 1 GB inflated); a 1 GB body; a chunked body that never ends. Always served, linked from `/` only with [`SiteConfig::link_hostile`] |
//!
//! Scope traps appear in index and article pages: links to the same server
//! under `localhost:PORT`, absolute links to `127.0.0.1:PORT`, links to
//! `http://outside.invalid/...`, `mailto:`, `javascript:`, `../` relative
//! links, fragments and query strings.
//!
//! # Modules
//!
//! - `site`: [`SiteConfig`], [`Site::generate`], [`PageSpec`].
//! - `server`: [`serve`], [`ServerHandle`] and its request log ([`RequestRecord`]).
//! - `reach`: [`Site::reachable`] (what a polite, host-scoped crawler fetches) and [`RobotsRules`].
//! - `text`, `vocabulary`, `prng`: the deterministic text generator.
//! - `html`: the page templates; `bodies`: streamed and hostile bodies.
//!
//! Links that name the server's own port are generated with
//! [`PORT_PLACEHOLDER`]; [`serve`] replaces it, so use
//! [`ServerHandle::site`] to see the links exactly as served.

mod bodies;
pub mod html;
pub mod prng;
mod reach;
mod server;
mod site;
pub mod text;
pub mod vocabulary;

pub use bodies::crc32_of_zeros;
pub use reach::RobotsRules;
pub use server::{accept_until, serve, RequestRecord, ServerHandle, MAX_LOGGED_REQUESTS};
pub use site::{
    robots_txt_with_crawl_delay, HostileKind, HostileSettings, PageKind, PageSpec, Site,
    SiteConfig, DEFAULT_ROBOTS_TXT, HOSTILE_PATHS, LOOPBACK_HOST, PORT_PLACEHOLDER,
};
