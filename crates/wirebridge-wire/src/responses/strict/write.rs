//! `Response` objects written as JSON by hand ([`crate::write`]): the bytes
//! `serde_json::to_writer` writes for them, without escaping their keys.

use super::{IncompleteReason, InputTransformation, Response, ResponseEcho, Usage, WithheldReason};
use crate::write::{array, raw, Object};

impl Response<'_> {
    /// Appends the response to `out` as JSON: the same bytes as
    /// `serde_json::to_writer(out, self)`, written faster.
    ///
    /// ```
    /// use wirebridge_wire::responses::strict::{Response, ResponseEcho, ResponseStatus};
    ///
    /// let echo = ResponseEcho::default();
    /// let response = Response {
    ///     id: "resp_1",
    ///     object: "response",
    ///     created_at: 1_700_000_000,
    ///     status: ResponseStatus::Completed,
    ///     completed_at: Some(1_700_000_001),
    ///     error: None,
    ///     incomplete_details: None,
    ///     model: "m",
    ///     output: &[],
    ///     usage: None,
    ///     echo: &echo,
    /// };
    /// let mut out = Vec::new();
    /// response.write_json(&mut out);
    /// assert_eq!(out, serde_json::to_vec(&response).unwrap());
    /// ```
    pub fn write_json(&self, out: &mut Vec<u8>) {
        #[cfg(any(debug_assertions, fuzzing))]
        let start = out.len();
        let mut object = Object::open(out);
        object.str("id", self.id);
        object.name("object", self.object);
        object.value("created_at", &self.created_at);
        object.name("status", self.status.as_str());
        object.value("completed_at", &self.completed_at);
        match &self.error {
            None => object.null("error"),
            Some(error) => {
                let mut inner = Object::open(object.key("error"));
                inner.str("code", error.code);
                inner.str("message", error.message);
                inner.close();
            }
        }
        match &self.incomplete_details {
            None => object.null("incomplete_details"),
            Some(details) => {
                let mut inner = Object::open(object.key("incomplete_details"));
                inner.name("reason", incomplete_reason(details.reason));
                inner.close();
            }
        }
        object.str("model", self.model);
        array(object.key("output"), self.output, |item, out| {
            raw(out, item)
        });
        match self.usage {
            None => object.null("usage"),
            Some(usage) => usage.write_json(object.key("usage")),
        }
        self.echo.write_members(&mut object);
        object.close();
        #[cfg(any(debug_assertions, fuzzing))]
        crate::write::agrees_with_serde(&out[start..], self);
    }
}

impl Usage {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = Object::open(out);
        object.value("input_tokens", &self.input_tokens);
        let mut input = Object::open(object.key("input_tokens_details"));
        input.value("cached_tokens", &self.input_tokens_details.cached_tokens);
        input.value(
            "cache_write_tokens",
            &self.input_tokens_details.cache_write_tokens,
        );
        input.close();
        object.value("output_tokens", &self.output_tokens);
        let mut output = Object::open(object.key("output_tokens_details"));
        output.value(
            "reasoning_tokens",
            &self.output_tokens_details.reasoning_tokens,
        );
        output.close();
        object.value("total_tokens", &self.total_tokens);
        object.close();
    }
}

impl ResponseEcho {
    /// Writes the echo's members into `object`, in the order serde writes
    /// them (a `Response` flattens them into its own).
    fn write_members(&self, object: &mut Object<'_>) {
        object.bool("background", self.background);
        object.value("frequency_penalty", &self.frequency_penalty);
        match &self.instructions {
            None => object.null("instructions"),
            Some(instructions) => object.raw("instructions", instructions),
        }
        object.value("max_output_tokens", &self.max_output_tokens);
        object.value("max_tool_calls", &self.max_tool_calls);
        object.bool("parallel_tool_calls", self.parallel_tool_calls);
        object.value("presence_penalty", &self.presence_penalty);
        optional_str(object, "previous_response_id", &self.previous_response_id);
        optional_str(object, "prompt_cache_key", &self.prompt_cache_key);
        if let Some(diagnostics) = &self.prompt_cache_diagnostics {
            object.raw("prompt_cache_diagnostics", diagnostics);
        }
        if let Some(conversation) = &self.conversation {
            let mut inner = Object::open(object.key("conversation"));
            inner.str("id", &conversation.id);
            inner.close();
        }
        match &self.reasoning {
            None => object.null("reasoning"),
            Some(reasoning) => object.raw("reasoning", reasoning),
        }
        optional_str(object, "safety_identifier", &self.safety_identifier);
        object.str("service_tier", &self.service_tier);
        object.bool("store", self.store);
        object.value("temperature", &self.temperature);
        object.raw("text", &self.text);
        object.raw("tool_choice", &self.tool_choice);
        object.raw("tools", &self.tools);
        object.value("top_logprobs", &self.top_logprobs);
        object.value("top_p", &self.top_p);
        object.raw("truncation", &self.truncation);
        if let Some(user) = &self.user {
            object.str("user", user);
        }
        object.raw("metadata", &self.metadata);
        if !self.input_transformations.is_empty() {
            array(
                object.key("input_transformations"),
                &self.input_transformations,
                InputTransformation::write_json,
            );
        }
    }
}

impl InputTransformation {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = Object::open(out);
        object.str("id", &self.id);
        object.name("action", self.action);
        object.name("reason", withheld_reason(self.reason));
        object.name("type", self.kind);
        object.close();
    }
}

/// A string member, `null` when it is not set.
fn optional_str(object: &mut Object<'_>, key: &'static str, value: &Option<String>) {
    match value {
        None => object.null(key),
        Some(value) => object.str(key, value),
    }
}

fn incomplete_reason(reason: IncompleteReason) -> &'static str {
    match reason {
        IncompleteReason::MaxOutputTokens => "max_output_tokens",
        IncompleteReason::ContentFilter => "content_filter",
    }
}

fn withheld_reason(reason: WithheldReason) -> &'static str {
    match reason {
        WithheldReason::OrganizationMismatch => "organization_mismatch",
        WithheldReason::ModelMismatch => "model_mismatch",
        WithheldReason::TurnBoundary => "turn_boundary",
    }
}

#[cfg(test)]
mod tests;
