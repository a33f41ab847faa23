//! frontier (work in progress).
