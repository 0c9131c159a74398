//! The active probe of the replicas (`--replica-probe-every`): each
//! replica in the set is sent `GET {prefix}/models` on the interval, so
//! that one that stopped answering is left out before a conversation's
//! turn finds it, and one that came back is in again without waiting for
//! the rest of its back-off.

use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request};
use tokio::task::JoinHandle;
use tower::ServiceExt;
use wirebridge_tower::{NotSent, Replicas, RequestBody};

use super::Upstream;

/// The path probed, under the prefix every upstream URL maps `/v1` to:
/// the model list every OpenAI-compatible server answers.
const PROBE_PATH: &str = "/v1/models";

/// Probes every replica of `replicas` every `every`, until the task is
/// aborted. A probe that gets no answer within `every` failed.
pub fn spawn(replicas: Replicas<Upstream>, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let mut probes = tokio::task::JoinSet::new();
            for (index, upstream) in replicas.members() {
                let replicas = replicas.clone();
                probes.spawn(async move {
                    let answered = probe(upstream, every).await;
                    replicas.probed(index, answered);
                });
            }
            while probes.join_next().await.is_some() {}
        }
    })
}

/// Whether the replica answered: a connection opened, and an answer that
/// is not a 5xx (a 401 or 404 is a server that runs), within `timeout`.
async fn probe(upstream: Upstream, timeout: Duration) -> bool {
    let mut request = Request::new(RequestBody::translated(Bytes::new()));
    *request.method_mut() = Method::GET;
    *request.uri_mut() = http::Uri::from_static(PROBE_PATH);
    match tokio::time::timeout(timeout, upstream.oneshot(request)).await {
        Ok(Ok(response)) => {
            response.extensions().get::<NotSent>().is_none() && !response.status().is_server_error()
        }
        Ok(Err(infallible)) => match infallible {},
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests;
