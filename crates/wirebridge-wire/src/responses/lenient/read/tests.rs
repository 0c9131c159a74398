//! The single-pass reader against serde: whatever it reads, serde reads
//! the same, and its kept forms are what serde parses from the kept text.

use serde_json::Value;
use wirebridge_testkit::fixtures::codex_requests;
use wirebridge_testkit::mutate::{edit, mutate, Rng};

use super::check::read_as_serde;
use crate::depth::MAX_DEPTH;
use crate::responses::lenient::{unmodeled_fields, CreateResponse, Input};

/// Every field the reader reads, in both of the shapes where a field has
/// two, with escapes, numbers and whitespace.
const EVERY_FIELD: &str = r#"{"model":"gpt-5","instructions":"Be \"brief\".\n","input":[
 {"type":"message","role":"developer","content":"plain"},
 {"role":"user","content":[{"type":"input_text","text":"caf\u00e9 \ud83d\ude00 tab\t"},
  {"type":"input_image","image_url":{"url":"data:image/png;base64,AA"},"detail":"high"},
  {"type":"input_file","file_id":"f1","file_data":"ZGF0YQ==","file_url":"https://x/y","filename":"a.txt"},
  {"type":"input_audio","input_audio":{"data":"AA","format":"wav"},"data":"AA","format":"mp3"},
  {"type":"output_text","text":"x","annotations":[],"logprobs":[{"token":"x","logprob":-0.5}],"prompt_cache_breakpoint":{"mode":"explicit"}},
  {"type":"refusal","refusal":"no"}],"id":"m\u0031","status":"completed","phase":"final_answer"},
 {"type":"function_call","call_id":"c1","name":"shell","namespace":"ns","arguments":"{\"cmd\":[\"ls\"]}"},
 {"type":"function_call","call_id":"c2","name":"obj","arguments":{"a":[1,2.5e-3,true,null]}},
 {"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"ok"}]},
 {"type":"custom_tool_call","call_id":"c3","name":"apply_patch","input":"*** Begin"},
 {"type":"reasoning","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"enc","content":null},
 {"type":"tool_search_output","execution":"client","tools":[{"type":"function","name":"late"}]},
 {"type":"item_reference","id":"msg_1"},
 {"type":"agent_message","author":"/root/worker","recipient":"/root","content":[{"type":"input_text","text":"done"}]},
 {"type":"message","role":"assistant","content":[],"unknown":{"deep":[[{}]]}}],
"tools":[{"type":"function","name":"shell","description":"Runs \"sh\"","parameters":{"type":"object","properties":{}},"strict":false,"defer_loading":true},
 {"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: x"}},
 {"type":"namespace","name":"ns","tools":[{"type":"function","name":"inner","parameters":null}]},
 {"type":"web_search","user_location":{"type":"approximate"},"search_context_size":"low","external_web_access":false},
 {"type":"tool_search","execution":"server"}],
"tool_choice":{"type":"function","name":"shell"},"parallel_tool_calls":true,
"text":{"format":{"type":"json_schema","name":"n","schema":{}},"verbosity":"low"},
"max_output_tokens":4096,"temperature":0.7,"top_p":1,"top_logprobs":3,"presence_penalty":-0.5,
"frequency_penalty":1e-2,"reasoning":{"effort":"high","summary":"auto"},"user":"u","safety_identifier":"s",
"stream":true,"stream_options":{"include_obfuscation":false},"store":false,"metadata":{"k":"v"},
"include":["reasoning.encrypted_content","message.output_text.logprobs"],"prompt_cache_key":"pck",
"prompt_cache_retention":"24h","service_tier":"auto","truncation":"auto","previous_response_id":null,
"conversation":{"id":"conv_1"},"background":false,"max_tool_calls":8,"prompt":{"id":"p"},
"context_management":[{"type":"compaction"}],"moderation":null,"prompt_cache_options":{},
"client_metadata":{"x-codex":"1"},"zzz_unknown":[1,{"a":"b"}]}"#;

fn compact(json: &str) -> String {
    serde_json::to_string(&serde_json::from_str::<Value>(json).unwrap()).unwrap()
}

#[test]
fn reads_every_field_as_serde_does() {
    assert!(read_as_serde(EVERY_FIELD.as_bytes()));
    assert!(read_as_serde(compact(EVERY_FIELD).as_bytes()));
    let read = CreateResponse::read(EVERY_FIELD.as_bytes()).unwrap();
    assert!(!read.compact);
    let request = read.request;
    assert_eq!(request.parsed_tools.as_ref().map(Vec::len), Some(5));
    let Some(Input::Items(items)) = &request.input else {
        panic!("items expected");
    };
    assert_eq!(items.len(), 11);
    assert_eq!(items[1].parsed_content.as_ref().map(Vec::len), Some(6));
    assert_eq!(items[1].id.as_deref(), Some("m1"));
    assert!(items[0].parsed_content.is_none(), "a string needs no parts");
    assert!(items[10].parsed_content.as_ref().is_some_and(Vec::is_empty));
}

#[test]
fn reads_every_recorded_codex_request() {
    let requests = codex_requests();
    assert!(!requests.is_empty());
    for (name, body) in requests {
        assert!(read_as_serde(&body), "{name}");
        // Nothing in them the types do not model: the walk is left out.
        let read = CreateResponse::read(&body).unwrap();
        assert!(!read.unmodeled, "{name}");
        assert!(unmodeled_fields(&body).is_empty(), "{name}");
    }
}

#[test]
fn notes_a_field_the_types_do_not_model_at_every_level_it_reads() {
    let plain = r#"{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},
        {"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"ok"}]},
        {"type":"additional_tools","tools":[{"type":"function","name":"f"}]},
        {"type":"reasoning","summary":[{"type":"summary_text","text":"thought"}]}],
        "tools":[{"type":"namespace","name":"n","tools":[{"type":"function","name":"g"}]},
            {"type":"custom","name":"p","format":{"type":"grammar","syntax":"lark","definition":"start: x"}}],
        "tool_choice":{"type":"allowed_tools","mode":"auto",
            "tools":[{"type":"function","name":"g2"},{"type":"function","function":{"name":"f2"}}]},
        "text":{"format":{"type":"text"},"verbosity":"low"},"reasoning":{"effort":"low"}}"#;
    let read = CreateResponse::read(plain.as_bytes()).unwrap();
    assert!(!read.unmodeled);
    assert!(unmodeled_fields(plain.as_bytes()).is_empty());
    for (at, path) in [
        (r#""model":"m""#, "x"),
        (r#""role":"user""#, "input[0].x"),
        (r#""text":"hi""#, "input[0].content[0].x"),
        (r#""text":"ok""#, "input[1].output[0].x"),
        (r#""name":"f""#, "input[2].tools[0].x"),
        (r#""name":"g""#, "tools[0].tools[0].x"),
        (r#""type":"text""#, "text.format.x"),
        (r#""effort":"low""#, "reasoning.x"),
        (r#""text":"thought""#, "input[3].summary[0].x"),
        (r#""definition":"start: x""#, "tools[1].format.x"),
        (r#""mode":"auto""#, "tool_choice.x"),
        (r#""name":"g2""#, "tool_choice.tools[0].x"),
        (r#""name":"f2""#, "tool_choice.tools[1].function.x"),
    ] {
        let body = plain.replacen(at, &format!(r#"{at},"x":1"#), 1);
        let read = CreateResponse::read(body.as_bytes()).expect(&body);
        assert!(read.unmodeled, "{body}");
        assert_eq!(unmodeled_fields(body.as_bytes()), [path], "{body}");
        assert!(read_as_serde(body.as_bytes()));
    }
}

#[test]
fn leaves_to_serde_what_it_does_not_handle() {
    for body in [
        r#"{"model":"a","model":"b"}"#,
        r#"{"mod\u0065l":"a"}"#,
        r#"{"input":{"role":"user"}}"#,
        r#"{"input":[1]}"#,
        r#"{"temperature":"hot"}"#,
        r#"{"max_output_tokens":1.5}"#,
        r#"{"max_output_tokens":-1}"#,
        r#"{"top_logprobs":4294967296}"#,
        r#"{"stream":1}"#,
        r#"{"include":"x"}"#,
        r#"{"input":"a"} x"#,
        r#"["model"]"#,
        "{\"input\":\"\\ud800\"}",
        "{\"model\":\"\u{0}\"}",
    ] {
        assert!(CreateResponse::read(body.as_bytes()).is_none(), "{body}");
    }
    let deep = format!(
        r#"{{"metadata":{}}}"#,
        "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH)
    );
    assert!(CreateResponse::read(deep.as_bytes()).is_none());
    let limit = format!(
        r#"{{"metadata":{}}}"#,
        "[".repeat(MAX_DEPTH - 1) + &"]".repeat(MAX_DEPTH - 1)
    );
    assert!(read_as_serde(limit.as_bytes()));
    assert!(CreateResponse::read(&[b'{', b'"', 0xff, b'"', b':', b'1', b'}']).is_none());
}

#[test]
fn a_field_of_the_wrong_type_is_kept_raw_for_serde_to_report() {
    // The tools and parts are not read (`strict` is not a bool), so the
    // raw text is all that is kept, and serde's parse of it is the error.
    let body = br#"{"tools":[{"name":"a","strict":"yes"}],"input":[{"role":"user","content":[{"type":"input_text","text":7}]}]}"#;
    assert!(read_as_serde(body));
    let request = CreateResponse::read(body).unwrap().request;
    assert!(request.parsed_tools.is_none());
    assert!(request.parse_tools().is_err());
    let Some(Input::Items(items)) = &request.input else {
        panic!("items expected");
    };
    assert!(items[0].parsed_content.is_none());
    assert!(items[0].parse_content().unwrap().is_err());
}

/// Mutates `base` `rounds` times; every mutation the reader reads must read
/// as serde does. Returns how many it read.
fn mutations(base: &[u8], rounds: usize, seed: u64) -> usize {
    let alphabet = b"{}[]\":,\\ 0123456789.eE+-tfnulrsaxu\x01";
    let mut rng = Rng(seed);
    let mut read = 0;
    for round in 0..rounds {
        let body = if round % 2 == 0 {
            edit(base, alphabet, 1 + rng.below(3), &mut rng)
        } else {
            mutate(base, &mut rng)
        };
        read += usize::from(read_as_serde(&body));
    }
    read
}

#[test]
fn mutated_requests_read_as_serde_reads_them() {
    let every = compact(EVERY_FIELD);
    let read = mutations(every.as_bytes(), 6_000, 0x2545_f491_4f6c_dd1d);
    assert!(read > 1_000, "{read}");
    let read = mutations(EVERY_FIELD.as_bytes(), 3_000, 0x9e37_79b9_7f4a_7c15);
    assert!(read > 500, "{read}");
}

#[test]
fn mutated_codex_requests_read_as_serde_reads_them() {
    // A real turn cut to its first items and tools, so that mutations land
    // in its structure as often as in its long instructions.
    let (_, body) = codex_requests()
        .into_iter()
        .find(|(name, _)| name.contains("function_call_output"))
        .expect("the recorded Codex turn with a tool result");
    let mut turn: Value = serde_json::from_slice(&body).unwrap();
    turn["instructions"] = Value::from("Follow the user.");
    for list in ["input", "tools"] {
        if let Some(array) = turn[list].as_array_mut() {
            array.truncate(4);
        }
    }
    let turn = serde_json::to_vec(&turn).unwrap();
    assert!(read_as_serde(&turn));
    let read = mutations(&turn, 4_000, 0x6a09_e667_f3bc_c909);
    assert!(read > 500, "{read}");
}
