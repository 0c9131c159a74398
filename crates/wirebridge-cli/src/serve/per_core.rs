//! The `per-core` runtime: a thread per core, each running a current-thread
//! runtime that accepts from a listener of its own, all bound to the same
//! address with `SO_REUSEPORT` so that the kernel spreads new connections
//! over them.
//!
//! A connection is served start to end by the thread that accepted it, and
//! so is its upstream connection (each thread has an app, and pools, of its
//! own): a chunk read from the upstream is written to the client without
//! waking another thread. The main thread runs a home runtime that serves
//! no connections: signals, the metrics listener, the demo upstream, and
//! the Redis store's connections, which every worker reaches through it
//! ([`Home`]), so that no worker depends on another being free to drive
//! them.
//!
//! Shutdown: every worker stops accepting (its listener closed) and its
//! connections finish what is in flight; the home runtime waits for the
//! connection cap's places to come back, within the grace period; then
//! each worker drops its runtime, closing what is left, and is joined.

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};
use tokio::runtime::{Builder, Handle, Runtime};
use tokio::sync::watch;

use super::{Bridge, ServeError};
use crate::config::Config;
use crate::home::Home;
use crate::server::{Admission, App, Limits, Places};

/// The listen backlog of each listener, as `TcpListener::bind` sets it.
const BACKLOG: u32 = 1024;

/// Serves on `workers` threads until SIGINT or SIGTERM.
pub fn run(config: Config, workers: usize) -> Result<(), ServeError> {
    let home = current_thread()?;
    let runtimes = (0..workers)
        .map(|_| current_thread())
        .collect::<Result<Vec<_>, _>>()?;
    home.block_on(serve(config, runtimes))
}

fn current_thread() -> Result<Runtime, ServeError> {
    Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)
}

async fn serve(config: Config, runtimes: Vec<Runtime>) -> Result<(), ServeError> {
    let bridge = Bridge::start(&config, Home::on(Handle::current())).await?;
    let listeners =
        bind_shared(config.listen, runtimes.len()).map_err(|source| ServeError::Bind {
            addr: config.listen,
            source,
        })?;
    let addr = listeners[0]
        .local_addr()
        .map_err(|source| ServeError::Bind {
            addr: config.listen,
            source,
        })?;
    bridge.announce(&config, addr);
    let (finish, finished) = watch::channel(false);
    bridge.serve_metrics(&config, finished.clone()).await?;
    let (stop, stopping) = watch::channel(false);
    // With one listener, a place first; with several sharing the cap, a
    // connection first (see `Admission`).
    let admission = match runtimes.len() {
        1 => Admission::PlaceFirst,
        _ => Admission::ConnectionFirst,
    };
    let mut threads = Vec::with_capacity(runtimes.len());
    for (index, (runtime, listener)) in runtimes.into_iter().zip(listeners).enumerate() {
        let worker = Worker {
            index,
            listener,
            app: bridge.apps.app(),
            limits: bridge.limits,
            places: bridge.places.clone(),
            admission,
            stopping: stopping.clone(),
            finished: finished.clone(),
        };
        // Should a thread not start, the senders dropped on the way out
        // stop those that did.
        let thread = std::thread::Builder::new()
            .name(format!("wb-worker-{index}"))
            .spawn(move || worker.run(runtime))
            .map_err(ServeError::Runtime)?;
        threads.push(thread);
    }
    bridge.until_shutdown(stop).await;
    bridge.drain().await;
    let _ = finish.send(true);
    // Joined off this thread: its runtime keeps driving the store for the
    // workers until they have all ended.
    let joined = tokio::task::spawn_blocking(move || {
        threads
            .into_iter()
            .map(std::thread::JoinHandle::join)
            .filter(Result::is_err)
            .count()
    })
    .await;
    if !matches!(joined, Ok(0)) {
        tracing::error!("a worker thread panicked");
    }
    Ok(())
}

/// One worker thread's share.
struct Worker {
    index: usize,
    listener: std::net::TcpListener,
    app: App,
    limits: Limits,
    places: Places,
    admission: Admission,
    /// Turns true when accepting stops.
    stopping: watch::Receiver<bool>,
    /// Turns true when the grace period is over, or every connection ended.
    finished: watch::Receiver<bool>,
}

impl Worker {
    /// Serves on `runtime` until the shutdown is over, then drops it, and
    /// with it the connections still open.
    fn run(self, runtime: Runtime) {
        let index = self.index;
        runtime.block_on(async move {
            let listener = match TcpListener::from_std(self.listener) {
                Ok(listener) => listener,
                Err(e) => {
                    tracing::error!(worker = index, error = %e, "cannot accept on this worker");
                    return;
                }
            };
            crate::server::serve(
                listener,
                self.app,
                self.limits,
                self.places,
                self.admission,
                self.stopping,
                index,
            )
            .await;
            let mut finished = self.finished;
            let _ = finished.wait_for(|finished| *finished).await;
        });
    }
}

/// `count` listeners on `addr` sharing its port (`SO_REUSEPORT`). The
/// first resolves port 0 to a free port; the others bind the port it got.
/// Made on the home runtime and handed over unregistered, for each worker
/// to register with its own.
fn bind_shared(addr: SocketAddr, count: usize) -> io::Result<Vec<std::net::TcpListener>> {
    let mut addr = addr;
    let mut listeners = Vec::with_capacity(count);
    for _ in 0..count {
        let socket = match addr {
            SocketAddr::V4(_) => TcpSocket::new_v4()?,
            SocketAddr::V6(_) => TcpSocket::new_v6()?,
        };
        // As `TcpListener::bind` does: a restarted bridge can bind while
        // connections of the last one linger in TIME_WAIT.
        socket.set_reuseaddr(true)?;
        share_port(&socket)?;
        socket.bind(addr)?;
        let listener = socket.listen(BACKLOG)?;
        addr = listener.local_addr()?;
        listeners.push(listener.into_std()?);
    }
    Ok(listeners)
}

#[cfg(target_os = "linux")]
fn share_port(socket: &TcpSocket) -> io::Result<()> {
    socket.set_reuseport(true)
}

/// The settings refuse `per-core` where the kernel does not spread
/// connections over listeners sharing a port.
#[cfg(not(target_os = "linux"))]
fn share_port(_: &TcpSocket) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "listeners sharing a port need Linux",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn listeners_share_the_port_the_first_one_got() {
        let listeners = bind_shared("127.0.0.1:0".parse().unwrap(), 3).unwrap();
        let ports: Vec<u16> = listeners
            .iter()
            .map(|l| l.local_addr().unwrap().port())
            .collect();
        assert_ne!(ports[0], 0);
        assert!(ports.iter().all(|&p| p == ports[0]), "{ports:?}");
        // Without SO_REUSEPORT on it, a socket cannot join them.
        assert!(std::net::TcpListener::bind(listeners[0].local_addr().unwrap()).is_err());
    }
}
