//! Responses request → Chat request: the top-level parameters.

use std::borrow::Cow;
use std::ops::Range;

use wirebridge_wire::chat::strict::{ChatRequest, JsonSchemaFormat, ResponseFormat, StreamOptions};
use wirebridge_wire::responses::lenient::{CreateResponse, Input, ItemKind, TextParam};
use wirebridge_wire::responses::strict::ResponseEcho;
use wirebridge_wire::responses::written::WrittenTools;
use wirebridge_wire::RawObject;

use super::background;
use super::builder::{translate_input, Conversation, Replay};
use super::compaction_items::{self, Mode};
use super::context_window::{self, Truncation};
use super::echo::{echo, non_null};
use super::history::{conversation_id, turn_input, History, Turn};
use super::reasoning;
use super::spliced;
use super::tools::{tool_lists, translate_tools};
use super::{Options, ResponsesContext};
use crate::error::ConvertError;
use crate::ids::ResponseIds;
use crate::loss::{LossKind, LossReport};
use crate::profile::MaxTokensField;
use crate::recorder::LossRecorder;

/// A translated request.
#[derive(Debug)]
pub struct TranslatedRequest {
    /// The Chat Completions request body.
    pub body: Vec<u8>,
    /// What translating the reply needs.
    pub context: ResponsesContext,
    /// What was dropped.
    pub losses: LossReport,
    /// The `Response` to answer at once (`queued`) when the request runs
    /// in the background ([`Options::background`]): the caller then runs
    /// it, and keeps what it ends with.
    pub background: Option<Vec<u8>>,
    /// The turn to keep once the response is done, when a store keeps
    /// responses ([`Options::store`]) and the client did not send
    /// `store: false`.
    pub turn: Option<Turn>,
}

/// The include value that asks for output-text log probabilities.
const INCLUDE_LOGPROBS: &str = "message.output_text.logprobs";

/// Translates a `POST /v1/responses` body into a `POST /v1/chat/completions`
/// body. A `previous_response_id` is a loss here: with a response store,
/// parse with [`ParsedRequest`] and translate with the stored [`History`].
pub fn translate_request(
    body: &[u8],
    options: &Options,
) -> Result<TranslatedRequest, ConvertError> {
    ParsedRequest::parse(body)?.translate(&History::default(), options)
}

/// A `POST /v1/responses` body, parsed (borrowing it) and ready to
/// translate once the conversation it continues is known.
#[derive(Debug)]
pub struct ParsedRequest<'a> {
    pub(crate) request: CreateResponse<'a>,
    /// The body, as the client sent it.
    pub(crate) body: &'a [u8],
    pub(crate) len: usize,
    /// Whether the body holds no whitespace outside its strings: its raw
    /// values are then echoed as they are, with no compacting.
    pub(crate) compact: bool,
    /// The body's fields as raw text, when the one-pass reader read it:
    /// what a Responses backend is sent, patched, rather than read again.
    pub(crate) members: Option<RawObject<'a>>,
    /// Whether the body may hold fields the request types do not model
    /// (the one-pass reader met one, or serde read the body): only then
    /// is it walked for them.
    pub(crate) unmodeled: bool,
}

impl<'a> ParsedRequest<'a> {
    /// Parses a request body; an invalid one is an error naming the field.
    pub fn parse(body: &'a [u8]) -> Result<Self, ConvertError> {
        Self::parse_knowing(body, &[])
    }

    /// [`parse`](Self::parse) for a body this process wrote, told where it
    /// copied values it had read already
    /// ([`messages_to_responses::TranslatedRequest::copies`](crate::messages_to_responses::TranslatedRequest::copies)):
    /// those are stepped over, not read again. The same request as `parse`
    /// gives, if `copies` is told right.
    pub fn parse_knowing(body: &'a [u8], copies: &'a [Range<usize>]) -> Result<Self, ConvertError> {
        Self::parse_written(body, copies, None)
    }

    /// [`parse_knowing`](Self::parse_knowing), also told where the body's
    /// function tools were written
    /// ([`messages_to_responses::TranslatedRequest::tools`](crate::messages_to_responses::TranslatedRequest::tools)):
    /// they are taken from there, not read. The same request as `parse`
    /// gives, if the notes are told right.
    pub fn parse_written(
        body: &'a [u8],
        copies: &'a [Range<usize>],
        tools: Option<&'a WrittenTools>,
    ) -> Result<Self, ConvertError> {
        // One pass for the bodies clients send; serde's layers, which also
        // name what is wrong, for the rest.
        if let Some(read) = CreateResponse::read_written(body, copies, tools) {
            return Ok(Self {
                request: read.request,
                body,
                len: body.len(),
                compact: read.compact,
                members: Some(read.members),
                unmodeled: read.unmodeled,
            });
        }
        let compact = ConvertError::check_depth_and_compactness(body)?;
        let request: CreateResponse<'a> = serde_json::from_slice(body)
            .map_err(|e| ConvertError::from_parse::<CreateResponse<'_>>(body, e))?;
        Ok(Self {
            request,
            body,
            len: body.len(),
            compact,
            members: None,
            unmodeled: true,
        })
    }

    /// The response the request continues (`previous_response_id`), which
    /// a store resolves into the [`History`] to translate with.
    pub fn previous_response_id(&self) -> Option<&str> {
        self.request.previous_response_id.as_deref()
    }

    /// The conversation the request is part of (`conversation`, an id or
    /// an object with its `id`), which a store resolves into the
    /// [`History`] to translate with; an error naming the field when it is
    /// neither, or comes with `previous_response_id` (the API allows only
    /// one of them).
    pub fn conversation(&self) -> Result<Option<Cow<'_, str>>, ConvertError> {
        conversation_id(&self.request)
    }

    /// The request's `prompt_cache_key`: what the client says ties its
    /// requests together, read here whether or not the backend is sent it.
    pub fn prompt_cache_key(&self) -> Option<&str> {
        self.request.prompt_cache_key.as_deref()
    }

    /// The ids the request's `item_reference` input items name, in order: a
    /// store finds the items for [`History::with_referable_items`].
    pub fn item_references(&self) -> Vec<&str> {
        let Some(Input::Items(items)) = &self.request.input else {
            return Vec::new();
        };
        items
            .iter()
            .filter(|item| item.classify() == ItemKind::ItemReference)
            .filter_map(|item| item.id.as_deref())
            .collect()
    }

    /// Translates the request, the stored `history` coming before its own
    /// input (instructions are not inherited, as the API specifies).
    pub fn translate(
        self,
        history: &History<'a>,
        options: &Options,
    ) -> Result<TranslatedRequest, ConvertError> {
        translate(self, history, options, Mode::default())
    }
}

/// What the request's `truncation` asks: to fit the model's context window
/// (`auto`, where the window is known), or nothing. `auto` without a known
/// window, or a value the API does not have, is reported.
fn truncation(
    request: &CreateResponse<'_>,
    model: &str,
    options: &Options,
    losses: &mut LossRecorder<'_>,
) -> Result<Truncation, ConvertError> {
    let Some(value) = non_null(request.truncation).filter(|t| t.get() != r#""disabled""#) else {
        return Ok(Truncation::Off);
    };
    if value.get() != r#""auto""# {
        losses.record(
            LossKind::UnsupportedParameter,
            "truncation",
            format!("unknown truncation strategy {}", value.get()),
        )?;
        return Ok(Truncation::Off);
    }
    match options.context_window(model) {
        Some(window) => Ok(Truncation::Fit {
            window,
            reserve: request.max_output_tokens.unwrap_or(0),
        }),
        None => {
            losses.record(
                LossKind::UnsupportedParameter,
                "truncation",
                "the backend's context window is not known (`context_window` in the profile or \
                 the model catalog), so nothing is truncated",
            )?;
            Ok(Truncation::Off)
        }
    }
}

/// Translates a parsed request; `mode` says whether it is the client's
/// own, or a step of a compaction.
pub(super) fn translate<'a>(
    parsed: ParsedRequest<'a>,
    history: &History<'a>,
    options: &Options,
    mode: Mode<'_>,
) -> Result<TranslatedRequest, ConvertError> {
    let whole = |parsed| {
        translate_with(parsed, history, options, mode, false)?
            .ok_or_else(|| ConvertError::UnreadableHistory("the history was not translated".into()))
    };
    if !history.has_cache() || mode.summarize || mode.compacted.is_some() {
        return whole(parsed);
    }
    let body = parsed.body;
    match translate_with(parsed, history, options, mode, true) {
        Ok(Some(translated)) => {
            history.note_spliced();
            Ok(translated)
        }
        // Not spliced: the whole conversation translated, and its errors.
        Ok(None) | Err(_) => whole(ParsedRequest::parse(body)?),
    }
}

/// [`translate`], the stored turns copied from the history's cache when
/// `splice` (`None` when that cannot give exactly the whole's translation;
/// never without `splice`).
fn translate_with<'a>(
    parsed: ParsedRequest<'a>,
    history: &History<'a>,
    options: &Options,
    mode: Mode<'_>,
    splice: bool,
) -> Result<Option<TranslatedRequest>, ConvertError> {
    let ParsedRequest {
        mut request,
        body: sent,
        len: request_len,
        compact,
        unmodeled,
        ..
    } = parsed;
    let mut losses = LossRecorder::new(&options.policy);
    let profile = &options.profile;

    let model = request
        .model
        .clone()
        .ok_or_else(|| ConvertError::MissingField("model".into()))?;
    // The response's ids, known now: the turn's input items get ids of the
    // same stem as the response's own, so an item id names its response.
    let ids = ResponseIds::new();
    let store = request.store != Some(false);
    let background = background::runs_in_background(&request, options)?;
    // A turn in a conversation is always kept: its items join the
    // conversation whether or not the response itself is stored.
    let keeps =
        options.store && (store || options.keep_unstored || history.conversation().is_some());
    let turn = match keeps {
        true => Some(Turn {
            previous_response_id: history.previous_response_id().map(str::to_owned),
            conversation: history.conversation().map(str::to_owned),
            input: turn_input(request.input.as_ref(), &ids, history)?,
            store,
        }),
        false => None,
    };
    compaction_items::report(&request, mode, &mut losses)?;
    // Known before the items are taken; empty (unallocated) when there is
    // nothing to walk for.
    let settings = match unmodeled {
        true => crate::unmodeled::settings_items(request.input.as_ref()),
        false => Vec::new(),
    };
    let (input, own) = match splice {
        false => (
            Some(Conversation::new(request.input.take(), history)?),
            Vec::new(),
        ),
        true => match spliced::own_items(request.input.take()) {
            Some(own) => (None, own),
            None => return Ok(None),
        },
    };
    let lists = tool_lists(&request, input.as_ref().map_or(&own[..], |i| &i.items[..]))?;
    let text = request
        .parse_text()
        .map_err(|e| ConvertError::from_parse_at("text", e))?;
    let reasoning = request
        .parse_reasoning()
        .map_err(|e| ConvertError::from_parse_at("reasoning", e))?;

    let translated_tools = translate_tools(&lists, request.tool_choice, profile, &mut losses)?;
    let replay = Replay {
        all_turns: reasoning::replays_all_turns(&reasoning, profile),
    };
    let (messages, spliced, withheld) = match input {
        Some(input) => {
            let translated = translate_input(
                request.instructions,
                &input,
                &translated_tools.names,
                options,
                replay,
                mode,
                &mut losses,
            )?;
            (translated.messages, None, translated.withheld)
        }
        None => {
            let names = &translated_tools.names;
            let instructions = request.instructions;
            let translate = spliced::translate_input;
            match translate(
                instructions,
                history,
                own,
                names,
                options,
                replay,
                &mut losses,
            ) {
                Some(mut spliced) => {
                    let withheld = std::mem::take(&mut spliced.withheld);
                    (Vec::new(), Some(spliced), withheld)
                }
                None => return Ok(None),
            }
        }
    };

    let mut chat = ChatRequest {
        model: model.clone().into(),
        messages,
        tools: (!translated_tools.tools.is_empty()).then_some(translated_tools.tools),
        tool_choice: translated_tools.choice,
        parallel_tool_calls: request.parallel_tool_calls,
        web_search_options: translated_tools.web_search,
        temperature: request.temperature,
        top_p: request.top_p,
        presence_penalty: request.presence_penalty,
        frequency_penalty: request.frequency_penalty,
        ..ChatRequest::default()
    };

    match profile.max_tokens_field {
        MaxTokensField::MaxCompletionTokens => {
            chat.max_completion_tokens = request.max_output_tokens
        }
        MaxTokensField::MaxTokens => chat.max_tokens = request.max_output_tokens,
    }
    chat.response_format = response_format(&text)?;
    if let Some(verbosity) = text.verbosity.clone() {
        if profile.passes("verbosity") {
            chat.verbosity = Some(verbosity.into());
        } else {
            losses.record(
                LossKind::UnsupportedParameter,
                "text.verbosity",
                "the backend has no verbosity setting",
            )?;
        }
    }

    let plan = reasoning::plan(&request, &reasoning, options, &mut losses)?;
    chat.reasoning_effort = plan.effort;

    if let Some(n) = request.top_logprobs {
        chat.logprobs = Some(true);
        chat.top_logprobs = Some(n);
    }
    for (i, entry) in request.include.iter().flatten().enumerate() {
        if entry == INCLUDE_LOGPROBS {
            chat.logprobs = Some(true);
        } else if entry == reasoning::INCLUDE_ENCRYPTED {
            // Settled by the reasoning plan.
        } else {
            losses.record(
                LossKind::IncludeOption,
                format!("include[{i}]"),
                format!("'{entry}' has no Chat Completions equivalent"),
            )?;
        }
    }

    super::passthrough::passthrough(&request, history, &mut chat, options, mode, &mut losses)?;

    // A summary is asked for in one piece, whatever the client's reply is.
    let stream = request.stream.unwrap_or(false);
    if stream && !mode.summarize {
        chat.stream = Some(true);
        if profile.stream_usage {
            chat.stream_options = Some(StreamOptions {
                include_usage: true,
            });
        }
    }

    if mode.summarize {
        mode.summary_request(&mut chat);
    }

    // A summary is of the whole conversation.
    let truncation = match mode.summarize {
        true => Truncation::Off,
        false => truncation(&request, &model, options, &mut losses)?,
    };
    // The translation is about as long as the request: one allocation.
    let input_len = request_len + history.text_len();
    let mut body = Vec::with_capacity(input_len + input_len / 4);
    match &spliced {
        None => {
            chat.write_json(&mut body);
            if context_window::fit(&mut chat, &body, truncation, &mut losses)? {
                body.clear();
                chat.write_json(&mut body);
            }
        }
        // Fitting a window weighs every message: left to the whole.
        Some(_) if !matches!(truncation, Truncation::Off) => return Ok(None),
        Some(spliced) => {
            if !spliced.write_body(&chat, &mut body) {
                return Ok(None);
            }
        }
    }
    if unmodeled {
        let paths = wirebridge_wire::responses::lenient::unmodeled_fields(sent);
        let left_out = |path: &str| crate::unmodeled::inside_items(path, &settings);
        crate::unmodeled::record(paths, left_out, &mut losses)?;
    }
    let context = ResponsesContext {
        model: model.into_owned(),
        echo: ResponseEcho {
            background,
            ..echo(&request, &reasoning, &lists[0].tools, compact, withheld)
        },
        tool_names: translated_tools.names,
        stream,
        reasoning_output: plan.output,
        think_tags: profile.think_tags,
        seal: options.seal.clone().filter(|_| plan.seal),
        ids,
        leading: Vec::new(),
        prior_usage: None,
    };
    let background =
        background.then(|| background::queued(&context.ids, &context.model, &context.echo));
    Ok(Some(TranslatedRequest {
        body,
        context,
        losses: losses.finish(),
        background,
        turn,
    }))
}

fn response_format<'a>(text: &TextParam<'a>) -> Result<Option<ResponseFormat<'a>>, ConvertError> {
    let Some(format) = &text.format else {
        return Ok(None);
    };
    Ok(match format.kind.as_deref() {
        None | Some("text") => None,
        Some("json_object") => Some(ResponseFormat::JsonObject),
        Some("json_schema") => {
            let name = format
                .name
                .ok_or_else(|| ConvertError::MissingField("text.format.name".into()))?;
            Some(ResponseFormat::JsonSchema {
                json_schema: JsonSchemaFormat {
                    name: name.into(),
                    description: format.description.map(Into::into),
                    schema: format.schema,
                    strict: format.strict,
                },
            })
        }
        Some(other) => {
            return Err(ConvertError::invalid(
                "text.format.type",
                format!(
                    "unknown format type '{other}' (expected text, json_object or json_schema)"
                ),
            ))
        }
    })
}
