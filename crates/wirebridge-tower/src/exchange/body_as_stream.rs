//! A reply that came as a body to a client that asked for a stream (some
//! backends ignore `stream`): it is told as the stream the client asked
//! for, never handed over as a body it would not read.

use http::Response;
use wirebridge_convert::{Frames, StreamTranslate};

use super::Reply;
use crate::body::{mark_framing, ResponseBody};
use crate::direction::sealed::{Direction, KeptStream as _};
use crate::headers::insert_reasoning_included;
use crate::replies::{finish_reply, Refused};
use crate::stateful::unstored_event;
use crate::tracker::Tracker;

impl<C: Send + Sync + 'static> Reply<'_, C> {
    /// The client's stream for `bytes`, the body the upstream answered.
    ///
    /// The body is read first as it would be for a client that asked for
    /// a body: what is no answer (an error body, an object that is not the
    /// upstream API's reply) is refused the same way, before any event is
    /// sent, and nothing is stored. An answer is then told as the events
    /// that would have carried it, through the direction's own stream
    /// translator, so the stream is the one a streamed reply would give,
    /// stored the same way.
    pub(super) async fn body_as_stream<D, B>(
        self,
        mut head: http::response::Parts,
        bytes: &[u8],
        mut tracker: Tracker,
    ) -> Response<ResponseBody<B>>
    where
        D: Direction<Context = C>,
    {
        let read = tracker.timed(|| {
            D::translate_reply(bytes, false, &self.context)?;
            D::body_events(bytes)
        });
        let events = match read {
            Ok(events) => events,
            Err(e) => return Refused::from_convert(e).send(&mut tracker),
        };
        let mut frames = Frames::new(self.framing.clone());
        let mut stream = D::stream(self.context);
        tracker.timed(|| {
            for data in &events {
                stream.push(data, &mut frames);
            }
            if !stream.is_finished() {
                stream.finish(&mut frames);
            }
        });
        if let Some(keep) = self.keep {
            if let Some(finished) = stream.kept() {
                if !keep.stateful.save(&keep.tenant, keep.turn, finished).await {
                    frames.rewrite_last(unstored_event);
                }
            }
        }
        tracker.losses.extend(stream.losses().clone());
        if D::REASONING_INCLUDED {
            insert_reasoning_included(&mut head.headers);
        }
        mark_framing(&mut head, &self.framing);
        let summary = stream.summary();
        let body = ResponseBody::events(frames, summary.outcome.clone());
        finish_reply(&mut tracker, head, body, "text/event-stream", Some(summary))
    }
}
