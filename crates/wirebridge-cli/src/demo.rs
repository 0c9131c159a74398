//! The demo upstream, as `wirebridge demo` and as `serve --upstream demo`.

use std::net::SocketAddr;

use wirebridge_demo::{Api, DemoConfig, DemoServer};

/// A demo upstream running in this process on a loopback port.
pub struct InProcessDemo {
    server: DemoServer,
}

impl InProcessDemo {
    /// Its base URL, API path included.
    pub fn base_url(&self) -> http::Uri {
        format!("http://{}/v1", self.server.addr())
            .parse()
            .expect("a socket address makes a URL")
    }
}

/// Starts the demo upstream, speaking every API (Chat, Responses and
/// Messages, whichever the bridge's backend is), on 127.0.0.1 and a free
/// port.
pub async fn start_in_process() -> std::io::Result<InProcessDemo> {
    let server = DemoServer::try_start(DemoConfig::new().api(Api::All)).await?;
    Ok(InProcessDemo { server })
}

/// `wirebridge demo`: runs the demo upstream until SIGINT or SIGTERM.
pub async fn run(
    listen: SocketAddr,
    api: Api,
    replay: Option<std::path::PathBuf>,
) -> std::io::Result<()> {
    let mut config = DemoConfig::new().api(api);
    if let Some(path) = replay {
        config = config.replay(path);
    }
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    wirebridge_demo::serve(listener, config, crate::signal::shutdown_signal()).await
}
