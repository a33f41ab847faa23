//! One WARC 1.1 record (pure): its named fields, its block, its bytes, and
//! the gzip member it is stored as.
//!
//! A record is `WARC/1.1` CRLF, the named fields (one per line, `Name:
//! value` CRLF), `Content-Length` of the block, an empty line, the block,
//! and two CRLFs (ISO 28500:2017, section 4). Each record is written as its
//! own gzip member (annex D.2), so a reader can seek to any record and a
//! torn tail is cut off at a member boundary ([`crate::writer`]).

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

/// The version line of every record this crate writes.
pub const WARC_VERSION: &str = "WARC/1.1";

/// The kinds of record the crawler writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordType {
    /// What wrote the file, at the start of each file.
    Warcinfo,
    /// The HTTP request as sent.
    Request,
    /// The HTTP response as received.
    Response,
    /// A page whose content was not stored again: here a near-duplicate.
    Revisit,
    /// What the crawler extracted from a page.
    Metadata,
}

impl RecordType {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordType::Warcinfo => "warcinfo",
            RecordType::Request => "request",
            RecordType::Response => "response",
            RecordType::Revisit => "revisit",
            RecordType::Metadata => "metadata",
        }
    }
}

/// A fresh `WARC-Record-ID`: a random UUID as a URN, in angle brackets.
pub fn new_record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
}

/// The WARC digest of `bytes`: `sha1:` and the SHA-1 in base32 (RFC 4648),
/// the form Heritrix, wget and warcio write and check.
pub fn sha1_digest(bytes: &[u8]) -> String {
    let sha = sha1_smol::Sha1::from(bytes).digest().bytes();
    format!("sha1:{}", data_encoding::BASE32.encode(&sha))
}

/// One record: named fields in the order they are written, and the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub kind: RecordType,
    /// `WARC-Record-ID`, with its angle brackets.
    pub id: String,
    /// The named fields after `WARC-Type`, `WARC-Record-ID` and
    /// `WARC-Date`, without `Content-Length` (written from the block).
    pub fields: Vec<(String, String)>,
    pub block: Vec<u8>,
}

impl Record {
    /// A record of `kind` made at `date` (W3C ISO 8601, UTC, e.g.
    /// `2026-11-25T17:03:29Z`), with a fresh id and an empty block.
    pub fn new(kind: RecordType, date: &str) -> Record {
        Record {
            kind,
            id: new_record_id(),
            fields: vec![("WARC-Date".into(), date.into())],
            block: Vec::new(),
        }
    }

    /// Adds a named field. CR and LF in the value become spaces: a field
    /// is one line, whatever a URL or a header sent by a server holds.
    pub fn field(mut self, name: &str, value: &str) -> Record {
        self.set_field(name, value);
        self
    }

    /// [`Record::field`] on a borrowed record.
    pub fn set_field(&mut self, name: &str, value: &str) {
        let value: String = value
            .chars()
            .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
            .collect();
        self.fields.push((name.into(), value));
    }

    /// The value of the first field called `name` (ASCII case ignored).
    pub fn get(&self, name: &str) -> Option<&str> {
        if name.eq_ignore_ascii_case("WARC-Record-ID") {
            return Some(&self.id);
        }
        if name.eq_ignore_ascii_case("WARC-Type") {
            return Some(self.kind.as_str());
        }
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Sets the block with its `Content-Type` and `WARC-Block-Digest`; for
    /// an HTTP message (`payload_at` = where its headers end) also
    /// `WARC-Payload-Digest` of the rest.
    pub fn block(
        mut self,
        content_type: &str,
        block: Vec<u8>,
        payload_at: Option<usize>,
    ) -> Record {
        self.set_field("Content-Type", content_type);
        self.set_field("WARC-Block-Digest", &sha1_digest(&block));
        if let Some(at) = payload_at {
            let payload = block.get(at..).unwrap_or_default();
            self.set_field("WARC-Payload-Digest", &sha1_digest(payload));
        }
        self.block = block;
        self
    }

    /// The record as written, uncompressed.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.block.len() + 512);
        out.extend_from_slice(WARC_VERSION.as_bytes());
        out.extend_from_slice(b"\r\n");
        let mut line = |name: &str, value: &str| {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        };
        line("WARC-Type", self.kind.as_str());
        line("WARC-Record-ID", &self.id);
        for (name, value) in &self.fields {
            line(name, value);
        }
        line("Content-Length", &self.block.len().to_string());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.block);
        out.extend_from_slice(b"\r\n\r\n");
        out
    }

    /// The record as one gzip member.
    pub fn to_gzip_member(&self) -> std::io::Result<Vec<u8>> {
        let bytes = self.to_bytes();
        let mut gz = GzEncoder::new(
            Vec::with_capacity(bytes.len() / 3 + 64),
            Compression::fast(),
        );
        gz.write_all(&bytes)?;
        gz.finish()
    }
}

/// Where the headers of an HTTP message end (after the first empty line),
/// or `None` when the bytes hold no complete header block.
pub fn http_payload_offset(message: &[u8]) -> Option<usize> {
    message
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha1_in_base32() {
        // SHA-1("") = da39a3ee5e6b4b0d3255bfef95601890afd80709.
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        // SHA-1("abc") = a9993e364706816aba3e25717850c26c9cd0d89d.
        assert_eq!(sha1_digest(b"abc"), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    }

    #[test]
    fn a_record_is_laid_out_as_the_standard_says() {
        let http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi</p>".to_vec();
        let at = http_payload_offset(&http);
        assert_eq!(at, Some(44));
        let rec = Record::new(RecordType::Response, "2026-11-25T17:03:29Z")
            .field("WARC-Target-URI", "http://a.example/x\r\nInjected: yes")
            .block("application/http;msgtype=response", http.clone(), at);
        let bytes = rec.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let (head, rest) = text.split_once("\r\n\r\n").unwrap();
        let lines: Vec<&str> = head.split("\r\n").collect();
        assert_eq!(lines[0], "WARC/1.1");
        assert_eq!(lines[1], "WARC-Type: response");
        assert!(lines[2].starts_with("WARC-Record-ID: <urn:uuid:") && lines[2].ends_with('>'));
        assert_eq!(lines[3], "WARC-Date: 2026-11-25T17:03:29Z");
        // One line per field: the CR LF in the value did not start a field.
        assert_eq!(
            lines[4],
            "WARC-Target-URI: http://a.example/x  Injected: yes"
        );
        assert_eq!(lines[5], "Content-Type: application/http;msgtype=response");
        assert_eq!(
            lines[6],
            format!("WARC-Block-Digest: {}", sha1_digest(&http))
        );
        assert_eq!(
            lines[7],
            format!("WARC-Payload-Digest: {}", sha1_digest(b"<p>hi</p>"))
        );
        assert_eq!(lines[8], format!("Content-Length: {}", http.len()));
        assert_eq!(lines.len(), 9);
        // The block, then two CRLFs.
        assert_eq!(rest.as_bytes(), [&http[..], b"\r\n\r\n"].concat());
        assert_eq!(rec.get("warc-type"), Some("response"));
        assert_eq!(rec.get("WARC-Record-ID"), Some(rec.id.as_str()));
    }

    #[test]
    fn a_gzip_member_inflates_to_the_record() {
        use std::io::Read;
        let rec = Record::new(RecordType::Metadata, "2026-11-25T17:03:29Z").block(
            "application/json",
            br#"{"title":"x"}"#.to_vec(),
            None,
        );
        assert!(rec.get("WARC-Payload-Digest").is_none());
        let member = rec.to_gzip_member().unwrap();
        assert_eq!(&member[..2], &[0x1f, 0x8b]);
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&member[..])
            .read_to_end(&mut back)
            .unwrap();
        assert_eq!(back, rec.to_bytes());
    }

    #[test]
    fn record_ids_are_unique_urns() {
        let (a, b) = (new_record_id(), new_record_id());
        assert_ne!(a, b);
        assert!(a.starts_with("<urn:uuid:") && a.len() == 47);
    }
}
