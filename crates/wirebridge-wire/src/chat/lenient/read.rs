//! `chat.completion` bodies read in one pass.
//!
//! serde reads a completion through its derived visitors: every key is
//! matched by a generated function, every optional field goes through a
//! visitor of its own, and each value is moved out to its parent. For the
//! few hundred bytes a reply body holds, that costs more than reading the
//! request it answers. [`ChatCompletion::read`] reads the same body with
//! the [`JsonCursor`] into the same types.
//!
//! It gives up on anything serde might read differently or reject (an
//! escaped key, a field written twice, a count written as a float or a
//! negative number, a value of the wrong type, invalid JSON): the caller
//! then parses with serde as before, which gives the same result or names
//! the error. The tests mutate real bodies and check that whatever this
//! reads, serde reads the same.

use super::{
    ChatCompletion, Choice, ChoiceLogprobs, ChoiceMessage, CompletionTokensDetails, CustomCall,
    FunctionCall, PromptTokensDetails, ToolCall, Usage,
};
use crate::cursor::{JsonCursor, SeenFields};
use crate::items::Items;

impl<'a> ChatCompletion<'a> {
    /// Reads a `chat.completion` body (or a chunk) in one pass; `None`
    /// when it holds anything the reader does not handle, to be parsed
    /// with serde instead.
    ///
    /// ```
    /// use wirebridge_wire::chat::lenient::ChatCompletion;
    ///
    /// let body = br#"{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#;
    /// let completion = ChatCompletion::read(body).unwrap();
    /// let message = completion.choices.unwrap()[0].message.as_ref().unwrap().content.unwrap();
    /// assert_eq!(message.get(), r#""hi""#);
    ///
    /// // A count written as a float: serde's to read.
    /// assert!(ChatCompletion::read(br#"{"created":1.0}"#).is_none());
    /// ```
    pub fn read(body: &'a [u8]) -> Option<Self> {
        let mut c = JsonCursor::new(std::str::from_utf8(body).ok()?);
        let mut out = ChatCompletion::default();
        let mut seen = SeenFields::default();
        c.object(|c, key| match key {
            "id" => seen.read(0, c, |c| c.set(&mut out.id, JsonCursor::str)),
            "created" => seen.read(1, c, |c| c.set(&mut out.created, JsonCursor::u64)),
            "model" => seen.read(2, c, |c| c.set(&mut out.model, JsonCursor::str)),
            "choices" => seen.read(3, c, |c| c.set(&mut out.choices, |c| items(c, choice))),
            "usage" => seen.read(4, c, |c| c.set(&mut out.usage, usage)),
            "error" => seen.read(5, c, |c| c.set(&mut out.error, JsonCursor::raw)),
            _ => c.skip_value(),
        })?;
        c.end()?;
        Some(out)
    }
}

/// An index that fits a `u32`, as serde reads one.
fn u32(c: &mut JsonCursor<'_>) -> Option<u32> {
    c.u64()?.try_into().ok()
}

fn items<'a, T>(
    c: &mut JsonCursor<'a>,
    read: impl Fn(&mut JsonCursor<'a>) -> Option<T>,
) -> Option<Items<T>> {
    let mut items = Items::default();
    c.array(|c| {
        items.push(read(c)?);
        Some(())
    })?;
    Some(items)
}

fn choice<'a>(c: &mut JsonCursor<'a>) -> Option<Choice<'a>> {
    let mut out = Choice::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "index" => seen.read(0, c, |c| c.set(&mut out.index, u32)),
        "message" => seen.read(1, c, |c| c.set(&mut out.message, message)),
        "delta" => seen.read(2, c, |c| c.set(&mut out.delta, message)),
        "finish_reason" => seen.read(3, c, |c| c.set(&mut out.finish_reason, JsonCursor::str)),
        "logprobs" => seen.read(4, c, |c| c.set(&mut out.logprobs, logprobs)),
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn logprobs<'a>(c: &mut JsonCursor<'a>) -> Option<ChoiceLogprobs<'a>> {
    let mut out = ChoiceLogprobs::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "content" => seen.read(0, c, |c| c.set(&mut out.content, JsonCursor::raw)),
        "refusal" => seen.read(1, c, |c| c.set(&mut out.refusal, JsonCursor::raw)),
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn message<'a>(c: &mut JsonCursor<'a>) -> Option<ChoiceMessage<'a>> {
    let mut out = ChoiceMessage::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "role" => seen.read(0, c, |c| c.set(&mut out.role, JsonCursor::str)),
        "content" => seen.read(1, c, |c| c.set(&mut out.content, JsonCursor::raw)),
        "refusal" => seen.read(2, c, |c| c.set(&mut out.refusal, JsonCursor::json_str)),
        "reasoning_content" => seen.read(3, c, |c| {
            c.set(&mut out.reasoning_content, JsonCursor::json_str)
        }),
        "reasoning" => seen.read(4, c, |c| c.set(&mut out.reasoning, JsonCursor::raw)),
        "tool_calls" => seen.read(5, c, |c| {
            c.set(&mut out.tool_calls, |c| items(c, tool_call))
        }),
        "function_call" => seen.read(6, c, |c| c.set(&mut out.function_call, function_call)),
        "annotations" => seen.read(7, c, |c| c.set(&mut out.annotations, JsonCursor::raw)),
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn tool_call<'a>(c: &mut JsonCursor<'a>) -> Option<ToolCall<'a>> {
    let mut out = ToolCall::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "index" => seen.read(0, c, |c| c.set(&mut out.index, u32)),
        "id" => seen.read(1, c, |c| c.set(&mut out.id, JsonCursor::str)),
        "type" => seen.read(2, c, |c| c.set(&mut out.kind, JsonCursor::str)),
        "function" => seen.read(3, c, |c| c.set(&mut out.function, function_call)),
        "custom" => seen.read(4, c, |c| c.set(&mut out.custom, custom_call)),
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn function_call<'a>(c: &mut JsonCursor<'a>) -> Option<FunctionCall<'a>> {
    let mut out = FunctionCall::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "name" => seen.read(0, c, |c| c.set(&mut out.name, JsonCursor::str)),
        "arguments" => seen.read(1, c, |c| c.set(&mut out.arguments, JsonCursor::raw)),
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn custom_call<'a>(c: &mut JsonCursor<'a>) -> Option<CustomCall<'a>> {
    let mut out = CustomCall::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "name" => seen.read(0, c, |c| c.set(&mut out.name, JsonCursor::str)),
        "input" => seen.read(1, c, |c| c.set(&mut out.input, JsonCursor::json_str)),
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn usage(c: &mut JsonCursor<'_>) -> Option<Usage> {
    let mut out = Usage::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "prompt_tokens" => seen.read(0, c, |c| c.set(&mut out.prompt_tokens, JsonCursor::u64)),
        "completion_tokens" => {
            seen.read(1, c, |c| c.set(&mut out.completion_tokens, JsonCursor::u64))
        }
        "total_tokens" => seen.read(2, c, |c| c.set(&mut out.total_tokens, JsonCursor::u64)),
        "prompt_tokens_details" => seen.read(3, c, |c| {
            c.set(&mut out.prompt_tokens_details, prompt_details)
        }),
        "completion_tokens_details" => seen.read(4, c, |c| {
            c.set(&mut out.completion_tokens_details, completion_details)
        }),
        "reasoning_tokens" => {
            seen.read(5, c, |c| c.set(&mut out.reasoning_tokens, JsonCursor::u64))
        }
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn prompt_details(c: &mut JsonCursor<'_>) -> Option<PromptTokensDetails> {
    let mut out = PromptTokensDetails::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "cached_tokens" => seen.read(0, c, |c| c.set(&mut out.cached_tokens, JsonCursor::u64)),
        "cache_write_tokens" => seen.read(1, c, |c| {
            c.set(&mut out.cache_write_tokens, JsonCursor::u64)
        }),
        _ => c.skip_value(),
    })?;
    Some(out)
}

fn completion_details(c: &mut JsonCursor<'_>) -> Option<CompletionTokensDetails> {
    let mut out = CompletionTokensDetails::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "reasoning_tokens" => {
            seen.read(0, c, |c| c.set(&mut out.reasoning_tokens, JsonCursor::u64))
        }
        _ => c.skip_value(),
    })?;
    Some(out)
}

// Public for the fuzz targets; a test build reaches it only from here.
#[cfg(any(test, fuzzing))]
#[cfg_attr(test, allow(unreachable_pub))]
pub mod check;
#[cfg(test)]
mod tests;
