//! A WebSocket warm-up's exchange (`generate: false`): the request is read,
//! its stored state resolved and its turn prepared as any turn's, then the
//! bridge answers it itself. The backend is not called, whatever its
//! dialect, and no stream of its is made up to be translated back.

use std::sync::Arc;

use http::Response;
use wirebridge_convert::{ConvertError, Frames};

use super::{compacted, framing_of, model_named, prepare, thread, Purpose};
use crate::body::ResponseBody;
use crate::direction::sealed::{ClientRequest as _, Direction};
use crate::direction::state;
use crate::refusal::request::WarmUpNotServed;
use crate::replies::Refused;
use crate::shared::Shared;
use crate::stateful::{unstored_response, Resolved};
use crate::tracker::Tracker;

/// A refusal of a warm-up, in the client's dialect, as a reply with an
/// error body (the WebSocket turn reads it as any turn's error reply).
pub(crate) type WarmUpRefused = Response<ResponseBody<http_body_util::Empty<bytes::Bytes>>>;

/// Answers a warm-up whose body was read: its events, in the framing the
/// request head asks for (`parts`), once the response is kept where
/// `shared`'s store keeps it; or its refusal. It is reported like any
/// exchange, with no time to first byte: nothing upstream answered.
pub(crate) async fn answer<D: Direction>(
    shared: &Arc<Shared<D>>,
    parts: &http::request::Parts,
    bytes: &[u8],
    mut tracker: Tracker,
) -> Result<Frames, WarmUpRefused> {
    let tenant = state::tenant::<D>(&shared.direction, &parts.headers);
    // Declared before the parsed request, which borrows from them: they
    // must be dropped after it.
    let mut stored = Resolved::default();
    let held_by_thread: Vec<u8>;
    let bytes = match thread::held(shared, parts, &tenant, bytes).await {
        Ok(None) => bytes,
        Ok(Some(held)) => {
            held_by_thread = held;
            &held_by_thread[..]
        }
        Err(refused) => return Err(refused.send(&mut tracker)),
    };
    if let Err(refused) = compacted::check(shared, parts, &tenant, bytes) {
        return Err(refused.send(&mut tracker));
    }
    let parsed = match tracker.timed(|| D::parse(parts, bytes)) {
        Ok(parsed) => parsed,
        Err(e) => return Err(Refused::from_convert(e).send(&mut tracker)),
    };
    // Not handed to compaction even when the request names it: compacting
    // asks the model for a summary, and a warm-up asks nothing of the
    // model. A threshold waits for the next turn that generates; a trigger,
    // which asks for the summary now, is refused naming it.
    if let Some(index) = parsed.compaction_trigger_at() {
        let error = ConvertError::invalid(
            format!("input[{index}]"),
            "a warm-up (`generate: false`) cannot compact: the summary is the model's to \
             write; send the compaction_trigger in a turn that generates",
        );
        return Err(Refused::from_convert(error).send(&mut tracker));
    }
    let prepared = prepare::<D>(
        parsed,
        &mut stored,
        &tenant,
        shared,
        &mut tracker,
        Purpose::Turn,
    )
    .await;
    let prepared = match prepared {
        Ok(prepared) => prepared,
        Err(refused) => {
            tracker.model = model_named(bytes).unwrap_or_default();
            return Err(refused.send(&mut tracker));
        }
    };
    tracker.model = prepared.model.clone();
    tracker.stream = prepared.stream;
    tracker.losses = prepared.losses.clone();
    let Some(mut warm_up) = D::warm_up(&prepared.context) else {
        return Err(Refused::from(WarmUpNotServed).send(&mut tracker));
    };
    // Kept before the client reads it, as a real turn's response is, so
    // that a turn continuing it at once finds it. No credential is
    // accepted by it: the backend checked none.
    let stateful = state::stateful::<D>(&shared.direction);
    if let (Some(stateful), Some(turn)) = (stateful, prepared.turn) {
        if !stateful
            .save(&tenant.key, turn, warm_up.reply().finished())
            .await
        {
            let unstored = unstored_response(&warm_up.reply().body);
            warm_up.set_body(unstored);
        }
    }
    let mut events = Frames::new(framing_of(parts));
    warm_up.events(&mut events);
    tracker.status = http::StatusCode::OK.as_u16();
    tracker.report(warm_up.reply().summary.clone());
    Ok(events)
}
