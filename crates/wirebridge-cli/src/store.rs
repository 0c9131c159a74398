//! Opening the configured response store. A Redis store is made without
//! waiting for Redis: the bridge starts and serves what needs no store while
//! Redis is down, and uses it once it answers.

mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wirebridge_store::{MemoryStore, RedisConfigError, RedisStore, ResponseStore};

use crate::config::{RedisSetting, StateSettings, StoreSetting};
use watch::WatchedStore;

/// Why the configured store cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum StoreSetupError {
    /// A certificate or key file cannot be read.
    #[error("cannot read {what} {path}: {source}")]
    File {
        /// The setting that names the file.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The Redis settings cannot be used; the message never repeats a
    /// password.
    #[error("cannot use the Redis store: {0}")]
    Redis(RedisConfigError),
}

/// The store a setting names, opened.
pub struct OpenedStore {
    /// The store, if any.
    pub store: Option<Arc<dyn ResponseStore>>,
    /// The same store when it is Redis, for readiness checks.
    pub redis: Option<Arc<RedisStore>>,
}

/// The store `setting` names, if any. A Redis store is checked once with a
/// `PING`; if Redis does not answer, that is logged and the store is used
/// all the same.
pub async fn open(
    setting: &StoreSetting,
    state: &StateSettings,
) -> Result<OpenedStore, StoreSetupError> {
    match setting {
        StoreSetting::None => Ok(OpenedStore {
            store: None,
            redis: None,
        }),
        StoreSetting::Memory => Ok(OpenedStore {
            store: Some(Arc::new(
                MemoryStore::new()
                    .max_entries_per_tenant(state.tenant_max_entries)
                    .max_bytes_per_tenant(state.tenant_max_bytes)
                    .max_tenants(state.max_tenants),
            )),
            redis: None,
        }),
        StoreSetting::Redis(redis) => {
            let store = Arc::new(redis_store(redis)?);
            let shown = redis.shown();
            let available = match store.ping().await {
                Ok(()) => {
                    tracing::info!(store = %shown, "the response store answers");
                    true
                }
                Err(e) => {
                    tracing::warn!(
                        store = %shown,
                        error = %e,
                        "the response store is unavailable: requests that need it get a 503 until it answers"
                    );
                    false
                }
            };
            let watched: Arc<dyn ResponseStore> =
                Arc::new(WatchedStore::new(store.clone(), shown, available));
            Ok(OpenedStore {
                store: Some(watched),
                redis: Some(store),
            })
        }
    }
}

/// The Redis store of `setting`, not yet connected.
fn redis_store(setting: &RedisSetting) -> Result<RedisStore, StoreSetupError> {
    let mut builder = RedisStore::builder(&setting.url)
        .timeout(setting.timeout)
        .kept_turns(setting.kept_turns_bytes);
    if let Some(path) = &setting.ca_file {
        builder = builder.ca_certificate(read("store_ca_file", path)?);
    }
    if let Some(client) = &setting.client_certificate {
        builder = builder.client_certificate(
            read("store_client_cert_file", &client.cert_file)?,
            read("store_client_key_file", &client.key_file)?,
        );
    }
    builder.build().map_err(StoreSetupError::Redis)
}

fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, StoreSetupError> {
    std::fs::read(path).map_err(|source| StoreSetupError::File {
        what,
        path: path.to_owned(),
        source,
    })
}
