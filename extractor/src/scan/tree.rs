//! The stack of open elements. `lol_html` builds no tree and does not report elements closed
//! implicitly (`<p>a<p>b`, `<li>a<li>b`, a `<head>` never closed before the page's content),
//! so the pass keeps its own stack and applies the implied-end-tag rules of the HTML tree
//! builder that matter for text structure.

use super::tags::TAG_KINDS;
use super::{Event, Scan, Tag};

/// A count per [`Tag`] (indexed by the tag's value).
pub(super) struct OpenKinds([u32; TAG_KINDS]);

impl Default for OpenKinds {
    fn default() -> Self {
        OpenKinds([0; TAG_KINDS])
    }
}

impl Scan {
    /// An end tag read between the reported start tags: closes the innermost open element
    /// of that name and those left open inside it, as the HTML tree builder does. End tags
    /// of blocks search up to a scope boundary (table, cell), those of inline elements stop
    /// at any block; an end tag that finds no element is ignored, and so are `</body>` and
    /// `</html>` (content after them still belongs to the body).
    pub(super) fn end_tag(&mut self, tag: Tag, name: u32) {
        if matches!(tag, Tag::Body | Tag::Html | Tag::Br | Tag::Root) || !self.is_open(tag) {
            return;
        }
        let block = tag.is_block() || tag.is_scope_boundary() || tag == Tag::Button;
        for pos in (1..self.stack.len()).rev() {
            let node = &self.page.nodes[self.stack[pos] as usize];
            if node.tag == tag && node.name == name {
                while self.stack.len() > pos {
                    self.pop();
                }
                return;
            }
            if node.tag.is_scope_boundary() || (!block && node.tag.is_block()) {
                return;
            }
        }
    }

    /// The implied end tags of the HTML parsing algorithm that matter for text structure.
    pub(super) fn close_implied(&mut self, tag: Tag) {
        // Body content closes a head left open (inside a `<noscript>` or `<template>` of the
        // head, where a tracking pixel's `<img>` sits, it does not).
        if self.is_open(Tag::Head)
            && !tag.stays_in_head()
            && !self.is_open(Tag::Noscript)
            && !self.is_open(Tag::Template)
        {
            self.close_in_scope(|t| t == Tag::Head, |_| false);
        }
        if tag.closes_p() && self.is_open(Tag::P) {
            self.close_in_scope(|t| t == Tag::P, |t| t == Tag::Button);
        }
        match tag {
            Tag::Li => self.close_in_scope(
                |t| t == Tag::Li,
                |t| matches!(t, Tag::Ul | Tag::Ol | Tag::Menu),
            ),
            Tag::Dt | Tag::Dd => {
                self.close_in_scope(|t| matches!(t, Tag::Dt | Tag::Dd), |t| t == Tag::Dl)
            }
            Tag::Tr => self.close_in_scope(
                |t| t == Tag::Tr,
                |t| matches!(t, Tag::Thead | Tag::Tbody | Tag::Tfoot),
            ),
            Tag::Td | Tag::Th => {
                // `close_in_scope` stops at td/th themselves, so look at the innermost cell directly.
                if let Some(pos) = self.stack.iter().rposition(|&n| {
                    let t = self.page.nodes[n as usize].tag;
                    matches!(t, Tag::Td | Tag::Th | Tag::Tr | Tag::Table)
                }) {
                    let t = self.page.nodes[self.stack[pos] as usize].tag;
                    if matches!(t, Tag::Td | Tag::Th) && pos > 0 {
                        while self.stack.len() > pos {
                            self.pop();
                        }
                    }
                }
            }
            Tag::Thead | Tag::Tbody | Tag::Tfoot => self.close_in_scope(
                |t| matches!(t, Tag::Thead | Tag::Tbody | Tag::Tfoot),
                |_| false,
            ),
            Tag::Option => self.close_in_scope(|t| t == Tag::Option, |t| t == Tag::Select),
            Tag::A if self.is_open(Tag::A) => self.close_in_scope(|t| t == Tag::A, |_| false),
            _ if tag.is_heading() => {
                if let Some(&top) = self.stack.last() {
                    if self.page.nodes[top as usize].tag.is_heading() && self.stack.len() > 1 {
                        self.pop();
                    }
                }
            }
            _ => {}
        }
    }

    /// Closes the innermost open element that `target` accepts, unless a scope boundary
    /// (or an element `stop` accepts) comes first.
    fn close_in_scope(&mut self, target: impl Fn(Tag) -> bool, stop: impl Fn(Tag) -> bool) {
        let mut found = None;
        for (pos, &n) in self.stack.iter().enumerate().rev().take(64) {
            let t = self.page.nodes[n as usize].tag;
            if target(t) {
                found = Some(pos);
                break;
            }
            if t.is_scope_boundary() || stop(t) {
                break;
            }
        }
        if let Some(pos) = found {
            if pos > 0 {
                while self.stack.len() > pos {
                    self.pop();
                }
            }
        }
    }

    /// Opens node `n` (on top of the stack).
    pub(super) fn push(&mut self, n: u32) {
        self.stack.push(n);
        self.open_kinds.0[self.page.nodes[n as usize].tag as usize] += 1;
    }

    /// Closes the innermost open node.
    pub(super) fn pop(&mut self) {
        if let Some(n) = self.stack.pop() {
            let count = &mut self.open_kinds.0[self.page.nodes[n as usize].tag as usize];
            *count = count.saturating_sub(1);
            self.close_node(n);
            self.raw_open = None;
        }
    }

    /// Some element of kind `tag` is open.
    pub(super) fn is_open(&self, tag: Tag) -> bool {
        self.open_kinds.0[tag as usize] > 0
    }

    pub(super) fn close_node(&mut self, n: u32) {
        self.block_boundary(self.page.nodes[n as usize].tag);
        self.page.nodes[n as usize].close = self.page.events.len() as u32;
        self.page.events.push(Event::Close(n));
        if self.page.nodes[n as usize].tag == Tag::Title {
            self.in_title = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scan::tests::texts;
    use crate::scan::{scan, Tag};

    #[test]
    fn implied_paragraph_and_list_ends() {
        let p = scan("<body><p>one<p>two<div>three</div><ul><li>a<li>b</ul>");
        assert_eq!(texts(&p, Tag::P), ["one", "two"]);
        assert_eq!(texts(&p, Tag::Li), ["a", "b"]);
        assert_eq!(texts(&p, Tag::Div), ["three"]);
    }

    #[test]
    fn a_button_left_open_is_closed_by_the_end_tag_around_it() {
        let p = scan("<body><div><button><i></i></div><div><p>the article</p></div></body>");
        assert_eq!(texts(&p, Tag::P), ["the article"]);
        // A `<p>` inside a button does not close the one around it ("button scope"): it
        // stays in the button, whose text is skipped.
        let p = scan("<body><p>one<button><p>two</button>three</p></body>");
        assert_eq!(texts(&p, Tag::P), ["one\nthree", ""]);
    }

    #[test]
    fn implied_link_ends_and_stray_end_tags() {
        let p =
            scan("<body><p>one <a href=a>x <a href=b>y</a> z</p><p>two</a> 2</p><div>3</p></div>");
        assert_eq!(texts(&p, Tag::A), ["x", "y"]);
        assert_eq!(texts(&p, Tag::P), ["one x y z", "two 2"]);
        assert_eq!(texts(&p, Tag::Div), ["3"]);
    }
}
