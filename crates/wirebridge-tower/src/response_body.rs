//! The body the client receives.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use crate::exchange::Tracker;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use pin_project::pin_project;
use wirebridge_convert::{SseTranslator, StreamTranslate};

/// A response body: the upstream's own, a translated JSON body, or an
/// upstream event stream translated frame by frame as it arrives.
#[pin_project(project = ResponseBodyProj)]
pub enum ResponseBody<B> {
    /// The upstream's body, unchanged.
    Passthrough {
        #[pin]
        /// The upstream body.
        inner: B,
    },
    /// A complete body.
    Full {
        /// The bytes, until sent.
        data: Option<Bytes>,
    },
    /// A translated event stream.
    Stream {
        #[pin]
        /// The upstream event stream.
        inner: B,
        /// Decoder, translator and pending output.
        state: Box<StreamState>,
    },
}

/// A future run before a stream's last frame is released.
pub(crate) type HoldFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Given the `data` of a stream's terminal frame, returns work that must be
/// done before the client receives it (such as storing the response), or
/// `None` to release it at once.
pub(crate) type FinishHook = Box<dyn FnOnce(&str) -> Option<HoldFuture> + Send>;

/// The state of a translated stream.
pub struct StreamState {
    stream: SseTranslator<Box<dyn StreamTranslate + Send>>,
    out: Vec<u8>,
    upstream_done: bool,
    tracker: Tracker,
    on_finish: Option<FinishHook>,
    holding: Option<(Bytes, HoldFuture)>,
}

impl fmt::Debug for StreamState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamState")
            .field("upstream_done", &self.upstream_done)
            .field("pending", &self.out.len())
            .finish_non_exhaustive()
    }
}

impl Drop for StreamState {
    fn drop(&mut self) {
        // The client went away before the end: report what there was.
        let translator = self.stream.translator();
        let mut summary = translator.summary();
        if summary.outcome.is_none() {
            summary.outcome = Some("client_closed".into());
        }
        self.tracker.losses.extend(translator.losses().clone());
        self.tracker.report(summary);
    }
}

impl<B> fmt::Debug for ResponseBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseBody::Passthrough { .. } => f.write_str("ResponseBody::Passthrough"),
            ResponseBody::Full { data } => f
                .debug_struct("ResponseBody::Full")
                .field("len", &data.as_ref().map(Bytes::len))
                .finish(),
            ResponseBody::Stream { state, .. } => {
                f.debug_tuple("ResponseBody::Stream").field(state).finish()
            }
        }
    }
}

impl<B> ResponseBody<B> {
    /// The upstream's body, unchanged.
    pub fn passthrough(inner: B) -> Self {
        ResponseBody::Passthrough { inner }
    }

    /// A complete body.
    pub fn full(data: impl Into<Bytes>) -> Self {
        ResponseBody::Full {
            data: Some(data.into()),
        }
    }

    pub(crate) fn stream(
        inner: B,
        translator: Box<dyn StreamTranslate + Send>,
        max_event_size: usize,
        tracker: Tracker,
    ) -> Self {
        ResponseBody::Stream {
            inner,
            state: Box::new(StreamState {
                stream: SseTranslator::with_max_event_size(translator, max_event_size),
                out: Vec::new(),
                upstream_done: false,
                tracker,
                on_finish: None,
                holding: None,
            }),
        }
    }

    /// Runs `hook` on the terminal frame before releasing it.
    pub(crate) fn on_finish(mut self, hook: FinishHook) -> Self {
        if let ResponseBody::Stream { state, .. } = &mut self {
            state.on_finish = Some(hook);
        }
        self
    }
}

/// Where the last SSE frame of `out` starts (frames end with a blank line).
fn last_frame_start(out: &[u8]) -> usize {
    let body = &out[..out.len().saturating_sub(2)];
    body.windows(2)
        .rposition(|w| w == b"\n\n")
        .map_or(0, |i| i + 2)
}

/// The `data` of one SSE frame.
fn frame_data(frame: &[u8]) -> &str {
    let text = std::str::from_utf8(frame).unwrap_or("");
    text.lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or("")
}

impl StreamState {
    /// Translates the events a frame of upstream bytes completes.
    fn feed(&mut self, bytes: &[u8]) {
        let StreamState {
            stream,
            out,
            tracker,
            ..
        } = self;
        tracker.timed(|| stream.feed(bytes, out));
    }

    fn end_upstream(&mut self, error: Option<String>) {
        let StreamState {
            stream,
            out,
            tracker,
            ..
        } = self;
        tracker.timed(|| match error {
            Some(message) => stream.fail(&message, out),
            None => stream.finish(out),
        });
        self.upstream_done = true;
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
        match self.project() {
            ResponseBodyProj::Passthrough { inner } => inner.poll_frame(cx),
            ResponseBodyProj::Full { data } => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
            ResponseBodyProj::Stream { mut inner, state } => loop {
                if let Some((_, work)) = &mut state.holding {
                    ready!(work.as_mut().poll(cx));
                    let (frame, _) = state.holding.take().expect("checked above");
                    return Poll::Ready(Some(Ok(Frame::data(frame))));
                }
                if state.stream.is_finished() && !state.out.is_empty() && state.on_finish.is_some()
                {
                    let start = last_frame_start(&state.out);
                    let hook = state.on_finish.take().expect("checked above");
                    let terminal = state.out.split_off(start);
                    match hook(frame_data(&terminal)) {
                        Some(work) => state.holding = Some((Bytes::from(terminal), work)),
                        None => state.out.extend_from_slice(&terminal),
                    }
                    if state.out.is_empty() {
                        continue;
                    }
                }
                if !state.out.is_empty() {
                    let frame = Bytes::from(std::mem::take(&mut state.out));
                    return Poll::Ready(Some(Ok(Frame::data(frame))));
                }
                if state.upstream_done || state.stream.is_finished() {
                    // Nothing more will be read: an upstream that keeps the
                    // connection open after its last event is not waited on.
                    if !state.upstream_done {
                        state.upstream_done = true;
                    }
                    return Poll::Ready(None);
                }
                match ready!(inner.as_mut().poll_frame(cx)) {
                    Some(Ok(frame)) => {
                        state.tracker.first_byte();
                        if let Ok(data) = frame.into_data() {
                            state.feed(&data);
                        }
                    }
                    Some(Err(e)) => state.end_upstream(Some(format!(
                        "the upstream connection failed mid-stream: {e}"
                    ))),
                    None => state.end_upstream(None),
                }
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Passthrough { inner } => inner.is_end_stream(),
            ResponseBody::Full { data } => data.is_none(),
            ResponseBody::Stream { state, .. } => {
                state.out.is_empty()
                    && state.holding.is_none()
                    && (state.upstream_done || state.stream.is_finished())
            }
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Passthrough { inner } => inner.size_hint(),
            ResponseBody::Full { data } => {
                SizeHint::with_exact(data.as_ref().map_or(0, |d| d.len() as u64))
            }
            ResponseBody::Stream { .. } => SizeHint::default(),
        }
    }
}
