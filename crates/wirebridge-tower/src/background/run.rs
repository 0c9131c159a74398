//! One background run: the events it has sent so far, for whoever follows
//! it (the client that started it streaming, or one resuming), and how it
//! is stopped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use bytes::{Bytes, BytesMut};
use tokio::sync::watch;

/// Why a run was stopped before it was done (a shutdown stops it through
/// the layer's shutdown signal, not through its run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The client cancelled it (`POST …/responses/{id}/cancel`).
    Cancelled,
}

/// The bytes of events runs may keep: each at most `per_run`, all together
/// at most `total` (a run over its share of a full budget loses its oldest
/// events first).
#[derive(Debug, Default)]
pub(crate) struct EventBudget {
    per_run: usize,
    total: usize,
    held: AtomicUsize,
}

impl EventBudget {
    pub(crate) fn new(per_run: usize, total: usize) -> Self {
        Self {
            per_run,
            total,
            held: AtomicUsize::new(0),
        }
    }

    /// The bytes held by every run.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    fn over(&self, run_bytes: usize) -> bool {
        run_bytes > self.per_run || self.held() > self.total
    }
}

/// A run in flight, or finished and kept a while for streams that resume.
pub(crate) struct Run {
    pub(crate) tenant: String,
    pub(crate) id: String,
    /// Whether the run was created with `stream: true`: only then are its
    /// events made, and kept for followers.
    pub(crate) streams: bool,
    state: Mutex<Events>,
    /// Bumped whenever an event is added or the run ends: what followers
    /// wait on.
    version: watch::Sender<u64>,
    stop: watch::Sender<Option<Stop>>,
}

/// The events of a run, within a byte bound.
#[derive(Default)]
struct Events {
    /// Each event's sequence number and frame, oldest first.
    frames: VecDeque<(u64, Bytes)>,
    bytes: usize,
    /// Whether events were dropped from the front for the bound.
    dropped: bool,
    finished: bool,
}

/// What a follower reads after its cursor.
pub(crate) enum Read {
    /// Frames to send, and the sequence number of the last.
    Frames(Bytes, u64),
    /// Nothing new yet: wait for this version to change.
    Wait(u64),
    /// The run is over and everything was read.
    Finished,
    /// Events the follower needs were dropped for the bound.
    Lost,
}

impl Run {
    pub(crate) fn new(tenant: String, id: String, streams: bool) -> Self {
        Self {
            tenant,
            id,
            streams,
            state: Mutex::default(),
            version: watch::Sender::new(0),
            stop: watch::Sender::new(None),
        }
    }

    fn events(&self) -> MutexGuard<'_, Events> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds an event's frame, dropping this run's oldest while it holds
    /// more than `budget` allows.
    pub(crate) fn push(&self, seq: u64, frame: Bytes, budget: &EventBudget) {
        let mut events = self.events();
        events.bytes += frame.len();
        budget.held.fetch_add(frame.len(), Ordering::Relaxed);
        events.frames.push_back((seq, frame));
        while events.frames.len() > 1 && budget.over(events.bytes) {
            if let Some((_, dropped)) = events.frames.pop_front() {
                events.bytes -= dropped.len();
                budget.held.fetch_sub(dropped.len(), Ordering::Relaxed);
                events.dropped = true;
            }
        }
        drop(events);
        self.version.send_modify(|v| *v += 1);
    }

    /// Drops every event kept, giving their bytes back to `budget`: the
    /// run is forgotten.
    pub(crate) fn release(&self, budget: &EventBudget) {
        let mut events = self.events();
        budget.held.fetch_sub(events.bytes, Ordering::Relaxed);
        events.bytes = 0;
        events.frames.clear();
        events.dropped = true;
    }

    /// The run is over: followers end once they have read everything.
    pub(crate) fn finish(&self) {
        self.events().finished = true;
        self.version.send_modify(|v| *v += 1);
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.events().finished
    }

    /// The sequence number of the last event the run has made, if any.
    pub(crate) fn last_sequence(&self) -> Option<u64> {
        self.events().frames.back().map(|(seq, _)| *seq)
    }

    /// The frames after sequence number `after` (all of them for `None`).
    pub(crate) fn read_after(&self, after: Option<u64>) -> Read {
        let events = self.events();
        let version = *self.version.borrow();
        // A cursor at the largest number has nothing after it (and must not
        // wrap around to the first event).
        let Some(first_needed) = after.map_or(Some(0), |n| n.checked_add(1)) else {
            return match events.finished {
                true => Read::Finished,
                false => Read::Wait(version),
            };
        };
        if events.dropped
            && events
                .frames
                .front()
                .is_some_and(|(seq, _)| *seq > first_needed)
        {
            return Read::Lost;
        }
        let mut out = BytesMut::new();
        let mut last = None;
        for (seq, frame) in events.frames.iter().filter(|(seq, _)| *seq >= first_needed) {
            out.extend_from_slice(frame);
            last = Some(*seq);
        }
        match last {
            Some(last) => Read::Frames(out.freeze(), last),
            None if events.finished => Read::Finished,
            None => Read::Wait(version),
        }
    }

    /// Completes once the version differs from `seen`.
    pub(crate) fn changed(
        &self,
        seen: u64,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut receiver = self.version.subscribe();
        async move {
            let _ = receiver.wait_for(|version| *version != seen).await;
        }
    }

    /// Completes once the run is over.
    pub(crate) async fn ended(&self) {
        let mut version = self.version.subscribe();
        while !self.is_finished() {
            if version.changed().await.is_err() {
                return;
            }
        }
    }

    /// Asks the run to stop; the first reason given wins.
    pub(crate) fn stop(&self, why: Stop) {
        self.stop.send_if_modified(|stop| match stop {
            Some(_) => false,
            None => {
                *stop = Some(why);
                true
            }
        });
    }

    /// Completes with the reason once the run is asked to stop.
    pub(crate) fn stopped(&self) -> impl std::future::Future<Output = Stop> + Send + 'static {
        let mut receiver = self.stop.subscribe();
        async move {
            let stop = match receiver.wait_for(Option::is_some).await {
                Ok(stop) => *stop,
                Err(_) => None,
            };
            match stop {
                Some(stop) => stop,
                // The run is gone: nothing will stop it now.
                None => std::future::pending().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: u64) -> Bytes {
        Bytes::from(format!("data: {n}\n\n"))
    }

    #[test]
    fn followers_read_after_their_cursor_and_wait_for_more() {
        let run = Run::new("t".into(), "resp_1".into(), true);
        assert!(matches!(run.read_after(None), Read::Wait(0)));
        let budget = EventBudget::new(1 << 20, 1 << 20);
        for n in 0..3 {
            run.push(n, frame(n), &budget);
        }
        let Read::Frames(all, last) = run.read_after(None) else {
            panic!("frames")
        };
        assert_eq!((all.len(), last), (3 * frame(0).len(), 2));
        let Read::Frames(rest, 2) = run.read_after(Some(1)) else {
            panic!("the last frame")
        };
        assert_eq!(rest, frame(2));
        assert!(matches!(run.read_after(Some(2)), Read::Wait(3)));
        run.finish();
        assert!(matches!(run.read_after(Some(2)), Read::Finished));
    }

    #[test]
    fn the_largest_cursor_reads_nothing_rather_than_everything() {
        let run = Run::new("t".into(), "resp_1".into(), true);
        let budget = EventBudget::new(1 << 20, 1 << 20);
        for n in 0..3 {
            run.push(n, frame(n), &budget);
        }
        assert_eq!(run.last_sequence(), Some(2));
        assert!(matches!(run.read_after(Some(u64::MAX)), Read::Wait(_)));
        run.finish();
        assert!(matches!(run.read_after(Some(u64::MAX)), Read::Finished));
    }

    #[test]
    fn events_beyond_the_bound_are_lost_to_late_followers() {
        let run = Run::new("t".into(), "resp_1".into(), true);
        let budget = EventBudget::new(3 * frame(0).len(), 1 << 20);
        for n in 0..10 {
            run.push(n, frame(n), &budget);
        }
        assert!(matches!(run.read_after(None), Read::Lost));
        assert!(matches!(run.read_after(Some(6)), Read::Frames(_, 9)));
        assert_eq!(budget.held(), 3 * frame(0).len());
        run.release(&budget);
        assert_eq!(budget.held(), 0);
    }

    #[test]
    fn a_full_budget_takes_from_the_run_that_grows() {
        let size = frame(0).len();
        let budget = EventBudget::new(100 * size, 6 * size);
        let (quiet, busy) = (
            Run::new("t".into(), "a".into(), true),
            Run::new("t".into(), "b".into(), true),
        );
        for n in 0..3 {
            quiet.push(n, frame(n), &budget);
        }
        for n in 0..10 {
            busy.push(n, frame(n), &budget);
        }
        // The quiet run keeps all it had; the busy one, what is left.
        assert!(matches!(quiet.read_after(None), Read::Frames(_, 2)));
        assert!(matches!(busy.read_after(None), Read::Lost));
        assert!(matches!(busy.read_after(Some(6)), Read::Frames(_, 9)));
        assert_eq!(budget.held(), 6 * size);
    }

    #[tokio::test]
    async fn a_stop_reaches_the_run_and_its_end_the_followers() {
        let run = Run::new("t".into(), "resp_1".into(), true);
        let stopped = run.stopped();
        run.stop(Stop::Cancelled);
        run.stop(Stop::Cancelled);
        assert_eq!(stopped.await, Stop::Cancelled);
        let ended = run.ended();
        run.finish();
        ended.await;
        assert!(run.is_finished());
    }
}
