//! [`ResponseFuture`]: the future of [`Translate`](crate::Translate).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use http::Response;
use pin_project::pin_project;

use crate::body::ResponseBody;

/// A translated exchange, boxed: it awaits the request body, the store and
/// the upstream in turn.
pub(crate) type Exchange<B, E> =
    Pin<Box<dyn Future<Output = Result<Response<ResponseBody<B>>, E>> + Send>>;

/// Response future of [`Translate`](crate::Translate).
#[pin_project]
pub struct ResponseFuture<F, B, E> {
    #[pin]
    kind: Kind<F, B, E>,
}

#[pin_project(project = KindProj)]
enum Kind<F, B, E> {
    /// A request the layer does not intercept: the inner service's future.
    Passthrough {
        #[pin]
        future: F,
    },
    /// A translated exchange, or a request the store answers.
    Exchange { future: Exchange<B, E> },
}

impl<F, B, E> ResponseFuture<F, B, E> {
    pub(crate) fn passthrough(future: F) -> Self {
        Self {
            kind: Kind::Passthrough { future },
        }
    }

    pub(crate) fn exchange(future: Exchange<B, E>) -> Self {
        Self {
            kind: Kind::Exchange { future },
        }
    }
}

impl<F, B, E> Future for ResponseFuture<F, B, E>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<ResponseBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().kind.project() {
            KindProj::Passthrough { future } => {
                let response = ready!(future.poll(cx))?;
                Poll::Ready(Ok(response.map(ResponseBody::passthrough)))
            }
            KindProj::Exchange { future } => future.as_mut().poll(cx),
        }
    }
}

impl<F, B, E> fmt::Debug for ResponseFuture<F, B, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::Passthrough { .. } => "passthrough",
            Kind::Exchange { .. } => "exchange",
        };
        f.debug_struct("ResponseFuture")
            .field("kind", &kind)
            .finish()
    }
}
