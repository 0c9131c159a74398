//! One connection's watchdog: when it must be closed because a request head
//! is too slow to arrive, or because it has been idle too long.
//!
//! hyper's own HTTP/1 header timeout also closes idle kept-alive connections
//! at the same deadline, so it cannot give an idle timeout longer than the
//! header timeout, and it does nothing for HTTP/2. Instead, the connection's
//! IO reports when request bytes arrive ([`Activity::request_bytes`]), and the
//! service counts requests in flight ([`Activity::begin`]); a request is in
//! flight until its response body has been sent or dropped, so a long stream
//! or a slow first byte never looks idle.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// The two timeouts a watchdog enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// From a connection's start, or from the first bytes of a request
    /// that arrive while nothing is in flight, to its complete head.
    pub header_read: Duration,
    /// From the end of the last response, with nothing arriving since.
    pub idle: Duration,
}

/// Why a connection was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expired {
    /// No complete request head in time.
    HeaderRead,
    /// Nothing in flight and nothing arriving for the idle timeout.
    Idle,
}

impl Expired {
    /// For logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Expired::HeaderRead => "no complete request head within the header-read timeout",
            Expired::Idle => "idle for the idle timeout",
        }
    }
}

/// What a connection is doing, as the watchdog sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct State {
    /// Requests whose response has not been sent or dropped yet.
    in_flight: usize,
    /// When the head now awaited started: the connection's start, or the
    /// first request bytes that arrived while nothing was in flight.
    head_since: Option<Instant>,
    /// When the last request in flight ended.
    idle_since: Instant,
}

impl State {
    fn new(now: Instant) -> Self {
        Self {
            in_flight: 0,
            // A new connection owes a request head at once.
            head_since: Some(now),
            idle_since: now,
        }
    }

    /// When the connection must be closed, and why; never while a request
    /// is in flight.
    fn deadline(&self, timeouts: &Timeouts) -> Option<(Instant, Expired)> {
        if self.in_flight > 0 {
            return None;
        }
        Some(match self.head_since {
            Some(since) => (since + timeouts.header_read, Expired::HeaderRead),
            None => (self.idle_since + timeouts.idle, Expired::Idle),
        })
    }

    fn request_bytes(&mut self, now: Instant) -> bool {
        if self.in_flight > 0 || self.head_since.is_some() {
            return false;
        }
        self.head_since = Some(now);
        true
    }

    fn begin(&mut self) {
        self.in_flight += 1;
        self.head_since = None;
    }

    fn end(&mut self, now: Instant) {
        self.in_flight -= 1;
        if self.in_flight == 0 {
            self.idle_since = now;
        }
    }
}

/// A connection's activity, shared by its IO (bytes arriving), its service
/// (requests in flight, possibly on other tasks for HTTP/2) and its
/// watchdog.
#[derive(Debug)]
pub struct Activity {
    state: Mutex<State>,
    /// Wakes the watchdog when the deadline may have moved.
    changed: Notify,
    timeouts: Timeouts,
}

impl Activity {
    /// A connection accepted now.
    pub fn new(timeouts: Timeouts) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State::new(Instant::now())),
            changed: Notify::new(),
            timeouts,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state is a few plain fields, consistent after every update:
        // a panic elsewhere while holding the lock leaves nothing torn.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes of a request (not of a body in flight, nor HTTP/2 control
    /// frames) arrived: with nothing in flight, they start the header clock.
    pub fn request_bytes(&self) {
        if self.state().request_bytes(Instant::now()) {
            self.changed.notify_one();
        }
    }

    /// A request head is complete: the connection is busy until the guard,
    /// moved into the response body, is dropped.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        self.state().begin();
        self.changed.notify_one();
        InFlight {
            activity: self.clone(),
        }
    }

    /// Resolves when the connection must be closed. Cancel-safe: it keeps no
    /// state of its own.
    pub async fn expired(&self) -> Expired {
        loop {
            // Created before the state is read, so that a change in between
            // is not missed (`notify_one` also keeps a permit when no one
            // waits).
            let changed = self.changed.notified();
            let deadline = self.state().deadline(&self.timeouts);
            match deadline {
                None => changed.await,
                Some((at, why)) if at <= Instant::now() => return why,
                Some((at, _)) => {
                    tokio::select! {
                        () = tokio::time::sleep_until(at) => {}
                        () = changed => {}
                    }
                }
            }
        }
    }
}

/// One request in flight; dropping it ends it.
#[derive(Debug)]
pub struct InFlight {
    activity: Arc<Activity>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.activity.state().end(Instant::now());
        self.activity.changed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Timeouts = Timeouts {
        header_read: Duration::from_secs(10),
        idle: Duration::from_secs(75),
    };

    #[test]
    fn deadlines_follow_the_connection() {
        let start = Instant::now();
        let s = |secs: u64| start + Duration::from_secs(secs);
        let mut state = State::new(start);
        // A new connection owes a head within the header timeout.
        assert_eq!(state.deadline(&T), Some((s(10), Expired::HeaderRead)));
        // Its first bytes do not restart the clock.
        assert!(!state.request_bytes(s(3)));
        assert_eq!(state.deadline(&T), Some((s(10), Expired::HeaderRead)));
        // In flight: no deadline, whatever arrives, however long.
        state.begin();
        assert!(!state.request_bytes(s(4)));
        assert_eq!(state.deadline(&T), None);
        state.end(s(500));
        // Idle: the idle timeout, longer than the header timeout.
        assert_eq!(state.deadline(&T), Some((s(575), Expired::Idle)));
        // The next request's first bytes start the header clock.
        assert!(state.request_bytes(s(560)));
        assert!(!state.request_bytes(s(565)));
        assert_eq!(state.deadline(&T), Some((s(570), Expired::HeaderRead)));
    }

    #[test]
    fn idle_only_when_every_request_has_ended() {
        let start = Instant::now();
        let s = |secs: u64| start + Duration::from_secs(secs);
        let mut state = State::new(start);
        state.begin();
        state.begin();
        state.end(s(1));
        assert_eq!(state.deadline(&T), None);
        state.end(s(2));
        assert_eq!(state.deadline(&T), Some((s(77), Expired::Idle)));
    }

    #[tokio::test]
    async fn the_watchdog_waits_for_requests_in_flight() {
        let timeouts = Timeouts {
            header_read: Duration::from_millis(40),
            idle: Duration::from_millis(80),
        };
        let activity = Activity::new(timeouts);
        let started = Instant::now();
        assert_eq!(activity.expired().await, Expired::HeaderRead);
        assert!(started.elapsed() >= timeouts.header_read);

        let activity = Activity::new(timeouts);
        let request = activity.begin();
        let watchdog = tokio::spawn({
            let activity = activity.clone();
            async move { activity.expired().await }
        });
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(!watchdog.is_finished(), "closed with a request in flight");
        let ended = Instant::now();
        drop(request);
        assert_eq!(watchdog.await.unwrap(), Expired::Idle);
        assert!(ended.elapsed() >= timeouts.idle);
    }
}
