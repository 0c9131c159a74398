//! Accepting connections when accepting fails: out of file descriptors
//! (EMFILE, ENFILE) or buffers, an accept fails again at once until a
//! connection closes, so retrying at once spins a core and logging each
//! failure floods the log. Retries back off exponentially, and failures are
//! logged at most once per [`LOG_EVERY`], with a count.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// The first pause after a failed accept.
const FIRST_BACKOFF: Duration = Duration::from_millis(5);

/// The longest pause: a freed descriptor is used within this.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// At most one log line about failing accepts per this long.
pub const LOG_EVERY: Duration = Duration::from_secs(5);

/// A listener whose accept retries failures.
#[derive(Debug)]
pub struct Acceptor {
    listener: TcpListener,
    backoff: Backoff,
    log: Throttle,
}

impl Acceptor {
    /// Accepts from `listener`.
    pub fn new(listener: TcpListener) -> Self {
        Self {
            listener,
            backoff: Backoff::default(),
            log: Throttle::new(LOG_EVERY),
        }
    }

    /// The next connection. Cancel-safe: a cancelled wait loses nothing.
    pub async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        loop {
            match self.listener.accept().await {
                Ok(accepted) => {
                    if let Some(failures) = self.log.reset() {
                        tracing::info!(failures, "accepting connections again");
                    }
                    self.backoff.reset();
                    return accepted;
                }
                // The client gave up before it was accepted: nothing is
                // wrong with the listener.
                Err(e) if is_per_connection(&e) => {
                    tracing::debug!(error = %e, "a connection was gone before it was accepted");
                }
                Err(e) => {
                    let pause = self.backoff.next_pause();
                    if let Some(failures) = self.log.record(Instant::now()) {
                        tracing::warn!(
                            error = %e,
                            failures,
                            retry_ms = pause.as_millis() as u64,
                            "accept failed; retrying with backoff"
                        );
                    }
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }
}

fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}

/// Pauses doubling from [`FIRST_BACKOFF`] to [`MAX_BACKOFF`].
#[derive(Debug, Default)]
struct Backoff {
    failures: u32,
}

impl Backoff {
    fn next_pause(&mut self) -> Duration {
        let pause = FIRST_BACKOFF
            .saturating_mul(1 << self.failures.min(16))
            .min(MAX_BACKOFF);
        self.failures = self.failures.saturating_add(1);
        pause
    }

    fn reset(&mut self) {
        self.failures = 0;
    }
}

/// Counts events and lets one log line through per interval, carrying how
/// many events it stands for.
#[derive(Debug)]
pub struct Throttle {
    every: Duration,
    last_line: Option<Instant>,
    /// Events since the last line.
    unlogged: u64,
    /// Events since the last reset.
    total: u64,
}

impl Throttle {
    /// At most one line per `every`.
    pub fn new(every: Duration) -> Self {
        Self {
            every,
            last_line: None,
            unlogged: 0,
            total: 0,
        }
    }

    /// One more event at `now`: `Some(count)` when a line is due, with the
    /// events it reports (this one and those held back since the last).
    pub fn record(&mut self, now: Instant) -> Option<u64> {
        self.unlogged += 1;
        self.total += 1;
        if self
            .last_line
            .is_some_and(|last| now.duration_since(last) < self.every)
        {
            return None;
        }
        self.last_line = Some(now);
        Some(std::mem::take(&mut self.unlogged))
    }

    /// The trouble is over: `Some(total)` if there was any, for one closing
    /// line.
    pub fn reset(&mut self) -> Option<u64> {
        let total = std::mem::take(&mut self.total);
        self.unlogged = 0;
        self.last_line = None;
        (total > 0).then_some(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_a_second_and_resets() {
        let mut b = Backoff::default();
        let pauses: Vec<u128> = (0..10).map(|_| b.next_pause().as_millis()).collect();
        assert_eq!(pauses, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        for _ in 0..100 {
            assert_eq!(b.next_pause(), MAX_BACKOFF);
        }
        b.reset();
        assert_eq!(b.next_pause(), FIRST_BACKOFF);
    }

    #[test]
    fn one_line_per_interval_with_a_count() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut t = Throttle::new(Duration::from_secs(5));
        assert_eq!(t.record(at(0)), Some(1));
        let held: Vec<_> = (1..=40).map(|i| t.record(at(i * 100))).collect();
        assert!(held.iter().all(Option::is_none), "{held:?}");
        assert_eq!(t.record(at(5_000)), Some(41));
        assert_eq!(t.record(at(5_001)), None);
        assert_eq!(t.reset(), Some(43));
        assert_eq!(t.reset(), None);
        assert_eq!(t.record(at(5_002)), Some(1));
    }

    #[tokio::test]
    async fn accepts_after_nothing_failed() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut acceptor = Acceptor::new(listener);
        let client = tokio::spawn(TcpStream::connect(addr));
        let (_, peer) = acceptor.accept().await;
        assert_eq!(client.await.unwrap().unwrap().local_addr().unwrap(), peer);
    }
}
