//! `cargo bench -p evaluation --bench neardup_pairs`: the pairs the
//! near-duplicate rule (`contentseen::decide::near_duplicates`) judges,
//! measured offline on the **tuned** parts of both evaluations, to set its
//! thresholds from measured distributions instead of one crawl's order.
//!
//! Every tuned page of the real sites (`evaluation::neardup_sites`, with
//! its labels: `scripts/neardup-sites.sh` makes them) and of the neardup
//! set (`evaluation::neardup`) is extracted by our extractor and sketched
//! by contentseen; every pair that a lookup would reach (SimHash within
//! the pair's radius, or a shared MinHash LSH key, and within
//! `MAX_PAIR_DISTANCE`) is listed with what the rule sees (shingle and
//! word estimates, distance) beside the truth: the labels' exact word
//! 3-shingle Jaccard for the real sites, the kind of the page for the
//! neardup set. It prints, per class, the distribution of every feature
//! of the pairs the rule passes and fails, and a table of how many pairs
//! of each class other rules ([`RULES`]) would pass: thresholds on the
//! estimates, the exact values they stand for (no estimation noise), the
//! words weighted by their document frequency on the page's site (known
//! in advance: IDF) or on its host among the pages crawled before it (as a
//! stage could learn it: [`online_df`], simulated as a weighted MinHash of
//! the signature's 32 word buckets), and the two bodies' length ratio.
//! Held-aside pages are left out: nothing here is to be tuned on them.
//!
//! Env: `NEARDUP_SITES_LABELS` (default `target/neardup-sites/labels.jsonl`),
//! `NEARDUP_PAIRS_LIST=1` (every real-site pair under 0.5 that passes, and
//! every neardup-set pair to find that fails).

use std::collections::BTreeMap;

use contentseen::bands::Layout;
use contentseen::decide::{near_duplicates, MAX_PAIR_DISTANCE};
use contentseen::minhash::{jaccard, words_jaccard};
use contentseen::reach::{Probe, Reach};
use contentseen::simhash::{distance, sketch};
use evaluation::neardup::{self, Kind as SetKind};
use evaluation::neardup_sites::labels::{self, Label};
use evaluation::neardup_sites::sites::{pages, read_page, read_sites, table_path};

/// What a lookup of one page knows.
struct Sketched {
    name: String,
    group: usize,
    article: bool,
    tokens: usize,
    probe: Option<Probe>,
    /// Exact sets of the text (contentseen's tokens, numbers left out):
    /// all words, words of lines of 10 tokens or more, all 3-shingles,
    /// all 8-shingles.
    words: Vec<u64>,
    long_words: Vec<u64>,
    shingles: Vec<u64>,
    eight_shingles: Vec<u64>,
    /// The host it is served from (the unit of document frequencies).
    host: String,
    /// Its words weighted by their frequency on its host when it arrived
    /// ([`online_df`]), exact and as a simulated signature, per weighting
    /// of [`WEIGHTINGS`].
    common_out: Vec<Weighted>,
}

/// A page's words with their weights, and its simulated signature of them.
type Weighted = (Vec<(u64, f64)>, [u8; SIM_BUCKETS]);

/// The weightings of a word tried, from its document frequency `df`
/// among a host's `n` earlier pages: 1 for every word (the control);
/// `1 - df/n`; `ln(n/df) / ln 10` capped at 1 (a word on a tenth of the
/// pages or fewer weighs 1). Every weight is at least [`MIN_WEIGHT`];
/// a host of fewer than [`COMMON_MIN_PAGES`] pages weighs every word 1.
const WEIGHTINGS: [&str; 3] = ["control", "1-df/n", "ln(n/df)/ln10"];
const MIN_WEIGHT: f64 = 0.05;
/// Pages a host must have shown before its frequencies count.
const COMMON_MIN_PAGES: f64 = 20.0;
/// Word buckets of the simulated signature (as contentseen's).
const SIM_BUCKETS: usize = 32;

fn weight(k: usize, df: f64, n: f64) -> f64 {
    if n < COMMON_MIN_PAGES {
        return 1.0;
    }
    let w = match k {
        0 => 1.0,
        1 => 1.0 - df / n,
        _ => ((n / df.max(1.0)).ln() / 10f64.ln()).min(1.0),
    };
    w.max(MIN_WEIGHT)
}

/// A weighted one-permutation MinHash of words: per bucket the word with
/// the least `-ln(u) / weight` (an exponential race: two sets agree in a
/// bucket with about their weighted Jaccard similarity); the low 2 bits of
/// the winner's hash are kept.
fn weighted_signature(words: &[(u64, f64)]) -> [u8; SIM_BUCKETS] {
    let mut best = [(f64::INFINITY, 0u8); SIM_BUCKETS];
    for &(h, w) in words {
        let m = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let m = m ^ (m >> 29);
        let bucket = (((m >> 32) * SIM_BUCKETS as u64) >> 32) as usize;
        let u = ((m as u32) as f64 + 0.5) / 4_294_967_296.0;
        let race = -u.ln() / w;
        if race < best[bucket].0 {
            best[bucket] = (race, (m & 3) as u8);
        }
    }
    // Empty buckets borrow the next filled one.
    let mut out = [0u8; SIM_BUCKETS];
    for i in 0..SIM_BUCKETS {
        out[i] = (0..SIM_BUCKETS)
            .map(|s| best[(i + s) % SIM_BUCKETS])
            .find(|b| b.0.is_finite())
            .map_or(0, |b| b.1 ^ (i as u8 & 3));
    }
    out
}

fn weighted_estimate(a: &[u8; SIM_BUCKETS], b: &[u8; SIM_BUCKETS]) -> f64 {
    let equal = a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / SIM_BUCKETS as f64;
    ((equal - 0.25) / 0.75).clamp(0.0, 1.0)
}

/// Each page's words weighted by their frequency on its host among the
/// pages before it, in a seeded order (as a crawl would learn them).
fn online_df(items: &mut [Sketched]) {
    use rand::seq::SliceRandom;
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.shuffle(&mut evaluation::rng::rng(2026, 31));
    let mut hosts: std::collections::HashMap<String, (f64, std::collections::HashMap<u64, u32>)> =
        Default::default();
    for i in order {
        let (n, df) = hosts.entry(items[i].host.clone()).or_default();
        items[i].common_out = (0..WEIGHTINGS.len())
            .map(|k| {
                let weighted: Vec<(u64, f64)> = items[i]
                    .words
                    .iter()
                    .map(|&w| {
                        (
                            w,
                            weight(k, f64::from(df.get(&w).copied().unwrap_or(0)), *n),
                        )
                    })
                    .collect();
                let sig = weighted_signature(&weighted);
                (weighted, sig)
            })
            .collect();
        if items[i].article {
            *n += 1.0;
            for &w in &items[i].words {
                *df.entry(w).or_default() += 1;
            }
        }
    }
}

/// Σ min / Σ max of two sorted weighted sets.
fn weighted_jaccard(a: &[(u64, f64)], b: &[(u64, f64)]) -> f64 {
    let (mut i, mut j, mut lo, mut hi) = (0, 0, 0.0, 0.0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
            hi += a[i].1;
            i += 1;
        } else if i == a.len() || b[j].0 < a[i].0 {
            hi += b[j].1;
            j += 1;
        } else {
            lo += a[i].1.min(b[j].1);
            hi += a[i].1.max(b[j].1);
            i += 1;
            j += 1;
        }
    }
    if hi == 0.0 {
        1.0
    } else {
        lo / hi
    }
}

fn set(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v.dedup();
    v
}

fn shingles(t: &[u64]) -> Vec<u64> {
    t.windows(3)
        .map(|w| w[0].rotate_left(1) ^ w[1].rotate_left(17) ^ w[2].rotate_left(33))
        .collect()
}

/// Exact sets of a text (see [`Sketched`]).
fn exact_sets(text: &str) -> [Vec<u64>; 4] {
    let all = contentseen::simhash::tokens(text);
    let mut long = Vec::new();
    for line in text.split('\n') {
        let t = contentseen::simhash::tokens(line);
        if t.len() >= 10 {
            long.extend(t);
        }
    }
    let eight: Vec<u64> = all
        .windows(8)
        .map(|w| w.iter().fold(0u64, |h, &t| h.rotate_left(7) ^ t))
        .collect();
    [set(all.clone()), set(long), set(shingles(&all)), set(eight)]
}

/// One reachable pair and what the rule sees.
#[derive(Clone, Debug)]
struct Pair {
    a: usize,
    b: usize,
    d: u32,
    j: f64,
    w: f64,
    /// Exact: words, long lines' words, 3-shingles, 8-shingles;
    /// then the shingles and the words weighted by their inverse document
    /// frequency in the pair's group (ln(N / df), N its pages).
    x: [f64; 6],
    /// The shorter body's tokens over the longer's.
    r: f64,
    /// Per weighting of [`WEIGHTINGS`]: the words' weighted Jaccard
    /// similarity, exact and estimated.
    c: [(f64, f64); 3],
}

/// A rule over a pair: what a lookup sees (shingle and word estimates,
/// distance, radius), or the exact values it stands for.
type Rule = (&'static str, fn(&Pair) -> bool);

/// The rules compared (the first is contentseen's).
const RULES: [Rule; 12] = [
    ("contentseen", |p| near_duplicates_at(p.d, p.j, p.w)),
    ("words estimate ≥ 0.70", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.w >= 0.70)
    }),
    ("words estimate ≥ 0.75", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.w >= 0.75)
    }),
    ("exact words ≥ 0.65", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.x[0] >= 0.65)
    }),
    ("exact words by site IDF ≥ 0.65", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.x[5] >= 0.65)
    }),
    ("exact words by host DF 1-df/n ≥ 0.65", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.c[1].0 >= 0.65)
    }),
    ("exact words by host DF ln ≥ 0.65", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.c[2].0 >= 0.65)
    }),
    ("estimate by host DF ln ≥ 0.65", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.c[2].1 >= 0.65)
    }),
    ("estimate by host DF ln ≥ 0.6", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.c[2].1 >= 0.6)
    }),
    ("simulated estimate, unweighted (control)", |p| {
        p.j >= 0.6 || (p.j >= 0.3 && p.c[0].1 >= 0.65)
    }),
    ("contentseen, and below 0.6 exact J8 / J3 ≤ 0.6", |p| {
        near_duplicates_at(p.d, p.j, p.w) && (p.j >= 0.6 || p.x[3] <= 0.6 * p.x[2])
    }),
    ("contentseen and length ratio ≥ 0.7 below 0.6", |p| {
        near_duplicates_at(p.d, p.j, p.w) && (p.j >= 0.6 || p.r >= 0.7)
    }),
];

/// contentseen's rule from the two estimates.
fn near_duplicates_at(d: u32, j: f64, w: f64) -> bool {
    contentseen::decide::threshold(d, j).is_some() && (j >= 0.6 || (j >= 0.3 && w >= 0.65))
}

/// Per rule, how many pairs of each class pass.
fn rule_table(classes: &BTreeMap<String, Vec<&Pair>>) {
    print!("\n| rule |");
    for c in classes.keys() {
        print!(" {c} |");
    }
    println!();
    for (name, rule) in RULES {
        print!("| {name} |");
        for pairs in classes.values() {
            let pass = pairs.iter().filter(|p| rule(p)).count();
            print!(" {pass}/{} |", pairs.len());
        }
        println!();
    }
}

fn sketched(name: String, host: String, group: usize, text: &str, article: bool) -> Sketched {
    let s = sketch(text);
    let [words, long_words, shingles, eight_shingles] = exact_sets(text);
    Sketched {
        name,
        group,
        article: article && s.tokens > 0,
        tokens: s.tokens,
        probe: Reach::default().probe(&Layout::default(), &s),
        words,
        long_words,
        shingles,
        eight_shingles,
        host,
        common_out: Vec::new(),
    }
}

fn extract(bytes: &[u8], url: &str) -> (String, bool) {
    let (_, html) = charset::decide_and_decode(
        bytes,
        &charset::Signals {
            header: Some("text/html"),
            ..Default::default()
        },
    );
    let url = url::Url::parse(url).expect("a URL");
    let a = extractor::extract(&html, &url);
    (a.text, a.is_article)
}

/// The Jaccard similarity of two sorted sets, each element weighted.
fn weighted(a: &[u64], b: &[u64], w: &dyn Fn(u64) -> f64) -> f64 {
    let (mut i, mut j, mut inter, mut union) = (0, 0, 0.0, 0.0);
    while i < a.len() || j < b.len() {
        if j == b.len() || (i < a.len() && a[i] < b[j]) {
            union += w(a[i]);
            i += 1;
        } else if i == a.len() || b[j] < a[i] {
            union += w(b[j]);
            j += 1;
        } else {
            inter += w(a[i]);
            union += w(a[i]);
            i += 1;
            j += 1;
        }
    }
    if union == 0.0 {
        1.0
    } else {
        inter / union
    }
}

/// Every pair of articles of one group that a lookup reaches.
fn reachable(items: &[Sketched]) -> Vec<Pair> {
    let mut out = Vec::new();
    // Document frequencies per group.
    let mut df: std::collections::HashMap<(usize, u64), u32> = Default::default();
    let mut n: std::collections::HashMap<usize, f64> = Default::default();
    for it in items.iter().filter(|i| i.article) {
        *n.entry(it.group).or_default() += 1.0;
        for &h in it.shingles.iter().chain(&it.words) {
            *df.entry((it.group, h)).or_default() += 1;
        }
    }
    let idf = |g: usize, h: u64| {
        let d = f64::from(df.get(&(g, h)).copied().unwrap_or(1));
        (n[&g] / d).ln().max(0.0)
    };
    for a in 0..items.len() {
        let Some(pa) = items[a].probe.filter(|_| items[a].article) else {
            continue;
        };
        for b in a + 1..items.len() {
            if items[b].group != items[a].group || !items[b].article {
                continue;
            }
            let Some(pb) = items[b].probe else { continue };
            let d = distance(pa.fingerprint, pb.fingerprint);
            if d > MAX_PAIR_DISTANCE {
                continue;
            }
            let within = d <= pa.radius.min(pb.radius);
            let lsh = match (pa.lsh, pb.lsh) {
                (Some(x), Some(y)) => x.iter().zip(&y).any(|(u, v)| u == v),
                _ => false,
            };
            if !within && !lsh {
                continue;
            }
            let (Some(sa), Some(sb)) = (pa.signature, pb.signature) else {
                continue;
            };
            out.push(Pair {
                a,
                b,
                d,
                j: jaccard(&sa, &sb),
                w: words_jaccard(&sa, &sb),
                x: [
                    labels::jaccard(&items[a].words, &items[b].words),
                    labels::jaccard(&items[a].long_words, &items[b].long_words),
                    labels::jaccard(&items[a].shingles, &items[b].shingles),
                    labels::jaccard(&items[a].eight_shingles, &items[b].eight_shingles),
                    weighted(&items[a].shingles, &items[b].shingles, &|h| {
                        idf(items[a].group, h)
                    }),
                    weighted(&items[a].words, &items[b].words, &|h| {
                        idf(items[a].group, h)
                    }),
                ],
                r: items[a].tokens.min(items[b].tokens) as f64
                    / items[a].tokens.max(items[b].tokens).max(1) as f64,
                c: std::array::from_fn(|k| {
                    let (xa, sa) = &items[a].common_out[k];
                    let (xb, sb) = &items[b].common_out[k];
                    (weighted_jaccard(xa, xb), weighted_estimate(sa, sb))
                }),
            });
        }
    }
    out
}

fn passes(items: &[Sketched], p: &Pair) -> bool {
    let (Some(pa), Some(pb)) = (items[p.a].probe, items[p.b].probe) else {
        return false;
    };
    near_duplicates(
        p.d,
        pa.radius.min(pb.radius),
        pa.signature.as_ref(),
        pb.signature.as_ref(),
    )
}

/// The spreads of every feature of some pairs.
/// One pair's line in the listing: `what`, its estimates, distance and pages.
fn print_pair(what: &str, p: &Pair, items: &[Sketched]) {
    println!(
        "  {what} est {:.3} words {:.3} d {} x {:.2?} tokens {}/{} {} {}",
        p.j, p.w, p.d, p.x, items[p.a].tokens, items[p.b].tokens, items[p.a].name, items[p.b].name
    );
}

/// Per class, how many pairs the current rule passes and fails, and their features.
fn report_classes<K: std::fmt::Display>(by: &BTreeMap<K, (Vec<&Pair>, Vec<&Pair>)>) {
    for (class, (pass, fail)) in by {
        println!(
            "{class}: {} pass, {} fail\n{}{}",
            pass.len(),
            fail.len(),
            features("passing", pass),
            features("failing", fail)
        );
    }
}

fn features(title: &str, pairs: &[&Pair]) -> String {
    let f = |g: &dyn Fn(&Pair) -> f64| spread(&pairs.iter().map(|p| g(p)).collect::<Vec<_>>());
    format!(
        "  {title}:\n    est shingles {}\n    est words    {}\n    words        {}\n    long words   {}\n    shingles     {}\n    8-shingles   {}\n    idf shingles {}\n    idf words    {}\n    length ratio {}\n",
        f(&|p| p.j),
        f(&|p| p.w),
        f(&|p| p.x[0]),
        f(&|p| p.x[1]),
        f(&|p| p.x[2]),
        f(&|p| p.x[3]),
        f(&|p| p.x[4]),
        f(&|p| p.x[5]),
        f(&|p| p.r),
    )
}

/// Count, mean, min, max of some values, as a line.
fn spread(values: &[f64]) -> String {
    if values.is_empty() {
        return "none".into();
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
    format!(
        "{} pairs: min {:.2}, 5% {:.2}, median {:.2}, 95% {:.2}, max {:.2}",
        v.len(),
        v[0],
        q(0.05),
        q(0.5),
        q(0.95),
        v[v.len() - 1]
    )
}

/// Prints the real sites' pairs; returns the distinct pairs (J < 0.5)
/// the rule passes, of all.
fn real_sites(list: bool) -> (usize, usize) {
    let sites = read_sites(&table_path(), &evaluation::sources::bench_dir(), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let (all, _) = pages(&sites).unwrap_or_else(|e| panic!("{e}"));
    let labels_path = labels::default_path();
    let by_key = labels::read(&labels_path).unwrap_or_else(|e| panic!("{e}"));
    let mut items = Vec::new();
    let mut labs: Vec<Label> = Vec::new();
    for p in all.iter().filter(|p| !p.held_aside) {
        let Some(label) = by_key.get(&(sites[p.site].name.clone(), p.path.clone())) else {
            continue;
        };
        let Ok(bytes) = read_page(&p.file) else {
            continue;
        };
        let (text, article) = extract(&bytes, &format!("http://127.0.0.2{}", p.path));
        items.push(sketched(
            format!("{}{}", sites[p.site].name, p.path),
            sites[p.site].name.clone(),
            p.site,
            &text,
            article && !label.is_listing(),
        ));
        labs.push(label.clone());
    }
    online_df(&mut items);
    let pairs = reachable(&items);
    println!(
        "## Real sites, tuned: {} pages, {} reachable pairs",
        items.len(),
        pairs.len()
    );
    let mut by: BTreeMap<&str, (Vec<&Pair>, Vec<&Pair>)> = BTreeMap::new();
    for p in &pairs {
        let exact = labels::jaccard(&labs[p.a].shingles, &labs[p.b].shingles);
        let class = if exact >= 0.8 {
            if labs[p.a].second_opinion_distinct(&labs[p.b]) {
                "vetoed"
            } else {
                "to find (J ≥ 0.8)"
            }
        } else if exact < 0.5 {
            "distinct (J < 0.5)"
        } else {
            "unscored"
        };
        let e = by.entry(class).or_default();
        if passes(&items, p) {
            e.0.push(p);
        } else {
            e.1.push(p);
        }
        if list && exact < 0.5 && passes(&items, p) {
            print_pair(&format!("PASS exact {exact:.3}"), p, &items);
        }
    }
    report_classes(&by);
    rule_table(
        &by.iter()
            .map(|(c, (p, f))| (c.to_string(), p.iter().chain(f).copied().collect()))
            .collect(),
    );
    by.get("distinct (J < 0.5)")
        .map_or((0, 0), |(p, f)| (p.len(), p.len() + f.len()))
}

/// Prints the neardup set's pairs; returns the heavier edits' pairs the
/// rule passes, of all.
fn neardup_set(list: bool) -> (usize, usize) {
    let set = neardup::build(&neardup::Config::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut items = Vec::new();
    let mut kinds = Vec::new();
    let mut clusters = Vec::new();
    for p in set.pages.iter().filter(|p| !p.held_aside) {
        let (text, article) = extract(&p.served.bytes, &p.served.url);
        // One group: pages of every source may meet.
        let host = url::Url::parse(&p.served.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        items.push(sketched(p.name.clone(), host, 0, &text, article));
        kinds.push(p.kind);
        clusters.push(p.cluster);
    }
    online_df(&mut items);
    let pairs = reachable(&items);
    println!(
        "\n## Neardup set, tuned: {} pages, {} reachable pairs",
        items.len(),
        pairs.len()
    );
    let mut by: BTreeMap<String, (Vec<&Pair>, Vec<&Pair>)> = BTreeMap::new();
    for p in &pairs {
        let same = clusters[p.a].is_some() && clusters[p.a] == clusters[p.b];
        let class = if same {
            let k = if kinds[p.a] == SetKind::Original {
                kinds[p.b]
            } else if kinds[p.b] == SetKind::Original {
                kinds[p.a]
            } else {
                // Two variants of one base: the farther kind.
                kinds[p.a].max(kinds[p.b])
            };
            format!("to find: {}", k.name())
        } else {
            "distinct".to_string()
        };
        let ok = passes(&items, p);
        let e = by.entry(class.clone()).or_default();
        if ok {
            e.0.push(p);
        } else {
            e.1.push(p);
        }
        if list && (same != ok) {
            print_pair(
                &format!("{} {class}", if ok { "PASS" } else { "FAIL" }),
                p,
                &items,
            );
        }
    }
    report_classes(&by);
    rule_table(
        &by.iter()
            .map(|(c, (p, f))| (c.clone(), p.iter().chain(f).copied().collect()))
            .collect(),
    );
    by.get(&format!("to find: {}", SetKind::HeavyEdit.name()))
        .map_or((0, 0), |(p, f)| (p.len(), p.len() + f.len()))
}

fn main() {
    let list = std::env::var("NEARDUP_PAIRS_LIST").is_ok_and(|v| v == "1");
    let (wrong, distinct) = real_sites(list);
    let (found, heavy) = neardup_set(list);
    println!(
        "\ncontentseen's rule, tuned pairs a lookup reaches: {wrong} of {distinct} real-site pairs under exact J 0.5 pass (wrong), {found} of {heavy} heavier-edit pairs pass (right)"
    );
}
