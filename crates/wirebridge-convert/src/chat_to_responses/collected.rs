//! A Responses stream for a client that asked for a body.
//!
//! Some servers stream whatever the request said. The stream is translated
//! by the stream translator, exactly as for a streaming client, and the
//! chunks it writes are folded into one `chat.completion`.

use serde_json::value::RawValue;
use wirebridge_wire::chat::lenient::{ChatCompletion, Choice};
use wirebridge_wire::chat::strict::{
    BodyChoice, ChoiceLogprobs, CompletionBody, CompletionUsage, CustomCall, FunctionCall,
    ReplyMessage, ToolCall,
};
use wirebridge_wire::raw::{EscapedText, JsonStr, JsonText};

use super::body::{join_arrays, unfinished_call_loss, TranslatedBody};
use super::reply::Failure;
use super::stream::StreamTranslator;
use super::{ChatContext, ChatReasoning};
use crate::error::ConvertError;
use crate::frames::Frames;
use crate::ids::unix_now;
use crate::stream::SseTranslator;

/// Translates a whole Responses event stream into a `chat.completion`
/// body, for a client that did not ask for a stream.
///
/// A stream that fails (an `error` event, `response.failed`, an end before
/// the terminal event) is the upstream's failure, as a non-streaming error
/// would be.
///
/// ```
/// use wirebridge_convert::chat_to_responses::{translate_stream_body, ChatContext};
///
/// let events = concat!(
///     "event: response.output_text.delta\n",
///     "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hi\"}\n\n",
///     "event: response.completed\n",
///     "data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n",
/// );
/// let reply = translate_stream_body(events.as_bytes(), &ChatContext::default()).unwrap();
/// let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
/// assert_eq!(body["object"], "chat.completion");
/// assert_eq!(body["choices"][0]["message"]["content"], "Hi");
/// assert_eq!(body["choices"][0]["finish_reason"], "stop");
/// ```
pub fn translate_stream_body(
    events: &[u8],
    ctx: &ChatContext,
) -> Result<TranslatedBody, ConvertError> {
    // The usage chunk carries the usage the body needs.
    let stream_ctx = ChatContext {
        stream: true,
        include_usage: true,
        ..ctx.clone()
    };
    let mut stream = SseTranslator::new(StreamTranslator::new(stream_ctx));
    // The chunks are folded as they were written: bare JSON, each apart.
    let mut chunks = Frames::json();
    stream.feed(events, &mut chunks);
    stream.finish(&mut chunks);
    let translator = stream.into_translator();

    let mut fold = Fold::default();
    for chunk in chunks.events() {
        if !chunk.is_empty() {
            fold.chunk(chunk)?;
        }
    }
    // A call the backend left unfinished is no call to run: the body
    // leaves it out, as a body read whole does.
    let mut losses = translator.losses().clone();
    for (index, call_id, name) in translator.unfinished_calls() {
        fold.calls.retain(|call| call.id != call_id);
        losses.push(unfinished_call_loss(index, name));
    }
    Ok(TranslatedBody {
        body: fold.body(translator.id(), ctx),
        losses,
        summary: translator.summary(),
    })
}

/// What the chunks said so far.
#[derive(Default)]
struct Fold {
    created: u64,
    model: String,
    content: Option<EscapedText>,
    refusal: Option<EscapedText>,
    reasoning: Option<EscapedText>,
    calls: Vec<FoldedCall>,
    logprobs: Vec<Box<RawValue>>,
    finish_reason: Option<String>,
    usage: Option<CompletionUsage>,
}

struct FoldedCall {
    id: String,
    custom: bool,
    name: String,
    arguments: EscapedText,
}

impl Fold {
    fn chunk(&mut self, data: &[u8]) -> Result<(), ConvertError> {
        let chunk: ChatCompletion<'_> = serde_json::from_slice(data)
            .map_err(|e| ConvertError::InvalidUpstream(format!("unreadable chunk: {e}")))?;
        if let Some(failure) = Failure::from_raw(chunk.error) {
            return Err(ConvertError::UpstreamFailed {
                message: failure.message,
                error_type: Some(failure.error_type),
                code: failure.code,
            });
        }
        if self.created == 0 {
            self.created = chunk.created.unwrap_or_default();
        }
        if let Some(model) = chunk.model.as_deref().filter(|m| !m.is_empty()) {
            model.clone_into(&mut self.model);
        }
        if let Some(u) = &chunk.usage {
            self.usage = Some(CompletionUsage {
                prompt_tokens: u.prompt_tokens.unwrap_or_default(),
                completion_tokens: u.completion_tokens.unwrap_or_default(),
                total_tokens: u.total_tokens.unwrap_or_default(),
                prompt_tokens_details: wirebridge_wire::chat::strict::PromptDetails {
                    cached_tokens: u
                        .prompt_tokens_details
                        .and_then(|d| d.cached_tokens)
                        .unwrap_or_default(),
                },
                completion_tokens_details: wirebridge_wire::chat::strict::CompletionDetails {
                    reasoning_tokens: u
                        .completion_tokens_details
                        .and_then(|d| d.reasoning_tokens)
                        .unwrap_or_default(),
                },
            });
        }
        for choice in chunk.choices.iter().flatten() {
            self.choice(choice);
        }
        Ok(())
    }

    fn choice(&mut self, choice: &Choice<'_>) {
        if let Some(reason) = choice.finish_reason.as_deref() {
            self.finish_reason = Some(reason.to_owned());
        }
        if let Some(logprobs) = choice.logprobs.as_ref().and_then(|l| l.content) {
            self.logprobs.push(logprobs.to_owned());
        }
        let Some(delta) = &choice.delta else {
            return;
        };
        let append = |slot: &mut Option<EscapedText>, text: Option<JsonStr<'_>>| {
            if let Some(text) = text.filter(|t| !t.is_empty()) {
                slot.get_or_insert_with(EscapedText::new).push(text);
            }
        };
        append(&mut self.content, delta.content.and_then(JsonStr::new));
        append(&mut self.refusal, delta.refusal);
        append(
            &mut self.reasoning,
            delta
                .reasoning_content
                .or(delta.reasoning.and_then(JsonStr::new)),
        );
        for fragment in delta.tool_calls.iter().flatten() {
            let index = fragment.index.unwrap_or_default() as usize;
            if index == self.calls.len() {
                self.calls.push(FoldedCall {
                    id: fragment.id.as_deref().unwrap_or_default().to_owned(),
                    custom: fragment.custom.is_some(),
                    name: String::new(),
                    arguments: EscapedText::new(),
                });
            }
            let Some(call) = self.calls.get_mut(index) else {
                continue;
            };
            let (name, text) = match (&fragment.function, &fragment.custom) {
                (Some(f), _) => (f.name.as_deref(), f.arguments.and_then(JsonStr::new)),
                (None, Some(c)) => (c.name.as_deref(), c.input),
                (None, None) => (None, None),
            };
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                name.clone_into(&mut call.name);
            }
            if let Some(text) = text {
                call.arguments.push(text);
            }
        }
    }

    fn body(mut self, id: &str, ctx: &ChatContext) -> Vec<u8> {
        let content = self.content.as_mut().map(|t| JsonText::from(t.literal()));
        let refusal = self.refusal.as_mut().map(|t| JsonText::from(t.literal()));
        let reasoning = self.reasoning.as_mut().map(|t| JsonText::from(t.literal()));
        let tool_calls = self
            .calls
            .iter_mut()
            .map(|call| {
                let text = JsonText::from(call.arguments.literal());
                if call.custom {
                    ToolCall::Custom {
                        id: call.id.as_str().into(),
                        custom: CustomCall {
                            name: call.name.as_str().into(),
                            input: text,
                        },
                    }
                } else {
                    ToolCall::Function {
                        id: call.id.as_str().into(),
                        function: FunctionCall {
                            name: call.name.as_str().into(),
                            arguments: text,
                        },
                    }
                }
            })
            .collect();
        let logprobs: Vec<&RawValue> = self.logprobs.iter().map(|l| &**l).collect();
        let joined = ctx.logprobs.then(|| join_arrays(&logprobs));
        let message = ReplyMessage {
            role: "assistant",
            content,
            refusal,
            tool_calls,
            annotations: Vec::new(),
            reasoning_content: reasoning
                .clone()
                .filter(|_| ctx.reasoning == ChatReasoning::ReasoningContent),
            reasoning: reasoning.filter(|_| ctx.reasoning == ChatReasoning::Reasoning),
        };
        let finish = match self.finish_reason.as_deref() {
            Some("length") => "length",
            Some("content_filter") => "content_filter",
            Some("tool_calls") => "tool_calls",
            _ => "stop",
        };
        let completion = CompletionBody {
            id,
            object: "chat.completion",
            created: if self.created > 0 {
                self.created
            } else {
                unix_now()
            },
            model: if self.model.is_empty() {
                &ctx.model
            } else {
                &self.model
            },
            choices: [BodyChoice {
                index: 0,
                message,
                logprobs: joined.as_deref().map(|content| ChoiceLogprobs {
                    content: Some(content),
                    refusal: None,
                }),
                finish_reason: finish,
            }],
            usage: self.usage,
        };
        serde_json::to_vec(&completion).expect("completions always serialize")
    }
}
