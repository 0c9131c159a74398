//! An `https://` upstream's TLS: the roots its certificate is checked
//! against (the public ones, and those of `upstream_ca_file`, a private
//! CA's), and the certificate the bridge shows an upstream that asks for
//! one (`upstream_client_cert_file` and its key).

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

use crate::config::{ClientCertificate, UpstreamTlsFiles};

/// An upstream TLS file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamTlsError {
    /// A file cannot be read.
    #[error("cannot read {setting} {path}: {source}")]
    Read {
        /// The setting naming it.
        setting: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file of certificates holds no `CERTIFICATE` block.
    #[error("{setting} {path} holds no PEM certificate")]
    NoCertificate {
        /// The setting naming it.
        setting: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// A certificate cannot be read, or a CA's cannot be one.
    #[error("{setting} {path}: certificate {number}: {reason}")]
    Invalid {
        /// The setting naming it.
        setting: &'static str,
        /// The file.
        path: PathBuf,
        /// Its place in the file, from 1.
        number: usize,
        /// Why.
        reason: String,
    },
    /// The key file holds no private key.
    #[error("upstream_client_key_file {path} holds no PEM private key: {reason}")]
    NoKey {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The certificate and the key do not go together, or the key is of a
    /// kind TLS cannot use.
    #[error("upstream_client_cert_file and upstream_client_key_file cannot be used together: {0}")]
    Refused(String),
}

/// The TLS settings for an `https://` upstream: its certificate checked
/// against the public roots and `files`' CA certificates, and the client
/// certificate of `files` shown when it asks for one.
pub fn client_config(files: &UpstreamTlsFiles) -> Result<ClientConfig, UpstreamTlsError> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(path) = &files.ca_file {
        roots.roots.extend(read_ca_file(path)?.roots);
    }
    // ring, as the Redis store's TLS and the rest of the build use, rather
    // than rustls's default provider.
    let builder =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("ring offers rustls's default protocol versions")
            .with_root_certificates(roots);
    let Some(client): Option<&ClientCertificate> = files.client_certificate.as_ref() else {
        return Ok(builder.with_no_client_auth());
    };
    let chain = read_certificates("upstream_client_cert_file", &client.cert_file)?;
    let key = read_key(&client.key_file)?;
    builder
        .with_client_auth_cert(chain, key)
        .map_err(|e| UpstreamTlsError::Refused(e.to_string()))
}

fn read(setting: &'static str, path: &Path) -> Result<Vec<u8>, UpstreamTlsError> {
    std::fs::read(path).map_err(|source| UpstreamTlsError::Read {
        setting,
        path: path.to_owned(),
        source,
    })
}

/// The certificates of a PEM file, at least one.
fn read_certificates(
    setting: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, UpstreamTlsError> {
    let pem = read(setting, path)?;
    let mut certificates = Vec::new();
    for (at, certificate) in CertificateDer::pem_slice_iter(&pem).enumerate() {
        certificates.push(certificate.map_err(|e| UpstreamTlsError::Invalid {
            setting,
            path: path.to_owned(),
            number: at + 1,
            reason: e.to_string(),
        })?);
    }
    if certificates.is_empty() {
        return Err(UpstreamTlsError::NoCertificate {
            setting,
            path: path.to_owned(),
        });
    }
    Ok(certificates)
}

/// The CA certificates of a PEM file, each checked to be usable as one.
fn read_ca_file(path: &Path) -> Result<RootCertStore, UpstreamTlsError> {
    let setting = "upstream_ca_file";
    let mut roots = RootCertStore::empty();
    for (at, certificate) in read_certificates(setting, path)?.into_iter().enumerate() {
        roots
            .add(certificate)
            .map_err(|e| UpstreamTlsError::Invalid {
                setting,
                path: path.to_owned(),
                number: at + 1,
                reason: e.to_string(),
            })?;
    }
    Ok(roots)
}

/// The private key of a PEM file.
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, UpstreamTlsError> {
    let pem = read("upstream_client_key_file", path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| UpstreamTlsError::NoKey {
        path: path.to_owned(),
        reason: e.to_string(),
    })
}

/// The TLS error `error` is or wraps. The TLS stream reports rustls's
/// error inside an I/O error, and the connector wraps that in another:
/// their `source` skips what they wrap, so it is looked for inside them.
pub(super) fn tls_error<'e>(mut error: &'e (dyn Error + 'static)) -> Option<&'e rustls::Error> {
    loop {
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        error = error.downcast_ref::<std::io::Error>()?.get_ref()?;
    }
}

/// Fixed words for a client about a failed TLS handshake: rustls's own
/// messages may name the host.
pub(super) fn failure(error: &rustls::Error) -> &'static str {
    match error {
        rustls::Error::InvalidCertificate(_) => "its TLS certificate could not be verified",
        _ => "the TLS handshake failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in the system's temporary directory, removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn with(text: &str) -> Self {
            use std::sync::atomic::{AtomicUsize, Ordering};
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let name = format!("wirebridge-ca-test-{}-{n}.pem", std::process::id());
            let path = std::env::temp_dir().join(name);
            std::fs::write(&path, text).unwrap();
            Self(path)
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    #[test]
    fn a_certificate_error_is_found_inside_the_io_errors_around_it() {
        let tls = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        let inner = std::io::Error::new(std::io::ErrorKind::InvalidData, tls);
        let outer = std::io::Error::other(inner);
        let found = tls_error(&outer).map(failure);
        assert_eq!(found, Some("its TLS certificate could not be verified"));
        let plain = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert_eq!(tls_error(&plain), None);
    }

    fn with_ca_file(path: &Path) -> UpstreamTlsFiles {
        UpstreamTlsFiles {
            ca_file: Some(path.to_owned()),
            client_certificate: None,
        }
    }

    fn error(files: &UpstreamTlsFiles) -> String {
        client_config(files).unwrap_err().to_string()
    }

    #[test]
    fn a_file_without_certificates_is_refused_by_name() {
        let file = TempFile::with("not a certificate\n");
        let e = error(&with_ca_file(&file.0));
        assert!(
            e.contains("upstream_ca_file") && e.contains("no PEM certificate"),
            "{e}"
        );
        let e = error(&with_ca_file(Path::new("/nonexistent/ca.pem")));
        assert!(
            e.starts_with("cannot read upstream_ca_file /nonexistent/ca.pem"),
            "{e}"
        );
    }

    #[test]
    fn a_block_that_is_not_a_certificate_is_named_by_its_place() {
        let file = TempFile::with(
            "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n",
        );
        let e = error(&with_ca_file(&file.0));
        assert!(
            e.contains("upstream_ca_file") && e.contains("certificate 1:"),
            "{e}"
        );
    }

    #[test]
    fn a_client_certificate_file_and_key_file_are_each_named() {
        let not_pem = TempFile::with("nothing here\n");
        let files = |cert: &Path, key: &Path| UpstreamTlsFiles {
            ca_file: None,
            client_certificate: Some(ClientCertificate {
                cert_file: cert.to_owned(),
                key_file: key.to_owned(),
            }),
        };
        let missing = Path::new("/nonexistent/client.pem");
        let e = error(&files(missing, &not_pem.0));
        assert!(
            e.starts_with("cannot read upstream_client_cert_file /nonexistent/client.pem"),
            "{e}"
        );
        let e = error(&files(&not_pem.0, &not_pem.0));
        assert!(
            e.starts_with("upstream_client_cert_file") && e.contains("no PEM certificate"),
            "{e}"
        );
    }
}
