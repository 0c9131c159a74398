//! Reasoning items: summary parts indexed by `summary_index` and reasoning
//! text indexed by `content_index`, each in order.

use super::fields::{req_obj, req_str, req_u64, short, v_err, R};
use super::state::{OpenItem, TextPart};
use crate::transcript::ResponsesTranscript;
use serde_json::Value;

/// Applies a summary or reasoning text event to the open reasoning item,
/// adding its text to the transcript.
pub(super) fn reasoning_event(
    i: usize,
    v: &Value,
    ty: &str,
    open: &mut OpenItem,
    t: &mut ResponsesTranscript,
) -> R<()> {
    if ty.starts_with("response.reasoning_text.") {
        let ci = req_u64(i, v, "content_index", ty)? as usize;
        if ci == open.reasoning_texts.len() {
            if let Some(p) = open.summaries.iter().position(|p| !p.closed) {
                return v_err(i, format!("`{ty}` while summary part {p} is still open"));
            }
            if open.reasoning_texts.iter().any(|p| p.done.is_none()) {
                return v_err(
                    i,
                    format!("`{ty}` for content_index {ci} while the previous reasoning text is not done"),
                );
            }
            open.reasoning_texts.push(TextPart::default());
        } else if ci + 1 != open.reasoning_texts.len() {
            return v_err(
                i,
                format!(
                    "`{ty}` for content_index {ci}, expected {} (0, 1, … in order)",
                    open.reasoning_texts.len()
                ),
            );
        }
        let part = open.reasoning_texts.last_mut().expect("pushed above");
        if part.done.is_some() {
            return v_err(i, format!("`{ty}` after reasoning_text.done"));
        }
        if ty == "response.reasoning_text.delta" {
            let d = req_str(i, v, "delta", ty)?;
            part.acc.push_str(d);
            t.reasoning.push_str(d);
        } else {
            let text = req_str(i, v, "text", ty)?;
            if text != part.acc {
                return v_err(
                    i,
                    format!(
                        "reasoning_text.done text {} does not equal the concatenation of its deltas {}",
                        short(text),
                        short(&part.acc)
                    ),
                );
            }
            part.done = Some(text.to_string());
        }
        return Ok(());
    }

    let si = req_u64(i, v, "summary_index", ty)? as usize;
    if ty == "response.reasoning_summary_part.added" {
        if si != open.summaries.len() {
            return v_err(
                i,
                format!(
                    "reasoning_summary_part.added with summary_index {si}, expected {} (0, 1, … in order)",
                    open.summaries.len()
                ),
            );
        }
        if let Some(p) = open.summaries.iter().position(|p| !p.closed) {
            return v_err(
                i,
                format!("reasoning_summary_part.added while summary part {p} is still open"),
            );
        }
        if open.reasoning_texts.iter().any(|p| p.done.is_none()) {
            return v_err(
                i,
                "reasoning_summary_part.added while a reasoning text is not done",
            );
        }
        let part = req_obj(i, v, "part", ty)?;
        if part.get("type").and_then(Value::as_str) != Some("summary_text")
            || !req_str(i, part, "text", "reasoning_summary_part.added.part")?.is_empty()
        {
            return v_err(
                i,
                "reasoning_summary_part.added: part must be {\"type\":\"summary_text\",\"text\":\"\"}",
            );
        }
        open.summaries.push(TextPart::default());
        return Ok(());
    }
    let part = match open.summaries.get_mut(si) {
        Some(p) if !p.closed => p,
        Some(_) => {
            return v_err(
                i,
                format!("`{ty}` for summary_index {si} after its reasoning_summary_part.done"),
            )
        }
        None => {
            return v_err(
                i,
                format!("`{ty}` for summary_index {si} before its reasoning_summary_part.added"),
            )
        }
    };
    match ty {
        "response.reasoning_summary_text.delta" => {
            if part.done.is_some() {
                return v_err(i, format!("`{ty}` after reasoning_summary_text.done"));
            }
            let d = req_str(i, v, "delta", ty)?;
            part.acc.push_str(d);
            t.reasoning.push_str(d);
        }
        "response.reasoning_summary_text.done" => {
            if part.done.is_some() {
                return v_err(i, format!("duplicate `{ty}`"));
            }
            let text = req_str(i, v, "text", ty)?;
            if text != part.acc {
                return v_err(
                    i,
                    format!(
                        "reasoning_summary_text.done text {} does not equal the concatenation of its deltas {}",
                        short(text),
                        short(&part.acc)
                    ),
                );
            }
            part.done = Some(text.to_string());
        }
        "response.reasoning_summary_part.done" => {
            let done = match &part.done {
                Some(d) => d,
                None => {
                    return v_err(
                        i,
                        "reasoning_summary_part.done before reasoning_summary_text.done",
                    )
                }
            };
            let p = req_obj(i, v, "part", ty)?;
            let text = req_str(i, p, "text", "reasoning_summary_part.done.part")?;
            if p.get("type").and_then(Value::as_str) != Some("summary_text") || text != done {
                return v_err(
                    i,
                    format!(
                        "reasoning_summary_part.done: part must be summary_text with the done text {}, got {}",
                        short(done),
                        short(text)
                    ),
                );
            }
            part.closed = true;
        }
        _ => unreachable!("reasoning family"),
    }
    Ok(())
}
