//! Errors reported while decoding a stream.

use std::str::Utf8Error;

/// An error produced by [`Decoder`](crate::Decoder).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The event name or data of a dispatched event was not valid UTF-8.
    ///
    /// Only that event is dropped; decoding continues with the next one.
    #[error("server-sent event {field} is not valid UTF-8")]
    InvalidUtf8 {
        /// Which part of the event was invalid: `"event"` or `"data"`.
        field: &'static str,
        /// Where the invalid sequence starts within that field.
        #[source]
        source: Utf8Error,
    },

    /// The event being assembled grew past the configured size limit.
    ///
    /// The decoder is poisoned afterwards: it drops its buffers, ignores
    /// further input and returns this error from every later call.
    #[error("server-sent event exceeds the {limit}-byte limit")]
    EventTooLarge {
        /// The limit that was exceeded, in bytes.
        limit: usize,
    },
}

impl DecodeError {
    /// Whether the decoder can still produce events after this error.
    ///
    /// Returns `true` for errors that poison the decoder, where calling
    /// [`Decoder::next_event`](crate::Decoder::next_event) again would only
    /// repeat the error.
    pub fn is_fatal(&self) -> bool {
        matches!(self, DecodeError::EventTooLarge { .. })
    }
}
