//! Chat → Responses → Chat.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use wirebridge_convert::profile::BackendProfile;
use wirebridge_convert::{chat_to_responses, responses_to_chat, LossKind};
use wirebridge_testkit::fixtures;

use super::json::*;
use super::{assert_table_used, check, input, Lossy};

/// What a Chat request loses on its way through Responses and back.
pub(super) const CHAT_LOSSY: &[Lossy] = &[
    Lossy {
        field: "n",
        why: "`n: 1` is what Responses always does, so it is not sent",
        reported: &[],
        rewrite: |e, _| remove_keys(e, &["n"]),
    },
    Lossy {
        field: "stop, seed, presence_penalty, frequency_penalty, logit_bias",
        why: "sampling parameters Responses does not have: dropped and reported",
        reported: &[LossKind::SamplingParameter],
        rewrite: |e, _| {
            remove_keys(
                e,
                &["stop", "seed", "presence_penalty", "frequency_penalty", "logit_bias"],
            )
        },
    },
    Lossy {
        field: "functions, function_call, messages[].function_call, role function",
        why: "legacy functions come back as tools and tool_choice; legacy calls as tool_calls \
              with the id generated from their position, their results as tool messages",
        reported: &[],
        rewrite: |e, _| legacy_to_tools(e),
    },
    Lossy {
        field: "messages[].name",
        why: "Responses messages have no participant name: dropped and reported",
        reported: &[LossKind::UnsupportedParameter],
        rewrite: |e, _| each_message(e, |m| remove_keys(m, &["name"])),
    },
    Lossy {
        field: "messages[].reasoning_content",
        why: "Responses replays only its own reasoning items: dropped and reported",
        reported: &[LossKind::ReasoningHistory],
        rewrite: |e, _| each_message(e, |m| remove_keys(m, &["reasoning_content"])),
    },
    Lossy {
        field: "messages[].annotations",
        why: "a reply field clients echo back with the assistant message; Chat requests define none",
        reported: &[],
        rewrite: |e, _| each_message(e, |m| remove_keys(m, &["annotations"])),
    },
    Lossy {
        field: "tools[].function.strict",
        why: "Chat's default (non-strict) is written out, because Responses makes unmarked \
              functions strict",
        reported: &[],
        rewrite: |e, _| {
            for tool in array_mut(e, "tools") {
                if let Some(function) = at(tool, &["function"]) {
                    set_default(function, "strict", json!(false));
                }
            }
        },
    },
    Lossy {
        field: "tools[type=custom], tool_calls[type=custom], tool_choice custom",
        why: "Chat backends have no custom tools: the forward direction offers each as a function \
              taking {\"input\": string} (its grammar described, reported) and calls it so",
        reported: &[LossKind::CustomToolGrammar],
        rewrite: custom_to_functions,
    },
    Lossy {
        field: "tool_choice.allowed_tools",
        why: "the forward direction offers only the allowed tools and sends the mode, which works \
              on servers without allowed_tools",
        reported: &[],
        rewrite: |e, _| allowed_tools_to_mode(e, "function"),
    },
    Lossy {
        field: "max_tokens",
        why: "becomes max_output_tokens, which comes back under the current name max_completion_tokens",
        reported: &[],
        rewrite: |e, _| rename_key(e, "max_tokens", "max_completion_tokens"),
    },
    Lossy {
        field: "store",
        why: "Chat's default (not stored) is written out, because Responses stores by default",
        reported: &[],
        rewrite: |e, _| set_default(e, "store", json!(false)),
    },
    Lossy {
        field: "messages[].content[].image_url.detail",
        why: "Responses requires a detail: Chat's default, auto, is written out",
        reported: &[],
        rewrite: |e, _| {
            each_part(e, |p| {
                if p["type"] == "image_url" {
                    set_default(&mut p["image_url"], "detail", json!("auto"));
                }
            })
        },
    },
    Lossy {
        field: "messages[].content (one text part)",
        why: "the forward direction sends a single text part as a string",
        reported: &[],
        rewrite: |e, _| {
            each_message(e, |m| {
                if m["role"] != "assistant" && m["role"] != "tool" {
                    if let Some(text) = single_part_text(&m["content"], "text") {
                        m["content"] = text;
                    }
                }
            })
        },
    },
    Lossy {
        field: "messages[role=assistant].content (parts)",
        why: "assistant history comes back as one string, refusal parts as `refusal`",
        reported: &[],
        rewrite: |e, _| each_message(e, assistant_parts_to_string),
    },
    Lossy {
        field: "messages[role=assistant].content \"\" next to tool calls",
        why: "an empty text next to tool calls is not sent",
        reported: &[],
        rewrite: |e, _| {
            each_message(e, |m| {
                if m["role"] == "assistant" && m["content"] == "" && m.get("tool_calls").is_some()
                {
                    remove_keys(m, &["content"]);
                }
            })
        },
    },
    Lossy {
        field: "messages[role=tool].content (parts)",
        why: "the text parts of a tool result come back joined by newlines",
        reported: &[],
        rewrite: |e, _| {
            each_message(e, |m| {
                if m["role"] == "tool" {
                    if let Some(parts) = m["content"].as_array() {
                        let texts: Vec<&str> =
                            parts.iter().filter_map(|p| p["text"].as_str()).collect();
                        m["content"] = json!(texts.join("\n"));
                    }
                }
            })
        },
    },
    Lossy {
        field: "response_format {type: text}",
        why: "plain text is the default; the forward direction leaves it out",
        reported: &[],
        rewrite: |e, _| {
            if e["response_format"] == json!({"type": "text"}) {
                remove_keys(e, &["response_format"]);
            }
        },
    },
    Lossy {
        field: "stream_options",
        why: "the forward direction always asks for a usage chunk when streaming, and drops \
              Responses' stream_options: include_obfuscation false is what the bridge does \
              anyway (no loss), true is reported",
        reported: &[],
        rewrite: |e, _| {
            if e["stream"] == true {
                e["stream_options"] = json!({"include_usage": true});
            }
        },
    },
];

/// Hand-written requests covering every feature, and the follow-up request
/// a client sends after each recorded reply.
fn chat_corpus() -> Vec<(String, Value)> {
    let mut corpus: Vec<(String, Value)> = [
        "chat-request-features",
        "chat-request-defaults",
        "chat-request-legacy-functions",
        "chat-request-custom-tools",
    ]
    .iter()
    .map(|name| (name.to_string(), input(&format!("{name}.json"))))
    .collect();
    // Audio input is not in the official spec's Responses content union (so
    // it stays out of the golden files), but compatible servers take it.
    corpus.push((
        "audio".into(),
        json!({"model": "gpt-4o-audio-preview", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "Transcribe this."},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
        ]}]}),
    ));
    for (name, bytes) in fixtures::chat_bodies() {
        let reply: Value = serde_json::from_slice(&bytes).unwrap();
        corpus.push((name, follow_up(&reply)));
    }
    corpus
}

/// The request a client sends after a reply: the question, the assistant
/// message as received (first choice), and a result for each tool call.
fn follow_up(reply: &Value) -> Value {
    let message = &reply["choices"][0]["message"];
    let mut messages = vec![
        json!({"role": "system", "content": "You are a helpful assistant."}),
        json!({"role": "user", "content": "Please help."}),
        message.clone(),
    ];
    let mut tools = Vec::new();
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        messages
            .push(json!({"role": "tool", "tool_call_id": call["id"], "content": "{\"ok\":true}"}));
        tools.push(json!({"type": "function", "function": {
            "name": call["function"]["name"], "parameters": {"type": "object", "properties": {}}, "strict": false
        }}));
    }
    messages.push(json!({"role": "user", "content": "Thanks."}));
    let mut request = json!({"model": reply["model"], "messages": messages});
    if !tools.is_empty() {
        request["tools"] = json!(tools);
    }
    request
}

#[test]
fn chat_requests_survive_responses_and_back() {
    let forward = responses_to_chat::Options {
        profile: BackendProfile::openai(),
        ..Default::default()
    };
    let mut applied = BTreeSet::new();
    let mut reported_by_row = BTreeSet::new();
    let corpus = chat_corpus();
    assert!(corpus.len() >= 10, "corpus of {}", corpus.len());
    for (name, original) in corpus {
        let body = serde_json::to_vec(&original).unwrap();
        let there = chat_to_responses::translate_request(&body, &Default::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = responses_to_chat::translate_request(&there.body, &forward)
            .unwrap_or_else(|e| panic!("{name} (back): {e}"));
        let round_trip: Value = serde_json::from_slice(&back.body).unwrap();
        let losses = [there.losses, back.losses];
        check(
            &name,
            original,
            round_trip,
            CHAT_LOSSY,
            &losses,
            &mut applied,
            &mut reported_by_row,
        );
    }
    assert_table_used(CHAT_LOSSY, &applied, &reported_by_row);
}

fn assistant_parts_to_string(m: &mut Value) {
    if m["role"] != "assistant" {
        return;
    }
    let Some(parts) = m["content"].as_array().cloned() else {
        return;
    };
    let text: String = parts.iter().filter_map(|p| p["text"].as_str()).collect();
    let refusal: String = parts.iter().filter_map(|p| p["refusal"].as_str()).collect();
    remove_keys(m, &["content"]);
    if !text.is_empty() {
        m["content"] = json!(text);
    }
    if !refusal.is_empty() {
        m["refusal"] = json!(refusal);
    }
}

/// Legacy functions as the tools, calls and results they come back as.
fn legacy_to_tools(chat: &mut Value) {
    if let Some(functions) = chat.as_object_mut().unwrap().remove("functions") {
        let tools: Vec<Value> = functions
            .as_array()
            .unwrap()
            .iter()
            .map(|f| json!({"type": "function", "function": f}))
            .collect();
        chat["tools"] = json!(tools);
    }
    match chat.as_object_mut().unwrap().remove("function_call") {
        Some(Value::Object(named)) => {
            chat["tool_choice"] = json!({"type": "function", "function": named})
        }
        Some(mode) => chat["tool_choice"] = mode,
        None => {}
    }
    let mut pending = Vec::new();
    for (i, m) in array_mut(chat, "messages").enumerate() {
        if let Some(call) = m.as_object_mut().unwrap().remove("function_call") {
            let id = format!("call_fn_{i}");
            m["tool_calls"] = json!([{"id": id, "type": "function", "function": call}]);
            pending.push(id);
        } else if m["role"] == "function" {
            let content = m["content"].clone();
            *m = json!({"role": "tool", "tool_call_id": pending.remove(0), "content": content});
        }
    }
}

fn custom_to_functions(e: &mut Value, a: &mut Value) {
    let mut customs = Vec::new();
    for tool in array_mut(e, "tools") {
        if tool["type"] == "custom" {
            let custom = tool["custom"].clone();
            let name = custom["name"].as_str().unwrap().to_owned();
            let mut function =
                json!({"name": name, "parameters": custom_schema(a, &name, &["function"])});
            if let Some(description) = custom.get("description") {
                function["description"] = description.clone();
            }
            *tool = json!({"type": "function", "function": function});
            customs.push(name);
        }
    }
    each_message(e, |m| {
        for call in array_mut(m, "tool_calls") {
            if call["type"] == "custom" {
                let custom = call["custom"].clone();
                call["type"] = json!("function");
                remove_keys(call, &["custom"]);
                call["function"] =
                    json!({"name": custom["name"], "arguments": input_arguments(&custom["input"])});
            }
        }
    });
    if e["tool_choice"]["type"] == "custom" {
        e["tool_choice"] =
            json!({"type": "function", "function": e["tool_choice"]["custom"].clone()});
    }
    let allowed = at(e, &["tool_choice", "allowed_tools", "tools"]);
    if let Some(allowed) = allowed.and_then(Value::as_array_mut) {
        for tool in allowed.iter_mut().filter(|t| t["type"] == "custom") {
            *tool = json!({"type": "function", "function": tool["custom"].clone()});
        }
    }
}
