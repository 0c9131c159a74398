//! A scripted upstream over in-memory streams (`tokio::io::duplex`), and
//! the connector that hands the pool one end of each.
//!
//! The transport's `unread` looks into the stream as the socket's own peek
//! does. Its reads can be hidden, as a busy runtime's record of a socket's
//! readiness hides bytes that have arrived: then they show only once the
//! pool has written again, as they would once the runtime catches up.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use http::Uri;
use hyper::rt::{Read, ReadBuf, ReadBufCursor, Write};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, oneshot, watch};

use crate::upstream::transport::{Transport, Unread};

/// One request as the upstream read it.
pub struct Turn {
    /// Which connection (0 for the first made).
    pub connection: usize,
    /// Which request on it (1 for the first).
    pub on_connection: usize,
    /// Its body.
    pub body: String,
}

/// What the upstream does unasked.
enum Push {
    Write(Vec<u8>),
    Close,
}

/// What the upstream does with a request.
pub enum Reply {
    /// Writes these bytes and waits for the next request.
    Answer(Vec<u8>),
    /// Writes these bytes (maybe none) and closes the connection.
    Close(Vec<u8>),
}

/// A complete answer carrying `text`, with `extra` header lines.
pub fn answer_with(text: &str, extra: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n{extra}\r\n{text}",
        text.len()
    )
    .into_bytes()
}

/// A complete answer carrying `text`.
pub fn answer(text: &str) -> Vec<u8> {
    answer_with(text, "")
}

type Script = dyn Fn(&Turn) -> Reply + Send + Sync;

/// The upstream: every connection the pool makes reaches it.
#[derive(Clone)]
pub struct Upstream {
    state: Arc<State>,
}

struct State {
    script: Box<Script>,
    connections: Mutex<Vec<Connection>>,
    requests: Mutex<Vec<String>>,
}

/// The upstream's side of one connection.
struct Connection {
    switches: Arc<Switches>,
    push: mpsc::UnboundedSender<(Push, oneshot::Sender<()>)>,
    closed: watch::Receiver<bool>,
}

impl Upstream {
    /// An upstream answering each request as `script` says.
    pub fn new(script: impl Fn(&Turn) -> Reply + Send + Sync + 'static) -> Self {
        Self {
            state: Arc::new(State {
                script: Box::new(script),
                connections: Mutex::new(Vec::new()),
                requests: Mutex::new(Vec::new()),
            }),
        }
    }

    /// An upstream that answers each request with its own body.
    pub fn echo() -> Self {
        Self::new(|turn| Reply::Answer(answer(&turn.body)))
    }

    /// The connector the pool makes its connections with.
    pub fn connector(&self) -> Connector {
        Connector {
            upstream: self.clone(),
        }
    }

    /// How many connections were made.
    pub fn connections(&self) -> usize {
        self.state.connections.lock().unwrap().len()
    }

    /// The bodies of the requests read, in order.
    pub fn requests(&self) -> Vec<String> {
        self.state.requests.lock().unwrap().clone()
    }

    /// The switches of connection `n`'s transport.
    pub fn switches(&self, n: usize) -> Arc<Switches> {
        Arc::clone(&self.state.connections.lock().unwrap()[n].switches)
    }

    /// Writes `bytes` on connection `n`, unasked; returns once written.
    pub async fn push(&self, n: usize, bytes: Vec<u8>) {
        self.unasked(n, Push::Write(bytes)).await
    }

    /// Closes connection `n`; returns once closed.
    pub async fn close(&self, n: usize) {
        self.unasked(n, Push::Close).await
    }

    async fn unasked(&self, n: usize, push: Push) {
        let (done, pushed) = oneshot::channel();
        let sender = self.state.connections.lock().unwrap()[n].push.clone();
        sender.send((push, done)).expect("connection open");
        pushed.await.expect("done");
    }

    /// Waits until the pool has closed connection `n`.
    pub async fn closed(&self, n: usize) {
        let mut closed = self.state.connections.lock().unwrap()[n].closed.clone();
        let wait = closed.wait_for(|closed| *closed);
        tokio::time::timeout(std::time::Duration::from_secs(5), wait)
            .await
            .expect("the pool closes the connection")
            .expect("closed");
    }
}

/// Makes in-memory connections to the [`Upstream`].
#[derive(Clone)]
pub struct Connector {
    upstream: Upstream,
}

impl tower::Service<Uri> for Connector {
    type Response = MockIo;
    type Error = io::Error;
    type Future = std::future::Ready<io::Result<MockIo>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: Uri) -> Self::Future {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let switches = Arc::new(Switches::default());
        let (push, pushed) = mpsc::unbounded_channel();
        let (closing, closed) = watch::channel(false);
        let state = &self.upstream.state;
        let mut connections = state.connections.lock().unwrap();
        let n = connections.len();
        connections.push(Connection {
            switches: Arc::clone(&switches),
            push,
            closed,
        });
        tokio::spawn(serve(Arc::clone(state), n, theirs, pushed, closing));
        std::future::ready(Ok(MockIo {
            inner: TokioIo::new(ours),
            stash: Vec::new(),
            eof: false,
            switches,
        }))
    }
}

/// The upstream's side: reads requests, answers each as the script says,
/// writes what is pushed, and notes when the pool closes its end.
async fn serve(
    state: Arc<State>,
    connection: usize,
    mut stream: DuplexStream,
    mut pushed: mpsc::UnboundedReceiver<(Push, oneshot::Sender<()>)>,
    closing: watch::Sender<bool>,
) {
    let mut read = Vec::new();
    let mut on_connection = 0;
    loop {
        while let Some((body, used)) = request(&read) {
            read.drain(..used);
            on_connection += 1;
            state.requests.lock().unwrap().push(body.clone());
            let turn = Turn {
                connection,
                on_connection,
                body,
            };
            match (state.script)(&turn) {
                Reply::Answer(bytes) => {
                    if stream.write_all(&bytes).await.is_err() {
                        break;
                    }
                }
                Reply::Close(bytes) => {
                    let _ = stream.write_all(&bytes).await;
                    return; // closed by the upstream, not by the pool
                }
            }
        }
        let mut chunk = [0; 4096];
        tokio::select! {
            n = stream.read(&mut chunk) => match n {
                Ok(0) | Err(_) => break,
                Ok(n) => read.extend_from_slice(&chunk[..n]),
            },
            Some((push, done)) = pushed.recv() => match push {
                Push::Write(bytes) => {
                    let _ = stream.write_all(&bytes).await;
                    let _ = done.send(());
                }
                Push::Close => {
                    drop(stream);
                    let _ = done.send(());
                    return;
                }
            }
        }
    }
    let _ = closing.send(true);
}

/// A complete request at the start of `read`: its body, and its length.
fn request(read: &[u8]) -> Option<(String, usize)> {
    let end = read.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = std::str::from_utf8(&read[..end])
        .unwrap()
        .to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |n| n.trim().parse().unwrap());
    let body = read.get(end..end + length)?;
    Some((String::from_utf8(body.to_vec()).unwrap(), end + length))
}

/// How a transport misbehaves, set by a test.
#[derive(Default)]
pub struct Switches {
    /// Reads wait, as if nothing had arrived, until the pool writes again.
    pub hide_reads: AtomicBool,
    /// Writes fail before taking a byte.
    pub fail_writes: AtomicBool,
    hidden: Mutex<Option<Waker>>,
}

/// The pool's end of an in-memory connection.
pub struct MockIo {
    inner: TokioIo<DuplexStream>,
    /// Bytes `unread` took from the stream, read first.
    stash: Vec<u8>,
    /// `unread` found the end of the stream.
    eof: bool,
    switches: Arc<Switches>,
}

impl Transport for MockIo {
    fn unread(&mut self) -> Unread {
        if !self.stash.is_empty() {
            return Unread::Bytes;
        }
        if self.eof {
            return Unread::Closed;
        }
        let mut chunk = [0; 4096];
        let mut buf = ReadBuf::new(&mut chunk);
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(&mut self.inner).poll_read(&mut cx, buf.unfilled()) {
            Poll::Pending => Unread::Nothing,
            Poll::Ready(Err(_)) => Unread::Failed,
            Poll::Ready(Ok(())) if buf.filled().is_empty() => {
                self.eof = true;
                Unread::Closed
            }
            Poll::Ready(Ok(())) => {
                self.stash.extend_from_slice(buf.filled());
                Unread::Bytes
            }
        }
    }
}

impl Read for MockIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.stash.is_empty() {
            let n = this.stash.len().min(buf.remaining());
            buf.put_slice(&this.stash[..n]);
            this.stash.drain(..n);
            return Poll::Ready(Ok(()));
        }
        if this.eof {
            return Poll::Ready(Ok(()));
        }
        if this.switches.hide_reads.load(Ordering::SeqCst) {
            *this.switches.hidden.lock().unwrap() = Some(cx.waker().clone());
            return Poll::Pending;
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl Write for MockIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let switches = Arc::clone(&self.switches);
        if switches.fail_writes.load(Ordering::SeqCst) {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(_)) = written {
            if switches.hide_reads.swap(false, Ordering::SeqCst) {
                if let Some(reader) = switches.hidden.lock().unwrap().take() {
                    reader.wake();
                }
            }
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
