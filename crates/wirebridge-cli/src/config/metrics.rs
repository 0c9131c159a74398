//! Where `GET /metrics` is served, and how many model names it tells apart.

use std::net::SocketAddr;

/// The metrics endpoint's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsSettings {
    /// A separate address serving `/metrics` (and `/healthz`, `/readyz`);
    /// `None` serves `/metrics` on the main listener.
    pub listen: Option<SocketAddr>,
    /// Model names with series of their own.
    pub max_models: usize,
}
