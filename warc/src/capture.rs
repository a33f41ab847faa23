//! The records of one fetched page (pure): `request`, then `response` (an
//! original page) or `revisit` (a near-duplicate), then `metadata`.
//!
//! The request and metadata records name the response (or revisit) in
//! `WARC-Concurrent-To`. A revisit keeps the HTTP headers of the page and
//! not its payload, and says what it revisits: `WARC-Refers-To-Target-URI`
//! and `WARC-Refers-To-Date` of the original's response record (and
//! `WARC-Refers-To`, its record id, when the original's store knows it),
//! under the profile [`NEAR_DUPLICATE_PROFILE`] with the SimHash evidence
//! in `WARC-Simhash*` fields.

use crate::record::{http_payload_offset, Record, RecordType};

/// The `WARC-Profile` of a near-duplicate's revisit record. Not one of
/// the standard's two profiles (identical payload digest, server not
/// modified): the payload differs from the original's by at most the
/// SimHash distance in `WARC-Simhash-Distance`, so the original stands in
/// for it. A URN of this crawler's own, not a third party's URI.
pub const NEAR_DUPLICATE_PROFILE: &str = "urn:x-dedup-crawler:revisit:simhash-near-duplicate";

/// `Content-Type` of the request, response and revisit blocks.
pub const HTTP_REQUEST_TYPE: &str = "application/http;msgtype=request";
pub const HTTP_RESPONSE_TYPE: &str = "application/http;msgtype=response";
/// `Content-Type` of the metadata block: the extracted fields as JSON.
pub const METADATA_TYPE: &str = "application/json";

/// One fetch, as the records need it.
#[derive(Debug, Clone, Copy)]
pub struct Capture<'a> {
    /// The URL that was fetched (`WARC-Target-URI`).
    pub target_uri: &'a str,
    /// When it was fetched (`WARC-Date`, W3C ISO 8601 UTC).
    pub date: &'a str,
    /// The request line and headers as sent, ending with the empty line.
    pub request_head: &'a [u8],
    /// The status line and headers as received, ending with the empty line.
    pub response_head: &'a [u8],
    /// The body as the HTTP layer gave it (not decoded to UTF-8).
    pub body: &'a [u8],
    /// The extracted fields (JSON) for the metadata record.
    pub metadata: &'a [u8],
}

/// The original a near-duplicate's revisit record points to.
#[derive(Debug, Clone, Copy)]
pub struct Original<'a> {
    /// `WARC-Target-URI` of the original's response record.
    pub target_uri: &'a str,
    /// `WARC-Date` of the original's response record.
    pub date: &'a str,
    /// `WARC-Record-ID` of the original's response record, when known.
    pub record_id: Option<&'a str>,
}

/// Why a page is a near-duplicate of its original.
#[derive(Debug, Clone, Copy)]
pub struct NearDuplicate<'a> {
    pub original: Original<'a>,
    /// Hamming distance between the two SimHashes.
    pub distance: u32,
    /// This page's SimHash (16 hex digits).
    pub simhash: &'a str,
    /// The SimHash radius that applied to the pair.
    pub radius: Option<u32>,
    /// The MinHash estimate of the two bodies' Jaccard similarity.
    pub jaccard: Option<f32>,
}

/// The records of one page, in the order they are written; the second is
/// the response or the revisit.
pub fn records(capture: &Capture, duplicate: Option<&NearDuplicate>) -> Vec<Record> {
    let main = match duplicate {
        None => {
            let mut block = Vec::with_capacity(capture.response_head.len() + capture.body.len());
            block.extend_from_slice(capture.response_head);
            block.extend_from_slice(capture.body);
            Record::new(RecordType::Response, capture.date)
                .field("WARC-Target-URI", capture.target_uri)
                .block(HTTP_RESPONSE_TYPE, block, Some(capture.response_head.len()))
        }
        Some(dup) => revisit(capture, dup),
    };
    let request = Record::new(RecordType::Request, capture.date)
        .field("WARC-Target-URI", capture.target_uri)
        .field("WARC-Concurrent-To", &main.id)
        .block(
            HTTP_REQUEST_TYPE,
            capture.request_head.to_vec(),
            http_payload_offset(capture.request_head),
        );
    let metadata = Record::new(RecordType::Metadata, capture.date)
        .field("WARC-Target-URI", capture.target_uri)
        .field("WARC-Concurrent-To", &main.id)
        .block(METADATA_TYPE, capture.metadata.to_vec(), None);
    vec![request, main, metadata]
}

/// A near-duplicate's revisit record: its HTTP headers, no payload.
fn revisit(capture: &Capture, dup: &NearDuplicate) -> Record {
    let mut rec = Record::new(RecordType::Revisit, capture.date)
        .field("WARC-Target-URI", capture.target_uri)
        .field("WARC-Profile", NEAR_DUPLICATE_PROFILE)
        .field("WARC-Refers-To-Target-URI", dup.original.target_uri)
        .field("WARC-Refers-To-Date", dup.original.date);
    if let Some(id) = dup.original.record_id {
        rec.set_field("WARC-Refers-To", id);
    }
    rec.set_field("WARC-Simhash", dup.simhash);
    rec.set_field("WARC-Simhash-Distance", &dup.distance.to_string());
    if let Some(radius) = dup.radius {
        rec.set_field("WARC-Simhash-Radius", &radius.to_string());
    }
    if let Some(jaccard) = dup.jaccard {
        rec.set_field("WARC-Minhash-Jaccard", &format!("{jaccard:.3}"));
    }
    // The block is the headers alone: no WARC-Payload-Digest, which would
    // claim a payload this record does not hold (and, under the
    // identical-payload profile, one equal to the original's).
    rec.block(HTTP_RESPONSE_TYPE, capture.response_head.to_vec(), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::sha1_digest;

    fn capture() -> Capture<'static> {
        Capture {
            target_uri: "http://site.example/copy/1",
            date: "2026-11-25T17:10:00Z",
            request_head: b"GET /copy/1 HTTP/1.1\r\nHost: site.example\r\n\r\n",
            response_head: b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n",
            body: b"<p>hi</p>",
            metadata: br#"{"title":"hi"}"#,
        }
    }

    #[test]
    fn an_original_is_request_response_metadata_linked_to_the_response() {
        let recs = records(&capture(), None);
        let kinds: Vec<_> = recs.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                RecordType::Request,
                RecordType::Response,
                RecordType::Metadata
            ]
        );
        let response = &recs[1];
        assert_eq!(
            recs[0].get("WARC-Concurrent-To"),
            Some(response.id.as_str())
        );
        assert_eq!(
            recs[2].get("WARC-Concurrent-To"),
            Some(response.id.as_str())
        );
        assert_eq!(
            response.block,
            [capture().response_head, capture().body].concat()
        );
        assert_eq!(
            response.get("WARC-Payload-Digest"),
            Some(sha1_digest(b"<p>hi</p>").as_str())
        );
        assert_eq!(response.get("Content-Type"), Some(HTTP_RESPONSE_TYPE));
        assert_eq!(recs[0].get("Content-Type"), Some(HTTP_REQUEST_TYPE));
        // A GET has no body: its payload digest is the empty one.
        assert_eq!(
            recs[0].get("WARC-Payload-Digest"),
            Some(sha1_digest(b"").as_str())
        );
        assert_eq!(recs[2].get("Content-Type"), Some(METADATA_TYPE));
        for r in &recs {
            assert_eq!(r.get("WARC-Target-URI"), Some("http://site.example/copy/1"));
            assert_eq!(r.get("WARC-Date"), Some("2026-11-25T17:10:00Z"));
        }
    }

    #[test]
    fn a_near_duplicate_is_a_revisit_of_its_original_without_payload() {
        let dup = NearDuplicate {
            original: Original {
                target_uri: "http://site.example/article/1",
                date: "2026-11-25T17:09:00Z",
                record_id: Some("<urn:uuid:00000000-0000-4000-8000-000000000001>"),
            },
            distance: 2,
            simhash: "dadc014a3922b309",
            radius: Some(3),
            jaccard: Some(0.8125),
        };
        let recs = records(&capture(), Some(&dup));
        let revisit = &recs[1];
        assert_eq!(revisit.kind, RecordType::Revisit);
        assert_eq!(revisit.block, capture().response_head);
        assert_eq!(revisit.get("WARC-Profile"), Some(NEAR_DUPLICATE_PROFILE));
        assert_eq!(
            revisit.get("WARC-Refers-To-Target-URI"),
            Some("http://site.example/article/1")
        );
        assert_eq!(
            revisit.get("WARC-Refers-To-Date"),
            Some("2026-11-25T17:09:00Z")
        );
        assert_eq!(
            revisit.get("WARC-Refers-To"),
            Some("<urn:uuid:00000000-0000-4000-8000-000000000001>")
        );
        assert_eq!(revisit.get("WARC-Simhash-Distance"), Some("2"));
        assert_eq!(revisit.get("WARC-Simhash"), Some("dadc014a3922b309"));
        assert_eq!(revisit.get("WARC-Simhash-Radius"), Some("3"));
        assert_eq!(revisit.get("WARC-Minhash-Jaccard"), Some("0.812"));
        assert_eq!(revisit.get("WARC-Payload-Digest"), None);
        assert_eq!(
            revisit.get("WARC-Block-Digest"),
            Some(sha1_digest(capture().response_head).as_str())
        );
        assert_eq!(recs[0].get("WARC-Concurrent-To"), Some(revisit.id.as_str()));
        assert_eq!(recs[2].get("WARC-Concurrent-To"), Some(revisit.id.as_str()));
        // Without the original's record id: no WARC-Refers-To, the URI and
        // date still there.
        let unknown = NearDuplicate {
            original: Original {
                record_id: None,
                ..dup.original
            },
            ..dup
        };
        let revisit = &records(&capture(), Some(&unknown))[1];
        assert_eq!(revisit.get("WARC-Refers-To"), None);
        assert!(revisit.get("WARC-Refers-To-Date").is_some());
    }
}
