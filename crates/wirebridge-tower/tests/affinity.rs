//! The affinity key each translated exchange puts on its upstream request:
//! one key for every turn of a conversation, another for another
//! conversation, whatever it shares with it.

mod common;

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use common::stateful::{call, echo_upstream, text};
use common::ScriptedBody;
use http::Request;
use serde_json::{json, Value};
use tower::{Layer, Service, ServiceExt};
use wirebridge_convert::seal::{SealKey, Sealer};
use wirebridge_store::MemoryStore;
use wirebridge_tower::{Affinity, AffinitySource, RequestBody, ResponsesToChatLayer};

/// The key each upstream request carried, in order (`None` for none).
type Keys = Arc<Mutex<Vec<Option<Affinity>>>>;

/// The bridge over the echoing Chat upstream, noting each request's key.
fn bridge(
    keys: Keys,
) -> impl Service<
    Request<ScriptedBody>,
    Response = http::Response<wirebridge_tower::ResponseBody<ScriptedBody>>,
    Error = Infallible,
> + Clone {
    bridge_keying(keys, true)
}

/// The same, the layer keying bodies by their prefix or not.
fn bridge_keying(
    keys: Keys,
    prefix_affinity: bool,
) -> impl Service<
    Request<ScriptedBody>,
    Response = http::Response<wirebridge_tower::ResponseBody<ScriptedBody>>,
    Error = Infallible,
> + Clone {
    let upstream = echo_upstream();
    let noting = tower::service_fn(move |request: Request<RequestBody<ScriptedBody>>| {
        if request.method() == http::Method::POST {
            let key = request.extensions().get::<Affinity>().copied();
            keys.lock().unwrap().push(key);
        }
        upstream.clone().oneshot(request)
    });
    ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .sealer(Sealer::new(SealKey::generate(), Vec::new()))
        .prefix_affinity(prefix_affinity)
        .layer(noting)
}

fn taken(keys: &Keys) -> Vec<Option<Affinity>> {
    std::mem::take(&mut *keys.lock().unwrap())
}

/// A turn of a session: its instructions and tools, and what it says.
fn turn(said: &str, previous: Option<&str>, stream: bool) -> Value {
    let mut body = json!({
        "model": "m",
        "instructions": "You are a careful coding agent.",
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}}],
        "input": said,
        "stream": stream,
    });
    if let Some(previous) = previous {
        body["previous_response_id"] = json!(previous);
    }
    body
}

#[tokio::test]
async fn every_turn_of_a_chain_has_one_key_and_other_sessions_others() {
    let keys = Keys::default();
    let service = bridge(keys.clone());
    let mut previous: Option<String> = None;
    for said in ["first question", "second", "third", "fourth"] {
        let (status, reply, _) = call(
            &service,
            "POST",
            "/v1/responses",
            "sk-a",
            Some(turn(said, previous.as_deref(), false)),
        )
        .await;
        assert_eq!(status, 200, "{reply}");
        // The backend got the whole conversation each turn.
        assert!(text(&reply).contains("user:first question"), "{reply}");
        previous = Some(reply["id"].as_str().unwrap().to_owned());
    }
    let chain = taken(&keys);
    assert_eq!(chain.len(), 4);
    let first = chain[0].expect("a key on the first turn");
    assert_eq!(first.source(), AffinitySource::Prefix);
    assert!(chain.iter().all(|key| *key == Some(first)), "{chain:?}");

    // Another session of the same agent: the same instructions and tools,
    // another first message.
    let (status, _, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "sk-a",
        Some(turn("another task", None, true)),
    )
    .await;
    assert_eq!(status, 200);
    let other = taken(&keys)[0].expect("a key");
    assert_ne!(other, first);
}

/// Without prefix keys, a request that names no conversation goes
/// without a key (a router keys its body, or there is one backend), and one
/// that names a conversation or a `prompt_cache_key` still has its key.
#[tokio::test]
async fn without_prefix_keys_only_a_named_conversation_is_a_key() {
    let keys = Keys::default();
    let service = bridge_keying(keys.clone(), false);
    let mut body = turn("hello", None, false);
    body["prompt_cache_key"] = json!("session-42");
    for body in [turn("hello", None, false), turn("hello", None, true), body] {
        let (status, reply, _) = call(&service, "POST", "/v1/responses", "sk-a", Some(body)).await;
        assert_eq!(status, 200, "{reply}");
    }
    assert_eq!(
        taken(&keys),
        vec![None, None, Some(Affinity::prompt_cache_key("session-42"))]
    );

    let (status, conversation, _) = call(
        &service,
        "POST",
        "/v1/conversations",
        "sk-a",
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200, "{conversation}");
    let id = conversation["id"].as_str().unwrap();
    let mut body = turn("one", None, false);
    body["conversation"] = json!(id);
    let (status, reply, _) = call(&service, "POST", "/v1/responses", "sk-a", Some(body)).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(taken(&keys), vec![Some(Affinity::conversation(id))]);
}

#[tokio::test]
async fn a_conversation_or_a_prompt_cache_key_is_the_key() {
    let keys = Keys::default();
    let service = bridge(keys.clone());
    let mut body = turn("hello", None, false);
    body["prompt_cache_key"] = json!("session-42");
    let (status, _, _) = call(&service, "POST", "/v1/responses", "sk-a", Some(body)).await;
    assert_eq!(status, 200);
    assert_eq!(
        taken(&keys),
        vec![Some(Affinity::prompt_cache_key("session-42"))]
    );

    let (status, conversation, _) = call(
        &service,
        "POST",
        "/v1/conversations",
        "sk-a",
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200, "{conversation}");
    let id = conversation["id"].as_str().unwrap();
    for said in ["one", "two"] {
        let mut body = turn(said, None, false);
        body["conversation"] = json!(id);
        body["prompt_cache_key"] = json!("session-42");
        let (status, reply, _) = call(&service, "POST", "/v1/responses", "sk-a", Some(body)).await;
        assert_eq!(status, 200, "{reply}");
    }
    let conversation_key = Some(Affinity::conversation(id));
    assert_eq!(taken(&keys), vec![conversation_key, conversation_key]);
}

#[tokio::test]
async fn a_compaction_s_summary_goes_where_its_conversation_is_kept() {
    let keys = Keys::default();
    let service = bridge(keys.clone());
    let conversation = json!([
        {"role": "user", "content": "Write a haiku about the sea."},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Waves fold into foam"}]},
        {"role": "user", "content": "Another."},
    ]);
    let request = json!({"model": "m", "instructions": "You are a poet.", "input": conversation});
    let (status, reply, _) = call(
        &service,
        "POST",
        "/v1/responses",
        "sk-a",
        Some(request.clone()),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    let (status, compacted, _) = call(
        &service,
        "POST",
        "/v1/responses/compact",
        "sk-a",
        Some(request),
    )
    .await;
    assert_eq!(status, 200, "{compacted}");
    let keys = taken(&keys);
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys[0].is_some());
    assert_eq!(keys[1], keys[0]);
}
