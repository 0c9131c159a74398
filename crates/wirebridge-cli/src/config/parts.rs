//! The parts of the effective settings, each for the piece of the server
//! that takes it.

use std::net::SocketAddr;
use std::time::Duration;

use wirebridge_convert::seal::SealKey;
use wirebridge_tower::MissingHistory;

/// Limits on client connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLimits {
    /// A connection must send a complete request head within this, from
    /// when it is accepted or, on a kept-alive connection, from when the
    /// next request's first bytes arrive.
    pub header_read_timeout: Duration,
    /// A connection with no request in flight and no bytes arriving is
    /// closed after this.
    pub idle_timeout: Duration,
    /// A request body must be received within this, from its head.
    pub body_read_timeout: Duration,
    /// Connections served at once; `None` leaves it to what the process's
    /// open-file limit can hold.
    pub max_connections: Option<usize>,
}

/// Limits on one exchange with the upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExchangeLimits {
    /// From the request sent to the upstream's response head: a 504 after.
    pub first_byte_timeout: Duration,
    /// A stream without an event (a body without a byte) for this long
    /// fails.
    pub idle_timeout: Duration,
    /// A translated stream that sent the client nothing for this long gets
    /// a keep-alive comment.
    pub keepalive_interval: Duration,
    /// The largest non-streaming reply read to be translated, in bytes.
    pub max_reply_size: usize,
    /// Whether `GET /v1/responses` may be upgraded to a WebSocket.
    pub websocket: bool,
    /// A WebSocket connection idle for this long is closed.
    pub websocket_idle_timeout: Duration,
    /// WebSocket connections one credential may hold open.
    pub websocket_max_per_tenant: usize,
    /// Bytes every WebSocket connection's cache and queue hold together.
    pub websocket_max_memory: usize,
    /// A WebSocket connection this old is closed once no turn runs.
    pub websocket_max_age: Duration,
}

/// `missing_history` as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MissingHistorySetting {
    /// Refuse to continue a conversation that misses a turn (404).
    Refuse,
    /// Answer from the turns kept, and report the gap.
    Continue,
}

impl From<MissingHistorySetting> for MissingHistory {
    fn from(setting: MissingHistorySetting) -> Self {
        match setting {
            MissingHistorySetting::Refuse => MissingHistory::Refuse,
            MissingHistorySetting::Continue => MissingHistory::Continue,
        }
    }
}

/// What stored conversations allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateSettings {
    /// Requests without credentials share one stored tenant.
    pub anonymous_store: bool,
    /// Every credential counts as accepted by the backend.
    pub trust_credentials: bool,
    /// What a conversation that misses a turn gets.
    pub missing_history: MissingHistory,
    /// Bytes of stored turns kept translated.
    pub translated_history_bytes: usize,
    /// The memory store's bound on one tenant's records.
    pub tenant_max_entries: usize,
    /// The memory store's bound on one tenant's bytes.
    pub tenant_max_bytes: usize,
    /// The memory store's bound on the number of tenants.
    pub max_tenants: usize,
    /// Background responses run at once.
    pub max_background_runs: usize,
    /// Background responses one tenant may run at once.
    pub max_background_runs_per_tenant: usize,
    /// How long a background run's lease in a shared store lasts.
    pub background_lease: Duration,
    /// The most bytes of stored items one request may take in; `None`
    /// follows the body limit (twice it).
    pub max_resolved_input: Option<usize>,
}

/// The metrics endpoint's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsSettings {
    /// A separate address serving `/metrics` (and `/healthz`, `/readyz`);
    /// `None` serves `/metrics` on the main listener.
    pub listen: Option<SocketAddr>,
    /// Model names with series of their own.
    pub max_models: usize,
}

/// The runtime settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeSettings {
    /// Threads serving connections; `None` is one per core.
    pub workers: Option<usize>,
}

impl RuntimeSettings {
    /// Threads serving connections: the setting, or one per core the
    /// process may use.
    pub fn workers(&self) -> usize {
        self.workers.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }
}

/// The keys reasoning and compaction carriers are sealed with: the current
/// one (`seal_key`, or one generated for this process), and earlier ones
/// still accepted during a rotation (`seal_previous_keys`).
#[derive(Debug, Clone)]
pub struct SealKeys {
    /// What new carriers are sealed with.
    pub current: SealKey,
    /// Also accepted when opening.
    pub previous: Vec<SealKey>,
    /// True when no key was set and `current` is this process's own.
    pub generated: bool,
}

impl SealKeys {
    /// The key set, or one generated for this process.
    pub(super) fn new(current: Option<SealKey>, previous: Vec<SealKey>) -> Self {
        let generated = current.is_none();
        Self {
            current: current.unwrap_or_else(SealKey::generate),
            previous,
            generated,
        }
    }
}

/// How requests are spread over the replicas of one backend (several
/// upstream URLs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplicaSettings {
    /// A replica whose requests in flight pass this many times the mean
    /// (counting the request being placed) is passed over.
    pub load_factor: f64,
    /// Requests in flight past that bound a pinned conversation's replica
    /// may hold before the conversation moves.
    pub move_slack: usize,
    /// How often the upstream URLs' names are resolved again, each address
    /// a replica; `None`: each URL is one upstream.
    pub resolve_every: Option<Duration>,
    /// How often each replica is probed; `None`: health is learned from
    /// answers only.
    pub probe_every: Option<Duration>,
    /// Consecutive failures (connect failures, 5xx answers) that eject a
    /// replica.
    pub eject_after: usize,
    /// How long an ejected replica is left out before it is tried again.
    pub backoff: Duration,
}
