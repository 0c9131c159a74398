//! Targeted corruptions of valid recordings, each caught by the rule it
//! breaks.

use crate::common::*;
use crate::recordings::{relaxed, ERROR, REASONING, TEXT, TOOL};
use serde_json::json;
use wirebridge_testkit::responses_grammar::check;
use wirebridge_testkit::SseFrame;

#[test]
fn rejects_missing_response_created() {
    let mut f = frames(TEXT);
    f.remove(0);
    renumber(&mut f);
    let v = assert_rejected(check(&f), "response.created");
    assert_eq!(v.frame, 0);
}

#[test]
fn rejects_swapped_events() {
    let mut f = frames(TEXT);
    f.swap(0, 1);
    renumber(&mut f);
    assert_rejected(check(&f), "first event must be response.created");

    let mut f = frames(TEXT);
    let added = first_event(&f, "response.content_part.added");
    f.swap(added, added + 1);
    renumber(&mut f);
    assert_rejected(check(&f), "before its content_part.added");

    let mut f = frames(TEXT);
    let done = first_event(&f, "response.output_text.done");
    f.swap(done, done + 1);
    renumber(&mut f);
    assert_rejected(check(&f), "content_part.done before output_text.done");
}

#[test]
fn rejects_bad_sequence_numbers() {
    let mut f = frames(TEXT);
    edit(&mut f, 5, |v| v["sequence_number"] = json!(6));
    let v = assert_rejected(check(&f), "sequence_number");
    assert_eq!(v.frame, 5);

    let mut f = frames(TEXT);
    edit(&mut f, 3, |v| {
        v.as_object_mut().unwrap().remove("sequence_number");
    });
    assert_rejected(check(&f), "sequence_number");
}

#[test]
fn rejects_changed_item_id() {
    let mut f = frames(TEXT);
    let i = nth_event(&f, "response.output_text.delta", 2);
    edit(&mut f, i, |v| v["item_id"] = json!("msg_other"));
    let v = assert_rejected(check(&f), "item_id");
    assert_eq!(v.frame, i);

    let mut f = frames(TOOL);
    let i = first_event(&f, "response.output_item.done");
    edit(&mut f, i, |v| v["item"]["id"] = json!("rs_other"));
    assert_rejected(relaxed(&f), "`id`");
}

#[test]
fn rejects_dropped_deltas() {
    let mut f = frames(TEXT);
    f.remove(nth_event(&f, "response.output_text.delta", 4));
    renumber(&mut f);
    assert_rejected(check(&f), "concatenation of its deltas");

    let mut f = frames(TOOL);
    f.remove(nth_event(&f, "response.function_call_arguments.delta", 1));
    renumber(&mut f);
    assert_rejected(relaxed(&f), "concatenation of its deltas");

    let mut f = frames(REASONING);
    f.remove(nth_event(&f, "response.reasoning_summary_text.delta", 0));
    renumber(&mut f);
    assert_rejected(relaxed(&f), "concatenation of its deltas");
}

#[test]
fn rejects_missing_terminal_event() {
    let mut f = frames(TEXT);
    f.pop();
    let v = assert_rejected(check(&f), "terminal event");
    assert_eq!(v.frame, f.len());

    let mut f = frames(ERROR);
    f.pop();
    assert_rejected(check(&f), "terminal event");
}

#[test]
fn rejects_events_after_the_terminal_event() {
    let mut f = frames(TEXT);
    let extra = f[nth_event(&f, "response.output_text.delta", 0)].clone();
    f.push(extra);
    renumber(&mut f);
    assert_rejected(check(&f), "after the terminal event");

    let mut f = frames(TEXT);
    let again = f.last().unwrap().clone();
    f.push(again);
    renumber(&mut f);
    assert_rejected(check(&f), "after the terminal event");
}

#[test]
fn rejects_interleaved_items() {
    // Item 1 is added before item 0 is done.
    let mut f = frames(TOOL);
    let done0 = first_event(&f, "response.output_item.done");
    let added1 = nth_event(&f, "response.output_item.added", 1);
    assert_eq!(added1, done0 + 1);
    f.swap(done0, added1);
    renumber(&mut f);
    assert_rejected(relaxed(&f), "interleaved");

    // A sub-event of item 1 sent while item 0 is open.
    let mut f = frames(REASONING);
    let first_summary_delta = first_event(&f, "response.reasoning_summary_text.delta");
    let foreign = f[first_event(&f, "response.function_call_arguments.delta")].clone();
    f.insert(first_summary_delta, foreign);
    renumber(&mut f);
    assert_rejected(relaxed(&f), "interleaved");
}

#[test]
fn rejects_other_corruptions() {
    // Event name differs from the JSON type.
    let mut f = frames(TEXT);
    f[3].event = Some("response.output_text.delta".into());
    assert_rejected(check(&f), "does not match");

    // No event name at all.
    let mut f = frames(TEXT);
    f[2].event = None;
    assert_rejected(check(&f), "no `event:`");

    // A [DONE] sentinel.
    let mut f = frames(TEXT);
    f.push(SseFrame::data("[DONE]"));
    assert_rejected(check(&f), "[DONE]");

    // Response id changes in the terminal event.
    let mut f = frames(TEXT);
    let last = f.len() - 1;
    edit(&mut f, last, |v| v["response"]["id"] = json!("resp_other"));
    assert_rejected(check(&f), "differs from the first lifecycle event");

    // The done item's text differs from the streamed text.
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_item.done");
    edit(&mut f, i, |v| {
        v["item"]["content"][0]["text"] = json!("something else")
    });
    assert_rejected(check(&f), "differs from the streamed text");

    // response.completed.output differs from the done items.
    let mut f = frames(TOOL);
    let last = f.len() - 1;
    edit(&mut f, last, |v| {
        v["response"]["output"].as_array_mut().unwrap().remove(0);
    });
    assert_rejected(relaxed(&f), "output");
    let mut f = frames(TEXT);
    let last = f.len() - 1;
    edit(&mut f, last, |v| {
        v["response"]["output"][0]["content"][0]["text"] = json!("changed")
    });
    assert_rejected(check(&f), "output[0] differs");

    // output_index skips a number.
    let mut f = frames(TOOL);
    let start = nth_event(&f, "response.output_item.added", 1);
    for i in start..f.len() - 1 {
        edit(&mut f, i, |v| {
            if v.get("output_index").is_some() {
                v["output_index"] = json!(2)
            }
        });
    }
    assert_rejected(relaxed(&f), "output_index 2, expected 1");

    // The added item is not partial.
    let mut f = frames(TOOL);
    let i = nth_event(&f, "response.output_item.added", 1);
    edit(&mut f, i, |v| v["item"]["arguments"] = json!("{}"));
    assert_rejected(relaxed(&f), "just-added");
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_item.added");
    edit(&mut f, i, |v| v["item"]["status"] = json!("completed"));
    assert_rejected(check(&f), "in_progress");

    // The done item keeps status in_progress.
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_item.done");
    edit(&mut f, i, |v| v["item"]["status"] = json!("in_progress"));
    assert_rejected(check(&f), "status");

    // output_text.delta without logprobs.
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_text.delta");
    edit(&mut f, i, |v| {
        v.as_object_mut().unwrap().remove("logprobs");
    });
    assert_rejected(check(&f), "logprobs");

    // Unknown event type.
    let mut f = frames(TEXT);
    let i = first_event(&f, "response.output_text.delta");
    edit(&mut f, i, |v| {
        v["type"] = json!("response.output_text.partial")
    });
    f[i].event = Some("response.output_text.partial".into());
    assert_rejected(check(&f), "unknown event type");

    // A required key of Response missing in response.created.
    let mut f = frames(TEXT);
    edit(&mut f, 0, |v| {
        v["response"].as_object_mut().unwrap().remove("tools");
    });
    assert_rejected(check(&f), "`tools`");

    // Usage without total_tokens.
    let mut f = frames(TEXT);
    let last = f.len() - 1;
    edit(&mut f, last, |v| {
        v["response"]["usage"]
            .as_object_mut()
            .unwrap()
            .remove("total_tokens");
    });
    assert_rejected(check(&f), "total_tokens");

    // An item left open at response.completed.
    let mut f = frames(TEXT);
    f.remove(first_event(&f, "response.output_item.done"));
    renumber(&mut f);
    assert_rejected(check(&f), "still open");

    // A content part never closed.
    let mut f = frames(TEXT);
    f.remove(first_event(&f, "response.content_part.done"));
    renumber(&mut f);
    assert_rejected(check(&f), "no content_part.done");

    // function_call_arguments.done names another function.
    let mut f = frames(TOOL);
    let i = first_event(&f, "response.function_call_arguments.done");
    edit(&mut f, i, |v| v["name"] = json!("other_function"));
    assert_rejected(relaxed(&f), "name");

    // The done item changes the call_id.
    let mut f = frames(TOOL);
    let i = nth_event(&f, "response.output_item.done", 1);
    edit(&mut f, i, |v| v["item"]["call_id"] = json!("call_other"));
    assert_rejected(relaxed(&f), "call_id");

    // Wrong terminal status.
    let mut f = frames(TEXT);
    let last = f.len() - 1;
    edit(&mut f, last, |v| {
        v["response"]["status"] = json!("incomplete")
    });
    assert_rejected(check(&f), "status");
}
