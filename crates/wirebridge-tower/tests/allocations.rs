//! What a stored turn costs in heap allocations, and what a store adds to
//! a request that does not use it, counted (counts are deterministic,
//! unlike timings).
//!
//! A turn that continues a stored conversation parses nothing into
//! `serde_json::Value`: the stored items are borrowed as kept and
//! translated as if the client had sent them. So a stored turn costs about
//! what the same conversation costs sent whole, plus the store's own work
//! (copying the records out of the memory store, keeping the new one).

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use serde_json::{json, Value};
use tower::{Layer, Service, ServiceExt};
use wirebridge_testkit::{allocations, CountingAllocator};
use wirebridge_tower::store::MemoryStore;
use wirebridge_tower::{RequestBody, ResponseBody, ResponsesToChatLayer};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Answers every request with the same short completion, as a body or a
/// stream.
fn upstream() -> impl Service<
    Request<RequestBody<Full<Bytes>>>,
    Response = Response<Full<Bytes>>,
    Error = Infallible,
    Future = impl Send,
> + Clone
       + Send
       + 'static {
    tower::service_fn(|request: Request<RequestBody<Full<Bytes>>>| async move {
        let body = request.into_body().collect().await.unwrap().to_bytes();
        let stream = body.windows(13).any(|w| w == br#""stream":true"#);
        let (content_type, reply) = if stream {
            (
                "text/event-stream",
                concat!(
                    r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Noted, and here is a reply of a realistic length."},"finish_reason":null}]}"#,
                    "\n\n",
                    r#"data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
                    "\n\ndata: [DONE]\n\n"
                ),
            )
        } else {
            (
                "application/json",
                r#"{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Noted, and here is a reply of a realistic length."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":9,"total_tokens":19}}"#,
            )
        };
        let mut response = Response::new(Full::new(Bytes::from_static(reply.as_bytes())));
        response
            .headers_mut()
            .insert("content-type", content_type.parse().unwrap());
        Ok::<_, Infallible>(response)
    })
}

/// A user turn of a realistic shape: text with escapes, a tool call and its
/// result. `padding` makes every item hold more JSON (longer text, more
/// fields, a nested object the bridge does not know) without adding items.
fn turn_input(n: usize, padding: usize) -> Value {
    let filler = "lorem ipsum \"dolor\" sit amet\n".repeat(padding);
    let extra: Vec<Value> = (0..padding).map(|k| json!({"k": k, "v": [k, k]})).collect();
    json!([
        {"role": "user", "content": [{"type": "input_text", "text": format!("Step {n}: read \"notes.txt\" and summarize it.\nKeep it short.{filler}")}], "x_client": extra},
        {"type": "function_call", "call_id": format!("call_{n}"), "name": "read", "arguments": "{\"path\":\"notes.txt\"}", "x_trace": extra},
        {"type": "function_call_output", "call_id": format!("call_{n}"), "output": format!("line one\nline two\nline three{filler}"), "x_trace": extra},
    ])
}

async fn send<S>(service: &S, body: Value) -> Value
where
    S: Service<
            Request<Full<Bytes>>,
            Response = Response<ResponseBody<Full<Bytes>>>,
            Error = Infallible,
        > + Clone,
{
    let request = Request::post("/v1/responses")
        .header("authorization", "Bearer k")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = service.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    if bytes.starts_with(b"{") {
        serde_json::from_slice(&bytes).unwrap()
    } else {
        // A stream: its id, from the first event.
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        let start = text.find("\"resp_").unwrap() + 1;
        let id = &text[start..start + text[start..].find('"').unwrap()];
        json!({"id": id})
    }
}

/// Allocations of one turn continuing a stored conversation of `depth`
/// turns.
async fn stored_turn(depth: usize, padding: usize, stream: bool) -> u64 {
    let service = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .layer(upstream());
    let mut previous: Option<String> = None;
    for n in 0..=depth {
        let mut body =
            json!({"model": "m", "stream": n == depth && stream, "input": turn_input(n, padding)});
        if let Some(id) = &previous {
            body["previous_response_id"] = json!(id);
        }
        let body = body.to_string();
        let request = Request::post("/v1/responses")
            .header("authorization", "Bearer k")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        // Only the last turn is counted, from the request to the end of
        // the reply body.
        let before = allocations();
        let response = service.clone().oneshot(request).await.unwrap();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let cost = allocations() - before;
        if n == depth {
            return cost;
        }
        let response: Value = serde_json::from_slice(&bytes).unwrap();
        previous = Some(response["id"].as_str().unwrap().to_owned());
    }
    unreachable!()
}

/// Allocations of one turn sending the same conversation whole, to a
/// layer without a store.
async fn whole_turn(depth: usize, stream: bool) -> u64 {
    let service = ResponsesToChatLayer::new().layer(upstream());
    let mut input: Vec<Value> = Vec::new();
    for n in 0..depth {
        input.extend(turn_input(n, 0).as_array().unwrap().iter().cloned());
        let response = send(
            &service,
            json!({"model": "m", "store": false, "input": input}),
        )
        .await;
        input.extend(response["output"].as_array().unwrap().iter().cloned());
    }
    input.extend(turn_input(depth, 0).as_array().unwrap().iter().cloned());
    let body = json!({"model": "m", "store": false, "stream": stream, "input": input}).to_string();
    let request = Request::post("/v1/responses")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let before = allocations();
    let response = service.oneshot(request).await.unwrap();
    response.into_body().collect().await.unwrap();
    allocations() - before
}

/// Allocations a stored turn may add per turn of history: the memory store
/// copies each record out (its five strings, the future that reads it, the
/// parent id it follows: 7), the translator reads the record's two item
/// arrays (2) and writes the turn's four items as Chat messages (about 5).
/// None of it depends on how much JSON an item holds.
const PER_TURN_OF_HISTORY: u64 = 20;

/// Runs a future that never waits on IO (the memory store, an upstream
/// answering at once) to completion on this thread, with no runtime whose
/// own bookkeeping would be counted.
fn run<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}

#[test]
fn a_stored_turn_allocates_per_turn_of_history_not_per_json_value() {
    run(check_stored_turns());
}

async fn check_stored_turns() {
    for stream in [false, true] {
        let at_20 = stored_turn(20, 0, stream).await;
        let at_40 = stored_turn(40, 0, stream).await;
        let padded = stored_turn(20, 8, stream).await;
        let whole = whole_turn(20, stream).await;
        let per_turn = (at_40 - at_20) / 20;
        eprintln!(
            "stream={stream}: a turn on 20 stored turns {at_20}, on 40 {at_40} ({per_turn} a turn), \
             on 20 padded turns {padded}; the same 20 turns sent whole {whole}"
        );
        assert_eq!(
            padded, at_20,
            "items holding more JSON cost more allocations (stream={stream})"
        );
        assert!(
            per_turn <= PER_TURN_OF_HISTORY,
            "{per_turn} allocations per stored turn (stream={stream})"
        );
    }
}

/// Allocations of one `store: false` request of `turns` turns with
/// credentials, through a layer with a store or without one.
async fn unstored_request(with_store: bool, turns: usize, padding: usize) -> u64 {
    let layer = ResponsesToChatLayer::new();
    let layer = match with_store {
        true => layer.store(MemoryStore::new()),
        false => layer,
    };
    let service = layer.layer(upstream());
    let input: Vec<Value> = (0..turns)
        .flat_map(|n| turn_input(n, padding).as_array().unwrap().clone())
        .collect();
    let body = json!({"model": "m", "store": false, "input": input}).to_string();
    let request = Request::post("/v1/responses")
        .header("authorization", "Bearer k")
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let before = allocations();
    let response = service.oneshot(request).await.unwrap();
    response.into_body().collect().await.unwrap();
    allocations() - before
}

/// What a store adds to a request that neither stores nor continues: the
/// tenant's key (1) and the check for the store's own endpoints (the
/// `…/responses/` it looks for, written and grown: 2), and nothing that
/// grows with the request: no second parse, no copy of its items.
const STORE_ON_AN_UNSTORED_REQUEST: u64 = 3;

#[test]
fn a_request_that_neither_stores_nor_continues_costs_the_same_with_a_store() {
    run(async {
        for (turns, padding) in [(1, 0), (20, 0), (20, 8)] {
            let with = unstored_request(true, turns, padding).await;
            let without = unstored_request(false, turns, padding).await;
            eprintln!(
                "{turns} turns, padding {padding}: {with} allocations with a store, {without} without"
            );
            assert!(
                with.abs_diff(without) <= STORE_ON_AN_UNSTORED_REQUEST,
                "{turns} turns, padding {padding}: {with} with a store, {without} without"
            );
        }
    });
}
