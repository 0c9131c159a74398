//! Responses that end short: malformed failures, incomplete responses, and a
//! failure in the middle of an item.

use crate::builders::*;
use crate::common::*;
use crate::recordings::ERROR;
use serde_json::{json, Value};
use wirebridge_testkit::responses_grammar::{self, check};

#[test]
fn rejects_malformed_failures() {
    // Spec-shaped (flat) error event instead of the nested one.
    let mut f = frames(ERROR);
    edit(&mut f, 2, |v| {
        *v = json!({"type": "error", "sequence_number": 2, "code": "server_error",
                    "message": "boom", "param": null});
    });
    assert_rejected(check(&f), "nest");

    // Nested error without `type`.
    let mut f = frames(ERROR);
    edit(&mut f, 2, |v| {
        v["error"].as_object_mut().unwrap().remove("type");
    });
    assert_rejected(check(&f), "`type`");

    // response.failed without the error event.
    let mut f = frames(ERROR);
    f.remove(2);
    renumber(&mut f);
    assert_rejected(check(&f), "preceded by an `error` event");

    // Something between the error event and response.failed.
    let mut f = frames(ERROR);
    let extra = f[1].clone();
    f.insert(3, extra);
    renumber(&mut f);
    assert_rejected(check(&f), "immediately followed by response.failed");

    // An error event that ends the stream.
    let mut f = frames(ERROR);
    f.pop();
    assert_rejected(check(&f), "terminal");

    // response.failed without error code.
    let mut f = frames(ERROR);
    edit(&mut f, 3, |v| {
        v["response"]["error"]
            .as_object_mut()
            .unwrap()
            .remove("code");
    });
    assert_rejected(check(&f), "code");
}

#[test]
fn incomplete_responses() {
    let (mut ev, mut item) = message_events(0, "msg_1", &["Trunc"], &[]);
    // Drop the refusal part: keep added..content_part.done of part 0 only.
    let keep = ev
        .iter()
        .position(|e| e["type"] == "response.content_part.added" && e["content_index"] == 1)
        .unwrap();
    ev.truncate(keep);
    item["status"] = json!("incomplete");
    item["content"].as_array_mut().unwrap().truncate(1);
    ev.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    let mut events = lifecycle_start();
    events.extend(ev);
    let mut r = response_obj(RID, "incomplete", vec![item.clone()]);
    r["incomplete_details"] = json!({"reason": "max_output_tokens"});
    r["usage"] = usage();
    events.push(json!({"type": "response.incomplete", "response": r}));
    let t = check(&responses_frames(events.clone())).unwrap();
    assert_eq!(t.status, "incomplete");
    assert_eq!(t.incomplete_reason.as_deref(), Some("max_output_tokens"));
    assert_eq!(t.text, "Trunc");

    // No reason.
    let mut bad = events.clone();
    bad.last_mut().unwrap()["response"]["incomplete_details"] = json!(null);
    assert_rejected(check(&responses_frames(bad)), "incomplete_details");

    // An incomplete item in a completed response.
    let mut bad = events;
    let last = bad.len() - 1;
    bad[last] = completed(vec![item]);
    assert_rejected(check(&responses_frames(bad)), "incomplete");
}

#[test]
fn failure_in_the_middle_of_an_item() {
    let error = json!({"type": "error", "error": {"type": "server_error", "code": "server_error",
        "message": "upstream disconnected", "param": null}});
    let failed = |output: Vec<Value>| {
        let mut r = response_obj(RID, "failed", output);
        r["error"] = json!({"code": "server_error", "message": "upstream disconnected"});
        json!({"type": "response.failed", "response": r})
    };
    let (ev, _) = message_events(0, "msg_1", &["Par", "tial"], &[]);

    // Left open: what was said would vanish from the failed response.
    let mut open = lifecycle_start();
    open.extend(ev.iter().take(3).cloned()); // added, part added, one delta
    open.push(error.clone());
    open.push(failed(vec![]));
    let f = responses_frames(open);
    assert_rejected(check(&f), "still open");
    let lenient = responses_grammar::transcript_of_recorded(&f);
    assert_eq!(lenient.text, "Par");

    // Closed as incomplete with the text that arrived, and listed.
    let part = json!({"type": "output_text", "text": "Par", "annotations": [], "logprobs": []});
    let item = json!({"id": "msg_1", "type": "message", "status": "incomplete",
        "role": "assistant", "content": [part.clone()]});
    let mut closed = lifecycle_start();
    closed.extend(ev.iter().take(3).cloned());
    closed.push(
        json!({"type": "response.output_text.done", "output_index": 0, "item_id": "msg_1",
        "content_index": 0, "text": "Par", "logprobs": []}),
    );
    closed.push(
        json!({"type": "response.content_part.done", "output_index": 0, "item_id": "msg_1",
        "content_index": 0, "part": part}),
    );
    closed.push(
        json!({"type": "response.output_item.done", "output_index": 0, "item": item.clone()}),
    );
    closed.push(error.clone());
    closed.push(failed(vec![item.clone()]));
    let t = check(&responses_frames(closed.clone())).unwrap();
    assert_eq!(t.status, "failed");
    assert_eq!(t.text, "Par");
    assert_eq!(
        t.error.as_ref().unwrap()["message"],
        "upstream disconnected"
    );

    // Closed but missing from the failed response's output.
    let last = closed.len() - 1;
    closed[last] = failed(vec![]);
    assert_rejected(check(&responses_frames(closed)), "output");
}
