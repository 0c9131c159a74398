//! What an `https://` upstream's certificate is checked against: the
//! public roots, and the CA certificates of `upstream_ca_file` (a private
//! CA's, for a backend served inside a company's network).

use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

/// `upstream_ca_file` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamCaError {
    /// The file cannot be read.
    #[error("cannot read upstream_ca_file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no `CERTIFICATE` block.
    #[error("upstream_ca_file {path} holds no PEM certificate")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A certificate cannot be read, or cannot be a CA.
    #[error("upstream_ca_file {path}: certificate {number}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Its place in the file, from 1.
        number: usize,
        /// Why.
        reason: String,
    },
}

/// The CA certificates of a PEM file, each checked to be usable as one.
pub fn read_ca_file(path: &Path) -> Result<RootCertStore, UpstreamCaError> {
    let pem = std::fs::read(path).map_err(|source| UpstreamCaError::Read {
        path: path.to_owned(),
        source,
    })?;
    let invalid = |number: usize, reason: String| UpstreamCaError::Invalid {
        path: path.to_owned(),
        number,
        reason,
    };
    let mut roots = RootCertStore::empty();
    for (at, certificate) in CertificateDer::pem_slice_iter(&pem).enumerate() {
        let certificate = certificate.map_err(|e| invalid(at + 1, e.to_string()))?;
        roots
            .add(certificate)
            .map_err(|e| invalid(at + 1, e.to_string()))?;
    }
    if roots.is_empty() {
        return Err(UpstreamCaError::Empty {
            path: path.to_owned(),
        });
    }
    Ok(roots)
}

/// The TLS settings for an `https://` upstream: its certificate checked
/// against the public roots and `extra`.
pub(super) fn client_config(extra: Option<&RootCertStore>) -> ClientConfig {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    if let Some(extra) = extra {
        roots.roots.extend(extra.roots.iter().cloned());
    }
    // ring, as the Redis store's TLS and the rest of the build use, rather
    // than rustls's default provider.
    ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("ring offers rustls's default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth()
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

    #[test]
    fn a_file_without_certificates_is_refused_by_name() {
        let file = TempFile::with("not a certificate\n");
        let e = read_ca_file(&file.0).unwrap_err().to_string();
        assert!(
            e.contains("upstream_ca_file") && e.contains("no PEM certificate"),
            "{e}"
        );
        let e = read_ca_file(Path::new("/nonexistent/ca.pem"))
            .unwrap_err()
            .to_string();
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
        let e = read_ca_file(&file.0).unwrap_err().to_string();
        assert!(e.contains("certificate 1:"), "{e}");
    }
}
