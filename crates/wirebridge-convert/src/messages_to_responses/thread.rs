//! `thread`: a conversation the bridge keeps for a Messages client, as a
//! chain of stored responses.
//!
//! `{"type": "create"}` keeps the turn (its system prompt and tools with
//! it) under the reply's `id`; `{"type": "continue", "previous_message_id":
//! …}` sends only the turns after that reply, and leaves `system` and
//! `tools` out: the thread holds them. Both become a Responses request
//! the bridge's stateful side answers: `store: true`, and for a continue
//! the `previous_response_id` of the reply named. A reply's `msg_…` id and
//! the response it was stored as share their stem, so the id a client is
//! given is the one it continues from.

use serde_json::value::RawValue;
use wirebridge_wire::messages::lenient::CreateMessage;

use crate::error::ConvertError;

/// What a request's `thread` asks of the bridge's response store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThreadTurn {
    /// `{"type": "create"}`: the turn starts a thread, kept with its
    /// system prompt and tools.
    Create,
    /// `{"type": "continue"}`: the turn follows a reply of a thread.
    Continue {
        /// The reply's id, as the client sent it.
        previous_message_id: String,
        /// The response it was stored as.
        previous_response_id: String,
    },
}

impl ThreadTurn {
    /// The response a continue follows; `None` for a create.
    pub fn previous_response_id(&self) -> Option<&str> {
        match self {
            ThreadTurn::Create => None,
            ThreadTurn::Continue {
                previous_response_id,
                ..
            } => Some(previous_response_id),
        }
    }
}

/// The `msg_…` id of the reply a response was stored as: its stem after
/// `resp_`. `None` for an id of another shape.
///
/// ```
/// use wirebridge_convert::messages_to_responses::{message_id_of, response_id_of};
///
/// assert_eq!(message_id_of("resp_0a1b").as_deref(), Some("msg_0a1b"));
/// assert_eq!(response_id_of("msg_0a1b"), "resp_0a1b");
/// assert_eq!(message_id_of("chatcmpl-1"), None);
/// ```
pub fn message_id_of(response_id: &str) -> Option<String> {
    let stem = response_id.strip_prefix("resp_")?;
    (!stem.is_empty()).then(|| format!("msg_{stem}"))
}

/// The response a reply's `msg_…` id names; an id of another shape is kept
/// as it is, and names no stored response.
pub fn response_id_of(message_id: &str) -> String {
    match message_id.strip_prefix("msg_") {
        Some(stem) if !stem.is_empty() => format!("resp_{stem}"),
        _ => message_id.to_owned(),
    }
}

/// The Responses request of a thread's continue, `request`, with what the
/// thread holds: the `instructions` and `tools` of `stored`, the stored
/// `Response` it follows (each turn of a thread is stored with them, so
/// the one before is enough). Copied as stored, not read again.
///
/// ```
/// use wirebridge_convert::messages_to_responses::held_by_thread;
///
/// let request = br#"{"model":"m","input":[],"previous_response_id":"resp_1"}"#;
/// let stored = r#"{"id":"resp_1","instructions":"Be brief.","tools":[{"type":"function","name":"f"}],"output":[]}"#;
/// let body = held_by_thread(request, stored).unwrap();
/// let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
/// assert_eq!(body["instructions"], "Be brief.");
/// assert_eq!(body["tools"][0]["name"], "f");
/// assert_eq!(body["previous_response_id"], "resp_1");
/// ```
pub fn held_by_thread(request: &[u8], stored: &str) -> Result<Vec<u8>, ConvertError> {
    #[derive(serde::Deserialize)]
    struct Held<'a> {
        #[serde(borrow)]
        instructions: Option<&'a RawValue>,
        #[serde(borrow)]
        tools: Option<&'a RawValue>,
    }
    let held: Held<'_> = serde_json::from_str(stored).map_err(|e| {
        ConvertError::InvalidUpstream(format!("the stored response the thread continues: {e}"))
    })?;
    let start = request.iter().position(|b| !b.is_ascii_whitespace());
    let Some(start) = start.filter(|&at| request[at] == b'{') else {
        // Not an object: left for the request's reader to refuse.
        return Ok(request.to_vec());
    };
    let mut out = Vec::with_capacity(request.len() + stored.len());
    out.extend_from_slice(&request[..=start]);
    let mut members = Vec::new();
    if let Some(text) = held.instructions.filter(|r| r.get() != "null") {
        members.push(("instructions", text));
    }
    if let Some(tools) = held.tools.filter(|r| !matches!(r.get(), "null" | "[]")) {
        members.push(("tools", tools));
    }
    let rest = &request[start + 1..];
    let empty = rest.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}');
    for (n, (key, value)) in members.iter().enumerate() {
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(value.get().as_bytes());
        if n + 1 < members.len() || !empty {
            out.push(b',');
        }
    }
    out.extend_from_slice(rest);
    Ok(out)
}

/// Reads `thread`, and what it requires of the rest of the request: a
/// continue takes its system prompt and tools from the thread, so one that
/// sends either is refused naming it (the thread would otherwise answer
/// with one set while the client believes it sent another).
pub(super) fn read(request: &CreateMessage<'_>) -> Result<Option<ThreadTurn>, ConvertError> {
    let Some(thread) = &request.thread else {
        return Ok(None);
    };
    match thread.kind.as_deref() {
        Some("create") => Ok(Some(ThreadTurn::Create)),
        Some("continue") => {
            let id = thread
                .previous_message_id
                .as_deref()
                .ok_or_else(|| ConvertError::MissingField("thread.previous_message_id".into()))?;
            if id.is_empty() {
                return Err(ConvertError::invalid(
                    "thread.previous_message_id",
                    "must be the id of an earlier reply of the thread",
                ));
            }
            let present = |raw: Option<&RawValue>| raw.is_some_and(|r| r.get() != "null");
            if present(request.system) {
                return Err(create_only("system"));
            }
            if request.tools.is_some() {
                return Err(create_only("tools"));
            }
            Ok(Some(ThreadTurn::Continue {
                previous_message_id: id.to_owned(),
                previous_response_id: response_id_of(id),
            }))
        }
        None => Err(ConvertError::MissingField("thread.type".into())),
        Some(other) => Err(ConvertError::invalid(
            "thread.type",
            format!("unknown thread type '{other}' (expected create or continue)"),
        )),
    }
}

/// A continue that sends `field`, which only a create sets.
fn create_only(field: &str) -> ConvertError {
    ConvertError::invalid(
        field,
        format!(
            "a thread keeps the `{field}` of the request that created it: leave it out of a \
             continue, or start a new thread with {{\"type\": \"create\"}} to change it"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_body(body: &str) -> Result<Option<ThreadTurn>, ConvertError> {
        let request: CreateMessage<'_> = serde_json::from_str(body).unwrap();
        read(&request)
    }

    #[test]
    fn a_continue_names_the_response_its_reply_was_stored_as() {
        let turn = read_body(
            r#"{"thread":{"type":"continue","previous_message_id":"msg_00ff"},"tool_choice":{"type":"auto"}}"#,
        )
        .unwrap();
        assert_eq!(
            turn,
            Some(ThreadTurn::Continue {
                previous_message_id: "msg_00ff".into(),
                previous_response_id: "resp_00ff".into(),
            })
        );
        assert_eq!(
            read_body(r#"{"thread":{"type":"create"}}"#).unwrap(),
            Some(ThreadTurn::Create)
        );
        assert_eq!(read_body("{}").unwrap(), None);
    }

    #[test]
    fn what_a_thread_holds_is_added_only_where_it_holds_something() {
        let stored = r#"{"instructions":null,"tools":[],"output":[]}"#;
        let body = held_by_thread(br#" {"model":"m"}"#, stored).unwrap();
        assert_eq!(body, br#" {"model":"m"}"#);
        let stored = r#"{"instructions":"s","tools":[]}"#;
        assert_eq!(
            held_by_thread(b"{}", stored).unwrap(),
            br#"{"instructions":"s"}"#
        );
        assert_eq!(held_by_thread(b"[]", stored).unwrap(), b"[]");
        assert!(held_by_thread(b"{}", "not json").is_err());
    }

    #[test]
    fn a_continue_that_sets_what_the_thread_holds_is_refused_naming_it() {
        for (body, field) in [
            (
                r#"{"system":"s","thread":{"type":"continue","previous_message_id":"msg_1"}}"#,
                "system",
            ),
            (
                r#"{"tools":[],"thread":{"type":"continue","previous_message_id":"msg_1"}}"#,
                "tools",
            ),
            (
                r#"{"thread":{"type":"continue"}}"#,
                "thread.previous_message_id",
            ),
            (
                r#"{"thread":{"type":"continue","previous_message_id":""}}"#,
                "thread.previous_message_id",
            ),
            (r#"{"thread":{}}"#, "thread.type"),
            (r#"{"thread":{"type":"fork"}}"#, "thread.type"),
        ] {
            let err = read_body(body).unwrap_err();
            assert_eq!(err.param(), Some(field), "{body}");
        }
    }
}
