//! The byte stream under an upstream connection, and what the pool needs of
//! it beyond reading and writing: a look at what the upstream sent that
//! nobody asked for, and whether a request left any byte.

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// What waits unread on a connection between two exchanges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// Nothing: the connection can carry a request.
    Nothing,
    /// Bytes the upstream sent that no request asked for.
    Bytes,
    /// The upstream closed the connection.
    Closed,
    /// The connection failed (reset, say).
    Failed,
}

/// A byte stream that connections to the upstream run on, and that the pool
/// keeps between exchanges.
pub trait Transport: Read + Write + Unpin + Send + 'static {
    /// What the upstream has sent that nobody has read yet, asked at once
    /// (it never waits) and without taking it.
    fn unread(&mut self) -> Unread;
}

/// The socket itself is asked (`recv` with `MSG_PEEK`, answered at once by
/// the non-blocking socket). tokio's own `try_read` and `poll_peek` would not
/// do: neither asks the socket while the runtime's record of its readiness
/// says there is nothing to read, and that record is brought up to date only
/// when a worker polls the I/O driver. On a busy runtime, bytes that arrived
/// milliseconds ago can still be missing from it, and a connection holding
/// an answer nobody asked for would look clean.
impl Transport for TokioIo<TcpStream> {
    fn unread(&mut self) -> Unread {
        let mut byte = [MaybeUninit::uninit()];
        loop {
            return match socket2::SockRef::from(self.inner()).peek(&mut byte) {
                Ok(0) => Unread::Closed,
                Ok(_) => Unread::Bytes,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Unread::Nothing,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => Unread::Failed,
            };
        }
    }
}

/// A transport that remembers, for one exchange, whether any byte was
/// written to it, and whether a write is still waiting to finish.
pub struct Tracked<T> {
    inner: T,
    wrote: bool,
    unflushed: bool,
}

impl<T> Tracked<T> {
    /// `inner`, nothing written yet.
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            wrote: false,
            unflushed: false,
        }
    }

    /// Whether any byte reached the transport: when none did, the request
    /// never left, and another connection may carry it.
    pub fn wrote(&self) -> bool {
        self.wrote
    }

    /// Whether a write could not finish (the transport took no more) and
    /// no flush has completed since: what was left would be sent ahead of
    /// the next request.
    pub fn unflushed(&self) -> bool {
        self.unflushed
    }

    /// The transport, for its next exchange.
    pub fn into_inner(self) -> T {
        self.inner
    }

    fn written(&mut self, result: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match &result {
            Poll::Ready(Ok(n)) => self.wrote |= *n > 0,
            Poll::Pending => self.unflushed = true,
            Poll::Ready(Err(_)) => {}
        }
        result
    }
}

impl<T: Read + Unpin> Read for Tracked<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: Write + Unpin> Write for Tracked<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.written(result)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.written(result)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.inner).poll_flush(cx);
        if let Poll::Ready(Ok(())) = result {
            self.unflushed = false;
        }
        result
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
