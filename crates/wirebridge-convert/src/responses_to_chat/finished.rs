//! A finished response as a store keeps it: what the translator already
//! holds, so that keeping it parses nothing the bridge wrote itself.

use serde_json::value::RawValue;
use wirebridge_wire::responses::strict::ResponseStatus;
use wirebridge_wire::RawObject;

/// A finished response, as a response store keeps it: what the stream
/// translator or the body translator already holds, typed, so nothing is
/// parsed again to store it.
#[derive(Debug, Clone, Copy)]
pub struct Finished<'r> {
    /// The response id.
    pub id: &'r str,
    /// Unix seconds.
    pub created_at: u64,
    /// Its final status.
    pub status: ResponseStatus,
    /// Its output items, each a JSON object.
    pub output: &'r [Box<RawValue>],
    /// The whole `Response` object, as sent to the client.
    pub response: &'r str,
}

impl Finished<'_> {
    /// The output items as one JSON array.
    pub fn output_array(&self) -> String {
        let len = self.output.iter().map(|i| i.get().len() + 1).sum::<usize>();
        let mut out = String::with_capacity(len + 2);
        out.push('[');
        for (n, item) in self.output.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(item.get());
        }
        out.push(']');
        out
    }

    /// The response object as a store keeps it beside its items: its
    /// `output` written `[]`.
    ///
    /// The translators write `output` as the items they hold, joined as
    /// they are, so the array is found where the response names it and
    /// cut out as bytes; a response written otherwise is read and written
    /// again. Reading it cost a small turn about 40 K instructions, most of
    /// what keeping the turn cost (the store path in
    /// docs/performance-journal.md).
    ///
    /// ```
    /// use serde_json::value::RawValue;
    /// use wirebridge_convert::responses_to_chat::Finished;
    /// use wirebridge_wire::responses::strict::ResponseStatus;
    ///
    /// let item = RawValue::from_string(r#"{"type":"message","id":"msg_1"}"#.into()).unwrap();
    /// let finished = Finished {
    ///     id: "resp_1",
    ///     created_at: 0,
    ///     status: ResponseStatus::Completed,
    ///     output: &[item],
    ///     response: r#"{"id":"resp_1","output":[{"type":"message","id":"msg_1"}],"usage":null}"#,
    /// };
    /// assert_eq!(finished.envelope(), r#"{"id":"resp_1","output":[],"usage":null}"#);
    /// ```
    pub fn envelope(&self) -> String {
        match self.output_span() {
            Some((start, end)) => {
                let (before, after) = (&self.response[..start], &self.response[end..]);
                let mut out = String::with_capacity(before.len() + 2 + after.len());
                out.push_str(before);
                out.push_str("[]");
                out.push_str(after);
                out
            }
            None => envelope_of(self.response),
        }
    }

    /// Where the response's `output` array is, as bytes: its first
    /// `"output":` is its own key (a quote inside a JSON string is escaped,
    /// and no member written before `output` holds an object with that
    /// key), and what follows must be the items exactly as held.
    pub(crate) fn output_span(&self) -> Option<(usize, usize)> {
        const KEY: &str = "\"output\":";
        let start = self.response.find(KEY)? + KEY.len();
        let mut rest = self.response[start..].strip_prefix('[')?;
        for (n, item) in self.output.iter().enumerate() {
            if n > 0 {
                rest = rest.strip_prefix(',')?;
            }
            rest = rest.strip_prefix(item.get())?;
        }
        rest.strip_prefix(']')?;
        Some((start, self.response.len() - rest.len() + 1))
    }
}

/// A response object written by someone else (a background run's state, a
/// response the translators did not write): read, its `output` set to `[]`,
/// and written again; as it was, if it is no JSON object.
pub fn envelope_of(response: &str) -> String {
    let parsed = serde_json::from_str::<&RawValue>(response)
        .ok()
        .and_then(|raw| RawObject::parse(raw).ok());
    match parsed {
        Some(mut object) => {
            object.set("output", "[]");
            object.to_raw().get().to_owned()
        }
        None => response.to_owned(),
    }
}

/// Holds a translator's finished response to the cut: found as bytes, and
/// the same envelope as reading the response gives.
#[cfg(test)]
pub(crate) fn assert_cut(f: Finished<'_>) {
    assert!(!f.output.is_empty());
    assert!(f.output_span().is_some(), "read again: {}", f.response);
    let cut: serde_json::Value = serde_json::from_str(&f.envelope()).unwrap();
    let read: serde_json::Value = serde_json::from_str(&envelope_of(f.response)).unwrap();
    assert_eq!(cut, read);
    assert_eq!(cut["output"], serde_json::json!([]));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    fn finished<'r>(response: &'r str, output: &'r [Box<RawValue>]) -> Finished<'r> {
        Finished {
            id: "resp_1",
            created_at: 1,
            status: ResponseStatus::Completed,
            output,
            response,
        }
    }

    #[test]
    fn the_output_is_cut_where_the_response_names_it() {
        let output = [raw(r#"{"id":"a"}"#), raw(r#"{"id":"b","x":[1,2]}"#)];
        let response = r#"{"id":"resp_1","error":{"code":"c","message":"\"output\":[]"},"output":[{"id":"a"},{"id":"b","x":[1,2]}],"usage":{"n":1},"tools":[]}"#;
        let f = finished(response, &output);
        assert_eq!(
            f.envelope(),
            r#"{"id":"resp_1","error":{"code":"c","message":"\"output\":[]"},"output":[],"usage":{"n":1},"tools":[]}"#
        );
        let empty = finished(r#"{"output":[],"usage":null}"#, &[]);
        assert_eq!(empty.envelope(), r#"{"output":[],"usage":null}"#);
    }

    #[test]
    fn a_response_whose_output_is_not_the_items_held_is_read_again() {
        // Written with spaces, as another writer might: the same envelope.
        let output = [raw(r#"{"id":"a"}"#)];
        let f = finished(
            r#"{"id":"resp_1", "output": [ {"id":"a"} ], "usage":null}"#,
            &output,
        );
        assert_eq!(f.envelope(), r#"{"id":"resp_1","output":[],"usage":null}"#);
        // Items that differ from those held are not cut by their bytes.
        let f = finished(r#"{"output":[{"id":"b"}],"usage":null}"#, &output);
        assert_eq!(f.envelope(), r#"{"output":[],"usage":null}"#);
        // Not JSON: kept as it is.
        assert_eq!(finished("not json", &output).envelope(), "not json");
    }

    /// The Chat translators write their `Response` so that the output is
    /// cut as bytes, never read again; the envelope is the one reading it
    /// gives. (The stateless Responses translator's is held to the same
    /// in its own module.)
    #[test]
    fn the_chat_translators_responses_are_cut_not_read() {
        use crate::responses_to_chat::{translate_body, ResponsesContext, StreamTranslator};

        let mut chat = StreamTranslator::new(ResponsesContext::default());
        let mut out = crate::Frames::sse();
        chat.push(r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}"#, &mut out);
        chat.push(r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":\"\\\"output\\\":[]\"}"}}]}}]}"#, &mut out);
        chat.push(r#"{"id":"c","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#, &mut out);
        chat.push("[DONE]", &mut out);
        assert_cut(chat.finished().unwrap());

        let completion = br#"{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}"#;
        let body = translate_body(completion, &ResponsesContext::default()).unwrap();
        assert_cut(body.finished());
    }
}
