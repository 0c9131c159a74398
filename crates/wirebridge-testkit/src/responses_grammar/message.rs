//! The content parts of a message item: output_text and refusal parts,
//! their deltas, annotations and done events.

use super::fields::{req_array, req_obj, req_str, req_u64, short, v_err, R};
use super::state::{OpenItem, Part, PartKind};
use crate::transcript::ResponsesTranscript;
use serde_json::Value;

/// Applies a content part event to the open message item, adding its text
/// to the transcript.
pub(super) fn message_event(
    i: usize,
    v: &Value,
    ty: &str,
    open: &mut OpenItem,
    t: &mut ResponsesTranscript,
) -> R<()> {
    let ci = req_u64(i, v, "content_index", ty)? as usize;
    if ty == "response.content_part.added" {
        if ci != open.parts.len() {
            return v_err(
                i,
                format!(
                    "content_part.added with content_index {ci}, expected {} (0, 1, … in order)",
                    open.parts.len()
                ),
            );
        }
        if let Some(p) = open.parts.iter().position(|p| !p.closed) {
            return v_err(
                i,
                format!("content_part.added while part {p} is still open (parts must not be interleaved)"),
            );
        }
        let part = req_obj(i, v, "part", ty)?;
        let kind = match part.get("type").and_then(Value::as_str) {
            Some("output_text") => PartKind::OutputText,
            Some("refusal") => PartKind::Refusal,
            other => {
                return v_err(
                    i,
                    format!(
                        "content_part.added: part type {other:?} is not output_text or refusal"
                    ),
                )
            }
        };
        if !req_str(i, part, kind.text_key(), "content_part.added.part")?.is_empty() {
            return v_err(i, "content_part.added: the added part must be empty");
        }
        if kind == PartKind::OutputText
            && !req_array(i, part, "annotations", "content_part.added.part")?.is_empty()
        {
            return v_err(
                i,
                "content_part.added: the added part must have no annotations",
            );
        }
        open.parts.push(Part {
            kind,
            acc: String::new(),
            done: None,
            annotations: Vec::new(),
            closed: false,
        });
        return Ok(());
    }
    let part = match open.parts.get_mut(ci) {
        Some(p) if !p.closed => p,
        Some(_) => {
            return v_err(
                i,
                format!("`{ty}` for content_index {ci} after its content_part.done"),
            )
        }
        None => {
            return v_err(
                i,
                format!("`{ty}` for content_index {ci} before its content_part.added"),
            )
        }
    };
    let want_kind = match ty {
        "response.output_text.delta"
        | "response.output_text.done"
        | "response.output_text.annotation.added" => Some(PartKind::OutputText),
        "response.refusal.delta" | "response.refusal.done" => Some(PartKind::Refusal),
        _ => None,
    };
    if let Some(k) = want_kind {
        if k != part.kind {
            return v_err(
                i,
                format!("`{ty}` on a `{}` content part", part.kind.type_name()),
            );
        }
    }
    match ty {
        "response.output_text.delta" | "response.refusal.delta" => {
            if part.done.is_some() {
                return v_err(i, format!("`{ty}` after the part's text was done"));
            }
            let d = req_str(i, v, "delta", ty)?;
            if ty == "response.output_text.delta" {
                req_array(i, v, "logprobs", ty)?;
                t.text.push_str(d);
            } else {
                t.refusal.push_str(d);
            }
            part.acc.push_str(d);
        }
        "response.output_text.annotation.added" => {
            let ai = req_u64(i, v, "annotation_index", ty)? as usize;
            if ai != part.annotations.len() {
                return v_err(
                    i,
                    format!("annotation_index {ai}, expected {}", part.annotations.len()),
                );
            }
            part.annotations
                .push(req_obj(i, v, "annotation", ty)?.clone());
        }
        "response.output_text.done" | "response.refusal.done" => {
            if part.done.is_some() {
                return v_err(i, format!("duplicate `{ty}`"));
            }
            let key = part.kind.text_key();
            let text = req_str(i, v, key, ty)?;
            if ty == "response.output_text.done" {
                req_array(i, v, "logprobs", ty)?;
            }
            if text != part.acc {
                return v_err(
                    i,
                    format!(
                        "`{ty}`: {key} {} does not equal the concatenation of its deltas {}",
                        short(text),
                        short(&part.acc)
                    ),
                );
            }
            part.done = Some(text.to_string());
        }
        "response.content_part.done" => {
            let done = match &part.done {
                Some(d) => d,
                None => {
                    return v_err(
                        i,
                        format!(
                            "content_part.done before {}.done",
                            if part.kind == PartKind::OutputText {
                                "output_text"
                            } else {
                                "refusal"
                            }
                        ),
                    )
                }
            };
            let p = req_obj(i, v, "part", ty)?;
            if p.get("type").and_then(Value::as_str) != Some(part.kind.type_name()) {
                return v_err(
                    i,
                    format!(
                        "content_part.done: part type must be `{}`",
                        part.kind.type_name()
                    ),
                );
            }
            let text = req_str(i, p, part.kind.text_key(), "content_part.done.part")?;
            if text != done {
                return v_err(
                    i,
                    format!(
                        "content_part.done: part text {} differs from the done text {}",
                        short(text),
                        short(done)
                    ),
                );
            }
            if part.kind == PartKind::OutputText
                && req_array(i, p, "annotations", "content_part.done.part")? != &part.annotations
            {
                return v_err(
                    i,
                    "content_part.done: annotations differ from the annotation.added events",
                );
            }
            part.closed = true;
        }
        _ => unreachable!("message family"),
    }
    Ok(())
}
