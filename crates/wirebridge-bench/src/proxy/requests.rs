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
    chat_to_responses as c2r, responses_to_chat as r2c, responses_to_responses as r2r,
};

/// Words in the user message of the streaming case: the demo streams one
/// word per chunk, so the reply has about this many chunks.
const STREAM_WORDS: usize = 490;

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
}

impl Direction {
    pub(super) const ALL: [Direction; 3] = [
        Direction::ResponsesToChat,
        Direction::ChatToResponses,
        Direction::ResponsesToResponses,
    ];

    /// The name in case names, as the translation cases name it.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Direction::ResponsesToChat => "responses_to_chat",
            Direction::ChatToResponses => "chat_to_responses",
            Direction::ResponsesToResponses => "responses_to_responses",
        }
    }

    /// The `--upstream-api` of the proxy that translates this way.
    pub(super) fn upstream_api(self) -> &'static str {
        match self {
            Direction::ResponsesToChat => "chat",
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
            Direction::ResponsesToChat | Direction::ResponsesToResponses => None,
        }
    }

    /// Whether LiteLLM and other gateways are measured beside it: not for
    /// the stateful engine, which they do not have.
    pub(super) fn has_peers(self) -> bool {
        self != Direction::ResponsesToResponses
    }

    fn client_path(self) -> &'static str {
        match self {
            Direction::ResponsesToChat | Direction::ResponsesToResponses => "/v1/responses",
            Direction::ChatToResponses => "/v1/chat/completions",
        }
    }

    fn upstream_path(self) -> &'static str {
        match self {
            Direction::ResponsesToChat => "/v1/chat/completions",
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
/// the same request through a proxy that forwards it.
pub(super) fn overhead_cases(shared: &Path) -> Result<Vec<Case>, String> {
    let turn = responses_with(&cases::codex_turn(shared)?, &[("stream", false.into())])?;
    let prose = cases::codex_prose(shared)?;
    let words: Vec<&str> = prose.split_whitespace().take(STREAM_WORDS).collect();
    let text = words.join(" ");
    let mut out = Vec::new();
    for direction in Direction::ALL {
        let (plain, streaming) = match direction {
            Direction::ResponsesToChat => (
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
            Direction::ResponsesToResponses => (
                turn.clone(),
                to_bytes(&json!({
                    "model": "wirebridge-demo",
                    "stream": true,
                    "input": [{"role": "user", "content": [{"type": "input_text", "text": text}]}],
                })),
            ),
        };
        for (kind, streaming, client) in [
            ("request_3k", false, plain),
            ("stream_500", true, streaming),
        ] {
            let upstream = match direction {
                Direction::ResponsesToChat => responses_to_chat(&client)?,
                Direction::ChatToResponses => chat_to_responses(&client)?,
                Direction::ResponsesToResponses => responses_completed(&client)?,
            };
            let forwarder = match direction {
                Direction::ResponsesToResponses => Via::Forwarding,
                _ => Via::Proxy,
            };
            for concurrency in [1, 32] {
                let route = |name, via, path, body: &Bytes| Route {
                    name,
                    via,
                    path,
                    body: body.clone(),
                    credential: false,
                };
                out.push(Case {
                    name: format!("{}/{kind}/c{concurrency}", direction.as_str()),
                    direction,
                    streaming,
                    concurrency,
                    request_bytes: client.len(),
                    routes: vec![
                        route("direct", Via::Demo, direction.client_path(), &client),
                        route("upstream", Via::Demo, direction.upstream_path(), &upstream),
                        route(
                            "minimal",
                            Via::Minimal,
                            direction.upstream_path(),
                            &upstream,
                        ),
                        route(
                            "passthrough",
                            forwarder,
                            direction.upstream_path(),
                            &upstream,
                        ),
                        route("translated", Via::Proxy, direction.client_path(), &client),
                    ],
                });
            }
        }
    }
    Ok(out)
}

/// The routes of `--store`: Responses requests of growing size, at
/// concurrency 1, sent with a credential through the proxy as `store:
/// false` (`translated`) and as `store: true` (`stored`: the turn and the
/// response are kept in the proxy's memory store), beside the upstream
/// request passed through (`passthrough`).
pub(super) fn store_cases(shared: &Path) -> Result<Vec<Case>, String> {
    let direction = Direction::ResponsesToChat;
    let sizes = [
        ("request_3k", cases::codex_turn(shared)?),
        ("request_50k", cases::codex_conversation(shared, 49_000)?),
        ("request_500k", cases::codex_conversation(shared, 500_000)?),
    ];
    let mut out = Vec::new();
    for (kind, body) in sizes {
        let unstored = responses_with(&body, &[("stream", false.into()), ("store", false.into())])?;
        let stored = responses_with(&body, &[("stream", false.into()), ("store", true.into())])?;
        let upstream = responses_to_chat(&unstored)?;
        let route = |name, via, path, body: &Bytes| Route {
            name,
            via,
            path,
            body: body.clone(),
            credential: true,
        };
        out.push(Case {
            name: format!("{}/{kind}/c1", direction.as_str()),
            direction,
            streaming: false,
            concurrency: 1,
            request_bytes: stored.len(),
            routes: vec![
                route(
                    "minimal",
                    Via::Minimal,
                    direction.upstream_path(),
                    &upstream,
                ),
                route(
                    "passthrough",
                    Via::Proxy,
                    direction.upstream_path(),
                    &upstream,
                ),
                route("translated", Via::Proxy, direction.client_path(), &unstored),
                route("stored", Via::Proxy, direction.client_path(), &stored),
            ],
        });
    }
    Ok(out)
}

/// A Responses request with some top-level fields set.
fn responses_with(body: &[u8], fields: &[(&str, Value)]) -> Result<Bytes, String> {
    let mut request: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    for (key, value) in fields {
        request[*key] = value.clone();
    }
    Ok(to_bytes(&request))
}

fn responses_to_chat(body: &[u8]) -> Result<Bytes, String> {
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

fn chat_to_responses(body: &[u8]) -> Result<Bytes, String> {
    c2r::translate_request(body, &c2r::Options::default())
        .map(|t| Bytes::from(t.body))
        .map_err(|e| format!("the benchmark's Chat request does not translate: {e}"))
}

fn to_bytes(value: &Value) -> Bytes {
    Bytes::from(serde_json::to_vec(value).expect("values serialize"))
}
