//! Sitemaps (sitemaps.org) as a seed source: `Sitemap:` lines of a
//! robots.txt, and the `<loc>`s of a sitemap or a sitemap index, plain or
//! gzip-compressed, read with `quick-xml`'s streaming reader. Pure: fetching them is the caller's business
//! (`crawler seed --sitemaps`).

use std::io::{BufRead, Read};

use quick_xml::escape::resolve_xml_entity;
use quick_xml::events::{BytesRef, Event};
use quick_xml::Reader;

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

/// Parses a sitemap file, inflating it first if it is gzip. Streams: the
/// XML is read as it inflates, at most [`MAX_SITEMAP_BYTES`] of it.
pub fn parse(bytes: &[u8]) -> Result<Sitemap, SitemapError> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let inflated = flate2::read::GzDecoder::new(bytes).take(MAX_SITEMAP_BYTES as u64);
        read_sitemap(std::io::BufReader::new(inflated))
    } else {
        read_sitemap(&bytes[..bytes.len().min(MAX_SITEMAP_BYTES)])
    }
}

/// What the root element says the file is, once it is seen.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Root {
    Unknown,
    Urlset,
    Index,
}

/// The `<loc>`s of a sitemap read from `input`: the text of every `<loc>`
/// element (not `<image:loc>` and the like: only page or sitemap URLs),
/// entities and character references resolved, CDATA taken as it is,
/// trimmed; empty ones skipped. A file that stops being well-formed is
/// read up to there (a cut file still gives the URLs before the cut); one
/// whose gzip breaks is an error.
fn read_sitemap(input: impl BufRead) -> Result<Sitemap, SitemapError> {
    let mut reader = Reader::from_reader(input);
    // Lenient as sitemap readers are: a stray end tag does not stop the read.
    reader.config_mut().check_end_names = false;
    let mut root = Root::Unknown;
    let mut locs = Vec::new();
    // The text of the `<loc>` being read, if one is open.
    let mut loc: Option<String> = None;
    let mut buf = Vec::new();
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(quick_xml::Error::Io(e)) => {
                return Err(SitemapError::Gzip(std::io::Error::new(
                    e.kind(),
                    e.to_string(),
                )))
            }
            Err(_) => break,
        };
        match event {
            Event::Start(e) => match e.name().as_ref() {
                "loc" => loc = Some(String::new()),
                "urlset" if root == Root::Unknown => root = Root::Urlset,
                "sitemapindex" if root == Root::Unknown => root = Root::Index,
                _ => {}
            },
            Event::Empty(e) => match e.name().as_ref() {
                "urlset" if root == Root::Unknown => root = Root::Urlset,
                "sitemapindex" if root == Root::Unknown => root = Root::Index,
                _ => {}
            },
            Event::Text(t) => {
                if let Some(l) = loc.as_mut() {
                    l.push_str(&t);
                }
            }
            Event::CData(t) => {
                if let Some(l) = loc.as_mut() {
                    l.push_str(&t);
                }
            }
            Event::GeneralRef(r) => {
                if let Some(l) = loc.as_mut() {
                    push_reference(l, &r);
                }
            }
            Event::End(e) if e.name().as_ref() == "loc" => {
                if let Some(l) = loc.take() {
                    let l = l.trim();
                    if !l.is_empty() {
                        locs.push(l.to_string());
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    match root {
        Root::Unknown => Err(SitemapError::NotASitemap),
        Root::Urlset => Ok(Sitemap::Urls(locs)),
        Root::Index => Ok(Sitemap::Index(locs)),
    }
}

/// `&name;` or `&#n;` in a loc: the character it stands for; an entity
/// XML does not predefine stays as written.
fn push_reference(out: &mut String, reference: &BytesRef<'_>) {
    if let Ok(Some(c)) = reference.resolve_char_ref() {
        out.push(c);
    } else if let Some(text) = resolve_xml_entity(reference) {
        out.push_str(text);
    } else {
        out.push('&');
        out.push_str(reference);
        out.push(';');
    }
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
    fn cdata_and_entities_in_a_loc() {
        let urlset = "<urlset><url><loc><![CDATA[https://e.com/a?x=1&y=2]]></loc></url>\
            <url><loc>https://e.com/b?x=1&amp;y=2&#38;z=&lt;3&gt;</loc></url>\
            <url><loc> <![CDATA[https://e.com/c]]> </loc></url>\
            <url><loc>https://e.com/&#x64;?q=&apos;&quot;&nbsp;</loc></url></urlset>";
        assert_eq!(
            parse(urlset.as_bytes()).unwrap(),
            Sitemap::Urls(vec![
                "https://e.com/a?x=1&y=2".into(),
                "https://e.com/b?x=1&y=2&z=<3>".into(),
                "https://e.com/c".into(),
                "https://e.com/d?q='\"&nbsp;".into(),
            ])
        );
    }

    #[test]
    fn image_locs_are_not_pages_and_a_cut_file_keeps_its_urls() {
        let urlset = "<urlset><url><loc>https://e.com/a</loc><image:image>\
            <image:loc>https://e.com/a.jpg</image:loc></image:image></url>\
            <url><loc>https://e.com/b</loc></url><url><loc>https://e.com/c";
        assert_eq!(
            parse(urlset.as_bytes()).unwrap(),
            Sitemap::Urls(vec!["https://e.com/a".into(), "https://e.com/b".into()])
        );
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
