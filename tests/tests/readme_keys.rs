//! The README's Redis key layout names every key the crawler writes: each
//! `<ns>:<name>` that `pipeline/src/keys.rs` builds is in its table.

use std::collections::BTreeSet;

const KEYS_RS: &str = include_str!("../../pipeline/src/keys.rs");
const README: &str = include_str!("../../README.md");

/// The first segment after the namespace of every key name keys.rs builds
/// (`format!("{}:seen:...", self.ns)` gives `seen`).
fn key_names() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for part in KEYS_RS.split("format!(\"{}:").skip(1) {
        let name: String = part
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

#[test]
fn the_readme_names_every_key() {
    let names = key_names();
    assert!(names.len() >= 20, "keys.rs builds {names:?}");
    let section = README
        .split("### The Redis key layout")
        .nth(1)
        .expect("the README has a Redis key layout section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let missing: Vec<_> = names
        .iter()
        .filter(|n| !section.contains(&format!("`<ns>:{n}")))
        .collect();
    assert!(
        missing.is_empty(),
        "keys the README's layout does not name: {missing:?}"
    );
}
