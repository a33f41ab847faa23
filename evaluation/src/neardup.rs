//! The near-duplicate evaluation: HTML pages from several independent
//! sources, decided through the real stages, scored per kind, script and
//! length.
//!
//! ## The pages
//!
//! Every base article ([`crate::sources`]: AEB, CWCED, chunks of the
//! charset corpus's texts in some 30 encodings, the test site's English and
//! Chinese articles) has its **home page** (the page as the set has it, or
//! the text rendered in one of four site templates in its own encoding),
//! and variants that should be found as its near-duplicates:
//! - [`Kind::Mirror`]: the same text under another site's template (for
//!   AEB and CWCED, the ground-truth text against the real page, whose
//!   extraction may take in some boilerplate);
//! - [`Kind::Copy`]: the test site's byte-identical copies;
//! - [`Kind::LightEdit`]: 3% of the words replaced, one paragraph dropped,
//!   a related-links box added inside the article, another template;
//! - [`Kind::HeavyEdit`]: 10% of the words replaced, a paragraph dropped,
//!   the box added, another template.
//!
//! Pages that must never be anybody's near-duplicate:
//! - every home page: distinct articles, many sharing a template's
//!   boilerplate (the corpus texts of one language share templates, the
//!   test site's articles share one), short texts in every script;
//! - [`Kind::Listing`]: headline lists and the test site's index pages;
//! - [`Kind::NearEmpty`]: `{}`, an empty body, "Loading…", a JavaScript
//!   notice, a 404 text, a navigation line only.
//!
//! Edits of bases under [`MIN_EDITED_TOKENS`] tokens are not made: such a
//! text is too short to judge, and its edit is a different short text.
//!
//! ## The held-aside part
//!
//! A base (with all its pages), a listing or a near-empty page is held
//! aside when the hash of its id falls in the last third: about one page in
//! three, from every source. The report gives the tuned and the held-aside
//! figures side by side; tuning looks at the tuned column only.
//!
//! ## The run
//!
//! [`run()`] feeds every page, home pages first, then the rest in a seeded
//! order, through the fetcher's charset vote, the extractor stage and the
//! contentseen stage over the store given (memory, as `crawler run`, or
//! Redis, as the workers), and reads back what was stored.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::OnceLock;

use encoding_rs::Encoding;
use rand::seq::SliceRandom;
use rand::RngExt;
use script::Script;

use crate::rng::{pick, rng, EvalRng};
use crate::sources::{self, Base, Served, Source};

mod report;
mod run;

pub use report::{bucket, outcome, report, totals, Tally};
pub use run::{run, Decided};

/// Bases shorter than this (in SimHash tokens) get a mirror but no edits.
pub const MIN_EDITED_TOKENS: usize = 60;

/// Why a page is in the set, and what its verdict should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A base's home page: an original.
    Original,
    Mirror,
    Copy,
    LightEdit,
    HeavyEdit,
    Listing,
    NearEmpty,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Original,
        Kind::Mirror,
        Kind::Copy,
        Kind::LightEdit,
        Kind::HeavyEdit,
        Kind::Listing,
        Kind::NearEmpty,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Original => "distinct (home pages)",
            Kind::Mirror => "template mirror",
            Kind::Copy => "exact copy",
            Kind::LightEdit => "light edit",
            Kind::HeavyEdit => "heavier edit",
            Kind::Listing => "listing/navigation",
            Kind::NearEmpty => "near-empty",
        }
    }

    /// Whether a page of this kind should be found as a near-duplicate.
    pub fn expects_duplicate(self) -> bool {
        matches!(
            self,
            Kind::Mirror | Kind::Copy | Kind::LightEdit | Kind::HeavyEdit
        )
    }
}

/// One page of the set.
#[derive(Debug, Clone)]
pub struct EvalPage {
    /// `source id/kind`, for the confusion lists.
    pub name: String,
    pub served: Served,
    pub kind: Kind,
    /// The base it shows (pages of one base are each other's
    /// near-duplicates); `None` for listing and near-empty pages.
    pub cluster: Option<usize>,
    pub source: Source,
    /// The script of the base's text.
    pub script: Option<Script>,
    /// The base's length in SimHash tokens.
    pub tokens: usize,
    pub held_aside: bool,
}

impl EvalPage {
    /// A generated page of no base (a listing, a near-empty page): named
    /// and held aside by `id`.
    fn of_no_base(id: String, kind: Kind, script: Option<Script>, served: Served) -> EvalPage {
        EvalPage {
            held_aside: held_aside(&id),
            name: id,
            served,
            kind,
            cluster: None,
            source: Source::Corpus,
            script,
            tokens: 0,
        }
    }
}

/// The pages, home pages first.
#[derive(Debug, Clone)]
pub struct EvalSet {
    pub pages: Vec<EvalPage>,
    /// How many pages at the front are home pages.
    pub homes: usize,
    pub seed: u64,
}

/// What the set is built from.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    /// Texts cut from each corpus file, at most.
    pub corpus_per_file: usize,
    /// English articles of the test site (plus a tenth as many Chinese).
    pub site_articles: usize,
    /// Keep every n-th base only (1: all), for quick tests.
    pub every: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 2026,
            corpus_per_file: 4,
            site_articles: 60,
            every: 1,
        }
    }
}

pub use crate::split::held_aside;

/// Token counts the corpus texts are cut to, in turn: very short, short,
/// medium and long texts from every file.
const CUT_TOKENS: [usize; 5] = [30, 70, 130, 260, 520];

/// The words of a site template in one language, as [`BOILERS_FILE`] lists
/// them.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Boiler {
    /// Its code, by which [`boiler_for`] chooses it.
    language: String,
    nav: [String; 8],
    most_read: String,
    related: String,
    copyright: String,
    notice: String,
    share: String,
    comments: String,
    loading: String,
}

/// The file of the templates' words, one [`Boiler`] a language.
const BOILERS_FILE: &str = "evaluation/src/neardup/boilers.json";

/// The [`Boiler`]s of `json` ([`BOILERS_FILE`]'s text); an error names the
/// file, the line and the column.
fn parse_boilers(json: &str) -> Result<Vec<Boiler>, String> {
    serde_json::from_str(json).map_err(|e| format!("{BOILERS_FILE}: {e}"))
}

/// The template words of `language` (`en`, `zh`, `ja`, `ru`, `ko`, `ar`).
fn boiler(language: &str) -> &'static Boiler {
    static BOILERS: OnceLock<Vec<Boiler>> = OnceLock::new();
    BOILERS
        .get_or_init(|| {
            parse_boilers(include_str!("neardup/boilers.json")).unwrap_or_else(|e| panic!("{e}"))
        })
        .iter()
        .find(|b| b.language == language)
        .unwrap_or_else(|| panic!("{BOILERS_FILE}: no language {language}"))
}

fn boiler_for(script: Option<Script>) -> &'static Boiler {
    boiler(match script {
        Some(Script::Han) => "zh",
        Some(Script::Kana) => "ja",
        Some(Script::Cyrillic) => "ru",
        Some(Script::Hangul) => "ko",
        Some(Script::Arabic) => "ar",
        _ => "en",
    })
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The links of a list, as `<li><a>` items.
fn items(site: &str, texts: &[String]) -> String {
    let mut out = String::new();
    for (i, t) in texts.iter().enumerate() {
        let _ = write!(
            out,
            "<li><a href=\"http://{site}/story/{i}\">{}</a></li>",
            esc(t)
        );
    }
    out
}

/// An article page in template `template` (0–3) of site `site`.
fn render(
    template: usize,
    boiler: &Boiler,
    site: &str,
    title: &str,
    paragraphs: &[String],
    related: Option<&[String]>,
    sidebar: &[String],
) -> String {
    let nav: Vec<String> = boiler.nav.iter().map(|s| s.to_string()).collect();
    let nav = items(site, &nav);
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<p>{}</p>\n", esc(p)))
        .collect();
    let related = related
        .map(|r| {
            format!(
                "<div class=\"related-links\"><h3>{}</h3><ul>{}</ul></div>",
                boiler.related,
                items(site, r)
            )
        })
        .unwrap_or_default();
    let side = items(site, sidebar);
    let title = esc(title);
    let head = format!(
        "<!DOCTYPE html><html><head><meta charset=\"{{CHARSET}}\"><title>{title} | {site}</title></head><body>"
    );
    let page = match template % 4 {
        0 => format!(
            "{head}<header><nav><ul>{nav}</ul></nav></header><main><article class=\"post\"><h1>{title}</h1><div class=\"post-content\">{body}{related}</div></article><aside class=\"sidebar\"><h3>{}</h3><ul>{side}</ul></aside></main><footer><p>{}</p></footer></body></html>",
            boiler.most_read, boiler.copyright
        ),
        1 => format!(
            "{head}<div id=\"page\"><div id=\"masthead\"><ul class=\"menu\">{nav}</ul></div><div id=\"content\"><div class=\"entry\"><h2 class=\"entry-title\">{title}</h2><div class=\"entry-body\">{body}</div>{related}<div class=\"share\">{}</div></div><div class=\"widget\"><h4>{}</h4><ul>{side}</ul></div></div><div class=\"site-footer\"><p>{}</p><p>{}</p></div></div></body></html>",
            boiler.share, boiler.most_read, boiler.notice, boiler.copyright
        ),
        2 => format!(
            "{head}<div class=\"container\"><div class=\"topbar\"><ul>{nav}</ul></div><div class=\"row\"><div class=\"col-main\"><h1 class=\"headline\">{title}</h1><div class=\"share\">{}</div><div class=\"article-content\">{body}{related}</div><div class=\"comments\"><h4>{}</h4><p>{}</p></div></div><div class=\"col-side\"><h3>{}</h3><ul>{side}</ul></div></div><div class=\"footer\"><ul>{nav}</ul><p>{}</p><p>{}</p></div></div></body></html>",
            boiler.share, boiler.comments, boiler.notice, boiler.most_read, boiler.notice, boiler.copyright
        ),
        _ => format!(
            "{head}<div id=\"main\"><h2>{title}</h2><div class=\"text\">{body}</div>{related}<p class=\"source\">{site}</p></div><div class=\"footer\">{}</div></body></html>",
            boiler.copyright
        ),
    };
    page
}

/// `html` (with its `{CHARSET}` placeholder) encoded in `encoding`, or in
/// UTF-8 where `encoding` cannot encode (UTF-16); with its header.
fn serve(url: String, html: &str, encoding: &'static Encoding) -> Served {
    let out = encoding.output_encoding();
    let html = html.replace("{CHARSET}", out.name());
    let (bytes, _, _) = out.encode(&html);
    Served {
        url,
        content_type: Some(format!("text/html; charset={}", out.name())),
        bytes: bytes.into_owned(),
    }
}

/// Words of a paragraph (whitespace-separated), or its characters when
/// its script has no spaces.
fn units(p: &str) -> Vec<String> {
    if script::dominant(p).is_some_and(Script::is_unspaced) {
        p.chars().map(|c| c.to_string()).collect()
    } else {
        p.split_whitespace().map(str::to_string).collect()
    }
}

fn join_units(p: &str, units: &[String]) -> String {
    if script::dominant(p).is_some_and(Script::is_unspaced) {
        units.concat()
    } else {
        units.join(" ")
    }
}

/// The paragraphs with a share of their words (or characters) replaced by
/// other words of the same text, and `drop` paragraphs (not the first)
/// left out when there are enough. The words replaced are drawn over the
/// whole text (a one-word paragraph is no likelier to change than any
/// other word), and only a minor paragraph is dropped (one holding at most
/// [`MAX_DROPPED_SHARE`] of the words): an edit that drops most of a text
/// makes another text, not a repost.
fn edit(rng: &mut EvalRng, paragraphs: &[String], share: f64, drop: usize) -> Vec<String> {
    let mut paras: Vec<Vec<String>> = paragraphs.iter().map(|p| units(p)).collect();
    let pool: Vec<String> = paras
        .iter()
        .flatten()
        .filter(|u| u.chars().any(char::is_alphanumeric))
        .cloned()
        .collect();
    // Every word's (paragraph, index): the draws are over the whole text.
    let words: Vec<(usize, usize)> = paras
        .iter()
        .enumerate()
        .flat_map(|(p, units)| (0..units.len()).map(move |i| (p, i)))
        .collect();
    let total = words.len();
    let changes = ((total as f64 * share).round() as usize).max(1);
    if !pool.is_empty() && total > 0 {
        for _ in 0..changes {
            let (p, i) = *pick(rng, &words);
            paras[p][i] = pick(rng, &pool).clone();
        }
    }
    let mut kept: Vec<(usize, String)> = paras
        .iter()
        .zip(paragraphs)
        .map(|(u, p)| (u.len(), join_units(p, u)))
        .collect();
    for _ in 0..drop {
        let minor: Vec<usize> = (1..kept.len())
            .filter(|&i| kept[i].0 as f64 <= total as f64 * MAX_DROPPED_SHARE)
            .collect();
        if kept.len() >= 4 && !minor.is_empty() {
            kept.remove(*pick(rng, &minor));
        }
    }
    kept.into_iter().map(|(_, p)| p).collect()
}

/// The largest share of a text's words one dropped paragraph may hold.
pub const MAX_DROPPED_SHARE: f64 = 0.25;

/// Cuts a corpus text into texts of the [`CUT_TOKENS`] sizes, in turn.
fn cut(lines: &[String], per_file: usize, first: usize) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut tokens = 0;
    let mut turn = first;
    for line in lines {
        // Lines without a letter (numbers, dates alone) are not prose.
        if !line.chars().any(char::is_alphabetic) {
            continue;
        }
        tokens += set_tokens(line).len().max(1);
        current.push(line.clone());
        if tokens >= CUT_TOKENS[turn % CUT_TOKENS.len()] {
            out.push(std::mem::take(&mut current));
            tokens = 0;
            turn += 1;
            if out.len() == per_file {
                break;
            }
        }
    }
    out
}

/// The tokens the set is built on (how texts are cut, their length,
/// which bases count as distinct): contentseen's as they were when the
/// split was fixed, so that the set does not move with the tokenizer under
/// test. Every letter of an unspaced alphabet (Thai, Lao, Khmer, Myanmar)
/// is a token of its own, where contentseen now pairs them: spaced out
/// after NFKC, each is a one-letter run, whose token is the letter's.
fn set_tokens(text: &str) -> Vec<u64> {
    use unicode_normalization::UnicodeNormalization;
    let alphabet = |c: char| script::of(c) == Some(Script::SoutheastAsian);
    let spaced: String;
    let text = if text.chars().any(alphabet) {
        spaced = text
            .nfkc()
            .flat_map(|c| [Some(c), alphabet(c).then_some(' ')])
            .flatten()
            .collect();
        &spaced
    } else {
        text
    };
    contentseen::simhash::tokens(text)
}

/// The 4-token shingles of a text (for keeping distinct bases distinct).
fn shingles(text: &str) -> std::collections::HashSet<u64> {
    let tokens = set_tokens(text);
    tokens
        .windows(4.min(tokens.len().max(1)))
        .map(|w| {
            xxhash_rust::xxh3::xxh3_64(&w.iter().flat_map(|t| t.to_le_bytes()).collect::<Vec<u8>>())
        })
        .collect()
}

fn jaccard(a: &std::collections::HashSet<u64>, b: &std::collections::HashSet<u64>) -> f64 {
    let inter = a.intersection(b).count();
    crate::fraction(inter, a.len() + b.len() - inter)
}

/// Every base of every source, distinct from each other (a text sharing
/// more than a fifth of its shingles with an earlier base is dropped: the
/// corpus holds some feeds in two encodings).
pub fn bases(config: &Config) -> Result<(Vec<Base>, testsite::Site), String> {
    let mut all = sources::aeb()?;
    all.extend(sources::cwced()?);
    for (f, text) in sources::corpus()?.into_iter().enumerate() {
        for (j, lines) in cut(&text.lines, config.corpus_per_file, f)
            .into_iter()
            .enumerate()
        {
            all.push(Base {
                source: Source::Corpus,
                id: format!("{}#{j}", text.id),
                title: lines[0].chars().take(60).collect(),
                paragraphs: lines,
                home: None,
                encoding: text.encoding,
            });
        }
    }
    let site = sources::testsite(&testsite::SiteConfig {
        articles: config.site_articles,
        zh_articles: config.site_articles / 10,
        mirrors: config.site_articles / 6,
        copies: config.site_articles / 12,
        edits: config.site_articles / 6,
        ..testsite::SiteConfig::default()
    });
    for spec in site.pages() {
        if !matches!(
            spec.kind,
            testsite::PageKind::Article | testsite::PageKind::ZhArticle
        ) {
            continue;
        }
        let (Some(body), Some(bytes)) = (&spec.body_text, site.response_bytes(&spec.path)) else {
            continue;
        };
        let paragraphs: Vec<String> = body.lines().map(str::to_string).collect();
        all.push(Base {
            source: Source::Testsite,
            id: spec.path.clone(),
            title: spec.title.clone().unwrap_or_default(),
            paragraphs,
            home: Some(Served {
                url: format!("http://testsite.eval.invalid{}", spec.path),
                bytes: bytes.to_vec(),
                content_type: Some(spec.content_type.clone()),
            }),
            encoding: if spec.kind == testsite::PageKind::ZhArticle {
                encoding_rs::GBK
            } else {
                encoding_rs::UTF_8
            },
        });
    }
    let mut kept: Vec<Base> = Vec::new();
    let mut kept_shingles: Vec<std::collections::HashSet<u64>> = Vec::new();
    for (i, base) in all.into_iter().enumerate() {
        if i % config.every.max(1) != 0 || base.paragraphs.is_empty() {
            continue;
        }
        let sh = shingles(&base.paragraphs.join("\n"));
        if sh.is_empty() || kept_shingles.iter().any(|k| jaccard(k, &sh) > 0.2) {
            continue;
        }
        kept_shingles.push(sh);
        kept.push(base);
    }
    Ok((kept, site))
}

fn site_name(source: Source, template: usize) -> String {
    let s = match source {
        Source::Aeb => "aeb",
        Source::Cwced => "cwced",
        Source::Corpus => "corpus",
        Source::Testsite => "testsite",
    };
    format!("{s}-t{template}.eval.invalid")
}

/// Builds the set from every source (see the module doc).
pub fn build(config: &Config) -> Result<EvalSet, String> {
    let (bases, site) = bases(config)?;
    let seed = config.seed;
    let mut homes = Vec::new();
    let mut rest = Vec::new();
    // Headlines for the related-links boxes and sidebars, by script.
    let mut titles: BTreeMap<Option<Script>, Vec<String>> = BTreeMap::new();
    let scripts: Vec<Option<Script>> = bases
        .iter()
        .map(|b| script::dominant(&b.paragraphs.join(" ")))
        .collect();
    for (b, s) in bases.iter().zip(&scripts) {
        titles.entry(*s).or_default().push(b.title.clone());
    }
    let headlines = |s: &Option<Script>, rng: &mut EvalRng, n: usize| -> Vec<String> {
        let pool = titles
            .get(s)
            .filter(|p| p.len() >= n)
            .or(titles.get(&Some(Script::Latin)));
        match pool {
            Some(p) => (0..n).map(|_| pick(rng, p).clone()).collect(),
            None => Vec::new(),
        }
    };
    for (c, base) in bases.iter().enumerate() {
        let mut r = rng(seed, xxhash_rust::xxh3::xxh3_64(base.id.as_bytes()));
        let text = base.paragraphs.join("\n");
        let tokens = set_tokens(&text).len();
        let script = scripts[c];
        let boiler = boiler_for(script);
        let held = held_aside(&format!("{}:{}", base.source.name(), base.id));
        let page = |kind: Kind, served: Served| EvalPage {
            name: format!("{} {}/{}", base.source.name(), base.id, kind.name()),
            served,
            kind,
            cluster: Some(c),
            source: base.source,
            script,
            tokens,
            held_aside: held,
        };
        let slug = format!("{c}");
        // The corpus texts' home pages: one of four templates, the same
        // for many texts of one script (shared boilerplate).
        let home_template = c % 4;
        let home = match &base.home {
            Some(h) => h.clone(),
            None => {
                let site = site_name(base.source, home_template);
                let side = headlines(&script, &mut r, 5);
                let html = render(
                    home_template,
                    boiler,
                    &site,
                    &base.title,
                    &base.paragraphs,
                    None,
                    &side,
                );
                serve(format!("http://{site}/a/{slug}"), &html, base.encoding)
            }
        };
        homes.push(page(Kind::Original, home));
        let variant = |kind: Kind, paragraphs: &[String], related: bool, r: &mut EvalRng| {
            let template = (home_template + 1 + r.random_range(0..3)) % 4;
            let site = site_name(base.source, template);
            let side = headlines(&script, r, 5);
            let box_ = related.then(|| headlines(&script, r, 4));
            let html = render(
                template,
                boiler,
                &site,
                &base.title,
                paragraphs,
                box_.as_deref(),
                &side,
            );
            let path = match kind {
                Kind::Mirror => "m",
                Kind::LightEdit => "e",
                _ => "h",
            };
            page(
                kind,
                serve(format!("http://{site}/{path}/{slug}"), &html, base.encoding),
            )
        };
        rest.push(variant(Kind::Mirror, &base.paragraphs, false, &mut r));
        if tokens >= MIN_EDITED_TOKENS {
            let light = edit(&mut r, &base.paragraphs, 0.03, 1);
            rest.push(variant(Kind::LightEdit, &light, true, &mut r));
            let heavy = edit(&mut r, &base.paragraphs, 0.10, 1);
            rest.push(variant(Kind::HeavyEdit, &heavy, true, &mut r));
        }
    }
    // The test site's own mirrors, copies and edits, and its index pages.
    let cluster_of: HashMap<&str, usize> = bases
        .iter()
        .enumerate()
        .filter(|(_, b)| b.source == Source::Testsite)
        .map(|(i, b)| (b.id.as_str(), i))
        .collect();
    for spec in site.pages() {
        let kind = match spec.kind {
            testsite::PageKind::Mirror => Kind::Mirror,
            testsite::PageKind::Copy => Kind::Copy,
            testsite::PageKind::Edit => Kind::LightEdit,
            testsite::PageKind::Index => Kind::Listing,
            _ => continue,
        };
        let Some(bytes) = site.response_bytes(&spec.path) else {
            continue;
        };
        let cluster = match &spec.duplicate_of {
            Some(of) => match cluster_of.get(of.as_str()) {
                Some(&c) => Some(c),
                None => continue,
            },
            None => None,
        };
        let (script, tokens, held) = match cluster {
            Some(c) => (homes[c].script, homes[c].tokens, homes[c].held_aside),
            None => (
                Some(Script::Latin),
                0,
                held_aside(&format!("site:{}", spec.path)),
            ),
        };
        rest.push(EvalPage {
            name: format!("test site {}/{}", spec.path, kind.name()),
            served: Served {
                url: format!("http://testsite.eval.invalid{}", spec.path),
                bytes: bytes.to_vec(),
                content_type: Some(spec.content_type.clone()),
            },
            kind,
            cluster,
            source: Source::Testsite,
            script,
            tokens,
            held_aside: held,
        });
    }
    // Listing pages: headline lists with dates, in every template, per script.
    let mut r = rng(seed, 1);
    for (s, pool) in &titles {
        if pool.len() < 12 {
            continue;
        }
        for l in 0..4 {
            let template = l % 4;
            let site = format!(
                "list{l}-{}.eval.invalid",
                s.map_or("none", Script::name).replace('/', "")
            );
            let lines: Vec<String> = (0..15)
                .map(|i| {
                    format!(
                        "{} · 2024-0{}-{:02} 10:{:02}",
                        pick(&mut r, pool),
                        1 + l,
                        1 + i,
                        3 * i
                    )
                })
                .collect();
            let boiler = boiler_for(*s);
            let nav: Vec<String> = boiler.nav.iter().map(|x| x.to_string()).collect();
            let body = format!(
                "<ul class=\"headlines\">{}</ul><div class=\"pager\">{}</div>",
                items(&site, &lines),
                items(&site, &nav)
            );
            let html = render(
                template,
                boiler,
                &site,
                &boiler.nav[1],
                &[],
                None,
                &lines[..5],
            )
            .replacen("</h1>", &format!("</h1>{body}"), 1)
            .replacen("</h2>", &format!("</h2>{body}"), 1);
            rest.push(EvalPage::of_no_base(
                format!("listing {} {l}", s.map_or("none", Script::name)),
                Kind::Listing,
                *s,
                serve(format!("http://{site}/"), &html, encoding_rs::UTF_8),
            ));
        }
    }
    // Near-empty pages, in every template and in several languages.
    let empties: [&dyn Fn(&Boiler) -> String; 7] = [
        &|_| String::new(),
        &|_| "{}".into(),
        &|b| b.loading.clone(),
        &|_| "Please enable JavaScript to view this page.".into(),
        &|_| "404 Not Found".into(),
        &|b| b.nav.join(" | "),
        &|_| "[]".into(),
    ];
    for (e, make) in empties.iter().enumerate() {
        for (bi, boiler) in ["en", "zh", "ja", "ru"].map(boiler).into_iter().enumerate() {
            let template = (e + bi) % 4;
            let site = format!("empty{e}-{bi}.eval.invalid");
            let body = make(boiler);
            let paragraphs: Vec<String> = if body.is_empty() {
                Vec::new()
            } else {
                vec![body]
            };
            let html = render(template, boiler, &site, "", &paragraphs, None, &[]);
            rest.push(EvalPage::of_no_base(
                format!("near-empty {e}/{bi}"),
                Kind::NearEmpty,
                None,
                serve(format!("http://{site}/x"), &html, encoding_rs::UTF_8),
            ));
        }
    }
    let mut order = rng(seed, 2);
    rest.shuffle(&mut order);
    let n = homes.len();
    homes.extend(rest);
    Ok(EvalSet {
        pages: homes,
        homes: n,
        seed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_words_are_read_from_their_file() {
        let english = boiler_for(None);
        assert_eq!(english.nav[0], "Home");
        assert_eq!(english.loading, "Loading…");
        assert_eq!(boiler_for(Some(Script::Han)).most_read, "热门文章");
        assert_eq!(boiler_for(Some(Script::Arabic)).comments, "التعليقات");
        for language in ["en", "zh", "ja", "ru", "ko", "ar"] {
            let b = boiler(language);
            let words = [
                &b.most_read,
                &b.related,
                &b.copyright,
                &b.notice,
                &b.share,
                &b.comments,
                &b.loading,
            ];
            assert!(
                b.nav.iter().chain(words).all(|w| !w.is_empty()),
                "{language}"
            );
        }
        let error = parse_boilers("[\n  {\"language\": \"en\"}\n]")
            .expect_err("a boiler without its words");
        assert!(
            error.starts_with(BOILERS_FILE) && error.contains("line 2"),
            "{error}"
        );
    }

    #[test]
    fn the_set_counts_a_thai_letter_a_token_as_when_the_split_was_fixed() {
        let hash = |c: char| xxhash_rust::xxh3::xxh3_64(c.to_string().as_bytes());
        let letters: Vec<u64> = "สวัสดี".chars().map(hash).collect();
        assert_eq!(set_tokens("สวัสดี"), letters);
        // NFKC first: SARA AM is two letters, each its own token.
        assert_eq!(
            set_tokens("ทำ"),
            vec![hash('ท'), hash('\u{e4d}'), hash('\u{e32}')]
        );
        // Other scripts as contentseen tokenizes them.
        let other = "Le café, 2024 : 中文新闻 https://x.y/z";
        assert_eq!(set_tokens(other), contentseen::simhash::tokens(other));
        assert_eq!(set_tokens("ภาษา and English").len(), 4 + 2);
    }
}
