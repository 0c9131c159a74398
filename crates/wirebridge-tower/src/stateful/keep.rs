//! Keeping a finished response: the record, without its output in the
//! response object, saved to the connection's cache (without the response
//! object at all) and to the store.

use serde_json::value::RawValue;
use wirebridge_convert::conversation::conversation_items;
use wirebridge_convert::ids::ResponseIds;
use wirebridge_convert::responses_to_chat::{envelope_of, Finished, Turn};
use wirebridge_store::{ResponseStore, StoreError, StoredItem, StoredResponse};
use wirebridge_wire::responses::strict::ResponseStatus;
use wirebridge_wire::RawObject;

use super::Stateful;

/// A finished response to keep, and where.
pub(crate) struct Record {
    record: StoredResponse,
    /// Whether the client asked for it to be stored (not only cached).
    store: bool,
    /// The conversation the turn is part of: its input and output items
    /// are added to it.
    conversation: Option<String>,
}

impl Stateful {
    /// What to keep of a finished response: nothing for a failed one. The
    /// response object is kept without its output items, which are kept
    /// once, beside it; the conversation before it, by the id of the
    /// response it continues.
    pub(crate) fn record(&self, turn: Turn, finished: Finished<'_>) -> Option<Record> {
        if finished.status == ResponseStatus::Failed {
            return None;
        }
        let record = StoredResponse {
            id: finished.id.to_owned(),
            parent: turn.previous_response_id,
            created_at: finished.created_at,
            input: turn.input,
            output: finished.output_array(),
            response: finished.envelope(),
        };
        Some(Record {
            record,
            store: turn.store,
            conversation: turn.conversation,
        })
    }

    /// Keeps a finished response; whether it was stored as asked (a failed
    /// response is not kept, and needs not be).
    pub(crate) async fn save(&self, tenant: &str, turn: Turn, finished: Finished<'_>) -> bool {
        match self.record(turn, finished) {
            Some(record) => self.save_record(tenant, record).await,
            None => true,
        }
    }

    /// Keeps a record: in the connection's cache, if any, and in the store
    /// when the client asked. Whether it was stored as asked: the answer is
    /// delivered even when it cannot be, the failure logged, and it then
    /// says `store: false`.
    ///
    /// The cache keeps the turn and not the response object, which only
    /// retrieval reads, and retrieval reads the store: for a Codex-like turn,
    /// 1.5 KB of items rather than 20 KB.
    pub(crate) async fn save_record(&self, tenant: &str, record: Record) -> bool {
        let Record {
            record,
            store,
            conversation,
        } = record;
        let id = record.id.clone();
        if let Some(conversation) = conversation {
            self.extend_conversation(tenant, &conversation, &record)
                .await;
        }
        match (&self.store, store) {
            (Some(shared), true) => {
                if let Some(cache) = &self.cache {
                    let _ = log_failure(&id, cache.save(tenant, turn_only(&record)).await);
                }
                log_failure(&id, shared.save(tenant, record).await).is_ok()
            }
            (_, asked) => {
                if let Some(cache) = &self.cache {
                    let record = StoredResponse {
                        response: String::new(),
                        ..record
                    };
                    let _ = log_failure(&id, cache.save(tenant, record).await);
                }
                // Asked to be stored with no store to keep it beyond the
                // connection: its response says it was not stored.
                !asked
            }
        }
    }
}

impl Stateful {
    /// Adds a finished turn's items to its conversation. A failure is
    /// logged: the answer is delivered all the same (the conversation may
    /// have been deleted while the turn ran).
    async fn extend_conversation(&self, tenant: &str, conversation: &str, turn: &StoredResponse) {
        let Ok(store) = self.conversations() else {
            return;
        };
        let id = &turn.id;
        // Every item has its id already: the translator gave the input's
        // theirs, and the output's are the response's.
        let ids = ResponseIds::new();
        let items = conversation_items(&turn.input, &ids, "input").and_then(|mut input| {
            input.extend(conversation_items(&turn.output, &ids, "output")?);
            Ok(input)
        });
        let result = match items {
            Ok(items) => {
                let items = items
                    .into_iter()
                    .map(|item| StoredItem {
                        id: item.id,
                        item: item.item,
                    })
                    .collect();
                store.append_items(tenant, conversation, items).await
            }
            Err(e) => Err(StoreError::NotKept(e.to_string())),
        };
        match result {
            Ok(true) => {}
            Ok(false) => tracing::warn!(
                response_id = %id,
                conversation_id = %conversation,
                "the conversation was deleted while the response ran: its items were not added"
            ),
            Err(e) => tracing::error!(
                response_id = %id,
                conversation_id = %conversation,
                error = %e,
                "could not add the response's items to its conversation"
            ),
        }
    }
}

impl Stateful {
    /// Keeps `response` (a `Response` object, its output included) as the
    /// state of `turn`'s response as it stands: a background response
    /// queued, running, or ended without a reply to keep (failed,
    /// cancelled). Its output is kept beside it, as for any response.
    pub(crate) async fn save_state(
        &self,
        tenant: &str,
        turn: &Turn,
        response: &[u8],
    ) -> Result<(), StoreError> {
        let Some(store) = self.store() else {
            return Ok(());
        };
        let text = std::str::from_utf8(response)
            .map_err(|_| StoreError::NotKept("the response is not UTF-8".to_owned()))?;
        let raw: &RawValue = serde_json::from_str(text)
            .map_err(|e| StoreError::NotKept(format!("the response is not JSON: {e}")))?;
        let object = RawObject::parse(raw)
            .map_err(|e| StoreError::NotKept(format!("the response is not an object: {e}")))?;
        let id = object.str("id").unwrap_or_default().to_owned();
        let created_at = object
            .get("created_at")
            .and_then(|t| t.get().parse().ok())
            .unwrap_or_default();
        // A response still running keeps `null` for its output: what tells
        // a continuation of it (refused) from one of a response that ended
        // with no output.
        let running = matches!(object.str("status"), Some("queued" | "in_progress"));
        let output = match object.get("output") {
            _ if running => RUNNING.to_owned(),
            Some(output) => output.get().to_owned(),
            None => "[]".to_owned(),
        };
        let record = StoredResponse {
            id,
            parent: turn.previous_response_id.clone(),
            created_at,
            input: turn.input.clone(),
            output,
            response: envelope_of(text),
        };
        log_failure(&record.id.clone(), store.save(tenant, record).await)
    }
}

/// A record without its response object, for the connection's cache.
fn turn_only(record: &StoredResponse) -> StoredResponse {
    StoredResponse {
        id: record.id.clone(),
        parent: record.parent.clone(),
        created_at: record.created_at,
        input: record.input.clone(),
        output: record.output.clone(),
        response: String::new(),
    }
}

#[cfg(all(test, feature = "websocket"))]
impl Record {
    /// A record to keep, as a finished response makes one.
    pub(crate) fn new(record: StoredResponse, store: bool) -> Self {
        Self {
            record,
            store,
            conversation: None,
        }
    }
}

fn log_failure(id: &str, result: Result<(), StoreError>) -> Result<(), StoreError> {
    if let Err(e) = &result {
        tracing::error!(response_id = %id, error = %e, "could not keep the response");
    }
    result
}

/// The output kept for a response still running (a background one).
pub(crate) const RUNNING: &str = "null";

/// The stored response object with its output items put back.
pub(crate) fn with_output(envelope: &str, output: &str) -> Result<Vec<u8>, serde_json::Error> {
    let output = match output {
        RUNNING => "[]",
        output => output,
    };
    let raw: &RawValue = serde_json::from_str(envelope)?;
    let mut object = RawObject::parse(raw)?;
    object.set_borrowed("output", serde_json::from_str(output)?);
    Ok(object.to_raw().get().as_bytes().to_vec())
}
