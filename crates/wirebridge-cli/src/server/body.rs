//! Bodies at the edge of the server: the client's request body under a read
//! deadline, and the response body that keeps its request in flight.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::time::{Instant, Sleep};
use wirebridge_tower::BoxError;

use super::watchdog::InFlight;

/// A client's request body, as the app receives it.
pub type ClientBody = DeadlineBody<Incoming>;

/// How a request body is doing against its deadline; shared by the body
/// and the service that answers 408 when it is missed.
#[derive(Debug)]
pub struct BodyClock {
    /// When the whole body must have arrived.
    pub deadline: Instant,
    /// The timeout, for messages.
    pub limit: Duration,
    finished: AtomicBool,
    expired: AtomicBool,
}

impl BodyClock {
    /// The whole body arrived in time.
    pub fn finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    /// The deadline passed first.
    pub fn expired(&self) -> bool {
        self.expired.load(Ordering::Acquire)
    }

    /// Marks the deadline missed, unless the body finished first.
    pub fn expire(&self) -> bool {
        if self.finished() {
            return false;
        }
        self.expired.store(true, Ordering::Release);
        true
    }
}

/// The deadline passed before the whole request body arrived.
#[derive(Debug)]
pub struct BodyTimedOut(pub Duration);

impl fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the request body did not arrive within {} ms",
            self.0.as_millis()
        )
    }
}

impl std::error::Error for BodyTimedOut {}

/// `B`, failing with [`BodyTimedOut`] once its deadline passes with the
/// body still incomplete: whoever reads it (the layer collecting it, or the
/// upstream client streaming it) stops waiting for a client that drips it.
#[derive(Debug)]
pub struct DeadlineBody<B> {
    inner: B,
    clock: Arc<BodyClock>,
    /// Armed only once a read has to wait: most bodies arrive with their
    /// head and never need a timer.
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<B: Body> DeadlineBody<B> {
    /// `inner`, which must be complete within `limit` from now.
    pub fn new(inner: B, limit: Duration) -> (Self, Arc<BodyClock>) {
        let clock = Arc::new(BodyClock {
            deadline: Instant::now() + limit,
            limit,
            finished: AtomicBool::new(inner.is_end_stream()),
            expired: AtomicBool::new(false),
        });
        let body = Self {
            inner,
            clock: clock.clone(),
            sleep: None,
        };
        (body, clock)
    }
}

impl<B> DeadlineBody<B> {
    fn finish(&mut self) {
        self.clock.finished.store(true, Ordering::Release);
        self.sleep = None;
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.clock.expired() {
            return Poll::Ready(Some(Err(BodyTimedOut(this.clock.limit).into())));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(None) => {
                this.finish();
                Poll::Ready(None)
            }
            Poll::Ready(Some(Ok(frame))) => {
                if this.inner.is_end_stream() {
                    this.finish();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Pending => {
                let deadline = this.clock.deadline;
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if sleep.as_mut().poll(cx).is_pending() || !this.clock.expire() {
                    return Poll::Pending;
                }
                Poll::Ready(Some(Err(BodyTimedOut(this.clock.limit).into())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its request in flight until it has been
/// sent (its last frame taken) or dropped.
pub struct InFlightBody<B> {
    inner: B,
    request: Option<InFlight>,
}

impl<B> InFlightBody<B> {
    /// `inner`, holding `request` in flight.
    pub fn new(inner: B, request: InFlight) -> Self {
        Self {
            inner,
            request: Some(request),
        }
    }
}

impl<B> Body for InFlightBody<B>
where
    B: Body + Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            this.request = None;
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

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::{BodyExt, Full};
    use tokio::sync::mpsc;

    async fn collect<B: Body<Data = Bytes>>(body: B) -> Result<Bytes, B::Error> {
        Ok(body.collect().await?.to_bytes())
    }

    /// A body fed by hand, frame by frame.
    struct Drip(mpsc::Receiver<Bytes>);

    impl Body for Drip {
        type Data = Bytes;
        type Error = BoxError;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
            self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
        }
    }

    #[tokio::test]
    async fn a_complete_body_is_read_through() {
        let (body, clock) =
            DeadlineBody::new(Full::new(Bytes::from("abc")), Duration::from_millis(10));
        assert_eq!(collect(body).await.unwrap(), "abc");
        assert!(clock.finished());
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!clock.expire(), "a finished body never expires");
        assert!(!clock.expired());
    }

    #[tokio::test]
    async fn a_dripped_body_is_cut_at_the_deadline() {
        let (tx, rx) = mpsc::channel(1);
        tx.send(Bytes::from("a")).await.unwrap();
        let started = Instant::now();
        let (body, clock) = DeadlineBody::new(Drip(rx), Duration::from_millis(50));
        let err = collect(body).await.unwrap_err();
        assert!(err.downcast_ref::<BodyTimedOut>().is_some(), "{err}");
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert!(clock.expired() && !clock.finished());
        drop(tx);
    }

    #[tokio::test]
    async fn a_response_body_ends_its_request_when_sent_or_dropped() {
        use super::super::watchdog::{Activity, Timeouts};
        let activity = Activity::new(Timeouts {
            header_read: Duration::from_millis(20),
            idle: Duration::from_millis(20),
        });
        let (tx, rx) = mpsc::channel(1);
        let body = InFlightBody::new(Drip(rx), activity.begin());
        let reader = tokio::spawn(collect(body));
        let watchdog = tokio::spawn({
            let activity = activity.clone();
            async move { activity.expired().await }
        });
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(
            !watchdog.is_finished(),
            "closed while the response was sent"
        );
        drop(tx);
        reader.await.unwrap().unwrap();
        watchdog.await.unwrap();

        let dropped = InFlightBody::new(Full::new(Bytes::new()), activity.begin());
        drop(dropped);
        activity.expired().await;
    }
}
