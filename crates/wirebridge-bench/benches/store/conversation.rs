//! The conversation the store bench reads: Codex-like turns, each a user
//! message in and a reasoning item and an answer out (~1.3 KB of items),
//! with a `Response` object that echoes the recorded Codex tools (~20 KB),
//! as the bridge keeps them.

use std::path::Path;

use serde_json::{json, Value};
use wirebridge_bench::cases;
use wirebridge_store::StoredResponse;

/// Seconds since the epoch the first turn was created at.
const CREATED_AT: u64 = 1_767_225_600;

/// The records of one conversation, oldest first, in the current shape:
/// each naming its parent, its response object without the output.
pub struct Conversation {
    /// The records, oldest first.
    pub records: Vec<StoredResponse>,
    /// Each record's response object with its output items in place: what
    /// the previous shape kept, beside the input and output again.
    pub full_responses: Vec<String>,
}

impl Conversation {
    /// `depth` turns built from the fixtures in `shared`.
    pub fn build(shared: &Path, depth: usize) -> Result<Self, String> {
        let tools = cases::codex_tools(shared)?;
        let prose: Vec<char> = cases::codex_prose(shared)?.chars().collect();
        let mut records = Vec::with_capacity(depth);
        let mut full_responses = Vec::with_capacity(depth);
        let mut parent: Option<String> = None;
        for n in 0..depth {
            let id = format!("resp_{n:032x}");
            let input = json!([{
                "type": "message",
                "id": format!("msg_{n:032x}_in"),
                "role": "user",
                "content": [{"type": "input_text", "text": excerpt(&prose, n, 300)}],
            }]);
            let output = json!([
                {
                    "type": "reasoning",
                    "id": format!("rs_{n:032x}"),
                    "summary": [{"type": "summary_text", "text": excerpt(&prose, n + 7, 250)}],
                },
                {
                    "type": "message",
                    "id": format!("msg_{n:032x}"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [{
                        "type": "output_text",
                        "text": excerpt(&prose, n + 13, 500),
                        "annotations": [],
                    }],
                },
            ]);
            let mut response = response_object(&id, parent.as_deref(), n, &tools);
            let envelope = response.to_string();
            response["output"] = output.clone();
            full_responses.push(response.to_string());
            records.push(StoredResponse {
                id: id.clone(),
                parent: parent.replace(id.clone()),
                created_at: CREATED_AT + n as u64,
                input: input.to_string(),
                output: output.to_string(),
                response: envelope,
            });
        }
        Ok(Self {
            records,
            full_responses,
        })
    }
}

/// A `Response` object as the bridge sends it, its output left empty.
fn response_object(id: &str, parent: Option<&str>, n: usize, tools: &Value) -> Value {
    json!({
        "id": id,
        "object": "response",
        "created_at": CREATED_AT + n as u64,
        "completed_at": CREATED_AT + n as u64 + 2,
        "status": "completed",
        "background": false,
        "error": null,
        "incomplete_details": null,
        "instructions": null,
        "max_output_tokens": null,
        "model": "gpt-5.4",
        "output": [],
        "parallel_tool_calls": true,
        "previous_response_id": parent,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "service_tier": "default",
        "store": true,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": tools,
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": 1200 + 180 * n,
            "input_tokens_details": {"cached_tokens": 1024},
            "output_tokens": 180,
            "output_tokens_details": {"reasoning_tokens": 60},
            "total_tokens": 1380 + 180 * n,
        },
        "metadata": {},
    })
}

/// `len` characters of `prose`, starting at a place that depends on `n`, so
/// that no two turns say quite the same.
fn excerpt(prose: &[char], n: usize, len: usize) -> String {
    if prose.is_empty() {
        return "…".repeat(len / 3);
    }
    let start = (n * 131) % prose.len();
    prose.iter().cycle().skip(start).take(len).collect()
}
