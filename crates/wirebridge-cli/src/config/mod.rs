//! Settings: defaults, then the TOML file, then flags, then `WIREBRIDGE_*`
//! environment variables, each overriding the one before.

mod count;
mod duration;
mod exchange;
mod limits;
mod metrics;
mod models;
mod runtime;
mod seal;
mod store;
mod upstream;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use wirebridge_convert::catalog::ModelCatalog;
use wirebridge_convert::profile::ReasoningOutput;
use wirebridge_convert::{BackendProfile, LossPolicy};

pub use exchange::{ExchangeLimits, MissingHistorySetting, StateSettings};
pub use limits::ServerLimits;
pub use metrics::MetricsSettings;
pub use runtime::RuntimeSettings;
pub use seal::SealKeys;
pub use store::{RedisSetting, StoreSetting};
pub use upstream::{Credentials, UpstreamUrl};

/// Which API the upstream speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum UpstreamApi {
    /// Chat Completions: Responses requests are translated.
    Chat,
    /// Responses: Chat Completions requests are translated.
    Responses,
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Pretty,
    /// One JSON object per line.
    Json,
}

/// The settings file, as written. Every key is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    listen: Option<SocketAddr>,
    upstream: Option<toml::Spanned<String>>,
    upstream_api: Option<UpstreamApi>,
    profile: Option<toml::Spanned<String>>,
    store: Option<toml::Spanned<String>>,
    store_ca_file: Option<toml::Spanned<String>>,
    store_client_cert_file: Option<toml::Spanned<String>>,
    store_client_key_file: Option<toml::Spanned<String>>,
    store_timeout: Option<toml::Spanned<toml::Value>>,
    upstream_api_key_env: Option<String>,
    max_body: Option<usize>,
    log_format: Option<LogFormat>,
    shutdown_grace_secs: Option<u64>,
    reasoning_output: Option<toml::Spanned<String>>,
    seal_key: Option<toml::Spanned<String>>,
    #[serde(default)]
    seal_previous_keys: Vec<toml::Spanned<String>>,
    /// Custom backend profiles, by name.
    #[serde(default)]
    profiles: BTreeMap<String, BackendProfile>,
    /// Per-kind loss actions.
    #[serde(default)]
    loss_policy: Option<LossPolicy>,
    /// The model catalog's settings of each model, by name.
    #[serde(default)]
    models: BTreeMap<String, models::ModelTable>,
    /// The model catalog's settings of every model.
    model_defaults: Option<models::ModelTable>,
    header_read_timeout: Option<toml::Spanned<toml::Value>>,
    idle_timeout: Option<toml::Spanned<toml::Value>>,
    body_read_timeout: Option<toml::Spanned<toml::Value>>,
    max_connections: Option<usize>,
    upstream_connect_timeout: Option<toml::Spanned<toml::Value>>,
    upstream_label: Option<toml::Spanned<String>>,
    upstream_first_byte_timeout: Option<toml::Spanned<toml::Value>>,
    upstream_idle_timeout: Option<toml::Spanned<toml::Value>>,
    keepalive_interval: Option<toml::Spanned<toml::Value>>,
    max_reply_size: Option<usize>,
    websocket: Option<bool>,
    websocket_idle_timeout: Option<toml::Spanned<toml::Value>>,
    anonymous_store: Option<bool>,
    missing_history: Option<MissingHistorySetting>,
    store_tenant_max_entries: Option<usize>,
    store_tenant_max_bytes: Option<usize>,
    metrics_listen: Option<SocketAddr>,
    metrics_max_models: Option<usize>,
    /// A removed setting, read only to refuse it by name.
    runtime: Option<toml::Spanned<toml::Value>>,
    workers: Option<usize>,
}

/// Flags of `wirebridge serve`, all optional so the file and the
/// environment can fill them.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct ServeFlags {
    /// Address to listen on [default: 127.0.0.1:8787].
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// Upstream base URL including its API path (`http://localhost:8000/v1`),
    /// or `demo` for the built-in demo upstream [default: demo].
    #[arg(long)]
    pub upstream: Option<String>,
    /// The API the upstream speaks [default: chat].
    #[arg(long, value_enum)]
    pub upstream_api: Option<UpstreamApi>,
    /// Backend profile: openai, vllm, llama-cpp, ollama, deepseek,
    /// openrouter, generic, or one defined in the config file [default: generic].
    #[arg(long)]
    pub profile: Option<String>,
    /// Response store for `store`, `previous_response_id` and
    /// `GET /v1/responses/{id}`: memory, none, or a Redis URL:
    /// redis://[USER:PASSWORD@]HOST:PORT/DB, rediss://… (TLS),
    /// redis+cluster://HOST:PORT,HOST:PORT (rediss+cluster:// for TLS)
    /// [default: memory].
    #[arg(long)]
    pub store: Option<String>,
    /// CA certificates (PEM) that signed the Redis server's, for rediss://
    /// [default: the system's].
    #[arg(long, value_name = "FILE")]
    pub store_ca_file: Option<String>,
    /// Client certificate chain (PEM) for a rediss:// server that asks for
    /// one; with --store-client-key-file.
    #[arg(long, value_name = "FILE")]
    pub store_client_cert_file: Option<String>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE")]
    pub store_client_key_file: Option<String>,
    /// How long Redis may take to connect, to answer, and to finish a store
    /// operation before the request gets a 503 [default: 2s].
    #[arg(long, value_name = "DURATION")]
    pub store_timeout: Option<String>,
    /// Settings file (TOML).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Send the upstream `Authorization: Bearer $VAR` instead of the
    /// client's own authorization header.
    #[arg(long, value_name = "VAR")]
    pub upstream_api_key_env: Option<String>,
    /// Largest request body, in bytes [default: 33554432].
    #[arg(long, value_name = "BYTES")]
    pub max_body: Option<usize>,
    /// Log format [default: pretty].
    #[arg(long, value_enum)]
    pub log_format: Option<LogFormat>,
    /// How backend reasoning is shown to Responses clients: auto (summary
    /// parts when the request asks for a summary, else reasoning text),
    /// summary or text [default: the profile's, auto].
    #[arg(long, value_name = "auto|summary|text")]
    pub reasoning_output: Option<String>,
    /// Close a connection that has not sent a complete request head within
    /// this (10s, 500ms, 2m) [default: 10s].
    #[arg(long, value_name = "DURATION")]
    pub header_read_timeout: Option<String>,
    /// Close a connection with no request in flight and no bytes arriving
    /// after this [default: 75s].
    #[arg(long, value_name = "DURATION")]
    pub idle_timeout: Option<String>,
    /// Answer 408 to a request whose body has not arrived within this of
    /// its head [default: 60s].
    #[arg(long, value_name = "DURATION")]
    pub body_read_timeout: Option<String>,
    /// Connections served at once; more wait to be accepted [default: 1024,
    /// or fewer if the open-file limit cannot hold them].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// How long connecting to the upstream may take [default: 10s].
    #[arg(long, value_name = "DURATION")]
    pub upstream_connect_timeout: Option<String>,
    /// How error bodies sent to clients name the upstream, instead of its
    /// address [default: "the upstream"].
    #[arg(long, value_name = "TEXT")]
    pub upstream_label: Option<String>,
    /// How long the upstream may take to send its response head; for a
    /// request without `stream` that is the whole answer [default: 10m].
    #[arg(long, value_name = "DURATION")]
    pub upstream_first_byte_timeout: Option<String>,
    /// Fail a stream whose upstream sends no event (a body: no byte) for
    /// this long [default: 5m].
    #[arg(long, value_name = "DURATION")]
    pub upstream_idle_timeout: Option<String>,
    /// Send `: keepalive` on a translated stream quiet for this long
    /// [default: 15s].
    #[arg(long, value_name = "DURATION")]
    pub keepalive_interval: Option<String>,
    /// Largest non-streaming upstream reply, in bytes [default: 67108864].
    #[arg(long, value_name = "BYTES")]
    pub max_reply_size: Option<usize>,
    /// Refuse WebSocket upgrades of `GET /v1/responses` (Responses
    /// WebSocket mode; clients fall back to HTTP).
    #[arg(long)]
    pub no_websocket: bool,
    /// Close a WebSocket connection with no turn running and nothing from
    /// the client for this long [default: 10m].
    #[arg(long, value_name = "DURATION")]
    pub websocket_idle_timeout: Option<String>,
    /// Keep the responses of requests without credentials, in one tenant
    /// all of them share.
    #[arg(long)]
    pub anonymous_store: bool,
    /// A conversation continued with `previous_response_id` that misses an
    /// earlier response: refuse (404) or continue (reported) [default: refuse].
    #[arg(long, value_enum)]
    pub missing_history: Option<MissingHistorySetting>,
    /// Serve `/metrics` (with `/healthz` and `/readyz`) on this address
    /// instead of the main one, whose `/metrics` then goes to the upstream.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// Model names with series of their own in `/metrics`; the rest are
    /// `other` [default: 32].
    #[arg(long, value_name = "N")]
    pub metrics_max_models: Option<usize>,
    /// Threads serving connections [default: one per core].
    #[arg(long, value_name = "N")]
    pub workers: Option<usize>,
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
}

/// Where requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// The built-in demo upstream, started in this process.
    Demo,
    /// An HTTP(S) server.
    Url(UpstreamUrl),
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
        /// The setting (a flag, key or variable name).
        key: String,
        /// Where it came from, such as " (config.toml line 3)".
        at: String,
        /// What is wrong.
        message: String,
    },
}

/// Where a value came from, for error messages.
struct Origin<'a> {
    file: Option<&'a Path>,
    source: &'a str,
}

impl Origin<'_> {
    fn at(&self, span: Option<std::ops::Range<usize>>) -> String {
        match (self.file, span) {
            (Some(file), Some(span)) => {
                let line = self.source[..span.start.min(self.source.len())]
                    .matches('\n')
                    .count()
                    + 1;
                format!(" ({} line {line})", file.display())
            }
            _ => String::new(),
        }
    }
}

impl Config {
    /// Merges defaults, the file, the flags and the environment.
    pub fn load(
        flags: &ServeFlags,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let config_path = env("WIREBRIDGE_CONFIG")
            .map(PathBuf::from)
            .or_else(|| flags.config.clone());
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

        let listen = match env("WIREBRIDGE_LISTEN") {
            Some(v) => v
                .parse()
                .map_err(|e| value("WIREBRIDGE_LISTEN", "", format!("{e}: '{v}'")))?,
            None => flags
                .listen
                .or(file.listen)
                .unwrap_or_else(|| "127.0.0.1:8787".parse().expect("constant")),
        };

        let (upstream_text, upstream_at) = pick(
            env("WIREBRIDGE_UPSTREAM"),
            flags.upstream.clone(),
            &file.upstream,
            &origin,
        );
        let upstream = match upstream_text.as_deref().unwrap_or("demo") {
            "demo" => Upstream::Demo,
            url => {
                Upstream::Url(upstream::parse(url).map_err(|m| value("upstream", &upstream_at, m))?)
            }
        };

        let upstream_api = match env("WIREBRIDGE_UPSTREAM_API") {
            Some(v) => match v.as_str() {
                "chat" => UpstreamApi::Chat,
                "responses" => UpstreamApi::Responses,
                _ => {
                    return Err(value(
                        "WIREBRIDGE_UPSTREAM_API",
                        "",
                        format!("'{v}' is not chat or responses"),
                    ))
                }
            },
            None => flags
                .upstream_api
                .or(file.upstream_api)
                .unwrap_or(UpstreamApi::Chat),
        };

        let (profile_name, profile_at) = pick(
            env("WIREBRIDGE_PROFILE"),
            flags.profile.clone(),
            &file.profile,
            &origin,
        );
        let profile_name = profile_name.unwrap_or_else(|| "generic".into());
        let profile = match file.profiles.get(&profile_name) {
            Some(custom) => BackendProfile {
                name: profile_name.clone(),
                ..custom.clone()
            },
            None => BackendProfile::builtin(&profile_name).ok_or_else(|| {
                let mut known: Vec<String> = BackendProfile::BUILTIN
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                known.extend(file.profiles.keys().cloned());
                value(
                    "profile",
                    &profile_at,
                    format!(
                        "unknown profile '{profile_name}' (known: {})",
                        known.join(", ")
                    ),
                )
            })?,
        };

        let catalog = models::load(&file, &profile, upstream_api, &origin)?;
        let store = store::load(&file, flags, env, &origin)?;

        let key_env = env("WIREBRIDGE_UPSTREAM_API_KEY_ENV")
            .or_else(|| flags.upstream_api_key_env.clone())
            .or_else(|| file.upstream_api_key_env.clone());
        let upstream_key = match key_env {
            Some(var) => Some(env(&var).filter(|k| !k.is_empty()).ok_or_else(|| {
                value(
                    "upstream_api_key_env",
                    "",
                    format!("the environment variable {var} is not set"),
                )
            })?),
            None => None,
        };

        let max_body = match env("WIREBRIDGE_MAX_BODY") {
            Some(v) => v.parse().map_err(|_| {
                value(
                    "WIREBRIDGE_MAX_BODY",
                    "",
                    format!("'{v}' is not a number of bytes"),
                )
            })?,
            None => flags
                .max_body
                .or(file.max_body)
                .unwrap_or(wirebridge_tower::DEFAULT_BODY_LIMIT),
        };
        let log_format = match env("WIREBRIDGE_LOG_FORMAT").as_deref() {
            Some("json") => LogFormat::Json,
            Some("pretty") => LogFormat::Pretty,
            Some(v) => {
                return Err(value(
                    "WIREBRIDGE_LOG_FORMAT",
                    "",
                    format!("'{v}' is not pretty or json"),
                ))
            }
            None => flags
                .log_format
                .or(file.log_format)
                .unwrap_or(LogFormat::Pretty),
        };

        let (output, output_at) = pick(
            env("WIREBRIDGE_REASONING_OUTPUT"),
            flags.reasoning_output.clone(),
            &file.reasoning_output,
            &origin,
        );
        let reasoning_output = output
            .map(|o| {
                o.parse()
                    .map_err(|m| value("reasoning_output", &output_at, m))
            })
            .transpose()?;

        let seal = SealKeys::load(&file, env, &origin)?;

        let upstream_connect_timeout = upstream::connect_timeout(&file, flags, env, &origin)?;
        let upstream_label = upstream::label(&file, flags, env, &origin)?;
        let limits = ServerLimits::load(&file, flags, env, &origin)?;
        let exchange = ExchangeLimits::load(&file, flags, env, &origin)?;
        let state = StateSettings::load(&file, flags, env)?;
        let metrics = MetricsSettings::load(&file, flags, env)?;
        let runtime = RuntimeSettings::load(&file, flags, env, &origin)?;

        Ok(Config {
            listen,
            store,
            upstream,
            upstream_api,
            profile,
            policy: file.loss_policy.unwrap_or_default(),
            catalog,
            upstream_key,
            upstream_connect_timeout,
            upstream_label,
            max_body,
            limits,
            exchange,
            state,
            log_format,
            shutdown_grace_secs: file.shutdown_grace_secs.unwrap_or(10),
            reasoning_output,
            seal,
            metrics,
            runtime,
        })
    }
}

/// The environment, then the flag, then the file; with where the file's
/// value stands.
fn pick(
    env: Option<String>,
    flag: Option<String>,
    file: &Option<toml::Spanned<String>>,
    origin: &Origin<'_>,
) -> (Option<String>, String) {
    if env.is_some() {
        return (env, " (environment)".into());
    }
    if flag.is_some() {
        return (flag, String::new());
    }
    match file {
        Some(spanned) => (
            Some(spanned.get_ref().clone()),
            origin.at(Some(spanned.span())),
        ),
        None => (None, String::new()),
    }
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
