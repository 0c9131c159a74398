//! Stateful Responses over a [`ResponseStore`]: the conversation a request
//! continues, the responses kept once done, and the retrieval endpoints.
//!
//! Nothing here parses a request or a response: the translator hands over
//! the turn to keep ([`Turn`]) and the finished response ([`Finished`]),
//! and takes the stored history as borrowed JSON ([`History`]).

mod routes;

use std::fmt;
use std::sync::Arc;

use http::StatusCode;
use wirebridge_convert::responses_to_chat::{Finished, History, Turn};
use wirebridge_store::{Chain, ResponseStore, StoreError, StoredResponse};
use wirebridge_wire::error::ApiError;
use wirebridge_wire::responses::strict::ResponseStatus;

use crate::replies::Refused;

pub(crate) use routes::route;

/// The store of a layer.
#[derive(Clone)]
pub struct Stateful {
    store: Arc<dyn ResponseStore>,
}

impl fmt::Debug for Stateful {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Stateful")
    }
}

/// A stored conversation, oldest response first.
pub(crate) struct Conversation {
    id: String,
    chain: Vec<StoredResponse>,
}

impl Conversation {
    /// The conversation as the translator reads it: each turn's input
    /// items, then its output items, borrowed as stored.
    pub(crate) fn history(&self) -> History<'_> {
        let arrays = self
            .chain
            .iter()
            .flat_map(|record| [record.input.as_str(), record.output.as_str()]);
        History::new(&self.id, arrays)
    }
}

impl Stateful {
    pub(crate) fn new(store: Arc<dyn ResponseStore>) -> Self {
        Self { store }
    }

    /// The conversation ending with response `id`: a 404 in the client's
    /// API if the tenant has no such response or no longer has one of its
    /// ancestors (continuing without it would silently drop turns), a 503 if
    /// the store cannot be reached.
    pub(crate) async fn conversation(
        &self,
        tenant: &str,
        id: &str,
    ) -> Result<Conversation, Refused> {
        match self.store.chain(tenant, id).await {
            Ok(Some(Chain {
                records,
                missing: None,
            })) => Ok(Conversation {
                id: id.to_owned(),
                chain: records,
            }),
            Ok(Some(Chain {
                missing: Some(missing),
                ..
            })) => Err(previous_not_found(format!(
                "Previous response with id '{id}' cannot be continued: its conversation is \
                 missing the earlier response '{missing}' (expired, evicted or deleted)."
            ))),
            Ok(None) => Err(previous_not_found(format!(
                "Previous response with id '{id}' not found."
            ))),
            Err(e) => Err(unavailable(&e)),
        }
    }

    /// What to store of a finished response: nothing for a failed one.
    pub(crate) fn record(&self, turn: Turn, finished: Finished<'_>) -> Option<StoredResponse> {
        if finished.status == ResponseStatus::Failed {
            return None;
        }
        Some(StoredResponse {
            id: finished.id.to_owned(),
            parent: turn.previous_response_id,
            created_at: finished.created_at,
            input: turn.input,
            output: finished.output_array(),
            response: finished.response.to_owned(),
        })
    }

    /// Stores a finished response.
    pub(crate) async fn save(&self, tenant: &str, turn: Turn, finished: Finished<'_>) {
        if let Some(record) = self.record(turn, finished) {
            self.save_record(tenant, record).await;
        }
    }

    /// Stores a record; whether it was kept. The answer is good even when
    /// it cannot be kept: it is delivered, and the failure logged; chaining
    /// on it is then refused with a 404.
    pub(crate) async fn save_record(&self, tenant: &str, record: StoredResponse) -> bool {
        let id = record.id.clone();
        match self.store.save(tenant, record).await {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(response_id = %id, error = %e, "could not store the response");
                false
            }
        }
    }
}

/// `previous_response_id` names nothing this tenant can continue: a 404.
fn previous_not_found(message: String) -> Refused {
    Refused::new(
        StatusCode::NOT_FOUND,
        ApiError {
            message: message.into(),
            kind: "invalid_request_error".into(),
            param: Some("previous_response_id".into()),
            code: Some("previous_response_not_found".into()),
        },
    )
}

/// The store cannot be reached: a 503 to retry.
pub(crate) fn unavailable(e: &StoreError) -> Refused {
    Refused::new(
        StatusCode::SERVICE_UNAVAILABLE,
        ApiError {
            message: e.to_string().into(),
            kind: "server_error".into(),
            param: None,
            code: Some("store_unavailable".into()),
        },
    )
    .retry_soon()
}
