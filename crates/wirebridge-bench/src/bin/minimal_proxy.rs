//! The smallest reverse proxy hyper makes: every request sent on to one
//! upstream as it came, its body and the reply's streamed through, on the
//! same runtime, server and pooled client a proxy built on hyper would
//! use. `wirebridge-bench --proxy` measures it beside the bridge as the
//! `minimal` route: what forwarding costs before anything is translated,
//! logged, limited or checked.
//!
//! `minimal-proxy LISTEN UPSTREAM` (`127.0.0.1:0 http://127.0.0.1:8788`);
//! it prints `listening on http://ADDR` when ready.

#![forbid(unsafe_code)]

use std::convert::Infallible;
use std::process::ExitCode;

use http::uri::{Authority, Scheme};
use http::{Request, Response, StatusCode, Uri};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;

type Body = UnsyncBoxBody<bytes::Bytes, hyper::Error>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [listen, upstream] = args.as_slice() else {
        eprintln!("usage: minimal-proxy LISTEN UPSTREAM (127.0.0.1:0 http://127.0.0.1:8788)");
        return ExitCode::from(2);
    };
    let upstream: Uri = match upstream.parse() {
        Ok(uri) => uri,
        Err(e) => {
            eprintln!("minimal-proxy: a bad upstream {upstream}: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(authority) = upstream.authority().cloned() else {
        eprintln!("minimal-proxy: the upstream needs a host and port");
        return ExitCode::from(2);
    };
    let runtime = tokio::runtime::Runtime::new().expect("the runtime starts");
    match runtime.block_on(serve(listen, authority)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("minimal-proxy: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(listen: &str, authority: Authority) -> std::io::Result<()> {
    let listener = TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    let client: Client<HttpConnector, Incoming> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(256)
        .build_http();
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let (client, authority) = (client.clone(), authority.clone());
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                forward(client.clone(), authority.clone(), request)
            });
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn forward(
    client: Client<HttpConnector, Incoming>,
    authority: Authority,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    let (mut parts, body) = request.into_parts();
    let mut uri = parts.uri.into_parts();
    uri.scheme = Some(Scheme::HTTP);
    uri.authority = Some(authority);
    parts.uri = Uri::from_parts(uri).expect("an origin-form URI with a scheme and authority");
    match client.request(Request::from_parts(parts, body)).await {
        Ok(response) => Ok(response.map(BodyExt::boxed_unsync)),
        Err(e) => {
            let body = Full::new(bytes::Bytes::from(format!("upstream failed: {e}")))
                .map_err(|never| match never {})
                .boxed_unsync();
            let mut response = Response::new(body);
            *response.status_mut() = StatusCode::BAD_GATEWAY;
            Ok(response)
        }
    }
}
