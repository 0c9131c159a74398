//! The arguments of a function call and the input of a custom tool call:
//! deltas, then exactly one done event equal to their concatenation.

use super::fields::{req_str, short, v_err, R};
use super::options::CheckOptions;
use super::state::{Kind, OpenItem};
use crate::transcript::str_field;
use serde_json::Value;

/// Applies a `function_call_arguments` or `custom_tool_call_input` event to
/// the open call item.
pub(super) fn tool_call_event(
    i: usize,
    v: &Value,
    ty: &str,
    open: &mut OpenItem,
    opts: &CheckOptions,
) -> R<()> {
    let (delta_ty, field) = if open.kind == Kind::FunctionCall {
        ("response.function_call_arguments.delta", "arguments")
    } else {
        ("response.custom_tool_call_input.delta", "input")
    };
    if open.args_done {
        return v_err(i, format!("`{ty}` after the arguments/input were done"));
    }
    if ty == delta_ty {
        let d = req_str(i, v, "delta", ty)?;
        open.args.push_str(d);
        return Ok(());
    }
    let done = req_str(i, v, field, ty)?;
    if done != open.args {
        return v_err(
            i,
            format!(
                "`{ty}`: {field} {} does not equal the concatenation of its deltas {}",
                short(done),
                short(&open.args)
            ),
        );
    }
    if open.kind == Kind::FunctionCall {
        let item_name = str_field(&open.added, "name");
        match v.get("name") {
            Some(Value::String(n)) if n == item_name => {}
            Some(other) => {
                return v_err(
                    i,
                    format!("`{ty}`: name {other} differs from the item's name {item_name:?}"),
                )
            }
            None if opts.require_arguments_done_name => {
                return v_err(i, format!("`{ty}`: missing `name` (required by the spec)"))
            }
            None => {}
        }
    }
    open.args_done = true;
    Ok(())
}
