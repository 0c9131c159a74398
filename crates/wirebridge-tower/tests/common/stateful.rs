//! A Chat upstream that describes the conversation it got, and calls to a
//! layer with a store in front of it.

use std::convert::Infallible;

use bytes::Bytes;
use http::header::AUTHORIZATION;
use http::{HeaderValue, Request, Response, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::{Layer, Service, ServiceExt};
use wirebridge_store::MemoryStore;
use wirebridge_tower::{RequestBody, ResponsesToChatLayer};

use super::{body, read, End, ScriptedBody};

/// Answers with the roles and texts of the messages it received, as JSON or
/// as a stream; `GET …/models` (the bridge checking a credential) with a
/// list of one model.
pub fn echo_upstream() -> impl Service<
    Request<RequestBody<ScriptedBody>>,
    Response = Response<ScriptedBody>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    tower::service_fn(|request: Request<RequestBody<ScriptedBody>>| async move {
        if request.method() == http::Method::GET && request.uri().path().ends_with("/models") {
            let list = json!({"object": "list", "data": [{"id": "m", "object": "model", "created": 1, "owned_by": "o"}]});
            let bytes = Bytes::from(list.to_string());
            return Ok::<_, Infallible>(Response::new(ScriptedBody::new(vec![bytes], End::Eof).0));
        }
        let bytes = request.into_body().collect().await.unwrap().to_bytes();
        let chat: Value = serde_json::from_slice(&bytes).unwrap();
        let seen: Vec<String> = chat["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "{}:{}",
                    m["role"].as_str().unwrap(),
                    m["content"].as_str().unwrap_or("")
                )
            })
            .collect();
        let text = seen.join(" | ");
        let (content_type, body) = if chat["stream"] == true {
            let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]});
            let end = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
            (
                "text/event-stream",
                format!("data: {chunk}\n\ndata: {end}\n\ndata: [DONE]\n\n"),
            )
        } else {
            let reply = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]});
            ("application/json", reply.to_string())
        };
        let mut response = Response::new(ScriptedBody::new(vec![Bytes::from(body)], End::Eof).0);
        response
            .headers_mut()
            .insert("content-type", content_type.parse().unwrap());
        Ok::<_, Infallible>(response)
    })
}

pub async fn call<S>(
    service: &S,
    method: &str,
    path: &str,
    key: &str,
    json: Option<Value>,
) -> (StatusCode, Value, Bytes)
where
    S: Service<
            Request<ScriptedBody>,
            Response = Response<wirebridge_tower::ResponseBody<ScriptedBody>>,
            Error = Infallible,
        > + Clone,
{
    let authorization = HeaderValue::try_from(format!("Bearer {key}")).unwrap();
    call_as(service, method, path, Some(authorization), json).await
}

/// [`call`] with any `authorization` header value, or none.
pub async fn call_as<S>(
    service: &S,
    method: &str,
    path: &str,
    authorization: Option<HeaderValue>,
    json: Option<Value>,
) -> (StatusCode, Value, Bytes)
where
    S: Service<
            Request<ScriptedBody>,
            Response = Response<wirebridge_tower::ResponseBody<ScriptedBody>>,
            Error = Infallible,
        > + Clone,
{
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .body(body(&json.map(|j| j.to_string()).unwrap_or_default()))
        .unwrap();
    if let Some(value) = authorization {
        request.headers_mut().insert(AUTHORIZATION, value);
    }
    let (status, _, bytes) = read(service.clone().oneshot(request).await.unwrap()).await;
    let value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, value, bytes)
}

pub fn service() -> impl Service<
    Request<ScriptedBody>,
    Response = Response<wirebridge_tower::ResponseBody<ScriptedBody>>,
    Error = Infallible,
> + Clone {
    service_with(MemoryStore::new())
}

pub fn service_with(
    store: MemoryStore,
) -> impl Service<
    Request<ScriptedBody>,
    Response = Response<wirebridge_tower::ResponseBody<ScriptedBody>>,
    Error = Infallible,
> + Clone {
    ResponsesToChatLayer::new()
        .store(store)
        .layer(echo_upstream())
}

pub fn text(response: &Value) -> String {
    response["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
