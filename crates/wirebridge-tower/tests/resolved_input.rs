//! The bound on what the store adds to one request (its stored history and
//! the items its references name, each time named): refused with a 400
//! naming the field that passed it, before the upstream is called, and
//! reported as a budget reached.

mod common;

use std::sync::{Arc, Mutex};

use common::stateful::{call, echo_upstream};
use serde_json::{json, Value};
use tower::Layer;
use wirebridge_store::MemoryStore;
use wirebridge_tower::{Budget, Exchange, Observer, ResponsesToChatLayer};

#[derive(Clone, Default)]
struct Budgets(Arc<Mutex<Vec<Budget>>>);

impl Observer for Budgets {
    fn on_exchange(&self, _: &Exchange) {}
    fn on_budget(&self, budget: Budget) {
        self.0.lock().unwrap().push(budget);
    }
}

/// A message of `n` bytes of text.
fn message(n: usize) -> Value {
    json!({"role": "user", "content": "x".repeat(n)})
}

fn assert_refused(status: http::StatusCode, error: &Value, param: &str) {
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["param"], param, "{error}");
    assert_eq!(
        error["error"]["code"], "resolved_input_too_large",
        "{error}"
    );
}

/// Stores a turn of one message of `n` bytes: the response's id, and its
/// input item's.
async fn stored<S>(s: &S, n: usize) -> (String, String)
where
    S: tower::Service<
            http::Request<common::ScriptedBody>,
            Response = http::Response<wirebridge_tower::ResponseBody<common::ScriptedBody>>,
            Error = std::convert::Infallible,
        > + Clone,
{
    let body = json!({"model": "m", "input": [message(n)]});
    let (status, response, _) = call(s, "POST", "/v1/responses", "k1", Some(body)).await;
    assert_eq!(status, 200, "{response}");
    let id = response["id"].as_str().unwrap().to_owned();
    let path = format!("/v1/responses/{id}/input_items");
    let (_, items, _) = call(s, "GET", &path, "k1", None).await;
    (id, items["data"][0]["id"].as_str().unwrap().to_owned())
}

fn references(item: &str, times: usize) -> Value {
    let refs: Vec<Value> = (0..times)
        .map(|_| json!({"type": "item_reference", "id": item}))
        .collect();
    json!({"model": "m", "store": false, "input": refs})
}

#[tokio::test]
async fn the_bound_follows_the_body_limit_unless_set() {
    // Set before or after the body limit, a bound set is kept.
    let set = ResponsesToChatLayer::new()
        .max_resolved_input(100_000)
        .body_limit(20_000)
        .store(MemoryStore::new())
        .layer(echo_upstream());
    // Unset, it is twice the body limit, whichever comes first.
    let following = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .body_limit(20_000)
        .layer(echo_upstream());
    for (s, fits) in [(&set, 6), (&following, 2)] {
        let (_, item) = stored(s, 15_000).await;
        let (status, response, _) = call(
            s,
            "POST",
            "/v1/responses",
            "k1",
            Some(references(&item, fits)),
        )
        .await;
        assert_eq!(status, 200, "{fits}: {response}");
        let (status, error, _) = call(
            s,
            "POST",
            "/v1/responses",
            "k1",
            Some(references(&item, fits + 1)),
        )
        .await;
        assert_refused(status, &error, "input");
    }
}

#[tokio::test]
async fn a_conversation_past_the_bound_is_refused_naming_it() {
    let budgets = Budgets::default();
    let s = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .max_resolved_input(50_000)
        .observer(budgets.clone())
        .layer(echo_upstream());
    let create = |n| json!({"items": [message(n)]});
    let (_, small, _) = call(&s, "POST", "/v1/conversations", "k1", Some(create(20_000))).await;
    let (_, large, _) = call(&s, "POST", "/v1/conversations", "k1", Some(create(60_000))).await;
    let turn = |conversation: &Value, input: Value| json!({"model": "m", "conversation": conversation["id"], "input": input});

    let (status, error, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(turn(&large, json!("hi"))),
    )
    .await;
    assert_refused(status, &error, "conversation");
    let (status, response, _) = call(
        &s,
        "POST",
        "/v1/responses",
        "k1",
        Some(turn(&small, json!("hi"))),
    )
    .await;
    assert_eq!(status, 200, "{response}");
    // The echoed answer joined it: about 40,000 bytes, and with the item
    // its reference names, more than 50,000.
    let (_, item) = stored(&s, 25_000).await;
    let input = json!([{"type": "item_reference", "id": item}]);
    let (status, error, _) =
        call(&s, "POST", "/v1/responses", "k1", Some(turn(&small, input))).await;
    assert_refused(status, &error, "conversation");
    assert_eq!(
        *budgets.0.lock().unwrap(),
        [Budget::ResolvedInput, Budget::ResolvedInput]
    );
}
