//! [`RequestBody`]: the body the inner service receives.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project::pin_project;

/// A boxed error, as request bodies report them.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body of a request to the inner service: the client's own for
/// requests that pass through (streamed untouched), or a translated one.
#[pin_project]
pub struct RequestBody<B> {
    #[pin]
    kind: Kind<B>,
}

#[pin_project(project = KindProj)]
enum Kind<B> {
    Original {
        #[pin]
        body: B,
    },
    Translated {
        data: Option<Bytes>,
    },
}

impl<B> RequestBody<B> {
    /// The client's body, unchanged.
    pub fn original(body: B) -> Self {
        Self {
            kind: Kind::Original { body },
        }
    }

    /// No body at all.
    pub fn empty() -> Self {
        Self {
            kind: Kind::Translated { data: None },
        }
    }

    /// A complete body built by the layer.
    pub fn translated(data: Bytes) -> Self {
        Self {
            kind: Kind::Translated { data: Some(data) },
        }
    }
}

impl<B> RequestBody<B> {
    /// The same body again, when it is a translated one not yet sent: a
    /// client may send such a request again (on another connection) when
    /// the first attempt failed before any answer.
    pub fn replay(&self) -> Option<Self> {
        match &self.kind {
            Kind::Translated { data: Some(data) } => Some(Self::translated(data.clone())),
            _ => None,
        }
    }
}

impl<B> RequestBody<RequestBody<B>> {
    /// The body of a request that went through two layers, as one: for a
    /// service under both (the stateful Responses layer over the Chat
    /// translation, say) that takes the bodies of one.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use http_body_util::Full;
    /// use wirebridge_tower::RequestBody;
    ///
    /// let twice = RequestBody::original(RequestBody::<Full<Bytes>>::translated(Bytes::from("{}")));
    /// assert!(twice.flatten().replay().is_some());
    /// ```
    pub fn flatten(self) -> RequestBody<B> {
        match self.kind {
            Kind::Original { body } => body,
            Kind::Translated { data } => RequestBody {
                kind: Kind::Translated { data },
            },
        }
    }
}

impl<B> fmt::Debug for RequestBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RequestBody");
        match &self.kind {
            Kind::Original { .. } => d.field("kind", &"original"),
            Kind::Translated { data } => d
                .field("kind", &"translated")
                .field("len", &data.as_ref().map(Bytes::len)),
        };
        d.finish()
    }
}

impl<B> Body for RequestBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.project().kind.project() {
            KindProj::Original { body } => body.poll_frame(cx).map_err(Into::into),
            KindProj::Translated { data } => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Original { body } => body.is_end_stream(),
            Kind::Translated { data } => data.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Original { body } => body.size_hint(),
            Kind::Translated { data } => {
                SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64))
            }
        }
    }
}
