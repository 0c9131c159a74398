//! Incremental server-sent events (SSE) decoding and encoding over bytes.
//!
//! This crate does no IO. Bytes come from whatever transport the caller
//! uses, in chunks split at arbitrary points; [`Decoder`] turns them into
//! [`Event`]s, and the functions in [`encoder`] turn events back into bytes.
//!
//! Decoding follows the WHATWG `EventSource` parsing rules, with two
//! deliberate leniencies that real upstreams rely on: an event that carries
//! only an `event:` name is still dispatched, and [`Decoder::finish`]
//! dispatches a final event whose closing blank line never arrived.
//!
//! ```
//! use wirebridge_sse::{encoder, Decoder};
//!
//! let mut wire = Vec::new();
//! encoder::encode_data(&mut wire, r#"{"id":"chatcmpl-1"}"#);
//! encoder::encode_done(&mut wire);
//!
//! let mut decoder = Decoder::new();
//! decoder.feed(&wire);
//! let first = decoder.next_event().unwrap().unwrap();
//! assert_eq!(first.data, r#"{"id":"chatcmpl-1"}"#);
//! assert!(decoder.next_event().unwrap().unwrap().is_done());
//! assert!(decoder.next_event().is_none());
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
// What a published crate calls `pub` is its API: anything else says how
// far it reaches (`pub(crate)`, `pub(super)`).
#![warn(unreachable_pub)]

pub mod decoder;
pub mod encoder;
mod error;
mod scan;

pub use decoder::{Decoder, Event, DEFAULT_MAX_EVENT_SIZE};
pub use encoder::{encode_comment, encode_data, encode_done, encode_event, encode_event_with};
pub use error::DecodeError;
