//! Every setting of `wirebridge serve`, declared once: its file key, type,
//! default and help text. From the key come its flag (`upstream_api`:
//! `--upstream-api`) and environment variable (`WIREBRIDGE_UPSTREAM_API`).
//! A default that another crate also keeps is written out here; a test
//! checks that the two agree.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use wirebridge_convert::profile::ReasoningOutput;
use wirebridge_convert::seal::SealKey;
use wirebridge_convert::{BackendProfile, LossPolicy};

use super::declare::settings;
use super::types::{Count, LoadFactor};
use super::upstream::Label;
use super::{models, LogFormat, MissingHistorySetting, Upstream, UpstreamApi};

settings! {
    /// Address to listen on.
    listen: SocketAddr = "127.0.0.1:8787";
    /// Upstream base URL including its API path (`http://localhost:8000/v1`),
    /// or `demo` for the built-in demo upstream. Several URLs (the flag
    /// repeated, comma-separated, an array in the file) are replicas of one
    /// backend: each conversation is kept on one of them.
    upstream: Upstream = "demo";
    /// Resolve each upstream URL's host name again this often, each address
    /// it resolves to a replica (a Kubernetes headless service); the `Host`
    /// header and TLS server name stay the name.
    upstream_resolve_every: Option<Duration> = "none: one upstream per URL";
    /// The API the upstream speaks.
    upstream_api: UpstreamApi = "chat";
    /// Send the upstream `Authorization: Bearer $VAR` instead of the
    /// client's own authorization header.
    upstream_api_key_env: Option<String> as "VAR" = "none: the client's";
    /// How error bodies sent to clients name the upstream, instead of its
    /// address.
    upstream_label: Label = "the upstream";
    /// CA certificates (PEM) an https:// upstream's certificate may also be
    /// signed by, besides the public roots: a private CA's.
    upstream_ca_file: Option<PathBuf> = "the public roots only";
    /// Client certificate chain (PEM) for an https:// upstream that asks
    /// for one; with --upstream-client-key-file.
    upstream_client_cert_file: Option<PathBuf> = "none";
    /// The upstream client certificate's private key (PEM).
    upstream_client_key_file: Option<PathBuf> = "none";
    /// How long connecting to the upstream may take.
    upstream_connect_timeout: Duration = "10s";
    // 1.25 is where bounded-load hashing keeps most keys on their first
    // choice while no replica runs far above the others.
    /// With several upstream URLs: a replica with more requests in flight
    /// than this times the mean, plus one, is passed over for the next in
    /// the conversation's order.
    replica_load_factor: LoadFactor as "FACTOR" = "1.25";
    // A move makes the new replica evaluate the whole conversation again:
    // on a prefix-cached backend that costs about as much as two or three
    // turns waiting for a slot.
    /// With several upstream URLs: how many requests in flight past that
    /// bound a conversation's own replica may hold before the conversation
    /// moves (new conversations are placed within the bound).
    replica_move_slack: Count<0, 1000> as "N" = "2";
    /// With several upstream URLs: consecutive connect failures or 5xx
    /// answers that eject a replica (never more than half of them at once).
    replica_eject_after: Count<1, 1000> as "N" = "3";
    /// With several upstream URLs: how long an ejected replica is left out
    /// before it is tried again.
    replica_backoff: Duration = "10s";
    /// With several upstream URLs: send each replica `GET {prefix}/models`
    /// this often; failed probes eject it as failed requests do, and an
    /// ejected replica that answers is in again at once.
    replica_probe_every: Option<Duration> = "none: health from answers only";
    // For a request without `stream`, that is the whole generation: a slow
    // local model on a long prompt takes minutes.
    /// How long the upstream may take to send its response head; for a
    /// request without `stream` that is the whole answer.
    upstream_first_byte_timeout: Duration = "10m";
    // Room for a long prefill before the first token, on backends that send
    // no keep-alive meanwhile.
    /// Fail a stream whose upstream sends no event (a body: no byte) for
    /// this long.
    upstream_idle_timeout: Duration = "5m";
    // Under the 30-60 s idle timeouts of common load balancers and proxies.
    /// Send `: keepalive` on a translated stream quiet for this long.
    keepalive_interval: Duration = "15s";
    /// Largest non-streaming upstream reply, in bytes.
    max_reply_size: Count<1, { usize::MAX }> as "BYTES" = "67108864";
    /// Accept WebSocket upgrades of `GET /v1/responses` (Responses WebSocket
    /// mode); when refused, clients fall back to HTTP.
    websocket: bool = "true";
    /// Close a WebSocket connection with no turn running and nothing from
    /// the client for this long.
    websocket_idle_timeout: Duration = "10m";
    /// WebSocket connections one credential may hold open at once; one
    /// more handshake is refused with a 429.
    websocket_max_per_tenant: Count<1, { 1 << 20 }> as "N" = "32";
    /// Bytes every WebSocket connection's cached responses and waiting
    /// requests may hold together, whatever the credentials; a request past
    /// it, once its connection's own oldest cached responses are evicted,
    /// gets a 503 `error` event and the connection stays open.
    websocket_max_memory: Count<1, { usize::MAX }> as "BYTES" = "536870912";
    /// Close a WebSocket connection this long after it opened (once no
    /// turn runs); the client opens a new one.
    websocket_max_age: Duration = "60m";
    /// Backend profile: openai, anthropic, vllm, llama-cpp, ollama,
    /// deepseek, openrouter, generic, or one defined in the config file.
    profile: String as "NAME" = "generic";
    /// Response store for `store`, `previous_response_id` and
    /// `GET /v1/responses/{id}`: memory, none, or a Redis URL:
    /// redis://[USER:PASSWORD@]HOST:PORT/DB, rediss://… (TLS),
    /// redis+cluster://HOST:PORT,HOST:PORT (rediss+cluster:// for TLS).
    store: String as "STORE" = "memory";
    /// CA certificates (PEM) that signed the Redis server's, for rediss://.
    store_ca_file: Option<PathBuf> = "the system's";
    /// Client certificate chain (PEM) for a rediss:// server that asks for
    /// one; with --store-client-key-file.
    store_client_cert_file: Option<PathBuf> = "none";
    /// The client certificate's private key (PEM).
    store_client_key_file: Option<PathBuf> = "none";
    /// How long Redis may take to connect, to answer, and to finish a store
    /// operation before the request gets a 503.
    store_timeout: Duration = "2s";
    /// Bytes of stored turns a Redis store keeps in this process, so that
    /// continuing a conversation has Redis send only what is new (0: none,
    /// the whole history every turn).
    store_kept_turns_bytes: Count<0, { usize::MAX }> as "BYTES" = "67108864";
    /// Responses the memory store keeps for one tenant.
    store_tenant_max_entries: Count<1, { usize::MAX }> = "25000";
    /// Bytes of responses the memory store keeps for one tenant.
    store_tenant_max_bytes: Count<1, { usize::MAX }> as "BYTES" = "67108864";
    /// Tenants the memory store keeps responses for; a new one beyond them
    /// evicts the tenant that saved least recently, with its responses.
    store_max_tenants: Count<1, { usize::MAX }> = "1000";
    /// Keep the responses of requests without credentials, in one tenant
    /// all of them share.
    anonymous_store: bool = "false";
    /// Count every credential as one the backend accepts (for deployments
    /// that authenticate in front of the bridge): conversations are then
    /// kept without asking the backend whether it accepts the credential.
    trust_credentials: bool = "false";
    /// Background responses (`background: true`) run at once; one more is
    /// a 429.
    max_background_runs: Count<1, { usize::MAX }> = "256";
    /// Background responses one credential may run at once; one more is a
    /// 429.
    max_background_runs_per_tenant: Count<1, { usize::MAX }> = "32";
    /// How long a background response's lease in a shared store (Redis)
    /// lasts unrenewed: once it has expired, its process gone without a
    /// word, the response reads `failed`.
    background_lease: Duration = "30s";
    /// Bytes of stored turns kept in their Chat form, so that continuing a
    /// conversation over a Chat backend translates only what is new (0:
    /// none, every turn translated whole).
    translated_history_bytes: Count<0, { usize::MAX }> as "BYTES" = "67108864";
    /// A conversation continued with `previous_response_id` that misses an
    /// earlier response: refuse (404) or continue (reported).
    missing_history: MissingHistorySetting = "refuse";
    /// Largest request body, in bytes.
    max_body: usize as "BYTES" = "33554432";
    // A stateless client sends its whole conversation in one body: twice
    // that fits any conversation it could have sent, and bounds what a few
    // KB of repeated `item_reference`s can make the bridge build and send.
    /// Most bytes of stored items one request may take in (the history
    /// previous_response_id or conversation brings, and the items its
    /// item_reference items name, each time named); past it, a 400.
    max_resolved_input: Option<Count<1, { usize::MAX }>> as "BYTES" = "twice max_body";
    // A head is a few hundred bytes to a few KB and leaves a client in one
    // write; 10 s is generous on a bad link and bounds what a slowloris
    // connection costs.
    /// Close a connection that has not sent a complete request head within
    /// this (10s, 500ms, 2m).
    header_read_timeout: Duration = "10s";
    // Longer than the 60 s idle timeout common in load balancers, so that
    // the balancer, not the bridge, closes a pooled connection (a bridge
    // closing first races the balancer's next request on it).
    /// Close a connection with no request in flight and no bytes arriving
    /// after this.
    idle_timeout: Duration = "75s";
    // Room for a few MB of conversation history on a slow link.
    /// Answer 408 to a request whose body has not arrived within this of
    /// its head.
    body_read_timeout: Duration = "60s";
    // The most it takes is far beyond what one process serves, and small
    // enough to count in 32 bits.
    /// Connections served at once; more wait to be accepted.
    max_connections: Option<Count<1, { 1 << 20 }>> =
        "1024, or fewer if the open-file limit cannot hold them";
    /// Threads serving connections.
    workers: Option<Count<1, 1024>> = "one per core";
    /// Log format.
    log_format: LogFormat = "pretty";
    /// Serve `/metrics` (with `/healthz` and `/readyz`) on this address
    /// instead of the main one, whose `/metrics` then goes to the upstream.
    metrics_listen: Option<SocketAddr> = "none";
    // Enough for the models one backend serves, few enough to keep a scrape
    // small; each model adds a handful of series.
    /// Model names with series of their own in `/metrics`; the rest are
    /// `other`.
    metrics_max_models: Count<0, 10_000> = "32";
    /// How backend reasoning is shown to Responses clients: auto (summary
    /// parts when the request asks for a summary, else reasoning text),
    /// summary or text.
    reasoning_output: Option<ReasoningOutput> = "the profile's, auto";
    /// How long open exchanges may take to finish after SIGINT or SIGTERM.
    shutdown_grace_secs: u64 as "SECONDS" = "10";
    /// The key reasoning and compaction carriers are sealed with
    /// (`wirebridge keygen`).
    seal_key: Option<SealKey> = "one generated per process", secret;
    /// Earlier keys still accepted during a rotation.
    seal_previous_keys: Vec<SealKey> = "none", secret;

    @tables {
        /// Custom backend profiles, by name.
        #[serde(default)]
        profiles: BTreeMap<String, BackendProfile>,
        /// Per-kind loss actions.
        loss_policy: Option<LossPolicy>,
        /// The model catalog's settings of each model, by name.
        #[serde(default)]
        models: BTreeMap<String, models::ModelTable>,
        /// The model catalog's settings of every model.
        model_defaults: Option<models::ModelTable>,
        /// A removed setting, read only to refuse it by name.
        runtime: Option<toml::Spanned<toml::Value>>,
    }
}
