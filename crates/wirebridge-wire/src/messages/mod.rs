//! The Anthropic Messages API (`POST /v1/messages`).
//!
//! [`lenient`] reads what Messages clients send (Claude Code, the Anthropic
//! SDKs); [`strict`] writes what the bridge answers them: `message` bodies,
//! stream events and error bodies. A concept has one type on each side.

pub mod lenient;
pub mod strict;
