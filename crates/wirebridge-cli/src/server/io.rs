//! A connection's IO, watched: it tells the watchdog when request bytes
//! arrive. For HTTP/1 every byte counts; for HTTP/2 only the bytes of
//! HEADERS and CONTINUATION frames do, since a client's PINGs, SETTINGS and
//! WINDOW_UPDATEs (sent after every response it reads) are not a request
//! and must not start the header-read clock.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::watchdog::Activity;

/// What a client that speaks HTTP/2 with prior knowledge sends first.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// An HTTP/2 frame header: 24-bit length, type, flags, stream id.
const FRAME_HEADER: usize = 9;

/// HTTP/2 frame types that carry a request head.
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;

/// `T`, reporting request bytes to the connection's [`Activity`].
#[derive(Debug)]
pub struct WatchedIo<T> {
    inner: T,
    activity: Arc<Activity>,
    protocol: Protocol,
}

impl<T> WatchedIo<T> {
    /// Watches `inner` for `activity`.
    pub fn new(inner: T, activity: Arc<Activity>) -> Self {
        Self {
            inner,
            activity,
            protocol: Protocol::Unknown { matched: 0 },
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WatchedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        let this = &mut *self;
        let arrived = &buf.filled()[before..];
        if !arrived.is_empty() && this.protocol.request_bytes(arrived) {
            this.activity.request_bytes();
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WatchedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Which protocol the client speaks, told from its first bytes as hyper's
/// automatic builder tells it.
#[derive(Debug)]
enum Protocol {
    /// So far the bytes match this much of the HTTP/2 preface.
    Unknown {
        matched: usize,
    },
    Http1,
    Http2(FrameScanner),
}

impl Protocol {
    /// Whether `data`, the next bytes read, holds request bytes.
    fn request_bytes(&mut self, data: &[u8]) -> bool {
        match self {
            Protocol::Unknown { matched } => {
                let wanted = &PREFACE[*matched..];
                let n = wanted.len().min(data.len());
                if data[..n] != wanted[..n] {
                    *self = Protocol::Http1;
                    return true;
                }
                *matched += n;
                if *matched == PREFACE.len() {
                    let mut scanner = FrameScanner::default();
                    scanner.feed(&data[n..]);
                    *self = Protocol::Http2(scanner);
                }
                // The preface opens a new connection, whose header clock
                // runs from its start anyway.
                true
            }
            Protocol::Http1 => true,
            Protocol::Http2(scanner) => scanner.feed(data),
        }
    }
}

/// Follows HTTP/2 frame boundaries across reads, to tell which bytes belong
/// to a request head.
#[derive(Debug, Default)]
struct FrameScanner {
    header: [u8; FRAME_HEADER],
    /// Bytes of the current frame header read so far.
    have: usize,
    /// Payload bytes of the current frame still to come.
    remaining: usize,
    /// Whether the current frame is HEADERS or CONTINUATION.
    in_head: bool,
}

impl FrameScanner {
    /// Whether any byte of `data` belongs to a HEADERS or CONTINUATION frame.
    fn feed(&mut self, mut data: &[u8]) -> bool {
        let mut head = false;
        while !data.is_empty() {
            if self.remaining > 0 {
                let n = self.remaining.min(data.len());
                head |= self.in_head;
                self.remaining -= n;
                data = &data[n..];
                continue;
            }
            let n = (FRAME_HEADER - self.have).min(data.len());
            self.header[self.have..self.have + n].copy_from_slice(&data[..n]);
            self.have += n;
            data = &data[n..];
            if self.have == FRAME_HEADER {
                let [a, b, c, kind, ..] = self.header;
                self.remaining = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
                self.in_head = matches!(kind, HEADERS | CONTINUATION);
                head |= self.in_head;
                self.have = 0;
            }
        }
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
            kind,
            0,
            0,
            0,
            0,
            1,
        ];
        f.extend_from_slice(payload);
        f
    }

    const PING: u8 = 0x6;
    const WINDOW_UPDATE: u8 = 0x8;

    #[test]
    fn http1_bytes_always_count() {
        let mut p = Protocol::Unknown { matched: 0 };
        assert!(p.request_bytes(b"POST / HTTP/1.1\r\n"));
        assert!(matches!(p, Protocol::Http1));
        let mut p = Protocol::Unknown { matched: 0 };
        assert!(p.request_bytes(b"PRI * HTTP/1.1"));
        assert!(matches!(p, Protocol::Http1));
    }

    #[test]
    fn http2_control_frames_are_not_requests() {
        let mut p = Protocol::Unknown { matched: 0 };
        let mut start = PREFACE.to_vec();
        start.extend(frame(0x4, &[0; 6])); // SETTINGS
                                           // The preface split across reads.
        assert!(p.request_bytes(&start[..5]));
        assert!(p.request_bytes(&start[5..]));
        assert!(matches!(p, Protocol::Http2(_)));
        assert!(!p.request_bytes(&frame(PING, &[7; 8])));
        assert!(!p.request_bytes(&frame(WINDOW_UPDATE, &[0, 0, 1, 0])));
        assert!(p.request_bytes(&frame(HEADERS, &[1, 2, 3])));
    }

    #[test]
    fn frames_split_anywhere_are_followed() {
        let mut bytes = frame(PING, &[7; 8]);
        bytes.extend(frame(HEADERS, &[9; 20]));
        bytes.extend(frame(CONTINUATION, &[9; 3]));
        bytes.extend(frame(WINDOW_UPDATE, &[0, 0, 1, 0]));
        for split in 1..bytes.len() {
            let mut scanner = FrameScanner::default();
            let marks: Vec<bool> = bytes
                .chunks(split)
                .map(|chunk| scanner.feed(chunk))
                .collect();
            // A chunk is marked when it completes a head frame's header
            // (the HEADERS frame spans 17..46, CONTINUATION 46..58) or
            // holds its payload.
            let head = |i: usize| (25..46).contains(&i) || (54..58).contains(&i);
            let mut offset = 0;
            for (chunk, marked) in bytes.chunks(split).zip(marks) {
                let expected = (offset..offset + chunk.len()).any(head);
                assert_eq!(marked, expected, "split {split}, chunk at {offset}");
                offset += chunk.len();
            }
        }
    }
}
