//! Following a run: the events of a background response as a stream, from
//! its start or after a sequence number, as they are made.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::Bytes;

use super::run::{Read, Run};
use crate::body::FrameSource;

/// A stream of a run's event frames after a cursor.
pub(crate) struct Follower {
    run: Arc<Run>,
    after: Option<u64>,
    wait: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl Follower {
    /// Follows `run` from the event after sequence number `after` (from
    /// its first event for `None`).
    pub(crate) fn new(run: Arc<Run>, after: Option<u64>) -> Self {
        Self {
            run,
            after,
            wait: None,
        }
    }
}

impl FrameSource for Follower {
    /// The next frames, or the end once the run is over and all was read
    /// (or events it needs were dropped for the run's bound: the stream
    /// then ends where it is).
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            if let Some(wait) = &mut self.wait {
                ready!(wait.as_mut().poll(cx));
                self.wait = None;
            }
            match self.run.read_after(self.after) {
                Read::Frames(frames, last) => {
                    self.after = Some(last);
                    return Poll::Ready(Some(frames));
                }
                Read::Wait(version) => self.wait = Some(Box::pin(self.run.changed(version))),
                Read::Finished | Read::Lost => return Poll::Ready(None),
            }
        }
    }

    fn is_end(&self) -> bool {
        self.run.is_finished() && matches!(self.run.read_after(self.after), Read::Finished)
    }
}

impl std::fmt::Debug for Follower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Follower")
            .field("response_id", &self.run.id)
            .field("after", &self.after)
            .finish()
    }
}
