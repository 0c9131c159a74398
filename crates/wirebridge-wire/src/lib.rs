//! Wire types of the OpenAI Chat Completions and Responses APIs, and of
//! the Anthropic Messages API.
//!
//! Each API has two sides, and a concept has one type on each:
//!
//! | | read (lenient) | written (strict) |
//! |---|---|---|
//! | Chat request | [`chat::lenient::CreateChatCompletion`] | [`chat::strict::ChatRequest`] |
//! | Chat reply | [`chat::lenient::ChatCompletion`] (bodies and chunks) | [`chat::strict::CompletionBody`], [`chat::strict::ChatChunk`] |
//! | Responses request | [`responses::lenient::CreateResponse`] | [`responses::strict::ResponsesRequest`] |
//! | Responses reply | [`responses::lenient::ResponseBody`] ([`responses::lenient::ResponseShell`] with its items raw), [`responses::lenient::StreamEvent`] | [`responses::strict::Response`], [`responses::strict::Event`] |
//! | Messages request | [`messages::lenient::CreateMessage`] | — |
//! | Messages reply | — | [`messages::strict::MessageBody`], [`messages::strict::Event`], [`messages::strict::ErrorBody`] |
//!
//! Lenient types read what clients and servers really send: unknown fields
//! are ignored, `null` reads as absent, polymorphic fields accept every
//! shape seen in the wild, and unknown item and event types still parse.
//! Strict types write exactly the fields the target API defines. The JSON
//! `type` field is called `kind` everywhere.
//!
//! Large strings and pass-through JSON (schemas, arguments) borrow the input
//! as [`serde_json::value::RawValue`] ([`JsonStr`]), so translation copies
//! them instead of decoding and re-encoding them; short strings (ids, names,
//! event types) are [`Str`], borrowed unless they hold escapes. Parse with
//! [`serde_json::from_slice`] or [`serde_json::from_str`] to borrow.
//!
//! A Responses request body, the largest thing a translator reads, can also
//! be read in one pass with [`CreateResponse::read`](responses::lenient::CreateResponse::read)
//! (serde's parse is its fallback, and the tests check both read the
//! same). The [`cursor`] it reads with holds this crate's one `unsafe`
//! block: borrowing a raw value without scanning it again, which measured
//! the difference between reading a request once and reading it twice.
//!
//! ```
//! use wirebridge_wire::responses::lenient::{CreateResponse, Input};
//!
//! let body = br#"{"model":"m","input":"Say \"hi\""}"#;
//! let request: CreateResponse<'_> = serde_json::from_slice(body).unwrap();
//! assert!(request.model.as_ref().is_some_and(|m| m.is_borrowed()));
//! let Some(Input::Text(text)) = request.input else { unreachable!() };
//! assert_eq!(text.escaped(), r#"Say \"hi\""#);
//! assert_eq!(text.decode(), "Say \"hi\"");
//! ```

#![deny(unsafe_code)]
#![deny(missing_docs)]
// What a published crate calls `pub` is its API: anything else says how
// far it reaches (`pub(crate)`, `pub(super)`).
#![warn(unreachable_pub)]

pub mod chat;
mod count;
pub mod cursor;
pub mod decimal;
pub mod depth;
pub mod error;
pub mod items;
pub mod messages;
mod object;
pub mod raw;
pub mod responses;
mod str;
mod unmodeled;
mod write;

pub use items::Items;
pub use object::RawObject;
pub use raw::{compact, EscapedText, JsonStr, JsonText};
pub use str::Str;
