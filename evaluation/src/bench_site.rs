//! The site of the pipeline benchmark (`cargo bench -p evaluation --bench
//! pipeline`, issue 19): N news pages (default 5,000) of about 30 KB of
//! HTML each, an inline script of a few KB included, about 90 links per
//! page, spread over H hosts (default 50) on the loopback addresses
//! `127.0.0.10` … `127.0.0.(10+H-1)`, all on one port; 10% of the pages are
//! near-duplicates of another page (the same story with three words
//! changed) and about 5% are Chinese pages served in GBK (`charset=gbk` in
//! the header and a `<meta>`).
//!
//! Deterministic from [`BenchSiteConfig::seed`] (and the port, which the
//! links name). The text comes from the test site's generator
//! ([`testsite::text`]).
//!
//! # Shape
//!
//! - Page `i` lives on host `i % H`; pages `0..H` are the hosts' roots
//!   (`/`), the others are `/p/<i>`. Every host serves `/robots.txt`
//!   allowing everything; anything else is a 404.
//! - Links of page `i`: its "related" children `20i+1 ..= 20i+20` (a tree
//!   rooted at page 0, so every page is within 3 hops of host 0's root and
//!   any crawl from the roots reaches the whole site), then random pages of
//!   the whole site (across hosts) up to [`BenchSiteConfig::site_links`],
//!   plus the roots of a few hosts in the navigation and
//!   [`BenchSiteConfig::offsite_links`] links to `*.invalid` (off scope).
//!   Links to the same host are relative, others absolute.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use testsite::html::escape_html;
use testsite::prng::SplitMix64;
use testsite::text::{edit_words, ChineseStory, EnglishStory};
use tokio::sync::watch;

/// The first host's last address byte: hosts are 127.0.0.10, .11, ...
pub const FIRST_HOST_OCTET: u8 = 10;
/// Related ("child") links per page: the tree that makes every page reachable.
pub const CHILDREN_PER_PAGE: usize = 20;
/// The robots.txt of every host: everything allowed.
pub const ROBOTS_TXT: &str = "User-agent: *\nAllow: /\n";

/// The shape of the generated site.
#[derive(Debug, Clone)]
pub struct BenchSiteConfig {
    pub pages: usize,
    pub hosts: usize,
    pub seed: u64,
    /// Links to pages of the site per page (related + more news), before
    /// navigation and off-site links.
    pub site_links: usize,
    /// Links to other hosts' roots in the navigation bar.
    pub nav_links: usize,
    /// Links to `http://*.invalid/...` per page (out of scope).
    pub offsite_links: usize,
    /// Percent of pages that are near-duplicates of another page.
    pub duplicate_percent: usize,
    /// Percent of pages that are Chinese and served in GBK.
    pub gbk_percent: usize,
    /// Bytes of the inline `<script>` (about).
    pub script_bytes: usize,
    /// Words changed in a near-duplicate.
    pub edited_words: usize,
    /// Render each page when it is asked for ([`BenchSite::on_demand`]) instead of all up
    /// front: for sites too large to hold (a million pages of 30 KB).
    pub render_on_demand: bool,
}

impl Default for BenchSiteConfig {
    fn default() -> Self {
        BenchSiteConfig {
            pages: 5_000,
            hosts: 50,
            seed: 19,
            site_links: 82,
            nav_links: 6,
            offsite_links: 3,
            duplicate_percent: 10,
            gbk_percent: 5,
            script_bytes: 4_000,
            edited_words: 3,
            render_on_demand: false,
        }
    }
}

/// What a page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchPageKind {
    /// An English story, UTF-8.
    Article,
    /// A Chinese story, GBK.
    Gbk,
    /// The story of page `of` with a few words changed.
    NearDuplicate { of: usize },
}

/// One generated page, as served.
#[derive(Debug, Clone)]
pub struct BenchPage {
    pub host: usize,
    /// `/` or `/p/<i>`.
    pub path: String,
    pub kind: BenchPageKind,
    pub title: String,
    /// Links as written in the page (absolute or relative).
    pub links: usize,
    pub content_type: &'static str,
    pub body: Bytes,
}

/// The generated site with its links bound to one port.
#[derive(Debug)]
pub struct BenchSite {
    pub config: BenchSiteConfig,
    pub port: u16,
    /// Every page, rendered ([`BenchSite::generate`]); empty for a site rendered on demand
    /// ([`BenchSite::on_demand`]: ask [`BenchSite::page`]).
    pub pages: Vec<BenchPage>,
    on_demand: Option<OnDemand>,
    robots: Bytes,
}

/// What a site rendered on demand keeps: each page's kind and its teaser.
#[derive(Debug)]
struct OnDemand {
    kinds: Vec<BenchPageKind>,
    teasers: Vec<Teaser>,
}

/// The address of host `h`.
pub fn host_addr(h: usize) -> Ipv4Addr {
    let octet = FIRST_HOST_OCTET as usize + h;
    assert!(octet < 255, "at most {} hosts", 255 - FIRST_HOST_OCTET);
    Ipv4Addr::new(127, 0, 0, octet as u8)
}

/// The path of page `i`.
fn page_path(i: usize, hosts: usize) -> String {
    if i < hosts {
        "/".to_string()
    } else {
        format!("/p/{i}")
    }
}

/// Each page's story before it is laid out.
enum Story {
    English(EnglishStory),
    Chinese(ChineseStory),
}

#[derive(Debug)]
struct Teaser {
    title: String,
    summary: String,
    date: String,
}

const STYLE: &str = "body{margin:0;font-family:Georgia,'Times New Roman',serif;color:#1a1a1a;background:#fff}\
.site-header{border-bottom:1px solid #ddd;padding:12px 24px;display:flex;align-items:center;justify-content:space-between}\
.main-nav ul{list-style:none;margin:0;padding:0;display:flex;gap:18px}.main-nav a{color:#333;text-decoration:none;font-weight:600}\
main{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,1fr);gap:32px;max-width:1200px;margin:0 auto;padding:24px}\
.story h1{font-size:2.4rem;line-height:1.15;margin:0 0 12px}.byline{color:#666;font-size:.9rem}\
.content p{font-size:1.1rem;line-height:1.6;margin:0 0 1em}.teaser{margin:0 0 14px;padding:0 0 14px;border-bottom:1px solid #eee}\
.teaser__link{font-weight:700;color:#111;text-decoration:none}.teaser__summary{margin:4px 0;color:#444;font-size:.95rem}\
.teaser__meta{color:#888;font-size:.8rem}.partners a{color:#06c}.site-footer{background:#111;color:#eee;padding:24px}";

impl BenchSite {
    /// Generates the site with its links naming `port`, every page rendered up front.
    pub fn generate(config: &BenchSiteConfig, port: u16) -> BenchSite {
        let kinds = kinds(config);
        let stories: Vec<Story> = (0..kinds.len()).map(|i| story(config, &kinds, i)).collect();
        let teasers: Vec<Teaser> = stories.iter().map(Story::teaser).collect();
        let pages = (0..kinds.len())
            .map(|i| render_page(config, port, i, kinds[i], &stories[i], &teasers))
            .collect();
        BenchSite {
            config: config.clone(),
            port,
            pages,
            on_demand: None,
            robots: Bytes::from_static(ROBOTS_TXT.as_bytes()),
        }
    }

    /// The same site (page for page the bytes [`BenchSite::generate`] makes), but each page
    /// rendered when it is asked for: only the pages' kinds and the teasers other pages show
    /// of them (about 200 bytes a page) are kept, so a site of a million pages fits in a few
    /// hundred MB. The teasers are made on every core at the start (about a minute for a
    /// million pages here).
    pub fn on_demand(config: &BenchSiteConfig, port: u16) -> BenchSite {
        let kinds = kinds(config);
        let n = kinds.len();
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        let chunk = n.div_ceil(threads).max(1);
        let teasers: Vec<Teaser> = std::thread::scope(|scope| {
            let kinds = &kinds;
            let parts: Vec<_> = (0..n)
                .step_by(chunk)
                .map(|from| {
                    scope.spawn(move || {
                        (from..(from + chunk).min(n))
                            .map(|i| story(config, kinds, i).teaser())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            parts
                .into_iter()
                .flat_map(|part| part.join().expect("a teaser thread panicked"))
                .collect()
        });
        BenchSite {
            config: config.clone(),
            port,
            pages: Vec::new(),
            on_demand: Some(OnDemand { kinds, teasers }),
            robots: Bytes::from_static(ROBOTS_TXT.as_bytes()),
        }
    }

    /// How many pages the site has.
    pub fn len(&self) -> usize {
        self.config.pages
    }

    /// Whether the site has no page.
    pub fn is_empty(&self) -> bool {
        self.config.pages == 0
    }

    /// Page `i`: the stored one, or rendered now.
    pub fn page(&self, i: usize) -> Option<Cow<'_, BenchPage>> {
        match &self.on_demand {
            None => self.pages.get(i).map(Cow::Borrowed),
            Some(plan) => {
                let kind = *plan.kinds.get(i)?;
                let story = story(&self.config, &plan.kinds, i);
                Some(Cow::Owned(render_page(
                    &self.config,
                    self.port,
                    i,
                    kind,
                    &story,
                    &plan.teasers,
                )))
            }
        }
    }

    /// Page `i`'s kind.
    pub fn kind(&self, i: usize) -> Option<BenchPageKind> {
        match &self.on_demand {
            None => self.pages.get(i).map(|page| page.kind),
            Some(plan) => plan.kinds.get(i).copied(),
        }
    }

    /// `http://127.0.0.(10+h):PORT`
    pub fn host_origin(&self, h: usize) -> String {
        format!("http://{}:{}", host_addr(h), self.port)
    }

    /// One seed per host: its root.
    pub fn seeds(&self) -> Vec<String> {
        (0..self.config.hosts)
            .map(|h| format!("{}/", self.host_origin(h)))
            .collect()
    }

    /// The hosts as allowed domains (addresses without the port).
    pub fn domains(&self) -> Vec<String> {
        (0..self.config.hosts)
            .map(|h| host_addr(h).to_string())
            .collect()
    }

    /// The page served on host `h` at `path` (query and fragment ignored).
    pub fn lookup(&self, h: usize, target: &str) -> Option<Cow<'_, BenchPage>> {
        let path = target.split(['?', '#']).next().unwrap_or("/");
        let i = if path == "/" {
            h
        } else {
            let i: usize = path.strip_prefix("/p/")?.parse().ok()?;
            if i < self.config.hosts {
                return None;
            }
            i
        };
        (i % self.config.hosts.max(1) == h).then(|| self.page(i))?
    }

    /// Counts by kind, mean HTML bytes and links per page.
    pub fn summary(&self) -> String {
        let n = self.len();
        let count = |f: &dyn Fn(&BenchPageKind) -> bool| {
            (0..n).filter_map(|i| self.kind(i)).filter(f).count()
        };
        // A site rendered on demand is measured on a thousand of its pages.
        let step = if self.on_demand.is_some() {
            (n / 1000).max(1)
        } else {
            1
        };
        let sample: Vec<Cow<'_, BenchPage>> =
            (0..n).step_by(step).filter_map(|i| self.page(i)).collect();
        let bytes: usize = sample.iter().map(|page| page.body.len()).sum();
        let links: usize = sample.iter().map(|page| page.links).sum();
        let sampled = sample.len().max(1);
        format!(
            "{} pages on {} hosts (127.0.0.{}–127.0.0.{}, port {}): {} articles, {} near-duplicates, {} GBK; {:.1} KB and {:.1} links per page on average ({:.1} MB in all{})",
            n,
            self.config.hosts,
            FIRST_HOST_OCTET,
            FIRST_HOST_OCTET as usize + self.config.hosts - 1,
            self.port,
            count(&|k| *k == BenchPageKind::Article),
            count(&|k| matches!(k, BenchPageKind::NearDuplicate { .. })),
            count(&|k| *k == BenchPageKind::Gbk),
            bytes as f64 / sampled as f64 / 1024.0,
            links as f64 / sampled as f64,
            bytes as f64 / sampled as f64 * n as f64 / 1e6,
            if step > 1 {
                format!("; sampled on one page in {step}, rendered per request")
            } else {
                String::new()
            },
        )
    }
}

/// Which pages are near-duplicates and which are Chinese: exact shares, drawn among the
/// non-root pages.
fn kinds(config: &BenchSiteConfig) -> Vec<BenchPageKind> {
    let (n, hosts) = (config.pages, config.hosts.max(1));
    assert!(n >= hosts, "at least one page per host");
    let mut order: Vec<usize> = (hosts..n).collect();
    SplitMix64::for_part(config.seed, "bench-kinds", 0).shuffle(&mut order);
    let duplicates = n * config.duplicate_percent / 100;
    let gbk = n * config.gbk_percent / 100;
    let mut kinds = vec![BenchPageKind::Article; n];
    for &i in order.iter().skip(duplicates).take(gbk) {
        kinds[i] = BenchPageKind::Gbk;
    }
    let mut duplicate = vec![false; n];
    for &i in order.iter().take(duplicates) {
        duplicate[i] = true;
    }
    let originals: Vec<usize> = (0..n)
        .filter(|&i| kinds[i] == BenchPageKind::Article && !duplicate[i])
        .collect();
    let mut pick = SplitMix64::for_part(config.seed, "bench-originals", 0);
    for &i in order.iter().take(duplicates) {
        kinds[i] = BenchPageKind::NearDuplicate {
            of: originals[pick.below(originals.len())],
        };
    }
    kinds
}

/// Page `i`'s story: its own, or (a near-duplicate) its original's with a few words edited.
fn story(config: &BenchSiteConfig, kinds: &[BenchPageKind], i: usize) -> Story {
    let mut rng = SplitMix64::for_part(config.seed, "bench-story", i as u64);
    match kinds[i] {
        BenchPageKind::Article => Story::English(EnglishStory::generate(&mut rng, None)),
        BenchPageKind::Gbk => Story::Chinese(ChineseStory::generate(&mut rng)),
        BenchPageKind::NearDuplicate { of } => {
            let Story::English(mut story) = story(config, kinds, of) else {
                unreachable!("originals are English articles")
            };
            let mut rng = SplitMix64::for_part(config.seed, "bench-edit", i as u64);
            let (paragraphs, _) = edit_words(&mut rng, &story.paragraphs, config.edited_words);
            story.paragraphs = paragraphs;
            Story::English(story)
        }
    }
}

impl Story {
    /// What a page linking to this one shows of it.
    fn teaser(&self) -> Teaser {
        match self {
            Story::English(s) => Teaser {
                title: s.title.clone(),
                summary: s.paragraphs[0]
                    .split(' ')
                    .take(6)
                    .collect::<Vec<_>>()
                    .join(" "),
                date: s.date_display.clone(),
            },
            Story::Chinese(s) => Teaser {
                title: s.title.clone(),
                summary: s.paragraphs[0].chars().take(12).collect(),
                date: s.date_display.clone(),
            },
        }
    }
}

fn render_page(
    config: &BenchSiteConfig,
    port: u16,
    i: usize,
    kind: BenchPageKind,
    story: &Story,
    teasers: &[Teaser],
) -> BenchPage {
    let (n, hosts) = (config.pages, config.hosts);
    let host = i % hosts;
    let mut rng = SplitMix64::for_part(config.seed, "bench-links", i as u64);
    let href = |j: usize| -> String {
        if j % hosts == host {
            page_path(j, hosts)
        } else {
            format!(
                "http://{}:{port}{}",
                host_addr(j % hosts),
                page_path(j, hosts)
            )
        }
    };
    let related: Vec<usize> = (CHILDREN_PER_PAGE * i + 1
        ..=CHILDREN_PER_PAGE * i + CHILDREN_PER_PAGE)
        .filter(|j| *j < n)
        .collect();
    let more: Vec<usize> = (related.len()..config.site_links)
        .map(|_| rng.below(n))
        .collect();
    let nav: Vec<usize> = (0..config.nav_links).map(|_| rng.below(hosts)).collect();
    let chinese = kind == BenchPageKind::Gbk;
    let (title, author, date, paragraphs) = match story {
        Story::English(s) => (&s.title, &s.author, &s.date_display, &s.paragraphs),
        Story::Chinese(s) => (&s.title, &s.author, &s.date_display, &s.paragraphs),
    };

    let mut html = String::with_capacity(36 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"{}\">\n<head>\n<meta charset=\"{}\">\n<title>{} | Loopback Daily</title>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"description\" content=\"{}\">\n<style>{STYLE}</style>\n<script>\n",
        if chinese { "zh" } else { "en" },
        if chinese { "gbk" } else { "utf-8" },
        escape_html(title),
        escape_html(&teasers[i].summary),
    );
    write_script(&mut html, &mut rng, i, config.script_bytes);
    html.push_str("</script>\n</head>\n<body>\n<header class=\"site-header\"><a class=\"logo\" href=\"/\">Loopback Daily</a>\n<nav class=\"main-nav\"><ul>");
    for &h in &nav {
        let _ = write!(html, "<li><a href=\"{}\">Section {h}</a></li>", href(h));
    }
    html.push_str("</ul></nav></header>\n<main>\n<article class=\"story\">\n");
    let _ = write!(
        html,
        "<h1>{}</h1>\n<p class=\"byline\">{} <span class=\"author\">{}</span> · <time>{}</time></p>\n<div class=\"content\">\n",
        escape_html(title),
        if chinese { "作者：" } else { "By" },
        escape_html(author),
        escape_html(date),
    );
    for paragraph in paragraphs {
        let _ = writeln!(html, "<p>{}</p>", escape_html(paragraph));
    }
    html.push_str("</div>\n</article>\n<section class=\"related\"><h2>Related</h2>\n<ul>\n");
    // Related teasers carry their date; the sidebar's do not.
    let teaser = |html: &mut String, j: usize, dated: bool| {
        let t = &teasers[j];
        let _ = write!(
            html,
            "<li class=\"teaser teaser--compact\" data-story=\"{j}\"><a class=\"teaser__link\" href=\"{}\">{}</a><p class=\"teaser__summary\">{}…</p>",
            href(j),
            escape_html(&t.title),
            escape_html(&t.summary),
        );
        if dated {
            let _ = write!(
                html,
                "<span class=\"teaser__meta\">{}</span>",
                escape_html(&t.date)
            );
        }
        html.push_str("</li>\n");
    };
    for &j in &related {
        teaser(&mut html, j, true);
    }
    html.push_str("</ul></section>\n<aside class=\"sidebar\"><h2>More news</h2>\n<ul>\n");
    for &j in &more {
        teaser(&mut html, j, false);
    }
    html.push_str("</ul></aside>\n<section class=\"partners\"><h2>Partners</h2><ul>");
    for k in 0..config.offsite_links {
        let _ = write!(
            html,
            "<li><a href=\"http://partner{}.invalid/news/{}\">Partner {k}</a></li>",
            rng.below(20),
            rng.below(100_000)
        );
    }
    html.push_str("</ul></section>\n</main>\n<footer class=\"site-footer\"><p>&copy; Loopback Daily. Generated for the pipeline benchmark.</p></footer>\n</body>\n</html>\n");

    let links = nav.len() + related.len() + more.len() + config.offsite_links + 1;
    let (body, content_type) = if chinese {
        let (encoded, _, unmappable) = encoding_rs::GBK.encode(&html);
        debug_assert!(!unmappable, "page {i} is not encodable in GBK");
        (Bytes::from(encoded.into_owned()), "text/html; charset=gbk")
    } else {
        (Bytes::from(html), "text/html; charset=utf-8")
    };
    BenchPage {
        host,
        path: page_path(i, hosts),
        kind,
        title: title.clone(),
        links,
        content_type,
        body,
    }
}

/// An inline script of about `bytes` bytes: a state blob of ad slots and a
/// small tracker, as news pages carry.
fn write_script(html: &mut String, rng: &mut SplitMix64, i: usize, bytes: usize) {
    use testsite::vocabulary::{ADJECTIVES, NOUNS};
    let start = html.len();
    let _ = write!(
        html,
        "window.__STATE__={{\"page\":{i},\"edition\":\"intl\",\"slots\":["
    );
    let mut slot = 0;
    while html.len() - start + 700 < bytes {
        if slot > 0 {
            html.push(',');
        }
        let _ = write!(
            html,
            "{{\"id\":\"slot-{slot}\",\"size\":[{},{}],\"keywords\":[\"{}\",\"{}\",\"{}\"],\"floor\":{}.{:02},\"lazy\":{}}}",
            rng.pick(&[300, 728, 160, 320]),
            rng.pick(&[250, 90, 600, 50]),
            rng.pick(NOUNS),
            rng.pick(ADJECTIVES),
            rng.pick(NOUNS),
            rng.below(5),
            rng.below(100),
            rng.chance(50),
        );
        slot += 1;
    }
    html.push_str(
        "]};\n(function(w,d){var q=[],s=w.__STATE__;function track(name,data){q.push({n:name,d:data,t:Date.now()});\
         if(q.length>20){flush();}}function flush(){if(!q.length){return;}var body=JSON.stringify(q);q=[];\
         try{navigator.sendBeacon('/collect',body);}catch(e){}}d.addEventListener('visibilitychange',function(){\
         if(d.visibilityState==='hidden'){flush();}});for(var k=0;k<s.slots.length;k++){var el=d.createElement('div');\
         el.className='ad-slot';el.setAttribute('data-slot',s.slots[k].id);if(s.slots[k].lazy){el.setAttribute('loading','lazy');}}\
         track('view',{page:s.page,edition:s.edition});w.addEventListener('scroll',function(){track('scroll',{y:w.scrollY});},{passive:true});\
         })(window,document);\n",
    );
}

/// A running bench site: one listener per host address, all on one port.
pub struct BenchServer {
    pub site: Arc<BenchSite>,
    stats: Arc<ServeStats>,
    shutdown: Option<watch::Sender<()>>,
}

/// Requests served and when the last one arrived.
#[derive(Debug)]
struct ServeStats {
    started: Instant,
    requests: AtomicU64,
    pages: AtomicU64,
    /// Microseconds from `started` to the latest request.
    last_micros: AtomicU64,
}

impl BenchServer {
    /// Binds every host address on one free port, generates the site for
    /// that port and serves it on the current tokio runtime.
    pub async fn start(config: &BenchSiteConfig) -> std::io::Result<BenchServer> {
        let hosts: Vec<Ipv4Addr> = (0..config.hosts).map(host_addr).collect();
        let listeners = crate::loopback::bind_one_port(&hosts)?;
        let port = listeners[0].local_addr()?.port();
        let config = config.clone();
        let site = tokio::task::spawn_blocking(move || {
            if config.render_on_demand {
                BenchSite::on_demand(&config, port)
            } else {
                BenchSite::generate(&config, port)
            }
        })
        .await
        .map_err(std::io::Error::other)?;
        let site = Arc::new(site);
        let stats = Arc::new(ServeStats {
            started: Instant::now(),
            requests: AtomicU64::new(0),
            pages: AtomicU64::new(0),
            last_micros: AtomicU64::new(0),
        });
        let shutdown = crate::loopback::serve_each(listeners, |h| {
            let (site, stats) = (Arc::clone(&site), Arc::clone(&stats));
            move |request: Request<Incoming>| {
                let response = respond(&site, &stats, h, &request);
                async move { response }
            }
        })?;
        Ok(BenchServer {
            site,
            stats,
            shutdown: Some(shutdown),
        })
    }

    /// (requests, pages served with 200) so far.
    pub fn served(&self) -> (u64, u64) {
        (
            self.stats.requests.load(Ordering::Relaxed),
            self.stats.pages.load(Ordering::Relaxed),
        )
    }

    /// When the latest request arrived.
    pub fn last_request(&self) -> Instant {
        self.stats.started
            + std::time::Duration::from_micros(self.stats.last_micros.load(Ordering::Relaxed))
    }
}

impl Drop for BenchServer {
    fn drop(&mut self) {
        self.shutdown.take();
    }
}

fn respond(
    site: &BenchSite,
    stats: &ServeStats,
    host: usize,
    request: &Request<Incoming>,
) -> Response<Full<Bytes>> {
    stats.requests.fetch_add(1, Ordering::Relaxed);
    stats.last_micros.fetch_max(
        stats.started.elapsed().as_micros() as u64,
        Ordering::Relaxed,
    );
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |target| target.as_str());
    let (status, content_type, body) = if target == "/robots.txt" {
        (200, "text/plain", site.robots.clone())
    } else if let Some(page) = site.lookup(host, target) {
        stats.pages.fetch_add(1, Ordering::Relaxed);
        (200, page.content_type, page.body.clone())
    } else {
        (
            404,
            "text/html; charset=utf-8",
            Bytes::from_static(
                b"<!DOCTYPE html><html><body><h1>404 Not Found</h1></body></html>\n",
            ),
        )
    };
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}

/// Pages per kind, keyed for reports.
pub fn kind_counts(site: &BenchSite) -> HashMap<&'static str, usize> {
    let mut counts = HashMap::new();
    for kind in (0..site.len()).filter_map(|i| site.kind(i)) {
        let name = match kind {
            BenchPageKind::Article => "article",
            BenchPageKind::Gbk => "gbk",
            BenchPageKind::NearDuplicate { .. } => "near-duplicate",
        };
        *counts.entry(name).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> BenchSiteConfig {
        BenchSiteConfig {
            pages: 400,
            hosts: 10,
            ..BenchSiteConfig::default()
        }
    }

    #[test]
    fn deterministic_and_shaped() {
        let a = BenchSite::generate(&small(), 8080);
        let b = BenchSite::generate(&small(), 8080);
        assert_eq!(a.pages.len(), 400);
        for (x, y) in a.pages.iter().zip(&b.pages) {
            assert_eq!(x.body, y.body);
        }
        let counts = kind_counts(&a);
        assert_eq!(counts["near-duplicate"], 40);
        assert_eq!(counts["gbk"], 20);
        let gbk = a
            .pages
            .iter()
            .find(|p| p.kind == BenchPageKind::Gbk)
            .unwrap();
        let (text, _, errors) = encoding_rs::GBK.decode(&gbk.body);
        assert!(!errors && text.contains("<meta charset=\"gbk\">"));
        let mean = a.pages.iter().map(|p| p.body.len()).sum::<usize>() / a.pages.len();
        assert!((24_000..40_000).contains(&mean), "{mean} bytes per page");
    }

    /// A site rendered on demand serves the bytes of the one rendered up front, page for
    /// page, and the same summary.
    #[test]
    fn rendered_on_demand_is_the_same_site() {
        let whole = BenchSite::generate(&small(), 8080);
        let lazy = BenchSite::on_demand(&small(), 8080);
        assert!(lazy.pages.is_empty());
        assert_eq!(lazy.len(), whole.pages.len());
        for (i, page) in whole.pages.iter().enumerate() {
            let served = lazy.lookup(page.host, &page.path).unwrap();
            assert_eq!(served.body, page.body, "page {i}");
            assert_eq!((served.kind, served.links), (page.kind, page.links));
            assert_eq!(lazy.kind(i), Some(page.kind));
        }
        assert!(lazy.lookup(1, "/p/10").is_none(), "page 10 is on host 0");
        assert_eq!(kind_counts(&lazy), kind_counts(&whole));
    }

    #[test]
    fn every_page_is_reachable_from_the_roots() {
        let site = BenchSite::generate(&small(), 8080);
        let mut seen = vec![false; site.pages.len()];
        let mut stack: Vec<usize> = (0..site.config.hosts).collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            let html = String::from_utf8_lossy(&site.pages[i].body).into_owned();
            for part in html.split("href=\"").skip(1) {
                let link = &part[..part.find('"').unwrap()];
                let (h, path) = if let Some(rest) = link.strip_prefix("http://127.0.0.") {
                    let (octet, rest) = rest.split_once(':').unwrap();
                    let path = &rest[rest.find('/').unwrap()..];
                    (octet.parse::<usize>().unwrap() - 10, path)
                } else if link.starts_with('/') {
                    (site.pages[i].host, link)
                } else {
                    continue;
                };
                if site.lookup(h, path).is_some() {
                    let j = path.strip_prefix("/p/").map_or(h, |j| j.parse().unwrap());
                    stack.push(j);
                }
            }
        }
        assert!(seen.iter().all(|s| *s));
    }
}
