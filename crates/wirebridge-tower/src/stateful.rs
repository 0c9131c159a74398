//! Stateful Responses: retrieval endpoints, `previous_response_id`, and
//! saving finished responses, over a [`ResponseStore`].

use std::sync::Arc;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Response, StatusCode};
use serde_json::{json, Map, Value};
use wirebridge_store::{ResponseStore, StoreError, StoredResponse};
use wirebridge_wire::error::ApiError;

use crate::error_response::error_response;
use crate::response_body::{FinishHook, HoldFuture, ResponseBody};

/// The store.
#[derive(Clone)]
pub(crate) struct Stateful {
    pub(crate) store: Arc<dyn ResponseStore>,
}

/// A refusal: the reply to send instead of going on.
pub(crate) type Refused<B> = Box<Response<ResponseBody<B>>>;

/// A request the store answers itself.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route {
    Retrieve(String),
    Delete(String),
    InputItems(String),
}

/// `GET|DELETE …/responses/{id}` and `GET …/responses/{id}/input_items`.
pub(crate) fn route(method: &Method, path: &str, endpoint: &str) -> Option<Route> {
    let path = path.trim_end_matches('/');
    let marker = format!("{endpoint}/");
    let at = path.rfind(&marker)?;
    let rest = &path[at + marker.len()..];
    let (id, tail) = match rest.split_once('/') {
        Some((id, tail)) => (id, Some(tail)),
        None => (rest, None),
    };
    if id.is_empty() {
        return None;
    }
    match (method, tail) {
        (&Method::GET, None) => Some(Route::Retrieve(id.to_owned())),
        (&Method::DELETE, None) => Some(Route::Delete(id.to_owned())),
        (&Method::GET, Some("input_items")) => Some(Route::InputItems(id.to_owned())),
        _ => None,
    }
}

/// Answers a [`Route`].
pub(crate) async fn serve<B>(
    stateful: &Stateful,
    tenant: &str,
    route: Route,
    query: Option<&str>,
) -> Response<ResponseBody<B>> {
    let store = &stateful.store;
    match route {
        Route::Retrieve(id) => match store.get(tenant, &id).await {
            Ok(Some(record)) => json_response(StatusCode::OK, record.response.into_bytes()),
            Ok(None) => not_found(&id),
            Err(e) => unavailable(&e),
        },
        Route::Delete(id) => match store.delete(tenant, &id).await {
            Ok(true) => json_response(
                StatusCode::OK,
                json!({"id": id, "object": "response.deleted", "deleted": true})
                    .to_string()
                    .into_bytes(),
            ),
            Ok(false) => not_found(&id),
            Err(e) => unavailable(&e),
        },
        Route::InputItems(id) => {
            let page = match Page::parse(query) {
                Ok(page) => page,
                Err(response) => return *response,
            };
            match store.get(tenant, &id).await {
                Ok(Some(record)) => match page.list(&record.input) {
                    Ok(body) => json_response(StatusCode::OK, body),
                    Err(response) => *response,
                },
                Ok(None) => not_found(&id),
                Err(e) => unavailable(&e),
            }
        }
    }
}

/// `limit`, `order` and `after` of `input_items`.
struct Page {
    limit: usize,
    ascending: bool,
    after: Option<String>,
}

impl Page {
    fn parse<B>(query: Option<&str>) -> Result<Page, Refused<B>> {
        let mut page = Page {
            limit: 20,
            ascending: false,
            after: None,
        };
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "limit" => match value.parse::<usize>() {
                    Ok(n) if (1..=100).contains(&n) => page.limit = n,
                    _ => {
                        return Err(Box::new(bad_param(
                            "limit",
                            &format!("limit must be a number from 1 to 100, not '{value}'"),
                        )))
                    }
                },
                "order" => match value {
                    "asc" => page.ascending = true,
                    "desc" => page.ascending = false,
                    _ => {
                        return Err(Box::new(bad_param(
                            "order",
                            &format!("order must be asc or desc, not '{value}'"),
                        )))
                    }
                },
                "after" => page.after = Some(value.to_owned()),
                _ => {}
            }
        }
        Ok(page)
    }

    fn list<B>(&self, input: &str) -> Result<Vec<u8>, Refused<B>> {
        let mut items: Vec<Value> = serde_json::from_str(input).unwrap_or_default();
        if !self.ascending {
            items.reverse();
        }
        let start = match &self.after {
            Some(after) => match items.iter().position(|i| i["id"] == after.as_str()) {
                Some(at) => at + 1,
                None => {
                    return Err(Box::new(bad_param(
                        "after",
                        &format!("no input item with id '{after}'"),
                    )))
                }
            },
            None => 0,
        };
        let rest = &items[start.min(items.len())..];
        let data: Vec<&Value> = rest.iter().take(self.limit).collect();
        let body = json!({
            "object": "list",
            "data": data,
            "first_id": data.first().map(|i| &i["id"]),
            "last_id": data.last().map(|i| &i["id"]),
            "has_more": rest.len() > self.limit,
        });
        Ok(body.to_string().into_bytes())
    }
}

/// One turn of a conversation: what the client sent, the history from the
/// store prepended, and what to save when it ends.
pub(crate) struct Turn {
    /// The request body to translate (history included).
    pub(crate) body: Bytes,
    /// `previous_response_id`, if any.
    pub(crate) parent: Option<String>,
    /// This turn's own input items, with ids, as a JSON array.
    pub(crate) input: String,
}

/// Resolves `previous_response_id`: the stored chain's items come before the
/// request's own input (instructions are not inherited, per the spec).
pub(crate) async fn expand<B>(
    stateful: &Stateful,
    tenant: &str,
    body: &[u8],
) -> Result<Turn, Refused<B>> {
    let Ok(Value::Object(mut request)) = serde_json::from_slice::<Value>(body) else {
        // Not an object: the translator reports the error precisely.
        return Ok(Turn {
            body: Bytes::copy_from_slice(body),
            parent: None,
            input: "[]".into(),
        });
    };
    let own_items = normalize_input(request.get("input"));
    let input = Value::Array(own_items.clone()).to_string();
    let parent = match request.remove("previous_response_id") {
        Some(Value::String(id)) => Some(id),
        Some(Value::Null) | None => None,
        Some(_) => {
            return Err(Box::new(bad_param(
                "previous_response_id",
                "previous_response_id must be a string",
            )))
        }
    };
    if let Some(id) = &parent {
        let chain = match stateful.store.chain(tenant, id).await {
            Ok(Some(chain)) => chain,
            Ok(None) => {
                let error = ApiError {
                    message: format!("Previous response with id '{id}' not found.").into(),
                    kind: "invalid_request_error".into(),
                    param: Some("previous_response_id".into()),
                    code: Some("previous_response_not_found".into()),
                };
                return Err(Box::new(error_response(StatusCode::NOT_FOUND, error)));
            }
            Err(e) => return Err(Box::new(unavailable(&e))),
        };
        let mut items = Vec::new();
        for record in &chain {
            for part in [&record.input, &record.output] {
                items.extend(serde_json::from_str::<Vec<Value>>(part).unwrap_or_default());
            }
        }
        items.extend(own_items);
        request.insert("input".into(), Value::Array(items));
    }
    let body = serde_json::to_vec(&Value::Object(request)).expect("values serialize");
    Ok(Turn {
        body: Bytes::from(body),
        parent,
        input,
    })
}

/// The turn's input as items, each with a type and an id (the
/// `input_items` endpoint lists them by id).
fn normalize_input(input: Option<&Value>) -> Vec<Value> {
    let items = match input {
        Some(Value::String(text)) => {
            vec![json!({"role": "user", "content": [{"type": "input_text", "text": text}]})]
        }
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    };
    let stem = wirebridge_convert::ids::ResponseIds::new();
    items
        .into_iter()
        .enumerate()
        .map(|(n, mut item)| {
            if let Value::Object(map) = &mut item {
                if !map.contains_key("type") && map.contains_key("role") {
                    map.insert("type".into(), json!("message"));
                }
                if !map.get("id").is_some_and(Value::is_string) {
                    let prefix = match map.get("type").and_then(Value::as_str) {
                        Some("message") => "msg",
                        Some("function_call") => "fc",
                        Some("function_call_output") => "fco",
                        Some("custom_tool_call") => "ctc",
                        Some("custom_tool_call_output") => "ctco",
                        _ => "item",
                    };
                    map.insert("id".into(), json!(stem.item(prefix, n)));
                }
            }
            item
        })
        .collect()
}

/// The record of a finished response, from its JSON.
fn record(
    turn_parent: Option<String>,
    turn_input: String,
    response: &str,
) -> Option<StoredResponse> {
    let parsed: Map<String, Value> = serde_json::from_str(response).ok()?;
    Some(StoredResponse {
        id: parsed.get("id")?.as_str()?.to_owned(),
        parent: turn_parent,
        created_at: parsed
            .get("created_at")
            .and_then(Value::as_u64)
            .unwrap_or_default(),
        input: turn_input,
        output: parsed
            .get("output")
            .map(Value::to_string)
            .unwrap_or_else(|| "[]".into()),
        response: response.to_owned(),
    })
}

/// Saves a non-streamed response before it is returned.
pub(crate) async fn save_body(stateful: &Stateful, tenant: &str, turn: Turn, response: &[u8]) {
    let text = String::from_utf8_lossy(response);
    if let Some(record) = record(turn.parent, turn.input, &text) {
        save(stateful.store.as_ref(), tenant, record).await;
    }
}

/// A hook that saves a streamed response from its terminal event, before
/// that event reaches the client.
pub(crate) fn save_hook(stateful: Stateful, tenant: String, turn: Turn) -> FinishHook {
    Box::new(move |data: &str| -> Option<HoldFuture> {
        let event: Map<String, Value> = serde_json::from_str(data).ok()?;
        let kind = event.get("type")?.as_str()?;
        if !matches!(kind, "response.completed" | "response.incomplete") {
            return None;
        }
        let response = event.get("response")?.to_string();
        let record = record(turn.parent, turn.input, &response)?;
        Some(Box::pin(async move {
            save(stateful.store.as_ref(), &tenant, record).await
        }))
    })
}

async fn save(store: &dyn ResponseStore, tenant: &str, record: StoredResponse) {
    let id = record.id.clone();
    // The answer is good even when it cannot be kept: it is delivered, and
    // the failure logged; chaining on it will then be refused with a 404.
    if let Err(e) = store.save(tenant, record).await {
        tracing::error!(response_id = %id, error = %e, "could not store the response");
    }
}

fn json_response<B>(status: StatusCode, body: Vec<u8>) -> Response<ResponseBody<B>> {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(ResponseBody::full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, length);
    response
}

fn not_found<B>(id: &str) -> Response<ResponseBody<B>> {
    let error = ApiError {
        message: format!("No response found with id '{id}'.").into(),
        kind: "invalid_request_error".into(),
        param: None,
        code: Some("not_found".into()),
    };
    error_response(StatusCode::NOT_FOUND, error)
}

pub(crate) fn unavailable<B>(e: &StoreError) -> Response<ResponseBody<B>> {
    let error = ApiError {
        message: e.to_string().into(),
        kind: "server_error".into(),
        param: None,
        code: Some("store_unavailable".into()),
    };
    let mut response = error_response(StatusCode::SERVICE_UNAVAILABLE, error);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn bad_param<B>(param: &str, message: &str) -> Response<ResponseBody<B>> {
    let error = ApiError {
        message: message.to_owned().into(),
        kind: "invalid_request_error".into(),
        param: Some(param.to_owned().into()),
        code: Some("invalid_parameter".into()),
    };
    error_response(StatusCode::BAD_REQUEST, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        let r = |m: Method, p: &str| route(&m, p, "/responses");
        assert_eq!(
            r(Method::GET, "/v1/responses/resp_1"),
            Some(Route::Retrieve("resp_1".into()))
        );
        assert_eq!(
            r(Method::DELETE, "/v1/responses/resp_1"),
            Some(Route::Delete("resp_1".into()))
        );
        assert_eq!(
            r(Method::GET, "/x/v1/responses/resp_1/input_items"),
            Some(Route::InputItems("resp_1".into()))
        );
        assert_eq!(r(Method::POST, "/v1/responses/resp_1"), None);
        assert_eq!(r(Method::GET, "/v1/responses"), None);
        assert_eq!(r(Method::GET, "/v1/responses/resp_1/cancel"), None);
    }

    #[test]
    fn input_is_normalized_with_ids() {
        let items = normalize_input(Some(&json!("hi")));
        assert_eq!(items[0]["type"], "message");
        assert!(items[0]["id"].as_str().unwrap().starts_with("msg_"));
        let items = normalize_input(Some(
            &json!([{"role": "user", "content": "a", "id": "keep"}, {"type": "function_call_output", "call_id": "c", "output": "o"}]),
        ));
        assert_eq!(items[0]["id"], "keep");
        assert!(items[1]["id"].as_str().unwrap().starts_with("fco_"));
    }
}
