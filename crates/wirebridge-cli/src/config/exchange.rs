//! Limits on one exchange with the upstream, and what a stored
//! conversation allows: each from the environment, a flag or the file.

use std::time::Duration;

use serde::Deserialize;
use wirebridge_tower::MissingHistory;

use super::duration::DurationSetting;
use super::{value, ConfigError, FileConfig, Origin, ServeFlags};

/// How long the upstream may take to answer with its response head. For a
/// request without `stream`, that is the whole generation: a slow local
/// model on a long prompt takes minutes.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(600);

/// How long a stream may go without an event (a body without a byte):
/// room for a long prefill before the first token, on backends that send
/// no keep-alive meanwhile.
pub const DEFAULT_UPSTREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// How long a translated stream may send the client nothing before a
/// keep-alive comment: under the 30-60 s idle timeouts of common load
/// balancers and proxies.
pub const DEFAULT_KEEPALIVE_INTERVAL: Duration = Duration::from_secs(15);

/// How long a WebSocket connection may sit with no turn running and no
/// message from the client.
pub const DEFAULT_WEBSOCKET_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
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

impl ExchangeLimits {
    /// Each limit: the environment, then the flag, then the file.
    pub(super) fn load(
        file: &FileConfig,
        flags: &ServeFlags,
        env: &dyn Fn(&str) -> Option<String>,
        origin: &Origin<'_>,
    ) -> Result<Self, ConfigError> {
        let duration = |key: &'static str, var: &str, flag: &Option<String>, file, default| {
            DurationSetting {
                key,
                env: env(var),
                flag: flag.as_deref(),
                file,
                default,
            }
            .resolve(origin)
        };
        Ok(Self {
            first_byte_timeout: duration(
                "upstream_first_byte_timeout",
                "WIREBRIDGE_UPSTREAM_FIRST_BYTE_TIMEOUT",
                &flags.upstream_first_byte_timeout,
                file.upstream_first_byte_timeout.as_ref(),
                DEFAULT_FIRST_BYTE_TIMEOUT,
            )?,
            idle_timeout: duration(
                "upstream_idle_timeout",
                "WIREBRIDGE_UPSTREAM_IDLE_TIMEOUT",
                &flags.upstream_idle_timeout,
                file.upstream_idle_timeout.as_ref(),
                DEFAULT_UPSTREAM_IDLE_TIMEOUT,
            )?,
            keepalive_interval: duration(
                "keepalive_interval",
                "WIREBRIDGE_KEEPALIVE_INTERVAL",
                &flags.keepalive_interval,
                file.keepalive_interval.as_ref(),
                DEFAULT_KEEPALIVE_INTERVAL,
            )?,
            max_reply_size: number(
                "max_reply_size",
                env("WIREBRIDGE_MAX_REPLY_SIZE"),
                flags.max_reply_size.or(file.max_reply_size),
                wirebridge_tower::DEFAULT_MAX_REPLY_SIZE,
            )?,
            websocket: match env("WIREBRIDGE_WEBSOCKET").as_deref() {
                Some("true" | "1") => true,
                Some("false" | "0") => false,
                Some(v) => {
                    return Err(value(
                        "WIREBRIDGE_WEBSOCKET",
                        "",
                        format!("'{v}' is not true or false"),
                    ))
                }
                None => !flags.no_websocket && file.websocket.unwrap_or(true),
            },
            websocket_idle_timeout: duration(
                "websocket_idle_timeout",
                "WIREBRIDGE_WEBSOCKET_IDLE_TIMEOUT",
                &flags.websocket_idle_timeout,
                file.websocket_idle_timeout.as_ref(),
                DEFAULT_WEBSOCKET_IDLE_TIMEOUT,
            )?,
        })
    }
}

impl StateSettings {
    /// Each setting: the environment, then the flag, then the file.
    pub(super) fn load(
        file: &FileConfig,
        flags: &ServeFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let anonymous_store = match env("WIREBRIDGE_ANONYMOUS_STORE").as_deref() {
            Some("true" | "1") => true,
            Some("false" | "0") => false,
            Some(v) => {
                return Err(value(
                    "WIREBRIDGE_ANONYMOUS_STORE",
                    "",
                    format!("'{v}' is not true or false"),
                ))
            }
            None => flags.anonymous_store || file.anonymous_store.unwrap_or(false),
        };
        let missing_history = match env("WIREBRIDGE_MISSING_HISTORY").as_deref() {
            Some("refuse") => MissingHistorySetting::Refuse,
            Some("continue") => MissingHistorySetting::Continue,
            Some(v) => {
                return Err(value(
                    "WIREBRIDGE_MISSING_HISTORY",
                    "",
                    format!("'{v}' is not refuse or continue"),
                ))
            }
            None => flags
                .missing_history
                .or(file.missing_history)
                .unwrap_or(MissingHistorySetting::Refuse),
        };
        Ok(Self {
            anonymous_store,
            missing_history: missing_history.into(),
            tenant_max_entries: number(
                "store_tenant_max_entries",
                env("WIREBRIDGE_STORE_TENANT_MAX_ENTRIES"),
                file.store_tenant_max_entries,
                wirebridge_store::MemoryStore::DEFAULT_MAX_ENTRIES_PER_TENANT,
            )?,
            tenant_max_bytes: number(
                "store_tenant_max_bytes",
                env("WIREBRIDGE_STORE_TENANT_MAX_BYTES"),
                file.store_tenant_max_bytes,
                wirebridge_store::MemoryStore::DEFAULT_MAX_BYTES_PER_TENANT,
            )?,
        })
    }
}

/// A positive count: the environment, else `given` (flag or file), else
/// `default`.
fn number(
    key: &str,
    env: Option<String>,
    given: Option<usize>,
    default: usize,
) -> Result<usize, ConfigError> {
    let n = match env {
        Some(v) => v.trim().parse::<usize>().map_err(|_| {
            value(
                &format!("WIREBRIDGE_{}", key.to_ascii_uppercase()),
                "",
                format!("'{v}' is not a whole number"),
            )
        })?,
        None => given.unwrap_or(default),
    };
    if n == 0 {
        return Err(value(key, "", "must be at least 1"));
    }
    Ok(n)
}
