//! The server's limits on client connections: timeouts, the connection cap.

use std::time::Duration;

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
