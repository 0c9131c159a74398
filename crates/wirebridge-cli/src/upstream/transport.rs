//! The byte stream under an upstream connection, and what the pool needs of
//! it beyond reading and writing: a look at what the upstream sent that
//! nobody asked for.

use std::io;
use std::mem::MaybeUninit;

use hyper::rt::{Read, Write};
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
