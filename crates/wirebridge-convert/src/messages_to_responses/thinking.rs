//! `thinking` and `output_config` → Responses `reasoning`, `include` and
//! `text.format`.

use std::borrow::Cow;

use wirebridge_wire::messages::lenient::CreateMessage;
use wirebridge_wire::raw::JsonText;
use wirebridge_wire::responses::strict::{Reasoning, TextFormat, TextParam};

use super::ThinkingDisplay;
use crate::error::ConvertError;

/// What the request's thinking settings come to.
pub(super) struct ThinkingPlan<'a> {
    pub(super) reasoning: Option<Reasoning<'a>>,
    pub(super) display: ThinkingDisplay,
}

/// The efforts `output_config.effort` takes, which Responses takes too.
const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// The reasoning effort a thinking budget comes to: `low` below 4,096
/// tokens, `medium` below 16,384, `high` from 16,384.
///
/// Anthropic budgets start at 1,024 tokens and suggest 16k and more for
/// hard problems; Claude Code's largest budget (31,999) is `high`.
///
/// ```
/// use wirebridge_convert::messages_to_responses::effort_for_budget;
///
/// assert_eq!(effort_for_budget(1_024), "low");
/// assert_eq!(effort_for_budget(10_000), "medium");
/// assert_eq!(effort_for_budget(31_999), "high");
/// ```
pub fn effort_for_budget(budget_tokens: u64) -> &'static str {
    match budget_tokens {
        ..4_096 => "low",
        4_096..16_384 => "medium",
        _ => "high",
    }
}

pub(super) fn plan<'a>(request: &CreateMessage<'a>) -> Result<ThinkingPlan<'a>, ConvertError> {
    let thinking = request.thinking.as_ref();
    let display = |field: Option<&str>| match field {
        None | Some("summarized") => Ok(ThinkingDisplay::Summarized),
        // `updates` hides the reasoning as `omitted` does; what it shows,
        // the short notes the model writes between tool calls, is the
        // reply's ordinary text, which every backend already sends.
        Some("omitted" | "updates") => Ok(ThinkingDisplay::Omitted),
        Some(other) => Err(ConvertError::invalid(
            "thinking.display",
            format!("unknown display '{other}' (expected summarized, omitted or updates)"),
        )),
    };
    let (display, budget_effort) = match thinking {
        None => (ThinkingDisplay::Off, None),
        Some(t) => match t.kind.as_deref() {
            Some("enabled") => {
                let budget = t
                    .budget_tokens
                    .ok_or_else(|| ConvertError::MissingField("thinking.budget_tokens".into()))?;
                (
                    display(t.display.as_deref())?,
                    Some(effort_for_budget(budget)),
                )
            }
            Some("adaptive") => (display(t.display.as_deref())?, None),
            Some("disabled") => (ThinkingDisplay::Off, None),
            Some(other) => {
                return Err(ConvertError::invalid(
                    "thinking.type",
                    format!(
                        "unknown thinking type '{other}' (expected enabled, adaptive or disabled)"
                    ),
                ))
            }
            None => return Err(ConvertError::MissingField("thinking.type".into())),
        },
    };
    let asked_effort = match request
        .output_config
        .as_ref()
        .and_then(|c| c.effort.clone())
    {
        Some(effort) if EFFORTS.contains(&effort.as_ref()) => Some(effort.into_cow()),
        Some(other) => {
            return Err(ConvertError::invalid(
                "output_config.effort",
                format!("unknown effort '{other}' (expected low, medium, high, xhigh or max)"),
            ))
        }
        None => None,
    };
    // An effort the client set outright wins over one read from a budget.
    let effort = asked_effort.or(budget_effort.map(Cow::Borrowed));
    let summary = (display == ThinkingDisplay::Summarized).then_some(Cow::Borrowed("auto"));
    let reasoning =
        (effort.is_some() || summary.is_some()).then_some(Reasoning { effort, summary });
    Ok(ThinkingPlan { reasoning, display })
}

/// `output_config.format` as `text.format`: a JSON schema named `output`
/// (Responses requires a name; Anthropic's has none), strictly followed.
///
/// The first structured-outputs beta sent it as `output_format`; a request
/// with both is refused rather than one of them chosen silently.
pub(super) fn text<'a>(request: &CreateMessage<'a>) -> Result<Option<TextParam<'a>>, ConvertError> {
    let current = request
        .output_config
        .as_ref()
        .and_then(|c| c.format.as_ref());
    let (format, path) = match (current, request.output_format.as_ref()) {
        (None, None) => return Ok(None),
        (Some(format), None) => (format, "output_config.format"),
        (None, Some(format)) => (format, "output_format"),
        (Some(_), Some(_)) => return Err(ConvertError::invalid(
            "output_format",
            "give the output format once: as output_config.format, or as the older output_format",
        )),
    };
    match format.kind.as_deref() {
        Some("json_schema") => {
            let schema = format
                .schema
                .filter(|s| s.get() != "null")
                .ok_or_else(|| ConvertError::MissingField(format!("{path}.schema")))?;
            Ok(Some(TextParam {
                format: Some(TextFormat::JsonSchema {
                    name: JsonText::from_text("output"),
                    schema,
                    description: None,
                    strict: Some(true),
                }),
                verbosity: None,
            }))
        }
        Some(other) => Err(ConvertError::invalid(
            format!("{path}.type"),
            format!("unknown format type '{other}' (expected json_schema)"),
        )),
        None => Err(ConvertError::MissingField(format!("{path}.type"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The display, effort and summary a request's thinking comes to.
    fn plan_of(
        body: &str,
    ) -> Result<(ThinkingDisplay, Option<String>, Option<String>), ConvertError> {
        let request: CreateMessage<'_> = serde_json::from_str(body).unwrap();
        let plan = plan(&request)?;
        let reasoning = plan.reasoning.as_ref();
        Ok((
            plan.display,
            reasoning.and_then(|r| r.effort.as_deref().map(str::to_owned)),
            reasoning.and_then(|r| r.summary.as_deref().map(str::to_owned)),
        ))
    }

    #[test]
    fn updates_hide_the_reasoning_as_omitted_does() {
        for kind in [r#""adaptive""#, r#""enabled","budget_tokens":20000"#] {
            let updates = plan_of(&format!(
                r#"{{"thinking":{{"type":{kind},"display":"updates"}}}}"#
            ))
            .unwrap();
            let omitted = plan_of(&format!(
                r#"{{"thinking":{{"type":{kind},"display":"omitted"}}}}"#
            ))
            .unwrap();
            // Thinking blocks carry the signature only, and no summary is
            // asked of the backend.
            assert_eq!(updates.0, ThinkingDisplay::Omitted, "{kind}");
            assert_eq!(updates.2, None, "{kind}");
            assert_eq!(updates, omitted, "{kind}");
        }
        let enabled =
            plan_of(r#"{"thinking":{"type":"enabled","budget_tokens":20000,"display":"updates"}}"#)
                .unwrap();
        assert_eq!(enabled.1.as_deref(), Some("high"));
    }

    #[test]
    fn an_unknown_display_is_refused_naming_the_field() {
        let err = plan_of(r#"{"thinking":{"type":"adaptive","display":"loud"}}"#).unwrap_err();
        assert_eq!(err.param(), Some("thinking.display"));
        assert!(err.to_string().contains("updates"), "{err}");
    }
}
