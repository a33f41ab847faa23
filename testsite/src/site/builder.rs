//! Building the site from its config: which articles are originals,
//! mirrors, copies and edits, then every page kind in turn (Chinese and
//! lying pages, private pages, redirects, errors and files, index pages,
//! sitemaps, robots.txt and the hostile endpoints).

use std::sync::OnceLock;

use bytes::Bytes;

use crate::html::{self, ArticleView, ChineseArticleView, IndexView, LinkItem};
use crate::prng::SplitMix64;
use crate::text::{edit_words, ChineseStory, EnglishStory, StoryTopic};

use super::{
    HostileKind, PageKind, PageSpec, Site, SiteConfig, StoredBody, StoredResponse, HOSTILE_PATHS,
    LOOPBACK_HOST, PORT_PLACEHOLDER,
};

const HTML_UTF8: &str = "text/html; charset=utf-8";

/// The fixed set of lying-charset pages: (path, true encoding, header charset, meta charset).
pub(super) const LIES: &[(&str, &str, Option<&str>, Option<&str>)] = &[
    ("/lie/gbk-declared-utf8", "GBK", Some("utf-8"), Some("gbk")),
    ("/lie/gbk-declared-latin1", "GBK", Some("iso-8859-1"), None),
    (
        "/lie/gbk-both-say-utf8",
        "GBK",
        Some("utf-8"),
        Some("utf-8"),
    ),
    ("/lie/gbk-undeclared", "GBK", None, None),
    ("/lie/utf8-meta-gb2312", "UTF-8", None, Some("gb2312")),
    (
        "/lie/utf8-both-say-windows1252",
        "UTF-8",
        Some("windows-1252"),
        Some("windows-1252"),
    ),
    ("/lie/utf8-undeclared", "UTF-8", None, None),
];

/// Error pages: (status, Retry-After seconds).
const ERRORS: &[(u16, Option<u64>)] = &[(404, None), (500, None), (503, Some(2)), (429, Some(1))];

/// Which articles play which extra role; roles never overlap.
struct ArticleRoles {
    mirrors: Vec<usize>,
    copies: Vec<usize>,
    edits: Vec<usize>,
    same_topic_pairs: Vec<(usize, usize)>,
}

impl ArticleRoles {
    fn choose(config: &SiteConfig) -> Self {
        let mut order: Vec<usize> = (0..config.articles).collect();
        SplitMix64::for_part(config.seed, "roles", 0).shuffle(&mut order);
        let mut remaining = order.into_iter();
        let mut take = |count: usize| -> Vec<usize> {
            let mut taken: Vec<usize> = remaining.by_ref().take(count).collect();
            taken.sort_unstable();
            taken
        };
        let mirrors = take(config.mirrors);
        let copies = take(config.copies);
        let edits = take(config.edits);
        let pair_members = take(config.same_topic_pairs * 2);
        let same_topic_pairs = pair_members
            .chunks_exact(2)
            .map(|pair| (pair[0], pair[1]))
            .collect();
        Self {
            mirrors,
            copies,
            edits,
            same_topic_pairs,
        }
    }
}

/// Accumulates pages, then lays out the index tree over them.
pub(super) struct SiteBuilder<'a> {
    config: &'a SiteConfig,
    pages: Vec<PageSpec>,
    responses: Vec<StoredResponse>,
    /// Links the index pages list, with their text.
    headlines: Vec<LinkItem>,
    /// Number of index pages, needed by the navigation of every page.
    index_pages: usize,
}

impl<'a> SiteBuilder<'a> {
    pub(super) fn new(config: &'a SiteConfig) -> Self {
        let mut builder = Self {
            config,
            pages: Vec::new(),
            responses: Vec::new(),
            headlines: Vec::new(),
            index_pages: 1,
        };
        builder.index_pages = builder
            .listed_page_count()
            .div_ceil(builder.links_per_index())
            .max(1);
        builder
    }

    fn links_per_index(&self) -> usize {
        self.config.links_per_index.max(1)
    }

    /// How many pages the index tree will list; must match what `build` adds.
    fn listed_page_count(&self) -> usize {
        let roles = ArticleRoles::choose(self.config);
        self.config.articles
            + self.config.zh_articles
            + roles.mirrors.len()
            + roles.copies.len()
            + roles.edits.len()
            + LIES.len()
            + self.config.private_pages
            + self.redirect_count()
            + 2 // /r/outside, /r/absolute
            + 1 // /loop/a
            + ERRORS.len()
            + 1 // /file.pdf
    }

    fn redirect_count(&self) -> usize {
        if self.config.articles == 0 {
            0
        } else {
            self.config.redirects
        }
    }

    fn add(
        &mut self,
        spec: PageSpec,
        headers: Vec<(&'static str, String)>,
        body: StoredBody,
        headline: Option<&str>,
    ) {
        if let Some(text) = headline {
            self.headlines.push(LinkItem::new(spec.path.clone(), text));
        }
        let mut headers = headers;
        headers.insert(0, ("content-type", spec.content_type.clone()));
        self.pages.push(spec);
        self.responses.push(StoredResponse { headers, body });
    }

    fn add_html(&mut self, spec: PageSpec, body: impl Into<Bytes>, headline: Option<&str>) {
        self.add(spec, Vec::new(), StoredBody::Bytes(body.into()), headline);
    }

    pub(super) fn build(mut self) -> Site {
        let roles = ArticleRoles::choose(self.config);
        self.add_articles(&roles);
        self.add_chinese_articles();
        self.add_lies();
        self.add_private_pages();
        self.add_redirects();
        self.add_errors_and_files();
        debug_assert_eq!(self.headlines.len(), self.listed_page_count());
        self.add_index_pages();
        self.add_robots_and_hostile();
        self.add_sitemaps();

        let by_path = self
            .pages
            .iter()
            .enumerate()
            .map(|(index, page)| (page.path.clone(), index))
            .collect();
        Site {
            config: self.config.clone(),
            pages: self.pages,
            responses: self.responses,
            by_path,
            port: None,
            host: LOOPBACK_HOST.to_string(),
            gzip_bomb: OnceLock::new(),
        }
    }

    fn add_articles(&mut self, roles: &ArticleRoles) {
        let config = self.config;
        let count = config.articles;
        let mut topics: Vec<StoryTopic> = (0..count)
            .map(|number| {
                StoryTopic::generate(&mut SplitMix64::for_part(
                    config.seed,
                    "topic",
                    number as u64,
                ))
            })
            .collect();
        let mut same_topic_as: Vec<Option<usize>> = vec![None; count];
        for &(first, second) in &roles.same_topic_pairs {
            topics[second] = topics[first].clone();
            same_topic_as[first] = Some(second);
            same_topic_as[second] = Some(first);
        }
        let stories: Vec<EnglishStory> = (0..count)
            .map(|number| {
                let mut rng = SplitMix64::for_part(config.seed, "article", number as u64);
                EnglishStory::generate(&mut rng, Some(&topics[number]))
            })
            .collect();

        for (number, story) in stories.iter().enumerate() {
            let path = format!("/article/{number}");
            let mut rng = SplitMix64::for_part(config.seed, "related", number as u64);
            let mut other = || rng.below(count);
            let mut related = vec![
                LinkItem::new(format!("../article/{}", other()), "Background"),
                LinkItem::new(format!("/article/{}?ref=related", other()), "Analysis"),
                LinkItem::new(format!("/article/{}#comments", other()), "Readers respond"),
                LinkItem::new(
                    format!("http://localhost:{PORT_PLACEHOLDER}/article/{}", other()),
                    "Earlier coverage",
                ),
                LinkItem::new(
                    format!("http://127.0.0.1:{PORT_PLACEHOLDER}/article/{}", other()),
                    "Timeline",
                ),
                LinkItem::new(
                    format!("http://outside.invalid/news/{}", other()),
                    "Partner report",
                ),
            ];
            if let Some(partner) = same_topic_as[number] {
                related.insert(
                    0,
                    LinkItem::new(
                        format!("/article/{partner}"),
                        stories[partner].title.clone(),
                    ),
                );
            }
            let most_read: Vec<LinkItem> = (0..4)
                .map(|_| {
                    let target = other();
                    LinkItem::new(format!("/article/{target}"), stories[target].title.clone())
                })
                .collect();
            let view = ArticleView {
                path: &path,
                title: &story.title,
                author: &story.author,
                date_display: &story.date_display,
                date_iso: &story.date_iso,
                paragraphs: &story.paragraphs,
                related: &related,
                most_read: &most_read,
            };
            let (html, links) = html::news_article(&view, self.index_pages);
            let body = Bytes::from(html);
            let spec = PageSpec {
                links,
                same_topic_as: same_topic_as[number].map(|partner| format!("/article/{partner}")),
                ..english_spec(&path, PageKind::Article, story, story.body_text())
            };
            self.add_html(spec, body.clone(), Some(&story.title));

            if roles.copies.contains(&number) {
                let copy_path = format!("/copy/{number}");
                let spec = PageSpec {
                    links: self
                        .pages
                        .last()
                        .map(|page| page.links.clone())
                        .unwrap_or_default(),
                    duplicate_of: Some(path.clone()),
                    ..english_spec(&copy_path, PageKind::Copy, story, story.body_text())
                };
                self.add_html(spec, body.clone(), Some(&story.title));
            }
            if roles.mirrors.contains(&number) {
                let mirror_path = format!("/mirror/{number}");
                let (html, links) = html::mirror_article(&ArticleView {
                    path: &mirror_path,
                    ..view.clone()
                });
                let spec = PageSpec {
                    links,
                    duplicate_of: Some(path.clone()),
                    ..english_spec(&mirror_path, PageKind::Mirror, story, story.body_text())
                };
                self.add_html(spec, html, Some(&format!("{} (syndicated)", story.title)));
            }
            if roles.edits.contains(&number) {
                let edit_path = format!("/edit/{number}");
                let mut rng = SplitMix64::for_part(config.seed, "edit", number as u64);
                let changed_words = rng.between(1, 2);
                let (paragraphs, _) = edit_words(&mut rng, &story.paragraphs, changed_words);
                let (html, links) = html::news_article(
                    &ArticleView {
                        paragraphs: &paragraphs,
                        ..view.clone()
                    },
                    self.index_pages,
                );
                let spec = PageSpec {
                    links,
                    duplicate_of: Some(path.clone()),
                    ..english_spec(&edit_path, PageKind::Edit, story, paragraphs.join("\n"))
                };
                self.add_html(spec, html, Some(&format!("{} (updated)", story.title)));
            }
        }
    }

    fn add_chinese_articles(&mut self) {
        let config = self.config;
        let count = config.zh_articles;
        for number in 0..count {
            let path = format!("/zh/{number}");
            let mut rng = SplitMix64::for_part(config.seed, "zh", number as u64);
            let story = ChineseStory::generate(&mut rng);
            let related: Vec<LinkItem> = (0..4)
                .map(|slot| {
                    let target = rng.below(count);
                    let href = if slot % 2 == 0 {
                        format!("/zh/{target}")
                    } else {
                        format!("../zh/{target}")
                    };
                    LinkItem::new(href, format!("相关报道{}", slot + 1))
                })
                .collect();
            let (html, links) = html::chinese_article(&ChineseArticleView {
                title: &story.title,
                author: &story.author,
                date_display: &story.date_display,
                paragraphs: &story.paragraphs,
                related: &related,
                meta_charset: Some("gbk"),
            });
            let (bytes, _, _) = encoding_rs::GBK.encode(&html);
            let spec = PageSpec {
                links,
                header_charset: Some("gbk".to_string()),
                meta_charset: Some("gbk".to_string()),
                ..chinese_spec(
                    &path,
                    PageKind::ZhArticle,
                    "text/html; charset=gbk",
                    &story,
                    "GBK",
                )
            };
            self.add_html(spec, bytes.into_owned(), Some(&story.title));
        }
    }

    fn add_lies(&mut self) {
        for (number, &(path, true_encoding, header_charset, meta_charset)) in
            LIES.iter().enumerate()
        {
            let mut rng = SplitMix64::for_part(self.config.seed, "lie", number as u64);
            let story = ChineseStory::generate(&mut rng);
            let (html, links) = html::chinese_article(&ChineseArticleView {
                title: &story.title,
                author: &story.author,
                date_display: &story.date_display,
                paragraphs: &story.paragraphs,
                related: &[LinkItem::new("/", "返回首页")],
                meta_charset,
            });
            let bytes: Vec<u8> = if true_encoding == "GBK" {
                encoding_rs::GBK.encode(&html).0.into_owned()
            } else {
                html.into_bytes()
            };
            let content_type = match header_charset {
                Some(charset) => format!("text/html; charset={charset}"),
                None => "text/html".to_string(),
            };
            let spec = PageSpec {
                links,
                header_charset: header_charset.map(str::to_string),
                meta_charset: meta_charset.map(str::to_string),
                ..chinese_spec(path, PageKind::Lie, &content_type, &story, true_encoding)
            };
            self.add_html(spec, bytes, Some(&story.title));
        }
    }

    fn add_private_pages(&mut self) {
        for number in 0..self.config.private_pages {
            let path = format!("/private/{number}");
            let title = format!("Staff notes {number}");
            let paragraphs = vec![format!(
                "Internal page {number}. A polite crawler never fetches this page because robots.txt disallows /private/."
            )];
            let (html, links) =
                html::simple_page(&title, &paragraphs, &[LinkItem::new("/", "Home")]);
            let spec = PageSpec {
                links,
                title: Some(title.clone()),
                body_text: Some(paragraphs.join("\n")),
                true_encoding: Some("UTF-8".to_string()),
                header_charset: Some("utf-8".to_string()),
                ..PageSpec::new(&path, PageKind::Private, 200, HTML_UTF8)
            };
            self.add_html(spec, html, Some(&title));
        }
    }

    fn add_redirect(&mut self, path: &str, status: u16, location: &str, headline: Option<&str>) {
        let (html, links) = html::simple_page("Moved", &[], &[LinkItem::new(location, "Continue")]);
        let spec = PageSpec {
            links,
            redirect_to: Some(location.to_string()),
            ..PageSpec::new(path, PageKind::Redirect, status, HTML_UTF8)
        };
        self.add(
            spec,
            vec![("location", location.to_string())],
            StoredBody::Bytes(html.into()),
            headline,
        );
    }

    fn add_redirects(&mut self) {
        let articles = self.config.articles;
        for number in 0..self.redirect_count() {
            let target = (number * 7919 + 3) % articles;
            self.add_redirect(
                &format!("/r/{number}"),
                301,
                &format!("/article/{target}"),
                Some(&format!("Short link {number}")),
            );
        }
        self.add_redirect(
            "/r/outside",
            302,
            "http://outside.invalid/landing",
            Some("Partner offer"),
        );
        self.add_redirect(
            "/r/absolute",
            302,
            &format!("http://127.0.0.1:{PORT_PLACEHOLDER}/about"),
            Some("About the newsroom"),
        );
        self.add_redirect("/loop/a", 302, "/loop/b", Some("Archive"));
        self.add_redirect("/loop/b", 302, "/loop/a", None);
    }

    fn add_errors_and_files(&mut self) {
        for &(status, retry_after) in ERRORS {
            let path = format!("/error/{status}");
            let title = format!("Error {status}");
            let (html, links) =
                html::simple_page(&title, &[format!("The server answered {status}.")], &[]);
            let spec = PageSpec {
                links,
                retry_after_secs: retry_after,
                ..PageSpec::new(&path, PageKind::Error, status, HTML_UTF8)
            };
            let headers = retry_after
                .map(|seconds| vec![("retry-after", seconds.to_string())])
                .unwrap_or_default();
            self.add(
                spec,
                headers,
                StoredBody::Bytes(html.into()),
                Some(&format!("Service notice {status}")),
            );
        }

        let pdf: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";
        let spec = PageSpec {
            title: Some("Annual report (PDF)".to_string()),
            ..PageSpec::new("/file.pdf", PageKind::NonHtml, 200, "application/pdf")
        };
        self.add(
            spec,
            Vec::new(),
            StoredBody::Bytes(Bytes::from_static(pdf)),
            Some("Annual report (PDF)"),
        );

        let about_text = vec![
            "The Daily Ledger is a generated newspaper served for crawler tests.".to_string(),
            "Every article on this site is written by a pseudo-random generator from a seed."
                .to_string(),
        ];
        let (html, links) =
            html::simple_page("About us", &about_text, &[LinkItem::new("/", "Front page")]);
        let spec = PageSpec {
            links,
            title: Some("About us".to_string()),
            body_text: Some(about_text.join("\n")),
            true_encoding: Some("UTF-8".to_string()),
            header_charset: Some("utf-8".to_string()),
            ..PageSpec::new("/about", PageKind::About, 200, HTML_UTF8)
        };
        self.add_html(spec, html, None);
    }

    /// Lays the headlines out over a tree of index pages: page `i` lists
    /// headlines `i*L..(i+1)*L` and links its children `b*i+1..=b*i+b`, with
    /// the branching `b` chosen so that every headline is within depth 3 of
    /// `/` (pages at depth ≤ 2 hold all headlines).
    fn add_index_pages(&mut self) {
        let per_page = self.links_per_index();
        let index_pages = self.index_pages;
        let mut branching = 2;
        while 1 + branching + branching * branching < index_pages {
            branching += 1;
        }
        let mut headlines = std::mem::take(&mut self.headlines);
        let mut rng = SplitMix64::for_part(self.config.seed, "index", 0);
        rng.shuffle(&mut headlines);
        for headline in &mut headlines {
            if rng.chance(25) {
                headline.href = format!("..{}", headline.href);
            }
        }
        let index_path = |number: usize| {
            if number == 0 {
                "/".to_string()
            } else {
                format!("/list/{number}")
            }
        };
        let hostile_links: Vec<LinkItem> = if self.config.link_hostile {
            HOSTILE_PATHS
                .iter()
                .map(|(path, _)| {
                    LinkItem::new(
                        *path,
                        format!("Live feed {}", path.trim_start_matches("/hostile/")),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        for number in 0..index_pages {
            let start = (number * per_page).min(headlines.len());
            let end = ((number + 1) * per_page).min(headlines.len());
            let sections: Vec<LinkItem> = (branching * number + 1..=branching * number + branching)
                .filter(|child| *child < index_pages)
                .map(|child| LinkItem::new(index_path(child), format!("Section {child}")))
                .collect();
            let title = if number == 0 {
                "Front page".to_string()
            } else {
                format!("Section {number}")
            };
            let (html, links) = html::index_page(&IndexView {
                title: &title,
                list_pages: index_pages,
                headlines: &headlines[start..end],
                sections: &sections,
                previous: (number > 0)
                    .then(|| LinkItem::new(index_path(number - 1), "Previous page")),
                next: (number + 1 < index_pages)
                    .then(|| LinkItem::new(index_path(number + 1), "Next page")),
                extra: if number == 0 { &hostile_links } else { &[] },
            });
            let spec = PageSpec {
                links,
                title: Some(title),
                true_encoding: Some("UTF-8".to_string()),
                header_charset: Some("utf-8".to_string()),
                ..PageSpec::new(index_path(number), PageKind::Index, 200, HTML_UTF8)
            };
            self.add_html(spec, html, None);
        }
    }

    /// `/sitemap.xml`, a sitemap index of `/sitemap-articles.xml` (every
    /// English article) and `/sitemap-zh.xml` (every Chinese one), with
    /// absolute URLs. Not linked from any page.
    fn add_sitemaps(&mut self) {
        let origin = format!("http://127.0.0.1:{PORT_PLACEHOLDER}");
        // The sitemap of every page of one kind.
        let urlset = |kind: PageKind| {
            let mut xml = String::from(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
            );
            for p in self.pages.iter().filter(|p| p.kind == kind) {
                xml.push_str(&format!("  <url><loc>{origin}{}</loc></url>\n", p.path));
            }
            xml.push_str("</urlset>\n");
            xml
        };
        let index = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n  <sitemap><loc>{origin}/sitemap-articles.xml</loc></sitemap>\n  <sitemap><loc>{origin}/sitemap-zh.xml</loc></sitemap>\n</sitemapindex>\n"
        );
        for (path, body) in [
            ("/sitemap.xml", index),
            ("/sitemap-articles.xml", urlset(PageKind::Article)),
            ("/sitemap-zh.xml", urlset(PageKind::ZhArticle)),
        ] {
            let spec = PageSpec::new(path, PageKind::NonHtml, 200, "application/xml");
            self.add(spec, Vec::new(), StoredBody::Bytes(body.into()), None);
        }
    }

    fn add_robots_and_hostile(&mut self) {
        let (status, body) = match &self.config.robots_txt {
            Some(text) => (200, text.clone()),
            None => (404, "not found\n".to_string()),
        };
        let spec = PageSpec::new(
            "/robots.txt",
            PageKind::Robots,
            status,
            "text/plain; charset=utf-8",
        );
        self.add(spec, Vec::new(), StoredBody::Bytes(body.into()), None);

        for &(path, kind) in HOSTILE_PATHS {
            let (content_type, headers) = match kind {
                HostileKind::GzipBomb => {
                    (HTML_UTF8, vec![("content-encoding", "gzip".to_string())])
                }
                _ => (HTML_UTF8, Vec::new()),
            };
            let spec = PageSpec::new(path, PageKind::Hostile(kind), 200, content_type);
            self.add(spec, headers, StoredBody::Hostile(kind), None);
        }
    }
}

fn english_spec(path: &str, kind: PageKind, story: &EnglishStory, body_text: String) -> PageSpec {
    PageSpec {
        title: Some(story.title.clone()),
        author: Some(story.author.clone()),
        published: Some(story.date_display.clone()),
        body_text: Some(body_text),
        true_encoding: Some("UTF-8".to_string()),
        header_charset: Some("utf-8".to_string()),
        meta_charset: Some("utf-8".to_string()),
        ..PageSpec::new(path, kind, 200, HTML_UTF8)
    }
}

fn chinese_spec(
    path: &str,
    kind: PageKind,
    content_type: &str,
    story: &ChineseStory,
    true_encoding: &str,
) -> PageSpec {
    PageSpec {
        title: Some(story.title.clone()),
        author: Some(story.author.clone()),
        published: Some(story.date_display.clone()),
        body_text: Some(story.body_text()),
        true_encoding: Some(true_encoding.to_string()),
        ..PageSpec::new(path, kind, 200, content_type)
    }
}
