//! The stream contract: [`StreamTranslate`], implemented by both stream
//! translators, and [`SseTranslator`], which drives one over SSE bytes.
//!
//! Every caller that translates a stream (the tower body, `wirebridge
//! convert`, the benchmarks, the tests and the fuzzers) goes through
//! [`SseTranslator`], so all of them handle split events, decoding errors
//! and the end of the upstream body the same way. Its decoding loop is the
//! only one in the workspace: what the translators write is framed for its
//! reader by [`Frames`], never decoded again.

use wirebridge_sse::Decoder;

use crate::frames::Frames;
use crate::loss::LossReport;
use crate::summary::ReplySummary;

/// A stream translator, driven one upstream SSE event at a time.
///
/// Each call writes complete client events to `out`, in its framing;
/// nothing that could already be sent is held back.
pub trait StreamTranslate {
    /// Feeds one upstream event's `data`.
    fn push(&mut self, data: &str, out: &mut Frames);
    /// The upstream body ended: writes the terminal frames (a failure if the
    /// upstream stopped before its own end).
    fn finish(&mut self, out: &mut Frames);
    /// The upstream failed (a transport error, an unreadable stream):
    /// writes the stream's failure frames.
    fn fail(&mut self, message: &str, out: &mut Frames);
    /// Whether the terminal frame has been written.
    fn is_finished(&self) -> bool;
    /// Outcome, usage and tool calls so far.
    fn summary(&self) -> ReplySummary;
    /// What the stream could not carry.
    fn losses(&self) -> &LossReport;
}

impl<T: StreamTranslate + ?Sized> StreamTranslate for Box<T> {
    fn push(&mut self, data: &str, out: &mut Frames) {
        (**self).push(data, out)
    }
    fn finish(&mut self, out: &mut Frames) {
        (**self).finish(out)
    }
    fn fail(&mut self, message: &str, out: &mut Frames) {
        (**self).fail(message, out)
    }
    fn is_finished(&self) -> bool {
        (**self).is_finished()
    }
    fn summary(&self) -> ReplySummary {
        (**self).summary()
    }
    fn losses(&self) -> &LossReport {
        (**self).losses()
    }
}

/// SSE decoding and a [`StreamTranslate`]: upstream bytes in, client frames
/// out.
///
/// ```
/// use wirebridge_convert::responses_to_chat::{ResponsesContext, StreamTranslator};
/// use wirebridge_convert::stream::SseTranslator;
/// use wirebridge_convert::Frames;
///
/// let upstream = concat!(
///     "data: {\"id\":\"c\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,",
///     "\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
/// );
/// let mut stream = SseTranslator::new(StreamTranslator::new(ResponsesContext::default()));
/// let mut out = Frames::sse();
/// // Bytes arrive split anywhere; events are translated once complete.
/// let (a, b) = upstream.as_bytes().split_at(30);
/// stream.feed(a, &mut out);
/// assert!(out.is_empty());
/// stream.feed(b, &mut out);
/// stream.finish(&mut out);
/// let text = String::from_utf8(out.take().bytes).unwrap();
/// assert!(text.contains("event: response.output_text.delta\n"));
/// assert!(text.contains("event: response.completed\n"));
/// assert!(stream.is_finished());
/// ```
#[derive(Debug)]
pub struct SseTranslator<T> {
    decoder: Decoder,
    translator: T,
    /// Events dispatched, comments included: how far the upstream has got.
    progress: u64,
}

impl<T: StreamTranslate> SseTranslator<T> {
    /// Drives `translator`, with the default limit on one upstream event
    /// ([`wirebridge_sse::DEFAULT_MAX_EVENT_SIZE`]).
    pub fn new(translator: T) -> Self {
        Self::with_max_event_size(translator, wirebridge_sse::DEFAULT_MAX_EVENT_SIZE)
    }

    /// Drives `translator`; an upstream event larger than `max_event_size`
    /// bytes fails the stream.
    pub fn with_max_event_size(translator: T, max_event_size: usize) -> Self {
        Self {
            decoder: Decoder::with_max_event_size(max_event_size),
            translator,
            progress: 0,
        }
    }

    /// Feeds upstream bytes, translating every event they complete. An
    /// unreadable stream (an event over the size limit) fails the
    /// translation; after the terminal frame, input is ignored.
    ///
    /// Upstream comments (`: keepalive`, sent by servers during a long
    /// prefill) are passed on as one `: keepalive` comment when they are all
    /// the bytes brought, so that whatever sits in front of the client
    /// (a load balancer, a proxy with an idle timeout) sees the stream is
    /// alive.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Frames) {
        if self.translator.is_finished() {
            return;
        }
        let (written, comments) = (out.len(), self.decoder.comments_seen());
        self.decode(bytes, out);
        let new_comments = self.decoder.comments_seen() - comments;
        self.progress += new_comments;
        if new_comments > 0 && out.len() == written && !self.translator.is_finished() {
            out.keepalive();
        }
    }

    /// Feeds one whole upstream event's data, for an upstream whose events
    /// arrive apart (a layer of this workspace below, writing bare JSON
    /// [`Frames`]): nothing to decode. Empty data is that upstream's
    /// keep-alive, and is passed on as one.
    pub fn feed_event(&mut self, data: &[u8], out: &mut Frames) {
        if self.translator.is_finished() {
            return;
        }
        self.progress += 1;
        if data.is_empty() {
            out.keepalive();
            return;
        }
        match std::str::from_utf8(data) {
            Ok(data) => self.translator.push(data, out),
            Err(_) => {
                let message = "the upstream stream could not be read: an event is not UTF-8";
                self.translator.fail(message, out);
            }
        }
    }

    fn decode(&mut self, bytes: &[u8], out: &mut Frames) {
        self.decoder.feed(bytes);
        while let Some(event) = self.decoder.next_event() {
            self.progress += 1;
            match event {
                Ok(event) => self.translator.push(event.data, out),
                Err(e) if e.is_fatal() => {
                    let message = format!("the upstream stream could not be read: {e}");
                    self.translator.fail(&message, out);
                    return;
                }
                // A malformed field is skipped, as EventSource does.
                Err(_) => {}
            }
            if self.translator.is_finished() {
                return;
            }
        }
    }

    /// The upstream body ended: translates an event left without its
    /// closing blank line, then ends the translation.
    pub fn finish(&mut self, out: &mut Frames) {
        if !self.translator.is_finished() {
            while let Some(event) = self.decoder.finish() {
                if let Ok(event) = event {
                    self.translator.push(event.data, out);
                }
            }
        }
        self.translator.finish(out);
    }

    /// The upstream failed mid-stream.
    pub fn fail(&mut self, message: &str, out: &mut Frames) {
        self.translator.fail(message, out);
    }

    /// Whether the terminal frame has been written.
    pub fn is_finished(&self) -> bool {
        self.translator.is_finished()
    }

    /// How many events (comments included) the upstream has completed: a
    /// stream whose count stops moving is idle, however many bytes trickle
    /// in.
    pub fn progress(&self) -> u64 {
        self.progress
    }

    /// The translator.
    pub fn translator(&self) -> &T {
        &self.translator
    }

    /// The translator, mutably.
    pub fn translator_mut(&mut self) -> &mut T {
        &mut self.translator
    }

    /// The translator, once the stream is done with.
    pub fn into_translator(self) -> T {
        self.translator
    }
}
