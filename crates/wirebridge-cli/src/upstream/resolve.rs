//! Upstream URLs whose host names are resolved again on an interval, each
//! address they resolve to a replica (`--upstream-resolve-every`): a
//! Kubernetes headless service answers with the address of every ready
//! pod, and pods come and go.
//!
//! Each address gets a client of its own that connects only there
//! ([`Dns::Pinned`]), while its URL keeps the name: the `Host` header and
//! the TLS server name are the name's, as with one upstream. A headless
//! service answers with addresses only, so the port is the URL's.

use std::collections::BTreeMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};
use tokio::task::JoinHandle;
use wirebridge_tower::Replicas;

use super::{Upstream, UpstreamOptions};
use crate::config::UpstreamUrl;

/// Resolves a host name to its addresses: the system's resolver, or one a
/// test answers for.
pub trait Resolver: Send + Sync + 'static {
    /// Every address `host` resolves to now.
    fn resolve(&self, host: &str) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send>>;
}

/// The system's resolver (`getaddrinfo`, which reads `/etc/hosts` and the
/// configured name servers).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve(&self, host: &str) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send>> {
        let host = host.to_owned();
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(found.map(|address| address.ip()).collect())
        })
    }
}

/// Where an upstream client's connections go: wherever the system's
/// resolver says its host is, or always one address.
#[derive(Clone)]
pub enum Dns {
    /// The host name, resolved for each new connection.
    System,
    /// One address of the host, the port the URL's.
    Pinned(IpAddr),
}

/// The addresses a connection is tried on.
pub type Addresses = std::vec::IntoIter<SocketAddr>;

impl tower::Service<Name> for Dns {
    type Response = Addresses;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Addresses>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        match self {
            Dns::System => {
                let mut system = GaiResolver::new();
                Box::pin(async move {
                    let found = tower::Service::call(&mut system, name).await?;
                    Ok(found.collect::<Vec<_>>().into_iter())
                })
            }
            // Port 0: the connector puts the URL's port in its place.
            Dns::Pinned(ip) => {
                let address = SocketAddr::new(*ip, 0);
                Box::pin(async move { Ok(vec![address].into_iter()) })
            }
        }
    }
}

/// Makes the client of one address of a URL.
type MakeUpstream = dyn Fn(&UpstreamUrl, Dns) -> Upstream + Send + Sync;

/// The replicas the upstream URLs resolve to, kept up to date.
pub struct Resolved {
    urls: Vec<UpstreamUrl>,
    make: Arc<MakeUpstream>,
    resolver: Arc<dyn Resolver>,
    /// The addresses of each URL last resolved: kept while its name does
    /// not resolve, so that a resolver that fails for a while leaves the
    /// set as it was.
    last: Vec<Vec<IpAddr>>,
}

impl Resolved {
    /// The URLs' replicas, each client made by `make` with the options of
    /// its URL.
    pub fn new(
        urls: Vec<UpstreamUrl>,
        resolver: Arc<dyn Resolver>,
        make: impl Fn(&UpstreamUrl, Dns) -> Upstream + Send + Sync + 'static,
    ) -> Self {
        let last = vec![Vec::new(); urls.len()];
        Self {
            urls,
            make: Arc::new(make),
            resolver,
            last,
        }
    }

    /// The replicas before any name was resolved: each URL as it is, its
    /// name resolved by each connection. The first answer replaces them.
    pub fn unresolved(&self) -> Vec<(String, Upstream)> {
        self.urls
            .iter()
            .map(|url| (url.uri.to_string(), (self.make)(url, Dns::System)))
            .collect()
    }

    /// Resolves every URL's name, and makes `replicas` the addresses found.
    /// A name that does not resolve keeps the addresses it had; while none
    /// ever resolved, the set stays as it is.
    pub async fn refresh(&mut self, replicas: &Replicas<Upstream>) {
        for (index, url) in self.urls.iter().enumerate() {
            let Some(host) = url.uri.host() else { continue };
            let host = host.trim_start_matches('[').trim_end_matches(']');
            match self.resolver.resolve(host).await {
                Ok(mut found) if !found.is_empty() => {
                    found.sort_unstable();
                    found.dedup();
                    self.last[index] = found;
                }
                Ok(_) => tracing::warn!(
                    upstream = index,
                    "an upstream name resolved to no address: its replicas stay as they were"
                ),
                Err(e) => tracing::warn!(
                    upstream = index,
                    error = %e,
                    "an upstream name did not resolve: its replicas stay as they were"
                ),
            }
        }
        // Named by URL and address, the same in every process.
        let by_name: BTreeMap<String, (usize, IpAddr)> = self
            .last
            .iter()
            .enumerate()
            .flat_map(|(index, found)| found.iter().map(move |&ip| (index, ip)))
            .map(|(index, ip)| (format!("{} at {ip}", self.urls[index].uri), (index, ip)))
            .collect();
        if by_name.is_empty() {
            return;
        }
        let names: Vec<String> = by_name.keys().cloned().collect();
        replicas.update(&names, |name| {
            let (index, ip) = by_name[name];
            (self.make)(&self.urls[index], Dns::Pinned(ip))
        });
    }

    /// Refreshes the set now and then every `every`, until the task is
    /// aborted.
    pub fn spawn(mut self, replicas: Replicas<Upstream>, every: Duration) -> JoinHandle<()> {
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                self.refresh(&replicas).await;
            }
        })
    }
}

/// The options of one URL's clients.
pub(super) fn options_for(
    url: &UpstreamUrl,
    key: Option<&str>,
    options: &UpstreamOptions,
) -> UpstreamOptions {
    UpstreamOptions {
        authorization: super::authorization(key, url.credentials.as_ref()),
        ..options.clone()
    }
}
