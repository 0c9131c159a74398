//! What a compaction answers with: a `response.compaction` object, or the
//! `Response` of a `compaction_trigger` turn (as a body or as events).

use serde::Serialize;
use serde_json::value::RawValue;
use wirebridge_wire::responses::strict::{ItemEvent, Lifecycle, Response, ResponseStatus, Usage};

use super::super::body::TranslatedBody;
use super::super::stream::emit;
use super::request::SummaryRequest;
use super::summary::Summary;
use crate::frames::Frames;
use crate::ids::unix_now;

/// `CompactResource`.
#[derive(Serialize)]
struct CompactResource<'a> {
    id: &'a str,
    object: &'static str,
    created_at: u64,
    output: &'a [Box<RawValue>],
    usage: &'a Usage,
}

impl SummaryRequest {
    /// The answer to `POST /responses/compact`: a `response.compaction`
    /// object whose output is the client's messages, then the compaction
    /// item; its usage is the summary's (zeros when the backend reported
    /// none).
    pub fn compact_resource(&self, summary: &Summary) -> Vec<u8> {
        let ids = &self.context.ids;
        let mut output = self.kept.clone();
        output.push(summary.item(ids, output.len()));
        let resource = CompactResource {
            id: &ids.response(),
            object: "response.compaction",
            created_at: unix_now(),
            output: &output,
            usage: &summary.usage.unwrap_or_default(),
        };
        serde_json::to_vec(&resource).expect("compactions always serialize")
    }

    /// The `Response` of a turn that ends with a `compaction_trigger`:
    /// completed, its only output the compaction item, its usage the
    /// summary's.
    pub fn trigger_reply(&self, summary: &Summary) -> TranslatedBody {
        let ids = &self.context.ids;
        let output = vec![summary.item(ids, 0)];
        let response_id = ids.response();
        let created_at = unix_now();
        let status = ResponseStatus::Completed;
        let response = Response {
            id: &response_id,
            object: "response",
            created_at,
            status,
            completed_at: Some(created_at),
            error: None,
            incomplete_details: None,
            model: &self.context.model,
            output: &output,
            usage: summary.usage.as_ref(),
            echo: &self.context.echo,
        };
        let mut body = Vec::new();
        response.write_json(&mut body);
        TranslatedBody {
            body,
            response_id,
            status,
            created_at,
            output,
            losses: summary.losses.clone(),
            summary: summary.report(),
        }
    }

    /// `reply` (from [`trigger_reply`](Self::trigger_reply)) as the event
    /// stream a client that asked for one reads: `response.created`,
    /// `response.in_progress`, each item added and done, then
    /// `response.completed`, written to `out` in its framing.
    pub fn trigger_events(&self, reply: &TranslatedBody, out: &mut Frames) {
        let mut seq = 0;
        let started = Response {
            id: &reply.response_id,
            object: "response",
            created_at: reply.created_at,
            status: ResponseStatus::InProgress,
            completed_at: None,
            error: None,
            incomplete_details: None,
            model: &self.context.model,
            output: &[],
            usage: None,
            echo: &self.context.echo,
        };
        for kind in ["response.created", "response.in_progress"] {
            let response = &started;
            emit(out, &mut seq, kind, Lifecycle { response });
        }
        for (output_index, item) in reply.output.iter().enumerate() {
            for kind in ["response.output_item.added", "response.output_item.done"] {
                let item = &**item;
                emit(out, &mut seq, kind, ItemEvent { output_index, item });
            }
        }
        // Written by serde_json above: valid JSON.
        let finished = std::str::from_utf8(&reply.body)
            .ok()
            .and_then(|text| serde_json::from_str::<&RawValue>(text).ok());
        if let Some(response) = finished {
            emit(out, &mut seq, "response.completed", Lifecycle { response });
        }
    }
}
