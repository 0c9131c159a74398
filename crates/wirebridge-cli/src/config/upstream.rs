//! How the upstream is reached and named: its URL, with its credentials
//! (`http://user:pass@host/v1`) split off (they become an `Authorization:
//! Basic` header, and are never part of a URI that could be logged or
//! shown), the files of its TLS, and the label error bodies use.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::client_certificate::ClientCertificate;
use super::types::{expected, Value};
use super::{ConfigError, Settings, Upstream};

/// Longest upstream label: it is repeated in every error body.
const MAX_LABEL_CHARS: usize = 100;

/// The most replicas one bridge spreads its requests over: far more than
/// one backend runs, and a bound on the work of each choice.
const MAX_REPLICAS: usize = 256;

/// `demo`, an `http://` or `https://` base URL, or several URLs: the
/// replicas of one backend (comma-separated in a flag or a variable, the
/// flag repeated, an array in the file).
impl Value for Upstream {
    const VALUE_NAME: &'static str = "URL";
    const REPEATED: bool = true;

    fn parse(text: &str) -> Result<Self, String> {
        let items: Vec<&str> = text.split(',').map(str::trim).collect();
        upstreams(&items)
    }

    fn from_toml(value: &toml::Value) -> Result<Self, String> {
        match value {
            toml::Value::String(text) => Self::parse(text),
            toml::Value::Array(items) => {
                let items = items
                    .iter()
                    .map(|item| item.as_str().ok_or_else(|| expected("a URL string", item)))
                    .collect::<Result<Vec<_>, _>>()?;
                upstreams(&items)
            }
            other => Err(expected("a URL or an array of URLs", other)),
        }
    }
}

/// One URL (or `demo`), or the replicas of one backend: two URLs or more,
/// none twice.
fn upstreams(items: &[&str]) -> Result<Upstream, String> {
    match items {
        [] => Err("no URL is given".into()),
        ["demo"] => Ok(Upstream::Demo),
        [url] => parse(url).map(Upstream::Url),
        many => {
            let mut urls: Vec<UpstreamUrl> = Vec::with_capacity(many.len());
            for item in many {
                if item.is_empty() {
                    return Err("an empty URL in the list".into());
                }
                if *item == "demo" {
                    return Err("'demo' cannot be one of several upstreams".into());
                }
                let url = parse(item)?;
                if urls.iter().any(|seen| seen.uri == url.uri) {
                    return Err(format!("'{}' is listed twice", url.uri));
                }
                urls.push(url);
            }
            if urls.len() > MAX_REPLICAS {
                return Err(format!("more than {MAX_REPLICAS} upstream URLs"));
            }
            Ok(Upstream::Replicas(urls))
        }
    }
}

/// The files of an `https://` upstream's TLS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpstreamTlsFiles {
    /// CA certificates (PEM) its certificate may be signed by, besides the
    /// public roots.
    pub ca_file: Option<PathBuf>,
    /// The certificate the bridge shows an upstream that asks for one.
    pub client_certificate: Option<ClientCertificate>,
}

/// `upstream_ca_file` and the client certificate: for an `https://`
/// upstream only, the certificate and its key together.
pub(super) fn tls_files(s: &Settings) -> Result<UpstreamTlsFiles, ConfigError> {
    let (cert, key) = (&s.upstream_client_cert_file, &s.upstream_client_key_file);
    let client_certificate = ClientCertificate::from_settings(cert, key)?;
    let https = s
        .upstream
        .value
        .urls()
        .iter()
        .any(|url| url.uri.scheme_str() == Some("https"));
    let https_only = "it applies to an https:// upstream only";
    if !https && s.upstream_ca_file.value.is_some() {
        return Err(s.upstream_ca_file.invalid(https_only));
    }
    if !https && client_certificate.is_some() {
        return Err(cert.invalid(https_only));
    }
    Ok(UpstreamTlsFiles {
        ca_file: s.upstream_ca_file.value.clone(),
        client_certificate,
    })
}

/// The name error bodies give the upstream: one line of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Label(pub String);

impl Value for Label {
    const VALUE_NAME: &'static str = "TEXT";

    fn parse(text: &str) -> Result<Self, String> {
        let label = text.trim();
        if label.is_empty() || label.chars().any(char::is_control) {
            return Err("it must be one non-empty line of text".into());
        }
        if label.chars().count() > MAX_LABEL_CHARS {
            return Err(format!("it is longer than {MAX_LABEL_CHARS} characters"));
        }
        Ok(Self(label.to_owned()))
    }
}

/// An upstream base URL, without its userinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamUrl {
    /// Scheme, host, port and API path: safe to log.
    pub uri: http::Uri,
    /// The URL's `user:password`, if it had one.
    pub credentials: Option<Credentials>,
}

/// A user and password taken from a URL, percent-decoded. Their `Debug`
/// never shows them.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    user: Vec<u8>,
    password: Vec<u8>,
}

impl Credentials {
    /// `user:password`, the bytes `Authorization: Basic` encodes.
    pub fn basic_pair(&self) -> Vec<u8> {
        let mut pair = self.user.clone();
        pair.push(b':');
        pair.extend_from_slice(&self.password);
        pair
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credentials(redacted)")
    }
}

/// Parses an `http://` or `https://` base URL. Messages never repeat the
/// userinfo: a URL that fails to parse may still hold a password.
fn parse(url: &str) -> Result<UpstreamUrl, String> {
    let shown = redact(url);
    let uri: http::Uri = url
        .parse()
        .map_err(|e| format!("'{shown}' is not a URL: {e}"))?;
    let (Some(scheme @ ("http" | "https")), Some(authority)) = (uri.scheme_str(), uri.authority())
    else {
        return Err(format!(
            "'{shown}' must be an http:// or https:// URL, or 'demo'"
        ));
    };
    let Some((userinfo, host)) = authority.as_str().rsplit_once('@') else {
        return Ok(UpstreamUrl {
            uri,
            credentials: None,
        });
    };
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let credentials = Credentials {
        user: percent_decode(user).ok_or_else(|| bad_escape(&shown))?,
        password: percent_decode(password).ok_or_else(|| bad_escape(&shown))?,
    };
    let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str());
    let uri = http::Uri::builder()
        .scheme(scheme)
        .authority(host)
        .path_and_query(path_and_query)
        .build()
        .map_err(|e| format!("'{shown}' is not a URL: {e}"))?;
    Ok(UpstreamUrl {
        uri,
        credentials: Some(credentials),
    })
}

fn bad_escape(shown: &str) -> String {
    format!("'{shown}' has a malformed %-escape in its user or password")
}

/// The URL with everything before the authority's last `@` replaced: what
/// error messages and logs may show.
pub(super) fn redact(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    match url[start..end].rfind('@') {
        Some(at) => format!("{}***@{}", &url[..start], &url[start + at + 1..]),
        None => url.to_owned(),
    }
}

/// `%XX` escapes decoded; `None` for a malformed one.
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// `upstream_resolve_every`: for upstream URLs (not the demo), and not
/// zero, which would resolve without pause.
pub(super) fn resolve_every(s: &Settings) -> Result<Option<Duration>, ConfigError> {
    let every = &s.upstream_resolve_every;
    match every.value {
        Some(_) if s.upstream.value.urls().is_empty() => {
            Err(every.invalid("it applies to upstream URLs only, not the demo upstream"))
        }
        Some(duration) if duration.is_zero() => Err(every.invalid("it must be more than zero")),
        value => Ok(value),
    }
}

/// `replica_probe_every`: with replicas (several URLs, or names resolved
/// again), and not zero.
pub(super) fn probe_every(s: &Settings, resolved: bool) -> Result<Option<Duration>, ConfigError> {
    let every = &s.replica_probe_every;
    let replicas = matches!(s.upstream.value, Upstream::Replicas(_)) || resolved;
    match every.value {
        Some(_) if !replicas => {
            Err(every
                .invalid("it applies to several upstream URLs, or with upstream_resolve_every"))
        }
        Some(duration) if duration.is_zero() => Err(every.invalid("it must be more than zero")),
        value => Ok(value),
    }
}

/// A profile's `session_header`: a header name, and not one that carries
/// credentials or that HTTP itself reads.
pub(super) fn check_session_header(
    profile: &wirebridge_convert::BackendProfile,
    name: &super::declare::Got<String>,
) -> Result<(), ConfigError> {
    let Some(header) = &profile.session_header else {
        return Ok(());
    };
    let reserved = [
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "cookie",
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
    ];
    match http::HeaderName::from_bytes(header.as_bytes()) {
        Ok(parsed) if !reserved.contains(&parsed.as_str()) => Ok(()),
        Ok(_) => Err(name.invalid(format!(
            "its session_header '{header}' is a header the bridge or HTTP sets itself"
        ))),
        Err(_) => Err(name.invalid(format!(
            "its session_header '{header}' is not a header name"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_split_off_and_decoded() {
        let url = parse("http://alice:p%40ss%3Aw0rd@127.0.0.1:8000/v1").unwrap();
        assert_eq!(url.uri.to_string(), "http://127.0.0.1:8000/v1");
        let credentials = url.credentials.unwrap();
        assert_eq!(credentials.basic_pair(), b"alice:p@ss:w0rd");
        assert_eq!(format!("{credentials:?}"), "Credentials(redacted)");

        let url = parse("https://:tok@example.com/api/v1?x=1").unwrap();
        assert_eq!(url.uri.to_string(), "https://example.com/api/v1?x=1");
        assert_eq!(url.credentials.unwrap().basic_pair(), b":tok");
        let url = parse("http://bob@[::1]:9").unwrap();
        assert_eq!(url.uri.to_string(), "http://[::1]:9/");
        assert_eq!(url.credentials.unwrap().basic_pair(), b"bob:");

        let plain = parse("http://h:1/v1").unwrap();
        assert_eq!(plain.credentials, None);
        assert_eq!(plain.uri.to_string(), "http://h:1/v1");
    }

    #[test]
    fn errors_never_repeat_the_userinfo() {
        for url in [
            "ftp://user:hunter2@host/v1",
            "http://user:hunter2@ho st/v1",
            "http://user:hunter2%zz@host/v1",
            "user:hunter2@host:8000/v1",
        ] {
            let err = parse(url).unwrap_err();
            assert!(!err.contains("hunter2"), "{err}");
            assert!(err.contains("***@"), "{err}");
        }
        assert_eq!(redact("http://a:b@c@h:1/p@q"), "http://***@h:1/p@q");
        assert_eq!(redact("http://h:1/v1"), "http://h:1/v1");
    }
}
