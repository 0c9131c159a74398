//! Settings: defaults, then the TOML file, then `WIREBRIDGE_*` environment
//! variables, then flags, each overriding the one before. Each setting is
//! declared once, in `settings.rs`.

mod client_certificate;
mod declare;
mod duration;
mod flags;
mod models;
mod parts;
mod settings;
mod store;
mod types;
mod upstream;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use wirebridge_convert::catalog::ModelCatalog;
use wirebridge_convert::profile::ReasoningOutput;
use wirebridge_convert::{BackendProfile, LossPolicy};

use declare::{Got, Origin, Sources};
use settings::{FileConfig, Settings};

pub use client_certificate::ClientCertificate;
pub use flags::ServeFlags;
pub use parts::{
    ExchangeLimits, MetricsSettings, MissingHistorySetting, ReplicaSettings, RuntimeSettings,
    SealKeys, ServerLimits, StateSettings,
};
pub use store::{RedisSetting, StoreSetting};
pub use upstream::{Credentials, UpstreamTlsFiles, UpstreamUrl};

/// Which API the upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum UpstreamApi {
    /// Chat Completions: Responses requests are translated.
    Chat,
    /// Responses: Chat Completions requests are translated.
    Responses,
    /// Anthropic Messages: Responses and Chat Completions requests are
    /// translated; Messages requests pass through.
    Messages,
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Pretty,
    /// One JSON object per line.
    Json,
}

/// The effective settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// The address served.
    pub listen: SocketAddr,
    /// Where responses are kept.
    pub store: StoreSetting,
    /// Where requests go.
    pub upstream: Upstream,
    /// The API the upstream speaks.
    pub upstream_api: UpstreamApi,
    /// The backend profile.
    pub profile: BackendProfile,
    /// What to do with each kind of loss.
    pub policy: LossPolicy,
    /// What `GET /v1/models` tells Codex about the upstream's models.
    pub catalog: ModelCatalog,
    /// Sent upstream as `Bearer` instead of the client's authorization.
    pub upstream_key: Option<String>,
    /// How long connecting to the upstream may take.
    pub upstream_connect_timeout: Duration,
    /// How error bodies sent to clients name the upstream.
    pub upstream_label: String,
    /// The files of an `https://` upstream's TLS.
    pub upstream_tls: UpstreamTlsFiles,
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Timeouts and the connection cap.
    pub limits: ServerLimits,
    /// Timeouts and size limits of exchanges with the upstream.
    pub exchange: ExchangeLimits,
    /// What stored conversations allow.
    pub state: StateSettings,
    /// Log output format.
    pub log_format: LogFormat,
    /// How long open exchanges may take to finish after a signal.
    pub shutdown_grace_secs: u64,
    /// Overrides the profile's reasoning output.
    pub reasoning_output: Option<ReasoningOutput>,
    /// The keys reasoning is sealed with.
    pub seal: SealKeys,
    /// Where metrics are served.
    pub metrics: MetricsSettings,
    /// How many threads serve connections.
    pub runtime: RuntimeSettings,
    /// How requests are spread over several upstream URLs.
    pub replicas: ReplicaSettings,
}

/// Where requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// The built-in demo upstream, started in this process.
    Demo,
    /// An HTTP(S) server.
    Url(UpstreamUrl),
    /// The replicas of one backend, two or more: each conversation is kept
    /// on one of them.
    Replicas(Vec<UpstreamUrl>),
}

impl Upstream {
    /// The URLs configured: none for the demo upstream.
    pub fn urls(&self) -> &[UpstreamUrl] {
        match self {
            Upstream::Demo => &[],
            Upstream::Url(url) => std::slice::from_ref(url),
            Upstream::Replicas(urls) => urls,
        }
    }
}

/// A setting that cannot be used; exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or a key or value is wrong; toml's message
    /// names the line and the key.
    #[error("invalid config file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// toml's message, with line and column.
        message: String,
    },
    /// A value is wrong.
    #[error("invalid setting '{key}'{at}: {message}")]
    Value {
        /// The setting's file key.
        key: String,
        /// Where the value came from: " (--idle-timeout)",
        /// " (environment WIREBRIDGE_IDLE_TIMEOUT)", " (config.toml line 3)",
        /// or nothing for a default.
        at: String,
        /// What is wrong.
        message: String,
    },
}

impl Config {
    /// Each setting from the first of its sources that sets it: its flag,
    /// its environment variable, the file, its default. The file is
    /// `--config`, else `WIREBRIDGE_CONFIG`.
    pub fn load(
        flags: &ServeFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let config_path = flags.config.clone();
        let config_path = config_path.or_else(|| env("WIREBRIDGE_CONFIG").map(PathBuf::from));
        let (file, source) = match &config_path {
            Some(path) => {
                let source = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
                let file: FileConfig = toml::from_str(&source).map_err(|e| ConfigError::Parse {
                    path: path.clone(),
                    message: e.to_string().trim_end().to_owned(),
                })?;
                (file, source)
            }
            None => (FileConfig::default(), String::new()),
        };
        let origin = Origin {
            file: config_path.as_deref(),
            source: &source,
        };
        // A file written for an older bridge may still choose a runtime:
        // say so, rather than calling the key unknown.
        if let Some(spanned) = &file.runtime {
            return Err(value(
                "runtime",
                &origin.at(spanned.span()),
                "the setting was removed: connections are always served by one \
                 multi-thread runtime; remove the line (`workers` still sets its threads)",
            ));
        }
        let sources = Sources {
            given: flags.given(),
            declared: Settings::DECLARED,
            env,
            origin,
        };
        let s = Settings::resolve(&file, &sources)?;

        let profile = profile(&s.profile, &file.profiles)?;
        upstream::check_session_header(&profile, &s.profile)?;
        let catalog = models::load(&file, &profile, s.upstream_api.value, &sources.origin)?;
        let store = store::load(&s)?;
        let upstream_tls = upstream::tls_files(&s)?;
        let resolve_every = upstream::resolve_every(&s)?;
        let probe_every = upstream::probe_every(&s, resolve_every.is_some())?;
        let upstream_key = match &s.upstream_api_key_env.value {
            Some(var) => Some(env(var).filter(|k| !k.is_empty()).ok_or_else(|| {
                let unset = format!("the environment variable {var} is not set");
                s.upstream_api_key_env.invalid(unset)
            })?),
            None => None,
        };

        Ok(Config {
            listen: s.listen.value,
            store,
            upstream: s.upstream.value,
            upstream_api: s.upstream_api.value,
            profile,
            policy: file.loss_policy.unwrap_or_default(),
            catalog,
            upstream_key,
            upstream_connect_timeout: s.upstream_connect_timeout.value,
            upstream_label: s.upstream_label.value.0,
            upstream_tls,
            max_body: s.max_body.value,
            limits: ServerLimits {
                header_read_timeout: s.header_read_timeout.value,
                idle_timeout: s.idle_timeout.value,
                body_read_timeout: s.body_read_timeout.value,
                max_connections: s.max_connections.value.map(|n| n.0),
            },
            exchange: ExchangeLimits {
                first_byte_timeout: s.upstream_first_byte_timeout.value,
                idle_timeout: s.upstream_idle_timeout.value,
                keepalive_interval: s.keepalive_interval.value,
                max_reply_size: s.max_reply_size.value.0,
                websocket: s.websocket.value,
                websocket_idle_timeout: s.websocket_idle_timeout.value,
                websocket_max_per_tenant: s.websocket_max_per_tenant.value.0,
                websocket_max_memory: s.websocket_max_memory.value.0,
                websocket_max_age: s.websocket_max_age.value,
            },
            state: StateSettings {
                anonymous_store: s.anonymous_store.value,
                trust_credentials: s.trust_credentials.value,
                missing_history: s.missing_history.value.into(),
                translated_history_bytes: s.translated_history_bytes.value.0,
                tenant_max_entries: s.store_tenant_max_entries.value.0,
                tenant_max_bytes: s.store_tenant_max_bytes.value.0,
                max_tenants: s.store_max_tenants.value.0,
                max_background_runs: s.max_background_runs.value.0,
                max_background_runs_per_tenant: s.max_background_runs_per_tenant.value.0,
                background_lease: s.background_lease.value,
                max_resolved_input: s.max_resolved_input.value.map(|n| n.0),
            },
            log_format: s.log_format.value,
            shutdown_grace_secs: s.shutdown_grace_secs.value,
            reasoning_output: s.reasoning_output.value,
            seal: SealKeys::new(s.seal_key.value, s.seal_previous_keys.value),
            metrics: MetricsSettings {
                listen: s.metrics_listen.value,
                max_models: s.metrics_max_models.value.0,
            },
            runtime: RuntimeSettings {
                workers: s.workers.value.map(|n| n.0),
            },
            replicas: ReplicaSettings {
                load_factor: s.replica_load_factor.value.0,
                move_slack: s.replica_move_slack.value.0,
                resolve_every,
                probe_every,
                eject_after: s.replica_eject_after.value.0,
                backoff: s.replica_backoff.value,
            },
        })
    }
}

/// A built-in profile, or one of the file's.
fn profile(
    name: &Got<String>,
    custom: &BTreeMap<String, BackendProfile>,
) -> Result<BackendProfile, ConfigError> {
    if let Some(profile) = custom.get(&name.value) {
        return Ok(BackendProfile {
            name: name.value.clone(),
            ..profile.clone()
        });
    }
    BackendProfile::builtin(&name.value).ok_or_else(|| {
        let builtin = BackendProfile::BUILTIN.iter().map(|s| s.to_string());
        let known: Vec<String> = builtin.chain(custom.keys().cloned()).collect();
        name.invalid(format!(
            "unknown profile '{}' (known: {})",
            name.value,
            known.join(", ")
        ))
    })
}

fn value(key: &str, at: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Value {
        key: key.into(),
        at: at.into(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests;
