//! contentseen (work in progress).
