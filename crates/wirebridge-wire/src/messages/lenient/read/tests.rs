//! The single-pass Messages reader against serde: whatever it reads, serde
//! reads the same, and its parsed content is what serde parses from the
//! kept text.

use serde_json::Value;
use wirebridge_testkit::mutate::{edit, mutate, Rng};

use super::check::read_as_serde;
use crate::depth::MAX_DEPTH;
use crate::messages::lenient::{BlockSource, Content, CreateMessage};

/// Every field the reader reads, content as a string and as blocks, every
/// block and source field, with escapes, numbers and whitespace.
const EVERY_FIELD: &str = r#"{"model":"claude-sonnet-4-5","max_tokens":4096,
"system":[{"type":"text","text":"Be \"brief\".\n","cache_control":{"type":"ephemeral","ttl":"1h"}}],
"messages":[
 {"role":"user","content":"caf\u00e9 \ud83d\ude00"},
 {"role":"user","content":[{"type":"text","text":"a","citations":[{"type":"char_location"}]},
  {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBOR"}},
  {"type":"image","source":{"type":"url","url":"https://x/y.png"}},
  {"type":"document","source":{"type":"file","file_id":"file_1"},"title":"T","context":"C","citations":{"enabled":true}},
  {"type":"document","source":{"type":"content","content":[{"type":"text","text":"inner"}]}},
  {"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"ok"},
    {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}}],"is_error":true},
  {"type":"tool_result","tool_use_id":"toolu_2","content":"plain"},
  {"type":"tool_result","tool_use_id":"toolu_3","content":null},
  {"type":"search_result","source":"https://example.com/r","title":"t","content":[{"type":"text","text":"r"}],"unknown":[[{}]]}]},
 {"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig=="},
  {"type":"redacted_thinking","data":"opaque"},
  {"type":"text","text":"Let me look."},
  {"type":"tool_use","id":"toolu_1","name":"Read","input":{"path":"/a","lines":[1,2.5e1,-3],"all":true,"x":null}},
  {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}]},
 {"role":"system","content":"A mid-conversation note."},
 {"role":"assistant","content":null}],
"tools":[{"name":"Read","description":"Reads \"files\"","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"strict":true,"cache_control":{"type":"ephemeral"},"defer_loading":false},
 {"type":"custom","name":"c","input_schema":{"type":"object"}},
 {"type":"web_search_20250305","name":"web_search","max_uses":5}],
"tool_choice":{"type":"tool","name":"Read","disable_parallel_tool_use":true},
"thinking":{"type":"enabled","budget_tokens":2048,"display":"omitted"},
"temperature":0.7,"top_p":1,"top_k":40,"stop_sequences":["\n\nHuman:","END"],"stream":true,
"metadata":{"user_id":"user_\u0031","other":1},
"output_config":{"effort":"high","format":{"type":"json_schema","schema":{"type":"object"}}},
"output_format":{"type":"json_schema","schema":{}},
"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"},{"type":"clear_tool_uses_20250919","keep":{"type":"tool_uses","value":3}},{"type":"compact_20260112","trigger":{"type":"input_tokens","value":60000},"pause_after_compaction":true,"instructions":"Keep names."}]},
"service_tier":"auto","cache_control":{"type":"ephemeral"},"container":"cntr_1","inference_geo":"us",
"mcp_servers":[{"type":"url","url":"https://mcp"}],"thread":{"type":"continue","previous_message_id":"msg_\u0031","extra":0},"zzz_unknown":[1,{"a":"b"}]}"#;

fn compact(json: &str) -> String {
    serde_json::to_string(&serde_json::from_str::<Value>(json).unwrap()).unwrap()
}

/// The request bodies the translator's own tests read: a Claude Code turn
/// and one with every feature the translation knows.
fn recorded_requests() -> Vec<(&'static str, Vec<u8>)> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../wirebridge-convert/tests/inputs"
    );
    [
        "messages-claude-code-request.json",
        "messages-request-features.json",
    ]
    .into_iter()
    .map(|name| (name, std::fs::read(format!("{dir}/{name}")).unwrap()))
    .collect()
}

#[test]
fn reads_every_field_as_serde_does() {
    assert!(read_as_serde(EVERY_FIELD.as_bytes()));
    assert!(read_as_serde(compact(EVERY_FIELD).as_bytes()));
    let request = CreateMessage::read(EVERY_FIELD.as_bytes()).unwrap();
    assert!(matches!(request.parsed_system, Some(Content::Blocks(_))));
    let messages = request.messages.as_deref().unwrap();
    assert_eq!(messages.len(), 5);
    assert!(matches!(messages[0].parsed_content, Some(Content::Text(_))));
    let Some(Content::Blocks(blocks)) = &messages[1].parsed_content else {
        panic!("blocks expected");
    };
    assert_eq!(blocks.len(), 9);
    let Some(Content::Blocks(result)) = &blocks[5].parsed_content else {
        panic!("a tool result's blocks are read too");
    };
    let Some(BlockSource::Object(source)) = &result[1].source else {
        panic!("an image's source is an object");
    };
    assert_eq!(source.kind(), "base64");
    assert!(matches!(blocks[8].source, Some(BlockSource::Url(_))));
    assert!(matches!(blocks[6].parsed_content, Some(Content::Text(_))));
    assert!(blocks[7].content.is_none() && blocks[7].parsed_content.is_none());
    assert!(messages[4].content.is_none());
    assert_eq!(request.tools.as_ref().map(Vec::len), Some(3));
    assert_eq!(request.metadata.unwrap().user_id.as_deref(), Some("user_1"));
}

#[test]
fn reads_the_recorded_requests() {
    for (name, body) in recorded_requests() {
        assert!(read_as_serde(&body), "{name}");
        let compacted = compact(std::str::from_utf8(&body).unwrap());
        assert!(read_as_serde(compacted.as_bytes()), "{name}");
    }
}

#[test]
fn leaves_to_serde_what_it_does_not_handle() {
    for body in [
        r#"{"model":"a","model":"b"}"#,
        r#"{"mod\u0065l":"a"}"#,
        r#"{"messages":{"role":"user"}}"#,
        r#"{"messages":[1]}"#,
        r#"{"messages":[{"role":"user","role":"assistant"}]}"#,
        r#"{"temperature":"hot"}"#,
        r#"{"max_tokens":1.5}"#,
        r#"{"max_tokens":-1}"#,
        r#"{"stream":1}"#,
        r#"{"stop_sequences":"x"}"#,
        r#"{"thinking":["enabled"]}"#,
        r#"{"tools":[{"name":"a","strict":"yes"}]}"#,
        r#"{"model":"a"} x"#,
        r#"["model"]"#,
        "{\"model\":\"\\ud800\"}",
        "{\"model\":\"\u{0}\"}",
    ] {
        assert!(CreateMessage::read(body.as_bytes()).is_none(), "{body}");
    }
    let deep = format!(
        r#"{{"metadata":{{"x":{}}}}}"#,
        "[".repeat(MAX_DEPTH - 1) + &"]".repeat(MAX_DEPTH - 1)
    );
    assert!(CreateMessage::read(deep.as_bytes()).is_none());
    let limit = format!(
        r#"{{"metadata":{{"x":{}}}}}"#,
        "[".repeat(MAX_DEPTH - 2) + &"]".repeat(MAX_DEPTH - 2)
    );
    assert!(read_as_serde(limit.as_bytes()));
    assert!(CreateMessage::read(&[b'{', b'"', 0xff, b'"', b':', b'1', b'}']).is_none());
}

#[test]
fn content_of_the_wrong_shape_is_kept_raw_for_serde_to_report() {
    // The blocks are not read (a text that is a number, a content that is
    // an object), so the raw text is all that is kept, and serde's parse
    // of it is the error the translator reports.
    let body = br#"{"system":{"text":"x"},"messages":[{"role":"user","content":[{"type":"text","text":7}]}]}"#;
    assert!(read_as_serde(body));
    let request = CreateMessage::read(body).unwrap();
    assert!(request.parsed_system.is_none());
    assert!(Content::from_raw(request.system.unwrap()).is_err());
    let message = &request.messages.as_ref().unwrap()[0];
    assert!(message.parsed_content.is_none());
    assert!(Content::from_raw(message.content.unwrap()).is_err());
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
fn mutated_claude_code_requests_read_as_serde_reads_them() {
    // The recorded turn with its system prompt and tool descriptions cut
    // short, so that mutations land in its structure as often as in text.
    let (_, body) = recorded_requests().swap_remove(0);
    let mut turn: Value = serde_json::from_slice(&body).unwrap();
    for tool in turn["tools"].as_array_mut().unwrap() {
        tool["description"] = Value::from("Runs.");
    }
    turn["tools"].as_array_mut().unwrap().truncate(4);
    let turn = serde_json::to_vec(&turn).unwrap();
    assert!(read_as_serde(&turn));
    let read = mutations(&turn, 4_000, 0x6a09_e667_f3bc_c909);
    assert!(read > 500, "{read}");
}

/// A field the types do not model, wherever it is, is noted by the reader
/// (the translator walks the body for it only then); a body without one
/// is not.
#[test]
fn an_unmodeled_field_at_any_level_is_noted() {
    let places = [
        (r#"{"model":"m","X":1,"messages":[]}"#, "X"),
        (
            r#"{"messages":[{"role":"user","X":1,"content":"a"}]}"#,
            "messages[0].X",
        ),
        (
            r#"{"system":[{"type":"text","text":"s","X":1}]}"#,
            "system[0].X",
        ),
        (
            r#"{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a","X":1}]}]}]}"#,
            "messages[0].content[0].content[0].X",
        ),
        (
            r#"{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"u","X":1}}]}]}"#,
            "messages[0].content[0].source.X",
        ),
        (r#"{"tools":[{"name":"f","X":1}]}"#, "tools[0].X"),
        (r#"{"tool_choice":{"type":"auto","X":1}}"#, "tool_choice.X"),
        (r#"{"thinking":{"type":"adaptive","X":1}}"#, "thinking.X"),
        (r#"{"metadata":{"user_id":"u","X":1}}"#, "metadata.X"),
        (
            r#"{"output_config":{"effort":"low","X":1}}"#,
            "output_config.X",
        ),
        (
            r#"{"output_config":{"format":{"type":"json_schema","X":1}}}"#,
            "output_config.format.X",
        ),
        (
            r#"{"output_format":{"type":"json_schema","X":1}}"#,
            "output_format.X",
        ),
        (
            r#"{"context_management":{"edits":[],"X":1}}"#,
            "context_management.X",
        ),
        (
            r#"{"context_management":{"edits":[{"type":"t","X":1}]}}"#,
            "context_management.edits[0].X",
        ),
    ];
    for (body, path) in places {
        let (_, noted) = CreateMessage::read_noting_unmodeled(body.as_bytes()).expect(body);
        assert!(noted, "{body}");
        assert_eq!(
            crate::messages::lenient::unmodeled_fields(body.as_bytes()),
            [path]
        );
        let plain = body.replace(r#","X":1"#, "");
        let (_, noted) = CreateMessage::read_noting_unmodeled(plain.as_bytes()).expect(body);
        assert!(!noted, "{plain}");
    }
    // Content the reader leaves for serde (a document's content source)
    // is noted too: the walk looks into it.
    let document = r#"{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"content","content":[{"type":"text","text":"d"}]}}]}]}"#;
    assert!(
        CreateMessage::read_noting_unmodeled(document.as_bytes())
            .unwrap()
            .1
    );
}
