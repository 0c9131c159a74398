//! Exchanges that compact, for Responses clients over a Chat upstream or
//! a Responses upstream that keeps no state.
//!
//! - `POST …/responses/compact` ([`compact`]): the conversation, summarized
//!   by the backend, answered as a `response.compaction` object;
//! - `POST …/responses` turns that compact ([`Turn`]): one that ends with a
//!   `compaction_trigger`, answered with the compaction item alone, and one
//!   whose `context_management` threshold the input passes, compacted
//!   before it is answered.
//!
//! The summary is one more non-streaming Chat request to the upstream,
//! through the inner service. What to send, how to read the answer and how
//! to seal it is the translator's
//! ([`wirebridge_convert::responses_to_chat::compaction`]); this module
//! routes, resolves the stored conversation, and calls.

mod conversation;
mod endpoint;
mod over;
mod summarize;
mod turn;

use http::Method;

pub(crate) use endpoint::compact;
pub(crate) use summarize::{Speaks, Upstream};
pub(crate) use turn::Turn;

use crate::direction::sealed::Direction;
use crate::direction::state;

/// The path after the client endpoint that compacts.
const COMPACT: &str = "/compact";

/// `POST {prefix}{endpoint}/compact`, where compaction runs: the prefix.
pub(crate) fn route<D: Direction>(
    settings: &D::Settings,
    method: &Method,
    path: &str,
    endpoint: &str,
) -> Option<String> {
    if method != Method::POST || state::compaction::<D>(settings).is_none() {
        return None;
    }
    let prefix = path
        .trim_end_matches('/')
        .strip_suffix(COMPACT)?
        .strip_suffix(endpoint)?;
    Some(prefix.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::direction::{ChatOverResponses, ResponsesOverChat};
    use crate::settings::{ChatSettings, ResponsesSettings};

    #[test]
    fn the_compact_endpoint_is_routed_with_any_prefix() {
        let settings = ResponsesSettings::default();
        let post = |path| route::<ResponsesOverChat>(&settings, &Method::POST, path, "/responses");
        assert_eq!(post("/v1/responses/compact").as_deref(), Some("/v1"));
        assert_eq!(post("/responses/compact/").as_deref(), Some(""));
        assert_eq!(post("/v1/responses"), None);
        assert_eq!(post("/v1/responses/resp_1"), None);
        assert_eq!(post("/v1/chat/compact"), None);
        let get = route::<ResponsesOverChat>(
            &settings,
            &Method::GET,
            "/v1/responses/compact",
            "/responses",
        );
        assert_eq!(get, None, "a GET retrieves a response named 'compact'");
        let chat = ChatSettings::default();
        assert_eq!(
            route::<ChatOverResponses>(&chat, &Method::POST, "/v1/responses/compact", "/responses"),
            None,
            "Chat clients have no compaction"
        );
    }
}
