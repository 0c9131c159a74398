//! An upstream answer the bridge cannot use: a 502 in the client's
//! dialect, with the reason in its code. The upstream's own errors are not
//! these: they reach the client reshaped, with their status (see
//! `error_response.rs`).

use http::StatusCode;
use thiserror::Error;

use super::Refusal;

/// Why an upstream's answer cannot be used.
#[derive(Debug, Error)]
pub(crate) enum UnusableReply {
    /// A redirect: the bridge follows none.
    #[error("the upstream answered {status} (a redirect); redirects are not followed")]
    Redirect {
        /// The upstream's status.
        status: StatusCode,
    },
    /// A 1xx where the answer was due.
    #[error("the upstream answered {} (informational) where an answer was due", .status.as_u16())]
    Informational {
        /// The upstream's status.
        status: StatusCode,
    },
    /// A body encoded although identity was asked for: the bridge reads
    /// what it answers, and does not decompress.
    #[error(
        "the upstream sent a '{encoding}'-encoded body although identity was requested; it cannot \
         be read"
    )]
    Encoded {
        /// The `content-encoding` it sent.
        encoding: String,
    },
    /// A body past the bound on what is read of one.
    #[error("the upstream's {what} is larger than the {limit}-byte limit")]
    TooLarge {
        /// What was being read: "reply", "model list", ...
        what: &'static str,
        /// The bound, in bytes.
        limit: usize,
    },
    /// A body whose reading failed (the connection broke, a frame was
    /// malformed).
    #[error("the upstream's {what} could not be read: {error}")]
    Unread {
        /// What was being read.
        what: &'static str,
        /// Why, as the transport said.
        error: String,
    },
    /// A body that was read but is not what was asked for.
    #[error("the upstream's {what} could not be read: {error}")]
    Malformed {
        /// What was being read.
        what: &'static str,
        /// What is wrong with it.
        error: String,
    },
    /// A stream where one body was asked for.
    #[error(
        "the upstream streamed the {what} although it was asked for in one piece (stream: false)"
    )]
    Streamed {
        /// What was asked for.
        what: &'static str,
    },
    /// A token count without its count.
    #[error("the upstream's token count has no input_tokens")]
    NoInputTokens,
    /// The credential check before a conversation is kept got an answer
    /// that neither accepts nor refuses the credential.
    #[error(
        "the credential could not be checked before keeping a conversation: the upstream answered \
         {status} to GET {prefix}/models (a deployment that authenticates in front of the bridge \
         can skip this check with trust_credentials)"
    )]
    CredentialUnchecked {
        /// The upstream's status.
        status: StatusCode,
        /// The path prefix the models were asked under.
        prefix: String,
    },
}

impl Refusal for UnusableReply {
    fn status(&self) -> StatusCode {
        StatusCode::BAD_GATEWAY
    }

    fn code(&self) -> &'static str {
        match self {
            Self::Redirect { .. } => "upstream_redirect",
            Self::Informational { .. } => "upstream_informational",
            Self::Encoded { .. } => "unsupported_upstream_encoding",
            Self::TooLarge { .. } => "upstream_reply_too_large",
            Self::Unread { .. } => "upstream_read_error",
            Self::Malformed { .. } | Self::Streamed { .. } => "bad_upstream_response",
            Self::NoInputTokens => "invalid_upstream_count",
            Self::CredentialUnchecked { .. } => "credential_unchecked",
        }
    }

    fn kind(&self) -> &'static str {
        "server_error"
    }
}

impl UnusableReply {
    /// A body read within `limit` that failed: past the bound, or broken.
    pub(crate) fn unread(
        what: &'static str,
        limit: usize,
        error: &(dyn std::error::Error + 'static),
    ) -> Self {
        if error
            .downcast_ref::<http_body_util::LengthLimitError>()
            .is_some()
        {
            Self::TooLarge { what, limit }
        } else {
            Self::Unread {
                what,
                error: error.to_string(),
            }
        }
    }
}
