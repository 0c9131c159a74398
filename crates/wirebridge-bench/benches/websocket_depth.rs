//! What one turn costs on one WebSocket connection (Responses WebSocket
//! mode) as a Codex-style conversation grows: at depths 1, 100, 1,000 and
//! 10,000, through the bridge's stateful layer (`ResponsesToChatLayer` with
//! a `MemoryStore`, as `wirebridge serve` builds it) over a Chat backend.
//!
//! The layer is served by hyper on loopback with upgrades, and driven by a
//! tokio-tungstenite client, as the WebSocket tests do; the backend is a
//! `service_fn` that reads the whole Chat request and answers a tiny Chat
//! stream (one short answer). Each turn is a `response.create` with
//! `store: false`, the `previous_response_id` of the last turn's response
//! and one small user message: the connection's cache alone carries the
//! history, and the Chat backend, which keeps nothing, is sent all of it
//! (the cost of copying the bytes, expected).
//!
//! For each depth `d`, on the same connection, in increasing order:
//! - a conversation is driven to depth `d - 1`, untimed, each turn a real
//!   one (through the backend) that must end `response.completed`;
//! - a probe turn at depth `d` is checked: the backend got every earlier
//!   user message in order, and the Chat messages and request bytes it got
//!   are printed before the timings;
//! - `turn`: the time from sending a `response.create` to reading its
//!   `response.completed`, each timed turn continuing the same response at
//!   depth `d - 1` (branching, as store_depth's saves do), so that every
//!   one is a turn at depth `d`; each is checked to have sent the backend a
//!   body of the probe's size (the whole history).
//!
//! Each depth has a conversation of its own, on the same connection: the
//! cache keeps every timed turn's response too (thousands at the shallow
//! depths), in the conversation it branches from, and a full cache evicts
//! the first turns of its least recently saved conversation first. In one
//! chain shared by every depth, the branches would push its first turns out
//! of the default bounds (16,384 responses, 16 MiB); with a conversation
//! per depth, the finished ones go first. After the timings, a probe checks
//! the conversation is still whole; at depth 10,000 one more turn continues
//! it, and the backend must get all 10,000 earlier user messages. The
//! process's resident memory is printed once the deepest conversation is
//! built and at the end.
//!
//! Driving a conversation costs the sum of its turns, each translating and
//! sending the whole history: it grows with the square of the depth. On a
//! shared 2-core VM, the 9,999 untimed turns before depth 10,000 took 383 s
//! and 453 s in two runs (the last 2,500 of them 172 s and 204 s, 70 to
//! 80 ms each; the times are printed every 2,500 turns), and the whole run
//! 7 to 8 minutes: most of it, and the price of proving the conversation
//! with real turns.
//!
//! `cargo bench -p wirebridge-bench --bench websocket_depth`

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tower::Layer;
use wirebridge_store::MemoryStore;
use wirebridge_tower::{RequestBody, ResponsesToChatLayer};

/// The depths measured.
const DEPTHS: [usize; 4] = [1, 100, 1_000, 10_000];

/// Longer than any turn should take: past it, the turn is reported as
/// hung rather than timed.
const TURN_TIMEOUT: Duration = Duration::from_secs(60);

const MODEL: &str = "gpt-5.4";

/// What Codex sends with every turn, shortened.
const INSTRUCTIONS: &str = "You are a coding agent working in the user's repository.";

/// The backend's answer to every turn: one short message, streamed.
const REPLY: &str = concat!(
    r#"data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-5.4","choices":[{"index":0,"delta":{"role":"assistant","content":"All 214 tests pass; nothing changed since the last run."},"finish_reason":null}]}"#,
    "\n\n",
    r#"data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-5.4","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":1200,"completion_tokens":14,"total_tokens":1214}}"#,
    "\n\n",
    "data: [DONE]\n\n",
);

type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What the backend got.
#[derive(Default)]
struct Backend {
    /// Requests it answered.
    calls: AtomicUsize,
    /// The body of the last one (kept whole, parsed only by the probes, so
    /// that timed turns pay nothing for it).
    last: Mutex<Bytes>,
}

impl Backend {
    fn last(&self) -> Bytes {
        self.last.lock().expect("not poisoned").clone()
    }
}

/// The layer over the backend, served on a loopback port; its `ws://` URL.
async fn serve(backend: Arc<Backend>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("its address");
    let chat = tower::service_fn(move |request: Request<RequestBody<Incoming>>| {
        let backend = Arc::clone(&backend);
        async move {
            // A backend reads the whole request before it answers.
            let body = request
                .into_body()
                .collect()
                .await
                .expect("the Chat request's body")
                .to_bytes();
            *backend.last.lock().expect("not poisoned") = body;
            backend.calls.fetch_add(1, Ordering::SeqCst);
            let mut response = Response::new(Full::new(Bytes::from_static(REPLY.as_bytes())));
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/event-stream"),
            );
            Ok::<_, Infallible>(response)
        }
    });
    let service = ResponsesToChatLayer::new()
        .store(MemoryStore::new())
        .layer(chat);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            // Each event leaves at once, as the CLI's listener sends it.
            tcp.set_nodelay(true).expect("TCP_NODELAY");
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), service)
                    .with_upgrades()
                    .await;
            });
        }
    });
    format!("ws://{address}/v1/responses")
}

async fn connect(url: &str) -> Client {
    let mut request = url.into_client_request().expect("a WebSocket URL");
    request.headers_mut().insert(
        http::header::AUTHORIZATION,
        http::HeaderValue::from_static("Bearer sk-bench"),
    );
    tokio_tungstenite::connect_async_with_config(request, None, true)
        .await
        .expect("the upgrade")
        .0
}

/// The user's message at turn `n` (from 1).
fn user_text(n: usize) -> String {
    format!("Turn {n}: run the tests again and tell me what changed.")
}

/// The `response.create` of turn `n`, continuing `previous`.
fn create(n: usize, previous: Option<&str>) -> Message {
    let mut event = json!({
        "type": "response.create",
        "model": MODEL,
        "instructions": INSTRUCTIONS,
        "store": false,
        "input": [{"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": user_text(n)}]}],
    });
    if let Some(previous) = previous {
        event["previous_response_id"] = json!(previous);
    }
    Message::Text(event.to_string().into())
}

/// Sends one turn and reads its events up to `response.completed`; the id
/// of its response. Any other end (an error event, a failed or incomplete
/// response, a closed connection, a hang) stops the bench, saying where.
async fn turn(client: &mut Client, message: Message, depth: usize) -> String {
    client.send(message).await.expect("the message is sent");
    loop {
        let message = tokio::time::timeout(TURN_TIMEOUT, client.next())
            .await
            .unwrap_or_else(|_| panic!("depth {depth}: no event within {TURN_TIMEOUT:?}"))
            .unwrap_or_else(|| panic!("depth {depth}: the connection closed"))
            .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
        let text = match message {
            Message::Text(text) => text,
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("depth {depth}: unexpected {other:?}"),
        };
        let event: Value = serde_json::from_str(text.as_str()).expect("an event");
        match event["type"].as_str() {
            Some("response.completed") => {
                return event["response"]["id"]
                    .as_str()
                    .expect("a response id")
                    .to_owned();
            }
            Some("response.incomplete" | "response.failed" | "error") => {
                panic!("depth {depth}: the turn ended with {event}")
            }
            _ => {}
        }
    }
}

/// Drives a new conversation `turns` deep; the id of its last response.
async fn build(client: &mut Client, turns: usize) -> Option<String> {
    let started = Instant::now();
    let mut lap = started;
    let mut previous = None;
    for n in 1..=turns {
        previous = Some(turn(client, create(n, previous.as_deref()), n).await);
        if n % 2_500 == 0 {
            println!(
                "websocket_depth bench: turns {}..={n} took {:.1} s",
                n - 2_499,
                lap.elapsed().as_secs_f64()
            );
            lap = Instant::now();
        }
    }
    if turns > 0 {
        println!(
            "websocket_depth bench: driving a conversation to depth {turns} took {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    previous
}

/// What the backend got for one turn.
struct Received {
    bytes: usize,
    messages: usize,
    /// The texts of its user messages, in order.
    users: Vec<String>,
}

impl Received {
    fn read(body: &[u8]) -> Self {
        let chat: Value = serde_json::from_slice(body).expect("a Chat request");
        let messages = chat["messages"].as_array().expect("messages");
        let users = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| match &m["content"] {
                Value::String(text) => text.clone(),
                // Content parts: their texts, joined.
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<String>(),
                other => panic!("user content {other}"),
            })
            .collect();
        Self {
            bytes: body.len(),
            messages: messages.len(),
            users,
        }
    }

    /// The user messages of turns 1 to `turns`, in order, all there.
    fn assert_users(&self, turns: usize) {
        assert_eq!(self.users.len(), turns, "user messages at depth {turns}");
        for (n, text) in (1..=turns).zip(&self.users) {
            assert_eq!(*text, user_text(n), "the user message of turn {n}");
        }
    }
}

/// The process's resident memory, and its peak, from `/proc` (Linux).
fn resident() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(|kb| kb.trim().to_owned())
    };
    match (field("VmRSS:"), field("VmHWM:")) {
        (Some(rss), Some(peak)) => format!("{rss} resident ({peak} at the peak)"),
        _ => "unknown (no /proc/self/status)".to_owned(),
    }
}

/// The connection, and what its turns reached.
struct Session {
    runtime: Runtime,
    client: Client,
    backend: Arc<Backend>,
}

impl Session {
    fn start() -> Self {
        // Both cores, as `wirebridge serve` runs: the client on the bench's
        // thread, the server's tasks on the runtime's workers.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a Tokio runtime");
        let backend = Arc::new(Backend::default());
        let client = runtime.block_on(async {
            let url = serve(Arc::clone(&backend)).await;
            connect(&url).await
        });
        Self {
            runtime,
            client,
            backend,
        }
    }

    /// One turn at `depth` continuing `parent`, untimed; its response's id
    /// and what the backend got for it, checked whole.
    fn probe(&mut self, depth: usize, parent: Option<&str>) -> (String, Received) {
        let id = self
            .runtime
            .block_on(turn(&mut self.client, create(depth, parent), depth));
        let received = Received::read(&self.backend.last());
        received.assert_users(depth);
        (id, received)
    }

    fn run(&mut self, c: &mut Criterion, depth: usize) {
        let parent = self.runtime.block_on(build(&mut self.client, depth - 1));
        if depth == DEPTHS[DEPTHS.len() - 1] {
            println!(
                "websocket_depth bench: after driving depth {}: {}",
                depth - 1,
                resident()
            );
        }
        let (_, probe) = self.probe(depth, parent.as_deref());
        let message = create(depth, parent.as_deref());
        let name = format!("websocket_depth/depth_{depth}");
        println!(
            "{name}: a {} B response.create; the backend gets {} Chat messages ({} from the user), \
             {} B of request body",
            message.len(),
            probe.messages,
            probe.users.len(),
            probe.bytes
        );

        let mut timed = 0u64;
        let mut group = c.benchmark_group(&name);
        // Few, short samples: a turn at depth 10,000 takes tens of
        // milliseconds, and each timed turn leaves a response in the cache.
        group
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        group.bench_function("turn", |b| {
            b.iter_custom(|iters| {
                let calls = self.backend.calls.load(Ordering::SeqCst);
                let took = self.runtime.block_on(async {
                    let started = Instant::now();
                    for _ in 0..iters {
                        turn(&mut self.client, message.clone(), depth).await;
                    }
                    started.elapsed()
                });
                // Untimed: each turn reached the backend with the whole
                // history (the same user messages give the same bytes).
                let reached = self.backend.calls.load(Ordering::SeqCst) - calls;
                assert_eq!(reached as u64, iters, "backend calls at depth {depth}");
                assert_eq!(self.backend.last().len(), probe.bytes, "depth {depth}");
                timed += iters;
                took
            });
        });
        group.finish();

        // The timed turns' responses evicted nothing of the conversation.
        let (id, again) = self.probe(depth, parent.as_deref());
        assert_eq!(again.bytes, probe.bytes, "depth {depth} after the timings");
        println!("{name}: {timed} timed turns, and the conversation is still whole");
        if depth == DEPTHS[DEPTHS.len() - 1] {
            // And it goes on: the next turn carries all of it.
            let (_, next) = self.probe(depth + 1, Some(&id));
            println!(
                "websocket_depth bench: turn {} got the backend all {depth} earlier user messages \
                 ({} Chat messages, {} B); {}",
                depth + 1,
                next.messages,
                next.bytes,
                resident()
            );
        }
    }
}

fn websocket_depth(c: &mut Criterion) {
    let mut session = Session::start();
    println!(
        "websocket_depth bench: the backend answers each turn with a {} B Chat stream",
        REPLY.len()
    );
    for depth in DEPTHS {
        session.run(c, depth);
    }
}

criterion_group!(benches, websocket_depth);
criterion_main!(benches);
