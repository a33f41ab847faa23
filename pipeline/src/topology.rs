//! Queue topology: the four work queues, and a dead-letter exchange and queue
//! per stage, all named under a namespace so crawls and tests can share a
//! broker without mixing.
//!
//! `{ns}.frontier`, `{ns}.fetch`, `{ns}.extract`, `{ns}.contentseen` are
//! durable queues whose rejected messages go through the direct exchange
//! `{ns}.dlx` to `{ns}.<stage>.dead`.

/// The work queues, one per stage input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Queue {
    Frontier,
    Fetch,
    Extract,
    ContentSeen,
}

impl Queue {
    pub const ALL: [Queue; 4] = [
        Queue::Frontier,
        Queue::Fetch,
        Queue::Extract,
        Queue::ContentSeen,
    ];

    /// The stage name, as used in queue and key names.
    pub fn stage(self) -> &'static str {
        match self {
            Queue::Frontier => "frontier",
            Queue::Fetch => "fetch",
            Queue::Extract => "extract",
            Queue::ContentSeen => "contentseen",
        }
    }

    /// The broker queue name in a namespace.
    pub fn name(self, ns: &str) -> String {
        format!("{ns}.{}", self.stage())
    }

    /// The dead-letter queue of this stage.
    pub fn dead_letter_name(self, ns: &str) -> String {
        format!("{ns}.{}.dead", self.stage())
    }
}

/// The dead-letter exchange of a namespace.
pub fn dead_letter_exchange(ns: &str) -> String {
    format!("{ns}.dlx")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_namespaced() {
        assert_eq!(Queue::Fetch.name("t1"), "t1.fetch");
        assert_eq!(Queue::Fetch.dead_letter_name("t1"), "t1.fetch.dead");
        assert_eq!(dead_letter_exchange("t1"), "t1.dlx");
    }
}
