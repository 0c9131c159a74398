//! What the stateful targets share: a Responses client's layer over a Chat
//! backend, with a memory store the target watches, called in process.
//!
//! The backend answers every turn with one short message and every
//! credential check with a model list, and keeps the Chat bodies it was
//! sent; the store ([`WatchedStore`]) keeps a log of what it was asked
//! and what it handed out, so that a target can check a request against
//! what the store really held.

use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use http::{header, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use tower::util::BoxCloneService;
use tower::{service_fn, Layer, ServiceExt};
use wirebridge_tower::store::{
    BoxFuture, Chain, ConversationStore, MemoryStore, ResponseStore, StoreError, StoredResponse,
    StoredTurn,
};
use wirebridge_tower::{RequestBody, ResponseBody, ResponsesToChatLayer};

/// The two credentials the targets call with: two tenants.
pub const KEYS: [&str; 2] = ["sk-one", "sk-two"];

/// What the store was asked and handed out since the log was last cleared
/// (its saves are kept for good).
#[derive(Debug, Default)]
pub struct StoreLog {
    /// Every response saved: the tenant's key, and its turn.
    pub saves: Vec<(String, StoredTurn)>,
    /// Calls of `chain`.
    pub chains: usize,
    /// Calls of `turns`.
    pub turn_reads: usize,
    /// Calls of `get`.
    pub gets: usize,
    /// The turns `chain` handed out, oldest first, with the tenant asking.
    pub chain: Vec<(String, StoredTurn)>,
    /// The turns `turns` handed out, in the order asked, with the tenant.
    pub referable: Vec<(String, StoredTurn)>,
}

impl StoreLog {
    /// Forgets what was asked, not what was saved.
    pub fn clear_reads(&mut self) {
        self.chains = 0;
        self.turn_reads = 0;
        self.gets = 0;
        self.chain.clear();
        self.referable.clear();
    }
}

/// A memory store that logs what it is asked.
#[derive(Debug)]
pub struct WatchedStore {
    inner: MemoryStore,
    log: Arc<Mutex<StoreLog>>,
}

impl WatchedStore {
    fn log(&self) -> std::sync::MutexGuard<'_, StoreLog> {
        self.log.lock().expect("the log is never poisoned")
    }
}

impl ResponseStore for WatchedStore {
    fn save<'a>(
        &'a self,
        tenant: &'a str,
        response: StoredResponse,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let turn = response.turn();
            self.inner.save(tenant, response).await?;
            self.log().saves.push((tenant.to_owned(), turn));
            Ok(())
        })
    }

    fn get<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredResponse>, StoreError>> {
        self.log().gets += 1;
        self.inner.get(tenant, id)
    }

    fn delete<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<bool, StoreError>> {
        self.inner.delete(tenant, id)
    }

    fn chain<'a>(
        &'a self,
        tenant: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<Chain>, StoreError>> {
        Box::pin(async move {
            let chain = self.inner.chain(tenant, id).await?;
            let mut log = self.log();
            log.chains += 1;
            for turn in chain.iter().flat_map(|c| &c.turns) {
                log.chain.push((tenant.to_owned(), turn.clone()));
            }
            Ok(chain)
        })
    }

    fn turns<'a>(
        &'a self,
        tenant: &'a str,
        ids: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<Option<StoredTurn>>, StoreError>> {
        Box::pin(async move {
            let turns = self.inner.turns(tenant, ids).await?;
            let mut log = self.log();
            log.turn_reads += 1;
            for turn in turns.iter().flatten() {
                log.referable.push((tenant.to_owned(), turn.clone()));
            }
            Ok(turns)
        })
    }

    fn conversations(&self) -> Option<&dyn ConversationStore> {
        self.inner.conversations()
    }
}

/// An answer the layer gave: its status, body, and the body as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The status.
    pub status: StatusCode,
    /// The whole body.
    pub body: Bytes,
    /// The body read as JSON, when it is.
    pub json: Option<Value>,
}

impl Answer {
    /// The error's `param` and `code`, when this is an error.
    pub fn error(&self) -> (Option<&str>, Option<&str>) {
        let error = self.json.as_ref().map(|j| &j["error"]);
        (
            error.and_then(|e| e["param"].as_str()),
            error.and_then(|e| e["code"].as_str()),
        )
    }

    /// Checks what every answer holds: no 5xx, and an error (any status
    /// from 400) in the OpenAI shape, a JSON object whose `error` has a
    /// message and a type.
    pub fn check_shape(&self, what: &str) {
        let text = String::from_utf8_lossy(&self.body);
        assert!(
            !self.status.is_server_error(),
            "{what}: {} {text}",
            self.status
        );
        if self.status.is_client_error() {
            let error = self
                .json
                .as_ref()
                .map(|j| &j["error"])
                .unwrap_or_else(|| panic!("{what}: an error that is no JSON: {text}"));
            assert!(error["message"].is_string(), "{what}: {text}");
            assert!(error["type"].is_string(), "{what}: {text}");
        }
    }
}

type Service =
    BoxCloneService<Request<Full<Bytes>>, Response<ResponseBody<Full<Bytes>>>, Infallible>;

/// The layer with its watched store and its backend.
pub struct Harness {
    service: Service,
    /// What the store was asked.
    pub log: Arc<Mutex<StoreLog>>,
    /// The Chat bodies the backend was sent.
    pub sent: Arc<Mutex<Vec<Bytes>>>,
}

impl Harness {
    /// A layer that lets a request take in at most `max_resolved` bytes
    /// from the store.
    pub fn new(max_resolved: usize) -> Self {
        let log = Arc::new(Mutex::new(StoreLog::default()));
        let sent: Arc<Mutex<Vec<Bytes>>> = Arc::default();
        let store = WatchedStore {
            inner: MemoryStore::new(),
            log: Arc::clone(&log),
        };
        let backend_sent = Arc::clone(&sent);
        let backend = service_fn(move |request: Request<RequestBody<Full<Bytes>>>| {
            let sent = Arc::clone(&backend_sent);
            async move {
                let models = request.uri().path().ends_with("/models");
                let body = request
                    .into_body()
                    .collect()
                    .await
                    .map(|b| b.to_bytes())
                    .unwrap_or_default();
                let reply = if models {
                    r#"{"object":"list","data":[{"id":"m","object":"model","created":1,"owned_by":"o"}]}"#
                } else {
                    sent.lock().expect("never poisoned").push(body);
                    r#"{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}"#
                };
                let mut response = Response::new(Full::new(Bytes::from_static(reply.as_bytes())));
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    header::HeaderValue::from_static("application/json"),
                );
                Ok::<_, Infallible>(response)
            }
        });
        let service = ResponsesToChatLayer::new()
            .store(store)
            .max_resolved_input(max_resolved)
            .layer(backend);
        Self {
            service: BoxCloneService::new(service),
            log,
            sent,
        }
    }

    /// Calls the layer as tenant `key` (an index into [`KEYS`]).
    pub fn call(&self, method: &str, path: &str, key: usize, body: Option<Vec<u8>>) -> Answer {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {}", KEYS[key % 2]));
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .expect("a valid request");
        runtime().block_on(async {
            let response = self
                .service
                .clone()
                .oneshot(request)
                .await
                .expect("the layer answers");
            let (head, body) = response.into_parts();
            let body = body
                .collect()
                .await
                .expect("the body ends without an error")
                .to_bytes();
            let json = serde_json::from_slice(&body).ok();
            Answer {
                status: head.status,
                body,
                json,
            }
        })
    }

    /// Clears what the store was asked and the bodies the backend got.
    pub fn clear(&self) {
        self.log.lock().expect("never poisoned").clear_reads();
        self.sent.lock().expect("never poisoned").clear();
    }
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime")
    })
}

/// Reads an input a byte at a time; past its end, zeros.
#[derive(Debug)]
pub struct ByteReader<'a>(pub &'a [u8]);

impl ByteReader<'_> {
    /// The next byte, if any is left.
    pub fn take(&mut self) -> Option<u8> {
        let (first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*first)
    }

    /// The next byte, or 0.
    pub fn byte(&mut self) -> u8 {
        self.take().unwrap_or(0)
    }

    /// The next `n` bytes (fewer at the end) as text.
    pub fn text(&mut self, n: usize) -> String {
        let n = n.min(self.0.len());
        let (text, rest) = self.0.split_at(n);
        self.0 = rest;
        String::from_utf8_lossy(text).into_owned()
    }
}
