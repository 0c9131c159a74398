//! Every refusal the bridge answers itself, one type each, in the manner
//! of axum's rejections: its text is its `Display`, and [`Refusal`] says
//! the HTTP status, the error object's `type`, `code` and `param` that go
//! with it. Over HTTP a refusal becomes a `Refused` reply, written in
//! the client's dialect (an OpenAI error object, or Anthropic's); in
//! WebSocket mode the same types become error events.
//!
//! A request refused as it arrives is in [`request`]; the stored state's
//! refusals (responses, conversations, the input resolved from them) are
//! in [`stored`], a Messages thread's in [`thread`], background responses'
//! in [`background`], compaction's in [`compaction`], and an upstream
//! answer that cannot be used in [`upstream`]; WebSocket mode's own (its
//! handshake, its messages) are beside it, in `websocket/rejection.rs`.

use std::borrow::Cow;

use http::StatusCode;
use wirebridge_wire::error::ApiError;

pub(crate) mod background;
pub(crate) mod compaction;
pub(crate) mod request;
pub(crate) mod stored;
pub(crate) mod thread;
pub(crate) mod upstream;

/// What the client is told of a refusal: the error object's fields, and
/// the status that goes with it.
pub(crate) trait Refusal: std::error::Error {
    /// The HTTP status: of the reply, or in the error event.
    fn status(&self) -> StatusCode;

    /// The error object's `code`.
    fn code(&self) -> &'static str;

    /// The error object's `type`.
    fn kind(&self) -> &'static str {
        "invalid_request_error"
    }

    /// The field of the request at fault, if one is.
    fn param(&self) -> Option<&'static str> {
        None
    }

    /// Whether the client should try again in a moment (`retry-after: 1`):
    /// the refusal is of the bridge's state, not of the request.
    fn retry_soon(&self) -> bool {
        false
    }

    /// The error object: `{"message","type","param","code"}`.
    fn api_error(&self) -> ApiError<'static> {
        ApiError {
            message: Cow::Owned(self.to_string()),
            kind: self.kind().into(),
            param: self.param().map(Into::into),
            code: Some(self.code().into()),
        }
    }
}

/// Implements [`Refusal`] for a type with a fixed status and code, and
/// optionally its `type` (`kind = "..."`), the field at fault (`param =`
/// a closure of `&Self`) and `retry_soon`.
macro_rules! refusal {
    (
        $type:ty, $status:ident, $code:expr
        $(, kind = $kind:literal)?
        $(, param = $param:expr)?
        $(, retry_soon = $retry:literal)?
    ) => {
        impl $crate::refusal::Refusal for $type {
            fn status(&self) -> ::http::StatusCode {
                ::http::StatusCode::$status
            }

            fn code(&self) -> &'static str {
                $code
            }

            $(
                fn kind(&self) -> &'static str {
                    $kind
                }
            )?

            $(
                #[allow(clippy::redundant_closure_call)]
                fn param(&self) -> Option<&'static str> {
                    ($param)(self)
                }
            )?

            $(
                fn retry_soon(&self) -> bool {
                    $retry
                }
            )?
        }
    };
}
pub(crate) use refusal;

/// Implements [`Refusal`] for an enum of refusals, each variant holding
/// one.
#[cfg_attr(not(feature = "websocket"), allow(unused_macros))]
macro_rules! delegate {
    ($type:ident { $($variant:ident),+ $(,)? }) => {
        impl $crate::refusal::Refusal for $type {
            fn status(&self) -> ::http::StatusCode {
                match self { $(Self::$variant(r) => r.status()),+ }
            }

            fn code(&self) -> &'static str {
                match self { $(Self::$variant(r) => r.code()),+ }
            }

            fn kind(&self) -> &'static str {
                match self { $(Self::$variant(r) => r.kind()),+ }
            }

            fn param(&self) -> Option<&'static str> {
                match self { $(Self::$variant(r) => r.param()),+ }
            }

            fn retry_soon(&self) -> bool {
                match self { $(Self::$variant(r) => r.retry_soon()),+ }
            }
        }
    };
}
#[cfg_attr(not(feature = "websocket"), allow(unused_imports))]
pub(crate) use delegate;
