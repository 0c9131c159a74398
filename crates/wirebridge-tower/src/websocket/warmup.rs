//! `generate: false`: a turn answered without the backend, as if it had
//! replied with nothing, so the response is created and kept (its input
//! continues in the next turn) at no model call.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{header, HeaderValue, Request, Response};
use http_body::Body;
use http_body_util::{BodyExt, Full};
use serde::Deserialize;
use tower::Service;

use crate::stateful::NotFromBackend;

/// Stands in for the upstream on a warm-up turn: an empty stream that used
/// no tokens, in the upstream's API (Chat chunks, Responses events for a
/// Responses backend, Messages events for a Messages one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Warmup;

#[derive(Deserialize)]
struct Model {
    model: Option<String>,
}

impl<B> Service<Request<B>> for Warmup
where
    B: Body<Data = Bytes> + Send + 'static,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let path = request.uri().path();
        let (responses, messages) = (path.ends_with("/responses"), path.ends_with("/messages"));
        Box::pin(async move {
            // The translated request the layer built: its model is echoed.
            let body = request
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let model = serde_json::from_slice::<Model>(&body)
                .ok()
                .and_then(|m| m.model)
                .unwrap_or_default();
            let model = serde_json::to_string(&model).expect("strings always serialize");
            let chunk = |rest: &str| {
                format!(
                    "data: {{\"id\":\"warmup\",\"object\":\"chat.completion.chunk\",\"created\":0,\
                     \"model\":{model},{rest}}}\n\n"
                )
            };
            let completed = format!(
                "event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":\
                 {{\"id\":\"warmup\",\"object\":\"response\",\"status\":\"completed\",\"model\":{model},\
                 \"output\":[],\"usage\":{{\"input_tokens\":0,\"output_tokens\":0,\"total_tokens\":0}}}}}}\n\n"
            );
            let chat = [
                chunk(r#""choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":"stop"}]"#),
                chunk(
                    r#""choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}"#,
                ),
                "data: [DONE]\n\n".to_owned(),
            ]
            .concat();
            let stopped = [
                format!(
                    "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\
                     \"warmup\",\"type\":\"message\",\"role\":\"assistant\",\"model\":{model},\
                     \"content\":[],\"stop_reason\":null,\"usage\":{{\"input_tokens\":0,\
                     \"output_tokens\":0}}}}}}\n\n"
                ),
                "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\
                 \"end_turn\"},\"usage\":{\"output_tokens\":0}}\n\n"
                    .to_owned(),
                "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned(),
            ]
            .concat();
            let stream = match (responses, messages) {
                (true, _) => completed,
                (_, true) => stopped,
                _ => chat,
            };
            let mut response = Response::new(Full::new(Bytes::from(stream)));
            response.extensions_mut().insert(NotFromBackend);
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            Ok(response)
        })
    }
}
