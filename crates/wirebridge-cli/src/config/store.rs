//! Where responses are kept: `store` (memory, none, or a Redis URL), and
//! for Redis the TLS files and the timeout.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use wirebridge_store::RedisStore;

use super::client_certificate::ClientCertificate;
use super::upstream::redact;
use super::{ConfigError, Settings};

/// Where responses are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSetting {
    /// Nowhere: `previous_response_id` is refused.
    None,
    /// In this process (lost on restart, not shared between replicas).
    Memory,
    /// On a Redis (or Valkey) server or cluster.
    Redis(RedisSetting),
}

impl StoreSetting {
    /// The kind, for logs: a Redis URL may hold a password.
    pub fn kind(&self) -> &'static str {
        match self {
            StoreSetting::None => "none",
            StoreSetting::Memory => "memory",
            StoreSetting::Redis(_) => "redis",
        }
    }
}

/// How the Redis store is reached. `Debug` hides the URL's password.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisSetting {
    /// The URL, as given: it may hold a password.
    pub url: String,
    /// Whether the URL asks for TLS.
    pub tls: bool,
    /// The CA certificates (PEM) that signed the server's, instead of the
    /// system's.
    pub ca_file: Option<PathBuf>,
    /// A client certificate chain and its key (PEM), for a server that
    /// asks for one.
    pub client_certificate: Option<ClientCertificate>,
    /// Bounds connecting, each reply, and each store operation.
    pub timeout: Duration,
    /// Bytes of stored turns kept in the process.
    pub kept_turns_bytes: usize,
}

impl RedisSetting {
    /// The URL without its user and password: what logs may show.
    pub fn shown(&self) -> String {
        redact(&self.url)
    }
}

impl fmt::Debug for RedisSetting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSetting")
            .field("url", &self.shown())
            .field("tls", &self.tls)
            .field("ca_file", &self.ca_file)
            .field("client_certificate", &self.client_certificate)
            .field("timeout", &self.timeout)
            .field("kept_turns_bytes", &self.kept_turns_bytes)
            .finish()
    }
}

/// `store` and the Redis settings.
pub(super) fn load(s: &Settings) -> Result<StoreSetting, ConfigError> {
    let (cert, key) = (&s.store_client_cert_file, &s.store_client_key_file);
    let client_certificate = ClientCertificate::from_settings(cert, key)?;
    let store = match s.store.value.as_str() {
        "memory" => StoreSetting::Memory,
        "none" => StoreSetting::None,
        url => {
            let tls = RedisStore::uses_tls(url).map_err(|e| {
                s.store
                    .invalid(format!("{e} (it must be memory, none or a Redis URL)"))
            })?;
            StoreSetting::Redis(RedisSetting {
                url: url.to_owned(),
                tls,
                ca_file: s.store_ca_file.value.clone(),
                client_certificate: client_certificate.clone(),
                timeout: s.store_timeout.value,
                kept_turns_bytes: s.store_kept_turns_bytes.value.0,
            })
        }
    };
    let uses_tls = matches!(&store, StoreSetting::Redis(redis) if redis.tls);
    let tls_only = "it applies to a Redis store over TLS only (rediss:// or rediss+cluster://)";
    if !uses_tls && s.store_ca_file.value.is_some() {
        return Err(s.store_ca_file.invalid(tls_only));
    }
    if !uses_tls && client_certificate.is_some() {
        return Err(cert.invalid(tls_only));
    }
    Ok(store)
}
