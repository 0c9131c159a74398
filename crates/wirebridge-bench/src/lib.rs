//! The wirebridge benchmark harness: the translation cases measured by the
//! `wirebridge-bench` binary and by this crate's criterion benches, built
//! from the recorded fixtures.
//!
//! It is a crate of its own, not published, so that what only benchmarks
//! need (a counting global allocator, fixtures found on disk, criterion)
//! stays out of the served `wirebridge` binary and the published crates.

#![deny(unsafe_code)]

pub mod cases;
pub mod redis_server;
