//! A client certificate named by two settings, its chain's file and its
//! key's: the Redis store's and the upstream's alike.

use std::path::PathBuf;

use super::declare::Got;
use super::ConfigError;

/// The files of a client certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    /// The certificate chain, PEM.
    pub cert_file: PathBuf,
    /// Its private key, PEM.
    pub key_file: PathBuf,
}

impl ClientCertificate {
    /// The certificate `cert` and `key` name: both set, or neither.
    pub(super) fn from_settings(
        cert: &Got<Option<PathBuf>>,
        key: &Got<Option<PathBuf>>,
    ) -> Result<Option<Self>, ConfigError> {
        match (&cert.value, &key.value) {
            (Some(cert_file), Some(key_file)) => Ok(Some(Self {
                cert_file: cert_file.clone(),
                key_file: key_file.clone(),
            })),
            (None, None) => Ok(None),
            (Some(_), None) => Err(cert.invalid(format!("{} must be set too", key.key))),
            (None, Some(_)) => Err(key.invalid(format!("{} must be set too", cert.key))),
        }
    }
}
