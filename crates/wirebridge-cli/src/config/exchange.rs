//! Limits on one exchange with the upstream, and what a stored
//! conversation allows.

use std::time::Duration;

use wirebridge_tower::MissingHistory;

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
    /// What a conversation that misses a turn gets.
    pub missing_history: MissingHistory,
    /// The memory store's bound on one tenant's records.
    pub tenant_max_entries: usize,
    /// The memory store's bound on one tenant's bytes.
    pub tenant_max_bytes: usize,
}
