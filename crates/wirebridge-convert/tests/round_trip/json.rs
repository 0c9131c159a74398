//! Small rewrites of JSON values shared by both tables.

use serde_json::{json, Value};

/// `null` and absent keys read the same; numbers compare by value (`0`
/// and `0.0`).
pub(super) fn canonical(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(canonical);
        }
        Value::Array(items) => items.iter_mut().for_each(canonical),
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e15) {
                *value = json!(f as i64);
            }
        }
        _ => {}
    }
}

/// The value at a path of keys, without inserting anything on the way.
pub(super) fn at<'v>(value: &'v mut Value, path: &[&str]) -> Option<&'v mut Value> {
    path.iter().try_fold(value, |v, key| v.get_mut(*key))
}

pub(super) fn remove_keys(value: &mut Value, keys: &[&str]) {
    if let Some(map) = value.as_object_mut() {
        for key in keys {
            map.remove(*key);
        }
    }
}

pub(super) fn rename_key(value: &mut Value, from: &str, to: &str) {
    if let Some(v) = value.as_object_mut().and_then(|m| m.remove(from)) {
        value[to] = v;
    }
}

pub(super) fn set_default(value: &mut Value, key: &str, default: Value) {
    if let Some(map) = value.as_object_mut() {
        map.entry(key).or_insert(default);
    }
}

pub(super) fn array_mut<'v>(
    value: &'v mut Value,
    key: &str,
) -> impl Iterator<Item = &'v mut Value> {
    value
        .get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

pub(super) fn each_message(chat: &mut Value, f: impl FnMut(&mut Value)) {
    array_mut(chat, "messages").for_each(f);
}

pub(super) fn each_part(chat: &mut Value, mut f: impl FnMut(&mut Value)) {
    each_message(chat, |m| array_mut(m, "content").for_each(&mut f));
}

pub(super) fn each_item(responses: &mut Value, f: impl FnMut(&mut Value)) {
    array_mut(responses, "input").for_each(f);
}

pub(super) fn items(responses: &Value) -> impl Iterator<Item = &Value> {
    responses["input"].as_array().into_iter().flatten()
}

pub(super) fn retain_items(responses: &mut Value, keep: impl FnMut(&Value) -> bool) {
    if let Some(items) = at(responses, &["input"]).and_then(Value::as_array_mut) {
        items.retain(keep);
    }
}

/// The text of content made of exactly one text part (with no other field).
pub(super) fn single_part_text(content: &Value, kind: &str) -> Option<Value> {
    let [part] = content.as_array()?.as_slice() else {
        return None;
    };
    let only_text = part.as_object()?.len() == 2 && part["type"] == kind;
    only_text.then(|| part["text"].clone())
}

/// The `{"input": string}` function schema the forward direction offers
/// for a custom tool; taken from the round trip after checking its shape.
pub(super) fn custom_schema(actual: &Value, name: &str, path: &[&str]) -> Value {
    let tools = actual["tools"].as_array().unwrap();
    let tool = tools
        .iter()
        .find(|t| {
            let mut v = *t;
            for key in path {
                v = &v[*key];
            }
            v["name"] == name
        })
        .unwrap_or_else(|| panic!("no function for custom tool {name}"));
    let mut schema = tool.clone();
    for key in path {
        schema = schema[*key].clone();
    }
    let parameters = schema["parameters"].clone();
    assert_eq!(parameters["required"], json!(["input"]), "{parameters}");
    assert_eq!(parameters["properties"]["input"]["type"], "string");
    parameters
}

pub(super) fn input_arguments(input: &Value) -> Value {
    json!(serde_json::to_string(&json!({"input": input})).unwrap())
}

/// An `allowed_tools` choice as the mode, with only the allowed tools
/// offered. `shape` tells where names are: `function` (Chat) or flat.
pub(super) fn allowed_tools_to_mode(e: &mut Value, shape: &str) {
    let chat = shape == "function";
    let choice = e["tool_choice"].clone();
    if choice["type"] != "allowed_tools" {
        return;
    }
    let (mode, allowed) = if chat {
        (
            &choice["allowed_tools"]["mode"],
            &choice["allowed_tools"]["tools"],
        )
    } else {
        (&choice["mode"], &choice["tools"])
    };
    let name_of = |tool: &Value| -> Option<String> {
        let name = if chat {
            &tool["function"]["name"]
        } else {
            &tool["name"]
        };
        name.as_str().map(str::to_owned)
    };
    let allowed: Vec<String> = allowed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(name_of)
        .collect();
    e["tool_choice"] = mode.clone();
    if let Some(tools) = at(e, &["tools"]).and_then(Value::as_array_mut) {
        tools.retain(|t| {
            t["type"] != "function" || name_of(t).is_some_and(|n| allowed.contains(&n))
        });
    }
}
