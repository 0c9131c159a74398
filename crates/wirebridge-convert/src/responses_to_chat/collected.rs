//! A Chat stream for a client that asked for a body.
//!
//! Some servers stream whatever the request said. The stream is translated
//! by the stream translator, exactly as for a streaming client, and the
//! finished `Response` it ends with becomes the body.

use super::body::TranslatedBody;
use super::stream::StreamTranslator;
use super::ResponsesContext;
use crate::error::ConvertError;
use crate::frames::Frames;
use crate::stream::SseTranslator;

/// Translates a whole `chat.completion.chunk` event stream into a
/// `Response` body, for a client that did not ask for a stream.
///
/// A stream that fails (an error chunk, invalid JSON, an end before the
/// `finish_reason`) is the upstream's failure, as a non-streaming error
/// would be.
///
/// ```
/// use wirebridge_convert::responses_to_chat::{translate_stream_body, ResponsesContext};
///
/// let events = concat!(
///     "data: {\"id\":\"c\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,",
///     "\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n",
///     "data: [DONE]\n\n",
/// );
/// let reply = translate_stream_body(events.as_bytes(), &ResponsesContext::default()).unwrap();
/// let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
/// assert_eq!(body["status"], "completed");
/// assert_eq!(body["output"][0]["content"][0]["text"], "Hi");
/// ```
pub fn translate_stream_body(
    events: &[u8],
    ctx: &ResponsesContext,
) -> Result<TranslatedBody, ConvertError> {
    let mut stream = SseTranslator::new(StreamTranslator::new(ctx.clone()));
    // The events themselves are not needed, only the finished response.
    let mut sink = Frames::json();
    for piece in events.chunks(64 * 1024) {
        stream.feed(piece, &mut sink);
        sink.take();
    }
    stream.finish(&mut sink);
    let translator = stream.into_translator();
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
