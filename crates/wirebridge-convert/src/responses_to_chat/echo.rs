//! The request fields a `Response` repeats, in the shape both specs
//! require: what the client sent, with required keys filled in.
//!
//! Echoes are written without `serde_json::Value`: values are copied as the
//! client wrote them (compacted, as they end up in SSE `data:` lines), and
//! objects that need a key filled in are patched as [`RawObject`]s.

use serde::Serialize;
use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{CreateResponse, Reasoning, Tool};
use wirebridge_wire::responses::strict::{ConversationRef, InputTransformation, ResponseEcho};

use super::history::conversation_id;
use wirebridge_wire::RawObject;

/// The echo of a request, `tools` being its parsed top-level tools;
/// `compact` says the request's body holds no whitespace outside its
/// strings, so that its values are copied without compacting. `withheld`
/// lists the reasoning items the backend was not given.
pub(crate) fn echo(
    request: &CreateResponse<'_>,
    reasoning: &Reasoning<'_>,
    tools: &[Tool<'_>],
    compact: bool,
    withheld: Vec<InputTransformation>,
) -> ResponseEcho {
    // Each default is built only where the request left its field out.
    let default = ResponseEcho::default_raw;
    let owned = |raw| owned(raw, compact);
    ResponseEcho {
        background: false,
        frequency_penalty: request.frequency_penalty.unwrap_or(0.0),
        instructions: request.instructions.map(|i| i.raw().to_owned()),
        max_output_tokens: request.max_output_tokens,
        max_tool_calls: request.max_tool_calls,
        parallel_tool_calls: request.parallel_tool_calls.unwrap_or(true),
        presence_penalty: request.presence_penalty.unwrap_or(0.0),
        previous_response_id: request.previous_response_id.as_deref().map(str::to_owned),
        prompt_cache_key: request.prompt_cache_key.as_deref().map(str::to_owned),
        // Answered by the bridge, not the request: see `cache_diagnostics`.
        prompt_cache_diagnostics: None,
        conversation: conversation_id(request)
            .ok()
            .flatten()
            .map(|id| ConversationRef {
                id: id.into_owned(),
            }),
        reasoning: non_null(request.reasoning).map(|_| echoed_reasoning(reasoning)),
        safety_identifier: request.safety_identifier.as_deref().map(str::to_owned),
        service_tier: request
            .service_tier
            .as_deref()
            .unwrap_or(ResponseEcho::DEFAULT_SERVICE_TIER)
            .to_owned(),
        store: request.store.unwrap_or(true),
        temperature: request
            .temperature
            .unwrap_or(ResponseEcho::DEFAULT_SAMPLING),
        text: echoed_text(request.text, compact)
            .unwrap_or_else(|| default(ResponseEcho::DEFAULT_TEXT)),
        tool_choice: owned(request.tool_choice)
            .unwrap_or_else(|| default(ResponseEcho::DEFAULT_TOOL_CHOICE)),
        tools: echoed_tools(request.tools, tools, compact)
            .unwrap_or_else(|| default(ResponseEcho::DEFAULT_TOOLS)),
        top_logprobs: request.top_logprobs.unwrap_or(0),
        top_p: request.top_p.unwrap_or(ResponseEcho::DEFAULT_SAMPLING),
        truncation: owned(request.truncation)
            .unwrap_or_else(|| default(ResponseEcho::DEFAULT_TRUNCATION)),
        user: request.user.as_deref().map(str::to_owned),
        metadata: owned(request.metadata)
            .unwrap_or_else(|| default(ResponseEcho::DEFAULT_METADATA)),
        input_transformations: withheld,
    }
}

/// `reasoning` as it applied: `effort` and `summary` (`null` when not
/// given; the older `generate_summary` read as `summary`), and `context`
/// when given.
fn echoed_reasoning(reasoning: &Reasoning<'_>) -> Box<RawValue> {
    #[derive(Serialize)]
    struct Echo<'a> {
        effort: Option<&'a str>,
        summary: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        context: Option<&'a str>,
    }
    let echo = Echo {
        effort: reasoning.effort.as_deref(),
        summary: reasoning
            .summary
            .as_deref()
            .or(reasoning.generate_summary.as_deref()),
        context: reasoning.context.as_deref(),
    };
    serde_json::value::to_raw_value(&echo).expect("echoes always serialize")
}

/// `text` as sent, with `format` filled in when only `verbosity` was given:
/// both specs require it in a `Response`.
fn echoed_text(raw: Option<&RawValue>, compact: bool) -> Option<Box<RawValue>> {
    let raw = non_null(raw)?;
    let mut text = RawObject::parse(raw).ok()?;
    if text.get("format").is_some_and(|f| f.get() != "null") {
        return owned(Some(raw), compact);
    }
    text.set("format", r#"{"type":"text"}"#);
    let filled = text.to_raw();
    Some(if compact { filled } else { compacted(filled) })
}

/// The tools as sent, with what the specs require of a function tool filled
/// in where a client left it out: `strict` as the backend applied it (Chat's
/// default, not strict), `parameters: null` and `description: null`.
fn echoed_tools(
    raw: Option<&RawValue>,
    tools: &[Tool<'_>],
    compact: bool,
) -> Option<Box<RawValue>> {
    fn complete(tools: &[Tool<'_>]) -> bool {
        tools.iter().all(|t| match t.kind() {
            "function" => t.strict.is_some() && t.parameters.is_some() && t.description.is_some(),
            "namespace" => t.tools.as_deref().is_none_or(complete),
            _ => true,
        })
    }
    fn fill(raw: &RawValue) -> Option<Box<RawValue>> {
        let mut tools: Vec<RawObject<'_>> = serde_json::from_str(raw.get()).ok()?;
        for tool in &mut tools {
            match tool.str("type") {
                Some("function") => {
                    tool.set_if_null("strict", "false");
                    tool.set_if_absent("parameters", "null");
                    tool.set_if_absent("description", "null");
                }
                Some("namespace") => {
                    if let Some(inner) = tool.get("tools").and_then(fill) {
                        tool.set_raw("tools", inner);
                    }
                }
                _ => {}
            }
        }
        serde_json::value::to_raw_value(&tools).ok()
    }
    let raw = non_null(raw)?;
    if complete(tools) {
        return owned(Some(raw), compact);
    }
    let filled = fill(raw)?;
    Some(if compact { filled } else { compacted(filled) })
}

/// A value that is there and not `null`.
pub(super) fn non_null(raw: Option<&RawValue>) -> Option<&RawValue> {
    raw.filter(|r| r.get() != "null")
}

/// An owned, compacted copy: echoes end up inside SSE `data:` lines. A
/// value from a body known to be `compact` is copied as it is.
fn owned(raw: Option<&RawValue>, compact: bool) -> Option<Box<RawValue>> {
    non_null(raw).map(|r| match compact {
        true => r.to_owned(),
        false => wirebridge_wire::compact(r).into_owned(),
    })
}

fn compacted(raw: Box<RawValue>) -> Box<RawValue> {
    match wirebridge_wire::compact(&raw) {
        std::borrow::Cow::Borrowed(_) => raw,
        std::borrow::Cow::Owned(compact) => compact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools_echo(json: &str) -> String {
        let request: CreateResponse<'_> = serde_json::from_str(json).unwrap();
        let tools = request.parse_tools().unwrap();
        echoed_tools(request.tools, &tools, false)
            .unwrap()
            .get()
            .to_owned()
    }

    #[test]
    fn function_tools_gain_the_keys_the_specs_require() {
        let echoed = tools_echo(
            r#"{"tools":[
                {"type": "function", "name": "f", "strict": null},
                {"type":"namespace","name":"ns","tools":[{"type":"function","name":"g","description":"d"}]},
                {"type":"web_search","user_location":{"type":"approximate"}}
            ]}"#,
        );
        assert_eq!(
            echoed,
            concat!(
                r#"[{"type":"function","name":"f","strict":false,"parameters":null,"description":null},"#,
                r#"{"type":"namespace","name":"ns","tools":[{"type":"function","name":"g","description":"d","strict":false,"parameters":null}]},"#,
                r#"{"type":"web_search","user_location":{"type":"approximate"}}]"#
            )
        );
    }

    #[test]
    fn complete_tools_are_copied_compacted() {
        let echoed = tools_echo(
            r#"{"tools":[ {"type":"function","name":"f","strict":true,"parameters":{},"description":"d"} ]}"#,
        );
        assert_eq!(
            echoed,
            r#"[{"type":"function","name":"f","strict":true,"parameters":{},"description":"d"}]"#
        );
    }

    #[test]
    fn text_gains_a_format() {
        let raw: &RawValue = serde_json::from_str(r#"{"verbosity": "low"}"#).unwrap();
        assert_eq!(
            echoed_text(Some(raw), false).unwrap().get(),
            r#"{"verbosity":"low","format":{"type":"text"}}"#
        );
        let raw: &RawValue = serde_json::from_str(r#"{"format":{"type":"json_object"}}"#).unwrap();
        assert_eq!(echoed_text(Some(raw), false).unwrap().get(), raw.get());
    }

    #[test]
    fn reasoning_echoes_what_applied() {
        let reasoning: Reasoning<'_> =
            serde_json::from_str(r#"{"effort":"low","generate_summary":"auto"}"#).unwrap();
        assert_eq!(
            echoed_reasoning(&reasoning).get(),
            r#"{"effort":"low","summary":"auto"}"#
        );
    }
}
