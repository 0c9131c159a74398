//! What `--proxy` sends: for each direction, the client's request and the
//! request the proxy sends upstream for it, and the routes they take.
//!
//! The upstream request is the client's request as the translator writes
//! it (default options), so that the pass-through route hands the upstream
//! the same work as the translated route does, and the two differ only by
//! what translating costs.

use std::path::Path;

use bytes::Bytes;
use serde_json::{json, Value};
use wirebridge_bench::cases;
use wirebridge_convert::{
    chat_to_responses as c2r, messages_to_responses as m2r, responses_to_chat as r2c,
    responses_to_responses as r2r,
};

/// Words in the user message of the streaming case: the demo streams one
/// word per chunk, so the reply has about this many chunks.
const STREAM_WORDS: usize = 490;

/// The concurrencies of the default run's cases.
pub(super) const CONCURRENCIES: [usize; 3] = [1, 8, 32];

/// The Claude Code-like request of the Messages golden tests: 12 tools,
/// system blocks, thinking, a tool call and its result.
const CLAUDE_CODE_REQUEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../wirebridge-convert/tests/inputs/messages-claude-code-request.json"
);

/// The header Anthropic's clients send with every Messages request.
pub(super) const ANTHROPIC_VERSION: (&str, &str) = ("anthropic-version", "2023-06-01");

/// The credential of the requests that ask to be stored: a request without
/// one keeps nothing on the bridge.
pub(super) const BENCH_CREDENTIAL: &str = "Bearer wirebridge-bench";

/// Which API the client speaks, and so which the proxy translates to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// A Responses client over a Chat upstream (`serve --upstream-api chat`).
    ResponsesToChat,
    /// A Chat client over a Responses upstream (`serve --upstream-api
    /// responses --profile openai`: an upstream that keeps its own state).
    ChatToResponses,
    /// A Responses client over a Responses upstream that keeps no state
    /// (`serve --upstream-api responses`, the default profile): the
    /// bridge's stateful engine, which completes the request and re-sends
    /// the reply under its own ids.
    ResponsesToResponses,
    /// An Anthropic Messages client over a Chat upstream (`serve
    /// --upstream-api chat`, the client's path `/v1/messages`): the
    /// Messages layer over the Responses one, the hub.
    MessagesToChat,
}

impl Direction {
    pub(super) const ALL: [Direction; 4] = [
        Direction::ResponsesToChat,
        Direction::ChatToResponses,
        Direction::ResponsesToResponses,
        Direction::MessagesToChat,
    ];

    /// The name in case names, as the translation cases name it.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Direction::ResponsesToChat => "responses_to_chat",
            Direction::ChatToResponses => "chat_to_responses",
            Direction::ResponsesToResponses => "responses_to_responses",
            Direction::MessagesToChat => "messages_to_chat",
        }
    }

    /// The `--upstream-api` of the proxy that translates this way.
    pub(super) fn upstream_api(self) -> &'static str {
        match self {
            Direction::ResponsesToChat | Direction::MessagesToChat => "chat",
            Direction::ChatToResponses | Direction::ResponsesToResponses => "responses",
        }
    }

    /// The proxy's `--profile`, when not the default. In front of a
    /// Responses upstream, a profile that says the upstream keeps its own
    /// state makes a Responses request pass through as it is: the Chat
    /// clients' proxy then measures their translation alone, and is the
    /// stateful engine's `passthrough`.
    pub(super) fn profile(self) -> Option<&'static str> {
        match self {
            Direction::ChatToResponses => Some("openai"),
            Direction::ResponsesToChat
            | Direction::ResponsesToResponses
            | Direction::MessagesToChat => None,
        }
    }

    /// Whether LiteLLM and other gateways are measured beside it: not for
    /// the stateful engine, which they do not have, nor (yet) for Messages
    /// clients, whose gateway commands and LiteLLM configuration the bench
    /// does not write.
    pub(super) fn has_peers(self) -> bool {
        matches!(
            self,
            Direction::ResponsesToChat | Direction::ChatToResponses
        )
    }

    pub(super) fn client_path(self) -> &'static str {
        match self {
            Direction::ResponsesToChat | Direction::ResponsesToResponses => "/v1/responses",
            Direction::ChatToResponses => "/v1/chat/completions",
            Direction::MessagesToChat => "/v1/messages",
        }
    }

    /// The headers the client's requests carry besides the content type.
    fn client_headers(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Direction::MessagesToChat => &[ANTHROPIC_VERSION],
            _ => &[],
        }
    }

    pub(super) fn upstream_path(self) -> &'static str {
        match self {
            Direction::ResponsesToChat | Direction::MessagesToChat => "/v1/chat/completions",
            Direction::ChatToResponses | Direction::ResponsesToResponses => "/v1/responses",
        }
    }
}

/// Where a route's requests go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Via {
    /// Straight to the demo upstream.
    Demo,
    /// Through the proxy of the case's direction.
    Proxy,
    /// Through the proxy that passes a Responses request through as it is
    /// (the Chat clients', see [`Direction::profile`]).
    Forwarding,
    /// Through the LiteLLM proxy of the case's direction (`--litellm`).
    LiteLlm,
    /// Through the minimal hyper proxy, which forwards without translating.
    Minimal,
    /// Through the gateway named `--gateway` number N, for the case's
    /// direction.
    Gateway(usize),
    /// Through a second proxy of the case's direction, started with
    /// `--store none` (`--store`'s `store_none` route).
    StoreNone,
}

/// One way of sending a case's request.
#[derive(Debug, Clone)]
pub(super) struct Route {
    pub(super) name: &'static str,
    pub(super) via: Via,
    pub(super) path: &'static str,
    pub(super) body: Bytes,
    /// Sent with [`BENCH_CREDENTIAL`].
    pub(super) credential: bool,
    /// Sent besides the content type (a Messages client's
    /// `anthropic-version`).
    pub(super) headers: &'static [(&'static str, &'static str)],
}

/// A kind of request, a direction and a concurrency: the routes that are
/// compared for it.
#[derive(Debug, Clone)]
pub(super) struct Case {
    /// `direction/kind/cN`.
    pub(super) name: String,
    pub(super) direction: Direction,
    pub(super) streaming: bool,
    pub(super) concurrency: usize,
    /// Bytes of the client's request.
    pub(super) request_bytes: usize,
    pub(super) routes: Vec<Route>,
}

/// The routes of the default run: the client's request straight to the
/// demo's own endpoint for the client's API (`direct`); the upstream
/// request straight to the demo (`upstream`: the upstream's own share); the
/// upstream request through the minimal hyper proxy (`minimal`: what
/// forwarding alone costs); the upstream request through the proxy, which
/// forwards it as it is (`passthrough`); and the client's request through
/// the proxy, which translates it (`translated`). For the stateful engine,
/// `translated` is the client's request completed and its reply re-sent,
/// with the conversation kept (the demo keeps nothing), and `passthrough`
/// the same request through a proxy that forwards it. Each at the
/// [`CONCURRENCIES`].
///
/// Kinds: `request_3k`, the ~3 KB Codex turn (for Chat clients, the Chat
/// request it becomes); [`CLAUDE_CODE_KIND`], the Claude Code-like request
/// of about 7 KB, for Messages clients, and for Responses clients the
/// Responses request it becomes; `stream_500`, a user message of
/// [`STREAM_WORDS`] words of Codex prose, streamed, which the demo answers
/// word by word.
pub(super) fn overhead_cases(shared: &Path) -> Result<Vec<Case>, String> {
    let turn = responses_with(&cases::codex_turn(shared)?, &[("stream", false.into())])?;
    let prose = cases::codex_prose(shared)?;
    let words: Vec<&str> = prose.split_whitespace().take(STREAM_WORDS).collect();
    let text = words.join(" ");
    let mut out = Vec::new();
    for direction in Direction::ALL {
        let (plain, streaming) = match direction {
            Direction::ResponsesToChat | Direction::ResponsesToResponses => (
                turn.clone(),
                to_bytes(&json!({
                    "model": "wirebridge-demo",
                    "stream": true,
                    "input": [{"role": "user", "content": [{"type": "input_text", "text": text}]}],
                })),
            ),
            // The Chat request a Responses client's turn becomes: the same
            // conversation and tools, in the other API.
            Direction::ChatToResponses => (
                responses_to_chat(&turn)?,
                to_bytes(&json!({
                    "model": "wirebridge-demo",
                    "stream": true,
                    "messages": [{"role": "user", "content": text}],
                })),
            ),
            Direction::MessagesToChat => (
                claude_code_request()?,
                to_bytes(&json!({
                    "model": "wirebridge-demo",
                    "max_tokens": 32000,
                    "stream": true,
                    "messages": [{"role": "user", "content": text}],
                })),
            ),
        };
        let mut kinds = vec![
            (plain_kind(direction), false, plain),
            ("stream_500", true, streaming),
        ];
        // The Claude Code turn as a Responses client sends it: the Responses
        // request the Messages ingress hands on, so that the two ingresses
        // are compared on one conversation.
        if direction == Direction::ResponsesToChat {
            let claude_code = messages_to_responses(&claude_code_request()?)?;
            kinds.push((CLAUDE_CODE_KIND, false, claude_code));
        }
        for (kind, streaming, client) in kinds {
            let upstream = upstream_request(direction, &client)?;
            let forwarder = match direction {
                Direction::ResponsesToResponses => Via::Forwarding,
                _ => Via::Proxy,
            };
            for concurrency in CONCURRENCIES {
                let route = |name, via, path, body: &Bytes, client: bool| Route {
                    name,
                    via,
                    path,
                    body: body.clone(),
                    credential: false,
                    headers: match client {
                        true => direction.client_headers(),
                        false => &[],
                    },
                };
                let (client_path, upstream_path) =
                    (direction.client_path(), direction.upstream_path());
                out.push(Case {
                    name: format!("{}/{kind}/c{concurrency}", direction.as_str()),
                    direction,
                    streaming,
                    concurrency,
                    request_bytes: client.len(),
                    routes: vec![
                        route("direct", Via::Demo, client_path, &client, true),
                        route("upstream", Via::Demo, upstream_path, &upstream, false),
                        route("minimal", Via::Minimal, upstream_path, &upstream, false),
                        route("passthrough", forwarder, upstream_path, &upstream, false),
                        route("translated", Via::Proxy, client_path, &client, true),
                    ],
                });
            }
        }
    }
    Ok(out)
}

/// The kind of the Claude Code-like request's cases.
pub(super) const CLAUDE_CODE_KIND: &str = "request_claude_code";

/// The kind of a direction's request that is not streamed: the Codex turn,
/// or for Messages clients the Claude Code-like request.
fn plain_kind(direction: Direction) -> &'static str {
    match direction {
        Direction::MessagesToChat => CLAUDE_CODE_KIND,
        _ => "request_3k",
    }
}

/// The request the proxy of `direction` sends upstream for `client`, as
/// its translator writes it with default options.
fn upstream_request(direction: Direction, client: &[u8]) -> Result<Bytes, String> {
    match direction {
        Direction::ResponsesToChat => responses_to_chat(client),
        Direction::ChatToResponses => chat_to_responses(client),
        Direction::ResponsesToResponses => responses_completed(client),
        // The hub's two legs, as `wirebridge serve` composes them.
        Direction::MessagesToChat => responses_to_chat(&messages_to_responses(client)?),
    }
}

/// The Claude Code-like request, compact, `stream: false`, its thinking
/// blocks signed as the demo signs its own (the demo refuses a thinking
/// block it did not sign, as Anthropic does, and the `direct` route sends
/// it the request as it is).
pub(super) fn claude_code_request() -> Result<Bytes, String> {
    let text = std::fs::read_to_string(CLAUDE_CODE_REQUEST)
        .map_err(|e| format!("cannot read {CLAUDE_CODE_REQUEST}: {e}"))?;
    let mut request: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    request["stream"] = false.into();
    let messages = request["messages"].as_array_mut().into_iter().flatten();
    let blocks = messages
        .filter_map(|m| m["content"].as_array_mut())
        .flatten();
    for block in blocks.filter(|b| b["type"] == "thinking") {
        let thinking = block["thinking"].as_str().unwrap_or_default();
        block["signature"] = wirebridge_demo::thinking_signature(thinking).into();
    }
    Ok(to_bytes(&request))
}

/// A Responses request with some top-level fields set.
pub(super) fn responses_with(body: &[u8], fields: &[(&str, Value)]) -> Result<Bytes, String> {
    let mut request: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    for (key, value) in fields {
        request[*key] = value.clone();
    }
    Ok(to_bytes(&request))
}

pub(super) fn responses_to_chat(body: &[u8]) -> Result<Bytes, String> {
    r2c::translate_request(body, &r2c::Options::default())
        .map(|t| Bytes::from(t.body))
        .map_err(|e| format!("the benchmark's Responses request does not translate: {e}"))
}

/// The request the stateful engine sends a Responses upstream that keeps
/// no state, for a request that continues nothing.
fn responses_completed(body: &[u8]) -> Result<Bytes, String> {
    let parsed = r2c::ParsedRequest::parse(body)
        .map_err(|e| format!("the benchmark's Responses request does not parse: {e}"))?;
    r2r::translate_request(parsed, &r2c::History::default(), &r2c::Options::default())
        .map(|t| Bytes::from(t.body))
        .map_err(|e| format!("the benchmark's Responses request does not complete: {e}"))
}

fn messages_to_responses(body: &[u8]) -> Result<Bytes, String> {
    m2r::translate_request(body, &m2r::Options::default())
        .map(|t| Bytes::from(t.body))
        .map_err(|e| format!("the benchmark's Messages request does not translate: {e}"))
}

fn chat_to_responses(body: &[u8]) -> Result<Bytes, String> {
    c2r::translate_request(body, &c2r::Options::default())
        .map(|t| Bytes::from(t.body))
        .map_err(|e| format!("the benchmark's Chat request does not translate: {e}"))
}

pub(super) fn to_bytes(value: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(value).expect("values serialize"))
}

#[cfg(test)]
mod tests {
    use http_body_util::{BodyExt, Full};
    use wirebridge_demo::{handle, Api, DemoConfig};

    use super::*;

    fn overhead() -> Vec<Case> {
        let shared = cases::shared_dir().expect("the shared fixtures");
        overhead_cases(&shared).expect("the cases build")
    }

    fn route<'a>(case: &'a Case, name: &str) -> &'a Route {
        case.routes
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{} has no {name} route", case.name))
    }

    /// The demo's answer to a route's request, as the bench would send it
    /// to the demo's own endpoint for the path.
    async fn demo_answer(route: &Route) -> (http::StatusCode, Value) {
        let mut request = http::Request::post(route.path);
        for &(name, value) in route.headers {
            request = request.header(name, value);
        }
        let request = request.body(Full::new(route.body.clone())).unwrap();
        let response = handle(&DemoConfig::new().api(Api::All), request).await;
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    #[test]
    fn every_direction_and_kind_runs_at_1_8_and_32() {
        let names: Vec<String> = overhead().into_iter().map(|c| c.name).collect();
        for direction in [
            "responses_to_chat",
            "chat_to_responses",
            "responses_to_responses",
            "messages_to_chat",
        ] {
            let plain = match direction {
                "messages_to_chat" => CLAUDE_CODE_KIND,
                _ => "request_3k",
            };
            for kind in [plain, "stream_500"] {
                for c in ["c1", "c8", "c32"] {
                    let name = format!("{direction}/{kind}/{c}");
                    assert!(names.contains(&name), "{name} missing from {names:?}");
                }
            }
        }
        // The Responses clients' Claude Code turn besides.
        for c in ["c1", "c8", "c32"] {
            let name = format!("responses_to_chat/{CLAUDE_CODE_KIND}/{c}");
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        assert_eq!(names.len(), 4 * 2 * 3 + 3);
    }

    #[test]
    fn the_messages_client_sends_the_claude_code_request_and_its_upstream_a_chat_one() {
        let cases = overhead();
        let case = cases
            .iter()
            .find(|c| c.name == "messages_to_chat/request_claude_code/c8")
            .expect("the Messages case");
        let client: Value = serde_json::from_slice(&route(case, "translated").body).unwrap();
        assert_eq!(client["stream"], false);
        assert_eq!(client["tools"].as_array().map(Vec::len), Some(12));
        assert!(client["system"].is_array() && client["thinking"].is_object());
        for name in ["direct", "translated"] {
            assert_eq!(route(case, name).path, "/v1/messages");
            assert_eq!(route(case, name).headers, &[ANTHROPIC_VERSION]);
        }
        assert_eq!(route(case, "direct").body, route(case, "translated").body);
        // The routes that skip the translation send the Chat request it
        // becomes, through the Responses request in between.
        for name in ["upstream", "minimal", "passthrough"] {
            let r = route(case, name);
            assert_eq!(r.path, "/v1/chat/completions");
            assert!(r.headers.is_empty());
            let chat: Value = serde_json::from_slice(&r.body).unwrap();
            let messages = chat["messages"].as_array().expect("Chat messages");
            assert!(chat.get("input").is_none() && chat.get("system").is_none());
            assert_eq!(messages[0]["role"], "system");
            assert!(messages.iter().any(|m| m["role"] == "tool"));
            assert_eq!(chat["tools"][0]["type"], "function");
            assert_eq!(chat["tools"].as_array().map(Vec::len), Some(12));
        }
        let stream = cases
            .iter()
            .find(|c| c.name == "messages_to_chat/stream_500/c1")
            .expect("the Messages stream");
        assert!(stream.streaming);
        let upstream: Value = serde_json::from_slice(&route(stream, "upstream").body).unwrap();
        assert_eq!(upstream["stream"], true);
        assert_eq!(upstream["messages"][0]["role"], "user");
    }

    #[tokio::test]
    async fn the_two_ingresses_send_the_claude_code_turn_as_one_chat_request() {
        let cases = overhead();
        let of = |name: &str| cases.iter().find(|c| c.name == name).unwrap();
        let messages = of("messages_to_chat/request_claude_code/c1");
        let responses = of("responses_to_chat/request_claude_code/c1");
        assert_eq!(route(responses, "translated").path, "/v1/responses");
        let client: Value = serde_json::from_slice(&route(responses, "translated").body).unwrap();
        assert_eq!(client["tools"].as_array().map(Vec::len), Some(12));
        assert!(client["input"].is_array() && client["instructions"].is_string());
        for name in ["upstream", "minimal", "passthrough"] {
            assert_eq!(
                route(messages, name).body,
                route(responses, name).body,
                "{name}"
            );
        }
        for name in ["direct", "upstream"] {
            let (status, body) = demo_answer(route(responses, name)).await;
            assert_eq!(status, 200, "{name}: {body}");
        }
    }

    #[tokio::test]
    async fn the_demo_answers_the_messages_routes() {
        let cases = overhead();
        for kind in [CLAUDE_CODE_KIND, "stream_500"] {
            let name = format!("messages_to_chat/{kind}/c1");
            let case = cases.iter().find(|c| c.name == name).unwrap();
            // The demo checks the thinking blocks' signatures: the direct
            // route is refused unless they are the demo's own.
            for name in ["direct", "upstream"] {
                let (status, body) = demo_answer(route(case, name)).await;
                assert_eq!(status, 200, "{} {name}: {body}", case.name);
            }
        }
        let case = cases
            .iter()
            .find(|c| c.name == "messages_to_chat/request_claude_code/c1")
            .unwrap();
        let (_, body) = demo_answer(route(case, "direct")).await;
        assert_eq!(body["type"], "message", "{body}");
        let mut unsigned = route(case, "direct").clone();
        let text = String::from_utf8(unsigned.body.to_vec()).unwrap();
        let signature = text.split("\"signature\":\"").nth(1).unwrap();
        let signature = &signature[..signature.find('"').unwrap()];
        unsigned.body = Bytes::from(text.replace(signature, "bm90IHRoZSBkZW1vJ3M="));
        assert_eq!(demo_answer(&unsigned).await.0, 400);
    }
}
