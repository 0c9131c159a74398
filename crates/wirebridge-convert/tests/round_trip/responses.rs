//! Responses → Chat → Responses.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use wirebridge_convert::profile::BackendProfile;
use wirebridge_convert::{chat_to_responses, responses_to_chat, LossKind};
use wirebridge_testkit::fixtures;

use super::json::*;
use super::{assert_table_used, check, input, Lossy};

/// What a Responses request loses on its way through Chat and back.
pub(super) const RESPONSES_LOSSY: &[Lossy] = &[
    Lossy {
        field: "input (string)",
        why: "a string input is one user message in Chat, and comes back as that message",
        reported: &[],
        rewrite: |e, _| {
            if let Some(text) = e["input"].as_str().map(str::to_owned) {
                e["input"] = json!([{"type": "message", "role": "user", "content": text}]);
            }
        },
    },
    Lossy {
        field: "instructions",
        why: "Chat has no instructions: they come back as the leading system message",
        reported: &[],
        rewrite: |e, _| {
            if let Some(instructions) = e.as_object_mut().unwrap().remove("instructions") {
                let message = json!({"type": "message", "role": "system", "content": instructions});
                e["input"].as_array_mut().unwrap().insert(0, message);
            }
        },
    },
    Lossy {
        field: "input[].id, input[].status",
        why: "Chat messages and tool calls have no item ids or statuses",
        reported: &[],
        rewrite: |e, _| each_item(e, |item| remove_keys(item, &["id", "status"])),
    },
    Lossy {
        field: "input[role=assistant] (OutputMessage shape)",
        why: "assistant history comes back in the shape the spec's input union takes: a generated \
              id, a status, output_text with annotations and logprobs",
        reported: &[],
        rewrite: |e, a| {
            each_item(a, |item| {
                if item["role"] == "assistant" {
                    remove_keys(item, &["id", "status"]);
                    for part in array_mut(item, "content") {
                        if part["logprobs"] == json!([]) {
                            remove_keys(part, &["logprobs"]);
                        }
                    }
                }
            });
            each_item(e, |item| {
                if item["role"] == "assistant" {
                    for part in array_mut(item, "content") {
                        if part["type"] == "output_text" {
                            set_default(part, "annotations", json!([]));
                        }
                    }
                }
            });
        },
    },
    Lossy {
        field: "input[].type (messages)",
        why: "messages sent without a type come back with `type: message`",
        reported: &[],
        rewrite: |e, _| {
            each_item(e, |item| {
                if item.get("role").is_some() {
                    set_default(item, "type", json!("message"));
                }
            })
        },
    },
    Lossy {
        field: "input[type=reasoning]",
        why: "reasoning is not replayed to a Chat backend: dropped and reported",
        reported: &[LossKind::ReasoningHistory],
        rewrite: |e, _| retain_items(e, |item| item["type"] != "reasoning"),
    },
    Lossy {
        field: "input[type=web_search_call]",
        why: "hosted tool calls have no Chat equivalent: dropped and reported",
        reported: &[LossKind::UnsupportedItem],
        rewrite: |e, _| retain_items(e, |item| item["type"] != "web_search_call"),
    },
    Lossy {
        field: "input[].content[type=input_file].file_url",
        why: "Chat file parts take data or a file id, not a URL: dropped and reported",
        reported: &[LossKind::UnsupportedContent],
        rewrite: |e, _| {
            each_item(e, |item| {
                if let Some(parts) = at(item, &["content"]).and_then(Value::as_array_mut) {
                    parts.retain(|p| {
                        !(p["type"] == "input_file"
                            && p.get("file_url").is_some()
                            && p.get("file_data").is_none()
                            && p.get("file_id").is_none())
                    });
                }
            })
        },
    },
    Lossy {
        field: "input[].content[type=input_image] client fields (previewurl, filename)",
        why: "fields outside the spec that some clients add to image parts are not carried: \
              `filename` is an input file's, and any key the bridge does not read is reported",
        reported: &[LossKind::UnsupportedParameter],
        rewrite: |e, _| {
            each_item(e, |item| {
                for part in array_mut(item, "content") {
                    if part["type"] == "input_image" {
                        let keep = ["type", "image_url", "detail", "file_id"];
                        part.as_object_mut()
                            .unwrap()
                            .retain(|k, _| keep.contains(&k.as_str()));
                    }
                }
            })
        },
    },
    Lossy {
        field: "input[type=function_call_output].output (images)",
        why: "Chat tool results carry only text: images a tool returned reach the model as a user \
              message after the turn's results, and come back as one",
        reported: &[],
        rewrite: |e, _| tool_images_to_user_messages(e),
    },
    Lossy {
        field: "input[].content[type=input_image].detail",
        why: "an image without detail comes back with Chat's default, auto",
        reported: &[],
        rewrite: |e, _| {
            each_item(e, |item| {
                for part in array_mut(item, "content") {
                    if part["type"] == "input_image" {
                        set_default(part, "detail", json!("auto"));
                    }
                }
            })
        },
    },
    Lossy {
        field: "input[].content (one input_text part)",
        why: "the forward direction sends a single text part as a string",
        reported: &[],
        rewrite: |e, _| {
            each_item(e, |item| {
                if item["role"] != "assistant" {
                    if let Some(text) = single_part_text(&item["content"], "input_text") {
                        item["content"] = text;
                    }
                }
            })
        },
    },
    Lossy {
        field: "input[type=function_call].arguments (object)",
        why: "Chat arguments are text: an object comes back as its JSON text",
        reported: &[],
        rewrite: |e, a| {
            let texts: Vec<Value> = items(a).map(|i| i["arguments"].clone()).collect();
            let mut texts = texts.into_iter();
            each_item(e, |item| {
                if item["type"] != "function_call" && item["type"] != "custom_tool_call" {
                    return;
                }
                let text = texts.by_ref().find(|t| t.is_string());
                if item["arguments"].is_object() {
                    let text = text.expect("a call in the round trip");
                    let parsed: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
                    assert_eq!(parsed, item["arguments"], "arguments changed");
                    item["arguments"] = text;
                }
            });
        },
    },
    Lossy {
        field: "tools[type=custom], input[type=custom_tool_call|custom_tool_call_output]",
        why: "Chat backends have no custom tools: a custom tool comes back as a function taking \
              {\"input\": string} (its grammar described, reported), its calls as function calls",
        reported: &[LossKind::CustomToolGrammar],
        rewrite: responses_custom_to_functions,
    },
    Lossy {
        field: "tools[type=namespace]",
        why: "Chat has one flat list of functions: namespaced tools come back as functions named \
              namespace__name (the forward context restores the names in replies)",
        reported: &[],
        rewrite: |e, _| {
            let Some(tools) = at(e, &["tools"]).and_then(Value::as_array_mut) else {
                return;
            };
            let mut flat = Vec::new();
            for tool in tools.drain(..) {
                if tool["type"] != "namespace" {
                    flat.push(tool);
                    continue;
                }
                let namespace = tool["name"].as_str().unwrap();
                for mut inner in tool["tools"].as_array().unwrap().clone() {
                    let name = format!("{namespace}__{}", inner["name"].as_str().unwrap());
                    inner["name"] = json!(name);
                    flat.push(inner);
                }
            }
            *tools = flat;
        },
    },
    Lossy {
        field: "tool_choice.allowed_tools",
        why: "the forward direction offers only the allowed tools and sends the mode",
        reported: &[],
        rewrite: |e, _| allowed_tools_to_mode(e, "responses"),
    },
    Lossy {
        field: "tools[type=function].strict (absent)",
        why: "the forward direction leaves strict out, which Chat reads as non-strict; it comes \
              back written out as false",
        reported: &[],
        rewrite: |e, _| {
            for tool in array_mut(e, "tools") {
                if tool["type"] == "function" {
                    set_default(tool, "strict", json!(false));
                }
            }
        },
    },
    Lossy {
        field: "tools[type=web_search].external_web_access",
        why: "Chat's web_search_options have no such setting: `false` (cached results only) is \
              dropped and reported",
        reported: &[LossKind::UnsupportedParameter],
        rewrite: |e, _| {
            for tool in array_mut(e, "tools") {
                if tool["type"] == "web_search" {
                    remove_keys(tool, &["external_web_access"]);
                }
            }
        },
    },
    Lossy {
        field: "reasoning.summary, reasoning.context",
        why: "Chat cannot ask for reasoning summaries (the bridge shows the backend's reasoning as one instead), nor say which turns' reasoning to replay (the profile's replay decides; each reasoning item withheld is reported by itself)",
        reported: &[],
        rewrite: |e, _| {
            if let Some(reasoning) = at(e, &["reasoning"]) {
                remove_keys(reasoning, &["summary", "context"]);
            }
            if e["reasoning"] == json!({}) {
                remove_keys(e, &["reasoning"]);
            }
        },
    },
    Lossy {
        field: "include (other than logprobs)",
        why: "Chat has no include options: dropped and reported",
        reported: &[LossKind::IncludeOption],
        rewrite: |e, _| {
            if let Some(include) = at(e, &["include"]).and_then(Value::as_array_mut) {
                include.retain(|i| i == "message.output_text.logprobs");
                if include.is_empty() {
                    remove_keys(e, &["include"]);
                }
            }
        },
    },
    Lossy {
        field: "include (message.output_text.logprobs)",
        why: "top_logprobs needs `logprobs: true` in Chat, which comes back as this include entry",
        reported: &[],
        rewrite: |e, _| {
            if e.get("top_logprobs").is_some() && e.get("include").is_none() {
                e["include"] = json!(["message.output_text.logprobs"]);
            }
        },
    },
    Lossy {
        field: "client_metadata",
        why: "a client's own metadata has no Chat equivalent: dropped and reported",
        reported: &[LossKind::UnsupportedParameter],
        rewrite: |e, _| remove_keys(e, &["client_metadata"]),
    },
];

#[test]
fn responses_requests_survive_chat_and_back() {
    let forward = responses_to_chat::Options {
        profile: BackendProfile::openai(),
        ..Default::default()
    };
    let mut corpus = fixtures::codex_requests();
    assert_eq!(corpus.len(), 3);
    for name in ["request-features", "responses-request-plain"] {
        let body = serde_json::to_vec(&input(&format!("{name}.json"))).unwrap();
        corpus.push((name.into(), body));
    }
    let mut applied = BTreeSet::new();
    let mut reported_by_row = BTreeSet::new();
    for (name, body) in corpus {
        let chat = responses_to_chat::translate_request(&body, &forward)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = chat_to_responses::translate_request(&chat.body, &Default::default())
            .unwrap_or_else(|e| panic!("{name} (back): {e}"));
        let original: Value = serde_json::from_slice(&body).unwrap();
        let round_trip: Value = serde_json::from_slice(&back.body).unwrap();
        let losses = [chat.losses, back.losses];
        check(
            &name,
            original,
            round_trip,
            RESPONSES_LOSSY,
            &losses,
            &mut applied,
            &mut reported_by_row,
        );
    }
    assert_table_used(RESPONSES_LOSSY, &applied, &reported_by_row);
}

fn responses_custom_to_functions(e: &mut Value, a: &mut Value) {
    for tool in array_mut(e, "tools") {
        if tool["type"] == "custom" {
            let name = tool["name"].as_str().unwrap().to_owned();
            let mut function = json!({"type": "function", "name": name,
                "parameters": custom_schema(a, &name, &[]), "strict": false});
            if let Some(description) = tool.get("description") {
                function["description"] = description.clone();
            }
            *tool = function;
        }
    }
    each_item(e, |item| match item["type"].as_str() {
        Some("custom_tool_call") => {
            *item = json!({"type": "function_call", "call_id": item["call_id"], "name": item["name"],
                "arguments": input_arguments(&item["input"])});
        }
        Some("custom_tool_call_output") => item["type"] = json!("function_call_output"),
        _ => {}
    });
    if let Some(allowed) = at(e, &["tool_choice", "tools"]).and_then(Value::as_array_mut) {
        for tool in allowed.iter_mut().filter(|t| t["type"] == "custom") {
            tool["type"] = json!("function");
        }
    }
}

/// Tool results with images, as the forward direction sends them: the text
/// as the result, the images in a user message after the run of results.
fn tool_images_to_user_messages(e: &mut Value) {
    let Some(items) = at(e, &["input"]).and_then(Value::as_array_mut) else {
        return;
    };
    let mut out = Vec::with_capacity(items.len());
    let mut deferred = Vec::new();
    for mut item in items.drain(..) {
        let is_output = matches!(
            item["type"].as_str(),
            Some("function_call_output" | "custom_tool_call_output")
        );
        if !is_output {
            out.append(&mut deferred);
        }
        if is_output {
            if let Some(parts) = item["output"].as_array().cloned() {
                let texts: Vec<&str> = parts.iter().filter_map(|p| p["text"].as_str()).collect();
                let attachments: Vec<Value> = parts
                    .iter()
                    .filter(|p| p["type"] != "input_text")
                    .cloned()
                    .collect();
                item["output"] = json!(texts.join("\n"));
                if !attachments.is_empty() {
                    let intro = format!(
                        "Attachments returned by tool call {}:",
                        item["call_id"].as_str().unwrap()
                    );
                    let mut content = vec![json!({"type": "input_text", "text": intro})];
                    content.extend(attachments);
                    deferred.push(json!({"type": "message", "role": "user", "content": content}));
                }
            }
        }
        out.push(item);
    }
    out.append(&mut deferred);
    *items = out;
}
