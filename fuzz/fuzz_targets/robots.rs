//! robots.txt: the fetcher's rules, read from the record cached in the store
//! (`A`, `R` + the robots.txt body, `D` + outcome and reason), matched
//! against a path; and the frontier's `Sitemap:` lines of the same body.
//!
//! Input: a length byte and that many bytes of path (lossy UTF-8), then the
//! record.
#![no_main]

use fetcher::http::{robots_token, user_agent};
use fetcher::robots::Rules;
use libfuzzer_sys::fuzz_target;
use url::Url;

fuzz_target!(|data: &[u8]| {
    let Some((&len, rest)) = data.split_first() else {
        return;
    };
    let (path, record) = rest.split_at((len as usize).min(rest.len()));
    let path = String::from_utf8_lossy(path);
    let base = Url::parse("http://example.com/").expect("fixed URL");
    let url = base.join(&path).unwrap_or(base);

    let agent = robots_token(&user_agent(None));
    let rules = Rules::from_record(record, &agent);
    let _ = rules.allowed(&url);
    if let Some(delay) = rules.crawl_delay() {
        // The fetcher turns it into milliseconds for the host record.
        let _ = (delay * 1000.0) as u64;
    }
    if let Some(body) = record.strip_prefix(b"R") {
        let _ = frontier::sitemap::robots_sitemaps(&String::from_utf8_lossy(body));
    }
});
