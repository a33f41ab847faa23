//! Charset voting benchmark: accuracy against labelled pages, and speed.
//!
//! `cargo bench -p evaluation --bench charset` reads `shared/bench/charset/`
//! (and the AEB pages for speed) and prints:
//! 1. on `lying/`: the share of pages decoded RIGHT (same text as the true
//!    encoding gives) by each strategy, per scenario and overall, and the
//!    vote's share on the tuned and the held-aside pages;
//! 2. pages built from `corpus/` files where the HTTP header and the meta
//!    tell the same lie (and, as a control, the same pages with both labels
//!    right), the vote's share per true encoding, tuned | held-aside: a file
//!    is held aside by the hash of its `label/file` id ([`evaluation::split`]),
//!    fixed before any result was seen; never tune on that column;
//!    2b. the independent source, gettext translations in the languages of
//!    the single-byte encodings ([`evaluation::translations`]), as the same
//!    kind of pages, per true encoding, tuned | held-aside documents; printed
//!    when the catalogues are on the machine, said ABSENT otherwise;
//!    2c. a third source, the AEB ground-truth bodies (English and a few
//!    other languages of news sites) encoded in windows-1252 and
//!    ISO-8859-15 (paragraphs they cannot write left out), as the same kind
//!    of pages, tuned | held-aside by the AEB split: English whose only
//!    non-ASCII bytes are `£`, `©` and typographic quotes;
//! 3. on `corpus/` (declarations neutralised, no header): chardetng alone
//!    (whole file, and bounded windows) against the vote;
//! 4. how often the vote skips the detector on pages whose labels are right;
//! 5. MB/s of `decide_and_decode` on clean UTF-8 pages (the figure the
//!    fetcher lives by) and on the legacy-encoded lying pages.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use charset::{decide_and_decode, detector, prescan, vote, Signals};
use encoding_rs::{Encoding, ISO_8859_15, WINDOWS_1252};
use evaluation::charset::{decodes_right, LyingPage};
use evaluation::lying::{self, CorpusFile};
use evaluation::split::{held_aside, COLUMNS};
use evaluation::translations;

/// The strategies compared on the lying pages, in column order.
const STRATEGIES: [&str; 6] = ["header", "meta", "whatwg", "chardetng", "majority", "vote"];

fn main() {
    let root = evaluation::sources::bench_dir();
    let charset_dir = root.join("charset");
    assert!(
        charset_dir.is_dir(),
        "charset bench: {} is absent; nothing can be measured",
        charset_dir.display()
    );
    let lying = load_lying(&charset_dir.join("lying"));
    assert!(!lying.is_empty(), "charset bench: no lying/ pages");
    lying_table(&lying);
    // CHARSET_BENCH_AEB_ONLY=1: the AEB source's table alone.
    if std::env::var_os("CHARSET_BENCH_AEB_ONLY").is_some() {
        aeb_table();
        return;
    }
    // CHARSET_BENCH_TRANSLATIONS_ONLY=1: the independent source's table alone.
    if std::env::var_os("CHARSET_BENCH_TRANSLATIONS_ONLY").is_none() {
        let corpus = lying::corpus_files().unwrap_or_else(|e| panic!("charset bench: {e}"));
        corpus_with_both_lies(&corpus);
        if std::env::var_os("CHARSET_BENCH_SAME_LIE_ONLY").is_some() {
            return;
        }
    }
    translations_table();
    if std::env::var_os("CHARSET_BENCH_TRANSLATIONS_ONLY").is_some() {
        return;
    }
    aeb_table();
    let corpus = lying::corpus_files().unwrap_or_else(|e| panic!("charset bench: {e}"));
    corpus_table(&corpus);
    corpus_with_lying_headers(&corpus);
    skip_rates(&lying, &corpus);
    speed(&root.join("aeb/html"), &lying);
}

struct Page {
    bytes: Vec<u8>,
    truth: &'static Encoding,
    header: Option<String>,
    scenario: String,
    /// Held aside by the hash of `charset lying:<file>`.
    held: bool,
}

fn load_lying(dir: &Path) -> Vec<Page> {
    let labels = std::fs::read_to_string(dir.join("labels.tsv")).unwrap_or_default();
    labels
        .lines()
        .filter_map(LyingPage::parse)
        .filter_map(|row| {
            let bytes = std::fs::read(dir.join(&row.file)).ok()?;
            Some(Page {
                truth: row.truth_encoding()?,
                bytes,
                header: row.header,
                held: held_aside(&format!("charset lying:{}", row.file)),
                scenario: row.scenario,
            })
        })
        .collect()
}

fn label_encoding(label: Option<&str>) -> Option<&'static Encoding> {
    label.and_then(|label| Encoding::for_label(label.as_bytes()))
}

fn chardetng_whole(bytes: &[u8], allow_utf8: bool) -> &'static Encoding {
    detector::guess_within(bytes, None, allow_utf8, usize::MAX)
}

/// The encoding each strategy picks for a lying page.
fn strategy_choice(strategy: &str, page: &Page) -> &'static Encoding {
    let header = label_encoding(page.header.as_deref());
    let meta = prescan(&page.bytes);
    match strategy {
        "header" => header.unwrap_or(WINDOWS_1252),
        "meta" => meta.unwrap_or(WINDOWS_1252),
        // A browser: BOM, header, prescan, then a detector that may not say UTF-8.
        "whatwg" => Encoding::for_bom(&page.bytes)
            .map(|(encoding, _)| encoding)
            .or(header)
            .or(meta)
            .unwrap_or_else(|| chardetng_whole(&page.bytes, false)),
        "chardetng" => chardetng_whole(&page.bytes, true),
        "majority" => {
            let detected = chardetng_whole(&page.bytes, true);
            match (header, meta) {
                (Some(h), Some(m)) if h == m => h,
                (Some(h), _) if h == detected => h,
                (_, Some(m)) if m == detected => m,
                _ => detected,
            }
        }
        _ => {
            let signals = Signals::from_header(page.header.as_deref());
            vote(&page.bytes, &signals).encoding()
        }
    }
}

fn percent(right: usize, total: usize) -> String {
    if total == 0 {
        return "-".into();
    }
    format!("{:.1}%", 100.0 * right as f64 / total as f64)
}

fn lying_table(pages: &[Page]) {
    println!(
        "\n== lying/: share of pages decoded right ({} pages) ==",
        pages.len()
    );
    let mut by_scenario: BTreeMap<&str, (usize, [usize; 6])> = BTreeMap::new();
    let mut overall = (0usize, [0usize; 6]);
    let mut misses: Vec<String> = Vec::new();
    // The vote's (right, pages) per scenario, tuned and held aside.
    let mut vote_split: BTreeMap<&str, [(usize, usize); 2]> = BTreeMap::new();
    for page in pages {
        let row = by_scenario.entry(page.scenario.as_str()).or_default();
        row.0 += 1;
        overall.0 += 1;
        let split =
            &mut vote_split.entry(page.scenario.as_str()).or_default()[usize::from(page.held)];
        split.1 += 1;
        split.0 += usize::from(decodes_right(
            &page.bytes,
            strategy_choice("vote", page),
            page.truth,
        ));
        for (column, strategy) in STRATEGIES.iter().enumerate() {
            let chosen = strategy_choice(strategy, page);
            if decodes_right(&page.bytes, chosen, page.truth) {
                row.1[column] += 1;
                overall.1[column] += 1;
            } else if *strategy == "vote" {
                misses.push(format!(
                    "{} {} header={:?}: chose {}",
                    page.scenario,
                    page.truth.name(),
                    page.header,
                    chosen.name()
                ));
            }
        }
    }
    print!("{:<20} {:>5}", "scenario", "pages");
    for strategy in STRATEGIES {
        print!(" {strategy:>9}");
    }
    println!();
    for (scenario, (total, right)) in by_scenario
        .iter()
        .chain(std::iter::once((&"ALL", &overall)))
    {
        print!("{scenario:<20} {total:>5}");
        for count in right {
            print!(" {:>9}", percent(*count, *total));
        }
        println!();
    }
    for miss in misses.iter().take(20) {
        println!("  vote wrong: {miss}");
    }
    println!(
        "\nthe vote on lying/, {} | {} (pages held aside by file name):",
        COLUMNS[0], COLUMNS[1]
    );
    let mut all = [(0, 0); 2];
    for (scenario, split) in &vote_split {
        println!("{scenario:<20} {}", two_columns(split));
        for (sum, part) in all.iter_mut().zip(split) {
            sum.0 += part.0;
            sum.1 += part.1;
        }
    }
    println!("{:<20} {}", "ALL", two_columns(&all));
}

/// `right/pages = share | right/pages = share`.
/// Pages decoded right and pages, tuned | held aside.
type Split = [(usize, usize); 2];

/// Prints one line per encoding and returns the sums over the
/// single-byte encodings and over all.
fn encoding_rows(lied: &BTreeMap<&str, Split>) -> (Split, Split) {
    let mut single = [(0, 0); 2];
    let mut all = [(0, 0); 2];
    for (encoding, split) in lied {
        println!("{encoding:<16} {}", two_columns(split));
        let is_single_byte =
            Encoding::for_label(encoding.as_bytes()).is_some_and(|e| e.is_single_byte());
        for (i, part) in split.iter().enumerate() {
            all[i].0 += part.0;
            all[i].1 += part.1;
            if is_single_byte {
                single[i].0 += part.0;
                single[i].1 += part.1;
            }
        }
    }
    (single, all)
}

fn two_columns(split: &[(usize, usize); 2]) -> String {
    let [(tr, tn), (hr, hn)] = *split;
    format!(
        "{tr:>5}/{tn:<5} {:>7} | {hr:>5}/{hn:<5} {:>7}",
        percent(tr, tn),
        percent(hr, hn)
    )
}

/// Corpus files as pages whose HTTP header and meta tell the same lie, and
/// as the same pages with both labels right: the vote's share decoded right
/// per true encoding, tuned | held aside.
fn corpus_with_both_lies(files: &[CorpusFile]) {
    // Per true encoding: [tuned, held] (right, cases), lies then honest.
    let mut lied: BTreeMap<&str, [(usize, usize); 2]> = BTreeMap::new();
    let mut honest: BTreeMap<&str, [(usize, usize); 2]> = BTreeMap::new();
    let mut misses: BTreeMap<String, usize> = BTreeMap::new();
    // CHARSET_BENCH_VERBOSE=1: each miss with its file (of the tuned part only: the
    // held-aside files are not looked at one by one).
    let verbose = std::env::var_os("CHARSET_BENCH_VERBOSE").is_some();
    lying::each_page(files, |built| {
        let file = built.file;
        let decision = vote(&built.page, &Signals::from_header(Some(built.header)));
        let right = decodes_right(&built.page, decision.encoding(), file.truth);
        let table = if built.lie.is_some() {
            &mut lied
        } else {
            &mut honest
        };
        let cell = &mut table.entry(file.truth.name()).or_default()[usize::from(file.held)];
        cell.1 += 1;
        cell.0 += usize::from(right);
        if built.lie.is_none() && !right && verbose && !file.held {
            println!(
                "  honest tuned page decoded wrong: {} {}: chose {} ({})",
                file.id, built.form, decision.encoding, decision.reason
            );
        }
        if let (Some(lie), false) = (built.lie, right) {
            *misses
                .entry(unless_held(file.held, || {
                    let mut miss = format!(
                        "{} {} told {lie}: chose {}",
                        if verbose { &file.id } else { &file.label },
                        built.form,
                        decision.encoding
                    );
                    if verbose {
                        miss.push_str(&format!(" ({})", decision.reason));
                    }
                    miss
                }))
                .or_default() += 1;
        }
    });
    println!(
        "\n== corpus/ files as pages whose header and meta tell the same lie ({} lies each, full and {}-byte forms), vote decoded right, {} | {} ==",
        lying::BOTH_LIES.len(),
        lying::SHORT_PAGE_BYTES,
        COLUMNS[0],
        COLUMNS[1]
    );
    let (single, all) = encoding_rows(&lied);
    println!("{:<16} {}", "single-byte", two_columns(&single));
    println!("{:<16} {}", "ALL", two_columns(&all));
    for (miss, count) in &misses {
        println!("  vote wrong: {miss} (x{count})");
    }
    let mut honest_all = [(0, 0); 2];
    let mut honest_wrong = Vec::new();
    for (encoding, split) in &honest {
        for (i, part) in split.iter().enumerate() {
            honest_all[i].0 += part.0;
            honest_all[i].1 += part.1;
        }
        if split.iter().any(|(right, total)| right != total) {
            honest_wrong.push(format!("{encoding} {}", two_columns(split)));
        }
    }
    println!(
        "the same pages with header and meta right:      {}",
        two_columns(&honest_all)
    );
    for wrong in honest_wrong {
        println!("  honest but decoded wrong: {wrong}");
    }
}

/// The independent source ([`evaluation::translations`]): gettext
/// translations as pages whose header and meta tell the same lie, per true
/// encoding, tuned | held-aside documents. Printed when the catalogues are
/// on the machine, said to be absent otherwise (CI does not depend on them);
/// a `CHARSET_TRANSLATIONS_DIR` that names missing catalogues fails.
fn translations_table() {
    let root = translations::locale_dir();
    let documents = match translations::documents(&root) {
        Ok(documents) => documents,
        Err(e) if std::env::var_os("CHARSET_TRANSLATIONS_DIR").is_some() => {
            panic!("charset bench: {e}")
        }
        Err(e) => {
            println!("\n== translations: ABSENT, not measured ({e}) ==");
            return;
        }
    };
    let verbose = std::env::var_os("CHARSET_BENCH_VERBOSE").is_some();
    let mut tally = SameLie::default();
    translations::each_page(&documents, |built| {
        let decision = vote(&built.page, &Signals::from_header(Some(built.header)));
        let right = decodes_right(&built.page, decision.encoding(), built.truth);
        tally.count(built.truth, built.lie, built.document.held, right, || {
            let mut miss = format!(
                "{} {} {} told {}: chose {}",
                if verbose {
                    &built.document.id
                } else {
                    built.document.language
                },
                built.truth.name(),
                built.form,
                built.lie.unwrap_or(HONEST),
                decision.encoding
            );
            if verbose {
                miss.push_str(&format!(" ({})", decision.reason));
            }
            miss
        });
    });
    tally.print(
        &format!(
            "translations under {} ({} documents) as pages whose header and meta tell the same lie",
            root.display(),
            documents.len()
        ),
        if verbose { 5000 } else { 40 },
    );
}

/// The AEB bodies (a source neither the corpus nor the translations hold)
/// in the legacy encodings of their languages, as pages whose header and
/// meta tell the same lie (the whole body and a 1 KB slice from its first
/// non-ASCII line), and told the truth; tuned | held aside by the AEB
/// split.
fn aeb_table() {
    let bases = evaluation::sources::aeb().unwrap_or_else(|e| panic!("charset bench: {e}"));
    let mut tally = SameLie::default();
    for truth in [WINDOWS_1252, ISO_8859_15] {
        for base in &bases {
            let held = evaluation::split::held_aside_in(evaluation::sources::Source::Aeb, &base.id);
            let text: Vec<&str> = base
                .paragraphs
                .iter()
                .map(String::as_str)
                .filter(|p| !truth.encode(p).2)
                .collect();
            let joined = text.join("\n");
            let (bytes, _, _) = truth.encode(&joined);
            if bytes.is_ascii() {
                continue;
            }
            for (form, content) in lying::forms(&bytes) {
                lying::tellings(truth, content, |lie, page| {
                    let decision = vote(
                        &page,
                        &Signals::from_header(Some(lie.unwrap_or(truth.name()))),
                    );
                    let right = decodes_right(&page, decision.encoding(), truth);
                    tally.count(truth, lie, held, right, || {
                        format!(
                            "{} {form} told {}: chose {}",
                            truth.name(),
                            lie.unwrap_or(HONEST),
                            decision.encoding
                        )
                    });
                });
            }
        }
    }
    tally.print(
        "AEB bodies as legacy pages whose header and meta tell the same lie",
        20,
    );
}

/// How a page told the truth is described among the wrong decisions.
const HONEST: &str = "the truth";

/// The vote on one source's pages told the same lie and told the truth:
/// pages decoded right per true encoding (lies) and over all (the truth),
/// tuned | held aside, and the wrong decisions by description (the
/// held-aside ones not described).
#[derive(Default)]
struct SameLie {
    lied: BTreeMap<&'static str, Split>,
    honest: Split,
    misses: BTreeMap<String, usize>,
}

impl SameLie {
    /// One page of `truth` told `lie` (`None`: the truth), decoded `right`
    /// or not; `describe` names a wrong decision of the tuned part.
    fn count(
        &mut self,
        truth: &'static Encoding,
        lie: Option<&str>,
        held: bool,
        right: bool,
        describe: impl FnOnce() -> String,
    ) {
        let cell = match lie {
            Some(_) => &mut self.lied.entry(truth.name()).or_default()[usize::from(held)],
            None => &mut self.honest[usize::from(held)],
        };
        cell.1 += 1;
        cell.0 += usize::from(right);
        if !right {
            *self.misses.entry(unless_held(held, describe)).or_default() += 1;
        }
    }

    /// The table under `title`, and the `shown` commonest wrong decisions.
    fn print(self, title: &str, shown: usize) {
        println!(
            "\n== {title}, vote decoded right, {} | {} ==",
            COLUMNS[0], COLUMNS[1]
        );
        let (_, all) = encoding_rows(&self.lied);
        println!("{:<16} {}", "ALL", two_columns(&all));
        println!(
            "the same pages with header and meta right:      {}",
            two_columns(&self.honest)
        );
        let mut misses: Vec<(String, usize)> = self.misses.into_iter().collect();
        misses.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        for (miss, count) in misses.iter().take(shown) {
            println!("  vote wrong: {miss} (x{count})");
        }
        // Every honest page decoded wrong (tuned ones described), however few.
        for (miss, count) in misses.iter().skip(shown) {
            if miss.contains(HONEST) {
                println!("  vote wrong: {miss} (x{count})");
            }
        }
    }
}

fn corpus_table(files: &[CorpusFile]) {
    println!(
        "\n== corpus/: declarations neutralised, no header ({} files) ==",
        files.len()
    );
    let windows: [(&str, usize); 5] = [
        ("1KB", 1024),
        ("4KB", 4096),
        ("16KB", 16 * 1024),
        ("64KB", 64 * 1024),
        ("whole", usize::MAX),
    ];
    let total_bytes: usize = files.iter().map(|f| f.undeclared.len()).sum();
    for (name, window) in windows {
        let start = Instant::now();
        let right = files
            .iter()
            .filter(|f| {
                decodes_right(
                    &f.undeclared,
                    detector::guess_within(&f.undeclared, None, true, window),
                    f.truth,
                )
            })
            .count();
        let mb_s = total_bytes as f64 / 1e6 / start.elapsed().as_secs_f64();
        println!(
            "chardetng alone, {name:<5} from first non-ASCII: {:>6} right  ({mb_s:.0} MB/s)",
            percent(right, files.len())
        );
    }
    let start = Instant::now();
    let mut right = 0;
    let mut misses = BTreeMap::<String, usize>::new();
    for file in files {
        let chosen = vote(&file.undeclared, &Signals::default()).encoding();
        if decodes_right(&file.undeclared, chosen, file.truth) {
            right += 1;
        } else {
            *misses
                .entry(unless_held(file.held, || {
                    format!("{} as {}", file.label, chosen.name())
                }))
                .or_default() += 1;
        }
    }
    let mb_s = total_bytes as f64 / 1e6 / start.elapsed().as_secs_f64();
    println!(
        "our vote:                                {:>6} right  ({mb_s:.0} MB/s)",
        percent(right, files.len())
    );
    println!("  vote wrong: {misses:?}");
}

/// Synthetic lies on the corpus: each file (declarations neutralised) served
/// with a header naming a wrong encoding; the vote should still do as well
/// as chardetng alone, which never reads labels.
fn corpus_with_lying_headers(files: &[CorpusFile]) {
    const LIES: [&str; 9] = [
        "windows-1252",
        "windows-1251",
        "koi8-r",
        "iso-8859-5",
        "gbk",
        "big5",
        "shift_jis",
        "euc-kr",
        "utf-8",
    ];
    let (mut cases, mut vote_right, mut chardetng_right) = (0usize, 0usize, 0usize);
    let mut misses = BTreeMap::<String, usize>::new();
    for file in files {
        let guessed = detector::guess_within(&file.undeclared, None, true, usize::MAX);
        let chardetng_is_right = decodes_right(&file.undeclared, guessed, file.truth);
        for lie in LIES {
            let Some(lie_encoding) = Encoding::for_label(lie.as_bytes()) else {
                continue;
            };
            if decodes_right(&file.undeclared, lie_encoding, file.truth) {
                continue;
            }
            cases += 1;
            chardetng_right += usize::from(chardetng_is_right);
            let decision = vote(&file.undeclared, &Signals::from_header(Some(lie)));
            if decodes_right(&file.undeclared, decision.encoding(), file.truth) {
                vote_right += 1;
            } else if chardetng_is_right {
                *misses
                    .entry(unless_held(file.held, || {
                        format!("{} told {lie}: {}", file.label, decision.encoding)
                    }))
                    .or_default() += 1;
            }
        }
    }
    println!(
        "corpus/ served with a lying header ({cases} cases): vote {} right, chardetng alone {}",
        percent(vote_right, cases),
        percent(chardetng_right, cases)
    );
    if !misses.is_empty() {
        println!("  vote wrong where chardetng is right: {misses:?}");
    }
}

fn skip_rates(lying: &[Page], corpus: &[CorpusFile]) {
    println!("\n== pages whose labels are right ==");
    let control: Vec<&Page> = lying
        .iter()
        .filter(|p| p.scenario == "control_both_right")
        .collect();
    let mut right = 0;
    let mut skipped = 0;
    let mut skipped_by_encoding = BTreeMap::<&str, (usize, usize)>::new();
    for page in &control {
        let decision = vote(&page.bytes, &Signals::from_header(page.header.as_deref()));
        right += usize::from(decodes_right(&page.bytes, decision.encoding(), page.truth));
        skipped += usize::from(!decision.detector_ran);
        let entry = skipped_by_encoding.entry(page.truth.name()).or_default();
        entry.0 += usize::from(!decision.detector_ran);
        entry.1 += 1;
    }
    println!(
        "lying/ control_both_right: {} decoded right, detector skipped on {} ({} pages)",
        percent(right, control.len()),
        percent(skipped, control.len()),
        control.len()
    );
    let breakdown: Vec<String> = skipped_by_encoding
        .iter()
        .map(|(name, (skipped, total))| format!("{name} {skipped}/{total}"))
        .collect();
    println!("  skipped per true encoding: {}", breakdown.join(", "));
    // Corpus files whose own declaration is the truth (kept in place).
    let (mut labelled, mut right, mut skipped) = (0, 0, 0);
    let mut misses = BTreeMap::<String, usize>::new();
    for file in corpus {
        let Some(declared) = prescan(&file.original) else {
            continue;
        };
        if !decodes_right(&file.original, declared, file.truth) {
            continue;
        }
        labelled += 1;
        let decision = vote(&file.original, &Signals::default());
        if decodes_right(&file.original, decision.encoding(), file.truth) {
            right += 1;
        } else {
            *misses
                .entry(format!("{} as {}", file.label, decision.encoding))
                .or_default() += 1;
        }
        skipped += usize::from(!decision.detector_ran);
    }
    println!(
        "corpus/ with its right declarations: {} decoded right, detector skipped on {} ({labelled} files)",
        percent(right, labelled),
        percent(skipped, labelled)
    );
    if !misses.is_empty() {
        println!("  vote wrong: {misses:?}");
    }
}

/// Pages of 50-200 KB of real UTF-8 HTML (with non-ASCII text).
fn utf8_pages(aeb: &Path) -> Vec<Vec<u8>> {
    let mut pages = Vec::new();
    for path in evaluation::sources::sorted_entries(aeb).expect("the AEB set") {
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        let mut html = Vec::new();
        if flate2::read::GzDecoder::new(file)
            .read_to_end(&mut html)
            .is_err()
        {
            continue;
        }
        let size_ok = (50_000..=200_000).contains(&html.len());
        if size_ok && !html.is_ascii() && std::str::from_utf8(&html).is_ok() {
            pages.push(html);
        }
    }
    pages
}

/// MB/s of `decide_and_decode` over `pages`, repeated for about a second.
fn throughput(pages: &[&[u8]], header: Option<&str>) -> f64 {
    let bytes: usize = pages.iter().map(|p| p.len()).sum();
    let signals = Signals::from_header(header);
    let start = Instant::now();
    let mut rounds = 0usize;
    while start.elapsed() < Duration::from_secs(1) || rounds == 0 {
        for page in pages {
            black_box(decide_and_decode(black_box(page), &signals));
        }
        rounds += 1;
    }
    (bytes * rounds) as f64 / 1e6 / start.elapsed().as_secs_f64()
}

fn speed(aeb: &Path, lying: &[Page]) {
    println!("\n== speed of decide_and_decode (decision + decoded text) ==");
    let utf8 = utf8_pages(aeb);
    if utf8.is_empty() {
        println!("no AEB pages under {}; skipped", aeb.display());
    } else {
        let pages: Vec<&[u8]> = utf8.iter().map(Vec::as_slice).collect();
        let bytes: usize = pages.iter().map(|p| p.len()).sum();
        let skipped = pages
            .iter()
            .filter(|p| !vote(p, &Signals::default()).detector_ran)
            .count();
        println!(
            "clean UTF-8 pages ({} pages, 50-200 KB, {:.1} MB; detector skipped on {}): {:.0} MB/s",
            pages.len(),
            bytes as f64 / 1e6,
            percent(skipped, pages.len()),
            throughput(&pages, Some("utf-8"))
        );
    }
    let legacy: Vec<&[u8]> = lying
        .iter()
        .filter(|p| p.truth.name() != "UTF-8")
        .map(|p| p.bytes.as_slice())
        .collect();
    println!(
        "legacy-encoded lying/ pages ({} pages, no header): {:.0} MB/s",
        legacy.len(),
        throughput(&legacy, None)
    );
}

/// A miss's description, or for a held-aside page only that it missed:
/// the held-aside pages are never looked at one by one (no tuning on them).
fn unless_held(held: bool, describe: impl FnOnce() -> String) -> String {
    if held {
        "[held-aside page: not described]".to_string()
    } else {
        describe()
    }
}
