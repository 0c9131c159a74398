//! Serving the demo upstream over TCP: [`serve`] and the test helper
//! [`DemoServer`].

use crate::config::DemoConfig;
use crate::service::service;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Serve the demo upstream on `listener` until `shutdown` completes.
///
/// Each connection speaks HTTP/1.1 or HTTP/2 with prior knowledge (h2c),
/// detected from its first bytes. When `shutdown` completes the listener is
/// closed, idle connections are closed, and open responses may finish for up
/// to [`DemoConfig::shutdown_grace`]; then the function returns. Failing
/// accepts (a reset connection, too many open files) are retried, never fatal.
pub async fn serve(
    listener: TcpListener,
    config: DemoConfig,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let grace = config.shutdown_grace;
    let svc = service(Arc::new(config));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new());
    builder.http2().timer(TokioTimer::new());
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let conn = builder
            .serve_connection(TokioIo::new(stream), svc.clone())
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // A client going away mid-response is not an error of the server.
            let _ = conn.await;
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(grace, graceful.shutdown()).await;
    Ok(())
}

/// A demo upstream on `127.0.0.1` and a free port, for tests: it serves
/// until it is dropped (or [`shutdown`](DemoServer::shutdown)).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use wirebridge_demo::{DemoConfig, DemoServer};
///
/// let server = DemoServer::start(DemoConfig::default()).await;
/// assert!(server.url().starts_with("http://127.0.0.1:"));
/// assert_eq!(server.addr().ip().to_string(), "127.0.0.1");
/// # }
/// ```
#[derive(Debug)]
pub struct DemoServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl DemoServer {
    /// Bind `127.0.0.1:0` and start serving in a Tokio task.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound (see [`DemoServer::try_start`]).
    pub async fn start(config: DemoConfig) -> DemoServer {
        match Self::try_start(config).await {
            Ok(server) => server,
            Err(e) => panic!("the demo upstream cannot bind 127.0.0.1:0: {e}"),
        }
    }

    /// [`DemoServer::start`], returning the bind error instead of panicking.
    pub async fn try_start(config: DemoConfig) -> io::Result<DemoServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(listener, config, async move {
            let _ = stopped.await;
        }));
        Ok(DemoServer {
            addr,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (the API endpoints are under `/v1`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stop accepting, let open responses finish (within the configured
    /// grace period) and wait for the server task to end.
    pub async fn shutdown(mut self) -> io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.task.take() {
            Some(task) => task.await.unwrap_or(Ok(())),
            None => Ok(()),
        }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
