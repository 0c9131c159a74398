//! The wirebridge benchmark harness: the translation cases measured by the
//! `wirebridge-bench` binary and by the criterion benches at the
//! repository's root, built from the recorded fixtures; the proxy, store and
//! depth benches.
//!
//! It is a crate of its own, not published, so that what only benchmarks
//! need (a counting global allocator, fixtures found on disk, criterion)
//! stays out of the served `wirebridge` binary and the published crates.

#![forbid(unsafe_code)]

pub mod cases;
pub mod redis_server;
