//! The Responses API (`POST /v1/responses`).
//!
//! [`lenient`] reads what clients and servers send; [`strict`] writes what
//! the bridge sends. A concept has one type on each side.

pub mod lenient;
pub mod strict;
pub mod written;
