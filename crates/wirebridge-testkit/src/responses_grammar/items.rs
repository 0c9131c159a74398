//! Output items: added and done in `output_index` order and never
//! interleaved, a partial item when added, the complete item when done, and
//! each sub-event routed to the open item of its kind.

use super::checker::Checker;
use super::fields::{req_array, req_obj, req_str, req_u64, short, v_err, R};
use super::message::message_event;
use super::reasoning::reasoning_event;
use super::state::{Kind, OpenItem, PartKind};
use super::tool_call::tool_call_event;
use super::vocabulary::{CUSTOM_EVENTS, FUNCTION_EVENTS, MESSAGE_EVENTS, REASONING_EVENTS};
use crate::transcript::{str_field, ToolCallRecord};
use serde_json::Value;

impl Checker<'_> {
    /// Opens an item: the next `output_index`, and partial.
    pub(super) fn item_added(&mut self, i: usize, v: &Value) -> R<()> {
        let idx = req_u64(i, v, "output_index", "output_item.added")?;
        if let Some(open) = &self.open {
            return v_err(
                i,
                format!(
                    "output_item.added for output_index {idx} while item {} is still open (items must not be interleaved)",
                    open.output_index
                ),
            );
        }
        if idx != self.next_index {
            return v_err(
                i,
                format!(
                    "output_item.added with output_index {idx}, expected {} (0, 1, 2, … in order)",
                    self.next_index
                ),
            );
        }
        let item = req_obj(i, v, "item", "output_item.added")?;
        let ctx = "output_item.added.item";
        let item_type = req_str(i, item, "type", ctx)?.to_string();
        let id = req_str(i, item, "id", ctx)?.to_string();
        if id.is_empty() {
            return v_err(i, format!("{ctx}: empty `id`"));
        }
        let status = item.get("status").and_then(Value::as_str);
        let kind = match item_type.as_str() {
            "message" => Kind::Message,
            "reasoning" => Kind::Reasoning,
            "function_call" => Kind::FunctionCall,
            "custom_tool_call" => Kind::CustomToolCall,
            _ => Kind::Other,
        };
        let need_in_progress = matches!(kind, Kind::Message | Kind::FunctionCall);
        let may_in_progress = matches!(kind, Kind::Reasoning | Kind::CustomToolCall);
        if (need_in_progress || (may_in_progress && status.is_some()))
            && status != Some("in_progress")
        {
            return v_err(
                i,
                format!("{ctx}: a just-added {item_type} item must have status `in_progress`, got {status:?}"),
            );
        }
        match kind {
            Kind::Message => {
                if item.get("role").and_then(Value::as_str) != Some("assistant") {
                    return v_err(i, format!("{ctx}: message role must be `assistant`"));
                }
                if !req_array(i, item, "content", ctx)?.is_empty() {
                    return v_err(
                        i,
                        format!("{ctx}: a just-added message must have `content: []`"),
                    );
                }
            }
            Kind::Reasoning => {
                if !req_array(i, item, "summary", ctx)?.is_empty() {
                    return v_err(
                        i,
                        format!("{ctx}: a just-added reasoning item must have `summary: []`"),
                    );
                }
                if item
                    .get("content")
                    .and_then(Value::as_array)
                    .is_some_and(|c| !c.is_empty())
                {
                    return v_err(
                        i,
                        format!("{ctx}: a just-added reasoning item must have empty `content`"),
                    );
                }
            }
            Kind::FunctionCall | Kind::CustomToolCall => {
                let (field, ty_name) = if kind == Kind::FunctionCall {
                    ("arguments", "function_call")
                } else {
                    ("input", "custom_tool_call")
                };
                if !req_str(i, item, field, ctx)?.is_empty() {
                    return v_err(
                        i,
                        format!("{ctx}: a just-added {ty_name} must have `{field}: \"\"`"),
                    );
                }
                if req_str(i, item, "call_id", ctx)?.is_empty() {
                    return v_err(i, format!("{ctx}: empty `call_id`"));
                }
                if req_str(i, item, "name", ctx)?.is_empty() {
                    return v_err(i, format!("{ctx}: empty `name`"));
                }
            }
            Kind::Other => {}
        }
        self.open = Some(OpenItem {
            output_index: idx,
            id,
            item_type,
            kind,
            added: item.clone(),
            parts: Vec::new(),
            summaries: Vec::new(),
            reasoning_texts: Vec::new(),
            args: String::new(),
            args_done: false,
        });
        Ok(())
    }

    /// Closes the open item, which must be complete and equal to what its
    /// sub-events streamed.
    pub(super) fn item_done(&mut self, i: usize, v: &Value) -> R<()> {
        let idx = req_u64(i, v, "output_index", "output_item.done")?;
        let open = match self.open.take() {
            Some(o) => o,
            None => {
                return v_err(
                    i,
                    format!("output_item.done for output_index {idx} but no item is open"),
                )
            }
        };
        if open.output_index != idx {
            return v_err(
                i,
                format!(
                    "output_item.done for output_index {idx} but the open item is {}",
                    open.output_index
                ),
            );
        }
        let item = req_obj(i, v, "item", "output_item.done")?;
        let ctx = "output_item.done.item";
        for key in ["type", "id", "call_id", "name"] {
            let (a, d) = (open.added.get(key), item.get(key));
            if (a.is_some() || key == "type" || key == "id") && a != d {
                return v_err(
                    i,
                    format!(
                        "{ctx}: `{key}` {} differs from output_item.added's {}",
                        d.map_or("(absent)".to_string(), Value::to_string),
                        a.map_or("(absent)".to_string(), Value::to_string)
                    ),
                );
            }
        }
        let status = item.get("status").and_then(Value::as_str);
        let need_status = matches!(open.kind, Kind::Message | Kind::FunctionCall);
        let may_status = matches!(open.kind, Kind::Reasoning | Kind::CustomToolCall);
        if (need_status || (may_status && status.is_some()))
            && !matches!(status, Some("completed") | Some("incomplete"))
        {
            return v_err(
                i,
                format!("{ctx}: a done {} item must have status `completed` (or `incomplete`), got {status:?}", open.item_type),
            );
        }
        match open.kind {
            Kind::Message => {
                if let Some(p) = open.parts.iter().position(|p| !p.closed) {
                    return v_err(
                        i,
                        format!("output_item.done while content part {p} is still open (no content_part.done)"),
                    );
                }
                let content = req_array(i, item, "content", ctx)?;
                if content.len() != open.parts.len() {
                    return v_err(
                        i,
                        format!(
                            "{ctx}: content has {} parts but {} were streamed",
                            content.len(),
                            open.parts.len()
                        ),
                    );
                }
                for (k, (c, p)) in content.iter().zip(&open.parts).enumerate() {
                    let pctx = format!("{ctx}.content[{k}]");
                    if c.get("type").and_then(Value::as_str) != Some(p.kind.type_name()) {
                        return v_err(i, format!("{pctx}: type must be `{}`", p.kind.type_name()));
                    }
                    let text = req_str(i, c, p.kind.text_key(), &pctx)?;
                    if Some(text) != p.done.as_deref() {
                        return v_err(
                            i,
                            format!(
                                "{pctx}: {} {} differs from the streamed text {}",
                                p.kind.text_key(),
                                short(text),
                                short(p.done.as_deref().unwrap_or(""))
                            ),
                        );
                    }
                    if p.kind == PartKind::OutputText
                        && req_array(i, c, "annotations", &pctx)? != &p.annotations
                    {
                        return v_err(
                            i,
                            format!("{pctx}: annotations differ from the streamed annotation.added events"),
                        );
                    }
                }
            }
            Kind::Reasoning => {
                if let Some(p) = open.summaries.iter().position(|p| !p.closed) {
                    return v_err(
                        i,
                        format!("output_item.done while summary part {p} is still open (no reasoning_summary_part.done)"),
                    );
                }
                if let Some(p) = open.reasoning_texts.iter().position(|p| p.done.is_none()) {
                    return v_err(
                        i,
                        format!(
                            "output_item.done while reasoning text {p} has no reasoning_text.done"
                        ),
                    );
                }
                let summary = req_array(i, item, "summary", ctx)?;
                let texts: Vec<&str> = summary.iter().map(|s| str_field(s, "text")).collect();
                let want: Vec<&str> = open
                    .summaries
                    .iter()
                    .map(|s| s.done.as_deref().unwrap_or(""))
                    .collect();
                if texts != want
                    || summary
                        .iter()
                        .any(|s| s.get("type").and_then(Value::as_str) != Some("summary_text"))
                {
                    return v_err(
                        i,
                        format!(
                            "{ctx}: summary ({} parts) differs from the {} streamed summary parts",
                            summary.len(),
                            want.len()
                        ),
                    );
                }
                let content = item.get("content").and_then(Value::as_array);
                let got: Vec<&str> = content
                    .map(|c| c.iter().map(|p| str_field(p, "text")).collect())
                    .unwrap_or_default();
                let want: Vec<&str> = open
                    .reasoning_texts
                    .iter()
                    .map(|s| s.done.as_deref().unwrap_or(""))
                    .collect();
                if got != want {
                    return v_err(
                        i,
                        format!("{ctx}: reasoning content differs from the streamed reasoning_text parts"),
                    );
                }
            }
            Kind::FunctionCall | Kind::CustomToolCall => {
                let (field, done_ev) = if open.kind == Kind::FunctionCall {
                    ("arguments", "function_call_arguments.done")
                } else {
                    ("input", "custom_tool_call_input.done")
                };
                if !open.args_done {
                    return v_err(i, format!("output_item.done without a preceding {done_ev}"));
                }
                let got = req_str(i, item, field, ctx)?;
                if got != open.args {
                    return v_err(
                        i,
                        format!(
                            "{ctx}: {field} {} differs from the streamed {}",
                            short(got),
                            short(&open.args)
                        ),
                    );
                }
                self.t.function_calls.push(ToolCallRecord {
                    name: str_field(item, "name").to_string(),
                    call_id: str_field(item, "call_id").to_string(),
                    arguments: got.to_string(),
                    item_type: open.item_type.clone(),
                });
            }
            Kind::Other => {}
        }
        self.done_items.push(item.clone());
        self.next_index += 1;
        Ok(())
    }

    /// Routes an event that belongs inside an item to the rules of the open
    /// item's kind.
    pub(super) fn sub_event(&mut self, i: usize, v: &Value, ty: &str) -> R<()> {
        let family = if MESSAGE_EVENTS.contains(&ty) {
            Some(Kind::Message)
        } else if REASONING_EVENTS.contains(&ty) {
            Some(Kind::Reasoning)
        } else if FUNCTION_EVENTS.contains(&ty) {
            Some(Kind::FunctionCall)
        } else if CUSTOM_EVENTS.contains(&ty) {
            Some(Kind::CustomToolCall)
        } else {
            None
        };
        let opts = self.opts;
        let t = &mut self.t;
        let open = match self.open.as_mut() {
            Some(o) => o,
            None => return v_err(i, format!("`{ty}` outside of an open output item")),
        };
        let idx = req_u64(i, v, "output_index", ty)?;
        if idx != open.output_index {
            return v_err(
                i,
                format!(
                    "`{ty}` for output_index {idx} while item {} is open (items must not be interleaved)",
                    open.output_index
                ),
            );
        }
        match v.get("item_id") {
            Some(Value::String(id)) if *id == open.id => {}
            Some(other) => {
                return v_err(
                    i,
                    format!(
                        "`{ty}`: item_id {other} does not match the open item's id {:?}",
                        open.id
                    ),
                )
            }
            None if family.is_some() => return v_err(i, format!("`{ty}`: missing `item_id`")),
            None => {}
        }
        match (family, open.kind) {
            (None, Kind::Other) => return Ok(()),
            (Some(f), k) if f == k => {}
            _ => {
                return v_err(
                    i,
                    format!("`{ty}` is not valid inside a `{}` item", open.item_type),
                )
            }
        }
        match open.kind {
            Kind::Message => message_event(i, v, ty, open, t),
            Kind::Reasoning => reasoning_event(i, v, ty, open, t),
            Kind::FunctionCall | Kind::CustomToolCall => tool_call_event(i, v, ty, open, opts),
            Kind::Other => Ok(()),
        }
    }
}
