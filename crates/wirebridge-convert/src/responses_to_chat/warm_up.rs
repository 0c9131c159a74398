//! A turn the bridge answers itself, the backend never asked: a WebSocket
//! warm-up (`response.create` with `generate: false`). Its `Response` is
//! completed, with no output and no tokens used; its input is kept like
//! any turn's, so the next turn continues it.

use wirebridge_wire::responses::strict::{
    Lifecycle, Response, ResponseEcho, ResponseStatus, Usage,
};

use super::body::TranslatedBody;
use super::reply::token_usage;
use super::stream::emit;
use crate::frames::Frames;
use crate::ids::{unix_now, ResponseIds};
use crate::loss::LossReport;
use crate::summary::ReplySummary;

/// A warm-up's response: written once from the request's context (its
/// ids, the model asked for, the fields a `Response` repeats), then sent
/// as a body, or as the events a stream of it carries.
///
/// ```
/// use wirebridge_convert::responses_to_chat::{translate_request, Options, WarmUp};
///
/// let request = br#"{"model":"m","input":"Hi","generate":false}"#;
/// let context = translate_request(request, &Options::default()).unwrap().context;
/// let warm_up = WarmUp::new(&context.ids, &context.model, &context.echo);
/// let mut out = wirebridge_convert::Frames::json();
/// warm_up.events(&mut out);
/// let kinds: Vec<serde_json::Value> = out
///     .events()
///     .map(|event| serde_json::from_slice::<serde_json::Value>(event).unwrap()["type"].clone())
///     .collect();
/// assert_eq!(kinds, ["response.created", "response.in_progress", "response.completed"]);
/// let response: serde_json::Value = serde_json::from_slice(&warm_up.reply().body).unwrap();
/// assert_eq!(response["output"], serde_json::json!([]));
/// assert_eq!(response["usage"]["total_tokens"], 0);
/// ```
#[derive(Debug)]
pub struct WarmUp {
    /// The completed `Response`, as a body.
    reply: TranslatedBody,
    /// The same `Response` while it was in progress: the opening events'.
    started: Vec<u8>,
}

impl WarmUp {
    /// The warm-up of a request translated with `ids`, for `model`, with
    /// `echo` (the request's fields a `Response` repeats).
    pub fn new(ids: &ResponseIds, model: &str, echo: &ResponseEcho) -> Self {
        let id = ids.response();
        let created_at = unix_now();
        // No model ran: nothing was read or written, and the usage says so
        // (as a real turn's would, every count present).
        let usage = Usage::default();
        let response = |status, completed_at, usage| Response {
            id: &id,
            object: "response",
            created_at,
            status,
            completed_at,
            error: None,
            incomplete_details: None,
            model,
            output: &[],
            usage,
            echo,
        };
        let mut started = Vec::new();
        response(ResponseStatus::InProgress, None, None).write_json(&mut started);
        let mut body = Vec::new();
        response(ResponseStatus::Completed, Some(unix_now()), Some(&usage)).write_json(&mut body);
        let summary = ReplySummary {
            outcome: Some(ResponseStatus::Completed.as_str().to_owned()),
            usage: Some(token_usage(&usage)),
            tool_calls: Vec::new(),
        };
        let reply = TranslatedBody {
            body,
            response_id: id.clone(),
            status: ResponseStatus::Completed,
            created_at,
            output: Vec::new(),
            losses: LossReport::default(),
            summary,
        };
        Self { reply, started }
    }

    /// The completed response, as a body (and as a store keeps it, through
    /// [`TranslatedBody::finished`]).
    pub fn reply(&self) -> &TranslatedBody {
        &self.reply
    }

    /// Replaces the completed response's body (the same `Response`, told
    /// it was not kept after all): the terminal event carries it.
    pub fn set_body(&mut self, body: Vec<u8>) {
        self.reply.body = body;
    }

    /// The events of a stream that carries the response, as a real turn's
    /// stream carries it: `response.created` and `response.in_progress`
    /// (in progress, no usage yet), then `response.completed`, written to
    /// `out` in its framing.
    pub fn events(&self, out: &mut Frames) {
        let mut seq = 0;
        let started = as_raw(&self.started);
        for kind in ["response.created", "response.in_progress"] {
            emit(out, &mut seq, kind, Lifecycle { response: started });
        }
        let completed = as_raw(&self.reply.body);
        emit(
            out,
            &mut seq,
            "response.completed",
            Lifecycle {
                response: completed,
            },
        );
    }
}

/// A `Response` this module wrote (or a store's rewrite of one): a JSON
/// object, as a raw value to embed in an event.
fn as_raw(body: &[u8]) -> &serde_json::value::RawValue {
    std::str::from_utf8(body)
        .ok()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_else(|| {
            // Unreachable for what `new` wrote: `Response::write_json` writes
            // valid JSON; an empty object keeps the event well-formed anyway.
            serde_json::from_str("{}").expect("an empty object is valid JSON")
        })
}
