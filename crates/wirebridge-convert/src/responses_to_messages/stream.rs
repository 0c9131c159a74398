//! A Messages stream, translated as it comes.

use super::reader::{Emitted, Reader};
use super::ExchangeContext;
use crate::frames::Frames;
use crate::loss::LossReport;
use crate::responses_to_chat::Finished;
use crate::responses_to_responses;
use crate::stream::StreamTranslate;
use crate::summary::ReplySummary;

/// Translates a Messages backend's stream into the Responses stream the
/// client reads: each Messages event read as Responses events, which the
/// stateless Responses path's translator re-sends.
#[derive(Debug)]
pub struct StreamTranslator {
    reader: Reader,
    inner: responses_to_responses::StreamTranslator,
    /// The reader's losses and the inner translator's, together.
    losses: LossReport,
}

impl StreamTranslator {
    /// A translator for one reply.
    pub fn new(context: ExchangeContext) -> Self {
        Self {
            reader: Reader::new(context.backend),
            inner: responses_to_responses::StreamTranslator::new(context.native),
            losses: LossReport::default(),
        }
    }

    /// The finished response as a store keeps it, once the terminal event
    /// is written.
    pub fn finished(&self) -> Option<Finished<'_>> {
        self.inner.finished()
    }

    /// The Responses translator the events are handed to.
    pub(super) fn inner(&self) -> &responses_to_responses::StreamTranslator {
        &self.inner
    }

    /// Translates a reply that came whole, read as the stream that would
    /// have carried it; the body must already be read (`whole`).
    pub(super) fn push_body(&mut self, whole: &super::reader::Whole<'_>, out: &mut Frames) {
        self.read_with(out, |reader, emit| reader.read_body(whole, emit));
    }

    /// Runs `read` on the reader, what it makes handed to the Responses
    /// translator; a read that fails fails the reply, keeping what came
    /// before it.
    fn read_with(
        &mut self,
        out: &mut Frames,
        read: impl FnOnce(&mut Reader, &mut dyn FnMut(Emitted<'_>)) -> Result<(), String>,
    ) {
        let inner = &mut self.inner;
        let result = read(&mut self.reader, &mut |event| hand_on(inner, event, out));
        if let Err(why) = result {
            self.inner.fail(&why, out);
        }
        self.gather_losses();
    }

    fn gather_losses(&mut self) {
        let total = self.reader.losses().len() + self.inner.losses().len();
        if total != self.losses.len() {
            let mut losses = self.reader.losses().clone();
            losses.extend(self.inner.losses().clone());
            self.losses = losses;
        }
    }
}

/// Hands one event the reader read to the Responses translator: a text
/// delta as values where the translator can take it so, else as JSON.
fn hand_on(
    inner: &mut responses_to_responses::StreamTranslator,
    event: Emitted<'_>,
    out: &mut Frames,
) {
    match event {
        Emitted::Json(json) => inner.push(json, out),
        Emitted::Delta(delta) => {
            if !inner.handed_delta(delta, out) {
                inner.push(&delta.to_json(), out);
            }
        }
    }
}

impl StreamTranslate for StreamTranslator {
    fn push(&mut self, data: &str, out: &mut Frames) {
        self.read_with(out, |reader, emit| reader.read(data, emit));
    }

    fn finish(&mut self, out: &mut Frames) {
        // Ended before `message_stop`: what was open closes first.
        let inner = &mut self.inner;
        self.reader
            .interrupt(&mut |event| hand_on(inner, event, out));
        self.inner.finish(out);
        self.gather_losses();
    }

    fn fail(&mut self, message: &str, out: &mut Frames) {
        let inner = &mut self.inner;
        self.reader
            .interrupt(&mut |event| hand_on(inner, event, out));
        self.inner.fail(message, out);
        self.gather_losses();
    }

    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }

    fn summary(&self) -> ReplySummary {
        self.inner.summary()
    }

    fn losses(&self) -> &LossReport {
        &self.losses
    }
}
