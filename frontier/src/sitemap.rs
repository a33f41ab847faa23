//! Sitemaps (sitemaps.org) as a seed source: `Sitemap:` lines of a
//! robots.txt, and the `<loc>`s of a sitemap or a sitemap index, plain or
//! gzip-compressed. Pure: fetching them is the caller's business
//! (`crawler seed --sitemaps`).

use std::io::Read;

/// A sitemap may hold at most 50,000 URLs and 50 MB uncompressed
/// (sitemaps.org); more is not read.
pub const MAX_SITEMAP_BYTES: usize = 50 * 1024 * 1024;

/// What one sitemap file lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    /// Page URLs (`<urlset>`).
    Urls(Vec<String>),
    /// Further sitemaps (`<sitemapindex>`).
    Index(Vec<String>),
}

/// Why a sitemap could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SitemapError {
    #[error("gzip sitemap does not inflate: {0}")]
    Gzip(#[from] std::io::Error),
    #[error("not a sitemap (no <urlset> or <sitemapindex>)")]
    NotASitemap,
}

/// The `Sitemap:` URLs of a robots.txt (the field name is case-insensitive).
pub fn robots_sitemaps(robots_txt: &str) -> Vec<String> {
    robots_txt
        .lines()
        .filter_map(|line| {
            let line = line.split('#').next().unwrap_or("").trim();
            let (field, value) = line.split_once(':')?;
            field
                .trim()
                .eq_ignore_ascii_case("sitemap")
                .then(|| value.trim().to_string())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// Parses a sitemap file, inflating it first if it is gzip.
pub fn parse(bytes: &[u8]) -> Result<Sitemap, SitemapError> {
    let mut inflated = Vec::new();
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(bytes)
            .take(MAX_SITEMAP_BYTES as u64)
            .read_to_end(&mut inflated)?;
        &inflated[..]
    } else {
        &bytes[..bytes.len().min(MAX_SITEMAP_BYTES)]
    };
    let text = String::from_utf8_lossy(bytes);
    let is_index = text.contains("<sitemapindex");
    if !is_index && !text.contains("<urlset") {
        return Err(SitemapError::NotASitemap);
    }
    let locs = locs(&text);
    Ok(if is_index {
        Sitemap::Index(locs)
    } else {
        Sitemap::Urls(locs)
    })
}

/// The contents of every `<loc>` element, unescaped.
fn locs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<loc") {
        let after = &rest[start + 4..];
        // `<loc>` or `<loc attr...>`; not `<location>`.
        let Some(close) = after.find('>') else { break };
        if !(after.starts_with('>') || after.starts_with(char::is_whitespace)) {
            rest = after;
            continue;
        }
        let body = &after[close + 1..];
        let Some(end) = body.find("</loc>") else {
            break;
        };
        let raw = body[..end].trim();
        let raw = raw
            .strip_prefix("<![CDATA[")
            .and_then(|r| r.strip_suffix("]]>"))
            .unwrap_or(raw)
            .trim();
        if !raw.is_empty() {
            out.push(unescape(raw));
        }
        rest = &body[end + 6..];
    }
    out
}

fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#38;", "&")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn robots_lines() {
        let txt = "User-agent: *\nDisallow: /x\nSitemap: https://e.com/s1.xml\nsitemap:https://e.com/s2.xml.gz # idx\nSITEMAP: \n";
        assert_eq!(
            robots_sitemaps(txt),
            ["https://e.com/s1.xml", "https://e.com/s2.xml.gz"]
        );
    }

    #[test]
    fn urlsets_indexes_entities_and_cdata() {
        let urlset = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> https://e.com/a?x=1&amp;y=2 </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc><![CDATA[https://e.com/b]]></loc></url>
  <url><location>not a loc</location><loc>https://e.com/c</loc></url>
</urlset>"#;
        assert_eq!(
            parse(urlset.as_bytes()).unwrap(),
            Sitemap::Urls(vec![
                "https://e.com/a?x=1&y=2".into(),
                "https://e.com/b".into(),
                "https://e.com/c".into()
            ])
        );
        let index =
            "<sitemapindex><sitemap><loc>https://e.com/s1.xml.gz</loc></sitemap></sitemapindex>";
        assert_eq!(
            parse(index.as_bytes()).unwrap(),
            Sitemap::Index(vec!["https://e.com/s1.xml.gz".into()])
        );
        assert!(matches!(
            parse(b"<html>hi</html>"),
            Err(SitemapError::NotASitemap)
        ));
    }

    #[test]
    fn gzip_sitemaps_and_broken_gzip() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"<urlset><url><loc>https://e.com/z</loc></url></urlset>")
            .unwrap();
        let bytes = gz.finish().unwrap();
        assert_eq!(
            parse(&bytes).unwrap(),
            Sitemap::Urls(vec!["https://e.com/z".into()])
        );
        assert!(parse(&[0x1f, 0x8b, 0, 1, 2, 3]).is_err());
    }
}
