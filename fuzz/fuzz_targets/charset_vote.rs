//! The charset vote and decode (the `charset` crate) on arbitrary bytes.
//!
//! Input (split with `arbitrary`'s `Unstructured`): one byte of flags (bit 0:
//! a Content-Type header is given, bit 1: a host is given), for each given
//! one a length byte and that many bytes (lossy UTF-8), then the body. The
//! host goes through the vote's own TLD hint (`charset::tld`).
#![no_main]

use charset::{decide_and_decode, decode, vote, Signals};
use libfuzzer_sys::arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use url::Url;

fn field(u: &mut Unstructured) -> Option<String> {
    let len: u8 = u.arbitrary().ok()?;
    let bytes = u.bytes(len as usize).ok()?;
    Some(String::from_utf8_lossy(bytes).into_owned())
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(flags) = u.arbitrary::<u8>() else {
        return;
    };
    let header = if flags & 1 != 0 { field(&mut u) } else { None };
    let host = if flags & 2 != 0 { field(&mut u) } else { None };
    let body = u.take_rest();
    let url = host.and_then(|h| Url::parse(&format!("http://{h}/")).ok());
    let signals = Signals {
        header: header.as_deref(),
        tld: url
            .as_ref()
            .and_then(Url::host_str)
            .and_then(charset::tld)
            .map(str::as_bytes),
        override_encoding: None,
    };
    let (decision, text) = decide_and_decode(body, &signals);
    // The fast path and the plain path agree.
    assert_eq!(decision, vote(body, &signals));
    assert_eq!(text, decode(body, &decision));
    // The decision names a real encoding, and travels as JSON in the page.
    assert_eq!(decision.encoding().name(), decision.encoding);
    let json = serde_json_roundtrip(&decision);
    assert_eq!(json, decision);
});

fn serde_json_roundtrip(d: &charset::Decision) -> charset::Decision {
    let s = serde_json::to_string(d).expect("a decision serializes");
    serde_json::from_str(&s).expect("a decision deserializes")
}
