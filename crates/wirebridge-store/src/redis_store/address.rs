//! What a store URL names: one server, or a Redis Cluster reached through
//! seed nodes.
//!
//! - One server: `redis://[user:password@]host[:port][/db]`, `rediss://…`
//!   for TLS, `valkey://` and `valkeys://` alike, or a Unix socket
//!   (`redis+unix:///path`, `unix:///path`).
//! - A cluster: `redis+cluster://[user:password@]host:port[,host:port…]`,
//!   `rediss+cluster://…` for TLS (`valkey+cluster://`, `valkeys+cluster://`
//!   alike): the nodes the client first asks for the cluster's layout, one
//!   or more; it finds the others itself.
//!
//! No message here repeats the user or password of a URL.

use super::RedisConfigError;

/// What a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Address {
    /// One server, at a URL the redis crate reads as it is.
    Single(String),
    /// A cluster: one single-server URL per seed node, all with the URL's
    /// credentials, database and query.
    Cluster(Vec<String>),
}

/// Schemes of one server, TLS or not.
const SINGLE: [(&str, bool); 7] = [
    ("redis", false),
    ("rediss", true),
    ("valkey", false),
    ("valkeys", true),
    ("redis+unix", false),
    ("valkey+unix", false),
    ("unix", false),
];

/// A parsed URL, and whether it asks for TLS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Parsed {
    /// What the URL names.
    pub(super) address: Address,
    /// Whether connections use TLS.
    pub(super) tls: bool,
}

/// Reads a store URL.
pub(super) fn parse(url: &str) -> Result<Parsed, RedisConfigError> {
    let invalid = |why: &str| RedisConfigError::Url(format!("'{}' {why}", redact(url)));
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(invalid("is not a URL"));
    };
    if url.contains('#') {
        // The redis crate reads `#insecure` as "skip certificate checks";
        // give the server's CA instead.
        return Err(invalid(
            "has a #fragment: certificate checks cannot be turned off (set the CA \
             certificate that signed the server's instead)",
        ));
    }
    let (base, cluster) = match scheme.strip_suffix("+cluster") {
        Some(base) => (base, true),
        None => (scheme, false),
    };
    let Some(&(_, tls)) = SINGLE.iter().find(|(known, _)| *known == base) else {
        return Err(invalid(
            "is not a redis://, rediss://, valkey://, valkeys://, redis+unix://, \
             redis+cluster:// or rediss+cluster:// URL",
        ));
    };
    if !cluster {
        return Ok(Parsed {
            address: Address::Single(url.to_owned()),
            tls,
        });
    }
    if base.ends_with("unix") {
        return Err(invalid(
            "names a cluster by Unix socket: give host:port seeds",
        ));
    }
    // `[user:password@]seeds[/db][?query]`: the userinfo ends at the last `@`
    // before the path.
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (Some(userinfo), hosts),
        None => (None, authority),
    };
    let seeds: Vec<String> = hosts
        .split(',')
        .map(str::trim)
        .map(|host| {
            if host.is_empty() {
                return Err(invalid(
                    "has an empty seed node (seeds are host:port,host:port)",
                ));
            }
            let userinfo = userinfo.map_or(String::new(), |u| format!("{u}@"));
            Ok(format!("{base}://{userinfo}{host}{tail}"))
        })
        .collect::<Result<_, _>>()?;
    Ok(Parsed {
        address: Address::Cluster(seeds),
        tls,
    })
}

/// `url` with the user and password of its authority replaced by `***`:
/// what messages may show.
pub(crate) fn redact(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    match url[start..end].rfind('@') {
        Some(at) => format!("{}***@{}", &url[..start], &url[start + at + 1..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(url: &str, tls: bool) {
        assert_eq!(
            parse(url),
            Ok(Parsed {
                address: Address::Single(url.to_owned()),
                tls
            }),
            "{url}"
        );
    }

    #[test]
    fn one_server() {
        single("redis://127.0.0.1:6379/0", false);
        single("redis://user:pass@host/2", false);
        single("rediss://host:6380", true);
        single("valkey://host", false);
        single("valkeys://host", true);
        single("redis+unix:///run/redis.sock", false);
        single("unix:///run/redis.sock", false);
    }

    #[test]
    fn cluster_seeds_share_credentials_and_tail() {
        let parsed =
            parse("redis+cluster://u:p%40ss@a:7000,b:7001,[::1]:7002/0?protocol=resp3").unwrap();
        assert!(!parsed.tls);
        assert_eq!(
            parsed.address,
            Address::Cluster(vec![
                "redis://u:p%40ss@a:7000/0?protocol=resp3".into(),
                "redis://u:p%40ss@b:7001/0?protocol=resp3".into(),
                "redis://u:p%40ss@[::1]:7002/0?protocol=resp3".into(),
            ])
        );
        let parsed = parse("rediss+cluster://h:1").unwrap();
        assert!(parsed.tls);
        assert_eq!(
            parsed.address,
            Address::Cluster(vec!["rediss://h:1".into()])
        );
        let parsed = parse("valkey+cluster://h:1, h:2").unwrap();
        assert_eq!(
            parsed.address,
            Address::Cluster(vec!["valkey://h:1".into(), "valkey://h:2".into()])
        );
    }

    #[test]
    fn refusals_never_repeat_the_password() {
        for url in [
            "http://u:secret@h",
            "redis+cluster://u:secret@a:1,,b:2",
            "redis+cluster://u:secret@",
            "rediss://u:secret@h#insecure",
            "redis+unix+cluster://u:secret@h",
            "u:secret@h",
        ] {
            let Err(RedisConfigError::Url(message)) = parse(url) else {
                panic!("{url} was accepted");
            };
            assert!(!message.contains("secret"), "{message}");
        }
    }

    #[test]
    fn redaction() {
        assert_eq!(redact("redis://u:p@h:1/0"), "redis://***@h:1/0");
        assert_eq!(redact("redis://:p@h"), "redis://***@h");
        assert_eq!(redact("redis://h:1/0?x=@"), "redis://h:1/0?x=@");
        assert_eq!(
            redact("redis+cluster://u:p@a:1,b:2"),
            "redis+cluster://***@a:1,b:2"
        );
        assert_eq!(redact("u:p@h"), "***@h");
    }
}
