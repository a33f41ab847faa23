//! The extractor's article extraction on arbitrary HTML (lossy UTF-8, as the
//! extractor stage reads a page's body), with a fixed page URL.
//!
//! Properties: outlinks and images are absolute URLs; outlinks are http(s)
//! without a fragment; asking for the body's HTML changes nothing else.
#![no_main]

use libfuzzer_sys::fuzz_target;
use url::Url;

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data);
    let base = Url::parse("https://www.example.com/news/2024/story.html?id=7").expect("fixed URL");
    let mut article = extractor::extract_with(&html, &base, extractor::Parts { body_html: true });
    let body_html = article.body_html.take();
    assert!(body_html.is_some(), "the HTML asked for");
    assert_eq!(
        article,
        extractor::extract(&html, &base),
        "with the HTML, the rest changed"
    );
    for link in &article.outlinks {
        let url = Url::parse(&link.url)
            .unwrap_or_else(|e| panic!("outlink {:?} is not a URL: {e}", link.url));
        assert!(matches!(url.scheme(), "http" | "https"), "{url}");
        assert!(url.fragment().is_none(), "{url}");
    }
    for image in &article.images {
        assert!(Url::parse(image).is_ok(), "image {image:?} is not a URL");
    }
});
