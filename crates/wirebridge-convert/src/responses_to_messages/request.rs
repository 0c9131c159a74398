//! A Responses request, whole (its history already written into `input`),
//! as a Messages request.

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::{CreateResponse, Input, InputItem};
use wirebridge_wire::RawObject;

use super::input::Reader;
use super::tools;
use super::write::{
    string, CacheControl, MessagesRequest, Metadata, OutputConfig, OutputFormat, Thinking,
};
use super::BackendContext;
use crate::error::ConvertError;
use crate::loss::{LossKind, LossReport};
use crate::recorder::LossRecorder;
use crate::responses_to_chat::Options;

/// Fields of a Responses request read here (or acted on before it came:
/// the stateful fields, `truncation`), by name: any other is reported.
const READ: [&str; 22] = [
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "reasoning",
    "stream",
    "stream_options",
    "metadata",
    "user",
    "safety_identifier",
    "text",
    "prompt_cache_key",
    "prompt_cache_retention",
    "service_tier",
    "include",
    "truncation",
    "store",
];

/// The least thinking budget a Messages backend takes.
const MIN_THINKING_BUDGET: u64 = 1024;

/// A request written for a Messages backend.
#[derive(Debug)]
pub struct TranslatedRequest {
    /// The body to send the backend's `POST /messages`.
    pub body: Vec<u8>,
    /// What reading the reply needs.
    pub context: BackendContext,
    /// What was dropped.
    pub losses: LossReport,
}

/// Writes a whole Responses request (nothing in it refers to stored state:
/// see [`responses_to_responses::translate_request`]) as a Messages
/// request. Paths in errors and losses are the whole request's: `input[N]`
/// counts the conversation's earlier turns too.
///
/// [`responses_to_responses::translate_request`]: crate::responses_to_responses::translate_request
pub fn translate_request(
    body: &[u8],
    options: &Options,
) -> Result<TranslatedRequest, ConvertError> {
    let text = std::str::from_utf8(body)
        .map_err(|_| ConvertError::invalid("", "the request body is not UTF-8"))?;
    // One pass for the requests clients send, which also tells whether
    // the body may hold fields the types do not model and keeps its
    // members; serde for the rest, which cannot tell.
    let (mut request, members, unmodeled) = match CreateResponse::read(body) {
        Some(read) => (read.request, read.members, read.unmodeled),
        None => {
            let request = serde_json::from_str(text)
                .map_err(|e| ConvertError::from_parse::<CreateResponse<'_>>(body, e))?;
            let members =
                RawObject::parse_str(text).map_err(|e| ConvertError::invalid("", e.to_string()))?;
            (request, members, true)
        }
    };
    let mut losses = LossRecorder::new(&options.policy);
    let profile = &options.profile.messages;

    for (field, value) in members.fields() {
        if field == "prompt_cache_options" {
            // The comparison is answered by the bridge; the rest is lost.
            let options = Some(value).filter(|v| v.get() != "null");
            let lacks = "the Messages API has no equivalent";
            crate::cache_diagnostics::record_cache_options(options, lacks, &mut losses)?;
            continue;
        }
        if !READ.contains(&field) && value.get() != "null" {
            losses.record(
                LossKind::UnsupportedParameter,
                field,
                "the Messages API has no equivalent",
            )?;
        }
    }
    let model = request
        .model
        .as_deref()
        .ok_or_else(|| ConvertError::MissingField("model".into()))?;
    // The tools the reader parsed are taken, not copied.
    let client_tools = match request.parsed_tools.take() {
        Some(tools) => tools,
        None => request
            .parse_tools()
            .map_err(|e| ConvertError::from_parse_at("tools", e))?,
    };
    let (mut tools, declared) = tools::declare(&client_tools, &mut losses)?;
    let tool_choice = tools::choice(
        request.tool_choice,
        request.parallel_tool_calls,
        &declared,
        !tools.is_empty(),
        &mut losses,
    )?;
    let said;
    let items: &[InputItem<'_>] = match &request.input {
        Some(Input::Items(items)) => items,
        Some(Input::Text(text)) => {
            said = [InputItem {
                role: Some("user".into()),
                content: Some(text.raw()),
                ..InputItem::default()
            }];
            &said
        }
        None => &[],
    };
    let mut reader = Reader {
        tools: &declared,
        seal: options.seal.as_ref(),
        losses: &mut losses,
    };
    // A conversation with no message is the backend's to refuse (a
    // WebSocket warm-up turn, answered without it, has none).
    let mut conversation = reader.read(request.instructions, items)?;

    let max_tokens = request.max_output_tokens.unwrap_or(profile.max_tokens);
    let thinking = thinking(&request, max_tokens, options, &mut losses)?;
    let output_config = output_format(&request, &mut losses)?;
    let metadata = request
        .safety_identifier
        .as_ref()
        .or(request.user.as_ref())
        .map(|user| Metadata {
            user_id: string(user.as_str()),
        });
    if request
        .metadata
        .is_some_and(|m| m.get() != "null" && m.get() != "{}")
    {
        losses.record(
            LossKind::UnsupportedParameter,
            "metadata",
            "Messages metadata holds only a user id",
        )?;
    }
    include(&request, &mut losses)?;
    stream_options(request.stream_options, &mut losses)?;
    let service_tier = match request.service_tier.as_deref() {
        None | Some("auto") => None,
        Some("default") => Some("standard_only"),
        Some(other) => {
            losses.record(
                LossKind::UnsupportedParameter,
                "service_tier",
                format!("Messages has no `{other}` service tier"),
            )?;
            None
        }
    };
    if profile.cache_control {
        let ttl = match request.prompt_cache_retention.map(RawValue::get) {
            Some(r#""24h""#) => Some("1h"),
            _ => None,
        };
        mark_cache(
            &mut tools,
            &mut conversation,
            CacheControl {
                kind: "ephemeral",
                ttl,
            },
        );
    }

    if unmodeled {
        // Top-level fields are reported above, by name. The items the
        // bridge stored and handed back come with the fields it writes
        // (`id`, `status`, `phase`, ...), all of them modeled: only what a
        // client added is found here.
        let settings = crate::unmodeled::settings_indices(items);
        let left_out = |path: &str| {
            crate::unmodeled::is_top_level(path) || crate::unmodeled::inside_items(path, &settings)
        };
        let paths = wirebridge_wire::responses::lenient::unmodeled_fields(body);
        crate::unmodeled::record(paths, left_out, &mut losses)?;
    }
    let messages = MessagesRequest {
        model,
        max_tokens,
        system: conversation.system,
        messages: conversation.messages,
        tools,
        tool_choice,
        thinking,
        temperature: request.temperature.and(members.get("temperature")),
        top_p: request.top_p.and(members.get("top_p")),
        metadata,
        output_config,
        service_tier,
        stream: request.stream.unwrap_or(false),
    };
    // About as long as the request it was written from: one buffer.
    let mut body = Vec::with_capacity(text.len() + 256);
    serde_json::to_writer(&mut body, &messages).expect("a Messages request serializes");
    Ok(TranslatedRequest {
        body,
        context: BackendContext {
            tools: declared,
            seal: options.seal.clone(),
        },
        losses: losses.finish(),
    })
}

/// The `count_tokens` request of a Messages request the bridge wrote: what
/// the prompt is made of (`model`, `system`, `messages`, `tools`,
/// `tool_choice`, `thinking`), without what only a generation takes. `None`
/// for a body that is not one.
///
/// ```
/// use wirebridge_convert::responses_to_messages::count_tokens_request;
///
/// let body = br#"{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"Hi"}]}"#;
/// let count = count_tokens_request(body).unwrap();
/// assert_eq!(count, br#"{"model":"m","messages":[{"role":"user","content":"Hi"}]}"#);
/// ```
pub fn count_tokens_request(messages_body: &[u8]) -> Option<Vec<u8>> {
    #[derive(serde::Deserialize, serde::Serialize)]
    struct Count<'a> {
        #[serde(borrow)]
        model: &'a RawValue,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        system: Option<&'a RawValue>,
        #[serde(borrow)]
        messages: &'a RawValue,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        tools: Option<&'a RawValue>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        tool_choice: Option<&'a RawValue>,
        #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
        thinking: Option<&'a RawValue>,
    }
    let count: Count<'_> = serde_json::from_slice(messages_body).ok()?;
    serde_json::to_vec(&count).ok()
}

/// `reasoning.effort` as a thinking budget, which must leave room for the
/// answer within `max_tokens`.
fn thinking(
    request: &CreateResponse<'_>,
    max_tokens: u64,
    options: &Options,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<Thinking>, ConvertError> {
    let reasoning = request
        .parse_reasoning()
        .map_err(|e| ConvertError::from_parse_at("reasoning", e))?;
    let Some(effort) = reasoning.effort.as_deref() else {
        return Ok(None);
    };
    let Some(budget) = options.profile.messages.thinking_budget(effort) else {
        return Ok(None);
    };
    let budget = budget.min(max_tokens.saturating_sub(1));
    if budget < MIN_THINKING_BUDGET {
        losses.record(
            LossKind::ReasoningSetting,
            "reasoning.effort",
            format!(
                "thinking needs a budget of at least {MIN_THINKING_BUDGET} tokens below `max_output_tokens`; the model answers without it"
            ),
        )?;
        return Ok(None);
    }
    Ok(Some(Thinking {
        kind: "enabled",
        budget_tokens: budget,
    }))
}

/// `text.format` (a JSON schema is `output_config.format`) and
/// `text.verbosity`.
fn output_format<'a>(
    request: &CreateResponse<'a>,
    losses: &mut LossRecorder<'_>,
) -> Result<Option<OutputConfig<'a>>, ConvertError> {
    let text = request
        .parse_text()
        .map_err(|e| ConvertError::from_parse_at("text", e))?;
    if text.verbosity.is_some() {
        losses.record(
            LossKind::UnsupportedParameter,
            "text.verbosity",
            "Messages has no verbosity setting",
        )?;
    }
    let Some(format) = text.format else {
        return Ok(None);
    };
    match format.kind.as_deref() {
        None | Some("text") => Ok(None),
        Some("json_schema") => {
            let schema = format.schema.ok_or_else(|| {
                ConvertError::invalid(
                    "text.format.schema",
                    "a JSON schema format needs its `schema`",
                )
            })?;
            Ok(Some(OutputConfig {
                format: OutputFormat {
                    kind: "json_schema",
                    schema,
                },
            }))
        }
        Some(other) => {
            losses.record(
                LossKind::UnsupportedParameter,
                "text.format",
                format!("Messages has no `{other}` output format; the answer is free text"),
            )?;
            Ok(None)
        }
    }
}

/// `include`: sealed reasoning is what this bridge gives a Messages
/// backend's thinking anyway; nothing else has a Messages form.
fn include(
    request: &CreateResponse<'_>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    for (n, entry) in request.include.iter().flatten().enumerate() {
        if entry.as_str() != "reasoning.encrypted_content" {
            losses.record(
                LossKind::IncludeOption,
                format!("include[{n}]"),
                format!("a Messages backend gives nothing for `{}`", entry.as_str()),
            )?;
        }
    }
    Ok(())
}

/// `stream_options` are the stream the bridge writes: what holds there is
/// no loss (no obfuscation padding; Codex's summary delivery, which sends
/// each reasoning item whole before what follows it).
fn stream_options(
    raw: Option<&RawValue>,
    losses: &mut LossRecorder<'_>,
) -> Result<(), ConvertError> {
    let Some(raw) = raw.filter(|r| r.get() != "null") else {
        return Ok(());
    };
    let options = RawObject::parse(raw)
        .map_err(|e| ConvertError::invalid("stream_options", e.to_string()))?;
    for (key, value) in options.fields() {
        match (key, value.get()) {
            ("include_obfuscation", "false") | ("reasoning_summary_delivery", _) => {}
            _ => losses.record(
                LossKind::UnsupportedParameter,
                format!("stream_options.{key}"),
                "the bridge's stream has no such option",
            )?,
        }
    }
    Ok(())
}

/// Cache breakpoints: after the tools, after the system prompt, and after
/// the conversation's last block that takes one: each turn then reads all
/// before it from the cache the turn before wrote.
fn mark_cache(
    tools: &mut [super::write::Tool<'_>],
    conversation: &mut super::input::Conversation<'_>,
    mark: CacheControl,
) {
    if let Some(tool) = tools.last_mut() {
        tool.cache_control = Some(mark);
    }
    if let Some(block) = conversation.system.last_mut() {
        block.mark(mark);
    }
    if let Some(message) = conversation.messages.last_mut() {
        for block in message.content.iter_mut().rev() {
            if block.mark(mark) {
                break;
            }
        }
    }
}
