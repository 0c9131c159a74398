//! `compaction`: a conversation compacted on demand, and the `compaction`
//! block that stands for it in later requests.
//!
//! The bridge's engine compacts, as it does for Responses clients: a
//! request with `compaction: {"type": "summarize"}` becomes a Responses
//! request whose input ends with a `compaction_trigger`, answered with the
//! `compaction` item alone; that item's sealed carrier is the `content` of
//! the reply's one `compaction` block (`stop_reason: "compaction"`). A
//! later request that sends the block back has it read as that
//! `compaction` item, and what came before it left out, as Anthropic's API
//! drops it.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use wirebridge_wire::messages::lenient::{Block, Content, CreateMessage};
use wirebridge_wire::raw::{JsonStr, JsonText};
use wirebridge_wire::responses::strict::{CompactionInput, InputItem};

use super::content::parse_content;
use super::path::Path;
use crate::error::ConvertError;
use crate::loss::LossKind;
use crate::recorder::LossRecorder;
use crate::responses_to_chat::compaction::MIN_THRESHOLD;
use crate::responses_to_chat::Seal;

/// Marks a Responses request translated from a Messages request whose
/// conversation starts from a `compaction` block: its first input item is
/// that block's carrier, and this is the block's path
/// (`messages[i].content[j]`), for the engine to name when it does not
/// open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactedAt(pub String);

/// Checks that the carrier of the first input item of the Responses
/// request `body` (one marked [`CompactedAt`] `at`) opens with `seal`:
/// sealed by this bridge, for this tenant, unaltered. Anything else is an
/// error naming the block, which a Messages client sent in its own terms:
/// Anthropic's API refuses a block it did not sign.
///
/// ```
/// use wirebridge_convert::messages_to_responses::{check_compacted, CompactedAt};
///
/// let body = br#"{"model":"m","input":[{"type":"compaction","encrypted_content":"forged"}]}"#;
/// let at = CompactedAt("messages[0].content[0]".into());
/// let err = check_compacted(body, &at, None).unwrap_err();
/// assert_eq!(err.param(), Some("messages[0].content[0]"));
/// ```
pub fn check_compacted(
    body: &[u8],
    at: &CompactedAt,
    seal: Option<&Seal>,
) -> Result<(), ConvertError> {
    #[derive(serde::Deserialize)]
    struct Request<'a> {
        #[serde(borrow)]
        input: Option<Vec<&'a RawValue>>,
    }
    #[derive(serde::Deserialize)]
    struct Item<'a> {
        #[serde(borrow)]
        encrypted_content: Option<JsonStr<'a>>,
    }
    let refuse = |why: &str| {
        ConvertError::invalid(
            at.0.clone(),
            format!("this compaction block cannot be read: {why}; send back the block a compaction reply of this bridge gave, unchanged, with the same credential"),
        )
    };
    let first = serde_json::from_slice::<Request<'_>>(body)
        .ok()
        .and_then(|r| r.input?.into_iter().next())
        .and_then(|raw| serde_json::from_str::<Item<'_>>(raw.get()).ok())
        .and_then(|item| item.encrypted_content)
        .ok_or_else(|| refuse("it has no carrier"))?;
    let Some(seal) = seal else {
        return Err(refuse("this bridge has no seal key to open it with"));
    };
    seal.open_compaction(&first.decode())
        .map(drop)
        .map_err(|why| refuse(&why.to_string()))
}

/// The only kind of compaction a request asks for.
const SUMMARIZE: &str = "summarize";

/// Whether the request asks for the conversation compacted: its
/// `compaction` read and checked, `null` asking for nothing. Its
/// `instructions`, which would replace the summarizing prompt, are
/// reported: the engine summarizes with its own.
pub(super) fn asked(
    request: &CreateMessage<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<bool, ConvertError> {
    let Some(raw) = request.compaction.filter(|r| r.get() != "null") else {
        return Ok(false);
    };
    let fields: BTreeMap<String, &RawValue> = serde_json::from_str(raw.get()).map_err(|_| {
        ConvertError::invalid(
            "compaction",
            "must be an object such as {\"type\": \"summarize\"}",
        )
    })?;
    let text = |key: &str| {
        fields
            .get(key)
            .and_then(|raw| serde_json::from_str::<Option<String>>(raw.get()).ok())
            .flatten()
    };
    match text("type").as_deref() {
        Some(SUMMARIZE) => {}
        None => return Err(ConvertError::MissingField("compaction.type".into())),
        Some(other) => {
            return Err(ConvertError::invalid(
                "compaction.type",
                format!("unknown compaction type '{other}' (expected {SUMMARIZE})"),
            ))
        }
    }
    for key in fields
        .keys()
        .filter(|k| !matches!(k.as_str(), "type" | "instructions"))
    {
        losses.record(
            LossKind::UnsupportedParameter,
            format!("compaction.{key}"),
            "a field the bridge does not read: the compaction runs without it",
        )?;
    }
    let instructions = text("instructions");
    if instructions.is_some_and(|text| !text.trim().is_empty()) {
        losses.record(
            LossKind::UnsupportedParameter,
            "compaction.instructions",
            "the bridge summarizes with its own prompt; these instructions are not sent",
        )?;
    }
    Ok(true)
}

/// The `type` of Anthropic's context edit that compacts past a threshold.
const COMPACT_EDIT: &str = "compact_20260112";

/// The threshold a compaction edit without a `trigger` compacts past, as
/// Anthropic's API has it.
const DEFAULT_TRIGGER: u64 = 150_000;

/// The Responses `context_management` of the request's compaction edit
/// (`context_management.edits[i]` of type `compact_20260112`), if it has
/// one: compaction past its `trigger` (input tokens, 150 000 when absent),
/// which the engine measures and runs before answering. Its
/// `instructions` are reported, as `compaction`'s are; so is
/// `pause_after_compaction`, as the engine answers in the same turn.
pub(super) fn threshold(
    request: &CreateMessage<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<String>, ConvertError> {
    #[derive(serde::Deserialize)]
    struct Trigger {
        #[serde(rename = "type")]
        kind: Option<String>,
        value: Option<serde_json::Value>,
    }
    let edits = request
        .context_management
        .as_ref()
        .and_then(|c| c.edits.as_deref())
        .unwrap_or_default();
    let mut compacting = edits
        .iter()
        .enumerate()
        .filter(|(_, edit)| edit.kind.as_deref() == Some(COMPACT_EDIT));
    let Some((i, edit)) = compacting.next() else {
        return Ok(None);
    };
    let path = format!("context_management.edits[{i}]");
    if let Some((j, _)) = compacting.next() {
        return Err(ConvertError::invalid(
            format!("context_management.edits[{j}]"),
            format!("a request has one {COMPACT_EDIT} edit; {path} is one already"),
        ));
    }
    if request.compaction.is_some_and(|c| c.get() != "null") {
        return Err(ConvertError::invalid(
            "compaction",
            format!("a compaction request cannot also have a {COMPACT_EDIT} edit ({path})"),
        ));
    }
    let trigger = match edit.trigger.filter(|r| r.get() != "null") {
        None => DEFAULT_TRIGGER,
        Some(raw) => {
            let trigger_path = format!("{path}.trigger");
            let trigger: Trigger = serde_json::from_str(raw.get()).map_err(|_| {
                ConvertError::invalid(
                    &trigger_path,
                    "must be an object such as {\"type\": \"input_tokens\", \"value\": 150000}",
                )
            })?;
            match trigger.kind.as_deref() {
                Some("input_tokens") => {}
                None => return Err(ConvertError::MissingField(format!("{trigger_path}.type"))),
                Some(other) => {
                    return Err(ConvertError::invalid(
                        format!("{trigger_path}.type"),
                        format!("unknown trigger type '{other}' (expected input_tokens)"),
                    ))
                }
            }
            match trigger.value.as_ref().and_then(serde_json::Value::as_u64) {
                Some(value) if value >= MIN_THRESHOLD => value,
                _ => {
                    return Err(ConvertError::invalid(
                        format!("{trigger_path}.value"),
                        format!("must be a whole number of input tokens, {MIN_THRESHOLD} or more"),
                    ))
                }
            }
        }
    };
    if edit.pause_after_compaction == Some(true) {
        losses.record(
            LossKind::UnsupportedParameter,
            format!("{path}.pause_after_compaction"),
            "the bridge answers in the turn it compacts: the reply follows the compaction block",
        )?;
    }
    let instructions = edit
        .instructions
        .and_then(|raw| serde_json::from_str::<Option<String>>(raw.get()).ok())
        .flatten();
    if instructions.is_some_and(|text| !text.trim().is_empty()) {
        losses.record(
            LossKind::UnsupportedParameter,
            format!("{path}.instructions"),
            "the bridge summarizes with its own prompt; these instructions are not sent",
        )?;
    }
    Ok(Some(format!(
        r#"[{{"type":"compaction","compact_threshold":{trigger}}}]"#
    )))
}

/// Reads a `compaction` block at `path`: one with a carrier drops every
/// item before it from `items` and stands first, as the `compaction` item
/// it was (`true`); one whose `content` is `null` (a compaction that
/// failed) changes nothing (`false`), as Anthropic's API treats it.
pub(super) fn carry<'a>(
    block: &mut Block<'a>,
    path: Path<'_>,
    items: &mut Vec<InputItem<'a>>,
) -> Result<bool, ConvertError> {
    let content_path = path.member("content");
    let content = match block.parsed_content.take() {
        Some(parsed) => Some(parsed),
        None => match block.content {
            Some(raw) => parse_content(raw, content_path)?,
            None => None,
        },
    };
    let carrier = match content {
        None => return Ok(false),
        Some(Content::Text(text)) if !text.is_empty() => text,
        Some(_) => {
            return Err(ConvertError::invalid(
                content_path.to_string(),
                "must be the string the compaction reply gave, sent back as it was",
            ))
        }
    };
    items.clear();
    items.push(InputItem::Compaction(CompactionInput {
        encrypted_content: JsonText::from(carrier),
    }));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use crate::loss::LossPolicy;
    use crate::messages_to_responses::{translate_request, Options};

    fn translate(body: &str) -> Result<serde_json::Value, crate::ConvertError> {
        let translated = translate_request(body.as_bytes(), &Options::default())?;
        Ok(serde_json::from_slice(&translated.body).unwrap())
    }

    #[test]
    fn a_compaction_request_ends_its_input_with_a_trigger() {
        let body = r#"{"model":"m","max_tokens":64,"compaction":{"type":"summarize"},
            "messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]}"#;
        let input = &translate(body).unwrap()["input"];
        assert_eq!(input.as_array().unwrap().len(), 3, "{input}");
        assert_eq!(input[0]["content"], "Hi");
        assert_eq!(input[2], serde_json::json!({"type": "compaction_trigger"}));
        let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
        assert!(translated.losses.is_empty(), "{:?}", translated.losses);
    }

    #[test]
    fn a_thread_s_compaction_may_send_nothing_new() {
        let thread = r#""thread":{"type":"continue","previous_message_id":"msg_7"}"#;
        let body = format!(
            r#"{{"model":"m","max_tokens":64,"messages":[],{thread},"compaction":{{"type":"summarize"}}}}"#
        );
        let json = translate(&body).unwrap();
        assert_eq!(
            json["input"],
            serde_json::json!([{"type": "compaction_trigger"}])
        );
        assert_eq!(json["previous_response_id"], "resp_7");
        // Anything else still sends a message.
        for body in [
            format!(r#"{{"model":"m","max_tokens":64,"messages":[],{thread}}}"#),
            r#"{"model":"m","max_tokens":64,"messages":[],"compaction":{"type":"summarize"}}"#
                .into(),
        ] {
            assert_eq!(
                translate(&body).unwrap_err().param(),
                Some("messages"),
                "{body}"
            );
        }
    }

    #[test]
    fn a_compaction_request_is_checked_and_its_instructions_reported() {
        for (compaction, field) in [
            (r#"{"type":"trim"}"#, "compaction.type"),
            (r#"{}"#, "compaction.type"),
            (r#""summarize""#, "compaction"),
        ] {
            let body = format!(
                r#"{{"model":"m","max_tokens":64,"compaction":{compaction},"messages":[{{"role":"user","content":"Hi"}}]}}"#
            );
            let err = translate(&body).unwrap_err();
            assert_eq!(err.param(), Some(field), "{compaction}");
        }
        let body = r#"{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"Hi"}],
            "compaction":{"type":"summarize","instructions":"Keep the numbers.","pause":true}}"#;
        let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
        let paths: Vec<_> = translated.losses.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(paths, ["compaction.pause", "compaction.instructions"]);
        let strict = Options {
            policy: LossPolicy::strict(),
        };
        assert!(translate_request(body.as_bytes(), &strict).is_err());
    }

    fn with_edit(edit: &str, extra: &str) -> String {
        format!(
            r#"{{"model":"m","max_tokens":64,"messages":[{{"role":"user","content":"Hi"}}],"context_management":{{"edits":[{{"type":"clear_thinking_20251015","keep":"all"}},{edit}]}}{extra}}}"#
        )
    }

    #[test]
    fn a_compaction_edit_becomes_the_engine_s_threshold() {
        let body = with_edit(
            r#"{"type":"compact_20260112","trigger":{"type":"input_tokens","value":60000}}"#,
            "",
        );
        let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
        assert_eq!(
            json["context_management"],
            serde_json::json!([{"type": "compaction", "compact_threshold": 60000}])
        );
        assert!(translated.losses.is_empty(), "{:?}", translated.losses);
        // Without a trigger, Anthropic's default.
        let json = translate(&with_edit(r#"{"type":"compact_20260112"}"#, "")).unwrap();
        assert_eq!(json["context_management"][0]["compact_threshold"], 150_000);
        // What the engine does not do is reported.
        let body = with_edit(
            r#"{"type":"compact_20260112","pause_after_compaction":true,"instructions":"Keep names."}"#,
            "",
        );
        let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
        let paths: Vec<_> = translated.losses.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "context_management.edits[1].pause_after_compaction",
                "context_management.edits[1].instructions"
            ]
        );
    }

    #[test]
    fn a_compaction_edit_is_checked_naming_the_field() {
        for (edit, extra, field) in [
            (
                r#"{"type":"compact_20260112","trigger":{"type":"tool_uses","value":5000}}"#,
                "",
                "context_management.edits[1].trigger.type",
            ),
            (
                r#"{"type":"compact_20260112","trigger":{"type":"input_tokens","value":10}}"#,
                "",
                "context_management.edits[1].trigger.value",
            ),
            (
                r#"{"type":"compact_20260112","trigger":{"type":"input_tokens"}}"#,
                "",
                "context_management.edits[1].trigger.value",
            ),
            (
                r#"{"type":"compact_20260112"},{"type":"compact_20260112"}"#,
                "",
                "context_management.edits[2]",
            ),
            (
                r#"{"type":"compact_20260112"}"#,
                r#","compaction":{"type":"summarize"}"#,
                "compaction",
            ),
        ] {
            let err = translate(&with_edit(edit, extra)).unwrap_err();
            assert_eq!(err.param(), Some(field), "{edit}");
        }
    }

    #[test]
    fn a_compaction_block_stands_first_for_what_came_before_it() {
        let body = r#"{"model":"m","max_tokens":64,"messages":[
            {"role":"user","content":"Old question"},
            {"role":"assistant","content":[{"type":"text","text":"old"},{"type":"compaction","content":"wbs1.sealed"}]},
            {"role":"user","content":"New question"}]}"#;
        let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
        assert_eq!(
            json["input"],
            serde_json::json!([
                {"type": "compaction", "encrypted_content": "wbs1.sealed"},
                {"type": "message", "role": "user", "content": "New question"},
            ])
        );
        assert_eq!(
            translated.context.compacted_at.as_deref(),
            Some("messages[1].content[1]")
        );
        assert!(translated.losses.is_empty(), "{:?}", translated.losses);

        // In a user turn, the text after it is kept; the text before, not.
        let body = r#"{"model":"m","max_tokens":64,"messages":[
            {"role":"user","content":[{"type":"text","text":"before"},{"type":"compaction","content":"c"},{"type":"text","text":"after"}]}]}"#;
        let json = translate(body).unwrap();
        assert_eq!(json["input"][0]["type"], "compaction");
        assert_eq!(json["input"][1]["content"][0]["text"], "after");
        assert_eq!(json["input"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn a_failed_compaction_block_changes_nothing_and_a_malformed_one_is_named() {
        let body = r#"{"model":"m","max_tokens":64,"messages":[
            {"role":"user","content":"Hi"},
            {"role":"assistant","content":[{"type":"compaction","content":null}]},
            {"role":"user","content":"Again"}]}"#;
        let translated = translate_request(body.as_bytes(), &Options::default()).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
        assert_eq!(json["input"].as_array().unwrap().len(), 2);
        assert_eq!(translated.context.compacted_at, None);
        for content in [r#""""#, r#"[{"type":"text","text":"x"}]"#] {
            let body = format!(
                r#"{{"model":"m","max_tokens":64,"messages":[{{"role":"user","content":[{{"type":"compaction","content":{content}}}]}}]}}"#
            );
            let err = translate(&body).unwrap_err();
            assert_eq!(
                err.param(),
                Some("messages[0].content[0].content"),
                "{content}"
            );
        }
    }
}
