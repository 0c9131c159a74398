//! [`InFlightBody`]: a replica's reply, counted in flight on it until it
//! ends.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};
use pin_project::pin_project;

use super::InFlight;

/// A replica's reply body: the request counts in flight on the replica
/// (for the bound on load) until the body has ended or is dropped, so that
/// a stream's whole generation is counted, not only its head.
#[pin_project]
pub struct InFlightBody<B> {
    #[pin]
    inner: B,
    in_flight: Option<InFlight>,
}

impl<B> InFlightBody<B> {
    pub(super) fn new(inner: B, in_flight: InFlight) -> Self {
        Self {
            inner,
            in_flight: Some(in_flight),
        }
    }

    /// The replica's body.
    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B> fmt::Debug for InFlightBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InFlightBody")
            .field("ended", &self.in_flight.is_none())
            .finish_non_exhaustive()
    }
}

impl<B: Body> Body for InFlightBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = self.project();
        let polled = this.inner.poll_frame(cx);
        // Over once the last frame is out: a client that keeps the body
        // after its end does not hold the replica.
        if matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_)))) {
            this.in_flight.take();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
