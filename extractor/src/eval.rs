//! The benchmark metric.
