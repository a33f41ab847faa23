//! The verdicts of one crawl of the sites against the labels: precision of
//! the verdicts, recall of the pairs that must be found, listing pages,
//! per site and per kind, tuned beside held aside.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use pipeline::StoredDocument;

use super::labels::{jaccard, Label};
use super::sites::{host_of, Page, Site};
use super::{DISTINCT_BELOW, FOUND_AT, LONG_WORDS};

/// A page on one of its two hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Node {
    pub page: usize,
    pub mirror: bool,
}

/// What a verdict joins, or a pair that must be found is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A page and its mirror copy.
    Mirror,
    /// Two pages (other paths) whose texts are near-duplicates.
    NearDuplicate,
    /// Two pages of one site, not near-duplicates.
    Sibling,
    /// Two long pages of one site, not near-duplicates.
    LongSameSubject,
    /// Two pages of different sites, not near-duplicates.
    OtherSite,
    /// A verdict on a listing page.
    Listing,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Mirror,
        Kind::NearDuplicate,
        Kind::Sibling,
        Kind::LongSameSubject,
        Kind::OtherSite,
        Kind::Listing,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Mirror => "mirror",
            Kind::NearDuplicate => "near-duplicate (other path)",
            Kind::Sibling => "sibling pages (one site)",
            Kind::LongSameSubject => "long same-subject pages",
            Kind::OtherSite => "pages of other sites",
            Kind::Listing => "listing/navigation pages",
        }
    }
}

/// Counts of one cell (a site or a kind, tuned or held aside).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    /// Verdicts between pages at ≥ [`FOUND_AT`] (right), under
    /// [`DISTINCT_BELOW`] (wrong), and in between (not scored).
    pub right: usize,
    pub wrong: usize,
    pub unscored: usize,
    /// Wrong verdicts under 0.3, and at SimHash distance 0 under 0.8.
    pub wrong_below_03: usize,
    pub distance0_below_08: usize,
    /// Pairs that must be found, and those found (in one cluster).
    pub pairs: usize,
    pub found: usize,
    /// Listing pages (per host), those `article: false`, those matched.
    pub listing: usize,
    pub listing_no_article: usize,
    pub listing_matched: usize,
    /// Pages labelled articles that came out `article: false`.
    pub article_lost: usize,
    /// Pages (per host) and those stored.
    pub pages: usize,
    pub reached: usize,
}

impl Tally {
    pub fn precision(&self) -> f64 {
        crate::fraction(self.right, self.right + self.wrong)
    }
    pub fn recall(&self) -> f64 {
        crate::fraction(self.found, self.pairs)
    }
    add_counters!(
        right,
        wrong,
        unscored,
        wrong_below_03,
        distance0_below_08,
        pairs,
        found,
        listing,
        listing_no_article,
        listing_matched,
        article_lost,
        pages,
        reached,
    );
}

/// One verdict, for the lists of wrong ones.
#[derive(Debug, Clone)]
pub struct Confusion {
    pub duplicate: String,
    pub original: String,
    pub kind: Kind,
    /// The exact Jaccard of the labels.
    pub exact: f64,
    pub distance: Option<u32>,
    pub radius: Option<u32>,
    /// The crawler's own estimate.
    pub estimate: Option<f32>,
    pub tokens: u32,
}

/// The scores of one crawl.
#[derive(Debug, Default)]
pub struct Scores {
    /// [tuned, held aside] per site name.
    pub by_site: BTreeMap<String, [Tally; 2]>,
    pub by_kind: BTreeMap<Kind, [Tally; 2]>,
    pub total: [Tally; 2],
    /// Wrong and unscored verdicts of the tuned part only (the held-aside
    /// part is not looked at while tuning).
    pub tuned_confusions: Vec<Confusion>,
    /// The tuned part's misses, one line each: a page labelled an article
    /// that came out `article: false` (with the start of its extracted
    /// text), or a pair to find that was not (not looked at for the
    /// held-aside part).
    pub tuned_misses: Vec<String>,
    /// Stored documents that are none of the pages (redirects, odd URLs).
    pub strangers: usize,
    /// Exact-Jaccard estimates of right and wrong verdicts, for the
    /// distributions (tuned part only): (exact, estimate, distance).
    pub tuned_estimates: Vec<(f64, f32, u32)>,
}

/// Scores the stored documents `docs` of a crawl of `pages` (labels
/// aligned with them); `near` holds every pair of pages at ≥ [`FOUND_AT`].
pub fn score(
    sites: &[Site],
    pages: &[Page],
    labels: &[Label],
    near: &[(usize, usize, f64)],
    docs: &[StoredDocument],
) -> Scores {
    let index: HashMap<(usize, &str), usize> = pages
        .iter()
        .enumerate()
        .map(|(i, p)| ((p.site, p.path.as_str()), i))
        .collect();
    let node_of = |u: &str| -> Option<Node> {
        let url = url::Url::parse(u).ok()?;
        let host: std::net::Ipv4Addr = url.host_str()?.parse().ok()?;
        let (site, mirror) = host_of(host)?;
        let page = *index.get(&(site, url.path()))?;
        Some(Node { page, mirror })
    };
    let mut out = Scores::default();
    let mut doc_of: HashMap<Node, &StoredDocument> = HashMap::new();
    for d in docs {
        match node_of(&d.url) {
            Some(n) => {
                doc_of.insert(n, d);
            }
            None => out.strangers += 1,
        }
    }
    // Clusters: every node's root through `duplicate_of`.
    let root = |n: Node| -> Option<Node> {
        let mut at = n;
        for _ in 0..64 {
            let d = doc_of.get(&at)?;
            match d.duplicate_of.as_deref().and_then(&node_of) {
                Some(next) => at = next,
                None => return Some(at),
            }
        }
        Some(at)
    };
    let mut matched: std::collections::HashSet<Node> = std::collections::HashSet::new();
    for (&n, d) in &doc_of {
        if let Some(o) = d.duplicate_of.as_deref().and_then(&node_of) {
            matched.insert(n);
            matched.insert(o);
        }
    }
    let col = |held: bool| usize::from(held);
    let site_cell = |out: &mut Scores, site: usize, held: bool, f: &dyn Fn(&mut Tally)| {
        let cell = out.by_site.entry(sites[site].name.clone()).or_default();
        f(&mut cell[col(held)]);
    };

    // Pages: reach, listings.
    for (i, p) in pages.iter().enumerate() {
        for mirror in [false, true] {
            let n = Node { page: i, mirror };
            let d = doc_of.get(&n);
            let listing = labels[i].is_listing();
            let f = |t: &mut Tally| {
                t.pages += 1;
                t.reached += usize::from(d.is_some());
                if listing {
                    t.listing += 1;
                    t.listing_no_article += usize::from(d.is_some_and(|d| !d.article));
                    t.listing_matched += usize::from(matched.contains(&n));
                } else {
                    t.article_lost += usize::from(d.is_some_and(|d| !d.article));
                }
            };
            if !p.held_aside && listing && (matched.contains(&n) || d.is_some_and(|d| d.article)) {
                out.tuned_misses.push(format!(
                    "listing\t{}\t{}{}\tlabel words {} link share {:.2}\tarticle {:?} matched {} duplicate_of {:?} distance {:?}",
                    sites[p.site].name,
                    p.path,
                    if mirror { " (mirror)" } else { "" },
                    labels[i].words,
                    labels[i].link_share,
                    d.map(|d| d.article),
                    matched.contains(&n),
                    d.and_then(|d| d.duplicate_of.as_deref()),
                    d.and_then(|d| d.distance)
                ));
            }
            if !p.held_aside && !mirror && !listing {
                if let Some(d) = d.filter(|d| !d.article) {
                    let start: String = d.text.chars().take(160).collect();
                    out.tuned_misses.push(format!(
                        "no article\t{}\t{}\tlabel words {}\tours: {} chars: {}",
                        sites[p.site].name,
                        p.path,
                        labels[i].words,
                        d.text.chars().count(),
                        start.replace(['\n', '\t'], " ")
                    ));
                }
            }
            site_cell(&mut out, p.site, p.held_aside, &f);
            if listing {
                f(&mut out.by_kind.entry(Kind::Listing).or_default()[col(p.held_aside)]);
            }
        }
    }

    // Pairs that must be found.
    let mut must: Vec<(Node, Node, Kind)> = Vec::new();
    for (i, l) in labels.iter().enumerate() {
        if !l.is_listing() {
            must.push((
                Node {
                    page: i,
                    mirror: false,
                },
                Node {
                    page: i,
                    mirror: true,
                },
                Kind::Mirror,
            ));
        }
    }
    for &(i, j, _) in near {
        if labels[i].is_listing() || labels[j].is_listing() {
            continue;
        }
        for mirror in [false, true] {
            must.push((
                Node { page: i, mirror },
                Node { page: j, mirror },
                Kind::NearDuplicate,
            ));
        }
    }
    for (a, b, kind) in must {
        let held = pages[a.page].held_aside || pages[b.page].held_aside;
        let found = matches!((root(a), root(b)), (Some(x), Some(y)) if x == y);
        if !held && !found && !a.mirror {
            let why = |n: Node| match doc_of.get(&n) {
                None => "not stored".to_string(),
                Some(d) if !d.article => "no article".to_string(),
                Some(d) => format!(
                    "tokens {} simhash {} duplicate_of {:?}",
                    d.tokens, d.simhash, d.duplicate_of
                ),
            };
            out.tuned_misses.push(format!(
                "pair not found\t{}\t{}\t{}\t{}\texact {:.3}\t{} | {}",
                sites[pages[a.page].site].name,
                kind.name(),
                pages[a.page].path,
                pages[b.page].path,
                if a.page == b.page {
                    1.0
                } else {
                    jaccard(&labels[a.page].shingles, &labels[b.page].shingles)
                },
                why(a),
                why(b)
            ));
        }
        let f = |t: &mut Tally| {
            t.pairs += 1;
            t.found += usize::from(found);
        };
        site_cell(&mut out, pages[a.page].site, held, &f);
        f(&mut out.by_kind.entry(kind).or_default()[col(held)]);
    }

    // Verdicts.
    let mut verdicts: Vec<(&Node, &&StoredDocument)> = doc_of.iter().collect();
    verdicts.sort_by_key(|(n, _)| **n);
    for (&n, d) in verdicts {
        let Some(o) = d.duplicate_of.as_deref().and_then(&node_of) else {
            continue;
        };
        let (la, lb) = (&labels[n.page], &labels[o.page]);
        let exact = if n.page == o.page {
            1.0
        } else {
            jaccard(&la.shingles, &lb.shingles)
        };
        let (pa, pb) = (&pages[n.page], &pages[o.page]);
        let kind = if n.page == o.page {
            Kind::Mirror
        } else if exact >= FOUND_AT {
            Kind::NearDuplicate
        } else if la.is_listing() || lb.is_listing() {
            Kind::Listing
        } else if pa.site != pb.site {
            Kind::OtherSite
        } else if la.words >= LONG_WORDS && lb.words >= LONG_WORDS {
            Kind::LongSameSubject
        } else {
            Kind::Sibling
        };
        let held = pa.held_aside || pb.held_aside;
        let f = |t: &mut Tally| {
            if exact >= FOUND_AT {
                t.right += 1;
            } else if exact < DISTINCT_BELOW {
                t.wrong += 1;
            } else {
                t.unscored += 1;
            }
            t.wrong_below_03 += usize::from(exact < 0.3);
            t.distance0_below_08 += usize::from(exact < FOUND_AT && d.distance == Some(0));
        };
        site_cell(&mut out, pa.site, held, &f);
        f(&mut out.by_kind.entry(kind).or_default()[col(held)]);
        if !held {
            if let Some(e) = d.jaccard {
                out.tuned_estimates
                    .push((exact, e, d.distance.unwrap_or(0)));
            }
            if exact < FOUND_AT {
                out.tuned_confusions.push(Confusion {
                    duplicate: d.url.clone(),
                    original: d.duplicate_of.clone().unwrap_or_default(),
                    kind,
                    exact,
                    distance: d.distance,
                    radius: d.radius,
                    estimate: d.jaccard,
                    tokens: d.tokens,
                });
            }
        }
    }
    for cells in out.by_site.values() {
        for (total, cell) in out.total.iter_mut().zip(cells) {
            total.add(cell);
        }
    }
    out
}

/// The two columns of a cell, as `tuned | held aside`.
fn cells(t: &[Tally; 2], f: impl Fn(&Tally) -> String) -> String {
    format!("{} \\| {}", f(&t[0]), f(&t[1]))
}

/// The report of one crawl: per site, per kind, the totals.
pub fn report(label: &str, s: &Scores) -> String {
    let mut out = String::new();
    let p = |t: &Tally| format!("{:.4} ({}/{})", t.precision(), t.right, t.right + t.wrong);
    let r = |t: &Tally| format!("{:.4} ({}/{})", t.recall(), t.found, t.pairs);
    let _ = writeln!(out, "\n## {label}: per site (tuned | held aside)\n");
    let _ = writeln!(
        out,
        "| site | pages reached | precision | recall | unscored | J<0.3 marked | d=0, J<0.8 | listing pages: article:false / matched | articles called no article |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|");
    let mut rows: Vec<(String, &[Tally; 2])> =
        s.by_site.iter().map(|(k, v)| (k.clone(), v)).collect();
    rows.push(("**all**".into(), &s.total));
    for (name, t) in rows {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} |",
            cells(t, |t| format!("{}/{}", t.reached, t.pages)),
            cells(t, p),
            cells(t, r),
            cells(t, |t| t.unscored.to_string()),
            cells(t, |t| t.wrong_below_03.to_string()),
            cells(t, |t| t.distance0_below_08.to_string()),
            cells(t, |t| format!(
                "{}: {}/{}",
                t.listing, t.listing_no_article, t.listing_matched
            )),
            cells(t, |t| t.article_lost.to_string()),
        );
    }
    let _ = writeln!(out, "\n## {label}: per kind (tuned | held aside)\n");
    let _ = writeln!(
        out,
        "| kind | verdicts right/(right+wrong) | recall of the pairs to find | unscored | J<0.3 marked | d=0, J<0.8 |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for k in Kind::ALL {
        let Some(t) = s.by_kind.get(&k) else { continue };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            k.name(),
            cells(t, p),
            cells(t, r),
            cells(t, |t| t.unscored.to_string()),
            cells(t, |t| t.wrong_below_03.to_string()),
            cells(t, |t| t.distance0_below_08.to_string()),
        );
    }
    let [tu, ho] = &s.total;
    let _ = writeln!(
        out,
        "\n{label} TOTAL tuned: precision {:.4} recall {:.4} | held aside: precision {:.4} recall {:.4}; J<0.3 marked {} | {}; distance 0 under J 0.8: {} | {}; listing pages matched {} | {}; stored documents outside the pages: {}",
        tu.precision(),
        tu.recall(),
        ho.precision(),
        ho.recall(),
        tu.wrong_below_03,
        ho.wrong_below_03,
        tu.distance0_below_08,
        ho.distance0_below_08,
        tu.listing_matched,
        ho.listing_matched,
        s.strangers
    );
    out
}
