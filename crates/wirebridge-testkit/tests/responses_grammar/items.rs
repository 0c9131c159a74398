//! Each item kind on hand-built streams and recordings: what is accepted,
//! and the rules of reasoning, hosted items, names and annotations.

use crate::builders::*;
use crate::common::*;
use crate::recordings::relaxed;
use serde_json::{json, Value};
use wirebridge_testkit::responses_grammar::{self, check};

#[test]
fn accepts_every_core_item_kind() {
    let mut events = lifecycle_start();
    let mut output = Vec::new();
    for (ev, item) in [
        reasoning_events(0, "rs_1"),
        message_events(1, "msg_1", &["Hel", "lo"], &["No", "pe"]),
        function_events(2, "fc_1", true),
        custom_tool_events(3, "ctc_1"),
    ] {
        events.extend(ev);
        output.push(item);
    }
    events.push(completed(output));
    let t = check(&responses_frames(events)).unwrap();
    assert_eq!(t.text, "Hello");
    assert_eq!(t.refusal, "Nope");
    assert_eq!(t.reasoning, "Thinking hard.raw thoughts");
    assert_eq!(t.function_calls.len(), 2);
    assert_eq!(t.function_calls[0].item_type, "function_call");
    assert_eq!(t.function_calls[1].item_type, "custom_tool_call");
    assert_eq!(t.function_calls[1].arguments, "*** Begin Patch");
    assert_eq!(t.usage, Some(usage()));
    assert_eq!(t.output.len(), 4);
    assert_eq!(
        t,
        responses_grammar::transcript_of_recorded(&responses_frames({
            let mut e = lifecycle_start();
            let mut o = Vec::new();
            for (ev, item) in [
                reasoning_events(0, "rs_1"),
                message_events(1, "msg_1", &["Hel", "lo"], &["No", "pe"]),
                function_events(2, "fc_1", true),
                custom_tool_events(3, "ctc_1"),
            ] {
                e.extend(ev);
                o.push(item);
            }
            e.push(completed(o));
            e
        }))
    );
}

#[test]
fn strict_requires_the_name_on_arguments_done() {
    let mut events = lifecycle_start();
    let (ev, item) = function_events(0, "fc_1", false);
    events.extend(ev);
    events.push(completed(vec![item]));
    let f = responses_frames(events);
    assert_rejected(check(&f), "missing `name`");
    relaxed(&f).unwrap();
}

#[test]
fn hosted_items_need_only_pairing() {
    let mut events = lifecycle_start();
    let added = json!({"id": "ws_1", "type": "web_search_call", "status": "in_progress"});
    let done = json!({"id": "ws_1", "type": "web_search_call", "status": "completed",
                      "action": {"type": "search", "query": "q"}});
    events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
    events.push(
        json!({"type": "response.web_search_call.searching", "output_index": 0, "item_id": "ws_1"}),
    );
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": done}));
    events.push(completed(vec![done.clone()]));
    check(&responses_frames(events.clone())).unwrap();

    // A message event inside a hosted item is out of place.
    let mut bad = events.clone();
    bad.insert(
        3,
        json!({"type": "response.output_text.delta", "output_index": 0, "item_id": "ws_1",
        "content_index": 0, "delta": "x", "logprobs": []}),
    );
    assert_rejected(check(&responses_frames(bad)), "not valid inside");

    // The done item changes type.
    let mut bad = events;
    bad[4]["item"]["type"] = json!("file_search_call");
    assert_rejected(check(&responses_frames(bad)), "`type`");
}

#[test]
fn reasoning_rules() {
    let (ev, item) = reasoning_events(0, "rs_1");
    let build = |ev: Vec<Value>, item: Value| {
        let mut events = lifecycle_start();
        events.extend(ev);
        events.push(completed(vec![item]));
        responses_frames(events)
    };
    check(&build(ev.clone(), item.clone())).unwrap();

    // summary_index skips.
    let mut bad = ev.clone();
    for e in bad.iter_mut() {
        if e.get("summary_index").is_some() {
            e["summary_index"] = json!(1);
        }
    }
    assert_rejected(
        check(&build(bad, item.clone())),
        "summary_index 1, expected 0",
    );

    // The done item lacks the summary.
    let mut bad_item = item.clone();
    bad_item["summary"] = json!([]);
    let mut bad = ev.clone();
    *bad.last_mut().unwrap() =
        json!({"type": "response.output_item.done", "output_index": 0, "item": bad_item});
    assert_rejected(check(&build(bad, bad_item)), "summary");

    // The summary part is closed before its text is done.
    let mut bad = ev.clone();
    let text_done = bad
        .iter()
        .position(|e| e["type"] == "response.reasoning_summary_text.done")
        .unwrap();
    bad.swap(text_done, text_done + 1);
    assert_rejected(
        check(&build(bad, item)),
        "before reasoning_summary_text.done",
    );
}

#[test]
fn annotations_must_be_indexed_and_carried_over() {
    let f = frames("vercel-ai/responses/openai-web-search-tool.1.chunks.txt");
    check(&f).unwrap();

    let mut bad = f.clone();
    let i = nth_event(&bad, "response.output_text.annotation.added", 3);
    edit(&mut bad, i, |v| v["annotation_index"] = json!(7));
    assert_rejected(check(&bad), "annotation_index");

    let mut bad = f;
    let i = first_event(&bad, "response.content_part.done");
    edit(&mut bad, i, |v| {
        v["part"]["annotations"].as_array_mut().unwrap().pop();
    });
    assert_rejected(check(&bad), "annotations");
}
