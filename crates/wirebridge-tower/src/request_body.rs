//! The body the inner service receives.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project::pin_project;

/// A boxed error, as request bodies report them.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A request body: the client's own (requests that pass through, streamed
/// untouched), or a translated one.
#[pin_project(project = RequestBodyProj)]
pub enum RequestBody<B> {
    /// The client's body, unchanged.
    Original {
        #[pin]
        /// The body.
        body: B,
    },
    /// A translated body.
    Translated {
        /// The bytes, until sent.
        data: Option<Bytes>,
    },
}

impl<B> RequestBody<B> {
    /// Wraps the client's body.
    pub fn original(body: B) -> Self {
        RequestBody::Original { body }
    }

    /// A translated body.
    pub fn translated(data: Bytes) -> Self {
        RequestBody::Translated { data: Some(data) }
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
        match self.project() {
            RequestBodyProj::Original { body } => body.poll_frame(cx).map_err(Into::into),
            RequestBodyProj::Translated { data } => {
                Poll::Ready(data.take().map(|d| Ok(Frame::data(d))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            RequestBody::Original { body } => body.is_end_stream(),
            RequestBody::Translated { data } => data.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            RequestBody::Original { body } => body.size_hint(),
            RequestBody::Translated { data } => {
                SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64))
            }
        }
    }
}
