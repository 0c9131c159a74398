//! The bytes every WebSocket connection of a layer holds together
//! (`WebSocketSettings::max_memory`): a connection that needs room evicts
//! its own oldest cached responses; one with nothing of its own to give
//! back is refused with an error event, and stays usable.
#![cfg(feature = "websocket")]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wirebridge_tower::{Budget, Exchange, Observer, ResponsesToChatLayer, WebSocketSettings};

mod common;
use common::websocket::{connect, create, send, serve, turn, Client, Upstream};

/// Records the budgets an observer is told were reached.
struct Budgets(Arc<Mutex<Vec<Budget>>>);

impl Observer for Budgets {
    fn on_exchange(&self, _: &Exchange) {}
    fn on_budget(&self, budget: Budget) {
        self.0.lock().unwrap().push(budget);
    }
}

/// A warm-up of `text` (nothing reaches the backend, the connection keeps
/// it), with `extra` fields: its terminal event.
async fn warmup(client: &mut Client, text: &str, extra: Value) -> Value {
    let mut fields = json!({"generate": false, "store": false});
    fields
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    send(client, create(text, fields)).await;
    turn(client).await.pop().unwrap()
}

// Each warm-up of 2,500 characters holds a little more than that: its
// request while it waits and runs, its input once cached. Two fit in the
// bound, not three.
const TEXT: usize = 2_500;
const MAX_MEMORY: usize = 6_000;

#[tokio::test]
async fn a_connection_makes_room_from_its_own_cache_and_another_is_refused() {
    let budgets: Arc<Mutex<Vec<Budget>>> = Arc::default();
    let layer = ResponsesToChatLayer::new()
        .observer(Budgets(Arc::clone(&budgets)))
        .websocket(WebSocketSettings::new().max_memory(MAX_MEMORY));
    let url = serve(layer, Arc::new(Upstream::default())).await;

    // Three warm-ups on one connection: the third evicts the first.
    let mut first = connect(&url, Some("sk-made-up-1")).await;
    let mut ids = Vec::new();
    for letter in ["a", "b", "c"] {
        let done = warmup(&mut first, &letter.repeat(TEXT), json!({})).await;
        assert_eq!(done["type"], "response.completed", "{done}");
        ids.push(done["response"]["id"].as_str().unwrap().to_owned());
    }
    let gone = warmup(&mut first, "d", json!({"previous_response_id": ids[0]})).await;
    assert_eq!(
        gone["error"]["code"], "previous_response_not_found",
        "{gone}"
    );
    let kept = warmup(&mut first, "e", json!({"previous_response_id": ids[2]})).await;
    assert_eq!(kept["type"], "response.completed", "{kept}");
    assert!(budgets.lock().unwrap().is_empty(), "nothing was refused");

    // Another connection has nothing of its own to evict: refused, with
    // the protocol's error event, in its lane.
    let mut second = connect(&url, Some("sk-made-up-2")).await;
    let refused = warmup(&mut second, &"f".repeat(TEXT), json!({"stream_id": "f"})).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert_eq!(refused["status"], 503, "{refused}");
    assert_eq!(refused["stream_id"], "f", "{refused}");
    let error = &refused["error"];
    assert_eq!(error["code"], "websocket_memory_exhausted", "{error}");
    assert_eq!(error["type"], "server_error", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("6000-byte memory bound"), "{message}");
    assert!(message.contains("--websocket-max-memory"), "{message}");
    assert_eq!(*budgets.lock().unwrap(), [Budget::WebSocketMemory]);

    // It stays usable: a turn that fits runs at once, and the large one
    // once the first connection has given its bytes back.
    let small = warmup(&mut second, "g", json!({})).await;
    assert_eq!(small["type"], "response.completed", "{small}");
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let done = warmup(&mut second, &"h".repeat(TEXT), json!({})).await;
        if done["type"] == "response.completed" {
            break;
        }
        assert_eq!(
            done["error"]["code"], "websocket_memory_exhausted",
            "{done}"
        );
        assert!(Instant::now() < deadline, "the bytes were never given back");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
