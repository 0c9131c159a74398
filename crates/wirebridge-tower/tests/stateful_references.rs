//! `item_reference` input items resolved from the store, and the store
//! round trips a turn costs at any depth.

mod common;

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use common::stateful::{call, call_as, service, text};
use common::{End, ScriptedBody};
use http::{Request, Response};
use serde_json::{json, Value};
use tower::Layer;
use wirebridge_store::{
    BoxFuture, Chain, MemoryStore, ResponseStore, StoreError, StoredResponse, StoredTurn,
};
use wirebridge_tower::{RequestBody, ResponsesToChatLayer};

/// The ids of a stored response's input items, oldest first.
async fn input_item_ids<S>(s: &S, id: &str) -> Vec<String>
where
    S: tower::Service<
            Request<ScriptedBody>,
            Response = Response<wirebridge_tower::ResponseBody<ScriptedBody>>,
            Error = Infallible,
        > + Clone,
{
    let path = format!("/v1/responses/{id}/input_items?order=asc");
    let (status, list, _) = call(s, "GET", &path, "k1", None).await;
    assert_eq!(status, 200, "{list}");
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn references_to_stored_items_are_resolved() {
    let s = service();
    let (_, first, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": [{"role": "user", "content": "one"}]})),
    )
    .await;
    let first_id = first["id"].as_str().unwrap();
    let question = &input_item_ids(&s, first_id).await[0];
    let answer = first["output"][0]["id"].as_str().unwrap();

    // The whole conversation again, the earlier items by reference.
    let (status, second, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": [
            {"type": "item_reference", "id": question},
            {"type": "item_reference", "id": answer},
            {"role": "user", "content": "two"},
        ]})),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(
        text(&second),
        format!("user:one | assistant:{} | user:two", text(&first))
    );

    // The new turn keeps the items themselves, not the references: it reads
    // back on its own.
    let second_id = second["id"].as_str().unwrap();
    let path = format!("/v1/responses/{second_id}/input_items?order=asc");
    let (_, items, _) = call(&s, "GET", &path, "k1", None).await;
    let kinds: Vec<&str> = items["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["message", "message", "message"], "{items}");
    assert_eq!(items["data"][0]["id"], question.as_str());
    assert_eq!(items["data"][1]["id"], answer);
    assert_eq!(items["data"][1]["role"], "assistant");
}

#[tokio::test]
async fn a_reference_beside_previous_response_id_reads_either() {
    let s = service();
    let (_, first, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "one"})),
    )
    .await;
    let answer = first["output"][0]["id"].as_str().unwrap();
    let (status, second, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(
            json!({"model": "m", "previous_response_id": first["id"], "input": [
                {"type": "item_reference", "id": answer},
                {"role": "user", "content": "again"},
            ]}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{second}");
    let echoed = text(&first);
    assert_eq!(
        text(&second),
        format!("user:one | assistant:{echoed} | assistant:{echoed} | user:again")
    );
}

/// Refused with a 400 naming the reference, in the Responses error format.
fn assert_unknown_reference(status: http::StatusCode, error: &Value, id: &str, index: usize) {
    assert_eq!(status, 400, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains(id), "{message}");
    assert_eq!(error["error"]["param"], format!("input[{index}].id"));
    assert_eq!(error["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn unknown_and_foreign_references_are_refused_naming_them() {
    let s = service();
    let (_, first, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(json!({"model": "m", "input": "one"})),
    )
    .await;
    let answer = first["output"][0]["id"].as_str().unwrap().to_owned();
    // A made-up id in the bridge's format, an id of another shape, and an
    // item of another credential.
    let made_up = format!("msg_{}", "0".repeat(32));
    for (key, id) in [
        ("k1", made_up.as_str()),
        ("k1", "msg_mine"),
        ("k2", &answer),
    ] {
        let (status, error, _) = call(
            &s,
            "POST",
            "/v1/responses",
            key,
            Some(json!({"model": "m", "input": [
                {"role": "user", "content": "hi"},
                {"type": "item_reference", "id": id},
            ]})),
        )
        .await;
        assert_unknown_reference(status, &error, id, 1);
    }
    // Without a credential nothing is kept, so nothing can be referred to.
    let (status, error, _) = call_as(
        &s,
        "POST",
        "/v1/responses",
        None,
        Some(json!({"model": "m", "input": [{"type": "item_reference", "id": answer}]})),
    )
    .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["code"], "store_requires_credentials");
    assert_eq!(error["error"]["param"], "input");
}

/// A store that counts the calls made to another.
struct Counting {
    inner: MemoryStore,
    calls: Arc<AtomicUsize>,
}

impl Counting {
    fn count(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
    }
}

impl ResponseStore for Counting {
    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.count();
        self.inner.save(tenant, response)
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>> {
        self.count();
        self.inner.get(tenant, id)
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.count();
        self.inner.delete(tenant, id)
    }

    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>> {
        self.count();
        self.inner.chain(tenant, id)
    }

    fn turns<'a>(
        &'a self,
        tenant: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Option<StoredTurn>>, StoreError>> {
        self.count();
        self.inner.turns(tenant, ids)
    }
}

/// Answers "ok" to everything, so that a long conversation stays small.
fn terse_upstream() -> impl tower::Service<
    Request<RequestBody<ScriptedBody>>,
    Response = Response<ScriptedBody>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    tower::service_fn(|_request: Request<RequestBody<ScriptedBody>>| async move {
        let reply = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]});
        let mut response =
            Response::new(ScriptedBody::new(vec![Bytes::from(reply.to_string())], End::Eof).0);
        response
            .headers_mut()
            .insert("content-type", "application/json".parse().unwrap());
        Ok::<_, Infallible>(response)
    })
}

#[tokio::test]
async fn a_turn_costs_two_store_calls_at_any_depth() {
    let calls = Arc::new(AtomicUsize::new(0));
    let store = Counting {
        inner: MemoryStore::new(),
        calls: calls.clone(),
    };
    let s = ResponsesToChatLayer::new()
        .store(store)
        .layer(terse_upstream());
    let mut previous: Option<String> = None;
    let mut per_turn = Vec::new();
    for depth in 1..=500 {
        let before = calls.load(Ordering::Relaxed);
        let mut request = json!({"model": "m", "input": format!("turn {depth}")});
        if let Some(id) = &previous {
            request["previous_response_id"] = json!(id);
        }
        let (status, response, _) = call(&s, "POST", "/v1/responses", "k1", Some(request)).await;
        assert_eq!(status, 200, "{response}");
        previous = Some(response["id"].as_str().unwrap().to_owned());
        per_turn.push(calls.load(Ordering::Relaxed) - before);
    }
    // The first turn only saves; every later one reads its conversation in
    // one call and saves in another.
    assert_eq!(per_turn[0], 1);
    for depth in [2, 50, 500] {
        assert_eq!(per_turn[depth - 1], 2, "depth {depth}");
    }
    assert!(per_turn[1..].iter().all(|&n| n == 2), "{per_turn:?}");
}
