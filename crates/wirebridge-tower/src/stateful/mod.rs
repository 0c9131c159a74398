//! Stateful Responses over a [`ResponseStore`]: the conversation a request
//! continues, the responses kept once done, and the retrieval endpoints.
//!
//! Nothing here parses a request or a response: the translator hands over
//! the turn to keep ([`Turn`]) and the finished response ([`Finished`]),
//! and takes the stored history as borrowed JSON ([`History`]).

mod routes;
mod unkept;

use std::fmt;
use std::sync::Arc;

use http::StatusCode;
use wirebridge_convert::responses_to_chat::{Finished, History, Turn};
use wirebridge_store::{Chain, ResponseStore, StoreError, StoredResponse};
use wirebridge_wire::error::ApiError;
use wirebridge_wire::responses::strict::ResponseStatus;

use crate::replies::Refused;

pub(crate) use routes::route;
pub(crate) use unkept::{unstored_frames, unstored_response};

/// What to do with a conversation whose stored chain misses an earlier
/// response (expired, evicted or deleted) when a request continues it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MissingHistory {
    /// Refuse the request: a 404 `previous_response_not_found` naming the
    /// missing response. Nothing is answered on a conversation the model
    /// would see cut short without knowing.
    #[default]
    Refuse,
    /// Answer from the turns still kept, and report the gap as a loss
    /// (`x-wirebridge-dropped: previous_response_id`, and the observer).
    Continue,
}

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
    /// The earlier response it misses, when continued without it.
    pub(crate) missing: Option<String>,
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
        policy: MissingHistory,
    ) -> Result<Conversation, Refused> {
        match self.store.chain(tenant, id).await {
            Ok(Some(Chain {
                missing: Some(missing),
                ..
            })) if policy == MissingHistory::Refuse => Err(previous_not_found(format!(
                "Previous response with id '{id}' cannot be continued: its conversation is \
                 missing the earlier response '{missing}' (expired, evicted or deleted)."
            ))),
            Ok(Some(Chain { records, missing })) => Ok(Conversation {
                id: id.to_owned(),
                chain: records,
                missing,
            }),
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

    /// Stores a finished response; whether it was kept (a failed response
    /// is not kept, and needs not be).
    pub(crate) async fn save(&self, tenant: &str, turn: Turn, finished: Finished<'_>) -> bool {
        match self.record(turn, finished) {
            Some(record) => self.save_record(tenant, record).await,
            None => true,
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

/// A request without credentials continues nothing: a 400 that says why.
pub(crate) fn needs_credentials() -> Refused {
    Refused::new(
        StatusCode::BAD_REQUEST,
        ApiError {
            message: "previous_response_id needs a credential: requests without one keep no \
                      responses on this bridge (it shares no anonymous store), so there is \
                      nothing to continue; send an authorization header, or the whole \
                      conversation in `input`"
                .into(),
            kind: "invalid_request_error".into(),
            param: Some("previous_response_id".into()),
            code: Some("store_requires_credentials".into()),
        },
    )
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
