//! [`ResponseShell`]: a `Response`'s own fields, its output items left raw.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{IncompleteDetails, InputDetails, OutputDetails, Usage};
use crate::cursor::{JsonCursor, SeenFields};
use crate::Str;

/// A `Response` (a body, or the `response` of a lifecycle event) with its
/// output items kept as the JSON text they were: what re-sending a
/// backend's response under the bridge's ids reads, since the items go on
/// as they were written (patched, not parsed). [`ResponseBody`] parses the
/// items too.
///
/// [`ResponseBody`]: super::ResponseBody
///
/// ```
/// use wirebridge_wire::responses::lenient::ResponseShell;
///
/// let body = br#"{"id":"resp_1","status":"completed","output":[{"type":"message","content":[]}],"usage":{"input_tokens":3,"output_tokens":1}}"#;
/// let shell = ResponseShell::parse(body).unwrap();
/// assert_eq!(shell.status.as_deref(), Some("completed"));
/// assert_eq!(shell.output.unwrap()[0].get(), r#"{"type":"message","content":[]}"#);
/// assert_eq!(shell.usage.unwrap().input_tokens, Some(3));
/// ```
#[derive(Debug, Default, Deserialize)]
pub struct ResponseShell<'a> {
    /// `resp_…` id.
    #[serde(borrow)]
    pub id: Option<Str<'a>>,
    /// `"response"` for a `Response`; what tells one apart from another
    /// JSON object a server answers with (an error body).
    #[serde(borrow)]
    pub object: Option<Str<'a>>,
    /// Unix seconds.
    #[serde(default, deserialize_with = "crate::count::count")]
    pub created_at: Option<u64>,
    /// Model id.
    #[serde(borrow)]
    pub model: Option<Str<'a>>,
    /// Status.
    #[serde(borrow)]
    pub status: Option<Str<'a>>,
    /// Output items, each as its JSON text.
    #[serde(borrow)]
    pub output: Option<Vec<&'a RawValue>>,
    /// Token usage.
    pub usage: Option<Usage>,
    /// The error of a failed response.
    #[serde(borrow)]
    pub error: Option<&'a RawValue>,
    /// Why the response is incomplete.
    #[serde(borrow)]
    pub incomplete_details: Option<IncompleteDetails<'a>>,
}

impl<'a> ResponseShell<'a> {
    /// Parses a `Response`: in one pass with the [`JsonCursor`] when it is
    /// as servers write them, with serde otherwise (which reads the same,
    /// and names what is wrong). With serde alone, the stateful engine read
    /// each backend reply twice over (once for these fields, once for the
    /// raw items), 65 K instructions of a 3 KB turn's 303 K (see
    /// docs/performance-journal.md, "The stateful engine").
    pub fn parse(body: &'a [u8]) -> Result<Self, serde_json::Error> {
        match std::str::from_utf8(body).ok().and_then(Self::read) {
            Some(shell) => Ok(shell),
            None => serde_json::from_slice(body),
        }
    }

    /// The cursor's reading; `None` for serde to read (an escaped key, a
    /// field written twice, a value of a type the field does not take, a
    /// count written as a float, invalid JSON).
    pub(crate) fn read(text: &'a str) -> Option<Self> {
        let mut cursor = JsonCursor::new(text);
        let shell = Self::read_from(&mut cursor)?;
        cursor.end()?;
        Some(shell)
    }

    fn read_from(cursor: &mut JsonCursor<'a>) -> Option<Self> {
        let mut shell = ResponseShell::default();
        let mut seen = SeenFields::default();
        cursor.object(|c, key| {
            let r = &mut shell;
            let (bit, read): (u8, ReadField<'a>) = match key {
                "id" => (0, |c, r| c.set(&mut r.id, JsonCursor::str)),
                "created_at" => (1, |c, r| c.set(&mut r.created_at, JsonCursor::u64)),
                "model" => (2, |c, r| c.set(&mut r.model, JsonCursor::str)),
                "status" => (3, |c, r| c.set(&mut r.status, JsonCursor::str)),
                "output" => (4, |c, r| c.set(&mut r.output, raw_items)),
                "usage" => (5, |c, r| c.set(&mut r.usage, usage)),
                "error" => (6, |c, r| c.set(&mut r.error, JsonCursor::raw)),
                "incomplete_details" => (7, |c, r| {
                    c.set(&mut r.incomplete_details, incomplete_details)
                }),
                "object" => (8, |c, r| c.set(&mut r.object, JsonCursor::str)),
                _ => return c.skip_value(),
            };
            seen.once(bit)?;
            read(c, r)
        })?;
        Some(shell)
    }
}

/// A lifecycle event (`response.created`, `response.completed`, …) read
/// for the `Response` it carries: its type, and that response's
/// [`ResponseShell`], in one pass over the event. Servers echo the whole
/// request in these (its tools, its instructions), so they are the
/// largest events of a stream, and reading the event and then its
/// response would read them twice.
///
/// ```
/// use wirebridge_wire::responses::lenient::LifecycleEvent;
///
/// let event = LifecycleEvent::read(r#"{"type":"response.completed","sequence_number":9,"response":{"status":"completed","output":[]}}"#).unwrap();
/// assert_eq!(event.kind.as_deref(), Some("response.completed"));
/// assert_eq!(event.response.unwrap().status.as_deref(), Some("completed"));
/// ```
#[derive(Debug, Default, Deserialize)]
pub struct LifecycleEvent<'a> {
    /// The event's type.
    #[serde(borrow, rename = "type")]
    pub kind: Option<Str<'a>>,
    /// The response it carries.
    #[serde(borrow)]
    pub response: Option<ResponseShell<'a>>,
}

impl<'a> LifecycleEvent<'a> {
    /// Reads an event in one pass with the [`JsonCursor`]; `None` when the
    /// cursor does not read it (as for [`ResponseShell::parse`]), for the
    /// caller to read it another way, which also names what is wrong.
    pub fn read(text: &'a str) -> Option<Self> {
        let mut cursor = JsonCursor::new(text);
        let mut event = LifecycleEvent::default();
        let mut seen = SeenFields::default();
        cursor.object(|c, key| match key {
            "type" => {
                seen.once(0)?;
                c.set(&mut event.kind, JsonCursor::str)
            }
            "response" => {
                seen.once(1)?;
                c.set(&mut event.response, ResponseShell::read_from)
            }
            _ => c.skip_value(),
        })?;
        cursor.end()?;
        Some(event)
    }
}

/// Reads one field's value into the response.
type ReadField<'a> = fn(&mut JsonCursor<'a>, &mut ResponseShell<'a>) -> Option<()>;

/// An array's elements, each as its text.
fn raw_items<'a>(c: &mut JsonCursor<'a>) -> Option<Vec<&'a RawValue>> {
    let mut items = Vec::new();
    c.array(|c| {
        items.push(c.raw()?);
        Some(())
    })?;
    Some(items)
}

/// Reads `usage`, as serde reads it into [`Usage`] (also for
/// [`ResponseBody::read`](super::ResponseBody::read)).
pub(super) fn usage(c: &mut JsonCursor<'_>) -> Option<Usage> {
    let mut out = Usage::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| {
        let (bit, slot) = match key {
            "input_tokens" => (0, &mut out.input_tokens),
            "output_tokens" => (1, &mut out.output_tokens),
            "total_tokens" => (2, &mut out.total_tokens),
            "input_tokens_details" => {
                seen.once(3)?;
                return c.set(&mut out.input_tokens_details, input_details);
            }
            "output_tokens_details" => {
                seen.once(4)?;
                return c.set(&mut out.output_tokens_details, output_details);
            }
            _ => return c.skip_value(),
        };
        seen.once(bit)?;
        c.set(slot, JsonCursor::u64)
    })?;
    Some(out)
}

fn input_details(c: &mut JsonCursor<'_>) -> Option<InputDetails> {
    let mut out = InputDetails::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| {
        let (bit, slot) = match key {
            "cached_tokens" => (0, &mut out.cached_tokens),
            "cache_write_tokens" => (1, &mut out.cache_write_tokens),
            _ => return c.skip_value(),
        };
        seen.once(bit)?;
        c.set(slot, JsonCursor::u64)
    })?;
    Some(out)
}

fn output_details(c: &mut JsonCursor<'_>) -> Option<OutputDetails> {
    let mut out = OutputDetails::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "reasoning_tokens" => {
            seen.once(0)?;
            c.set(&mut out.reasoning_tokens, JsonCursor::u64)
        }
        _ => c.skip_value(),
    })?;
    Some(out)
}

/// Reads `incomplete_details`, as serde reads it.
pub(super) fn incomplete_details<'a>(c: &mut JsonCursor<'a>) -> Option<IncompleteDetails<'a>> {
    let mut out = IncompleteDetails::default();
    let mut seen = SeenFields::default();
    c.object(|c, key| match key {
        "reason" => {
            seen.once(0)?;
            c.set(&mut out.reason, JsonCursor::str)
        }
        _ => c.skip_value(),
    })?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_as_serde(text: &str) -> bool {
        crate::responses::lenient::read::check::shell_as_serde(text.as_bytes())
    }

    const REPLY: &str = r#"{"id":"resp_1","object":"response","created_at":1767225600,"status":"incomplete","error":null,"incomplete_details":{"reason":"max_output_tokens"},"model":"m\u00e9","output":[{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"a \"b\""}],"role":"assistant"},{"type":"reasoning","summary":[]}],"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":4,"cache_write_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":17}}"#;

    #[test]
    fn reads_every_field_as_serde_does() {
        assert!(read_as_serde(REPLY));
        let shell = ResponseShell::read(REPLY).unwrap();
        assert_eq!(shell.model.as_deref(), Some("mé"));
        assert_eq!(shell.output.as_ref().map(Vec::len), Some(2));
        assert_eq!(
            shell
                .usage
                .unwrap()
                .output_tokens_details
                .unwrap()
                .reasoning_tokens,
            Some(2)
        );
        assert_eq!(
            shell.incomplete_details.unwrap().reason.as_deref(),
            Some("max_output_tokens")
        );
        assert!(shell.error.is_none());
        let pretty = serde_json::to_string_pretty(
            &serde_json::from_str::<serde_json::Value>(REPLY).unwrap(),
        )
        .unwrap();
        assert!(read_as_serde(&pretty));
    }

    #[test]
    fn leaves_to_serde_what_it_does_not_handle() {
        for text in [
            r#"{"status":"completed","status":"failed"}"#,
            r#"{"created_at":1.5e9}"#,
            r#"{"created_at":-1}"#,
            r#"{"st\u0061tus":"completed"}"#,
            r#"{"output":{}}"#,
            r#"{"usage":{"input_tokens":1,"input_tokens":2}}"#,
            "[]",
        ] {
            assert!(ResponseShell::read(text).is_none(), "{text}");
        }
        // serde reads them, or names what is wrong.
        assert_eq!(
            ResponseShell::parse(br#"{"created_at":1.5e9}"#)
                .unwrap()
                .created_at,
            Some(1_500_000_000)
        );
        let err = ResponseShell::parse(br#"{"output":{}}"#).unwrap_err();
        assert!(err.to_string().contains("sequence"), "{err}");
    }

    #[test]
    fn reads_a_lifecycle_event_as_serde_does() {
        let event =
            format!(r#"{{"type":"response.completed","sequence_number":12,"response":{REPLY}}}"#);
        let read = LifecycleEvent::read(&event).unwrap();
        assert_eq!(
            read.response
                .as_ref()
                .unwrap()
                .output
                .as_ref()
                .map(Vec::len),
            Some(2)
        );
        let serde: LifecycleEvent<'_> = serde_json::from_str(&event).unwrap();
        assert_eq!(format!("{read:?}"), format!("{serde:?}"));
        for given_up in [
            r#"{"type":"response.created","response":{"created_at":1.5}}"#,
            r#"{"type":"a","type":"b"}"#,
            r#"{"response":[]}"#,
            r#"{"type":"response.created"} x"#,
        ] {
            let read = LifecycleEvent::read(given_up);
            let serde = serde_json::from_str::<LifecycleEvent<'_>>(given_up);
            match (read, serde) {
                (Some(read), Ok(serde)) => assert_eq!(format!("{read:?}"), format!("{serde:?}")),
                (Some(read), Err(e)) => panic!("read what serde refuses ({e}): {read:?}"),
                (None, _) => {}
            }
        }
        let mut rng = wirebridge_testkit::mutate::Rng(0x2545_f491_4f6c_dd1d);
        let mut read = 0;
        for _ in 0..10_000 {
            let bytes = wirebridge_testkit::mutate::edit(
                event.as_bytes(),
                b"{}[]\":,\\ 019.etfnul",
                1 + rng.below(3),
                &mut rng,
            );
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            let Some(fast) = LifecycleEvent::read(text) else {
                continue;
            };
            let serde: LifecycleEvent<'_> = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("read what serde refuses ({e}): {text}"));
            assert_eq!(format!("{fast:?}"), format!("{serde:?}"), "{text}");
            read += 1;
        }
        assert!(read > 1_000, "{read}");
    }

    #[test]
    fn mutated_replies_read_as_serde_reads_them() {
        let alphabet = b"{}[]\":,\\ 0123456789.eE+-tfnulrsax";
        let mut rng = wirebridge_testkit::mutate::Rng(0x9e37_79b9_7f4a_7c15);
        let mut read = 0;
        for _ in 0..20_000 {
            let bytes = wirebridge_testkit::mutate::edit(
                REPLY.as_bytes(),
                alphabet,
                1 + rng.below(3),
                &mut rng,
            );
            let Ok(text) = std::str::from_utf8(&bytes) else {
                continue;
            };
            read += usize::from(read_as_serde(text));
        }
        assert!(read > 2_000, "{read}");
    }
}
