//! [`handle`]: one HTTP request in, one response out — routing, body
//! reading, replay, and the scripted answer drawn in the request's API.

use crate::body::{DemoBody, Ending};
use crate::config::DemoConfig;
use crate::error::{ApiError, ErrorShape};
use crate::frames::{fault_point, Frame};
use crate::ids::Ids;
use crate::json::{arr, Obj};
use crate::prompt::{
    parse_body, parse_chat, parse_messages, parse_responses, MessagesBetas, MessagesEndpoint,
};
use crate::script::{plan, Fault, Reply};
use crate::{chat, messages, replay, responses};
use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use std::error::Error as StdError;
use std::time::Duration;

/// The API of a generation endpoint: the dialect its answer is drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Chat,
    Responses,
    Messages,
}

/// Answer one request. Generic over the request body, so that a server (or
/// a proxy calling the demo in-process, without a socket) can use it
/// directly; the response body streams with the configured pauses.
///
/// Routes, matched on the end of the path so that any prefix works
/// (`/v1/chat/completions`, `/openai/v1/chat/completions`, …):
///
/// * `POST …/chat/completions`, `POST …/responses` and `POST …/messages`
///   (when [`DemoConfig::api`] serves them): the scripted answer, or the
///   replay file;
/// * `POST …/messages/count_tokens` (when Messages is served): the input
///   tokens, even when replaying;
/// * `GET …/models`: the configured model;
/// * `GET …/healthz`: `200 ok`;
/// * anything else: a 404 (405 for a wrong method), Anthropic-shaped under
///   `…/messages`, OpenAI-shaped elsewhere.
pub async fn handle<B>(config: &DemoConfig, req: Request<B>) -> Response<DemoBody>
where
    B: Body,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let shape = ErrorShape::for_path(req.uri().path());
    match route(config, req).await {
        Ok(res) => res,
        Err(e) => e.into_response(shape),
    }
}

async fn route<B>(config: &DemoConfig, req: Request<B>) -> Result<Response<DemoBody>, ApiError>
where
    B: Body,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let path = req.uri().path().trim_end_matches('/').to_string();
    let method = req.method().clone();
    let betas = MessagesBetas::from_headers(req.headers());
    let endpoint = if path.ends_with("/chat/completions") && config.api.serves_chat() {
        Endpoint::Chat
    } else if path.ends_with("/responses") && config.api.serves_responses() {
        Endpoint::Responses
    } else if path.ends_with("/messages") && config.api.serves_messages() {
        Endpoint::Messages
    } else if path.ends_with("/messages/count_tokens") && config.api.serves_messages() {
        post_only(&method, &path)?;
        return count_tokens(config, req.into_body(), betas).await;
    } else if path.ends_with("/healthz") || path == "/health" {
        return get_only(&method, &path, || text_response("ok\n"));
    } else if path.ends_with("/models") {
        return get_only(&method, &path, || models(config));
    } else {
        return Err(ApiError::unknown_url(method.as_str(), &path));
    };
    post_only(&method, &path)?;

    let body = read_body(req.into_body(), config.max_request_bytes).await?;
    if let Some(file) = &config.replay {
        let replay = replay::load(file).map_err(|e| ApiError::server(e.to_string()))?;
        let body = DemoBody::chunks(replay.chunks, config.chunk_delay, Ending::Finish);
        return Ok(with_content_type(body, replay.content_type));
    }

    let prompt = match endpoint {
        Endpoint::Chat => parse_chat(parse_body(&body)?, &config.model)?,
        Endpoint::Responses => parse_responses(parse_body(&body)?, &config.model)?,
        Endpoint::Messages => {
            parse_messages(&body, &config.model, MessagesEndpoint::Create, betas)?
        }
    };
    let ids = Ids::for_request(&path, &body);
    let plan = plan(&prompt, &ids);
    if let Some(status) = plan.triggers.error {
        return Err(ApiError::scripted(status));
    }
    let reply = Reply {
        prompt: &prompt,
        plan: &plan,
        ids: &ids,
        created: config.clock.now(),
    };
    let slow = plan.triggers.slow;
    let mut res = if prompt.stream {
        let delay = slow.unwrap_or(config.chunk_delay);
        let frames = match endpoint {
            Endpoint::Chat => chat::stream(&reply),
            Endpoint::Responses => responses::stream(&reply),
            Endpoint::Messages => messages::stream(&reply),
        };
        let (frames, ending) = apply_fault(&reply, endpoint, frames, plan.fault());
        let chunks = frames.into_iter().map(|f| f.bytes).collect();
        let mut res =
            with_content_type(DemoBody::chunks(chunks, delay, ending), "text/event-stream");
        res.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        res
    } else {
        let text = match endpoint {
            Endpoint::Chat => chat::body(&reply),
            Endpoint::Responses => responses::body(&reply),
            Endpoint::Messages => messages::body(&reply),
        };
        let body = match plan.fault() {
            None => DemoBody::full(text),
            Some(Fault::Midstream) => return Err(ApiError::midstream()),
            Some(Fault::Cut) => {
                let bytes = Bytes::from(text);
                let half = bytes.slice(..bytes.len() / 2);
                DemoBody::chunks(vec![half], Duration::ZERO, Ending::Cut)
            }
        };
        with_content_type(
            body.with_first_delay(slow.unwrap_or_default()),
            "application/json",
        )
    };
    if let Ok(v) = HeaderValue::from_str(&ids.request()) {
        if endpoint == Endpoint::Messages {
            // Where Anthropic's SDKs read the request id from.
            res.headers_mut().insert("request-id", v.clone());
        }
        res.headers_mut().insert("x-request-id", v);
    }
    Ok(res)
}

/// Keep the frames of a failing stream up to its fault, then end it as the
/// fault says.
fn apply_fault(
    reply: &Reply<'_>,
    endpoint: Endpoint,
    mut frames: Vec<Frame>,
    fault: Option<Fault>,
) -> (Vec<Frame>, Ending) {
    let Some(fault) = fault else {
        return (frames, Ending::Finish);
    };
    let keep = fault_point(&frames);
    frames.truncate(keep);
    match fault {
        Fault::Cut => (frames, Ending::Cut),
        Fault::Midstream => {
            let tail = match endpoint {
                Endpoint::Chat => chat::failure_tail(),
                Endpoint::Responses => responses::failure_tail(reply, keep),
                Endpoint::Messages => messages::failure_tail(),
            };
            frames.extend(tail);
            (frames, Ending::Finish)
        }
    }
}

/// Read the whole request body, at most `limit` bytes.
async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, ApiError>
where
    B: Body,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(ApiError::too_large(limit)),
        Err(e) => Err(ApiError::invalid_request(
            format!("Could not read the request body: {e}"),
            None,
            None,
        )),
    }
}

/// The 405 for anything but `POST` on a generation endpoint.
fn post_only(method: &Method, path: &str) -> Result<(), ApiError> {
    if method == Method::POST {
        Ok(())
    } else {
        Err(ApiError::method_not_allowed(method.as_str(), path))
    }
}

fn get_only(
    method: &Method,
    path: &str,
    ok: impl FnOnce() -> Response<DemoBody>,
) -> Result<Response<DemoBody>, ApiError> {
    if method == Method::GET || method == Method::HEAD {
        Ok(ok())
    } else {
        Err(ApiError::method_not_allowed(method.as_str(), path))
    }
}

fn with_content_type(body: DemoBody, content_type: &'static str) -> Response<DemoBody> {
    let mut res = Response::new(body);
    *res.status_mut() = StatusCode::OK;
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res
}

fn text_response(text: &'static str) -> Response<DemoBody> {
    with_content_type(DemoBody::full(text), "text/plain; charset=utf-8")
}

/// `POST /v1/messages/count_tokens`: `{"input_tokens": N}`, the request
/// checked as a Messages request without `max_tokens`. A count is no
/// generation: it is answered when replaying too.
async fn count_tokens<B>(
    config: &DemoConfig,
    body: B,
    betas: MessagesBetas,
) -> Result<Response<DemoBody>, ApiError>
where
    B: Body,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let body = read_body(body, config.max_request_bytes).await?;
    let prompt = parse_messages(&body, &config.model, MessagesEndpoint::CountTokens, betas)?;
    let count = Obj::new().with("input_tokens", prompt.input_tokens);
    Ok(with_content_type(
        DemoBody::full(count.to_json()),
        "application/json",
    ))
}

/// `GET /v1/models`: the configured model.
fn models(config: &DemoConfig) -> Response<DemoBody> {
    let model = Obj::new()
        .with("id", &config.model)
        .with("object", "model")
        .with("created", config.clock.now())
        .with("owned_by", "wirebridge");
    let list = Obj::new().with("object", "list").with("data", arr([model]));
    with_content_type(DemoBody::full(list.to_json()), "application/json")
}
