//! The server's limits on client connections (timeouts, the connection cap):
//! each from the environment, a flag or the file.

use std::time::Duration;

use super::count::Count;
use super::duration::DurationSetting;
use super::{ConfigError, FileConfig, Origin, ServeFlags};

/// How long a client may take to send a complete request head. A head is a
/// few hundred bytes to a few KB and leaves a client in one write; 10 s is
/// generous on a bad link and bounds what a slowloris connection costs.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may sit with nothing in flight and nothing
/// arriving. Longer than the 60 s idle timeout common in load balancers, so
/// that the balancer, not the bridge, closes a pooled connection (a bridge
/// closing first races the balancer's next request on it).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(75);

/// How long a client may take to send a request body, from its head to its
/// end: room for a few MB of conversation history on a slow link.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// The largest connection cap: far beyond what one process serves, and
/// small enough to count in 32 bits.
const MAX_CONNECTIONS: usize = 1 << 20;

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

impl ServerLimits {
    /// Each limit: the environment, then the flag, then the file.
    pub(super) fn load(
        file: &FileConfig,
        flags: &ServeFlags,
        env: &dyn Fn(&str) -> Option<String>,
        origin: &Origin<'_>,
    ) -> Result<Self, ConfigError> {
        let max_connections = Count {
            key: "max_connections",
            env_var: "WIREBRIDGE_MAX_CONNECTIONS",
            noun: "connections",
            max: MAX_CONNECTIONS,
        }
        .load(env, flags.max_connections.or(file.max_connections))?;
        Ok(Self {
            header_read_timeout: DurationSetting {
                key: "header_read_timeout",
                env: env("WIREBRIDGE_HEADER_READ_TIMEOUT"),
                flag: flags.header_read_timeout.as_deref(),
                file: file.header_read_timeout.as_ref(),
                default: DEFAULT_HEADER_READ_TIMEOUT,
            }
            .resolve(origin)?,
            idle_timeout: DurationSetting {
                key: "idle_timeout",
                env: env("WIREBRIDGE_IDLE_TIMEOUT"),
                flag: flags.idle_timeout.as_deref(),
                file: file.idle_timeout.as_ref(),
                default: DEFAULT_IDLE_TIMEOUT,
            }
            .resolve(origin)?,
            body_read_timeout: DurationSetting {
                key: "body_read_timeout",
                env: env("WIREBRIDGE_BODY_READ_TIMEOUT"),
                flag: flags.body_read_timeout.as_deref(),
                file: file.body_read_timeout.as_ref(),
                default: DEFAULT_BODY_READ_TIMEOUT,
            }
            .resolve(origin)?,
            max_connections,
        })
    }
}
