//! [`DemoBody`]: the response body of the demo upstream, a list of chunks
//! released one by one with a pause between them, that can end cleanly or
//! with an error (which makes the server drop the connection).

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::time::Sleep;

/// The pause before a scripted cut, long enough for the server to flush the
/// chunks sent before it.
const CUT_PAUSE: Duration = Duration::from_millis(20);

/// The error a [`DemoBody`] ends with when a stream is cut on purpose.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DemoBodyError {
    /// The request asked for `demo:cut`: the body stops before its end, and a
    /// server drops the connection.
    #[error("the demo upstream cut the response short on purpose (demo:cut)")]
    Cut,
}

/// How a body ends after its last chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Normally.
    Finish,
    /// With [`DemoBodyError::Cut`].
    Cut,
}

/// The streaming response body of the demo upstream.
///
/// It implements [`http_body::Body`] with `Data = Bytes`, is `Send + Sync +
/// Unpin`, and needs a Tokio runtime with the time driver only when it has
/// pauses between chunks. Bodies of scripted cuts (`demo:cut`) end with
/// [`DemoBodyError::Cut`] instead of ending normally.
pub struct DemoBody {
    chunks: VecDeque<Bytes>,
    first_delay: Duration,
    delay: Duration,
    ending: Ending,
    exact: bool,
    started: bool,
    finished: bool,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl DemoBody {
    /// A body of one chunk, sent at once, with an exact length.
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        let mut body = Self::chunks(vec![bytes.into()], Duration::ZERO, Ending::Finish);
        body.exact = true;
        body
    }

    /// Chunks with `delay` between them, then `ending`.
    pub(crate) fn chunks(chunks: Vec<Bytes>, delay: Duration, ending: Ending) -> Self {
        DemoBody {
            chunks: chunks.into_iter().filter(|c| !c.is_empty()).collect(),
            first_delay: Duration::ZERO,
            delay,
            ending,
            exact: false,
            started: false,
            finished: false,
            sleep: None,
        }
    }

    /// Wait `delay` before the first chunk too.
    pub(crate) fn with_first_delay(mut self, delay: Duration) -> Self {
        self.first_delay = delay;
        self
    }

    /// Everything left in the body, without pauses (for tests).
    #[cfg(test)]
    fn remaining(&self) -> Vec<u8> {
        self.chunks.iter().flat_map(|c| c.iter().copied()).collect()
    }
}

impl Default for DemoBody {
    /// An empty body.
    fn default() -> Self {
        DemoBody::full(Bytes::new())
    }
}

impl fmt::Debug for DemoBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DemoBody")
            .field("chunks_left", &self.chunks.len())
            .field("delay", &self.delay)
            .field("ending", &self.ending)
            .finish_non_exhaustive()
    }
}

impl Body for DemoBody {
    type Data = Bytes;
    type Error = DemoBodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, DemoBodyError>>> {
        let this = self.get_mut();
        if this.finished || (this.chunks.is_empty() && this.ending == Ending::Finish) {
            return Poll::Ready(None);
        }
        let mut wait = if this.started {
            this.delay
        } else {
            this.first_delay
        };
        if this.chunks.is_empty() {
            wait = wait.max(CUT_PAUSE);
        }
        if !wait.is_zero() {
            let sleep = this
                .sleep
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(wait)));
            ready!(sleep.as_mut().poll(cx));
            this.sleep = None;
        }
        this.started = true;
        match this.chunks.pop_front() {
            Some(chunk) => Poll::Ready(Some(Ok(Frame::data(chunk)))),
            None => {
                this.finished = true;
                Poll::Ready(Some(Err(DemoBodyError::Cut)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.finished || (self.chunks.is_empty() && self.ending == Ending::Finish)
    }

    fn size_hint(&self) -> SizeHint {
        if self.exact && self.ending == Ending::Finish {
            SizeHint::with_exact(self.chunks.iter().map(|c| c.len() as u64).sum())
        } else {
            SizeHint::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn full_body_is_exact() {
        let body = DemoBody::full("hello");
        assert_eq!(body.size_hint().exact(), Some(5));
        assert_eq!(body.remaining(), b"hello");
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"hello");
        assert!(DemoBody::default().is_end_stream());
    }

    #[tokio::test]
    async fn chunks_arrive_in_order_with_pauses() {
        let chunks = vec![Bytes::from("a"), Bytes::from("b"), Bytes::from("c")];
        let start = tokio::time::Instant::now();
        let body = DemoBody::chunks(chunks, Duration::from_millis(10), Ending::Finish);
        assert_eq!(body.size_hint().exact(), None);
        let bytes = body.collect().await.unwrap().to_bytes();
        assert_eq!(&bytes[..], b"abc");
        assert!(start.elapsed() >= Duration::from_millis(20));
    }

    #[tokio::test]
    async fn cut_bodies_end_with_an_error() {
        let mut body = DemoBody::chunks(vec![Bytes::from("a")], Duration::ZERO, Ending::Cut);
        let first = body.frame().await.unwrap().unwrap();
        assert_eq!(first.into_data().unwrap(), "a");
        assert!(!body.is_end_stream());
        assert_eq!(body.frame().await.unwrap().unwrap_err(), DemoBodyError::Cut);
        assert!(body.frame().await.is_none());
    }
}
