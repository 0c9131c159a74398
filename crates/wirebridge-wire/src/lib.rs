//! Wire types of the OpenAI Chat Completions and Responses APIs.
//!
//! Input types are lenient: unknown fields are ignored, polymorphic fields
//! accept every shape seen from real clients and servers, and unknown item
//! types still parse. Output types are strict: they write exactly the fields
//! the target API defines.
//!
//! Large strings and pass-through JSON (schemas, arguments) borrow the input
//! as [`serde_json::value::RawValue`], so translation copies them instead of
//! decoding and re-encoding them. Parse with [`serde_json::from_slice`] or
//! [`serde_json::from_str`] to borrow.
//!
//! ```
//! use wirebridge_wire::responses::request::{CreateResponse, Input};
//!
//! let body = br#"{"model":"m","input":"Say \"hi\""}"#;
//! let request: CreateResponse<'_> = serde_json::from_slice(body).unwrap();
//! let Some(Input::Text(text)) = request.input else { unreachable!() };
//! assert_eq!(text.escaped(), r#"Say \"hi\""#);
//! assert_eq!(text.decode(), "Say \"hi\"");
//! ```

#![deny(unsafe_code)]

mod borrow;
pub mod chat;
pub mod error;
pub mod items;
mod lenient;
pub mod raw;
pub mod responses;

pub use items::Items;
pub use raw::{compact, EscapedText, JsonStr, JsonText};
