//! Decoding every queue message type from arbitrary bytes, as a worker does
//! with a delivery (`pipeline::messages::decode`), a page's body as the
//! extractor reads it (`Page::html`, zstd when the page says so), a stored
//! document, and bundles of messages (`pipeline::bundle`: what unpacks packs
//! again).
//!
//! Properties: a message that decodes encodes again and decodes to itself; a
//! page body never inflates past `MAX_PAGE_HTML_BYTES`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pipeline::messages::{
    decode, encode, Document, FetchTask, Page, UrlBatch, MAX_PAGE_HTML_BYTES,
};

fn round_trip<T>(data: &[u8])
where
    T: serde::Serialize + serde::de::DeserializeOwned + pipeline::messages::Versioned,
    T: PartialEq + std::fmt::Debug,
{
    if let Ok(msg) = decode::<T>(data) {
        let bytes = encode(&msg).expect("a decoded message encodes");
        let back = decode::<T>(&bytes).expect("an encoded message decodes");
        assert_eq!(back, msg);
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip::<UrlBatch>(data);
    round_trip::<FetchTask>(data);
    round_trip::<Page>(data);
    if let Ok(page) = decode::<Page>(data) {
        if let Ok(html) = page.html() {
            assert!(html.len() <= MAX_PAGE_HTML_BYTES);
        }
    }
    round_trip::<Document>(data);
    if let Ok(items) = pipeline::bundle::unpack(data) {
        let owned: Vec<Vec<u8>> = items.iter().map(|i| i.to_vec()).collect();
        for packed in pipeline::bundle::pack(&owned) {
            assert!(pipeline::bundle::unpack(&packed).is_ok());
        }
    }
    let _ = serde_json::from_slice::<pipeline::StoredDocument>(data);
});
