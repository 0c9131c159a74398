//! Where responses are kept: `store` (memory, none, or a Redis URL), and
//! for Redis the TLS files and the timeout. Each from the environment, a
//! flag or the file.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use wirebridge_store::RedisStore;

use super::duration::DurationSetting;
use super::upstream::redact;
use super::{pick, value, ConfigError, FileConfig, Origin, ServeFlags};

/// How long Redis may take to connect, to answer a command, and to finish a
/// store operation as a whole, before the request that needs it gets a 503.
pub const DEFAULT_STORE_TIMEOUT: Duration = RedisStore::DEFAULT_TIMEOUT;

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
            .finish()
    }
}

/// The files of a client certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    /// The certificate chain, PEM.
    pub cert_file: PathBuf,
    /// Its private key, PEM.
    pub key_file: PathBuf,
}

/// `store` and the Redis settings.
pub(super) fn load(
    file: &FileConfig,
    flags: &ServeFlags,
    env: &dyn Fn(&str) -> Option<String>,
    origin: &Origin<'_>,
) -> Result<StoreSetting, ConfigError> {
    let path = |var: &str, flag: &Option<String>, file: &Option<toml::Spanned<String>>| {
        let (text, at) = pick(env(var), flag.clone(), file, origin);
        (text.map(PathBuf::from), at)
    };
    let (ca_file, ca_at) = path(
        "WIREBRIDGE_STORE_CA_FILE",
        &flags.store_ca_file,
        &file.store_ca_file,
    );
    let (cert_file, cert_at) = path(
        "WIREBRIDGE_STORE_CLIENT_CERT_FILE",
        &flags.store_client_cert_file,
        &file.store_client_cert_file,
    );
    let (key_file, key_at) = path(
        "WIREBRIDGE_STORE_CLIENT_KEY_FILE",
        &flags.store_client_key_file,
        &file.store_client_key_file,
    );
    let client_certificate = match (cert_file, key_file) {
        (Some(cert_file), Some(key_file)) => Some(ClientCertificate {
            cert_file,
            key_file,
        }),
        (None, None) => None,
        (Some(_), None) => {
            return Err(value(
                "store_client_cert_file",
                &cert_at,
                "store_client_key_file must be set too",
            ))
        }
        (None, Some(_)) => {
            return Err(value(
                "store_client_key_file",
                &key_at,
                "store_client_cert_file must be set too",
            ))
        }
    };
    let timeout = DurationSetting {
        key: "store_timeout",
        env: env("WIREBRIDGE_STORE_TIMEOUT"),
        flag: flags.store_timeout.as_deref(),
        file: file.store_timeout.as_ref(),
        default: DEFAULT_STORE_TIMEOUT,
    }
    .resolve(origin)?;

    let (store, store_at) = pick(
        env("WIREBRIDGE_STORE"),
        flags.store.clone(),
        &file.store,
        origin,
    );
    let store = match store.as_deref().unwrap_or("memory") {
        "memory" => StoreSetting::Memory,
        "none" => StoreSetting::None,
        url => {
            let tls = RedisStore::uses_tls(url).map_err(|e| {
                value(
                    "store",
                    &store_at,
                    format!("{e} (it must be memory, none or a Redis URL)"),
                )
            })?;
            StoreSetting::Redis(RedisSetting {
                url: url.to_owned(),
                tls,
                ca_file: ca_file.clone(),
                client_certificate: client_certificate.clone(),
                timeout,
            })
        }
    };
    let uses_tls = matches!(&store, StoreSetting::Redis(redis) if redis.tls);
    if !uses_tls {
        let set = [
            ("store_ca_file", ca_file.is_some(), &ca_at),
            (
                "store_client_cert_file",
                client_certificate.is_some(),
                &cert_at,
            ),
        ];
        if let Some((key, _, at)) = set.into_iter().find(|(_, set, _)| *set) {
            return Err(value(
                key,
                at,
                "it applies to a Redis store over TLS only (rediss:// or rediss+cluster://)",
            ));
        }
    }
    Ok(store)
}
