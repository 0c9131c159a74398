//! The session header reaches the upstream: the same value for every turn
//! of a conversation, another for another conversation, none without one.

use std::convert::Infallible;

use bytes::Bytes;
use http::{header, Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tower::ServiceExt;
use wirebridge_tower::{Affinity, RequestBody};

use crate::upstream::{Upstream, UpstreamOptions};

/// A server that answers with the `x-session-affinity` header it got, or
/// `none`.
async fn echo_session() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = hyper::service::service_fn(|request: Request<hyper::body::Incoming>| {
                let got = request.headers().get("x-session-affinity").cloned();
                let text = got.map_or("none".to_owned(), |v| v.to_str().unwrap().to_owned());
                async move { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(text)))) }
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    port
}

fn upstream(port: u16, session_header: Option<&'static str>) -> Upstream {
    let options = UpstreamOptions {
        session_header: session_header.map(header::HeaderName::from_static),
        ..UpstreamOptions::for_tests(1)
    };
    let base = format!("http://127.0.0.1:{port}/v1").parse().unwrap();
    Upstream::new(&base, options)
}

async fn got(upstream: &Upstream, affinity: Option<Affinity>) -> String {
    let mut request = Request::post("/v1/chat/completions")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::AUTHORIZATION, "Bearer sk-client")
        .body(RequestBody::translated(Bytes::from_static(b"{}")))
        .unwrap();
    if let Some(affinity) = affinity {
        request.extensions_mut().insert(affinity);
    }
    let response = upstream.clone().oneshot(request).await.unwrap();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

#[tokio::test]
async fn the_conversation_reaches_the_upstream_in_the_session_header() {
    let port = echo_session().await;
    let told = upstream(port, Some("x-session-affinity"));
    let first = got(&told, Some(Affinity::conversation("conv_1"))).await;
    // The key's digest: 16 hex digits, as the key itself reads.
    let key = Affinity::conversation("conv_1").key();
    assert_eq!(first, format!("{key:016x}"));
    assert_eq!(
        got(&told, Some(Affinity::conversation("conv_1"))).await,
        first
    );
    let other = got(&told, Some(Affinity::conversation("conv_2"))).await;
    assert_ne!(other, first);
    assert_eq!(other.len(), 16);
    // Nothing of the client's credential: the value depends on the
    // conversation only.
    assert!(!first.contains("sk-client") && !other.contains("sk-client"));
    assert_eq!(got(&told, None).await, "none");
    // Without the profile's setting, no header.
    let untold = upstream(port, None);
    assert_eq!(
        got(&untold, Some(Affinity::conversation("conv_1"))).await,
        "none"
    );
}
