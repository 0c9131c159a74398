//! The final-response checks: the terminal event's status, its `output`
//! against the done items, its error, incomplete details and usage.

use super::checker::Checker;
use super::fields::{req_array, req_obj, req_str, req_u64, v_err, R};
use serde_json::Value;

impl Checker<'_> {
    /// The terminal event `ty`: its status, `output` against the done items,
    /// error, incomplete details and usage.
    pub(super) fn terminal(&mut self, i: usize, v: &Value, ty: &str) -> R<()> {
        let status = match ty {
            "response.completed" => "completed",
            "response.incomplete" => "incomplete",
            _ => "failed",
        };
        if status == "failed" && !self.pending_error {
            return v_err(
                i,
                "response.failed must be immediately preceded by an `error` event",
            );
        }
        let resp = self.lifecycle(i, v, ty, status)?.clone();
        let ctx = format!("{ty}.response");
        self.terminal = true;
        self.pending_error = false;
        let output = req_array(i, &resp, "output", &ctx)?.clone();

        // A failed response too closes what it opened (unless the options
        // say otherwise): the client keeps what was already said.
        let closes = status != "failed" || self.opts.failure_closes_items;
        if let Some(open) = self.open.as_ref().filter(|_| closes) {
            return v_err(
                i,
                format!(
                    "{ty} while item {} (`{}`) is still open (no output_item.done)",
                    open.output_index, open.item_type
                ),
            );
        }
        if closes {
            if output.len() != self.done_items.len() {
                return v_err(
                    i,
                    format!(
                        "{ctx}.output has {} items but {} output_item.done events were sent",
                        output.len(),
                        self.done_items.len()
                    ),
                );
            }
            for (k, (a, b)) in output.iter().zip(&self.done_items).enumerate() {
                if normalize_item(a) != normalize_item(b) {
                    return v_err(
                        i,
                        format!(
                            "{ctx}.output[{k}] differs from the output_item.done item (keys: {})",
                            differing_keys(a, b)
                        ),
                    );
                }
            }
        }
        if status != "failed" && !resp.get("error").is_some_and(Value::is_null) {
            return v_err(i, format!("{ctx}.error must be null"));
        }
        match status {
            "completed" => {
                if let Some(k) = self
                    .done_items
                    .iter()
                    .position(|it| it.get("status").and_then(Value::as_str) == Some("incomplete"))
                {
                    return v_err(
                        i,
                        format!("item {k} has status `incomplete` in a completed response"),
                    );
                }
                if !resp.get("incomplete_details").is_some_and(Value::is_null) {
                    return v_err(i, format!("{ctx}.incomplete_details must be null"));
                }
            }
            "incomplete" => {
                let details = req_obj(i, &resp, "incomplete_details", &ctx)?;
                let reason = req_str(i, details, "reason", &format!("{ctx}.incomplete_details"))?;
                self.t.incomplete_reason = Some(reason.to_string());
            }
            _ => {
                let err = req_obj(i, &resp, "error", &ctx)?;
                req_str(i, err, "code", &format!("{ctx}.error"))?;
                req_str(i, err, "message", &format!("{ctx}.error"))?;
            }
        }
        match resp.get("usage") {
            None | Some(Value::Null) => {}
            Some(u) => {
                let uctx = format!("{ctx}.usage");
                for key in ["input_tokens", "output_tokens", "total_tokens"] {
                    req_u64(i, u, key, &uctx)?;
                }
                let d = req_obj(i, u, "input_tokens_details", &uctx)?;
                req_u64(
                    i,
                    d,
                    "cached_tokens",
                    &format!("{uctx}.input_tokens_details"),
                )?;
                let d = req_obj(i, u, "output_tokens_details", &uctx)?;
                req_u64(
                    i,
                    d,
                    "reasoning_tokens",
                    &format!("{uctx}.output_tokens_details"),
                )?;
                self.t.usage = Some(u.clone());
            }
        }
        if self.t.error.is_none() {
            if let Some(e) = resp.get("error").filter(|e| !e.is_null()) {
                self.t.error = Some(e.clone());
            }
        }
        self.t.output = output;
        Ok(())
    }
}

/// A copy of an output item with opaque re-encryptable fields blanked, for
/// comparing `response.output` with the `output_item.done` items.
fn normalize_item(item: &Value) -> Value {
    let mut item = item.clone();
    if item.get("type").and_then(Value::as_str) == Some("reasoning") {
        if let Some(ec) = item.get_mut("encrypted_content") {
            if ec.is_string() {
                *ec = Value::String("<encrypted>".into());
            }
        }
    }
    item
}

/// The keys whose values differ between two objects, for the message.
fn differing_keys(a: &Value, b: &Value) -> String {
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            let mut keys: Vec<&String> = a
                .keys()
                .chain(b.keys())
                .filter(|k| a.get(*k) != b.get(*k))
                .collect();
            keys.sort();
            keys.dedup();
            keys.iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        }
        _ => "(not objects)".to_string(),
    }
}
