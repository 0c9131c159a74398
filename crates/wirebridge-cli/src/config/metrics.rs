//! Where `GET /metrics` is served, and how many model names it tells apart.

use std::net::SocketAddr;

use super::{value, ConfigError, FileConfig, ServeFlags};

/// Models with series of their own; the rest are counted as `other`. Enough
/// for the models one backend serves, few enough to keep a scrape small.
pub const DEFAULT_METRICS_MAX_MODELS: usize = 32;

/// The most a setting may ask for: each model adds a handful of series.
const MAX_MODELS: usize = 10_000;

/// The metrics endpoint's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsSettings {
    /// A separate address serving `/metrics` (and `/healthz`, `/readyz`);
    /// `None` serves `/metrics` on the main listener.
    pub listen: Option<SocketAddr>,
    /// Model names with series of their own.
    pub max_models: usize,
}

impl MetricsSettings {
    /// Each setting: the environment, then the flag, then the file.
    pub(super) fn load(
        file: &FileConfig,
        flags: &ServeFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let listen = match env("WIREBRIDGE_METRICS_LISTEN") {
            Some(v) => Some(
                v.trim()
                    .parse()
                    .map_err(|e| value("WIREBRIDGE_METRICS_LISTEN", "", format!("{e}: '{v}'")))?,
            ),
            None => flags.metrics_listen.or(file.metrics_listen),
        };
        let max_models = match env("WIREBRIDGE_METRICS_MAX_MODELS") {
            Some(v) => v.trim().parse::<usize>().map_err(|_| {
                value(
                    "WIREBRIDGE_METRICS_MAX_MODELS",
                    "",
                    format!("'{v}' is not a number of models"),
                )
            })?,
            None => flags
                .metrics_max_models
                .or(file.metrics_max_models)
                .unwrap_or(DEFAULT_METRICS_MAX_MODELS),
        };
        if max_models > MAX_MODELS {
            return Err(value(
                "metrics_max_models",
                "",
                format!("{max_models} is more than {MAX_MODELS}"),
            ));
        }
        Ok(Self { listen, max_models })
    }
}
