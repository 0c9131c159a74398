//! The event-by-event state machine: framing, `sequence_number`s, the
//! lifecycle events, `error` events, and the routing of every other event
//! to the rule that owns it.

use super::fields::{req_array, req_obj, req_str, req_str_or_null, req_u64, v_err, R};
use super::options::CheckOptions;
use super::state::OpenItem;
use super::vocabulary::{KNOWN_EVENT_TYPES, REQUIRED_RESPONSE_KEYS};
use crate::sse::SseFrame;
use crate::transcript::ResponsesTranscript;
use serde_json::Value;

/// What the checker knows between two events of one stream.
pub(super) struct Checker<'o> {
    pub(super) opts: &'o CheckOptions,
    /// Events seen so far, which is also the next `sequence_number`.
    pub(super) count: usize,
    pub(super) response_id: Option<String>,
    pub(super) terminal: bool,
    /// The last event was `error`: only `response.failed` may follow.
    pub(super) pending_error: bool,
    pub(super) open: Option<OpenItem>,
    /// The `output_index` the next added item must have.
    pub(super) next_index: u64,
    /// The items of every `output_item.done`, for the terminal `output`.
    pub(super) done_items: Vec<Value>,
    pub(super) t: ResponsesTranscript,
}

impl Checker<'_> {
    /// Checks frame `i`: framing, position and numbering, then the rule of
    /// its event type.
    pub(super) fn event(&mut self, i: usize, f: &SseFrame) -> R<()> {
        if f.data == "[DONE]" {
            return v_err(
                i,
                "`data: [DONE]` is not part of the Responses stream grammar",
            );
        }
        let v: Value = match serde_json::from_str(&f.data) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return v_err(i, "data is not a JSON object"),
            Err(e) => return v_err(i, format!("data is not valid JSON: {e}")),
        };
        let ty = req_str(i, &v, "type", "event")?.to_string();
        match &f.event {
            None => {
                return v_err(
                    i,
                    format!("frame has no `event:` name (expected `event: {ty}`)"),
                )
            }
            Some(e) if *e != ty => {
                return v_err(
                    i,
                    format!("`event: {e}` does not match the data's type `{ty}`"),
                )
            }
            _ => {}
        }
        if self.terminal {
            return v_err(i, format!("`{ty}` after the terminal event"));
        }
        if self.count == 0 && ty != "response.created" {
            return v_err(
                i,
                format!("first event must be response.created, got `{ty}`"),
            );
        }
        if self.count == 1 && ty != "response.in_progress" {
            return v_err(
                i,
                format!("second event must be response.in_progress, got `{ty}`"),
            );
        }
        let seq = req_u64(i, &v, "sequence_number", &ty)?;
        if seq != self.count as u64 {
            return v_err(
                i,
                format!(
                    "sequence_number {seq} on `{ty}`, expected {} (0, 1, 2, … without gaps)",
                    self.count
                ),
            );
        }
        if self.pending_error && ty != "response.failed" {
            return v_err(
                i,
                format!(
                    "an `error` event must be immediately followed by response.failed, got `{ty}`"
                ),
            );
        }
        self.count += 1;

        match ty.as_str() {
            "response.created" => {
                if self.count != 1 {
                    return v_err(i, "duplicate response.created");
                }
                self.lifecycle(i, &v, &ty, "in_progress")?;
                Ok(())
            }
            "response.in_progress" => {
                if self.count != 2 {
                    return v_err(i, "duplicate response.in_progress");
                }
                self.lifecycle(i, &v, &ty, "in_progress")?;
                Ok(())
            }
            "response.queued" => v_err(
                i,
                "response.queued is not part of the grammar (background mode is not emitted)",
            ),
            "response.completed" | "response.incomplete" | "response.failed" => {
                self.terminal(i, &v, &ty)
            }
            "error" => self.error_event(i, &v),
            "response.output_item.added" => self.item_added(i, &v),
            "response.output_item.done" => self.item_done(i, &v),
            t if t.starts_with("response.audio.") => {
                v_err(i, format!("`{t}` (audio) is not part of the grammar"))
            }
            t if KNOWN_EVENT_TYPES.contains(&t) => self.sub_event(i, &v, t),
            t => v_err(
                i,
                format!("unknown event type `{t}` (not in the spec's ResponseStreamEvent)"),
            ),
        }
    }

    /// Checks common to every lifecycle event; returns its `response`.
    pub(super) fn lifecycle<'v>(
        &mut self,
        i: usize,
        v: &'v Value,
        ty: &str,
        status: &str,
    ) -> R<&'v Value> {
        let resp = req_obj(i, v, "response", ty)?;
        let ctx = format!("{ty}.response");
        for key in REQUIRED_RESPONSE_KEYS {
            if resp.get(*key).is_none() {
                return v_err(i, format!("{ctx}: missing required key `{key}`"));
            }
        }
        let id = req_str(i, resp, "id", &ctx)?;
        if id.is_empty() {
            return v_err(i, format!("{ctx}: empty `id`"));
        }
        match &self.response_id {
            None => {
                self.response_id = Some(id.to_string());
                self.t.response_id = id.to_string();
            }
            Some(first) if first != id => {
                return v_err(
                    i,
                    format!(
                    "{ctx}: response id `{id}` differs from the first lifecycle event's `{first}`"
                ),
                )
            }
            _ => {}
        }
        if resp.get("object").and_then(Value::as_str) != Some("response") {
            return v_err(i, format!("{ctx}: `object` must be \"response\""));
        }
        req_u64(i, resp, "created_at", &ctx)?;
        req_str(i, resp, "model", &ctx)?;
        let st = req_str(i, resp, "status", &ctx)?;
        if st != status {
            return v_err(i, format!("{ctx}: status `{st}`, expected `{status}`"));
        }
        let output = req_array(i, resp, "output", &ctx)?;
        if status == "in_progress" && !output.is_empty() {
            return v_err(i, format!("{ctx}: `output` must be empty"));
        }
        self.t.status = st.to_string();
        Ok(resp)
    }

    /// An `error` event, which must nest its payload and be followed by
    /// `response.failed`.
    fn error_event(&mut self, i: usize, v: &Value) -> R<()> {
        let err = match v.get("error") {
            Some(e @ Value::Object(_)) => e,
            _ => return v_err(
                i,
                "`error` event must nest its payload: {\"error\": {type, code, message, param}}",
            ),
        };
        let ctx = "error event's error";
        req_str(i, err, "type", ctx)?;
        req_str_or_null(i, err, "code", ctx)?;
        req_str(i, err, "message", ctx)?;
        req_str_or_null(i, err, "param", ctx)?;
        self.t.error = Some(err.clone());
        self.pending_error = true;
        Ok(())
    }
}
