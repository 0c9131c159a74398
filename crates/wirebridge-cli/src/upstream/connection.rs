//! One exchange on an HTTP/1.1 connection that the exchange drives itself.
//!
//! A pooled client that runs every connection as a task of its own hands
//! each chunk the upstream sends across tasks: the connection's task reads
//! it, and the task serving the client is woken (often on the other worker
//! thread) to take it. Here the connection is polled by the exchange
//! itself: while waiting for the response head, then from the response
//! body. Bytes read from the upstream are written to the client by the same
//! task, in the same poll, and an upstream read that holds several events
//! leaves as one write.
//!
//! hyper's connection state lives for one exchange: the transport under it
//! is handed back ([`http1::Connection::into_parts`]) when the response has
//! ended cleanly, with whatever hyper had read past its end, so that the
//! pool holds bare transports and can look at them itself before reusing
//! one.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::client::conn::http1;

use super::transport::{Tracked, Transport};
use super::Outgoing;
use crate::own_wakes::OwnWakes;

/// Where a transport goes when its exchange has ended cleanly.
pub trait Checkin<T>: Send + Sync + 'static {
    /// Takes `transport` back, idle, for a later exchange.
    fn checkin(&self, transport: T);
}

/// A connection and the handle that sends its one request.
struct Driven<T: Transport> {
    sender: http1::SendRequest<Outgoing>,
    connection: http1::Connection<Tracked<T>, Outgoing>,
}

impl<T: Transport> Driven<T> {
    /// Polls the connection: reads what the upstream sent, writes what is
    /// to be sent. `true` when it has ended.
    fn drive(&mut self, cx: &mut Context<'_>) -> bool {
        Pin::new(&mut self.connection).poll(cx).is_ready()
    }
}

/// Why an exchange got no response head.
#[derive(Debug)]
pub struct Unanswered {
    /// What failed.
    pub error: hyper::Error,
    /// The request, when hyper handed it back: it never took it from its
    /// queue, so not one byte of it was written.
    pub unsent: Option<Request<Outgoing>>,
    /// Whether any byte reached the transport.
    pub wrote: bool,
}

/// Sends `request` (its URI in origin form) over `transport` and waits for
/// the response head, driving the connection meanwhile. The response body
/// drives it on, and hands the transport to `home` once the response has
/// ended on a connection that can carry another request.
pub async fn send<T: Transport>(
    transport: T,
    request: Request<Outgoing>,
    home: Arc<dyn Checkin<T>>,
) -> Result<Response<DrivenBody<T>>, Unanswered> {
    // A handshake does no I/O: it sets up hyper's state for the transport.
    let (mut sender, connection) = match http1::Builder::new()
        .handshake(Tracked::new(transport))
        .await
    {
        Ok(parts) => parts,
        Err(error) => {
            return Err(Unanswered {
                error,
                unsent: Some(request),
                wrote: false,
            })
        }
    };
    let mut response = pin!(sender.try_send_request(request));
    let mut driven = Some(Driven { sender, connection });
    let mut wrote = false;
    let own = OwnWakes::new();
    let result = poll_fn(|cx| {
        own.poll(cx, |cx| {
            // The connection first: it writes the request and reads the
            // head the response future is waiting for.
            if driven.as_mut().is_some_and(|d| d.drive(cx)) {
                // Dropped as soon as it ends: a request still queued for it
                // is failed, and handed back, only when the connection is
                // gone.
                let ended = driven.take().expect("driven");
                wrote = ended.connection.into_parts().io.wrote();
            }
            response.as_mut().poll(cx)
        })
    })
    .await;
    match result {
        Ok(response) => Ok(response.map(|body| DrivenBody {
            rest: Rest { body, driven, home },
            own,
        })),
        Err(mut e) => {
            let unsent = e.take_message();
            // A connection that failed while still running (hyper gave up
            // on the exchange alone) is asked what it wrote, then dropped.
            if let Some(failed) = driven.take() {
                wrote = failed.connection.into_parts().io.wrote();
            }
            Err(Unanswered {
                error: e.into_error(),
                unsent,
                wrote,
            })
        }
    }
}

/// The upstream's response body, driving its connection; its transport goes
/// home once the body has ended on a connection kept alive. A body dropped
/// before its end, or one that fails, closes its connection.
pub struct DrivenBody<T: Transport> {
    rest: Rest<T>,
    own: OwnWakes,
}

/// What is left of the exchange once the head has arrived.
struct Rest<T: Transport> {
    body: Incoming,
    driven: Option<Driven<T>>,
    home: Arc<dyn Checkin<T>>,
}

impl<T: Transport> Rest<T> {
    /// The body ended: a connection that can carry another request goes
    /// home; any other is closed.
    fn release(&mut self, cx: &mut Context<'_>) {
        let Some(mut driven) = self.driven.take() else {
            return;
        };
        // One more poll lets the connection take in the end of the message
        // and turn ready for the next. hyper turns ready only when both the
        // request and the response are complete and the upstream did not
        // ask to close; bytes already read past the response's end fail it
        // instead ("unexpected message").
        if driven.drive(cx) || !driven.sender.is_ready() {
            return;
        }
        let parts = driven.connection.into_parts();
        // Whatever hyper read past the end of the response belongs to no
        // request; a write left unfinished would reach the upstream ahead of
        // the next request. Either way the connection is closed.
        if !parts.read_buf.is_empty() || parts.io.unflushed() {
            tracing::debug!(
                unread = parts.read_buf.len(),
                unflushed = parts.io.unflushed(),
                "an upstream connection is closed after its exchange"
            );
            return;
        }
        self.home.checkin(parts.io.into_inner());
    }

    /// The body's next frame, the connection driven meanwhile.
    fn poll_frame(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self;
        // The body first: asking for data is what lets the connection read
        // it. Then the connection, then the body again for what it read.
        for _ in 0..2 {
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(None) => {
                    this.release(cx);
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Ok(frame))) => {
                    if this.body.is_end_stream() {
                        this.release(cx);
                    }
                    return Poll::Ready(Some(Ok(frame)));
                }
                Poll::Ready(Some(Err(e))) => {
                    this.driven = None;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Pending => {}
            }
            match &mut this.driven {
                Some(driven) => {
                    if driven.drive(cx) {
                        this.driven = None;
                    }
                }
                None => return Poll::Pending,
            }
        }
        Poll::Pending
    }
}

impl<T: Transport> Body for DrivenBody<T> {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let DrivenBody { rest, own } = &mut *self;
        own.poll(cx, |cx| rest.poll_frame(cx))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.rest.body.size_hint()
    }
}
