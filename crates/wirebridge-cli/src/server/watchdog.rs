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
//!
//! The watchdog is never woken by these reports. It looks at the state at
//! its deadline, or after the shorter of the two timeouts, whichever comes
//! first, and any deadline a report sets lies at least that far ahead of
//! the moment it was set: no report can move a deadline before the
//! watchdog's next look. Waking it on every report (three times a request,
//! on the connection's own task) made the task yield each time, waking the
//! other worker thread to take it: measured with strace over 400
//! sequential requests, 1,292 futex calls with those wakes and 9 without
//! (see `own_wakes` for the rest of that count).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

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

    /// Notes request bytes arriving; `true` if they started the header
    /// clock.
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
    timeouts: Timeouts,
}

impl Activity {
    /// A connection accepted now.
    pub fn new(timeouts: Timeouts) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State::new(Instant::now())),
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
        self.state().request_bytes(Instant::now());
    }

    /// A request head is complete: the connection is busy until the guard,
    /// moved into the response body, is dropped.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        self.state().begin();
        InFlight {
            activity: self.clone(),
        }
    }

    /// How long the watchdog may sleep without looking: no deadline can be
    /// set closer than this to the moment it is set. (At least a
    /// millisecond, so that zero timeouts do not spin.)
    fn look_every(&self) -> Duration {
        self.timeouts
            .header_read
            .min(self.timeouts.idle)
            .max(Duration::from_millis(1))
    }

    /// Resolves when the connection must be closed. Cancel-safe: it keeps no
    /// state of its own.
    pub async fn expired(&self) -> Expired {
        loop {
            // The time is read under the lock, as every report reads it:
            // a report is either seen here or set after `now`.
            let (now, deadline) = {
                let state = self.state();
                (Instant::now(), state.deadline(&self.timeouts))
            };
            let look = now + self.look_every();
            match deadline {
                Some((at, why)) if at <= now => return why,
                Some((at, _)) => tokio::time::sleep_until(at.min(look)).await,
                None => tokio::time::sleep_until(look).await,
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

    #[tokio::test]
    async fn a_new_request_on_a_kept_connection_owes_its_head_in_time() {
        let timeouts = Timeouts {
            header_read: Duration::from_millis(60),
            idle: Duration::from_millis(400),
        };
        let activity = Activity::new(timeouts);
        drop(activity.begin());
        let watchdog = tokio::spawn({
            let activity = activity.clone();
            async move { activity.expired().await }
        });
        // Bytes of a second request, then no complete head: the header
        // deadline, well before the idle one, closes the connection,
        // though nothing woke the watchdog when the bytes came.
        tokio::time::sleep(Duration::from_millis(30)).await;
        let bytes = Instant::now();
        activity.request_bytes();
        assert_eq!(watchdog.await.unwrap(), Expired::HeaderRead);
        let waited = bytes.elapsed();
        assert!(waited >= timeouts.header_read, "{waited:?}");
        assert!(waited < timeouts.idle, "{waited:?}");
    }
}
