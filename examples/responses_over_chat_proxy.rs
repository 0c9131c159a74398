//! A Responses API proxy in front of any Chat Completions backend, with
//! tower-http tracing and a timeout stacked around the translation.
//!
//! ```sh
//! cargo run --example responses_over_chat_proxy -- http://localhost:8000/v1
//! OPENAI_BASE_URL=http://127.0.0.1:3001/v1 codex  # or any Responses client
//! ```

use std::time::Duration;

use http::{Request, Uri};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tower::ServiceBuilder;
use tower_http::trace::TraceLayer;
use wirebridge::convert::BackendProfile;
use wirebridge::tower::{RequestBody, ResponsesToChatLayer};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tracing_subscriber::fmt().init();
    let backend: Uri = std::env::args()
        .nth(1)
        .ok_or("usage: responses_over_chat_proxy <chat backend base URL, e.g. http://localhost:8000/v1>")?
        .parse()?;
    let base = backend.to_string().trim_end_matches('/').to_owned();

    // The Chat backend, as a tower service: a hyper-util client whose
    // request paths are put under the backend's base URL.
    let client = Client::builder(TokioExecutor::new()).build_http::<RequestBody<Incoming>>();
    let upstream = tower::service_fn(move |mut request: Request<RequestBody<Incoming>>| {
        let client = client.clone();
        let path = request
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/");
        let path = path.strip_prefix("/v1").unwrap_or(path);
        let target: Uri = format!("{base}{path}").parse().expect("a valid URL");
        *request.uri_mut() = target;
        request.headers_mut().remove(http::header::HOST);
        async move { client.request(request).await }
    });

    let service = ServiceBuilder::new()
        .layer(TraceLayer::new_for_http())
        .timeout(Duration::from_secs(600))
        .layer(ResponsesToChatLayer::new().profile(BackendProfile::vllm()))
        .service(upstream);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:3001").await?;
    println!(
        "listening on http://{} (Responses API), backend {backend}",
        listener.local_addr()?
    );
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
