//! An upstream body that fails when the upstream goes quiet.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project::pin_project;
use tokio::time::{Instant, Sleep};
use wirebridge_tower::BoxError;

use crate::metrics::Metrics;

/// The upstream sent nothing for the idle timeout.
#[derive(Debug, thiserror::Error)]
#[error("the upstream sent nothing for {} s", .0.as_secs_f64())]
pub struct UpstreamIdle(Duration);

/// A body that ends with [`UpstreamIdle`] when no bytes arrive for
/// `period`. A pass-through stream's client sees the connection cut, not a
/// clean end; a translated stream's gets its failure event (the layer also
/// times translated streams by events, which bytes trickling in cannot
/// fool).
///
/// Each frame only records when it arrived; the sleep is moved when it
/// wakes before the deadline, not on every frame.
#[pin_project]
pub struct IdleBody<B> {
    #[pin]
    inner: B,
    period: Duration,
    last_frame: Instant,
    #[pin]
    sleep: Sleep,
    done: bool,
    metrics: Arc<Metrics>,
}

impl<B> IdleBody<B> {
    /// Wraps `inner`; an upstream gone quiet is counted in `metrics`.
    pub fn new(inner: B, period: Duration, metrics: Arc<Metrics>) -> Self {
        let now = Instant::now();
        Self {
            inner,
            period,
            last_frame: now,
            sleep: tokio::time::sleep_until(now + period),
            done: false,
            metrics,
        }
    }
}

impl<B> fmt::Debug for IdleBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdleBody")
            .field("period", &self.period)
            .finish_non_exhaustive()
    }
}

impl<B> Body for IdleBody<B>
where
    B: Body<Data = Bytes, Error = BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let mut this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        match this.inner.poll_frame(cx) {
            Poll::Ready(frame) => {
                *this.last_frame = Instant::now();
                Poll::Ready(frame)
            }
            Poll::Pending => {
                loop {
                    ready!(this.sleep.as_mut().poll(cx));
                    let deadline = *this.last_frame + *this.period;
                    if deadline <= this.sleep.deadline() {
                        break;
                    }
                    this.sleep.as_mut().reset(deadline);
                }
                *this.done = true;
                this.metrics.upstream_error("idle_timeout");
                Poll::Ready(Some(Err(Box::new(UpstreamIdle(*this.period)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
