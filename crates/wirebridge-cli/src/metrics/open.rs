//! Gauges of things open now: counted up when opened, down when dropped.

use std::pin::Pin;
use std::task::{Context, Poll};

use http_body::{Body, Frame, SizeHint};
use pin_project::pin_project;
use prometheus_client::metrics::gauge::Gauge;

/// A gauge of open things.
#[derive(Debug, Clone)]
pub struct OpenGauge(Gauge);

impl OpenGauge {
    pub(super) fn new(gauge: Gauge) -> Self {
        Self(gauge)
    }

    /// One more is open until the returned guard is dropped.
    pub fn open(&self) -> Opened {
        self.0.inc();
        Opened(self.0.clone())
    }

    /// How many are open.
    #[cfg(test)]
    pub fn get(&self) -> i64 {
        self.0.get()
    }
}

/// Counts one open thing until dropped.
#[derive(Debug)]
pub struct Opened(Gauge);

impl Drop for Opened {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A body counted as open until it is dropped.
#[pin_project]
#[derive(Debug)]
pub struct CountedBody<B> {
    #[pin]
    inner: B,
    _opened: Opened,
}

impl<B> CountedBody<B> {
    /// Counts `inner` as open.
    pub fn new(inner: B, opened: Opened) -> Self {
        Self {
            inner,
            _opened: opened,
        }
    }
}

impl<B: Body> Body for CountedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        self.project().inner.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
