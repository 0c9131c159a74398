//! How a [`RedisStore`] reaches Redis: the URL, TLS certificates and the
//! timeout.

use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::ConnectionManagerConfig;
use redis::cluster::{ClusterClient, ClusterConfig};
use redis::{ClientTlsConfig, TlsCertificates};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::address::{self, Address};
use super::connection::{Connection, Single};
use super::conversations;
use super::kept::KeptTurns;
use super::scripts::Lua;
use super::{RedisConfigError, RedisStore, Scripts};
use crate::StoreError;

/// Settings of a [`RedisStore`] before it exists: made by
/// [`RedisStore::builder`].
///
/// ```no_run
/// # async fn run() -> Result<(), wirebridge_store::StoreError> {
/// use std::time::Duration;
/// use wirebridge_store::RedisStore;
///
/// let ca = std::fs::read("/etc/redis/ca.pem").expect("the CA certificate");
/// let store = RedisStore::builder("rediss://bridge:secret@redis.internal:6380/0")
///     .ca_certificate(ca)
///     .timeout(Duration::from_secs(1))
///     .connect()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisStoreBuilder {
    url: String,
    timeout: Duration,
    ca: Option<Vec<u8>>,
    client: Option<(Vec<u8>, Vec<u8>)>,
    kept_turns: usize,
}

impl RedisStoreBuilder {
    pub(super) fn new(url: &str) -> Self {
        Self {
            url: url.to_owned(),
            timeout: RedisStore::DEFAULT_TIMEOUT,
            ca: None,
            client: None,
            kept_turns: RedisStore::DEFAULT_KEPT_TURNS,
        }
    }

    /// Bounds connecting, each reply and each store operation as a whole
    /// [default: [`RedisStore::DEFAULT_TIMEOUT`], 2 s].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Bounds the stored turns the store keeps in the process, in bytes
    /// [default: [`RedisStore::DEFAULT_KEPT_TURNS`], 64 MiB]; the
    /// conversations used longest ago go first. 0 keeps none.
    ///
    /// A turn the store has read or saved is kept with the generation of
    /// its conversation, which Redis changes whenever a stored response is
    /// saved again or deleted (by any process) but not when one is added.
    /// Reading the conversation again then has Redis send only the turns
    /// the store does not keep, if the generation is still the one they
    /// were kept at, and all of them otherwise: without this, each turn of
    /// a conversation has Redis send, and the store read, its whole
    /// history.
    pub fn kept_turns(mut self, max_bytes: usize) -> Self {
        self.kept_turns = max_bytes;
        self
    }

    /// Trusts the CA certificates of `pem` (PEM text) for a `rediss://` server,
    /// instead of the system's: for a server whose certificate a private CA
    /// signed.
    pub fn ca_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca = Some(pem.into());
        self
    }

    /// Presents this certificate chain and private key (PEM text) to a
    /// `rediss://` server that asks clients for one (`tls-auth-clients`).
    pub fn client_certificate(
        mut self,
        chain: impl Into<Vec<u8>>,
        key: impl Into<Vec<u8>>,
    ) -> Self {
        self.client = Some((chain.into(), key.into()));
        self
    }

    /// The store, without connecting: the first operation connects, and a
    /// server that is down now is used once it is up. Fails only when the
    /// URL or a certificate cannot be used. Needs a Tokio runtime.
    pub fn build(self) -> Result<RedisStore, RedisConfigError> {
        let parsed = address::parse(&self.url)?;
        let certificates = self.certificates(parsed.tls)?;
        if parsed.tls {
            // rustls takes its crypto from the process default; ring unless
            // the application chose otherwise already.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        let timeout = self.timeout;
        let connection = match parsed.address {
            Address::Single(url) => {
                let client = match certificates {
                    Some(certificates) => redis::Client::build_with_tls(url.as_str(), certificates),
                    None => redis::Client::open(url.as_str()),
                }
                .map_err(refused)?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout))
                    // Every failing operation starts a new attempt: no
                    // backoff loop that operations would wait behind.
                    .set_number_of_retries(0);
                let single = Single::new(client, config).map_err(refused)?;
                Connection::Single(Arc::new(single))
            }
            Address::Cluster(seeds) => {
                let mut builder = ClusterClient::builder(seeds.iter().map(String::as_str))
                    .connection_timeout(timeout)
                    .response_timeout(timeout);
                if let Some(certificates) = certificates {
                    builder = builder.certs(certificates);
                }
                let client = builder.build().map_err(refused)?;
                let config = ClusterConfig::new()
                    .set_connection_timeout(timeout)
                    .set_response_timeout(timeout);
                Connection::Cluster(client.get_pending_async_connection_with_config(config))
            }
        };
        Ok(RedisStore {
            connection,
            prefix: RedisStore::DEFAULT_PREFIX.to_owned(),
            ttl: RedisStore::DEFAULT_TTL,
            timeout,
            scripts: Arc::new(Scripts {
                save: Lua::save(),
                get: Lua::get(),
                delete: Lua::delete(),
                turns: Lua::turns(),
                chain: super::chain::script(),
                conversations: conversations::Scripts::new(),
            }),
            round_trips: Arc::new(AtomicU64::new(0)),
            kept: Arc::new(KeptTurns::new(self.kept_turns)),
            turns_read: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The store, once the server has answered a `PING` within the timeout.
    ///
    /// Fails with [`StoreError::Unavailable`] when the settings cannot be
    /// used or the server does not answer: the message never repeats the
    /// URL's password.
    pub async fn connect(self) -> Result<RedisStore, StoreError> {
        let store = self.build()?;
        store.ping().await?;
        Ok(store)
    }

    /// The certificates to use, checked: none without TLS.
    fn certificates(&self, tls: bool) -> Result<Option<TlsCertificates>, RedisConfigError> {
        if self.ca.is_none() && self.client.is_none() {
            return Ok(None);
        }
        if !tls {
            return Err(RedisConfigError::Tls(
                "a CA or client certificate is set, but the URL does not use TLS (rediss://)"
                    .into(),
            ));
        }
        if let Some(ca) = &self.ca {
            certificate_count(ca, "CA certificate")?;
        }
        if let Some((chain, key)) = &self.client {
            certificate_count(chain, "client certificate")?;
            PrivateKeyDer::from_pem_slice(key).map_err(|e| {
                RedisConfigError::Tls(format!("the client key holds no private key: {e}"))
            })?;
        }
        Ok(Some(TlsCertificates {
            client_tls: self
                .client
                .clone()
                .map(|(client_cert, client_key)| ClientTlsConfig {
                    client_cert,
                    client_key,
                }),
            root_cert: self.ca.clone(),
        }))
    }
}

impl fmt::Debug for RedisStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStoreBuilder")
            .field("url", &address::redact(&self.url))
            .field("timeout", &self.timeout)
            .field("ca", &self.ca.is_some())
            .field("client_certificate", &self.client.is_some())
            .finish()
    }
}

/// Checks that `pem` holds at least one readable certificate.
fn certificate_count(pem: &[u8], what: &str) -> Result<(), RedisConfigError> {
    let mut count = 0;
    for certificate in CertificateDer::pem_slice_iter(pem) {
        certificate.map_err(|e| RedisConfigError::Tls(format!("the {what} is unreadable: {e}")))?;
        count += 1;
    }
    if count == 0 {
        return Err(RedisConfigError::Tls(format!(
            "the {what} holds no PEM certificate"
        )));
    }
    Ok(())
}

/// The redis crate refused the settings. Its messages name no part of the
/// URL.
fn refused(e: redis::RedisError) -> RedisConfigError {
    RedisConfigError::Refused(e.to_string())
}
