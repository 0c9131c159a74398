//! `diagnostics.previous_message_id`: prompt cache diagnostics for a
//! Messages client, asked of the Responses side below as
//! `prompt_cache_options.comparison_response_id` and answered in the
//! message's `diagnostics`.
//!
//! A message the bridge answers for a request that asked is named after
//! the response below it (`msg_<x>` for `resp_<x>`), so that the id a
//! client sends back as `previous_message_id` names the response whose
//! fingerprint the store keeps. The comparison itself is the Responses
//! side's; its verdict comes back as a value (see
//! [`MessagesContext::diagnostics`]), never read back from JSON.

use serde_json::value::RawValue;

use wirebridge_wire::RawObject;

use super::MessagesContext;
use crate::cache_diagnostics::Verdict;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;

/// What a Messages request asked of prompt cache diagnostics, and, once
/// the Responses side answered, what it found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheDiagnostics {
    /// Whether the request named a previous message to compare with (a
    /// first turn opts in with `null`, and is answered nothing).
    pub compared: bool,
    /// The Responses side's verdict, when it gave one.
    pub verdict: Option<Verdict>,
}

/// The request's `diagnostics`, read: `None` when it asks for none; the
/// `prompt_cache_options` the Responses request carries otherwise. A value
/// of another shape is an error naming its field.
pub(super) fn asked(
    raw: Option<&RawValue>,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<(CacheDiagnostics, Box<RawValue>)>, ConvertError> {
    let Some(raw) = raw.filter(|r| r.get() != "null") else {
        return Ok(None);
    };
    let field = "diagnostics.previous_message_id";
    let expected = "expected a message id (or null) in an object";
    let members = RawObject::parse(raw)
        .map_err(|e| ConvertError::invalid("diagnostics", format!("{expected}: {e}")))?;
    let mut previous = None;
    for (key, value) in members.fields() {
        if key != "previous_message_id" {
            losses.record(
                LossKind::UnsupportedParameter,
                format!("diagnostics.{key}"),
                "a diagnostics option the bridge does not read",
            )?;
            continue;
        }
        previous = serde_json::from_str::<Option<String>>(value.get())
            .map_err(|e| ConvertError::invalid(field, format!("{expected}: {e}")))?;
    }
    let comparison = previous.as_deref().map(super::response_id_of);
    let options = serde_json::json!({ "comparison_response_id": comparison });
    let options = serde_json::value::to_raw_value(&options).expect("options serialize");
    let asked = CacheDiagnostics {
        compared: comparison.is_some(),
        verdict: None,
    };
    Ok(Some((asked, options)))
}

/// The message's `diagnostics`, as JSON, when there is one to write: the
/// request compared with a previous message and something diverged (or
/// nothing could be said). No verdict from below (a Responses service that
/// is not the bridge's, or one with no store) cannot say.
pub(super) fn reply(ctx: &MessagesContext) -> Option<Box<RawValue>> {
    let asked = ctx.diagnostics.as_ref().filter(|d| d.compared)?;
    let json = asked
        .verdict
        .unwrap_or(Verdict::Unavailable)
        .messages_json()?;
    Some(RawValue::from_string(json).expect("diagnostics are JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossPolicy;

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
    }

    fn asked(
        raw: Option<&RawValue>,
    ) -> Result<Option<(CacheDiagnostics, Box<RawValue>)>, ConvertError> {
        super::asked(raw, &mut LossRecorder::new(&LossPolicy::default()))
    }

    #[test]
    fn a_previous_message_is_compared_as_its_response() {
        let (compared, options) = asked(Some(raw(r#"{"previous_message_id":"msg_abc"}"#)))
            .unwrap()
            .unwrap();
        assert!(compared.compared);
        assert_eq!(options.get(), r#"{"comparison_response_id":"resp_abc"}"#);
        let (first, options) = asked(Some(raw(r#"{"previous_message_id":null}"#)))
            .unwrap()
            .unwrap();
        assert!(!first.compared);
        assert_eq!(options.get(), r#"{"comparison_response_id":null}"#);
        assert!(asked(Some(raw("null"))).unwrap().is_none());
        let error = asked(Some(raw(r#"{"previous_message_id":1}"#))).unwrap_err();
        assert_eq!(error.param(), Some("diagnostics.previous_message_id"));
    }

    #[test]
    fn the_reply_names_what_the_responses_side_found() {
        let ctx = |diagnostics| MessagesContext {
            diagnostics,
            ..MessagesContext::default()
        };
        let compared = |verdict| {
            Some(CacheDiagnostics {
                compared: true,
                verdict,
            })
        };
        let tools = Verdict::Miss {
            reason: crate::cache_diagnostics::MissReason::Tools,
            missed_tokens: 9,
            reusable_tokens: 0,
        };
        let written = reply(&ctx(compared(Some(tools)))).unwrap();
        assert_eq!(
            written.get(),
            r#"{"cache_miss_reason":{"type":"tools_changed","cache_missed_input_tokens":9}}"#
        );
        assert!(reply(&ctx(compared(Some(Verdict::Hit)))).is_none());
        let unanswered = reply(&ctx(compared(None))).unwrap();
        assert!(unanswered.get().contains("unavailable"));
        assert!(reply(&ctx(None)).is_none());
        let id = super::super::body::reply_id(Some("resp_x1"), &ctx(compared(None)));
        assert_eq!(id, "msg_x1");
        let own = super::super::body::reply_id(Some("resp_x1"), &ctx(None));
        assert_ne!(own, "msg_x1");
    }
}
