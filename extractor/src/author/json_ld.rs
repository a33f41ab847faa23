//! The author of the page's JSON-LD blocks: parsed ([`json_credit`]: every name of an
//! `author` list, a `@id` reference looked up in the page's graph, people told from
//! organisations), or, where a block is no valid JSON, read without parsing it
//! ([`json_author`]).

use serde_json::Value;

/// The credit a page's JSON-LD gives as its author.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct JsonCredit {
    /// The names, in the order of the author list.
    pub names: Vec<String>,
    /// Every entry is an `Organization` (a person among them drops the organisations).
    pub organisation: bool,
}

/// Blocks longer than this (bytes) are not parsed (a site's whole catalogue in one script).
pub const MAX_PARSED_BYTES: usize = 200_000;

/// The first `author` (else `creator`) of the blocks' objects, in page order, with every
/// name it lists; entries that hold only an `@id` (Yoast's graph: `"author": {"@id":
/// "…#/schema/person/…"}`) or a URL are looked up among the objects of all blocks.
pub(super) fn json_credit(blocks: &[String]) -> Option<JsonCredit> {
    let parsed: Vec<Value> = blocks
        .iter()
        .filter(|b| {
            b.len() <= MAX_PARSED_BYTES
                && (b.contains("\"author\"") || b.contains("\"creator\"") || b.contains("\"@id\""))
        })
        .filter_map(|b| serde_json::from_str(b.trim().trim_end_matches(';')).ok())
        .collect();
    let mut ids: Vec<(&str, &serde_json::Map<String, Value>)> = Vec::new();
    for v in &parsed {
        index_ids(v, &mut ids, 0);
    }
    for key in ["author", "creator"] {
        for v in &parsed {
            if let Some(credit) = first_credit(v, key, &ids, 0) {
                return Some(credit);
            }
        }
    }
    None
}

/// Nesting followed at most (a block is a tree of a few levels).
const MAX_DEPTH: usize = 12;

/// Every object with an `@id` and a `name`, by its id.
fn index_ids<'a>(
    v: &'a Value,
    ids: &mut Vec<(&'a str, &'a serde_json::Map<String, Value>)>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Object(o) => {
            if let (Some(Value::String(id)), Some(_)) = (o.get("@id"), o.get("name")) {
                ids.push((id.as_str(), o));
            }
            for child in o.values() {
                index_ids(child, ids, depth + 1);
            }
        }
        Value::Array(a) => {
            for child in a {
                index_ids(child, ids, depth + 1);
            }
        }
        _ => {}
    }
}

/// The credit of the first object (depth first, arrays in order) with `key`.
fn first_credit(
    v: &Value,
    key: &str,
    ids: &[(&str, &serde_json::Map<String, Value>)],
    depth: usize,
) -> Option<JsonCredit> {
    if depth > MAX_DEPTH {
        return None;
    }
    match v {
        Value::Object(o) => {
            if let Some(credit) = o.get(key).and_then(|a| credit_of(a, ids)) {
                return Some(credit);
            }
            o.iter()
                .filter(|(k, _)| k.as_str() != key)
                .find_map(|(_, child)| first_credit(child, key, ids, depth + 1))
        }
        Value::Array(a) => a.iter().find_map(|c| first_credit(c, key, ids, depth + 1)),
        _ => None,
    }
}

/// The names an `author` value gives: a string, an object, or a list of them.
fn credit_of(v: &Value, ids: &[(&str, &serde_json::Map<String, Value>)]) -> Option<JsonCredit> {
    let entries: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    let mut people = Vec::new();
    let mut organisations = Vec::new();
    for e in entries {
        let object = match e {
            Value::Object(o) => Some(o),
            // A URL or an id as the whole value: the object it names, if the page has it.
            Value::String(s) => ids.iter().find(|(id, _)| id == s).map(|(_, o)| *o),
            _ => None,
        };
        let (names, organisation) = match (e, object) {
            (_, Some(o)) => {
                let o = match (o.get("name"), o.get("@id")) {
                    (None, Some(Value::String(id))) => ids
                        .iter()
                        .find(|(i, _)| i == id)
                        .map_or(o, |(_, found)| *found),
                    _ => o,
                };
                let organisation = o.get("@type").is_some_and(|t| {
                    let types = match t {
                        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                        Value::String(s) => vec![s.as_str()],
                        _ => Vec::new(),
                    };
                    types.iter().any(|t| t.contains("Organization"))
                });
                let names: Vec<&str> = match o.get("name") {
                    Some(Value::String(n)) => vec![n.as_str()],
                    Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                (names, organisation)
            }
            (Value::String(s), None) if !s.starts_with("http") => (vec![s.as_str()], false),
            _ => (Vec::new(), false),
        };
        for n in names {
            let n = crate::entities::decode(n.trim()).into_owned();
            if n.is_empty() || n.chars().count() > 100 {
                continue;
            }
            let list = if organisation {
                &mut organisations
            } else {
                &mut people
            };
            if !list.contains(&n) {
                list.push(n);
            }
        }
    }
    if !people.is_empty() {
        Some(JsonCredit {
            names: people,
            organisation: false,
        })
    } else if !organisations.is_empty() {
        Some(JsonCredit {
            names: organisations,
            organisation: true,
        })
    } else {
        None
    }
}

/// The name of the first `publisher` of the blocks (`"publisher": {"@type": "Organization",
/// "name": "…"}` or `"publisher": "…"`), read without parsing: the site's owner, never the
/// writer.
pub(super) fn json_publisher(blocks: &[String]) -> Option<String> {
    blocks.iter().find_map(|json| {
        let key = json.find("\"publisher\"")?;
        let rest = json[key + "\"publisher\"".len()..]
            .trim_start()
            .strip_prefix(':')?
            .trim_start();
        let value = match rest.strip_prefix('{') {
            // The object's own `name`, before any nested object opens or it closes.
            Some(object) => {
                let object = &object[..object.find(['{', '}']).unwrap_or(object.len())];
                let at = object.find("\"name\"")?;
                object[at + "\"name\"".len()..]
                    .trim_start()
                    .strip_prefix(':')?
                    .trim_start()
            }
            None => rest,
        };
        let value = value.strip_prefix('"')?;
        let name = &value[..value.find('"')?];
        (!name.trim().is_empty()).then(|| crate::entities::decode(name.trim()).into_owned())
    })
}

/// `"author": {"name": "..."}`, `"author": [{"name": ...}]` or `"author": "..."`; not an
/// author whose object says `"@type": "Organization"`.
pub(super) fn json_author(json: &str) -> Option<String> {
    let raw = json_author_raw(json)?;
    // The author object around the name: from the key before it to the brace after it.
    let at = raw.as_ptr() as usize - json.as_ptr() as usize;
    let key = json[..at]
        .rfind("\"author\"")
        .or_else(|| json[..at].rfind("\"creator\""))?;
    let end = json[at..].find('}').map_or(json.len(), |i| at + i);
    if json[key..end].contains("Organization") {
        return None;
    }
    Some(crate::entities::decode(raw).into_owned())
}

/// The raw name [`json_author`] decodes: what the first match of
/// `"(?:author|creator)"\s*:\s*(?:\[\s*)?(?:\{[^{}]*?"name"\s*:\s*"([^"]{1,100})"|"([^"]{1,100})")`
/// captures, found without a regex (its captures cost a backtracking search per page). Each
/// `"author"` and `"creator"` key is tried in page order; the brace-free stretches after the
/// keys' `{` never overlap, so no byte is searched twice for `"name"`.
fn json_author_raw(json: &str) -> Option<&str> {
    let find = |key: &str, from: usize| {
        json.get(from..)
            .and_then(|rest| rest.find(key))
            .map(|i| from + i)
    };
    let mut next_author = find("\"author\"", 0);
    let mut next_creator = find("\"creator\"", 0);
    loop {
        let (at, key_len) = match (next_author, next_creator) {
            (Some(a), Some(c)) if c < a => (c, 9),
            (Some(a), _) => (a, 8),
            (None, Some(c)) => (c, 9),
            (None, None) => return None,
        };
        if let Some(name) = author_value(json, at + key_len) {
            return Some(name);
        }
        if key_len == 8 {
            next_author = find("\"author\"", at + 1);
        } else {
            next_creator = find("\"creator\"", at + 1);
        }
    }
}

/// The name after an author key ending at `i`: `\s*:\s*(?:\[\s*)?` then `{...}` holding a
/// `"name"` or a string. Every step is forced (whitespace runs end at a byte that is none),
/// so no other way through the pattern is left untried.
fn author_value(json: &str, i: usize) -> Option<&str> {
    let mut i = skip_whitespace(json, i);
    if json.as_bytes().get(i) != Some(&b':') {
        return None;
    }
    i = skip_whitespace(json, i + 1);
    if json.as_bytes().get(i) == Some(&b'[') {
        i = skip_whitespace(json, i + 1);
    }
    match json.as_bytes().get(i)? {
        b'"' => short_string(json, i),
        b'{' => {
            // `[^{}]*?"name"`: each `"name"` before the next brace, the nearest first.
            let start = i + 1;
            let rest = json.get(start..)?;
            let region = &rest[..rest.find(['{', '}']).unwrap_or(rest.len())];
            let mut from = 0;
            while let Some(k) = region.get(from..).and_then(|r| r.find("\"name\"")) {
                let key_end = start + from + k + 6;
                let j = skip_whitespace(json, key_end);
                if json.as_bytes().get(j) == Some(&b':') {
                    let j = skip_whitespace(json, j + 1);
                    if let Some(name) = short_string(json, j) {
                        return Some(name);
                    }
                }
                from += k + 1;
            }
            None
        }
        _ => None,
    }
}

/// The first byte at or after `i` that does not start a whitespace char (regex `\s`, the
/// Unicode White_Space property, as `char::is_whitespace`).
fn skip_whitespace(s: &str, i: usize) -> usize {
    let rest = s.get(i..).unwrap_or("");
    i + rest
        .find(|c: char| !c.is_whitespace())
        .unwrap_or(rest.len())
}

/// `"([^"]{1,100})"` at byte `i`: the string's text when it holds 1 to 100 chars.
fn short_string(s: &str, i: usize) -> Option<&str> {
    let rest = s.get(i..)?.strip_prefix('"')?;
    // Only the first 101 chars are looked at: a longer string does not match anyway.
    let (len, _) = rest.char_indices().take(101).find(|&(_, c)| c == '"')?;
    let text = rest.get(..len)?;
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use regex::Regex;

    use super::*;

    /// The regex [`json_author_raw`] stands for.
    fn json_author_by_regex(json: &str) -> Option<&str> {
        static RE: OnceLock<Regex> = OnceLock::new();
        let re = RE.get_or_init(|| Regex::new(r#""(?:author|creator)"\s*:\s*(?:\[\s*)?(?:\{[^{}]*?"name"\s*:\s*"([^"]{1,100})"|"([^"]{1,100})")"#).unwrap());
        let c = re.captures(json)?;
        c.get(1).or_else(|| c.get(2)).map(|m| m.as_str())
    }

    /// The hand-written matcher agrees with the regex over generated JSON-like text made of
    /// the pieces the pattern turns on.
    #[test]
    fn the_publisher_read_by_hand() {
        let blocks = |b: &str| vec![b.to_string()];
        assert_eq!(
            json_publisher(&blocks(
                r#"{"publisher": {"@type": "Organization", "logo": {"url": "x"}, "name": "Condé Nast"}}"#
            )),
            None
        );
        assert_eq!(
            json_publisher(&blocks(
                r#"{"publisher":{"@type":"Organization","name":"Condé Nast","logo":{"url":"x"}}}"#
            ))
            .as_deref(),
            Some("Condé Nast")
        );
        assert_eq!(
            json_publisher(&blocks(r#"{"publisher": "WIRED"}"#)).as_deref(),
            Some("WIRED")
        );
    }

    #[test]
    fn json_author_agrees_with_the_regex() {
        const PIECES: &[&str] = &[
            "\"author\"",
            "\"creator\"",
            "\"name\"",
            "\"nam",
            "\"author",
            ":",
            " ",
            "\n",
            "\t",
            "\u{3000}",
            "\u{a0}",
            "[",
            "]",
            "{",
            "}",
            "\"",
            "\"",
            ",",
            "x",
            "é",
            "日本",
            "Jane Doe",
            "\"@type\"",
            "\\",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ];
        let mut next = crate::test_rng::sequence();
        let mut found = 0;
        for _ in 0..100_000 {
            let json = crate::test_rng::string(&mut next, PIECES, 24);
            let fast = json_author_raw(&json);
            found += usize::from(fast.is_some());
            assert_eq!(fast, json_author_by_regex(&json), "{json:?}");
        }
        for json in [
            r#"{"author": {"@type": "Person", "name": "Jane Doe"}}"#,
            r#"{"author": [ {"name" : "A"}, {"name": "B"}]}"#,
            r#"{"creator": "C", "author": "D"}"#,
            r#"{"author": {"url": "x"}, "author": "E"}"#,
        ] {
            assert!(json_author_raw(json).is_some());
            assert_eq!(json_author_raw(json), json_author_by_regex(json), "{json}");
        }
        assert!(found > 1_000, "a name was found {found} times only");
    }
}
