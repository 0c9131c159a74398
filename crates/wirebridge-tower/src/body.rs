//! [`ResponseBody`]: the body the client receives.

mod stream;

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project::pin_project;
use wirebridge_convert::{Frames, Framing};

use stream::Driver;
pub(crate) use stream::{HoldFuture, Release, StreamState};

/// Marks a streamed reply whose events are bare JSON, a frame each (see
/// [`Framing`]), with the framing it was asked for: the reader, in this
/// process, takes them as they are.
pub(crate) fn mark_framing(head: &mut http::response::Parts, framing: &Framing) {
    if framing.is_json() {
        head.extensions.insert(framing.clone());
    }
}

/// A source of frames made elsewhere, read as they come.
pub(crate) trait FrameSource: fmt::Debug + Send + 'static {
    /// The next bytes, or `None` at the end.
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>>;

    /// Whether nothing more will come.
    fn is_end(&self) -> bool;
}

/// The body of a response from [`Translate`](crate::Translate): the
/// upstream's own body for requests that pass through, a translated JSON
/// body, or an upstream event stream translated frame by frame as it
/// arrives.
#[pin_project]
pub struct ResponseBody<B> {
    #[pin]
    kind: Kind<B>,
}

#[pin_project(project = KindProj)]
enum Kind<B> {
    Passthrough {
        #[pin]
        inner: B,
    },
    Full {
        data: Option<Bytes>,
    },
    /// Whole bare JSON events, a frame each.
    Events {
        events: VecDeque<Bytes>,
        /// How the response they tell ended (its status).
        outcome: Option<String>,
    },
    Stream {
        #[pin]
        inner: B,
        state: Box<dyn Driver>,
        /// Whether the upstream body has ended (or failed): it is not
        /// polled again.
        inner_ended: bool,
    },
    /// The events of a background response, as its run makes them.
    Follow {
        follower: Box<dyn FrameSource>,
    },
}

impl<B> ResponseBody<B> {
    /// The upstream's body, unchanged.
    pub fn passthrough(inner: B) -> Self {
        Self {
            kind: Kind::Passthrough { inner },
        }
    }

    /// A complete body.
    pub fn full(data: impl Into<Bytes>) -> Self {
        Self {
            kind: Kind::Full {
                data: Some(data.into()),
            },
        }
    }

    /// Events written whole: one body in SSE, a frame an event in bare
    /// JSON; `outcome` is how the response they tell ended, as its writer's
    /// [`ReplySummary`](wirebridge_convert::ReplySummary) says.
    pub(crate) fn events(frames: Frames, outcome: Option<String>) -> Self {
        if !frames.framing().is_json() {
            return Self::full(frames.as_bytes().to_vec());
        }
        let mut frames = frames;
        let taken = frames.take();
        let mut bytes = Bytes::from(taken.bytes);
        let mut at = 0;
        let events = taken
            .ends
            .into_iter()
            .map(|end| {
                let event = bytes.split_to(end - at);
                at = end;
                event
            })
            .collect();
        Self {
            kind: Kind::Events { events, outcome },
        }
    }

    /// An upstream event stream, translated as it is read.
    pub(crate) fn stream(inner: B, state: Box<dyn Driver>) -> Self {
        Self {
            kind: Kind::Stream {
                inner,
                state,
                inner_ended: false,
            },
        }
    }

    /// Frames read from `follower` as they come.
    pub(crate) fn follow(follower: impl FrameSource) -> Self {
        Self {
            kind: Kind::Follow {
                follower: Box::new(follower),
            },
        }
    }

    /// How the response a stream of events tells ended, as the writer of
    /// the events knows it (a Responses status: `completed`, `incomplete`,
    /// `failed`; a Chat `finish_reason`): `None` for a body that is no
    /// such stream, or one whose writer wrote no end. Read once the stream
    /// has ended, where the events themselves need not be read again to
    /// know it (a WebSocket turn).
    // Read by the WebSocket mode alone.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub(crate) fn outcome(&self) -> Option<String> {
        match &self.kind {
            Kind::Events { outcome, .. } => outcome.clone(),
            Kind::Stream { state, .. } => state.outcome(),
            Kind::Passthrough { .. } | Kind::Full { .. } | Kind::Follow { .. } => None,
        }
    }

    /// The length of a complete body.
    pub(crate) fn full_len(&self) -> Option<usize> {
        match &self.kind {
            Kind::Full { data } => Some(data.as_ref().map_or(0, Bytes::len)),
            _ => None,
        }
    }
}

impl<B> fmt::Debug for ResponseBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ResponseBody");
        match &self.kind {
            Kind::Passthrough { .. } => d.field("kind", &"passthrough"),
            Kind::Full { data } => d
                .field("kind", &"full")
                .field("len", &data.as_ref().map(Bytes::len)),
            Kind::Events { events, .. } => d.field("kind", &"events").field("len", &events.len()),
            Kind::Stream { state, .. } => d.field("kind", &"stream").field("state", state),
            Kind::Follow { follower } => d.field("kind", &"follow").field("run", follower),
        };
        d.finish()
    }
}

impl<B> Body for ResponseBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: fmt::Display,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        match self.project().kind.project() {
            KindProj::Passthrough { inner } => inner.poll_frame(cx),
            KindProj::Full { data } => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
            KindProj::Events { events, .. } => {
                Poll::Ready(events.pop_front().map(|e| Ok(Frame::data(e))))
            }
            KindProj::Stream {
                inner,
                state,
                inner_ended,
            } => stream::poll_frame(inner, state.as_mut(), inner_ended, cx),
            KindProj::Follow { follower } => follower
                .poll_next(cx)
                .map(|frames| frames.map(|f| Ok(Frame::data(f)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Passthrough { inner } => inner.is_end_stream(),
            Kind::Full { data } => data.is_none(),
            Kind::Events { events, .. } => events.is_empty(),
            Kind::Stream { state, .. } => state.is_end_stream(),
            Kind::Follow { follower } => follower.is_end(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Passthrough { inner } => inner.size_hint(),
            Kind::Full { data } => {
                SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64))
            }
            Kind::Events { .. } | Kind::Stream { .. } | Kind::Follow { .. } => SizeHint::default(),
        }
    }
}
