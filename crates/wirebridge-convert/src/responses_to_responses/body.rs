//! A stateless backend's `Response` body, re-sent as the bridge's.

use serde_json::value::RawValue;
use wirebridge_wire::responses::lenient::ResponseShell;
use wirebridge_wire::responses::strict::{
    IncompleteDetails, IncompleteReason, Response, ResponseError, ResponseStatus,
};

use super::items;
use super::stream::{usage, Failure, StreamTranslator};
use super::NativeContext;
use crate::error::ConvertError;
use crate::frames::Frames;
use crate::ids::unix_now;
use crate::loss::LossReport;
use crate::responses_to_chat::{add_usage, token_usage, TranslatedBody};
use crate::stream::{SseTranslator, StreamTranslate};
use crate::summary::ReplySummary;

/// Re-sends a backend's `Response` body under the bridge's ids, with the
/// request's fields repeated as the client sent them.
pub fn translate_body(body: &[u8], ctx: &NativeContext) -> Result<TranslatedBody, ConvertError> {
    let response = ResponseShell::parse(body).map_err(|e| {
        ConvertError::InvalidUpstream(format!("the upstream's response is not a Response: {e}"))
    })?;
    let items = backend_output(&response)?;
    let mut output = ctx.leading.clone();
    for item in items.iter().copied() {
        let at = output.len();
        output.push(items::rewrite(item, ctx, at, true).map_err(ConvertError::InvalidUpstream)?);
    }
    let status = match response.status.as_deref() {
        Some("incomplete") => ResponseStatus::Incomplete,
        Some("failed") => ResponseStatus::Failed,
        _ => ResponseStatus::Completed,
    };
    let failure = response
        .error
        .filter(|e| e.get() != "null")
        .map(Failure::upstream)
        .or_else(|| {
            (status == ResponseStatus::Failed)
                .then(|| Failure::server("the upstream reported the response failed"))
        });
    let error = failure.as_ref().map(|f| ResponseError {
        code: f.response_code(),
        message: &f.message,
    });
    let incomplete = (status == ResponseStatus::Incomplete).then(|| IncompleteDetails {
        reason: match response
            .incomplete_details
            .as_ref()
            .and_then(|d| d.reason.as_deref())
        {
            Some("content_filter") => IncompleteReason::ContentFilter,
            _ => IncompleteReason::MaxOutputTokens,
        },
    });
    let usage = match response.usage.as_ref().map(usage) {
        Some(reply) => Some(add_usage(reply, ctx.prior_usage)),
        None => ctx.prior_usage,
    };
    let id = ctx.ids.response();
    let created_at = response.created_at.unwrap_or_else(unix_now);
    let model = response
        .model
        .as_deref()
        .filter(|m| !m.is_empty())
        .unwrap_or(&ctx.model);
    let written = Response {
        id: &id,
        object: "response",
        created_at,
        status,
        completed_at: (status == ResponseStatus::Completed).then(unix_now),
        error,
        incomplete_details: incomplete,
        model,
        output: &output,
        usage: usage.as_ref(),
        echo: &ctx.echo,
    };
    let mut body = Vec::new();
    written.write_json(&mut body);
    let summary = ReplySummary {
        outcome: Some(status.as_str().to_owned()),
        usage: usage.as_ref().map(token_usage),
        tool_calls: output.iter().filter_map(|i| items::tool_call(i)).collect(),
    };
    Ok(TranslatedBody {
        body,
        response_id: id,
        status,
        created_at,
        output,
        losses: LossReport::default(),
        summary,
    })
}

/// The output of a backend's body, once it is known to be a `Response`:
/// `object: "response"` and an `output` array. Anything else a backend
/// answers with a 200 is refused, never re-sent (or kept) as an empty
/// response: an error body (`{"error": {…}}`, as some servers answer
/// failures) is the upstream's failure, with its message; any other object
/// is a reply the bridge cannot read.
fn backend_output<'r, 'a>(
    response: &'r ResponseShell<'a>,
) -> Result<&'r [&'a RawValue], ConvertError> {
    if response.object.as_deref() != Some("response") {
        if let Some(error) = response.error.filter(|e| e.get() != "null") {
            return Err(upstream_failure(error));
        }
        return Err(ConvertError::InvalidUpstream(
            "the upstream's answer is not a Response: its 'object' is not \"response\"".into(),
        ));
    }
    response.output.as_deref().ok_or_else(|| {
        ConvertError::InvalidUpstream("the upstream's Response has no 'output'".into())
    })
}

/// The failure an error object a backend answered in place of a
/// `Response` describes: its message, type and code.
pub(super) fn upstream_failure(error: &RawValue) -> ConvertError {
    let failure = Failure::upstream(error);
    ConvertError::UpstreamFailed {
        message: failure.message,
        error_type: Some(failure.error_type),
        code: failure.code,
    }
}

/// Re-sends a backend's event stream as the `Response` body a client that
/// did not ask for a stream expects. A stream that fails is the upstream's
/// failure, as a failed body would be.
pub fn translate_stream_body(
    events: &[u8],
    ctx: &NativeContext,
) -> Result<TranslatedBody, ConvertError> {
    let mut stream = SseTranslator::new(StreamTranslator::new(ctx.clone()));
    let mut sink = Frames::json();
    for piece in events.chunks(64 * 1024) {
        stream.feed(piece, &mut sink);
        sink.take();
    }
    stream.finish(&mut sink);
    finished_body(&stream.into_translator())
}

/// The body of a stream translated to its end: the finished response, or
/// the error it failed with.
pub(crate) fn finished_body(translator: &StreamTranslator) -> Result<TranslatedBody, ConvertError> {
    if let Some(failure) = translator.failure() {
        return Err(ConvertError::UpstreamFailed {
            message: failure.message.clone(),
            error_type: Some(failure.error_type.clone()),
            code: failure.code.clone(),
        });
    }
    let finished = translator.finished().ok_or_else(|| {
        ConvertError::InvalidUpstream("the upstream stream did not finish".into())
    })?;
    Ok(TranslatedBody {
        body: finished.response.as_bytes().to_vec(),
        response_id: finished.id.to_owned(),
        status: finished.status,
        created_at: finished.created_at,
        output: finished.output.to_vec(),
        losses: translator.losses().clone(),
        summary: translator.summary(),
    })
}

#[cfg(test)]
mod tests {
    use crate::responses_to_chat::assert_cut;
    use crate::responses_to_responses::{NativeContext, StreamTranslator};
    use crate::StreamTranslate;

    /// The stateless Responses translator writes its `Response` so that a
    /// store cuts its output as bytes, never reading it again.
    #[test]
    fn the_finished_response_is_cut_not_read() {
        let mut native = StreamTranslator::new(NativeContext::default());
        let mut out = crate::Frames::sse();
        for event in [
            r#"{"type":"response.created","response":{"id":"x","object":"response","status":"in_progress"}}"#,
            r#"{"type":"response.output_item.added","item":{"type":"message","id":"m","role":"assistant","status":"in_progress","content":[]}}"#,
            r#"{"type":"response.output_text.delta","item_id":"m","delta":"Hi"}"#,
            r#"{"type":"response.output_item.done","item":{"type":"message","id":"m","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hi"}]}}"#,
            r#"{"type":"response.completed","response":{"id":"x","status":"completed","output":[]}}"#,
        ] {
            native.push(event, &mut out);
        }
        assert_cut(native.finished().unwrap());
    }
}
