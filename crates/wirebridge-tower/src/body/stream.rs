//! A translated event stream: upstream frames in, client frames out, with
//! the terminal frames held back while a response is stored.
//!
//! The client's frames are framed as the request asked ([`Framing`]):
//! server-sent events, or bare JSON with each event a frame of its own (for
//! the WebSocket mode and a layer stacked on this one). An upstream that is
//! itself a layer of this crate's answering in bare JSON is read an event a
//! frame, with nothing to decode.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use tokio::time::{Instant, Sleep};
use wirebridge_convert::frames::Taken;
use wirebridge_convert::{Frames, Framing, SseTranslator, StreamTranslate};

use crate::tracker::Tracker;

/// Work that must finish before a stream's terminal frames are released,
/// and what to release then.
pub(crate) type HoldFuture = Pin<Box<dyn Future<Output = Release> + Send>>;

/// The held frames, once the work is done.
pub(crate) enum Release {
    /// As the translator wrote them.
    AsWritten,
    /// With the terminal event rewritten (a response the store did not
    /// keep says so): the data in, the new data out, `None` to keep it.
    Rewritten(fn(&str) -> Option<String>),
}

/// Given the finished translator, the work to do before its terminal frames
/// are released, or `None` to release them at once.
type HoldHook<T> = Box<dyn FnOnce(&T) -> Option<HoldFuture> + Send>;

/// A translated stream's state, whatever the translator's type.
pub(crate) trait Driver: fmt::Debug + Send {
    /// The upstream sent its first bytes.
    fn first_byte(&mut self);
    /// Translates the events `bytes` complete.
    fn feed(&mut self, bytes: &[u8]);
    /// The bytes written and not yet sent.
    fn pending_len(&self) -> usize;
    /// Whether a frame was sent.
    fn has_sent(&self) -> bool;
    /// Whether the stream's first frame was sent and has not yet been let
    /// go out on its own; asking says it has.
    fn take_first_flush(&mut self) -> bool;
    /// The upstream ended, or failed with `error`.
    fn end(&mut self, error: Option<String>);
    /// The next frames to send: `Ready(None)` when there are none yet,
    /// `Pending` while terminal frames are held.
    fn poll_output(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>>;
    /// The upstream has nothing for now: `Ready` when a timer fired and did
    /// its work (a keep-alive comment written, the stream failed as idle).
    fn poll_timers(&mut self, cx: &mut Context<'_>) -> Poll<()>;
    /// Ends the stream if the server is shutting down; whether it did.
    fn poll_closing(&mut self, cx: &mut Context<'_>) -> bool;
    /// Whether nothing more will be read from the upstream.
    fn is_done(&self) -> bool;
    /// Whether nothing more will be sent.
    fn is_end_stream(&self) -> bool;
    /// How the stream ended, as its translator says: `None` until it
    /// wrote its terminal event. Read by the WebSocket mode alone.
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    fn outcome(&self) -> Option<String>;
}

/// A translated stream's state over translator `T`.
pub(crate) struct StreamState<T: StreamTranslate> {
    stream: SseTranslator<T>,
    out: Frames,
    /// Whether the upstream's frames are each one bare JSON event.
    events_apart: bool,
    /// Bare JSON: events taken from `out`, one frame each, not sent yet.
    ready: VecDeque<Bytes>,
    upstream_done: bool,
    tracker: Tracker,
    hold_terminal: Option<HoldHook<T>>,
    holding: Option<(Frames, HoldFuture)>,
    /// Fails the stream when the upstream completes no event for a while.
    idle: Option<Timer>,
    /// Writes a keep-alive comment when nothing was sent for a while.
    keepalive: Option<Timer>,
    /// The upstream's progress when the idle timer was last touched.
    progress: u64,
    /// The size of the last frame sent, the next one's first capacity.
    frame_size: usize,
    /// Whether the first frame was let go out on its own.
    first_flushed: bool,
    /// Completes when the server stops waiting for the stream.
    closing: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// Whether the stream was ended by the server's shutdown.
    shut_down: bool,
}

/// A deadline `period` after the last touch.
///
/// A touch only records the time: the sleep is moved when it fires before
/// the deadline, so a stream that is busy does not move a timer in the
/// runtime's timer wheel on every chunk.
struct Timer {
    period: Duration,
    last_touch: Instant,
    sleep: Pin<Box<Sleep>>,
}

impl Timer {
    fn new(period: Duration) -> Self {
        let now = Instant::now();
        Self {
            period,
            last_touch: now,
            sleep: Box::pin(tokio::time::sleep_until(now + period)),
        }
    }

    fn touch(&mut self, now: Instant) {
        self.last_touch = now;
    }

    /// Ready once `period` has passed since the last touch.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            ready!(self.sleep.as_mut().poll(cx));
            let deadline = self.last_touch + self.period;
            if deadline <= self.sleep.deadline() {
                return Poll::Ready(());
            }
            self.sleep.as_mut().reset(deadline);
        }
    }
}

impl<T: StreamTranslate> StreamState<T> {
    pub(crate) fn new(translator: T, max_event_size: usize, tracker: Tracker) -> Self {
        Self {
            stream: SseTranslator::with_max_event_size(translator, max_event_size),
            out: Frames::sse(),
            events_apart: false,
            ready: VecDeque::new(),
            upstream_done: false,
            tracker,
            hold_terminal: None,
            holding: None,
            idle: None,
            keepalive: None,
            progress: 0,
            frame_size: 0,
            first_flushed: false,
            closing: None,
            shut_down: false,
        }
    }

    /// Writes the client's events in `framing`.
    pub(crate) fn framing(mut self, framing: Framing) -> Self {
        self.out = Frames::new(framing);
        self
    }

    /// Reads the upstream an event a frame: it is a layer of this crate's
    /// writing bare JSON.
    pub(crate) fn events_apart(mut self, apart: bool) -> Self {
        self.events_apart = apart;
        self
    }

    /// Ends the stream in failure, in its dialect, once `shutdown` is
    /// triggered.
    pub(crate) fn shutdown(mut self, shutdown: Option<&crate::Shutdown>) -> Self {
        self.closing = shutdown.map(crate::Shutdown::triggered);
        self
    }

    /// Fails the stream (the client gets its failure event) when the
    /// upstream completes no event for `period`: bytes that trickle in
    /// without completing one do not count.
    pub(crate) fn idle_timeout(mut self, period: Option<Duration>) -> Self {
        self.idle = period.map(Timer::new);
        self
    }

    /// Writes a keep-alive comment whenever nothing was sent for `period`.
    pub(crate) fn keepalive(mut self, period: Option<Duration>) -> Self {
        self.keepalive = period.map(Timer::new);
        self
    }

    /// Runs `hook` on the finished translator; the frames written by the
    /// call that finished it are released only once the work it returns is
    /// done.
    pub(crate) fn hold_terminal(
        mut self,
        hook: impl FnOnce(&T) -> Option<HoldFuture> + Send + 'static,
    ) -> Self {
        self.hold_terminal = Some(Box::new(hook));
        self
    }

    fn check_terminal(&mut self) {
        if !self.stream.is_finished() {
            return;
        }
        let Some(hook) = self.hold_terminal.take() else {
            return;
        };
        if let Some(work) = hook(self.stream.translator()) {
            let empty = Frames::new(self.out.framing().clone());
            let frames = std::mem::replace(&mut self.out, empty);
            self.holding = Some((frames, work));
        }
    }

    /// Moves what was written to the frames ready to send: bare JSON
    /// events one frame each (slices of one buffer, not copies).
    fn queue(&mut self, taken: Taken) {
        let mut bytes = Bytes::from(taken.bytes);
        let mut at = 0;
        for end in taken.ends {
            self.ready.push_back(bytes.split_to(end - at));
            at = end;
        }
    }
}

impl<T: StreamTranslate + Send> Driver for StreamState<T> {
    fn first_byte(&mut self) {
        self.tracker.first_byte();
    }

    fn feed(&mut self, bytes: &[u8]) {
        if self.out.capacity() == 0 {
            // The previous frame's buffer left with it: start this one at
            // the size that one reached instead of growing from nothing, up
            // to a bound, as bytes that complete no event keep it while
            // the stream waits.
            self.out.reserve(self.frame_size.min(MAX_FIRST_CAPACITY));
        } else if !self.out.is_empty() && self.out.capacity() < MAX_BATCH {
            // More of the upstream at hand while a frame waits: a burst,
            // which fills a frame. Its buffer is made that size at once
            // rather than doubled there, each time copying what it holds.
            self.out
                .reserve(MAX_BATCH + MAX_FIRST_CAPACITY - self.out.len());
        }
        // One clock read before and one after: the translation's time, the
        // idle timer's touch and the keep-alive timer's.
        let started = Instant::now();
        match self.events_apart {
            true => self.stream.feed_event(bytes, &mut self.out),
            false => self.stream.feed(bytes, &mut self.out),
        }
        let finished = Instant::now();
        self.tracker
            .add_translation_time(finished.saturating_duration_since(started));
        if self.stream.progress() != self.progress {
            self.progress = self.stream.progress();
            if let Some(idle) = &mut self.idle {
                idle.touch(started);
            }
        }
        if !self.out.is_empty() {
            if let Some(keepalive) = &mut self.keepalive {
                keepalive.touch(finished);
            }
        }
        self.check_terminal();
    }

    fn pending_len(&self) -> usize {
        self.out.len()
    }

    fn has_sent(&self) -> bool {
        self.frame_size > 0
    }

    fn take_first_flush(&mut self) -> bool {
        let first = self.has_sent() && !self.first_flushed;
        self.first_flushed |= first;
        first
    }

    fn end(&mut self, error: Option<String>) {
        let Self {
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
        self.check_terminal();
    }

    fn poll_output(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if let Some(next) = self.ready.pop_front() {
            return Poll::Ready(Some(next));
        }
        if let Some((_, work)) = &mut self.holding {
            let release = ready!(work.as_mut().poll(cx));
            let (mut frames, _) = self.holding.take().expect("checked above");
            if let Release::Rewritten(rewrite) = release {
                frames.rewrite_last(rewrite);
            }
            if frames.framing().is_json() {
                self.queue(frames.take());
                return Poll::Ready(self.ready.pop_front());
            }
            let frames = frames.take().bytes;
            if !frames.is_empty() {
                return Poll::Ready(Some(Bytes::from(frames)));
            }
        }
        if self.out.is_empty() {
            return Poll::Ready(None);
        }
        self.frame_size = self.out.len();
        let taken = self.out.take();
        if self.out.framing().is_json() {
            self.queue(taken);
            return Poll::Ready(self.ready.pop_front());
        }
        Poll::Ready(Some(Bytes::from(taken.bytes)))
    }

    fn poll_timers(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(idle) = &mut self.idle {
            if idle.poll_expired(cx).is_ready() {
                let message = format!(
                    "the upstream sent no event for {} s",
                    idle.period.as_secs_f64()
                );
                self.idle = None;
                self.keepalive = None;
                self.end(Some(message));
                return Poll::Ready(());
            }
        }
        if let Some(keepalive) = &mut self.keepalive {
            if keepalive.poll_expired(cx).is_ready() {
                self.out.keepalive();
                keepalive.touch(Instant::now());
                return Poll::Ready(());
            }
        }
        Poll::Pending
    }

    fn poll_closing(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(closing) = &mut self.closing else {
            return false;
        };
        if closing.as_mut().poll(cx).is_pending() || self.is_done() {
            return false;
        }
        self.closing = None;
        self.idle = None;
        self.keepalive = None;
        self.shut_down = true;
        self.end(Some(crate::shutdown::SHUTDOWN_MESSAGE.to_owned()));
        true
    }

    fn is_done(&self) -> bool {
        // An upstream that keeps the connection open after its last event
        // is not waited on.
        self.upstream_done || self.stream.is_finished()
    }

    fn is_end_stream(&self) -> bool {
        self.out.is_empty() && self.ready.is_empty() && self.holding.is_none() && self.is_done()
    }

    fn outcome(&self) -> Option<String> {
        let translator = self.stream.translator();
        match translator.is_finished() {
            true => translator.summary().outcome,
            false => None,
        }
    }
}

impl<T: StreamTranslate> fmt::Debug for StreamState<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamState")
            .field("upstream_done", &self.upstream_done)
            .field("pending", &self.out.len())
            .field("holding", &self.holding.is_some())
            .finish_non_exhaustive()
    }
}

impl<T: StreamTranslate> Drop for StreamState<T> {
    fn drop(&mut self) {
        // Reports once: at the end, or when the client went away before it.
        let translator = self.stream.translator();
        let mut summary = translator.summary();
        if self.shut_down {
            summary.outcome = Some("shutdown".into());
        } else if summary.outcome.is_none() {
            summary.outcome = Some("client_closed".into());
        }
        self.tracker.losses.extend(translator.losses().clone());
        self.tracker.report(summary);
    }
}

/// The most a frame's buffer starts with.
const MAX_FIRST_CAPACITY: usize = 4 * 1024;

/// Bytes of translated output beyond which no more upstream frames are
/// read into the same client frame.
const MAX_BATCH: usize = 64 * 1024;

/// Polls a translated stream.
///
/// Every upstream frame already at hand is translated before anything is
/// sent, so that events which arrived in one read leave in one frame (and
/// one write), up to [`MAX_BATCH`] bytes. The first frame is the
/// exception: it leaves as soon as one upstream frame gave something to
/// send, so that an upstream which sends its whole stream at once does not
/// hold the client's first event back until most of it is translated.
pub(super) fn poll_frame<B>(
    mut inner: Pin<&mut B>,
    state: &mut dyn Driver,
    inner_ended: &mut bool,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<Frame<Bytes>, B::Error>>>
where
    B: Body<Data = Bytes>,
    B::Error: fmt::Display,
{
    if state.take_first_flush() {
        // A server keeps taking a body's frames into its buffer while the
        // body is ready, and writes when it is not: not being ready once
        // lets the first frame go now.
        cx.waker().wake_by_ref();
        return Poll::Pending;
    }
    loop {
        state.poll_closing(cx);
        let batch = if state.has_sent() { MAX_BATCH } else { 1 };
        if !state.is_done() && state.pending_len() < batch {
            if let Poll::Ready(polled) = inner.as_mut().poll_frame(cx) {
                match polled {
                    Some(Ok(frame)) => {
                        state.first_byte();
                        if let Ok(data) = frame.into_data() {
                            state.feed(&data);
                        }
                    }
                    Some(Err(e)) => {
                        *inner_ended = true;
                        state.end(Some(format!(
                            "the upstream connection failed mid-stream: {e}"
                        )));
                    }
                    None => {
                        *inner_ended = true;
                        state.end(None);
                    }
                }
                continue;
            }
        }
        if state.is_done() && !*inner_ended {
            // Before the last frames go: a client's server stops polling a
            // body that says it has ended.
            *inner_ended = true;
            drain_at_hand(inner.as_mut(), cx);
        }
        if let Some(frames) = ready!(state.poll_output(cx)) {
            return Poll::Ready(Some(Ok(Frame::data(frames))));
        }
        if state.is_done() {
            return Poll::Ready(None);
        }
        ready!(state.poll_timers(cx));
    }
}

/// Bytes an upstream may still have at hand after its stream's terminal
/// event (a chunked body's last chunk, a `[DONE]` line) that are read to
/// let its connection carry another request.
const MAX_DRAIN: usize = 16 * 1024;

/// Reads what the upstream already sent after the translator finished,
/// without waiting for more.
///
/// The translator ends the stream at its terminal event, which usually
/// arrives in the same read as the end of the upstream's body (the last
/// chunk of a chunked body). Reading that end is what lets the upstream's
/// connection be kept for the next request; a body dropped before its end
/// closes its connection, so without this every translated stream opened a
/// connection of its own. An upstream that sends more, or has not sent its
/// end yet, is not waited for: the client's stream ends now, and that
/// connection is closed.
fn drain_at_hand<B: Body<Data = Bytes>>(mut inner: Pin<&mut B>, cx: &mut Context<'_>) {
    let mut drained = 0;
    while drained <= MAX_DRAIN {
        match inner.as_mut().poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                drained += frame.data_ref().map_or(0, Bytes::len);
            }
            Poll::Ready(Some(Err(_)) | None) | Poll::Pending => return,
        }
    }
}
