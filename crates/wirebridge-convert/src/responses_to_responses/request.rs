//! The client's request, completed for a backend that keeps no state.

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::CreateResponse;
use wirebridge_wire::responses::strict::ResponseEcho;
use wirebridge_wire::RawObject;

use super::additional_tools;
use super::compaction_items::{self, Mode};
use super::context_window;
use super::input::whole_input;
use super::NativeContext;
use crate::error::ConvertError;
use crate::ids::ResponseIds;
use crate::loss::{LossKind, LossReport};
use crate::profile::ReasoningOutput;
use crate::recorder::LossRecorder;
use crate::responses_to_chat::background;
use crate::responses_to_chat::compaction::Summary;
use crate::responses_to_chat::{echo, turn_input, History, Options, ParsedRequest, Turn};

/// The `include` value that asks for sealed reasoning.
const INCLUDE_ENCRYPTED: &str = "reasoning.encrypted_content";

/// A request completed for the backend.
#[derive(Debug)]
pub struct TranslatedRequest {
    /// The body to send the backend's `POST /responses`.
    pub body: Vec<u8>,
    /// What re-sending the reply needs.
    pub context: NativeContext,
    /// What was dropped.
    pub losses: LossReport,
    /// The `Response` to answer at once (`queued`) when the request runs
    /// in the background ([`Options::background`]): the caller then runs
    /// it, and keeps what it ends with.
    pub background: Option<Vec<u8>>,
    /// The turn to keep once the response is done, when a store keeps
    /// responses ([`Options::store`]) and the client did not send
    /// `store: false` (or [`Options::keep_unstored`] is set).
    pub turn: Option<Turn>,
}

/// Fields only a server that keeps state can act on: removed from what the
/// backend gets, the store having acted on them (or reported as losses).
const STATEFUL_FIELDS: [&str; 5] = [
    "previous_response_id",
    "store",
    "conversation",
    "background",
    "prompt",
];

/// Completes a parsed request for a backend that keeps no state: `input`
/// becomes the stored `history`'s items followed by the request's own (an
/// `item_reference` replaced by the item it names), and the stateful
/// fields are removed. Everything else reaches the backend as the client
/// wrote it.
pub fn translate_request<'a>(
    parsed: ParsedRequest<'a>,
    history: &History<'a>,
    options: &Options,
) -> Result<TranslatedRequest, ConvertError> {
    translate(parsed, history, options, Mode::default())
}

/// [`translate_request`] for a request whose compaction the caller runs
/// (see [`ParsedRequest::compaction`]): `context_management` is acted on
/// by the caller, and not sent to the backend. This is what a threshold is
/// measured on.
pub fn translate_compacting<'a>(
    parsed: ParsedRequest<'a>,
    history: &History<'a>,
    options: &Options,
) -> Result<TranslatedRequest, ConvertError> {
    let mode = Mode {
        compacts: true,
        compacted: None,
    };
    translate(parsed, history, options, mode)
}

/// [`translate_compacting`] with the conversation just compacted into
/// `summary`: the backend reads the client's messages, then the summary;
/// the reply's output starts with the `compaction` item.
pub fn translate_compacted<'a>(
    parsed: ParsedRequest<'a>,
    history: &History<'a>,
    options: &Options,
    summary: &Summary,
) -> Result<TranslatedRequest, ConvertError> {
    let mode = Mode {
        compacts: true,
        compacted: Some(&summary.text),
    };
    let mut t = translate(parsed, history, options, mode)?;
    t.context.leading = vec![summary.item(&t.context.ids, 0)];
    t.context.prior_usage = summary.usage;
    t.losses.extend(summary.losses.clone());
    Ok(t)
}

fn translate<'a>(
    parsed: ParsedRequest<'a>,
    history: &History<'a>,
    options: &Options,
    mode: Mode<'_>,
) -> Result<TranslatedRequest, ConvertError> {
    let ParsedRequest {
        request,
        body,
        compact,
        len,
        members,
        // Items are forwarded as the client wrote them: nothing is lost.
        unmodeled: _,
    } = parsed;
    let mut losses = LossRecorder::new(&options.policy);
    let model = request
        .model
        .as_deref()
        .ok_or_else(|| ConvertError::MissingField("model".into()))?
        .to_owned();
    let ids = ResponseIds::new();
    let own_input = turn_input(request.input.as_ref(), &ids, history)?;
    let store = request.store != Some(false);
    let background = background::runs_in_background(&request, options)?;
    // A turn in a conversation is always kept: its items join the
    // conversation whether or not the response itself is stored.
    let keeps = store || options.keep_unstored || history.conversation().is_some();
    let turn = (options.store && keeps).then(|| Turn {
        previous_response_id: history.previous_response_id().map(str::to_owned),
        conversation: history.conversation().map(str::to_owned),
        input: own_input.clone(),
        store,
    });
    report_stateful(&request, history, background, &mut losses)?;

    // The reader kept the body's fields as it read them; a body serde
    // parsed is read again for them.
    let mut upstream = match members {
        Some(members) => members,
        None => serde_json::from_slice::<RawObject<'_>>(body)
            .map_err(|e| ConvertError::from_parse::<CreateResponse<'_>>(body, e))?,
    };
    for field in STATEFUL_FIELDS {
        upstream.remove(field);
    }
    if mode.compacts {
        upstream.remove("context_management");
    }
    crate::cache_diagnostics::keep_comparison_from_backend(&mut upstream);
    let input = whole_input(history, &own_input, len, options.seal.as_ref(), &mut losses)?;
    // Before compaction is read: a summary's cut must not take the tools
    // declared before it.
    let input = additional_tools::lift(input, &own_input, &mut upstream)?;
    if !options.profile.named_tool_choice {
        name_the_choice_as_required(&mut upstream);
    }
    let input =
        compaction_items::read(input, &own_input, options.seal.as_ref(), mode, &mut losses)?;
    // `input` is joined from arrays read whole (the stored turns, and the
    // items just written from the request), so it is written as it is.
    let mut out = Vec::with_capacity(len + history.text_len() + 64);
    upstream.write_with(&mut out, "input", &input);
    let auto = request.truncation.is_some_and(|t| t.get() == r#""auto""#);
    if let Some(window) = options.context_window(&model).filter(|_| auto) {
        let reserve = request.max_output_tokens.unwrap_or(0);
        if let Some(kept) = context_window::fit(&input, &out, window, reserve, &mut losses)? {
            out.clear();
            upstream.write_with(&mut out, "input", kept.get());
        }
    }

    let reasoning = request
        .parse_reasoning()
        .map_err(|e| ConvertError::from_parse_at("reasoning", e))?;
    let tools = request
        .parse_tools()
        .map_err(|e| ConvertError::from_parse_at("tools", e))?;
    let asked_summary = reasoning
        .summary
        .as_deref()
        .or(reasoning.generate_summary.as_deref())
        .is_some_and(|s| s != "none");
    let output = match options.reasoning_output {
        ReasoningOutput::Auto => options.profile.reasoning_output,
        set => set,
    };
    let summary = match output {
        ReasoningOutput::Auto => asked_summary,
        set => set == ReasoningOutput::Summary,
    };
    let wants_sealed = request
        .include
        .iter()
        .flatten()
        .any(|entry| entry == INCLUDE_ENCRYPTED);
    let context = NativeContext {
        seal: options.seal.clone().filter(|_| wants_sealed),
        model,
        echo: ResponseEcho {
            background,
            ..echo(&request, &reasoning, &tools, compact, Vec::new())
        },
        stream: request.stream.unwrap_or(false),
        summary,
        ids,
        leading: Vec::new(),
        prior_usage: None,
    };
    let background =
        background.then(|| background::queued(&context.ids, &context.model, &context.echo));
    Ok(TranslatedRequest {
        body: out,
        context,
        losses: losses.finish(),
        background,
        turn,
    })
}

/// A named `tool_choice` (`{"type":"function","name":…}`) for a backend
/// that reads only the string forms (llama.cpp's server takes an object as
/// `auto`): `"required"`, with `tools` narrowed to the named function,
/// which forces the same call. A name no tool has is left for the backend
/// to refuse.
fn name_the_choice_as_required(upstream: &mut RawObject<'_>) {
    let named = upstream
        .get("tool_choice")
        .filter(|choice| choice.get().starts_with('{'))
        .and_then(|choice| RawObject::parse(choice).ok())
        .filter(|choice| choice.str("type") == Some("function"))
        .and_then(|choice| choice.str("name").map(str::to_owned));
    let Some(name) = named else {
        return;
    };
    let tools: Vec<&RawValue> = upstream
        .get("tools")
        .and_then(|tools| serde_json::from_str(tools.get()).ok())
        .unwrap_or_default();
    let chosen: Vec<&RawValue> = tools
        .into_iter()
        .filter(|tool| {
            RawObject::parse(tool).is_ok_and(|tool| {
                tool.str("type") == Some("function") && tool.str("name") == Some(name.as_str())
            })
        })
        .collect();
    if chosen.is_empty() {
        return;
    }
    let narrowed = serde_json::value::to_raw_value(&chosen).expect("raw tools serialize");
    upstream.set_raw("tools", narrowed);
    upstream.set("tool_choice", r#""required""#);
}

/// Stateful fields the store has not acted on: a loss each, under the
/// policy (stateful features are refused by default).
fn report_stateful(
    request: &CreateResponse<'_>,
    history: &History<'_>,
    background: bool,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    if request.previous_response_id.is_some() && history.previous_response_id().is_none() {
        losses.record(
            LossKind::StatefulFeature,
            "previous_response_id",
            "continuing a stored response needs a response store; send the whole conversation in `input` instead",
        )?;
    }
    let stateful: [(&str, Option<&RawValue>, &str); 3] = [
        (
            "conversation",
            request
                .conversation
                .filter(|_| history.conversation().is_none()),
            "conversations need a response store that keeps them",
        ),
        (
            "prompt",
            request.prompt,
            "stored prompt templates live on OpenAI's servers",
        ),
        (
            "background",
            request
                .background
                .filter(|b| b.get() == "true" && !background),
            "background responses are not run here",
        ),
    ];
    for (field, value, reason) in stateful {
        if value.is_some_and(|v| v.get() != "null") {
            losses.record(LossKind::StatefulFeature, field, reason)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn translate(body: &str, history: &History<'_>) -> (serde_json::Value, TranslatedRequest) {
        let parsed = ParsedRequest::parse(body.as_bytes()).unwrap();
        let options = Options {
            store: true,
            ..Options::default()
        };
        let translated = translate_request(parsed, history, &options).unwrap();
        let upstream = serde_json::from_slice(&translated.body).unwrap();
        (upstream, translated)
    }

    #[test]
    fn a_first_turn_keeps_every_field_but_the_stateful_ones() {
        let (upstream, translated) = translate(
            r#"{"model":"m","input":"Hi","store":true,"temperature":0.2,"tools":[{"type":"function","name":"f","parameters":{}}],"x_vendor":{"a":1}}"#,
            &History::default(),
        );
        assert_eq!(upstream["model"], "m");
        assert_eq!(upstream["temperature"], 0.2);
        assert_eq!(upstream["x_vendor"]["a"], 1);
        assert_eq!(upstream["tools"][0]["name"], "f");
        assert!(upstream.get("store").is_none());
        assert_eq!(upstream["input"][0]["role"], "user");
        assert_eq!(upstream["input"][0]["content"][0]["text"], "Hi");
        let turn = translated.turn.unwrap();
        assert!(turn.store);
        assert_eq!(turn.previous_response_id, None);
        // The stored turn and the sent input name the same items.
        let stored: serde_json::Value = serde_json::from_str(&turn.input).unwrap();
        assert_eq!(stored, upstream["input"]);
    }

    #[test]
    fn a_body_left_to_serde_is_sent_as_one_read_in_one_pass() {
        // An escaped key is serde's to read: the fields reach the backend
        // the same, in the same order, and `input` where it was.
        let plain = r#"{"model":"m","input":"Hi","x_vendor":{"a":[1,2]},"store":true,"top_p":0.5}"#;
        let escaped = plain.replace(r#""x_vendor""#, r#""x_v\u0065ndor""#);
        let kept = |body: &str| {
            ParsedRequest::parse(body.as_bytes())
                .unwrap()
                .members
                .is_some()
        };
        assert!(kept(plain));
        assert!(!kept(&escaped));
        let (mut one_pass, _) = translate(plain, &History::default());
        let (mut serde, translated) = translate(&escaped, &History::default());
        // Each turn's item ids are its own.
        for body in [&mut one_pass, &mut serde] {
            body["input"][0]["id"].take();
        }
        assert_eq!(one_pass, serde);
        let body = String::from_utf8(translated.body).unwrap();
        assert!(body.starts_with(r#"{"model":"m","input":[{"#), "{body}");
        assert!(
            body.ends_with(r#""x_vendor":{"a":[1,2]},"top_p":0.5}"#),
            "{body}"
        );
    }

    #[test]
    fn reasoning_the_bridge_sealed_is_opened_anywhere_in_the_history() {
        use crate::responses_to_chat::Seal;
        use crate::seal::{SealKey, Sealer};
        use wirebridge_wire::raw::JsonText;
        let seal = Seal {
            sealer: std::sync::Arc::new(Sealer::new(SealKey::generate(), Vec::new())),
            scope: "tenant".into(),
        };
        let sealed = seal.reasoning(&JsonText::from_text("Thought it over."));
        let reasoning = format!(
            r#"[{{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"{sealed}"}}]"#
        );
        let first = r#"[{"type":"message","id":"m1","role":"user","content":"a"}]"#;
        let history = History::new("resp_2", [first, "[]", "[]", reasoning.as_str()]);
        let options = Options {
            seal: Some(seal),
            ..Options::default()
        };
        let body = br#"{"model":"m","previous_response_id":"resp_2","input":"next"}"#;
        let parsed = ParsedRequest::parse(body).unwrap();
        let translated = translate_request(parsed, &history, &options).unwrap();
        let upstream: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
        let input = upstream["input"].as_array().unwrap();
        assert_eq!(input.len(), 3);
        assert_eq!(input[0]["id"], "m1");
        assert!(input[1].get("encrypted_content").is_none());
        assert_eq!(input[1]["content"][0]["text"], "Thought it over.");
        assert_eq!(input[2]["content"][0]["text"], "next");
    }

    #[test]
    fn a_chained_turn_sends_the_history_first() {
        let history = History::new(
            "resp_1",
            [
                r#"[{"type":"message","id":"m1","role":"user","content":"a"}]"#,
                "[]",
                r#"[ {"type":"function_call","id":"fc1","call_id":"c","name":"f","arguments":"{}"} ]"#,
            ],
        );
        let (upstream, translated) = translate(
            r#"{"model":"m","previous_response_id":"resp_1","input":[{"type":"function_call_output","call_id":"c","output":"ok"}]}"#,
            &history,
        );
        assert!(upstream.get("previous_response_id").is_none());
        let input = upstream["input"].as_array().unwrap();
        assert_eq!(input.len(), 3);
        assert_eq!(input[0]["id"], "m1");
        assert_eq!(input[1]["call_id"], "c");
        assert_eq!(input[2]["type"], "function_call_output");
        assert_eq!(
            translated.context.echo.previous_response_id.as_deref(),
            Some("resp_1")
        );
        assert_eq!(
            translated.turn.unwrap().previous_response_id.as_deref(),
            Some("resp_1")
        );
    }

    #[test]
    fn stateful_fields_without_a_store_are_refused_by_name() {
        for (body, field) in [
            (
                r#"{"model":"m","previous_response_id":"resp_1"}"#,
                "previous_response_id",
            ),
            (r#"{"model":"m","conversation":"conv_1"}"#, "conversation"),
            (r#"{"model":"m","background":true}"#, "background"),
        ] {
            let parsed = ParsedRequest::parse(body.as_bytes()).unwrap();
            let err =
                translate_request(parsed, &History::default(), &Options::default()).unwrap_err();
            assert!(err.to_string().contains(field), "{body}: {err}");
        }
    }

    #[test]
    fn a_named_choice_is_sent_as_required_where_the_backend_reads_only_strings() {
        let body = r#"{"model":"m","input":"Hi","tool_choice":{"type":"function","name":"b"},
            "tools":[{"type":"function","name":"a","parameters":{}},{"type":"function","name":"b","parameters":{}}]}"#;
        let parsed = ParsedRequest::parse(body.as_bytes()).unwrap();
        let llama = Options {
            profile: crate::BackendProfile::llama_cpp(),
            ..Options::default()
        };
        let translated = translate_request(parsed, &History::default(), &llama).unwrap();
        let upstream: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
        assert_eq!(upstream["tool_choice"], "required");
        assert_eq!(upstream["tools"].as_array().unwrap().len(), 1);
        assert_eq!(upstream["tools"][0]["name"], "b");
        // The client's own choice is what the response repeats.
        assert_eq!(
            translated.context.echo.tool_choice.get(),
            r#"{"type":"function","name":"b"}"#
        );

        let parsed = ParsedRequest::parse(body.as_bytes()).unwrap();
        let vllm = Options {
            profile: crate::BackendProfile::vllm(),
            ..Options::default()
        };
        let translated = translate_request(parsed, &History::default(), &vllm).unwrap();
        let upstream: serde_json::Value = serde_json::from_slice(&translated.body).unwrap();
        assert_eq!(upstream["tool_choice"]["name"], "b");
        assert_eq!(upstream["tools"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn a_summary_is_given_when_asked_for() {
        let (_, asked) = translate(
            r#"{"model":"m","reasoning":{"effort":"low","summary":"auto"}}"#,
            &History::default(),
        );
        assert!(asked.context.summary);
        let (_, not_asked) = translate(
            r#"{"model":"m","reasoning":{"effort":"low"}}"#,
            &History::default(),
        );
        assert!(!not_asked.context.summary);
    }
}
