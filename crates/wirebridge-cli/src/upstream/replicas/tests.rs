//! A DNS answer that changes: three servers on one port of three loopback
//! addresses, a name that resolves to two of them, then three, then two
//! again, and the conversations that move (or do not) meanwhile.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{header, Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tower::ServiceExt;
use wirebridge_tower::{Affinity, ReplicaHealth, RequestBody};

use super::super::resolve::Resolver;
use super::{keyable, Backend};
use crate::config::{ReplicaSettings, UpstreamUrl};
use crate::upstream::UpstreamOptions;

/// The name the upstream URL holds: never resolved but by the test's own
/// resolver.
const NAME: &str = "replicas.invalid";

/// Answers for [`NAME`] what the test says, and nothing for another name.
struct Answers(Arc<Mutex<Vec<IpAddr>>>);

impl Resolver for Answers {
    fn resolve(&self, host: &str) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send>> {
        let answer = match host == NAME {
            true => Ok(self.0.lock().unwrap().clone()),
            false => Err(io::Error::new(io::ErrorKind::NotFound, "unknown name")),
        };
        Box::pin(async move { answer })
    }
}

fn loopback(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// Servers on 127.0.0.1, .2 and .3, all on one port (the URL's): each
/// answers with its own address and the `Host` it was sent.
async fn three_servers() -> u16 {
    'port: for _ in 0..20 {
        let first = TcpListener::bind((loopback(1), 0)).await.unwrap();
        let port = first.local_addr().unwrap().port();
        let mut listeners = vec![first];
        for n in [2, 3] {
            match TcpListener::bind((loopback(n), port)).await {
                Ok(listener) => listeners.push(listener),
                Err(_) => continue 'port,
            }
        }
        for listener in listeners {
            tokio::spawn(serve(listener));
        }
        return port;
    }
    panic!("no port free on all three loopback addresses");
}

async fn serve(listener: TcpListener) {
    let own = listener.local_addr().unwrap().ip();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
            let host = request.headers().get(header::HOST).cloned();
            let host = host.map(|h| h.to_str().unwrap_or("").to_owned());
            let text = format!("{own} {}", host.unwrap_or_default());
            async move { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(text)))) }
        });
        tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
    }
}

fn backend(port: u16, answer: &Arc<Mutex<Vec<IpAddr>>>) -> Backend {
    let url = UpstreamUrl {
        uri: format!("http://{NAME}:{port}/v1").parse().unwrap(),
        credentials: None,
    };
    let options = UpstreamOptions::for_tests(1);
    let settings = ReplicaSettings {
        load_factor: 1.25,
        move_slack: 2,
        eject_after: 3,
        backoff: Duration::from_secs(10),
        resolve_every: Some(Duration::from_millis(50)),
        probe_every: None,
    };
    Backend::resolved(
        &[url],
        None,
        &options,
        &settings,
        1 << 20,
        Arc::new(Answers(Arc::clone(answer))),
        Duration::from_millis(50),
    )
}

/// Which address served a turn of `conversation`, and the `Host` it got.
async fn served(backend: &Backend, conversation: &str) -> (String, String) {
    let mut request = Request::post("/v1/chat/completions")
        .header(header::CONTENT_TYPE, "application/json")
        .body(RequestBody::translated(Bytes::from_static(b"{}")))
        .unwrap();
    request
        .extensions_mut()
        .insert(Affinity::conversation(conversation));
    let response = backend.clone().oneshot(request).await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(body.to_vec()).unwrap();
    let (address, host) = text.split_once(' ').unwrap();
    (address.to_owned(), host.to_owned())
}

/// Waits until the set has `count` replicas.
async fn until_the_set_holds(health: &ReplicaHealth, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while health.ready().len() != count {
        assert!(Instant::now() < deadline, "{:?}", health.by_index());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn homes(backend: &Backend, conversations: std::ops::Range<usize>) -> Vec<String> {
    let mut homes = Vec::new();
    for n in conversations {
        homes.push(served(backend, &format!("conversation {n}")).await.0);
    }
    homes
}

#[tokio::test]
async fn a_dns_answer_that_changes_changes_the_replicas() {
    let port = three_servers().await;
    let answer = Arc::new(Mutex::new(vec![loopback(2), loopback(1)]));
    let backend = backend(port, &answer);
    let health = backend.health().unwrap();
    // The name's two addresses replace the URL as it was.
    until_the_set_holds(&health, 2).await;
    let (address, host) = served(&backend, "conversation 0").await;
    assert_eq!(
        host,
        format!("{NAME}:{port}"),
        "the Host header is the name"
    );
    assert!(["127.0.0.1", "127.0.0.2"].contains(&address.as_str()));

    let before = homes(&backend, 0..30).await;
    assert!(before.iter().all(|a| a == "127.0.0.1" || a == "127.0.0.2"));
    assert!(before.iter().any(|a| a == "127.0.0.1") && before.iter().any(|a| a == "127.0.0.2"));

    // A third address joins: no conversation moves to it; new ones find it.
    answer.lock().unwrap().push(loopback(3));
    until_the_set_holds(&health, 3).await;
    assert_eq!(homes(&backend, 0..30).await, before);
    let new = homes(&backend, 100..130).await;
    assert!(new.iter().any(|a| a == "127.0.0.3"), "{new:?}");

    // .2 leaves: only its conversations move, and nothing goes there.
    *answer.lock().unwrap() = vec![loopback(1), loopback(3)];
    until_the_set_holds(&health, 2).await;
    let after = homes(&backend, 0..30).await;
    for (n, (was, is)) in before.iter().zip(&after).enumerate() {
        assert_ne!(
            is, "127.0.0.2",
            "conversation {n} went to the address that left"
        );
        if was != "127.0.0.2" {
            assert_eq!(was, is, "conversation {n} moved off an address still there");
        }
    }
    // A resolver that fails for a while leaves the set as it was.
    answer.lock().unwrap().clear();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(health.ready(), vec![true, true]);
    assert_eq!(homes(&backend, 0..30).await, after);
}

/// A request that comes without a key is read for one within the limit,
/// and whatever its length when the layers wrote its body (held already).
#[test]
fn a_body_the_layers_wrote_is_keyed_whatever_its_length() {
    let post = |body: RequestBody<crate::server::ClientBody>, length: usize| {
        Request::post("http://upstream/v1/chat/completions")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::CONTENT_LENGTH, length)
            .body(body)
            .unwrap()
    };
    let written = Bytes::from(vec![b' '; 100]);
    assert!(keyable(
        &post(RequestBody::translated(written.clone()), 100),
        10
    ));
    assert!(keyable(&post(RequestBody::empty(), 5), 10));
    assert!(!keyable(&post(RequestBody::empty(), 100), 10));
    let mut keyed = post(RequestBody::translated(written), 100);
    keyed.extensions_mut().insert(Affinity::custom(7));
    assert!(!keyable(&keyed, 10), "a key the layers gave is kept");
}
